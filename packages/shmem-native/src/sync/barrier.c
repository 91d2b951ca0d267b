/* The PE barrier of the engine.  The public aclshmem_barrier family sits above it, in
 * platform/barrier.c, because it first orders with the caller's streams or kernel blocks. */
#include "sync/barrier.h"

#include "core/ctrl.h"
#include "core/error.h"
#include "core/wait.h"
#include "mem/heap.h"
#include "prof/prof.h"
#include "rma/rma.h"
#include "transport/transport.h"

typedef struct {
    _Atomic uint64_t *counter;
    uint64_t epoch;
} arrival_t;

static int arrived(void *ctx)
{
    arrival_t *a = ctx;
    return atomic_load(a->counter) >= a->epoch;
}

int shmemi_barrier(shmemi_instance_t *inst, shmemi_team_t *t)
{
    SHMEMI_TRY(shmemi_quiet(inst));
    if (t->size == 1)
        return ACLSHMEM_SUCCESS;
    uint64_t start = shmemi_prof_begin(inst);
    pthread_mutex_lock(&t->lock);
    uint64_t *epochs = inst->teams->barrier_epoch[t->index];
    shmemi_ctrl_t *mine = shmemi_ctrl_of(inst, inst->my_pe);
    int rc = ACLSHMEM_SUCCESS;
    for (int k = 0, dist = 1; rc == ACLSHMEM_SUCCESS && dist < t->size; k++, dist <<= 1) {
        int partner = shmemi_team_world_pe(t, (t->my_idx + dist) % t->size);
        size_t offset = offsetof(shmemi_ctrl_t, team_psync) +
                        ((size_t)t->index * SHMEMI_BARRIER_ROUNDS + (size_t)k) * sizeof(uint64_t);
        const shmemi_transport_ops_t *tr = inst->transport[partner];
        shmemi_amo_t arrive = {.op = SHMEMI_AMO_ADD, .kind = SHMEMI_AMO_INT, .width = 8, .value = 1};
        rc = tr->amo(inst, partner, SHMEMI_SEG_CTRL, offset, &arrive, NULL); /* wakes the partner */
        if (rc != ACLSHMEM_SUCCESS)
            break;
        arrival_t a = {&mine->team_psync[t->index][k], ++epochs[k]};
        rc = shmemi_wait(inst, arrived, &a);
    }
    pthread_mutex_unlock(&t->lock);
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_BARRIER, start);
    return rc;
}
