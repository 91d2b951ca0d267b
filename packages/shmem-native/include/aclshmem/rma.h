/* aclshmem/rma.h - remote memory access: put, get, strided, non-blocking.
 *
 * "put" writes to a symmetric dst on pe from any local src; "get" is the reverse.
 * Blocking calls are complete when they return; _nbi calls are complete after
 * aclshmem_quiet() (or a barrier).  Failures set the last error.
 */
#ifndef ACLSHMEM_RMA_H
#define ACLSHMEM_RMA_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* elem_size is in bytes. */
ACLSHMEM_HOST_API void aclshmem_putmem(void *dst, const void *src, size_t elem_size, int32_t pe);
ACLSHMEM_HOST_API void aclshmem_getmem(void *dst, const void *src, size_t elem_size, int32_t pe);
ACLSHMEM_HOST_API void aclshmem_putmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe);
ACLSHMEM_HOST_API void aclshmem_getmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe);

/* aclshmem_<T>_put/get[_nbi], _p, _g, _iput, _iget for every T of ACLSHMEM_RMA_TYPES. */
#define ACLSHMEMI_DECLARE_TYPED_RMA(NAME, TYPE)                                                 \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_p(TYPE *dst, const TYPE value, int pe);            \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_g(const TYPE *src, int32_t pe);                     \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_iput(TYPE *dest, const TYPE *source, ptrdiff_t dst, \
                                                 ptrdiff_t sst, size_t nelems, int pe);         \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_iget(TYPE *dest, const TYPE *source, ptrdiff_t dst, \
                                                 ptrdiff_t sst, size_t nelems, int pe);
ACLSHMEM_RMA_TYPES(ACLSHMEMI_DECLARE_TYPED_RMA)

/* aclshmem_put<B>/get<B>[_nbi], _iput<B>, _iget<B>: elements of B bits.  elem_size (nelems of
 * the strided forms) is a number of elements, not bytes: a call moves elem_size * B / 8 bytes,
 * as in the original implementation (which hands elem_size and B / 8 to its transfer as count
 * and element size), OpenSHMEM's shmem_put<B> and this library's shmem_put<B>.  The seed's
 * Python API text calls the argument "total number of bytes"; a byte count would make
 * aclshmem_put64(dst, src, 3, pe) move 3 bytes of one 8-byte element, and a program ported from
 * the original would move an eighth of its data. */
#define ACLSHMEMI_DECLARE_SIZED_RMA(BITS)                                                       \
    ACLSHMEM_HOST_API void aclshmem_put##BITS(void *dst, const void *src, uint32_t elem_size, int32_t pe); \
    ACLSHMEM_HOST_API void aclshmem_get##BITS(void *dst, const void *src, uint32_t elem_size, int32_t pe); \
    ACLSHMEM_HOST_API void aclshmem_put##BITS##_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe); \
    ACLSHMEM_HOST_API void aclshmem_get##BITS##_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe); \
    ACLSHMEM_HOST_API void aclshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst,   \
                                               ptrdiff_t sst, size_t nelems, int pe);           \
    ACLSHMEM_HOST_API void aclshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst,   \
                                               ptrdiff_t sst, size_t nelems, int pe);
ACLSHMEM_RMA_SIZES(ACLSHMEMI_DECLARE_SIZED_RMA)

/** Completes every RMA and signal this PE issued (host side; the original has it on device only). */
ACLSHMEM_HOST_API void aclshmem_quiet(void);
/** Orders earlier RMA to each PE before later RMA to that PE. */
ACLSHMEM_HOST_API void aclshmem_fence(void);

/* Engine workspace settings of the active instance (stored and reported back here). */
ACLSHMEM_HOST_API int aclshmemx_set_mte_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
ACLSHMEM_HOST_API int aclshmemx_set_sdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
ACLSHMEM_HOST_API int aclshmemx_set_rdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
ACLSHMEM_HOST_API int aclshmemx_set_udma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
/** Reads back the active instance's setting for one engine (ACLSHMEM_DATA_OP_MTE, _SDMA,
 *  _ROCE (the rdma config) or _UDMA). */
ACLSHMEM_HOST_API int aclshmemx_get_engine_config(data_op_engine_type_t engine, aclshmem_ub_config_t *config);

#ifdef __cplusplus
}
#endif
#endif
