/* The same-node transport: every peer's segments are mapped here, so RMA is memcpy and
 * atomics are CPU atomics on the shared pages ("MTE" in the original's terms). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "aclshmem/types.h"
#include "core/instance.h"
#include "sync/wait.h"
#include "transport/transport.h"

static inline uint8_t *peer_addr(shmemi_instance_t *inst, int pe, int seg, size_t offset)
{
    return inst->heaps.seg[seg].peer_base[pe] + offset;
}

/* A word of 1, 2, 4 or 8 bytes at an address aligned to its size can be written or read in
 * one access; then a reader in wait_until/test (an atomic load) never sees half of a put. */
static inline int is_word(const void *addr, size_t len)
{
    return (len == 1 || len == 2 || len == 4 || len == 8) && ((uintptr_t)addr & (len - 1)) == 0;
}

/* One relaxed atomic store of the word at src (which may be unaligned) into dst.  Relaxed:
 * the order among puts is what fence/quiet give, as for any put. */
static void store_word(uint8_t *dst, const void *src, size_t len)
{
    uint64_t v8;
    uint32_t v4;
    uint16_t v2;
    switch (len) {
    case 8:
        memcpy(&v8, src, 8);
        __atomic_store_n((uint64_t *)dst, v8, __ATOMIC_RELAXED);
        break;
    case 4:
        memcpy(&v4, src, 4);
        __atomic_store_n((uint32_t *)dst, v4, __ATOMIC_RELAXED);
        break;
    case 2:
        memcpy(&v2, src, 2);
        __atomic_store_n((uint16_t *)dst, v2, __ATOMIC_RELAXED);
        break;
    default:
        __atomic_store_n(dst, *(const uint8_t *)src, __ATOMIC_RELAXED);
    }
}

/* One relaxed atomic load of the word at src into dst (which may be unaligned). */
static void load_word(void *dst, const uint8_t *src, size_t len)
{
    uint64_t v8;
    uint32_t v4;
    uint16_t v2;
    switch (len) {
    case 8:
        v8 = __atomic_load_n((const uint64_t *)src, __ATOMIC_RELAXED);
        memcpy(dst, &v8, 8);
        break;
    case 4:
        v4 = __atomic_load_n((const uint32_t *)src, __ATOMIC_RELAXED);
        memcpy(dst, &v4, 4);
        break;
    case 2:
        v2 = __atomic_load_n((const uint16_t *)src, __ATOMIC_RELAXED);
        memcpy(dst, &v2, 2);
        break;
    default:
        *(uint8_t *)dst = __atomic_load_n(src, __ATOMIC_RELAXED);
    }
}

static int shm_put(shmemi_instance_t *inst, int pe, int seg, size_t offset, const void *src, size_t len)
{
    uint8_t *dst = peer_addr(inst, pe, seg, offset);
    if (is_word(dst, len))
        store_word(dst, src, len);
    else
        memmove(dst, src, len);
    return ACLSHMEM_SUCCESS;
}

static int shm_get(shmemi_instance_t *inst, int pe, int seg, size_t offset, void *dst, size_t len)
{
    const uint8_t *src = peer_addr(inst, pe, seg, offset);
    if (is_word(src, len))
        load_word(dst, src, len);
    else
        memmove(dst, src, len);
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
