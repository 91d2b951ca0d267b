/* Waiting without starving other PEs: spin briefly, yield, then sleep on this PE's
 * doorbell (a futex in the control segment that every remote write rings). */
#ifndef SHMEMI_WAIT_H
#define SHMEMI_WAIT_H

#include "core/instance.h"
#include "core/ctrl.h"

/* Returns nonzero when the awaited condition holds. */
typedef int (*shmemi_ready_fn)(void *ctx);

/* Waits until ready(ctx).  ACLSHMEM_SUCCESS, or an error when the job failed (a PE died). */
int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx);

/* Wakes whoever sleeps on ctrl's doorbell (call after writing into that PE). */
void shmemi_doorbell_ring(shmemi_ctrl_t *ctrl);

static inline shmemi_ctrl_t *shmemi_ctrl_of(shmemi_instance_t *inst, int pe)
{
    return (shmemi_ctrl_t *)inst->heaps.seg[SHMEMI_SEG_CTRL].peer_base[pe];
}

#endif
