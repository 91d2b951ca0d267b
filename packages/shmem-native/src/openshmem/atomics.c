/* Atomic memory operations: every family of OpenSHMEM 1.5 (standard, extended, bitwise;
 * blocking and nbi fetching; each with a context form) over the type tables of shmem.h,
 * each one call of the AMO engine (amo/amo.c) once the context's PE is a world PE.  Values
 * travel as bit patterns, so one engine entry serves every type; the engine completes an
 * AMO when it returns, so the _nbi forms store the old value at once. */
#include "amo/amo.h"
#include "base/error.h"
#include "openshmem/osh.h"

/* op on the size-byte object dest on pe, with *value and *cond (NULL: 0); the old value
 * goes to *old when old is not NULL (0 when the call fails). */
static int amo(const char *api, shmem_ctx_t ctx, const void *dest, shmemi_amo_op_t op, size_t size,
               const void *value, const void *cond, int pe, void *old)
{
    uint64_t fetched = 0;
    shmemi_amo_t a = {.op = op, .kind = SHMEMI_AMO_INT, .width = (int)size,
                      .value = value ? shmemi_amo_bits(value, size) : 0,
                      .cond = cond ? shmemi_amo_bits(cond, size) : 0};
    shmemi_channel_t *ch;
    int rc = shmemi_osh_ctx_pe(api, ctx, &pe, &ch);
    if (rc == ACLSHMEM_SUCCESS)
        rc = shmemi_amo(api, ch, dest, &a, pe, old ? &fetched : NULL);
    if (old)
        shmemi_amo_value(fetched, old, size);
    return rc;
}

/* The _nbi forms: the old value goes to fetch, which must be a real address. */
static void amo_nbi(const char *api, shmem_ctx_t ctx, const void *dest, shmemi_amo_op_t op, size_t size,
                    const void *value, const void *cond, int pe, void *fetch)
{
    if (!fetch) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: fetch is NULL", api);
        return;
    }
    amo(api, ctx, dest, op, size, value, cond, pe, fetch);
}

#define API(NAME, OPNAME) "shmem_" #NAME "_atomic_" #OPNAME
#define CTX_API(NAME, OPNAME) "shmem_ctx_" #NAME "_atomic_" #OPNAME

/* One function without a context: an update without a result, and one that returns the old
 * value (FN is the function, API the name its errors carry). */
#define UPDATE_FN(FN, API, TYPE, OP)                                                                 \
    void FN(TYPE *dest, TYPE value, int pe)                                                          \
    {                                                                                                \
        amo(API, SHMEM_CTX_DEFAULT, dest, OP, sizeof(TYPE), &value, NULL, pe, NULL);                 \
    }                                                                                                \
    SHMEMI_PROFILED(FN)
#define FETCHING_FN(FN, API, TYPE, OP)                                                               \
    TYPE FN(TYPE *dest, TYPE value, int pe)                                                          \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(API, SHMEM_CTX_DEFAULT, dest, OP, sizeof(TYPE), &value, NULL, pe, &old);                 \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(FN)

/* An update without a result: add, set, and, or, xor. */
#define DEFINE_UPDATE(NAME, TYPE, OPNAME, OP)                                                        \
    UPDATE_FN(shmem_##NAME##_atomic_##OPNAME, API(NAME, OPNAME), TYPE, OP)                           \
    void shmem_ctx_##NAME##_atomic_##OPNAME(shmem_ctx_t ctx, TYPE *dest, TYPE value, int pe)         \
    {                                                                                                \
        amo(CTX_API(NAME, OPNAME), ctx, dest, OP, sizeof(TYPE), &value, NULL, pe, NULL);             \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_##OPNAME)

/* An update that returns the old value, and its _nbi form: fetch_add, swap, fetch_and,
 * fetch_or, fetch_xor. */
#define DEFINE_FETCHING(NAME, TYPE, OPNAME, OP)                                                      \
    FETCHING_FN(shmem_##NAME##_atomic_##OPNAME, API(NAME, OPNAME), TYPE, OP)                         \
    TYPE shmem_ctx_##NAME##_atomic_##OPNAME(shmem_ctx_t ctx, TYPE *dest, TYPE value, int pe)         \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(CTX_API(NAME, OPNAME), ctx, dest, OP, sizeof(TYPE), &value, NULL, pe, &old);             \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_##OPNAME)                                              \
    void shmem_##NAME##_atomic_##OPNAME##_nbi(TYPE *fetch, TYPE *dest, TYPE value, int pe)           \
    {                                                                                                \
        amo_nbi(API(NAME, OPNAME##_nbi), SHMEM_CTX_DEFAULT, dest, OP, sizeof(TYPE), &value, NULL,    \
                pe, fetch);                                                                          \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_##OPNAME##_nbi)                                            \
    void shmem_ctx_##NAME##_atomic_##OPNAME##_nbi(shmem_ctx_t ctx, TYPE *fetch, TYPE *dest,          \
                                                  TYPE value, int pe)                                \
    {                                                                                                \
        amo_nbi(CTX_API(NAME, OPNAME##_nbi), ctx, dest, OP, sizeof(TYPE), &value, NULL, pe, fetch);  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_##OPNAME##_nbi)

/* inc and fetch_inc: add 1. */
#define DEFINE_INC(NAME, TYPE)                                                                       \
    void shmem_##NAME##_atomic_inc(TYPE *dest, int pe)                                               \
    {                                                                                                \
        amo(API(NAME, inc), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_ADD, sizeof(TYPE), &(TYPE){1}, NULL, \
            pe, NULL);                                                                               \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_inc)                                                       \
    void shmem_ctx_##NAME##_atomic_inc(shmem_ctx_t ctx, TYPE *dest, int pe)                          \
    {                                                                                                \
        amo(CTX_API(NAME, inc), ctx, dest, SHMEMI_AMO_ADD, sizeof(TYPE), &(TYPE){1}, NULL, pe, NULL); \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_inc)                                                   \
    TYPE shmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe)                                         \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(API(NAME, fetch_inc), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_ADD, sizeof(TYPE), &(TYPE){1}, \
            NULL, pe, &old);                                                                         \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_fetch_inc)                                                 \
    TYPE shmem_ctx_##NAME##_atomic_fetch_inc(shmem_ctx_t ctx, TYPE *dest, int pe)                    \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(CTX_API(NAME, fetch_inc), ctx, dest, SHMEMI_AMO_ADD, sizeof(TYPE), &(TYPE){1}, NULL, pe, \
            &old);                                                                                   \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_fetch_inc)                                             \
    void shmem_##NAME##_atomic_fetch_inc_nbi(TYPE *fetch, TYPE *dest, int pe)                        \
    {                                                                                                \
        amo_nbi(API(NAME, fetch_inc_nbi), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_ADD, sizeof(TYPE),     \
                &(TYPE){1}, NULL, pe, fetch);                                                        \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_fetch_inc_nbi)                                             \
    void shmem_ctx_##NAME##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, TYPE *fetch, TYPE *dest, int pe)   \
    {                                                                                                \
        amo_nbi(CTX_API(NAME, fetch_inc_nbi), ctx, dest, SHMEMI_AMO_ADD, sizeof(TYPE), &(TYPE){1},   \
                NULL, pe, fetch);                                                                    \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_fetch_inc_nbi)

/* compare_swap: *dest = value when *dest == cond; the old value either way. */
#define DEFINE_COMPARE_SWAP(NAME, TYPE)                                                              \
    TYPE shmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value, int pe)               \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(API(NAME, compare_swap), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_CSWAP, sizeof(TYPE), &value, \
            &cond, pe, &old);                                                                        \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_compare_swap)                                              \
    TYPE shmem_ctx_##NAME##_atomic_compare_swap(shmem_ctx_t ctx, TYPE *dest, TYPE cond, TYPE value,  \
                                                int pe)                                              \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(CTX_API(NAME, compare_swap), ctx, dest, SHMEMI_AMO_CSWAP, sizeof(TYPE), &value, &cond,   \
            pe, &old);                                                                               \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_compare_swap)                                          \
    void shmem_##NAME##_atomic_compare_swap_nbi(TYPE *fetch, TYPE *dest, TYPE cond, TYPE value,      \
                                                int pe)                                              \
    {                                                                                                \
        amo_nbi(API(NAME, compare_swap_nbi), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_CSWAP, sizeof(TYPE), \
                &value, &cond, pe, fetch);                                                           \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_compare_swap_nbi)                                          \
    void shmem_ctx_##NAME##_atomic_compare_swap_nbi(shmem_ctx_t ctx, TYPE *fetch, TYPE *dest,        \
                                                    TYPE cond, TYPE value, int pe)                   \
    {                                                                                                \
        amo_nbi(CTX_API(NAME, compare_swap_nbi), ctx, dest, SHMEMI_AMO_CSWAP, sizeof(TYPE), &value,  \
                &cond, pe, fetch);                                                                   \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_compare_swap_nbi)

/* fetch: the value, read atomically. */
#define DEFINE_FETCH(NAME, TYPE)                                                                     \
    TYPE shmem_##NAME##_atomic_fetch(const TYPE *source, int pe)                                     \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(API(NAME, fetch), SHMEM_CTX_DEFAULT, source, SHMEMI_AMO_FETCH, sizeof(TYPE), NULL, NULL, \
            pe, &old);                                                                               \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_fetch)                                                     \
    TYPE shmem_ctx_##NAME##_atomic_fetch(shmem_ctx_t ctx, const TYPE *source, int pe)                \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(CTX_API(NAME, fetch), ctx, source, SHMEMI_AMO_FETCH, sizeof(TYPE), NULL, NULL, pe, &old); \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_fetch)                                                 \
    void shmem_##NAME##_atomic_fetch_nbi(TYPE *fetch, const TYPE *source, int pe)                    \
    {                                                                                                \
        amo_nbi(API(NAME, fetch_nbi), SHMEM_CTX_DEFAULT, source, SHMEMI_AMO_FETCH, sizeof(TYPE),     \
                NULL, NULL, pe, fetch);                                                              \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_atomic_fetch_nbi)                                                 \
    void shmem_ctx_##NAME##_atomic_fetch_nbi(shmem_ctx_t ctx, TYPE *fetch, const TYPE *source,       \
                                             int pe)                                                 \
    {                                                                                                \
        amo_nbi(CTX_API(NAME, fetch_nbi), ctx, source, SHMEMI_AMO_FETCH, sizeof(TYPE), NULL, NULL,   \
                pe, fetch);                                                                          \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_atomic_fetch_nbi)

/* The families of shmem.h, over its tables. */
#define DEFINE_STANDARD(NAME, TYPE)                                                                  \
    DEFINE_INC(NAME, TYPE)                                                                           \
    DEFINE_UPDATE(NAME, TYPE, add, SHMEMI_AMO_ADD)                                                   \
    DEFINE_FETCHING(NAME, TYPE, fetch_add, SHMEMI_AMO_ADD)                                           \
    DEFINE_COMPARE_SWAP(NAME, TYPE)
#define DEFINE_EXTENDED(NAME, TYPE)                                                                  \
    DEFINE_FETCH(NAME, TYPE)                                                                         \
    DEFINE_UPDATE(NAME, TYPE, set, SHMEMI_AMO_SET)                                                   \
    DEFINE_FETCHING(NAME, TYPE, swap, SHMEMI_AMO_SWAP)
#define DEFINE_BITWISE(NAME, TYPE)                                                                   \
    DEFINE_UPDATE(NAME, TYPE, and, SHMEMI_AMO_AND)                                                   \
    DEFINE_FETCHING(NAME, TYPE, fetch_and, SHMEMI_AMO_AND)                                           \
    DEFINE_UPDATE(NAME, TYPE, or, SHMEMI_AMO_OR)                                                     \
    DEFINE_FETCHING(NAME, TYPE, fetch_or, SHMEMI_AMO_OR)                                             \
    DEFINE_UPDATE(NAME, TYPE, xor, SHMEMI_AMO_XOR)                                                   \
    DEFINE_FETCHING(NAME, TYPE, fetch_xor, SHMEMI_AMO_XOR)

SHMEMI_TYPES_AMO(DEFINE_STANDARD)
SHMEMI_TYPES_AMO(DEFINE_EXTENDED)
SHMEMI_TYPES_AMO_FLOAT(DEFINE_EXTENDED)
SHMEMI_TYPES_AMO_BITWISE(DEFINE_BITWISE)

/* ---- the names deprecated before 1.4 ------------------------------------------------------
 * fadd, finc, add, inc, cswap, swap, fetch and set: the same operations under their old
 * names (their profiling aliases refer to them, which the deprecation would warn about). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define DEPRECATED_API(NAME, OPNAME) "shmem_" #NAME "_" #OPNAME

#define DEFINE_OLD_UPDATE(NAME, TYPE, OPNAME, OP)                                                    \
    UPDATE_FN(shmem_##NAME##_##OPNAME, DEPRECATED_API(NAME, OPNAME), TYPE, OP)
#define DEFINE_OLD_FETCHING(NAME, TYPE, OPNAME, OP)                                                  \
    FETCHING_FN(shmem_##NAME##_##OPNAME, DEPRECATED_API(NAME, OPNAME), TYPE, OP)

#define DEFINE_OLD_STANDARD(NAME, TYPE)                                                              \
    DEFINE_OLD_FETCHING(NAME, TYPE, fadd, SHMEMI_AMO_ADD)                                            \
    DEFINE_OLD_UPDATE(NAME, TYPE, add, SHMEMI_AMO_ADD)                                               \
    TYPE shmem_##NAME##_finc(TYPE *dest, int pe)                                                     \
    {                                                                                                \
        return shmem_##NAME##_fadd(dest, 1, pe);                                                     \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_finc)                                                             \
    void shmem_##NAME##_inc(TYPE *dest, int pe)                                                      \
    {                                                                                                \
        shmem_##NAME##_add(dest, 1, pe);                                                             \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_inc)                                                              \
    TYPE shmem_##NAME##_cswap(TYPE *dest, TYPE cond, TYPE value, int pe)                             \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(DEPRECATED_API(NAME, cswap), SHMEM_CTX_DEFAULT, dest, SHMEMI_AMO_CSWAP, sizeof(TYPE),    \
            &value, &cond, pe, &old);                                                                \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_cswap)

#define DEFINE_OLD_EXTENDED(NAME, TYPE)                                                              \
    DEFINE_OLD_FETCHING(NAME, TYPE, swap, SHMEMI_AMO_SWAP)                                           \
    DEFINE_OLD_UPDATE(NAME, TYPE, set, SHMEMI_AMO_SET)                                               \
    TYPE shmem_##NAME##_fetch(const TYPE *source, int pe)                                            \
    {                                                                                                \
        TYPE old;                                                                                    \
        amo(DEPRECATED_API(NAME, fetch), SHMEM_CTX_DEFAULT, source, SHMEMI_AMO_FETCH, sizeof(TYPE),  \
            NULL, NULL, pe, &old);                                                                   \
        return old;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_fetch)

SHMEMI_TYPES_AMO(DEFINE_OLD_STANDARD)
SHMEMI_TYPES_AMO(DEFINE_OLD_EXTENDED)
SHMEMI_TYPES_AMO_FLOAT(DEFINE_OLD_EXTENDED)
