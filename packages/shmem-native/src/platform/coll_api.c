/* The host entry points of aclshmem/coll.h: each names itself and its element type, then
 * runs the engine (coll/) after the work enqueued on the default stream so far, as the host
 * barrier does (in a kernel: at once).  That order is the platform's business, so they live
 * here, above the engine.  The typed families come from the type tables of
 * aclshmem/types.h; the on-stream forms are in coll_stream.c. */
#include "aclshmem/coll.h"

#include "coll/coll.h"
#include "base/error.h"
#include "platform/platform.h"

static int host_call(const char *api, aclshmem_team_t team, const shmemi_coll_t *call)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    shmemi_platform_order_host(inst);
    return shmemi_coll(api, team, call);
}

/* A call of the engine on dest and source with the fields given. */
#define COLL_CALL(API, TEAM, ...) host_call((API), (TEAM), &(shmemi_coll_t){__VA_ARGS__})

int aclshmemx_team_exchange(aclshmem_team_t team, const void *mine, size_t size, void *all)
{
    return COLL_CALL("aclshmemx_team_exchange", team, .kind = SHMEMI_COLL_EXCHANGE, .dtype = SHMEMI_DT_uint8,
                     .dst = all, .src = mine, .nelems = size);
}

/* ---- moving data ----------------------------------------------------------- */

static int broadcast(const char *api, aclshmem_team_t team, shmemi_dtype_t dt, void *dest, const void *source,
                     size_t nelems, int root)
{
    return COLL_CALL(api, team, .kind = SHMEMI_COLL_BROADCAST, .dtype = dt, .dst = dest, .src = source,
                     .nelems = nelems, .root = root);
}

static int gather(const char *api, shmemi_coll_kind_t kind, aclshmem_team_t team, shmemi_dtype_t dt, void *dest,
                  const void *source, size_t nelems)
{
    return COLL_CALL(api, team, .kind = kind, .dtype = dt, .dst = dest, .src = source, .nelems = nelems);
}

static int alltoalls(const char *api, aclshmem_team_t team, shmemi_dtype_t dt, void *dest, const void *source,
                     ptrdiff_t dst, ptrdiff_t sst, size_t nelems)
{
    return COLL_CALL(api, team, .kind = SHMEMI_COLL_ALLTOALLS, .dtype = dt, .dst = dest, .src = source,
                     .nelems = nelems, .dst_stride = dst, .src_stride = sst);
}

int aclshmem_broadcastmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems, int pe_root)
{
    return broadcast("aclshmem_broadcastmem", team, SHMEMI_DT_uint8, dest, source, nelems, pe_root);
}

int aclshmem_collectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return gather("aclshmem_collectmem", SHMEMI_COLL_COLLECT, team, SHMEMI_DT_uint8, dest, source, nelems);
}

int aclshmem_fcollectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return gather("aclshmem_fcollectmem", SHMEMI_COLL_FCOLLECT, team, SHMEMI_DT_uint8, dest, source, nelems);
}

int aclshmem_alltoallmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return gather("aclshmem_alltoallmem", SHMEMI_COLL_ALLTOALL, team, SHMEMI_DT_uint8, dest, source, nelems);
}

int aclshmem_alltoallsmem(aclshmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                          size_t nelems)
{
    return alltoalls("aclshmem_alltoallsmem", team, SHMEMI_DT_uint8, dest, source, dst, sst, nelems);
}

/* collect, fcollect and alltoall share their shape: (team, dest, source, nelems). */
#define DEFINE_GATHER(NAME, TYPE, WHAT, KIND)                                                      \
    int aclshmem_##NAME##_##WHAT(aclshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) \
    {                                                                                              \
        return gather("aclshmem_" #NAME "_" #WHAT, KIND, team, SHMEMI_DT_##NAME, dest, source, nelems); \
    }

#define DEFINE_COLL(NAME, TYPE)                                                                    \
    int aclshmem_##NAME##_broadcast(aclshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, \
                                    int pe_root)                                                   \
    {                                                                                              \
        return broadcast("aclshmem_" #NAME "_broadcast", team, SHMEMI_DT_##NAME, dest, source, nelems, \
                         pe_root);                                                                 \
    }                                                                                              \
    DEFINE_GATHER(NAME, TYPE, collect, SHMEMI_COLL_COLLECT)                                        \
    DEFINE_GATHER(NAME, TYPE, fcollect, SHMEMI_COLL_FCOLLECT)                                      \
    DEFINE_GATHER(NAME, TYPE, alltoall, SHMEMI_COLL_ALLTOALL)                                      \
    int aclshmem_##NAME##_alltoalls(aclshmem_team_t team, TYPE *dest, const TYPE *source, ptrdiff_t dst, \
                                    ptrdiff_t sst, size_t nelems)                                  \
    {                                                                                              \
        return alltoalls("aclshmem_" #NAME "_alltoalls", team, SHMEMI_DT_##NAME, dest, source, dst, sst, \
                         nelems);                                                                  \
    }
ACLSHMEM_COLL_TYPES(DEFINE_COLL)

/* ---- reductions ------------------------------------------------------------ */

static int reduce(const char *api, shmemi_coll_kind_t kind, aclshmem_team_t team, shmemi_dtype_t dt,
                  shmemi_redop_t op, void *dest, const void *source, size_t nreduce)
{
    return COLL_CALL(api, team, .kind = kind, .dtype = dt, .op = op, .dst = dest, .src = source,
                     .nelems = nreduce);
}

#define DEFINE_REDUCE(NAME, TYPE, OP)                                                              \
    int aclshmem_##NAME##_##OP##_reduce(aclshmem_team_t team, TYPE *dest, const TYPE *source,     \
                                        size_t nreduce)                                            \
    {                                                                                              \
        return reduce("aclshmem_" #NAME "_" #OP "_reduce", SHMEMI_COLL_REDUCE, team, SHMEMI_DT_##NAME, \
                      SHMEMI_OP_##OP, dest, source, nreduce);                                      \
    }                                                                                              \
    int aclshmem_##NAME##_##OP##_reducescatter(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                               size_t nreduce)                                     \
    {                                                                                              \
        return reduce("aclshmem_" #NAME "_" #OP "_reducescatter", SHMEMI_COLL_REDUCESCATTER, team, \
                      SHMEMI_DT_##NAME, SHMEMI_OP_##OP, dest, source, nreduce);                    \
    }
#define SHMEMI_REDUCE_ENTRY DEFINE_REDUCE
SHMEMI_REDUCE_FAMILIES
#undef SHMEMI_REDUCE_ENTRY

int aclshmemx_reduce_local(aclshmem_team_t team, void *dest, const void *source, void *work, size_t nreduce,
                           aclshmemx_type_t dtype, aclshmemx_reduce_op_t op)
{
    static const char api[] = "aclshmemx_reduce_local";
    int dt = shmemi_dtype_of_public((int)dtype), redop = shmemi_redop_of_public((int)op);
    /* A bad type or operation is this PE's own error: it still takes part (refused), so that
     * the team's other PEs fail instead of waiting for it. */
    int refused = ACLSHMEM_SUCCESS;
    if (dt < 0)
        refused = shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: unknown type %d (an aclshmemx_type_t)", api, (int)dtype);
    else if (redop < 0)
        refused = shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: unknown operation %d (an aclshmemx_reduce_op_t)", api,
                              (int)op);
    return COLL_CALL(api, team, .kind = SHMEMI_COLL_REDUCE_LOCAL, .dtype = dt < 0 ? SHMEMI_DT_uint8 : dt,
                     .op = redop < 0 ? SHMEMI_OP_sum : redop, .dst = dest, .src = source, .work = work,
                     .nelems = nreduce, .refused = refused);
}

int aclshmemx_broadcastmem_local(aclshmem_team_t team, void *dest, const void *source, void *work, size_t nelems,
                                 int pe_root)
{
    return COLL_CALL("aclshmemx_broadcastmem_local", team, .kind = SHMEMI_COLL_BROADCAST_LOCAL,
                     .dtype = SHMEMI_DT_uint8, .dst = dest, .src = source, .work = work, .nelems = nelems,
                     .root = pe_root);
}
