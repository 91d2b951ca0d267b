/* The collectives of aclshmem/coll.h in stream order: each call checks its arguments now,
 * then enqueues a one-block library kernel that runs the collective (the engine, coll/)
 * when the stream reaches it.
 *
 * Unlike the other on-stream operations (stream_ops.c), a call whose own arguments are bad
 * still enqueues its collective: the team's other PEs enqueued theirs and would wait for
 * this PE forever.  Run, it fails on every PE, as the host call does; the call returns its
 * error at once too.  Only a call that cannot take part at all (no such stream or team)
 * enqueues nothing. */
#include "aclshmem/coll.h"
#include "coll/coll.h"
#include "base/error.h"
#include "platform/platform.h"
#include "team/team.h"

typedef struct {
    const char *api;
    aclshmem_team_t team;
    shmemi_coll_t call;
} coll_task_t;

static void coll_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    coll_task_t *task = arg;
    shmemi_coll(task->api, task->team, &task->call);
}

static int enqueue(const char *api, aclshmem_team_t team, aclrtStream stream, const shmemi_coll_t *call)
{
    shmemi_instance_t *inst = shmemi_platform_stream_instance(api, stream);
    if (!inst)
        return ACLSHMEM_INVALID_PARAM;
    shmemi_team_t *t = shmemi_team_get(inst, team);
    if (!t)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %d does not exist (never created or destroyed)", api,
                           team);
    int checked = shmemi_coll_check(api, inst, t, call);
    coll_task_t task = {.api = api, .team = team, .call = *call};
    int launched = shmemi_platform_launch(api, stream, coll_kernel, 1, &task, sizeof(task));
    return checked != ACLSHMEM_SUCCESS ? checked : launched;
}

#define ENQUEUE(API, TEAM, STREAM, ...) enqueue((API), (TEAM), (STREAM), &(shmemi_coll_t){__VA_ARGS__})

/* ---- moving data ----------------------------------------------------------- */

static int broadcast(const char *api, aclshmem_team_t team, shmemi_dtype_t dt, void *dest, const void *source,
                     size_t nelems, int root, aclrtStream stream)
{
    return ENQUEUE(api, team, stream, .kind = SHMEMI_COLL_BROADCAST, .dtype = dt, .dst = dest, .src = source,
                   .nelems = nelems, .root = root);
}

static int gather(const char *api, shmemi_coll_kind_t kind, aclshmem_team_t team, shmemi_dtype_t dt, void *dest,
                  const void *source, size_t nelems, aclrtStream stream)
{
    return ENQUEUE(api, team, stream, .kind = kind, .dtype = dt, .dst = dest, .src = source, .nelems = nelems);
}

static int alltoalls(const char *api, aclshmem_team_t team, shmemi_dtype_t dt, void *dest, const void *source,
                     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, aclrtStream stream)
{
    return ENQUEUE(api, team, stream, .kind = SHMEMI_COLL_ALLTOALLS, .dtype = dt, .dst = dest, .src = source,
                   .nelems = nelems, .dst_stride = dst, .src_stride = sst);
}

int aclshmemx_broadcastmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems,
                                     int pe_root, aclrtStream stream)
{
    return broadcast("aclshmemx_broadcastmem_on_stream", team, SHMEMI_DT_uint8, dest, source, nelems, pe_root,
                     stream);
}

int aclshmemx_collectmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems,
                                   aclrtStream stream)
{
    return gather("aclshmemx_collectmem_on_stream", SHMEMI_COLL_COLLECT, team, SHMEMI_DT_uint8, dest, source,
                  nelems, stream);
}

int aclshmemx_fcollectmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems,
                                    aclrtStream stream)
{
    return gather("aclshmemx_fcollectmem_on_stream", SHMEMI_COLL_FCOLLECT, team, SHMEMI_DT_uint8, dest, source,
                  nelems, stream);
}

int aclshmemx_alltoallmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems,
                                    aclrtStream stream)
{
    return gather("aclshmemx_alltoallmem_on_stream", SHMEMI_COLL_ALLTOALL, team, SHMEMI_DT_uint8, dest, source,
                  nelems, stream);
}

int aclshmemx_alltoallsmem_on_stream(aclshmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                                     ptrdiff_t sst, size_t nelems, aclrtStream stream)
{
    return alltoalls("aclshmemx_alltoallsmem_on_stream", team, SHMEMI_DT_uint8, dest, source, dst, sst, nelems,
                     stream);
}

/* collect, fcollect and alltoall share their shape: (team, dest, source, nelems, stream). */
#define DEFINE_GATHER_ON_STREAM(NAME, TYPE, WHAT, KIND)                                            \
    int aclshmemx_##NAME##_##WHAT##_on_stream(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                              size_t nelems, aclrtStream stream)                   \
    {                                                                                              \
        return gather("aclshmemx_" #NAME "_" #WHAT "_on_stream", KIND, team, SHMEMI_DT_##NAME, dest, source, \
                      nelems, stream);                                                             \
    }

#define DEFINE_COLL_ON_STREAM(NAME, TYPE)                                                          \
    int aclshmemx_##NAME##_broadcast_on_stream(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                               size_t nelems, int pe_root, aclrtStream stream)     \
    {                                                                                              \
        return broadcast("aclshmemx_" #NAME "_broadcast_on_stream", team, SHMEMI_DT_##NAME, dest, source, \
                         nelems, pe_root, stream);                                                 \
    }                                                                                              \
    DEFINE_GATHER_ON_STREAM(NAME, TYPE, collect, SHMEMI_COLL_COLLECT)                              \
    DEFINE_GATHER_ON_STREAM(NAME, TYPE, fcollect, SHMEMI_COLL_FCOLLECT)                            \
    DEFINE_GATHER_ON_STREAM(NAME, TYPE, alltoall, SHMEMI_COLL_ALLTOALL)                            \
    int aclshmemx_##NAME##_alltoalls_on_stream(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                               ptrdiff_t dst, ptrdiff_t sst, size_t nelems,        \
                                               aclrtStream stream)                                 \
    {                                                                                              \
        return alltoalls("aclshmemx_" #NAME "_alltoalls_on_stream", team, SHMEMI_DT_##NAME, dest, source, dst, \
                         sst, nelems, stream);                                                     \
    }
ACLSHMEM_COLL_TYPES(DEFINE_COLL_ON_STREAM)

/* ---- reductions ------------------------------------------------------------ */

static int reduce(const char *api, shmemi_coll_kind_t kind, aclshmem_team_t team, shmemi_dtype_t dt,
                  shmemi_redop_t op, void *dest, const void *source, size_t nreduce, aclrtStream stream)
{
    return ENQUEUE(api, team, stream, .kind = kind, .dtype = dt, .op = op, .dst = dest, .src = source,
                   .nelems = nreduce);
}

#define DEFINE_REDUCE_ON_STREAM(NAME, TYPE, OP)                                                    \
    int aclshmemx_##NAME##_##OP##_reduce_on_stream(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                   size_t nreduce, aclrtStream stream)             \
    {                                                                                              \
        return reduce("aclshmemx_" #NAME "_" #OP "_reduce_on_stream", SHMEMI_COLL_REDUCE, team,     \
                      SHMEMI_DT_##NAME, SHMEMI_OP_##OP, dest, source, nreduce, stream);            \
    }                                                                                              \
    int aclshmemx_##NAME##_##OP##_reducescatter_on_stream(aclshmem_team_t team, TYPE *dest,        \
                                                          const TYPE *source, size_t nreduce,      \
                                                          aclrtStream stream)                      \
    {                                                                                              \
        return reduce("aclshmemx_" #NAME "_" #OP "_reducescatter_on_stream", SHMEMI_COLL_REDUCESCATTER, \
                      team, SHMEMI_DT_##NAME, SHMEMI_OP_##OP, dest, source, nreduce, stream);      \
    }
#define SHMEMI_REDUCE_ENTRY DEFINE_REDUCE_ON_STREAM
SHMEMI_REDUCE_FAMILIES
#undef SHMEMI_REDUCE_ENTRY
