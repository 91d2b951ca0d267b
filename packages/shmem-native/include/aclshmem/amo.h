/* aclshmem/amo.h - atomic memory operations on a symmetric word of another PE.
 *
 * Every call works on the host and inside kernels (on the cpu platform the host API is
 * also the device API).  dst must be a symmetric address aligned to sizeof(T); pe a PE
 * of the world team.  An AMO is atomic with respect to every other AMO on the same word,
 * from any PE or kernel block, and is ordered after the calling PE's earlier puts to pe
 * (what aclshmem_fence promises).  Plain puts to a word that AMOs update are not atomic
 * with respect to those AMOs.  On failure (bad PE, address outside the heap, misaligned
 * address, library not initialised) nothing is changed, the last error says why and the
 * fetching forms return 0.
 *
 * Types (tables in aclshmem/types.h):
 *   ACLSHMEM_AMO_INT_TYPES    int8..int64, uint8..uint64: every operation below;
 *   ACLSHMEM_AMO_FLOAT_TYPES  float, double: add, fetch_add, set, fetch, swap, compare_swap;
 *   ACLSHMEM_AMO_HALF_TYPES   half, bfloat16 (aclshmem_half_t, aclshmem_bfloat16_t):
 *                             add, fetch_add, set, fetch, swap.
 * Floating-point add rounds to nearest even, as the same addition in the type would;
 * compare_swap on float and double compares bit patterns (so -0.0 != 0.0, NaN == same NaN).
 */
#ifndef ACLSHMEM_AMO_H
#define ACLSHMEM_AMO_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* add, fetch_add, set, fetch, swap: every AMO type.
 *   atomic_add        *dst += value
 *   atomic_fetch_add  *dst += value, returns the old value
 *   atomic_set        *dst = value
 *   atomic_fetch      returns *src
 *   atomic_swap       *dst = value, returns the old value */
#define ACLSHMEMI_DECLARE_AMO_STANDARD(NAME, TYPE)                                              \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_add(TYPE *dst, TYPE value, int32_t pe);      \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch_add(TYPE *dst, TYPE value, int32_t pe); \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_set(TYPE *dst, TYPE value, int32_t pe);      \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch(const TYPE *src, int32_t pe);          \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_swap(TYPE *dst, TYPE value, int32_t pe);
ACLSHMEM_AMO_INT_TYPES(ACLSHMEMI_DECLARE_AMO_STANDARD)
ACLSHMEM_AMO_FLOAT_TYPES(ACLSHMEMI_DECLARE_AMO_STANDARD)
ACLSHMEM_AMO_HALF_TYPES(ACLSHMEMI_DECLARE_AMO_STANDARD)

/* compare_swap: integers, float and double.  If *dst == cond then *dst = value; returns the
 * old value either way. */
#define ACLSHMEMI_DECLARE_AMO_CSWAP(NAME, TYPE)                                                 \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_compare_swap(TYPE *dst, TYPE cond, TYPE value, \
                                                                int32_t pe);
ACLSHMEM_AMO_INT_TYPES(ACLSHMEMI_DECLARE_AMO_CSWAP)
ACLSHMEM_AMO_FLOAT_TYPES(ACLSHMEMI_DECLARE_AMO_CSWAP)

/* inc, fetch_inc and the bitwise operations: integers only.
 *   atomic_inc / fetch_inc            *dst += 1 (fetch_inc returns the old value)
 *   atomic_{and,or,xor} / fetch_...   *dst = *dst OP value (fetch_... returns the old value) */
#define ACLSHMEMI_DECLARE_AMO_INTEGER(NAME, TYPE)                                               \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_inc(TYPE *dst, int32_t pe);                  \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch_inc(TYPE *dst, int32_t pe);            \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_and(TYPE *dst, TYPE value, int32_t pe);      \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_or(TYPE *dst, TYPE value, int32_t pe);       \
    ACLSHMEM_HOST_API void aclshmem_##NAME##_atomic_xor(TYPE *dst, TYPE value, int32_t pe);      \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch_and(TYPE *dst, TYPE value, int32_t pe); \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch_or(TYPE *dst, TYPE value, int32_t pe);  \
    ACLSHMEM_HOST_API TYPE aclshmem_##NAME##_atomic_fetch_xor(TYPE *dst, TYPE value, int32_t pe);
ACLSHMEM_AMO_INT_TYPES(ACLSHMEMI_DECLARE_AMO_INTEGER)

#ifdef __cplusplus
}
#endif
#endif /* ACLSHMEM_AMO_H */
