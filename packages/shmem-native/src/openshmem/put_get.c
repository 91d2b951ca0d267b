/* Remote memory access: put and get in every shape of OpenSHMEM 1.5 (typed over
 * SHMEMI_TYPES_RMA, sized over SHMEMI_SIZES_RMA, in bytes; contiguous, one element,
 * strided, nbi; each with a context form), each one call of the RMA engine (rma/rma.c)
 * once the context's PE is a world PE.  The engine completes a put when it returns, so
 * put_nbi shares the blocking path; get_nbi starts the get, which the context's quiet
 * completes. */
#include "openshmem/osh.h"
#include "rma/rma.h"

static void put(const char *api, shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t size, int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_rma_put(api, ch, dest, source, nelems, size, pe);
}

static void get(const char *api, shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t size, int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_rma_get(api, ch, dest, source, nelems, size, pe);
}

static void get_nbi(const char *api, shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t size,
                    int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_rma_get_nbi(api, ch, dest, source, nelems, size, pe);
}

static void iput(const char *api, shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                 size_t nelems, size_t size, int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_rma_iput(api, ch, dest, source, dst, sst, nelems, size, pe);
}

static void iget(const char *api, shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                 size_t nelems, size_t size, int pe)
{
    shmemi_channel_t *ch;
    if (shmemi_osh_ctx_pe(api, ctx, &pe, &ch) == ACLSHMEM_SUCCESS)
        shmemi_rma_iget(api, ch, dest, source, dst, sst, nelems, size, pe);
}

/* Each shape twice: without a context (the default one) and with one.  SIZE is the element
 * size in bytes; the functions' names are their error messages' names. */
#define DEFINE_CONTIGUOUS(PREFIX, SUFFIX, TYPE, SIZE, MOVE)                                           \
    void shmem_##PREFIX##SUFFIX(TYPE *dest, const TYPE *source, size_t nelems, int pe)               \
    {                                                                                                \
        MOVE("shmem_" #PREFIX #SUFFIX, SHMEM_CTX_DEFAULT, dest, source, nelems, SIZE, pe);           \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##PREFIX##SUFFIX)                                                          \
    void shmem_ctx_##PREFIX##SUFFIX(shmem_ctx_t ctx, TYPE *dest, const TYPE *source, size_t nelems,  \
                                    int pe)                                                          \
    {                                                                                                \
        MOVE("shmem_ctx_" #PREFIX #SUFFIX, ctx, dest, source, nelems, SIZE, pe);                     \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##PREFIX##SUFFIX)

#define DEFINE_STRIDED(PREFIX, SUFFIX, TYPE, SIZE, MOVE)                                              \
    void shmem_##PREFIX##SUFFIX(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                size_t nelems, int pe)                                               \
    {                                                                                                \
        MOVE("shmem_" #PREFIX #SUFFIX, SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, SIZE, pe); \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##PREFIX##SUFFIX)                                                          \
    void shmem_ctx_##PREFIX##SUFFIX(shmem_ctx_t ctx, TYPE *dest, const TYPE *source, ptrdiff_t dst,  \
                                    ptrdiff_t sst, size_t nelems, int pe)                            \
    {                                                                                                \
        MOVE("shmem_ctx_" #PREFIX #SUFFIX, ctx, dest, source, dst, sst, nelems, SIZE, pe);           \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##PREFIX##SUFFIX)

/* p and g: one element, by value. */
#define DEFINE_ELEMENT(NAME, TYPE)                                                                    \
    void shmem_##NAME##_p(TYPE *dest, TYPE value, int pe)                                            \
    {                                                                                                \
        put("shmem_" #NAME "_p", SHMEM_CTX_DEFAULT, dest, &value, 1, sizeof(TYPE), pe);              \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_p)                                                                \
    void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, TYPE *dest, TYPE value, int pe)                       \
    {                                                                                                \
        put("shmem_ctx_" #NAME "_p", ctx, dest, &value, 1, sizeof(TYPE), pe);                        \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_p)                                                            \
    TYPE shmem_##NAME##_g(const TYPE *source, int pe)                                                \
    {                                                                                                \
        TYPE value = 0;                                                                              \
        get("shmem_" #NAME "_g", SHMEM_CTX_DEFAULT, &value, source, 1, sizeof(TYPE), pe);            \
        return value;                                                                                \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_g)                                                                \
    TYPE shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const TYPE *source, int pe)                           \
    {                                                                                                \
        TYPE value = 0;                                                                              \
        get("shmem_ctx_" #NAME "_g", ctx, &value, source, 1, sizeof(TYPE), pe);                      \
        return value;                                                                                \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_ctx_##NAME##_g)

#define DEFINE_TYPED(NAME, TYPE)                                                                      \
    DEFINE_CONTIGUOUS(NAME, _put, TYPE, sizeof(TYPE), put)                                           \
    DEFINE_CONTIGUOUS(NAME, _get, TYPE, sizeof(TYPE), get)                                           \
    DEFINE_CONTIGUOUS(NAME, _put_nbi, TYPE, sizeof(TYPE), put)                                       \
    DEFINE_CONTIGUOUS(NAME, _get_nbi, TYPE, sizeof(TYPE), get_nbi)                                   \
    DEFINE_STRIDED(NAME, _iput, TYPE, sizeof(TYPE), iput)                                            \
    DEFINE_STRIDED(NAME, _iget, TYPE, sizeof(TYPE), iget)                                            \
    DEFINE_ELEMENT(NAME, TYPE)
SHMEMI_TYPES_RMA(DEFINE_TYPED)

#define DEFINE_SIZED(BITS)                                                                            \
    DEFINE_CONTIGUOUS(put, BITS, void, BITS / 8, put)                                                \
    DEFINE_CONTIGUOUS(get, BITS, void, BITS / 8, get)                                                \
    DEFINE_CONTIGUOUS(put, BITS##_nbi, void, BITS / 8, put)                                          \
    DEFINE_CONTIGUOUS(get, BITS##_nbi, void, BITS / 8, get_nbi)                                      \
    DEFINE_STRIDED(iput, BITS, void, BITS / 8, iput)                                                 \
    DEFINE_STRIDED(iget, BITS, void, BITS / 8, iget)
SHMEMI_SIZES_RMA(DEFINE_SIZED)

DEFINE_CONTIGUOUS(put, mem, void, 1, put)
DEFINE_CONTIGUOUS(get, mem, void, 1, get)
DEFINE_CONTIGUOUS(put, mem_nbi, void, 1, put)
DEFINE_CONTIGUOUS(get, mem_nbi, void, 1, get_nbi)
