/* aclshmem/coll.h - collectives over a team.
 *
 * Broadcast, collect, fcollect, alltoall, alltoalls, reduce, reduce-scatter, and the
 * exchange of a small record.  Every PE of the team makes the same call (same operation,
 * element type, counts, root and strides; collect's counts may differ), in the same order
 * as its other collectives on that team.  dest and source are symmetric (in a heap, or in
 * the program's shared data) on every PE; each PE may pass its own addresses.  A call
 * returns ACLSHMEM_SUCCESS when its own dest holds the result and its source may be changed
 * again.  A call that does not match the others' (another operation, type, count, root or
 * stride, or a bad argument on any PE) fails on every PE with ACLSHMEM_INVALID_PARAM and a
 * last error that names a PE that differs; nothing is written then.  Inside a kernel, one
 * block of each PE makes the call.
 *
 * Counts are in elements (bytes for the *mem forms).  Overlap of dest and source is an
 * error except where a call says otherwise.  The aclshmemx_*_on_stream forms check their
 * arguments at the call (and return the error), then run the collective when the stream
 * reaches it; a call that failed its checks still takes its place in the stream, so that the
 * team's other PEs fail instead of waiting for it.  Errors of the collective itself become
 * the stream's error (aclshmemx_stream_synchronize).
 *
 * On one node the PEs read each other's memory directly; PEs on other nodes are reached
 * with get and put of the inter-node transport.  Across nodes, broadcast, collect, fcollect
 * and reduce of 64 KiB or more go node by node: each byte crosses the network once per
 * node (reduce: when every node holds as many of the team's PEs, and for types other than
 * half and bfloat16), not once per PE.
 */
#ifndef ACLSHMEM_COLL_H
#define ACLSHMEM_COLL_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most bytes one PE contributes to aclshmemx_team_exchange. */
#define ACLSHMEMX_TEAM_EXCHANGE_MAX 128

/** Collective: every PE of team contributes size bytes (at most ACLSHMEMX_TEAM_EXCHANGE_MAX)
 *  from mine; all (size * team size bytes) gets every member's bytes in team order.  Both
 *  buffers are local memory.  What a PE needs to agree with its peers on before it acts
 *  (a vote, a fingerprint of the next call): PEs that pass different sizes fail. */
ACLSHMEM_HOST_API int aclshmemx_team_exchange(aclshmem_team_t team, const void *mine, size_t size, void *all);

/* ---- moving data --------------------------------------------------------- */

/* broadcastmem: nelems bytes of source on the team's PE pe_root to dest on every PE (the
 * root's too; dest may be source).  collectmem: each PE's nelems bytes (the counts may
 * differ) to every PE's dest, one after the other in team order.  fcollectmem: the same
 * with one count; source may be dest + my_pe * nelems (in place).  alltoallmem: block j
 * (nelems bytes) of source on PE i goes to block i of dest on PE j.  alltoallsmem: the same
 * for single bytes, element k of a block at index k * sst of source and k * dst of dest
 * (strides >= 1, in elements). */
ACLSHMEM_HOST_API int aclshmem_broadcastmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems,
                                            int pe_root);
ACLSHMEM_HOST_API int aclshmem_collectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
ACLSHMEM_HOST_API int aclshmem_fcollectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
ACLSHMEM_HOST_API int aclshmem_alltoallmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
ACLSHMEM_HOST_API int aclshmem_alltoallsmem(aclshmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                                            ptrdiff_t sst, size_t nelems);

/* The same in stream order: checked now, run when stream (NULL: the default stream)
 * reaches it. */
ACLSHMEM_HOST_API int aclshmemx_broadcastmem_on_stream(aclshmem_team_t team, void *dest, const void *source,
                                                       size_t nelems, int pe_root, aclrtStream stream);
ACLSHMEM_HOST_API int aclshmemx_collectmem_on_stream(aclshmem_team_t team, void *dest, const void *source,
                                                     size_t nelems, aclrtStream stream);
ACLSHMEM_HOST_API int aclshmemx_fcollectmem_on_stream(aclshmem_team_t team, void *dest, const void *source,
                                                      size_t nelems, aclrtStream stream);
ACLSHMEM_HOST_API int aclshmemx_alltoallmem_on_stream(aclshmem_team_t team, void *dest, const void *source,
                                                      size_t nelems, aclrtStream stream);
ACLSHMEM_HOST_API int aclshmemx_alltoallsmem_on_stream(aclshmem_team_t team, void *dest, const void *source,
                                                       ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                                       aclrtStream stream);

/* The *mem calls for elements of every T of ACLSHMEM_COLL_TYPES (counts in elements). */
#define ACLSHMEMI_DECLARE_COLL(NAME, TYPE)                                                      \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_broadcast(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                      size_t nelems, int pe_root);              \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_collect(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                    size_t nelems);                             \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_fcollect(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                     size_t nelems);                            \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_alltoall(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                     size_t nelems);                            \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_alltoalls(aclshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems); \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_broadcast_on_stream(aclshmem_team_t team, TYPE *dest,      \
                                                                 const TYPE *source, size_t nelems,     \
                                                                 int pe_root, aclrtStream stream);      \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_collect_on_stream(aclshmem_team_t team, TYPE *dest,        \
                                                               const TYPE *source, size_t nelems,       \
                                                               aclrtStream stream);                     \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_fcollect_on_stream(aclshmem_team_t team, TYPE *dest,       \
                                                                const TYPE *source, size_t nelems,      \
                                                                aclrtStream stream);                    \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_alltoall_on_stream(aclshmem_team_t team, TYPE *dest,       \
                                                                const TYPE *source, size_t nelems,      \
                                                                aclrtStream stream);                    \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_alltoalls_on_stream(aclshmem_team_t team, TYPE *dest,      \
                                                                 const TYPE *source, ptrdiff_t dst,     \
                                                                 ptrdiff_t sst, size_t nelems,          \
                                                                 aclrtStream stream);
ACLSHMEM_COLL_TYPES(ACLSHMEMI_DECLARE_COLL)

/* ---- reductions ---------------------------------------------------------- */

/* aclshmem_<T>_<OP>_reduce: dest (nreduce elements) on every PE gets the element-wise OP of
 * every PE's source (nreduce elements); dest may be source.  _reducescatter: source holds
 * nreduce * team size elements; PE i's dest gets the OP of block i (nreduce elements) of
 * every PE's source.  Integers wrap around; half and bfloat16 are computed in float and
 * rounded once, to nearest even.  Every PE gets the same bits: each result element is
 * computed once, in team order. */
#define ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, OP)                                                \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_##OP##_reduce(aclshmem_team_t team, TYPE *dest,    \
                                                          const TYPE *source, size_t nreduce);  \
    ACLSHMEM_HOST_API int aclshmem_##NAME##_##OP##_reducescatter(aclshmem_team_t team, TYPE *dest, \
                                                                 const TYPE *source, size_t nreduce); \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_##OP##_reduce_on_stream(aclshmem_team_t team, TYPE *dest, \
                                                                     const TYPE *source, size_t nreduce, \
                                                                     aclrtStream stream);       \
    ACLSHMEM_HOST_API int aclshmemx_##NAME##_##OP##_reducescatter_on_stream(                    \
        aclshmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce, aclrtStream stream);

/* One family per operation, each over its table of types. */
#define ACLSHMEMI_DECLARE_REDUCE_AND(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, and)
#define ACLSHMEMI_DECLARE_REDUCE_OR(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, or)
#define ACLSHMEMI_DECLARE_REDUCE_XOR(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, xor)
#define ACLSHMEMI_DECLARE_REDUCE_MIN(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, min)
#define ACLSHMEMI_DECLARE_REDUCE_MAX(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, max)
#define ACLSHMEMI_DECLARE_REDUCE_SUM(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, sum)
#define ACLSHMEMI_DECLARE_REDUCE_PROD(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, prod)
ACLSHMEM_REDUCE_BITWISE_TYPES(ACLSHMEMI_DECLARE_REDUCE_AND)
ACLSHMEM_REDUCE_BITWISE_TYPES(ACLSHMEMI_DECLARE_REDUCE_OR)
ACLSHMEM_REDUCE_BITWISE_TYPES(ACLSHMEMI_DECLARE_REDUCE_XOR)
ACLSHMEM_REDUCE_MINMAX_TYPES(ACLSHMEMI_DECLARE_REDUCE_MIN)
ACLSHMEM_REDUCE_MINMAX_TYPES(ACLSHMEMI_DECLARE_REDUCE_MAX)
ACLSHMEM_REDUCE_ARITH_TYPES(ACLSHMEMI_DECLARE_REDUCE_SUM)
ACLSHMEM_REDUCE_ARITH_TYPES(ACLSHMEMI_DECLARE_REDUCE_PROD)

/* ---- collectives of local memory -------------------------------------------- */

/* Element types and operations named by value, for aclshmemx_reduce_local:
 * ACLSHMEMX_TYPE_<T> for every T of ACLSHMEM_REDUCE_ARITH_TYPES, in that order (written out
 * so that the reference can show them; the library's build checks them against the table). */
typedef enum {
    ACLSHMEMX_TYPE_char, ACLSHMEMX_TYPE_schar, ACLSHMEMX_TYPE_short, ACLSHMEMX_TYPE_int, ACLSHMEMX_TYPE_long,
    ACLSHMEMX_TYPE_longlong, ACLSHMEMX_TYPE_ptrdiff, ACLSHMEMX_TYPE_uchar, ACLSHMEMX_TYPE_ushort,
    ACLSHMEMX_TYPE_uint, ACLSHMEMX_TYPE_ulong, ACLSHMEMX_TYPE_ulonglong, ACLSHMEMX_TYPE_int8, ACLSHMEMX_TYPE_int16,
    ACLSHMEMX_TYPE_int32, ACLSHMEMX_TYPE_int64, ACLSHMEMX_TYPE_uint8, ACLSHMEMX_TYPE_uint16, ACLSHMEMX_TYPE_uint32,
    ACLSHMEMX_TYPE_uint64, ACLSHMEMX_TYPE_size, ACLSHMEMX_TYPE_float, ACLSHMEMX_TYPE_double,
    ACLSHMEMX_TYPE_longdouble, ACLSHMEMX_TYPE_half, ACLSHMEMX_TYPE_bfloat16, ACLSHMEMX_TYPE_complexf,
    ACLSHMEMX_TYPE_complexd, ACLSHMEMX_TYPE_COUNT
} aclshmemx_type_t;

typedef enum {
    ACLSHMEMX_OP_AND,
    ACLSHMEMX_OP_OR,
    ACLSHMEMX_OP_XOR,
    ACLSHMEMX_OP_MIN,
    ACLSHMEMX_OP_MAX,
    ACLSHMEMX_OP_SUM,
    ACLSHMEMX_OP_PROD,
    ACLSHMEMX_OP_COUNT
} aclshmemx_reduce_op_t;

/** Collective: dest (nreduce elements of dtype) on every PE of team gets the element-wise op
 *  of every PE's source, as aclshmem_<T>_<OP>_reduce, where dest and source are local memory
 *  (any memory of this process, not necessarily symmetric; dest may be source) and work is
 *  symmetric room for nreduce elements on every PE, which the call uses as scratch (its
 *  contents are lost; it must not overlap dest or source).  For libraries whose callers pass
 *  ordinary buffers: on one node each PE copies into work only the parts that the other PEs
 *  reduce, and reads their results straight into dest, which moves a third less memory than
 *  copying in, reducing in work and copying out.  The PEs of a team may mix this call with
 *  aclshmem_<T>_<OP>_reduce of the same type, operation and count: each passes what it has. */
ACLSHMEM_HOST_API int aclshmemx_reduce_local(aclshmem_team_t team, void *dest, const void *source, void *work,
                                             size_t nreduce, aclshmemx_type_t dtype, aclshmemx_reduce_op_t op);

/** Collective: aclshmem_broadcastmem where dest and source are local memory (any memory of this
 *  process; source is read on the root only, and may be dest there) and work is symmetric room
 *  for nelems bytes on every PE, used as scratch (its contents are lost; it must not overlap
 *  dest or source).  The root copies source into its work; the other PEs read it from there
 *  straight into dest (across nodes, a PE that shares its node with other PEs of the team
 *  fetches its part of the bytes into its work, where they read it), so that a caller with an
 *  ordinary buffer copies it in on the root only, instead of in on the root and out on every
 *  other PE.  The PEs of a team may mix this call with aclshmem_broadcastmem of the same count
 *  and root. */
ACLSHMEM_HOST_API int aclshmemx_broadcastmem_local(aclshmem_team_t team, void *dest, const void *source, void *work,
                                                   size_t nelems, int pe_root);

#ifdef __cplusplus
}
#endif
#endif /* ACLSHMEM_COLL_H */
