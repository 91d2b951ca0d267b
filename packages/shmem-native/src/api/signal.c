/* The entry points of aclshmem/signal.h: put-with-signal untyped, typed (ACLSHMEM_RMA_TYPES)
 * and sized (ACLSHMEM_RMA_SIZES), and the signal alone; each is one call of the engine,
 * shmemi_put_signal (sync/signal.c), which checks the arguments.  Every operation completes
 * when issued, so the _nbi forms share the blocking path. */
#include <stdint.h>

#include "aclshmem/signal.h"
#include "sync/signal.h"

void aclshmemx_putmem_signal(void *dst, const void *src, size_t elem_size, void *sig_addr, int32_t signal,
                             int sig_op, int pe)
{
    shmemi_put_signal("aclshmemx_putmem_signal", dst, src, elem_size, 1, sig_addr, signal, sig_op, pe);
}

void aclshmemx_putmem_signal_nbi(void *dst, const void *src, size_t elem_size, void *sig_addr, int32_t signal,
                                 int sig_op, int pe)
{
    shmemi_put_signal("aclshmemx_putmem_signal_nbi", dst, src, elem_size, 1, sig_addr, signal, sig_op, pe);
}

void aclshmemx_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe)
{
    shmemi_put_signal("aclshmemx_signal_op", NULL, NULL, 0, 1, sig_addr, signal, sig_op, pe);
}

#define DEFINE_TYPED_SIGNAL(NAME, TYPE)                                                                \
    void aclshmem_##NAME##_put_signal(TYPE *dst, const TYPE *src, size_t elem_size, uint8_t *sig_addr,  \
                                      int32_t signal, int sig_op, int pe)                               \
    {                                                                                                   \
        shmemi_put_signal("aclshmem_" #NAME "_put_signal", dst, src, elem_size, sizeof(TYPE), sig_addr, \
                          signal, sig_op, pe);                                                          \
    }                                                                                                   \
    void aclshmem_##NAME##_put_signal_nbi(TYPE *dst, const TYPE *src, size_t elem_size,                 \
                                          uint8_t *sig_addr, int32_t signal, int sig_op, int pe)        \
    {                                                                                                   \
        shmemi_put_signal("aclshmem_" #NAME "_put_signal_nbi", dst, src, elem_size, sizeof(TYPE),       \
                          sig_addr, signal, sig_op, pe);                                                \
    }
ACLSHMEM_RMA_TYPES(DEFINE_TYPED_SIGNAL)

#define DEFINE_SIZED_SIGNAL(BITS)                                                                      \
    void aclshmem_put##BITS##_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr,      \
                                     int32_t signal, int sig_op, int pe)                                \
    {                                                                                                   \
        shmemi_put_signal("aclshmem_put" #BITS "_signal", dst, src, nelems, BITS / 8, sig_addr, signal, \
                          sig_op, pe);                                                                  \
    }                                                                                                   \
    void aclshmem_put##BITS##_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr,  \
                                         int32_t signal, int sig_op, int pe)                            \
    {                                                                                                   \
        shmemi_put_signal("aclshmem_put" #BITS "_signal_nbi", dst, src, nelems, BITS / 8, sig_addr,     \
                          signal, sig_op, pe);                                                          \
    }
ACLSHMEM_RMA_SIZES(DEFINE_SIZED_SIGNAL)
