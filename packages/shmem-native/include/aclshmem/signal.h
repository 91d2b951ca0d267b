/* aclshmem/signal.h - put-with-signal.  The signal word is a 32-bit integer on the target PE;
 * its update (ACLSHMEM_SIGNAL_SET or _ADD, atomic) becomes visible after the data. */
#ifndef ACLSHMEM_SIGNAL_H
#define ACLSHMEM_SIGNAL_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Puts elem_size bytes to dst on pe, then updates pe's 32-bit signal word sig_addr with
 *  signal (sig_op: ACLSHMEM_SIGNAL_SET or _ADD); complete when it returns. */
ACLSHMEM_HOST_API void aclshmemx_putmem_signal(void *dst, const void *src, size_t elem_size, void *sig_addr,
                                               int32_t signal, int sig_op, int pe);
/** The same, complete after aclshmem_quiet(). */
ACLSHMEM_HOST_API void aclshmemx_putmem_signal_nbi(void *dst, const void *src, size_t elem_size,
                                                   void *sig_addr, int32_t signal, int sig_op, int pe);

/* aclshmem_<T>_put_signal[_nbi]: elem_size counts elements of T. */
#define ACLSHMEMI_DECLARE_TYPED_SIGNAL(NAME, TYPE)                                              \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_put_signal(TYPE *dst, const TYPE *src, size_t elem_size, \
                                                        uint8_t *sig_addr, int32_t signal,      \
                                                        int sig_op, int pe);                    \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_put_signal_nbi(TYPE *dst, const TYPE *src,         \
                                                            size_t elem_size, uint8_t *sig_addr, \
                                                            int32_t signal, int sig_op, int pe);
ACLSHMEM_RMA_TYPES(ACLSHMEMI_DECLARE_TYPED_SIGNAL)

/* aclshmem_put<B>_signal[_nbi]: nelems counts elements of B bits (nelems * B / 8 bytes), as
 * the original implementation and aclshmem_put<B> do, not bytes as the seed's Python API text
 * says of aclshmemx_put<B>_signal (see aclshmem/rma.h). */
#define ACLSHMEMI_DECLARE_SIZED_SIGNAL(BITS)                                                    \
    ACLSHMEM_HOST_API void aclshmem_put##BITS##_signal(void *dst, const void *src, size_t nelems, \
                                                       int32_t *sig_addr, int32_t signal,       \
                                                       int sig_op, int pe);                     \
    ACLSHMEM_HOST_API void aclshmem_put##BITS##_signal_nbi(void *dst, const void *src,          \
                                                           size_t nelems, int32_t *sig_addr,    \
                                                           int32_t signal, int sig_op, int pe);
ACLSHMEM_RMA_SIZES(ACLSHMEMI_DECLARE_SIZED_SIGNAL)

/** Updates pe's 32-bit signal word sig_addr with signal (sig_op: ACLSHMEM_SIGNAL_SET or
 *  _ADD), atomically, ordered after this PE's earlier puts to pe.  Host and kernel side
 *  (aclshmemx_signal_op_on_stream is the stream-ordered form). */
ACLSHMEM_HOST_API void aclshmemx_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe);

#ifdef __cplusplus
}
#endif
#endif
