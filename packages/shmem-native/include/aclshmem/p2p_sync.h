/* aclshmem/p2p_sync.h - waiting on and testing local symmetric variables.
 *
 * cmp is an aclshmem_cmp_op_type_t.  status[i] != 0 leaves element i out (NULL: all in).
 * Results come back through res_out: "any" gives an index or SIZE_MAX, "some" a count
 * (indices filled, in index order), test gives 1 or 0.  Which index "any" gives when several
 * hold: each call scans from just after the index that the calling thread's previous "any"
 * call on the same array returned, wrapping around, so a series of calls returns every
 * element that holds in turn (OpenSHMEM: no element that holds is starved).  The position
 * is remembered per thread for the last 8 arrays it scanned; a forgotten one starts at 0.
 * With no element left in (nelems 0 or all excluded) waits return at once: "any" gives
 * SIZE_MAX, "some" 0, test_all_vector 1.
 * The variables must be naturally aligned and in this PE's symmetric heap.  Bad input (a cmp
 * outside 0..5, NULL, misaligned or foreign variables) sets the last error and returns at once
 * with res_out SIZE_MAX for "any" and 0 otherwise.
 */
#ifndef ACLSHMEM_P2P_SYNC_H
#define ACLSHMEM_P2P_SYNC_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Waits until *sig_addr cmp cmp_val holds and returns the value that met it.  sig_addr is a
 *  4-byte aligned word of this PE's symmetric heap; bad input returns 0 at once (last error). */
ACLSHMEM_HOST_API int32_t aclshmem_signal_wait_until(int32_t *sig_addr, int cmp, int32_t cmp_val);

#define ACLSHMEMI_DECLARE_P2P_SYNC(NAME, TYPE)                                                  \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value);   \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait(TYPE *ivar, TYPE cmp_value);                  \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems,         \
                                                            const int *status, int cmp,         \
                                                            TYPE cmp_value);                    \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems,         \
                                                            const int *status, int cmp,         \
                                                            TYPE cmp_value, size_t *res_out);   \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems,        \
                                                             size_t *indices, const int *status, \
                                                             int cmp, TYPE cmp_value,           \
                                                             size_t *res_out);                  \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems,  \
                                                                   const int *status, int cmp,  \
                                                                   TYPE *cmp_values);           \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems,  \
                                                                   const int *status, int cmp,  \
                                                                   TYPE *cmp_values,            \
                                                                   size_t *res_out);            \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, \
                                                                    size_t *indices,            \
                                                                    const int *status, int cmp, \
                                                                    TYPE *cmp_values,           \
                                                                    size_t *res_out);           \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test(TYPE *ivars, int cmp, TYPE cmp_value, int *res_out); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_any(TYPE *ivars, size_t nelems,               \
                                                      const int *status, int cmp,               \
                                                      TYPE cmp_value, size_t *res_out);         \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_some(TYPE *ivars, size_t nelems,              \
                                                       size_t *indices, const int *status,      \
                                                       int cmp, TYPE cmp_value, size_t *res_out); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems,        \
                                                             const int *status, int cmp,        \
                                                             TYPE *cmp_values, int *res_out);   \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems,        \
                                                             const int *status, int cmp,        \
                                                             TYPE *cmp_values, size_t *res_out); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems,       \
                                                              size_t *indices, const int *status, \
                                                              int cmp, TYPE *cmp_values,        \
                                                              size_t *res_out);
ACLSHMEM_P2P_SYNC_TYPES(ACLSHMEMI_DECLARE_P2P_SYNC)

/** The FFTS configuration word; 0 on the cpu platform (it has no FFTS). */
ACLSHMEM_HOST_API uint64_t util_get_ffts_config(void);

#ifdef __cplusplus
}
#endif
#endif
