/* Put with signal on OpenSHMEM's 64-bit signal word (typed, sized, in bytes, nbi, with a
 * context form), shmem_signal_fetch and shmem_signal_wait_until: one call each of the
 * signal engine (sync/signal.c), which writes the data, then updates the signal word
 * atomically, so a PE that sees the signal sees the data. */
#include "amo/amo.h"
#include "openshmem/osh.h"
#include "sync/signal.h"

static void put_signal(const char *api, shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                       size_t size, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_put_signal_word(api, ch, dest, source, nelems, size, sig_addr, signal, sizeof(uint64_t), sig_op,
                               pe);
}

#define DEFINE_PUT_SIGNAL(PREFIX, SUFFIX, TYPE, SIZE)                                                 \
    void shmem_##PREFIX##SUFFIX(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr,   \
                                uint64_t signal, int sig_op, int pe)                                 \
    {                                                                                                \
        put_signal("shmem_" #PREFIX #SUFFIX, SHMEM_CTX_DEFAULT, dest, source, nelems, SIZE, sig_addr, \
                   signal, sig_op, pe);                                                              \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##PREFIX##SUFFIX)                                                          \
    void shmem_ctx_##PREFIX##SUFFIX(shmem_ctx_t ctx, TYPE *dest, const TYPE *source, size_t nelems,  \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)         \
    {                                                                                                \
        put_signal("shmem_ctx_" #PREFIX #SUFFIX, ctx, dest, source, nelems, SIZE, sig_addr, signal,  \
                   sig_op, pe);                                                                      \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##PREFIX##SUFFIX)

#define DEFINE_TYPED(NAME, TYPE)                                                                      \
    DEFINE_PUT_SIGNAL(NAME, _put_signal, TYPE, sizeof(TYPE))                                         \
    DEFINE_PUT_SIGNAL(NAME, _put_signal_nbi, TYPE, sizeof(TYPE))
SHMEMI_TYPES_RMA(DEFINE_TYPED)

#define DEFINE_SIZED(BITS)                                                                            \
    DEFINE_PUT_SIGNAL(put, BITS##_signal, void, BITS / 8)                                            \
    DEFINE_PUT_SIGNAL(put, BITS##_signal_nbi, void, BITS / 8)
SHMEMI_SIZES_RMA(DEFINE_SIZED)

DEFINE_PUT_SIGNAL(put, mem_signal, void, 1)
DEFINE_PUT_SIGNAL(put, mem_signal_nbi, void, 1)

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    static const char api[] = "shmem_signal_fetch";
    shmemi_instance_t *inst = shmemi_require(api);
    uint64_t value = 0;
    shmemi_amo_t fetch = {.op = SHMEMI_AMO_FETCH, .kind = SHMEMI_AMO_INT, .width = sizeof(uint64_t)};
    if (inst)
        shmemi_amo(api, NULL, sig_addr, &fetch, inst->my_pe, &value);
    return value;
}
SHMEMI_PROFILED(shmem_signal_fetch)

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    uint64_t value;
    shmemi_signal_wait64("shmem_signal_wait_until", sig_addr, cmp, cmp_value, &value);
    return value;
}
SHMEMI_PROFILED(shmem_signal_wait_until)
