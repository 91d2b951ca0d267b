/* Waiting without starving other PEs: spin briefly, yield, then sleep on this PE's
 * doorbell (a futex in the control segment that a remote write rings when it finds a
 * waiter asleep). */
#ifndef SHMEMI_WAIT_H
#define SHMEMI_WAIT_H

#include "core/instance.h"
#include "core/ctrl.h"

/* Returns nonzero when the awaited condition holds. */
typedef int (*shmemi_ready_fn)(void *ctx);

/* Waits until ready(ctx).  ACLSHMEM_SUCCESS, or an error when the job failed (a PE died). */
int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx);

/* Call after writing into the PE of ctrl: wakes its waiters if one may sleep.  It costs a
 * fence and a load of a line nobody writes while no one sleeps; no system call, no
 * read-modify-write on the target's lines. */
void shmemi_doorbell_notify(shmemi_ctrl_t *ctrl);
/* Wakes the PE's waiters whatever they wait for (the job failed, a wait must end). */
void shmemi_doorbell_ring(shmemi_ctrl_t *ctrl);

static inline shmemi_ctrl_t *shmemi_ctrl_of(shmemi_instance_t *inst, int pe)
{
    return (shmemi_ctrl_t *)inst->heaps.seg[SHMEMI_SEG_CTRL].peer_base[pe];
}

#endif
