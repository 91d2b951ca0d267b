/* The same-node transport: every peer's segments are mapped here, so RMA is memcpy and
 * atomics are CPU atomics on the shared pages ("MTE" in the original's terms). */
#include <stdatomic.h>
#include <string.h>

#include "aclshmem/types.h"
#include "core/instance.h"
#include "sync/wait.h"
#include "transport/transport.h"

static inline uint8_t *peer_addr(shmemi_instance_t *inst, int pe, int seg, size_t offset)
{
    return inst->heaps.seg[seg].peer_base[pe] + offset;
}

static int shm_put(shmemi_instance_t *inst, int pe, int seg, size_t offset, const void *src, size_t len)
{
    memmove(peer_addr(inst, pe, seg, offset), src, len);
    return ACLSHMEM_SUCCESS;
}

static int shm_get(shmemi_instance_t *inst, int pe, int seg, size_t offset, void *dst, size_t len)
{
    memmove(dst, peer_addr(inst, pe, seg, offset), len);
    return ACLSHMEM_SUCCESS;
}

static int shm_atomic(shmemi_instance_t *inst, int pe, int seg, size_t offset, shmemi_atomic_op_t op,
                      int width, uint64_t value)
{
    void *target = peer_addr(inst, pe, seg, offset);
    /* seq_cst: the data of earlier puts is visible before the word changes. */
    if (width == 4) {
        _Atomic uint32_t *word = target;
        if (op == SHMEMI_ATOMIC_SET)
            atomic_store(word, (uint32_t)value);
        else
            atomic_fetch_add(word, (uint32_t)value);
    } else {
        _Atomic uint64_t *word = target;
        if (op == SHMEMI_ATOMIC_SET)
            atomic_store(word, value);
        else
            atomic_fetch_add(word, value);
    }
    return ACLSHMEM_SUCCESS;
}

static void shm_notify(shmemi_instance_t *inst, int pe)
{
    shmemi_doorbell_ring(shmemi_ctrl_of(inst, pe));
}

static int shm_quiet(shmemi_instance_t *inst)
{
    (void)inst;
    atomic_thread_fence(memory_order_seq_cst); /* every shm operation completes when issued */
    return ACLSHMEM_SUCCESS;
}

static void *shm_ptr(shmemi_instance_t *inst, int pe, int seg, size_t offset)
{
    return peer_addr(inst, pe, seg, offset);
}

const shmemi_transport_ops_t shmemi_transport_shm = {
    .name = "shm",
    .put = shm_put,
    .get = shm_get,
    .atomic = shm_atomic,
    .notify = shm_notify,
    .quiet = shm_quiet,
    .ptr = shm_ptr,
};
