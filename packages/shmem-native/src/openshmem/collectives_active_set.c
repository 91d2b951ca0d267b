/* The collectives over active sets that OpenSHMEM 1.5 deprecated: broadcast, collect,
 * fcollect, alltoall and alltoalls of 32- and 64-bit elements, and the reductions
 * shmem_<TYPE>_<OP>_to_all.  Each checks what only these calls have (the active set, pSync,
 * pWrk, a negative nreduce), then makes one call of the collectives engine over the set's team
 * (active_sets.c), whose exchange of records synchronises the PEs.  So pSync and pWrk are
 * checked but never written: pSync keeps the SHMEM_SYNC_VALUE words it came with, as the
 * specification asks of every call.  A PE whose pSync, pWrk or nreduce is bad still takes part
 * (the call is refused there), so that the call fails on every PE of the set instead of
 * leaving the others waiting for it. */
#include <stdint.h>

#include "base/error.h"
#include "openshmem/osh.h"

/* Their profiling names refer to them, which the deprecation would warn about. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define SET(PE_start, logPE_stride, PE_size) ((shmemi_osh_active_set_t){(PE_start), (logPE_stride), (PE_size)})

/* Runs c over set's team: this PE must be in set (else it cannot take part); a bad pSync (of
 * psync_longs longs) refuses the call on this PE, and so on every PE of the set. */
static void active_set_call(const char *api, shmemi_osh_active_set_t set, const long *psync, size_t psync_longs,
                            shmemi_coll_t *c)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || shmemi_osh_active_set_member(inst, &set, api) != ACLSHMEM_SUCCESS)
        return;
    shmemi_team_t *t = shmemi_osh_active_set_team(inst, &set, api);
    if (!t)
        return;
    if (c->refused == ACLSHMEM_SUCCESS)
        c->refused = shmemi_osh_work_array(inst, psync, psync_longs * sizeof(long), sizeof(long), "pSync", api);
    shmemi_osh_coll(api, inst, t, c);
}

/* ---- moving data: 32- and 64-bit elements ----------------------------------------------------- */

/* The active-set broadcast leaves the root's dest alone: there the engine gets source as dest
 * too, an in-place broadcast, which writes nothing on the root. */
static void broadcast(const char *api, shmemi_osh_active_set_t set, shmemi_dtype_t dt, void *dest, const void *source,
                      size_t nelems, int root, const long *psync)
{
    shmemi_instance_t *inst = shmemi_require(api);
    int root_pe_known = inst && root >= 0 && root < set.size && set.log_stride >= 0 && set.log_stride <= 30;
    int on_root = root_pe_known && inst->my_pe == (int64_t)set.start + ((int64_t)root << set.log_stride);
    shmemi_coll_t c = {.kind = SHMEMI_COLL_BROADCAST, .dtype = dt, .dst = on_root ? (void *)source : dest,
                       .src = source, .nelems = nelems, .root = root};
    active_set_call(api, set, psync, SHMEM_BCAST_SYNC_SIZE, &c);
}

#define DEFINE_GATHER_SIZED(BITS, WHAT, KIND, SYNC_SIZE)                                             \
    void shmem_##WHAT##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                            int PE_size, long *pSync)                                                \
    {                                                                                                \
        shmemi_coll_t c = {.kind = KIND, .dtype = SHMEMI_DT_uint##BITS, .dst = dest, .src = source,  \
                           .nelems = nelems};                                                        \
        active_set_call("shmem_" #WHAT #BITS, SET(PE_start, logPE_stride, PE_size), pSync, SYNC_SIZE, &c); \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##WHAT##BITS)

#define DEFINE_COLL_SIZED(BITS)                                                                      \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                               int logPE_stride, int PE_size, long *pSync)                           \
    {                                                                                                \
        broadcast("shmem_broadcast" #BITS, SET(PE_start, logPE_stride, PE_size), SHMEMI_DT_uint##BITS, \
                  dest, source, nelems, PE_root, pSync);                                             \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_broadcast##BITS)                                                           \
    DEFINE_GATHER_SIZED(BITS, collect, SHMEMI_COLL_COLLECT, SHMEM_COLLECT_SYNC_SIZE)                 \
    DEFINE_GATHER_SIZED(BITS, fcollect, SHMEMI_COLL_FCOLLECT, SHMEM_COLLECT_SYNC_SIZE)               \
    DEFINE_GATHER_SIZED(BITS, alltoall, SHMEMI_COLL_ALLTOALL, SHMEM_ALLTOALL_SYNC_SIZE)              \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)             \
    {                                                                                                \
        shmemi_coll_t c = {.kind = SHMEMI_COLL_ALLTOALLS, .dtype = SHMEMI_DT_uint##BITS, .dst = dest, \
                           .src = source, .nelems = nelems, .dst_stride = dst, .src_stride = sst};   \
        active_set_call("shmem_alltoalls" #BITS, SET(PE_start, logPE_stride, PE_size), pSync,        \
                        SHMEM_ALLTOALLS_SYNC_SIZE, &c);                                              \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_alltoalls##BITS)
SHMEMI_SIZES_COLL(DEFINE_COLL_SIZED)

/* ---- reductions --------------------------------------------------------------------------------- */

/* nreduce elements of esize bytes; pWrk is checked for being symmetric (its first element: it is
 * not used, so its length is not asked for), a negative nreduce refused. */
static void to_all(const char *api, shmemi_osh_active_set_t set, shmemi_dtype_t dt, shmemi_redop_t op, void *dest,
                   const void *source, int nreduce, const void *pwrk, size_t esize, const long *psync)
{
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_coll_t c = {.kind = SHMEMI_COLL_REDUCE, .dtype = dt, .op = op, .dst = dest, .src = source,
                       .nelems = nreduce < 0 ? 0 : (size_t)nreduce};
    if (nreduce < 0)
        c.refused = shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: nreduce %d is negative", api, nreduce);
    else if (inst)
        c.refused = shmemi_osh_work_array(inst, pwrk, esize, 1, "pWrk", api);
    active_set_call(api, set, psync, SHMEM_REDUCE_SYNC_SIZE, &c);
}

#define DEFINE_TO_ALL(NAME, TYPE, OP)                                                                \
    void shmem_##NAME##_##OP##_to_all(TYPE *dest, const TYPE *source, int nreduce, int PE_start,     \
                                      int logPE_stride, int PE_size, TYPE *pWrk, long *pSync)        \
    {                                                                                                \
        to_all("shmem_" #NAME "_" #OP "_to_all", SET(PE_start, logPE_stride, PE_size), SHMEMI_DT_##NAME, \
               SHMEMI_OP_##OP, dest, source, nreduce, pWrk, sizeof(TYPE), pSync);                    \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_##OP##_to_all)

/* One family per operation, over the tables shmem.h declares it with. */
#define TO_ALL_AND(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, and)
#define TO_ALL_OR(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, or)
#define TO_ALL_XOR(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, xor)
#define TO_ALL_MAX(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, max)
#define TO_ALL_MIN(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, min)
#define TO_ALL_SUM(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, sum)
#define TO_ALL_PROD(NAME, TYPE) DEFINE_TO_ALL(NAME, TYPE, prod)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_AND)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_OR)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_XOR)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_MAX)
SHMEMI_TYPES_TO_ALL_REAL(TO_ALL_MAX)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_MIN)
SHMEMI_TYPES_TO_ALL_REAL(TO_ALL_MIN)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_SUM)
SHMEMI_TYPES_TO_ALL_REAL(TO_ALL_SUM)
SHMEMI_TYPES_TO_ALL_INT(TO_ALL_PROD)
SHMEMI_TYPES_TO_ALL_REAL(TO_ALL_PROD)
SHMEMI_TYPES_REDUCE_COMPLEX(TO_ALL_SUM)
SHMEMI_TYPES_REDUCE_COMPLEX(TO_ALL_PROD)
