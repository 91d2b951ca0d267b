/* The arithmetic of the reductions: for every (element type, operation) of the engine, the
 * loops that combine arrays of elements (coll.h, shmemi_reducer_t).  Generated from the
 * engine's type table, SHMEMI_COLL_DTYPES, one set per kind of type.
 *
 * The loops walk blocks of BLOCK elements with a constant trip count, which the compiler
 * turns into vector instructions at -O2 already (a loop of unknown length is vectorised
 * only at -O3 by GCC 12); the few elements after the last block go one by one. */
#include <string.h>

#include "aclshmem/coll.h"
#include "coll/coll.h"
#include "core/fp16.h"

#define BLOCK 16

/* acc[i] = EXPR(acc[i], in[i]) over n elements, where EXPR uses a and b. */
#define ELEMENTWISE(ACC_T, IN_T, EXPR)                                                         \
    {                                                                                          \
        ACC_T *restrict acc = accv;                                                            \
        const IN_T *restrict in = inv;                                                         \
        size_t i = 0;                                                                          \
        for (; i + BLOCK <= n; i += BLOCK)                                                     \
            for (size_t k = 0; k < BLOCK; k++) {                                               \
                ACC_T a = acc[i + k];                                                          \
                IN_T b = in[i + k];                                                            \
                acc[i + k] = (EXPR);                                                           \
            }                                                                                  \
        for (; i < n; i++) {                                                                   \
            ACC_T a = acc[i];                                                                  \
            IN_T b = in[i];                                                                    \
            acc[i] = (EXPR);                                                                   \
        }                                                                                      \
    }

/* Integers: sum and prod in unsigned long long, then back to the type (which keeps the
 * low bits: wrapping, never the undefined behaviour of a signed overflow). */
#define INT_AND(T) (T)(a & b)
#define INT_OR(T) (T)(a | b)
#define INT_XOR(T) (T)(a ^ b)
#define ANY_MIN(T) (b < a ? b : a)
#define ANY_MAX(T) (a < b ? b : a)
#define INT_SUM(T) (T)((unsigned long long)a + (unsigned long long)b)
#define INT_PROD(T) (T)((unsigned long long)a * (unsigned long long)b)
#define NUM_SUM(T) (a + b)
#define NUM_PROD(T) (a * b)

static void copy_bytes(void *dst, const void *src, size_t n, size_t size)
{
    memcpy(dst, src, n * size);
}

/* One reducer: combine loop NAME_OP, load/store by copy. */
#define DEFINE_PLAIN(NAME, TYPE, OP, EXPR)                                                     \
    static void combine_##NAME##_##OP(void *restrict accv, const void *restrict inv, size_t n) \
        ELEMENTWISE(TYPE, TYPE, EXPR(TYPE))                                                    \
    static const shmemi_reducer_t reducer_##NAME##_##OP = {sizeof(TYPE), copy_##NAME,          \
                                                           combine_##NAME##_##OP, copy_##NAME};

#define DEFINE_COPY(NAME, TYPE)                                                                \
    static void copy_##NAME(void *dst, const void *src, size_t n)                              \
    {                                                                                          \
        copy_bytes(dst, src, n, sizeof(TYPE));                                                 \
    }

#define DEFINE_INT(NAME, TYPE)                                                                 \
    DEFINE_COPY(NAME, TYPE)                                                                    \
    DEFINE_PLAIN(NAME, TYPE, and, INT_AND)                                                     \
    DEFINE_PLAIN(NAME, TYPE, or, INT_OR)                                                       \
    DEFINE_PLAIN(NAME, TYPE, xor, INT_XOR)                                                     \
    DEFINE_PLAIN(NAME, TYPE, min, ANY_MIN)                                                     \
    DEFINE_PLAIN(NAME, TYPE, max, ANY_MAX)                                                     \
    DEFINE_PLAIN(NAME, TYPE, sum, INT_SUM)                                                     \
    DEFINE_PLAIN(NAME, TYPE, prod, INT_PROD)

#define DEFINE_REAL(NAME, TYPE)                                                                \
    DEFINE_COPY(NAME, TYPE)                                                                    \
    DEFINE_PLAIN(NAME, TYPE, min, ANY_MIN)                                                     \
    DEFINE_PLAIN(NAME, TYPE, max, ANY_MAX)                                                     \
    DEFINE_PLAIN(NAME, TYPE, sum, NUM_SUM)                                                     \
    DEFINE_PLAIN(NAME, TYPE, prod, NUM_PROD)

#define DEFINE_CPLX(NAME, TYPE)                                                                \
    DEFINE_COPY(NAME, TYPE)                                                                    \
    DEFINE_PLAIN(NAME, TYPE, sum, NUM_SUM)                                                     \
    DEFINE_PLAIN(NAME, TYPE, prod, NUM_PROD)

/* half and bfloat16 accumulate in float: load widens, store rounds once at the end. */
#define DEFINE_FP16(NAME, TO_FLOAT, FROM_FLOAT)                                                \
    static void load_##NAME(void *accv, const void *inv, size_t n)                             \
    {                                                                                          \
        float *acc = accv;                                                                     \
        const uint16_t *in = inv;                                                              \
        for (size_t i = 0; i < n; i++)                                                         \
            acc[i] = TO_FLOAT(in[i]);                                                          \
    }                                                                                          \
    static void store_##NAME(void *outv, const void *accv, size_t n)                           \
    {                                                                                          \
        uint16_t *out = outv;                                                                  \
        const float *acc = accv;                                                               \
        for (size_t i = 0; i < n; i++)                                                         \
            out[i] = FROM_FLOAT(acc[i]);                                                       \
    }                                                                                          \
    DEFINE_FP16_OP(NAME, TO_FLOAT, min, ANY_MIN)                                               \
    DEFINE_FP16_OP(NAME, TO_FLOAT, max, ANY_MAX)                                               \
    DEFINE_FP16_OP(NAME, TO_FLOAT, sum, NUM_SUM)                                               \
    DEFINE_FP16_OP(NAME, TO_FLOAT, prod, NUM_PROD)

#define DEFINE_FP16_OP(NAME, TO_FLOAT, OP, EXPR)                                               \
    static void combine_##NAME##_##OP(void *accv, const void *inv, size_t n)                   \
    {                                                                                          \
        float *acc = accv;                                                                     \
        const uint16_t *in = inv;                                                              \
        for (size_t i = 0; i < n; i++) {                                                       \
            float a = acc[i], b = TO_FLOAT(in[i]);                                             \
            acc[i] = EXPR(float);                                                              \
        }                                                                                      \
    }                                                                                          \
    static const shmemi_reducer_t reducer_##NAME##_##OP = {sizeof(float), load_##NAME,         \
                                                           combine_##NAME##_##OP, store_##NAME};

#define DEFINE_HALF(NAME, TYPE) DEFINE_FP16(NAME, shmemi_half_to_float, shmemi_float_to_half)
#define DEFINE_BF16(NAME, TYPE) DEFINE_FP16(NAME, shmemi_bfloat16_to_float, shmemi_float_to_bfloat16)

#define DEFINE_TYPE(NAME, TYPE, KIND) DEFINE_##KIND(NAME, TYPE)
SHMEMI_COLL_DTYPES(DEFINE_TYPE)

/* The table: which operations each kind has. */
#define OPS_INT(NAME) {&reducer_##NAME##_and, &reducer_##NAME##_or, &reducer_##NAME##_xor,          \
                       &reducer_##NAME##_min, &reducer_##NAME##_max, &reducer_##NAME##_sum,         \
                       &reducer_##NAME##_prod}
#define OPS_REAL(NAME) {NULL, NULL, NULL, &reducer_##NAME##_min, &reducer_##NAME##_max,             \
                        &reducer_##NAME##_sum, &reducer_##NAME##_prod}
#define OPS_HALF(NAME) OPS_REAL(NAME)
#define OPS_BF16(NAME) OPS_REAL(NAME)
#define OPS_CPLX(NAME) {NULL, NULL, NULL, NULL, NULL, &reducer_##NAME##_sum, &reducer_##NAME##_prod}

static const shmemi_reducer_t *const reducers[SHMEMI_DT_COUNT][SHMEMI_OP_COUNT] = {
#define REDUCER_ROW(NAME, TYPE, KIND) [SHMEMI_DT_##NAME] = OPS_##KIND(NAME),
    SHMEMI_COLL_DTYPES(REDUCER_ROW)
#undef REDUCER_ROW
};

const shmemi_reducer_t *shmemi_reducer(shmemi_dtype_t dt, shmemi_redop_t op)
{
    if ((unsigned)dt >= SHMEMI_DT_COUNT || (unsigned)op >= SHMEMI_OP_COUNT)
        return NULL;
    return reducers[dt][op];
}

static const size_t dtype_sizes[SHMEMI_DT_COUNT] = {
#define SIZE_ROW(NAME, TYPE, KIND) [SHMEMI_DT_##NAME] = sizeof(TYPE),
    SHMEMI_COLL_DTYPES(SIZE_ROW)
#undef SIZE_ROW
};

static const char *const dtype_names[SHMEMI_DT_COUNT] = {
#define NAME_ROW(NAME, TYPE, KIND) [SHMEMI_DT_##NAME] = #NAME,
    SHMEMI_COLL_DTYPES(NAME_ROW)
#undef NAME_ROW
};

static const char *const op_names[SHMEMI_OP_COUNT] = {
#define OP_ROW(NAME) [SHMEMI_OP_##NAME] = #NAME,
    SHMEMI_REDUCE_OPS(OP_ROW)
#undef OP_ROW
};

size_t shmemi_dtype_size(shmemi_dtype_t dt)
{
    return (unsigned)dt < SHMEMI_DT_COUNT ? dtype_sizes[dt] : 0;
}

const char *shmemi_dtype_name(shmemi_dtype_t dt)
{
    return (unsigned)dt < SHMEMI_DT_COUNT ? dtype_names[dt] : "(no type)";
}

const char *shmemi_redop_name(shmemi_redop_t op)
{
    return (unsigned)op < SHMEMI_OP_COUNT ? op_names[op] : "(no operation)";
}

/* aclshmemx_reduce_local names types and operations by the public enums of aclshmem/coll.h. */
static const int8_t public_dtypes[ACLSHMEMX_TYPE_COUNT] = {
#define PUBLIC_ROW(NAME, TYPE) [ACLSHMEMX_TYPE_##NAME] = SHMEMI_DT_##NAME,
    ACLSHMEM_REDUCE_ARITH_TYPES(PUBLIC_ROW)
#undef PUBLIC_ROW
};

/* The header writes aclshmemx_type_t out: its values must be the table's rows in order (the
 * Python binding numbers the rows), one each. */
enum {
#define ROW_INDEX(NAME, TYPE) ROW_INDEX_##NAME,
    ACLSHMEM_REDUCE_ARITH_TYPES(ROW_INDEX) ROW_COUNT
#undef ROW_INDEX
};
#define SAME_PLACE(NAME, TYPE)                                                                     \
    _Static_assert((int)ACLSHMEMX_TYPE_##NAME == (int)ROW_INDEX_##NAME, #NAME " out of order");
ACLSHMEM_REDUCE_ARITH_TYPES(SAME_PLACE)
#undef SAME_PLACE
_Static_assert((int)ACLSHMEMX_TYPE_COUNT == (int)ROW_COUNT, "aclshmemx_type_t has a value for every row");

static const int8_t public_ops[ACLSHMEMX_OP_COUNT] = {
    [ACLSHMEMX_OP_AND] = SHMEMI_OP_and, [ACLSHMEMX_OP_OR] = SHMEMI_OP_or,   [ACLSHMEMX_OP_XOR] = SHMEMI_OP_xor,
    [ACLSHMEMX_OP_MIN] = SHMEMI_OP_min, [ACLSHMEMX_OP_MAX] = SHMEMI_OP_max, [ACLSHMEMX_OP_SUM] = SHMEMI_OP_sum,
    [ACLSHMEMX_OP_PROD] = SHMEMI_OP_prod,
};

int shmemi_dtype_of_public(int type)
{
    return type >= 0 && type < ACLSHMEMX_TYPE_COUNT ? public_dtypes[type] : -1;
}

int shmemi_redop_of_public(int op)
{
    return op >= 0 && op < ACLSHMEMX_OP_COUNT ? public_ops[op] : -1;
}
