/* The team-based collectives of OpenSHMEM 1.5: broadcast, collect, fcollect, alltoall and
 * alltoalls (in bytes, and typed over SHMEMI_TYPES_RMA) and the reductions (over shmem.h's
 * reduction tables, one family per operation).  Each turns the team handle into its team,
 * then makes one call of the collectives engine (coll/), which checks the arguments, compares
 * the calls of the team's PEs and moves the data; errors name the shmem_* call.  They return
 * 0, or -1 (nonzero, as the specification asks) on failure. */
#include "coll/coll.h"
#include "openshmem/osh.h"
#include "platform/platform.h"

int shmemi_osh_coll(const char *api, shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_coll_t *c)
{
    shmemi_platform_order_host(inst);
    return shmemi_coll(api, t->index, c);
}

static int team_call(const char *api, shmem_team_t team, const shmemi_coll_t *c)
{
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_team_t *t = inst ? shmemi_osh_team(inst, team, api) : NULL;
    return t && shmemi_osh_coll(api, inst, t, c) == ACLSHMEM_SUCCESS ? 0 : -1;
}

/* A call of the engine over team with the fields given. */
#define TEAM_CALL(API, TEAM, ...) team_call((API), (TEAM), &(shmemi_coll_t){__VA_ARGS__})

/* ---- moving data ----------------------------------------------------------------------- */

/* FN, a broadcast of elements of TYPE (void: bytes) of the engine's type DT. */
#define DEFINE_BROADCAST(FN, TYPE, DT)                                                               \
    int FN(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, int PE_root)            \
    {                                                                                               \
        return TEAM_CALL(#FN, team, .kind = SHMEMI_COLL_BROADCAST, .dtype = DT, .dst = dest,        \
                         .src = source, .nelems = nelems, .root = PE_root);                         \
    }                                                                                               \
    SHMEMI_PROFILED(FN)

/* collect, fcollect and alltoall (KIND) share their shape: (team, dest, source, nelems). */
#define DEFINE_GATHER(FN, TYPE, DT, KIND)                                                            \
    int FN(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems)                        \
    {                                                                                               \
        return TEAM_CALL(#FN, team, .kind = KIND, .dtype = DT, .dst = dest, .src = source,          \
                         .nelems = nelems);                                                         \
    }                                                                                               \
    SHMEMI_PROFILED(FN)

#define DEFINE_ALLTOALLS(FN, TYPE, DT)                                                               \
    int FN(shmem_team_t team, TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems) \
    {                                                                                               \
        return TEAM_CALL(#FN, team, .kind = SHMEMI_COLL_ALLTOALLS, .dtype = DT, .dst = dest,        \
                         .src = source, .nelems = nelems, .dst_stride = dst, .src_stride = sst);    \
    }                                                                                               \
    SHMEMI_PROFILED(FN)

/* In bytes. */
DEFINE_BROADCAST(shmem_broadcastmem, void, SHMEMI_DT_uint8)
DEFINE_GATHER(shmem_collectmem, void, SHMEMI_DT_uint8, SHMEMI_COLL_COLLECT)
DEFINE_GATHER(shmem_fcollectmem, void, SHMEMI_DT_uint8, SHMEMI_COLL_FCOLLECT)
DEFINE_GATHER(shmem_alltoallmem, void, SHMEMI_DT_uint8, SHMEMI_COLL_ALLTOALL)
DEFINE_ALLTOALLS(shmem_alltoallsmem, void, SHMEMI_DT_uint8)

/* For elements of every type of SHMEMI_TYPES_RMA. */
#define DEFINE_MOVES_TYPED(NAME, TYPE)                                                               \
    DEFINE_BROADCAST(shmem_##NAME##_broadcast, TYPE, SHMEMI_DT_##NAME)                              \
    DEFINE_GATHER(shmem_##NAME##_collect, TYPE, SHMEMI_DT_##NAME, SHMEMI_COLL_COLLECT)              \
    DEFINE_GATHER(shmem_##NAME##_fcollect, TYPE, SHMEMI_DT_##NAME, SHMEMI_COLL_FCOLLECT)            \
    DEFINE_GATHER(shmem_##NAME##_alltoall, TYPE, SHMEMI_DT_##NAME, SHMEMI_COLL_ALLTOALL)            \
    DEFINE_ALLTOALLS(shmem_##NAME##_alltoalls, TYPE, SHMEMI_DT_##NAME)
SHMEMI_TYPES_RMA(DEFINE_MOVES_TYPED)

/* ---- reductions ------------------------------------------------------------------------- */

#define DEFINE_REDUCE(NAME, TYPE, OP)                                                                \
    int shmem_##NAME##_##OP##_reduce(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce) \
    {                                                                                               \
        return TEAM_CALL("shmem_" #NAME "_" #OP "_reduce", team, .kind = SHMEMI_COLL_REDUCE,        \
                         .dtype = SHMEMI_DT_##NAME, .op = SHMEMI_OP_##OP, .dst = dest, .src = source, \
                         .nelems = nreduce);                                                        \
    }                                                                                               \
    SHMEMI_PROFILED(shmem_##NAME##_##OP##_reduce)

/* One family per operation, over the tables shmem.h declares it with. */
#define REDUCE_AND(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, and)
#define REDUCE_OR(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, or)
#define REDUCE_XOR(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, xor)
#define REDUCE_MAX(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, max)
#define REDUCE_MIN(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, min)
#define REDUCE_SUM(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, sum)
#define REDUCE_PROD(NAME, TYPE) DEFINE_REDUCE(NAME, TYPE, prod)
SHMEMI_TYPES_REDUCE_BITWISE(REDUCE_AND)
SHMEMI_TYPES_REDUCE_BITWISE(REDUCE_OR)
SHMEMI_TYPES_REDUCE_BITWISE(REDUCE_XOR)
SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_MAX)
SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_MIN)
SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_SUM)
SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_PROD)
SHMEMI_TYPES_REDUCE_COMPLEX(REDUCE_SUM)
SHMEMI_TYPES_REDUCE_COMPLEX(REDUCE_PROD)
