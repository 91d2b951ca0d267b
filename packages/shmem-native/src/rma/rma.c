/* put / get in all their public shapes: untyped, typed (ACLSHMEM_RMA_TYPES), sized
 * (ACLSHMEM_RMA_SIZES), strided and non-blocking.  A blocking put returns when its source
 * may be reused (shm: the data is in place; UCX: the data left), so put_nbi shares the
 * blocking path; get_nbi starts the get and returns (shm: a copy, done at once; UCX: the
 * request is on its way and lands in dest by the next quiet).  Quiet completes everything
 * at every PE (shm: a fence; UCX: a flush, and the get_nbi's replies). */
#include "rma/rma.h"

#include <stdint.h>

#include "aclshmem/mem.h"
#include "aclshmem/rma.h"
#include "base/error.h"
#include "mem/heap.h"
#include "prof/prof.h"
#include "transport/transport.h"

int shmemi_rma_resolve(shmemi_instance_t *inst, const void *sym, size_t len, int pe, const char *api,
                       int *seg, size_t *offset)
{
    if (pe < 0 || pe >= inst->n_pes)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in 0..%d", api, pe, inst->n_pes - 1);
    if (!sym)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the symmetric address is NULL", api);
    *seg = shmemi_heap_locate(&inst->heaps, sym, len, offset);
    if (*seg < 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: [%p, +%zu bytes) is not inside a symmetric heap of this PE", api, sym, len);
    return ACLSHMEM_SUCCESS;
}

static int byte_count(size_t nelems, size_t elem_size, size_t *bytes, const char *api)
{
    if (elem_size && nelems > SIZE_MAX / elem_size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %zu elements of %zu bytes overflow size_t", api,
                           nelems, elem_size);
    *bytes = nelems * elem_size;
    return ACLSHMEM_SUCCESS;
}

/* Shared checks of put and get; *inst_out is NULL when there is nothing to do. */
static int prepare(const char *api, const void *sym, const void *local, size_t nelems, size_t elem_size, int pe,
                   shmemi_instance_t **inst_out, int *seg, size_t *offset, size_t *bytes)
{
    *inst_out = NULL;
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    SHMEMI_TRY(byte_count(nelems, elem_size, bytes, api));
    if (*bytes == 0)
        return ACLSHMEM_SUCCESS;
    if (!local)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the local address is NULL", api);
    SHMEMI_TRY(shmemi_rma_resolve(inst, sym, *bytes, pe, api, seg, offset));
    *inst_out = inst;
    return ACLSHMEM_SUCCESS;
}

int shmemi_rma_put_resolved(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                            const void *src, size_t bytes)
{
    uint64_t start = shmemi_prof_begin(inst);
    const shmemi_transport_ops_t *t = inst->transport[pe];
    SHMEMI_TRY(t->put(inst, ch, pe, seg, offset, src, bytes));
    t->notify(inst, pe);
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_PUT, start);
    return ACLSHMEM_SUCCESS;
}

/* A get (nbi: started, complete at the channel's next quiet), profiled. */
static int get_resolved(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                        size_t bytes, int nbi)
{
    uint64_t start = shmemi_prof_begin(inst);
    const shmemi_transport_ops_t *t = inst->transport[pe];
    int rc = nbi ? t->get_nbi(inst, ch, pe, seg, offset, dst, bytes, NULL)
                 : t->get(inst, ch, pe, seg, offset, dst, bytes);
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_GET, start);
    return rc;
}

int shmemi_rma_get_resolved(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                            void *dst, size_t bytes)
{
    return get_resolved(inst, ch, pe, seg, offset, dst, bytes, 0);
}

/* get and get_nbi: the checks, then the transfer. */
static int get_checked(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                       size_t elem_size, int pe, int nbi)
{
    shmemi_instance_t *inst;
    int seg = 0; /* set by the resolve; 0 keeps -Wmaybe-uninitialized quiet on paths that return first */
    size_t offset = 0, bytes = 0;
    SHMEMI_TRY(prepare(api, src, dst, nelems, elem_size, pe, &inst, &seg, &offset, &bytes));
    return inst ? get_resolved(inst, ch, pe, seg, offset, dst, bytes, nbi) : ACLSHMEM_SUCCESS;
}

int shmemi_rma_get_nbi(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                       size_t elem_size, int pe)
{
    return get_checked(api, ch, dst, src, nelems, elem_size, pe, 1);
}

int shmemi_rma_put(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                   size_t elem_size, int pe)
{
    shmemi_instance_t *inst;
    int seg = 0; /* set by the resolve; 0 keeps -Wmaybe-uninitialized quiet on paths that return first */
    size_t offset = 0, bytes = 0;
    SHMEMI_TRY(prepare(api, dst, src, nelems, elem_size, pe, &inst, &seg, &offset, &bytes));
    return inst ? shmemi_rma_put_resolved(inst, ch, pe, seg, offset, src, bytes) : ACLSHMEM_SUCCESS;
}

int shmemi_rma_get(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                   size_t elem_size, int pe)
{
    return get_checked(api, ch, dst, src, nelems, elem_size, pe, 0);
}

/* The symmetric side spans from its first to its last element. */
static int strided_span(size_t nelems, size_t elem_size, ptrdiff_t stride, size_t *span, const char *api)
{
    if (stride <= 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: stride %td must be positive", api, stride);
    if (nelems == 0) {
        *span = 0;
        return ACLSHMEM_SUCCESS;
    }
    size_t steps = 0;
    SHMEMI_TRY(byte_count(nelems - 1, (size_t)stride, &steps, api));
    return byte_count(steps + 1, elem_size, span, api);
}

static int strided(const char *api, shmemi_channel_t *ch, int is_put, void *dst, const void *src,
                   ptrdiff_t dst_stride, ptrdiff_t src_stride, size_t nelems, size_t elem_size, int pe)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    size_t dst_span = 0, src_span = 0; /* set by strided_span, which returns an error otherwise */
    SHMEMI_TRY(strided_span(nelems, elem_size, dst_stride, &dst_span, api));
    SHMEMI_TRY(strided_span(nelems, elem_size, src_stride, &src_span, api));
    if (nelems == 0)
        return ACLSHMEM_SUCCESS;
    if (!dst || !src)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: dest or source is NULL", api);
    int seg = 0; /* set by the resolve; 0 keeps -Wmaybe-uninitialized quiet on paths that return first */
    size_t offset;
    const void *sym = is_put ? dst : src;
    SHMEMI_TRY(shmemi_rma_resolve(inst, sym, is_put ? dst_span : src_span, pe, api, &seg, &offset));
    uint64_t start = shmemi_prof_begin(inst);
    const shmemi_transport_ops_t *t = inst->transport[pe];
    for (size_t i = 0; i < nelems; i++) {
        size_t d = i * (size_t)dst_stride * elem_size, s = i * (size_t)src_stride * elem_size;
        if (is_put)
            SHMEMI_TRY(t->put(inst, ch, pe, seg, offset + d, (const uint8_t *)src + s, elem_size));
        else
            SHMEMI_TRY(t->get(inst, ch, pe, seg, offset + s, (uint8_t *)dst + d, elem_size));
    }
    if (is_put)
        t->notify(inst, pe);
    shmemi_prof_end_frame(inst, is_put ? SHMEMI_FRAME_PUT : SHMEMI_FRAME_GET, start);
    return ACLSHMEM_SUCCESS;
}

int shmemi_rma_iput(const char *api, shmemi_channel_t *ch, void *dst, const void *src, ptrdiff_t dst_stride,
                    ptrdiff_t src_stride, size_t nelems, size_t elem_size, int pe)
{
    return strided(api, ch, 1, dst, src, dst_stride, src_stride, nelems, elem_size, pe);
}

int shmemi_rma_iget(const char *api, shmemi_channel_t *ch, void *dst, const void *src, ptrdiff_t dst_stride,
                    ptrdiff_t src_stride, size_t nelems, size_t elem_size, int pe)
{
    return strided(api, ch, 0, dst, src, dst_stride, src_stride, nelems, elem_size, pe);
}

int shmemi_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    uint64_t start = shmemi_prof_begin(inst);
    SHMEMI_TRY(shmemi_transport_quiet(inst, ch));
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_QUIET, start);
    return ACLSHMEM_SUCCESS;
}

int shmemi_fence(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    uint64_t start = shmemi_prof_begin(inst);
    SHMEMI_TRY(shmemi_transport_fence(inst, ch));
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_QUIET, start); /* the frame of quiet and fence */
    return ACLSHMEM_SUCCESS;
}

/* ---- public API ------------------------------------------------------- */

void aclshmem_putmem(void *dst, const void *src, size_t elem_size, int32_t pe)
{
    shmemi_rma_put("aclshmem_putmem", NULL, dst, src, elem_size, 1, pe);
}

void aclshmem_getmem(void *dst, const void *src, size_t elem_size, int32_t pe)
{
    shmemi_rma_get("aclshmem_getmem", NULL, dst, src, elem_size, 1, pe);
}

void aclshmem_putmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe)
{
    shmemi_rma_put("aclshmem_putmem_nbi", NULL, dst, src, elem_size, 1, pe);
}

void aclshmem_getmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe)
{
    shmemi_rma_get_nbi("aclshmem_getmem_nbi", NULL, dst, src, elem_size, 1, pe);
}

#define DEFINE_TYPED_RMA(NAME, TYPE)                                                                 \
    void aclshmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe)                \
    {                                                                                                \
        shmemi_rma_put("aclshmem_" #NAME "_put", NULL, dest, source, nelems, sizeof(TYPE), pe);      \
    }                                                                                                \
    void aclshmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe)                \
    {                                                                                                \
        shmemi_rma_get("aclshmem_" #NAME "_get", NULL, dest, source, nelems, sizeof(TYPE), pe);      \
    }                                                                                                \
    void aclshmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe)            \
    {                                                                                                \
        shmemi_rma_put("aclshmem_" #NAME "_put_nbi", NULL, dest, source, nelems, sizeof(TYPE), pe);  \
    }                                                                                                \
    void aclshmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe)            \
    {                                                                                                \
        shmemi_rma_get_nbi("aclshmem_" #NAME "_get_nbi", NULL, dest, source, nelems, sizeof(TYPE), pe); \
    }                                                                                                \
    void aclshmem_##NAME##_p(TYPE *dst, const TYPE value, int pe)                                    \
    {                                                                                                \
        shmemi_rma_put("aclshmem_" #NAME "_p", NULL, dst, &value, 1, sizeof(TYPE), pe);              \
    }                                                                                                \
    TYPE aclshmem_##NAME##_g(const TYPE *src, int32_t pe)                                            \
    {                                                                                                \
        TYPE value = 0;                                                                              \
        shmemi_rma_get("aclshmem_" #NAME "_g", NULL, &value, src, 1, sizeof(TYPE), pe);              \
        return value;                                                                                \
    }                                                                                                \
    void aclshmem_##NAME##_iput(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                size_t nelems, int pe)                                               \
    {                                                                                                \
        shmemi_rma_iput("aclshmem_" #NAME "_iput", NULL, dest, source, dst, sst, nelems, sizeof(TYPE), \
                        pe);                                                                         \
    }                                                                                                \
    void aclshmem_##NAME##_iget(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                size_t nelems, int pe)                                               \
    {                                                                                                \
        shmemi_rma_iget("aclshmem_" #NAME "_iget", NULL, dest, source, dst, sst, nelems, sizeof(TYPE), \
                        pe);                                                                         \
    }
ACLSHMEM_RMA_TYPES(DEFINE_TYPED_RMA)

#define DEFINE_SIZED_RMA(BITS)                                                                       \
    void aclshmem_put##BITS(void *dst, const void *src, uint32_t elem_size, int32_t pe)              \
    {                                                                                                \
        shmemi_rma_put("aclshmem_put" #BITS, NULL, dst, src, elem_size, BITS / 8, pe);               \
    }                                                                                                \
    void aclshmem_get##BITS(void *dst, const void *src, uint32_t elem_size, int32_t pe)              \
    {                                                                                                \
        shmemi_rma_get("aclshmem_get" #BITS, NULL, dst, src, elem_size, BITS / 8, pe);               \
    }                                                                                                \
    void aclshmem_put##BITS##_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe)        \
    {                                                                                                \
        shmemi_rma_put("aclshmem_put" #BITS "_nbi", NULL, dst, src, elem_size, BITS / 8, pe);        \
    }                                                                                                \
    void aclshmem_get##BITS##_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe)        \
    {                                                                                                \
        shmemi_rma_get_nbi("aclshmem_get" #BITS "_nbi", NULL, dst, src, elem_size, BITS / 8, pe);    \
    }                                                                                                \
    void aclshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                             size_t nelems, int pe)                                                  \
    {                                                                                                \
        shmemi_rma_iput("aclshmem_iput" #BITS, NULL, dest, source, dst, sst, nelems, BITS / 8, pe);  \
    }                                                                                                \
    void aclshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                             size_t nelems, int pe)                                                  \
    {                                                                                                \
        shmemi_rma_iget("aclshmem_iget" #BITS, NULL, dest, source, dst, sst, nelems, BITS / 8, pe);  \
    }
ACLSHMEM_RMA_SIZES(DEFINE_SIZED_RMA)

void aclshmem_quiet(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_quiet");
    if (inst)
        shmemi_quiet(inst, NULL);
}

void aclshmem_fence(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_fence");
    if (inst)
        shmemi_fence(inst, NULL);
}

void *shmemi_rma_ptr(const char *api, const void *ptr, int pe)
{
    shmemi_instance_t *inst = shmemi_require(api);
    int seg = 0; /* set by the resolve; 0 keeps -Wmaybe-uninitialized quiet on paths that return first */
    size_t offset;
    if (!inst || shmemi_rma_resolve(inst, ptr, 1, pe, api, &seg, &offset) != ACLSHMEM_SUCCESS)
        return NULL;
    return inst->transport[pe]->ptr(inst, pe, seg, offset);
}
