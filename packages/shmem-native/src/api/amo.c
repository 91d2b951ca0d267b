/* The entry points of aclshmem/amo.h: every family generated from the type tables of
 * aclshmem/types.h, each one call of the engine (shmemi_amo, amo/amo.c), which checks the
 * arguments.  Values travel as bit patterns in a uint64_t. */
#include <stdint.h>

#include "aclshmem/amo.h"
#include "amo/amo.h"

/* One AMO on a word of TYPE: the operands as bit patterns; the fetched value as TYPE. */
#define AMO_API(NAME, OP) "aclshmem_" #NAME "_atomic_" #OP
#define AMO_DESC(KIND, TYPE, OP, VALUE, COND)                                                        \
    (&(shmemi_amo_t){.op = (OP), .kind = (KIND), .width = (int)sizeof(TYPE),                         \
                     .value = shmemi_amo_bits(&(TYPE){VALUE}, sizeof(TYPE)),                         \
                     .cond = shmemi_amo_bits(&(TYPE){COND}, sizeof(TYPE))})
#define AMO_DO(NAME, KIND, TYPE, OPNAME, OP, DST, VALUE, COND, PE)                                   \
    shmemi_amo(AMO_API(NAME, OPNAME), NULL, DST, AMO_DESC(KIND, TYPE, OP, VALUE, COND), PE, NULL)
#define AMO_FETCH(NAME, KIND, TYPE, OPNAME, OP, DST, VALUE, COND, PE)                                \
    uint64_t fetched;                                                                                \
    shmemi_amo(AMO_API(NAME, OPNAME), NULL, DST, AMO_DESC(KIND, TYPE, OP, VALUE, COND), PE, &fetched); \
    TYPE old;                                                                                        \
    shmemi_amo_value(fetched, &old, sizeof old);                                                     \
    return old

/* add, fetch_add, set, fetch, swap: every AMO type. */
#define DEFINE_AMO_STANDARD(KIND, NAME, TYPE)                                                        \
    void aclshmem_##NAME##_atomic_add(TYPE *dst, TYPE value, int32_t pe)                             \
    {                                                                                                \
        AMO_DO(NAME, KIND, TYPE, add, SHMEMI_AMO_ADD, dst, value, 0, pe);                            \
    }                                                                                                \
    TYPE aclshmem_##NAME##_atomic_fetch_add(TYPE *dst, TYPE value, int32_t pe)                       \
    {                                                                                                \
        AMO_FETCH(NAME, KIND, TYPE, fetch_add, SHMEMI_AMO_ADD, dst, value, 0, pe);                   \
    }                                                                                                \
    void aclshmem_##NAME##_atomic_set(TYPE *dst, TYPE value, int32_t pe)                             \
    {                                                                                                \
        AMO_DO(NAME, KIND, TYPE, set, SHMEMI_AMO_SET, dst, value, 0, pe);                            \
    }                                                                                                \
    TYPE aclshmem_##NAME##_atomic_fetch(const TYPE *src, int32_t pe)                                 \
    {                                                                                                \
        AMO_FETCH(NAME, KIND, TYPE, fetch, SHMEMI_AMO_FETCH, src, 0, 0, pe);                         \
    }                                                                                                \
    TYPE aclshmem_##NAME##_atomic_swap(TYPE *dst, TYPE value, int32_t pe)                            \
    {                                                                                                \
        AMO_FETCH(NAME, KIND, TYPE, swap, SHMEMI_AMO_SWAP, dst, value, 0, pe);                       \
    }

/* compare_swap: integers, float and double (bit patterns compared). */
#define DEFINE_AMO_CSWAP(KIND, NAME, TYPE)                                                           \
    TYPE aclshmem_##NAME##_atomic_compare_swap(TYPE *dst, TYPE cond, TYPE value, int32_t pe)         \
    {                                                                                                \
        AMO_FETCH(NAME, KIND, TYPE, compare_swap, SHMEMI_AMO_CSWAP, dst, value, cond, pe);           \
    }

/* inc, fetch_inc and the bitwise operations: integers only. */
#define DEFINE_AMO_BITWISE(NAME, TYPE, OPNAME, OP)                                                   \
    void aclshmem_##NAME##_atomic_##OPNAME(TYPE *dst, TYPE value, int32_t pe)                        \
    {                                                                                                \
        AMO_DO(NAME, SHMEMI_AMO_INT, TYPE, OPNAME, OP, dst, value, 0, pe);                           \
    }                                                                                                \
    TYPE aclshmem_##NAME##_atomic_fetch_##OPNAME(TYPE *dst, TYPE value, int32_t pe)                  \
    {                                                                                                \
        AMO_FETCH(NAME, SHMEMI_AMO_INT, TYPE, fetch_##OPNAME, OP, dst, value, 0, pe);                \
    }
#define DEFINE_AMO_INTEGER(NAME, TYPE)                                                               \
    void aclshmem_##NAME##_atomic_inc(TYPE *dst, int32_t pe)                                         \
    {                                                                                                \
        AMO_DO(NAME, SHMEMI_AMO_INT, TYPE, inc, SHMEMI_AMO_ADD, dst, 1, 0, pe);                      \
    }                                                                                                \
    TYPE aclshmem_##NAME##_atomic_fetch_inc(TYPE *dst, int32_t pe)                                   \
    {                                                                                                \
        AMO_FETCH(NAME, SHMEMI_AMO_INT, TYPE, fetch_inc, SHMEMI_AMO_ADD, dst, 1, 0, pe);             \
    }                                                                                                \
    DEFINE_AMO_BITWISE(NAME, TYPE, and, SHMEMI_AMO_AND)                                              \
    DEFINE_AMO_BITWISE(NAME, TYPE, or, SHMEMI_AMO_OR)                                                \
    DEFINE_AMO_BITWISE(NAME, TYPE, xor, SHMEMI_AMO_XOR)

/* The tables name types, not how their addition works: the kind of each table (half and
 * bfloat16 share a table and a storage type, so their kind comes from their name). */
#define KIND_OF_half SHMEMI_AMO_HALF
#define KIND_OF_bfloat16 SHMEMI_AMO_BFLOAT16
#define INT_STANDARD(NAME, TYPE) DEFINE_AMO_STANDARD(SHMEMI_AMO_INT, NAME, TYPE)
#define FLOAT_STANDARD(NAME, TYPE) DEFINE_AMO_STANDARD(SHMEMI_AMO_FLOAT, NAME, TYPE)
#define HALF_STANDARD(NAME, TYPE) DEFINE_AMO_STANDARD(KIND_OF_##NAME, NAME, TYPE)
#define INT_CSWAP(NAME, TYPE) DEFINE_AMO_CSWAP(SHMEMI_AMO_INT, NAME, TYPE)
#define FLOAT_CSWAP(NAME, TYPE) DEFINE_AMO_CSWAP(SHMEMI_AMO_FLOAT, NAME, TYPE)

ACLSHMEM_AMO_INT_TYPES(INT_STANDARD)
ACLSHMEM_AMO_FLOAT_TYPES(FLOAT_STANDARD)
ACLSHMEM_AMO_HALF_TYPES(HALF_STANDARD)
ACLSHMEM_AMO_INT_TYPES(INT_CSWAP)
ACLSHMEM_AMO_FLOAT_TYPES(FLOAT_CSWAP)
ACLSHMEM_AMO_INT_TYPES(DEFINE_AMO_INTEGER)
