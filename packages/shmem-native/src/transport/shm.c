/* The same-node transport: every peer's segments are mapped here, so RMA is memcpy and
 * atomics are CPU atomics on the shared pages ("MTE" in the original's terms). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "aclshmem/types.h"
#include "base/error.h"
#include "core/instance.h"
#include "core/wait.h"
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

/* 2 to 64 bytes in at most four loads and four stores of fixed size, which the compiler
 * emits inline: a message this small costs less than the call into libc's memmove and its
 * size dispatch (measured: 32-byte puts at 0.87-0.92x OSHMEM's rate through memmove).  The
 * two halves overlap when len is not a power of two; every load comes before the first
 * store, so overlapping src and dst (a put to this PE's own buffer) still behave as memmove. */
#define SMALL_COPY_MAX 64

/* len bytes (between sizeof(T) and 2 * sizeof(T)) as two blocks of type T, the first and
 * the last, which overlap when len is below 2 * sizeof(T); both loads before the stores. */
#define COPY_TWO_BLOCKS(T)                                                                         \
    do {                                                                                           \
        T first, last;                                                                             \
        memcpy(&first, src, sizeof(T));                                                            \
        memcpy(&last, src + len - sizeof(T), sizeof(T));                                           \
        memcpy(dst, &first, sizeof(T));                                                            \
        memcpy(dst + len - sizeof(T), &last, sizeof(T));                                           \
    } while (0)

typedef struct {
    uint8_t b[16];
} block16_t;

static inline void copy_small(uint8_t *dst, const uint8_t *src, size_t len)
{
    if (len <= 4) {
        COPY_TWO_BLOCKS(uint16_t);
    } else if (len <= 8) {
        COPY_TWO_BLOCKS(uint32_t);
    } else if (len <= 16) {
        COPY_TWO_BLOCKS(uint64_t);
    } else if (len <= 32) {
        COPY_TWO_BLOCKS(block16_t);
    } else { /* 33..64: the first and the last 32 bytes, as two blocks each */
        block16_t a, b, c, d;
        memcpy(&a, src, 16);
        memcpy(&b, src + 16, 16);
        memcpy(&c, src + len - 32, 16);
        memcpy(&d, src + len - 16, 16);
        memcpy(dst, &a, 16);
        memcpy(dst + 16, &b, 16);
        memcpy(dst + len - 32, &c, 16);
        memcpy(dst + len - 16, &d, 16);
    }
}

static inline void copy_bytes(uint8_t *dst, const uint8_t *src, size_t len)
{
    if (len >= 2 && len <= SMALL_COPY_MAX)
        copy_small(dst, src, len);
    else
        memmove(dst, src, len);
}

/* ch is ignored by every shm op: an operation here is complete when it returns (see
 * shmemi_channel_t). */
static int shm_put(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, const void *src,
                   size_t len)
{
    (void)ch;
    uint8_t *dst = peer_addr(inst, pe, seg, offset);
    if (is_word(dst, len))
        store_word(dst, src, len);
    else
        copy_bytes(dst, src, len);
    return ACLSHMEM_SUCCESS;
}

static int shm_get(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                   size_t len)
{
    (void)ch;
    const uint8_t *src = peer_addr(inst, pe, seg, offset);
    if (is_word(src, len))
        load_word(dst, src, len);
    else
        copy_bytes(dst, src, len);
    return ACLSHMEM_SUCCESS;
}

/* A get here is a copy, complete when it returns: nothing for a quiet or a batch to wait for. */
static int shm_get_nbi(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                       size_t len, shmemi_gets_t *gets)
{
    (void)gets;
    return shm_get(inst, ch, pe, seg, offset, dst, len);
}

static int shm_gets_wait(shmemi_instance_t *inst, shmemi_channel_t *ch, shmemi_gets_t *gets)
{
    (void)inst, (void)ch, (void)gets;
    return ACLSHMEM_SUCCESS;
}

/* AMOs are CPU atomics on the peer's word as this process maps it: the word is the same
 * physical memory in every mapping, and lock-free atomics of 1 to 8 bytes act on memory, so
 * AMOs from every PE and kernel block on one word are atomic with respect to each other.
 * Order after earlier puts (what fence promises) costs nothing extra: a put here is a plain
 * or relaxed store by this thread, complete when it returns, and every AMO is a seq_cst
 * access, which includes release; whoever reads the AMO's result with an acquiring load (a
 * wait, a test, a signal wait, another AMO) sees those puts too.  (x86: a locked
 * instruction or xchg is a full barrier; arm64: the acquire-release forms.) */
/* Wakes pe's waiters after an AMO changed a word there, if one sleeps.  The AMO is a
 * seq_cst write, so the notify's fence costs nothing more on most CPUs. */
static void wake_sleepers(shmemi_instance_t *inst, int pe)
{
    shmemi_doorbell_notify(shmemi_ctrl_of(inst, pe));
}

#define SHM_AMO_WIDTHS(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

#define DEFINE_WORD_AMO(BYTES, UTYPE)                                                               \
    static uint64_t word_amo_##BYTES(UTYPE *word, const shmemi_amo_t *a)                            \
    {                                                                                               \
        UTYPE value = (UTYPE)a->value, old;                                                         \
        switch (a->op) {                                                                            \
        case SHMEMI_AMO_SET:                                                                        \
            __atomic_store_n(word, value, __ATOMIC_SEQ_CST);                                        \
            return 0;                                                                               \
        case SHMEMI_AMO_SWAP:                                                                       \
            return __atomic_exchange_n(word, value, __ATOMIC_SEQ_CST);                              \
        case SHMEMI_AMO_CSWAP:                                                                      \
            old = (UTYPE)a->cond;                                                                   \
            __atomic_compare_exchange_n(word, &old, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
            return old;                                                                             \
        case SHMEMI_AMO_AND:                                                                        \
            return __atomic_fetch_and(word, value, __ATOMIC_SEQ_CST);                               \
        case SHMEMI_AMO_OR:                                                                         \
            return __atomic_fetch_or(word, value, __ATOMIC_SEQ_CST);                                \
        case SHMEMI_AMO_XOR:                                                                        \
            return __atomic_fetch_xor(word, value, __ATOMIC_SEQ_CST);                               \
        case SHMEMI_AMO_ADD:                                                                        \
            if (a->kind == SHMEMI_AMO_INT)                                                          \
                return __atomic_fetch_add(word, value, __ATOMIC_SEQ_CST);                           \
            /* No CPU instruction adds floats in memory: compute the sum from the value read    \
             * and store it only if no other writer came in between; a retry means another     \
             * AMO completed, so the loop always makes progress. */                             \
            old = __atomic_load_n(word, __ATOMIC_RELAXED);                                          \
            while (!__atomic_compare_exchange_n(word, &old, (UTYPE)shmemi_amo_result(a, old), 1,     \
                                                __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))                 \
                ;                                                                                   \
            return old;                                                                             \
        default: /* SHMEMI_AMO_FETCH */                                                             \
            return __atomic_load_n(word, __ATOMIC_SEQ_CST);                                         \
        }                                                                                           \
    }
SHM_AMO_WIDTHS(DEFINE_WORD_AMO)

static int shm_amo(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                   const shmemi_amo_t *a, uint64_t *fetched)
{
    (void)ch;
    uint8_t *word = peer_addr(inst, pe, seg, offset);
    uint64_t old;
    switch (a->width) {
#define CASE_WIDTH(BYTES, UTYPE)                                                                    \
    case BYTES:                                                                                     \
        old = word_amo_##BYTES((UTYPE *)(void *)word, a);                                           \
        break;
        SHM_AMO_WIDTHS(CASE_WIDTH)
#undef CASE_WIDTH
    default:
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "shm transport: an AMO of %d bytes (1, 2, 4 or 8)", a->width);
    }
    if (a->op != SHMEMI_AMO_FETCH && (a->op != SHMEMI_AMO_CSWAP || old == a->cond))
        wake_sleepers(inst, pe);
    if (fetched)
        *fetched = old;
    return ACLSHMEM_SUCCESS;
}

static void shm_notify(shmemi_instance_t *inst, int pe)
{
    shmemi_doorbell_notify(shmemi_ctrl_of(inst, pe));
}

static int shm_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    (void)inst, (void)ch;
    atomic_thread_fence(memory_order_seq_cst); /* every shm operation completes when issued */
    return ACLSHMEM_SUCCESS;
}

/* A put here is a store complete when issued, so order is a CPU fence. */
static int shm_fence(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    (void)inst, (void)ch;
    atomic_thread_fence(memory_order_seq_cst);
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
    .get_nbi = shm_get_nbi,
    .gets_wait = shm_gets_wait,
    .amo = shm_amo,
    .notify = shm_notify,
    .quiet = shm_quiet,
    .fence = shm_fence,
    .ptr = shm_ptr,
};
