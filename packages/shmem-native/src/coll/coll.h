/* The collectives engine: one implementation of every collective over a team, for every
 * API (aclshmem/coll.h and its on-stream forms, the OpenSHMEM layer, Python and torch
 * through them).
 *
 * A collective starts with an exchange of records (exchange.c): each PE writes what it was
 * asked to do (operation, element type, counts, root, strides, where its dest and source
 * are, and whether its own arguments were good) into its slot of the control segment, the
 * team meets in a barrier, and each PE reads every member's record.  So every PE knows, before
 * any data moves, whether all of them made the same call (if not, all fail alike and nothing
 * is written), and where each member's buffers are.  A collective whose data fits in a
 * record carries it there and is done after that one barrier (small.c).  The others
 * (move.c, reduce.c) then read the other PEs' memory directly when they share this node
 * (through the shm transport's mappings: no staging copy) and through the transport's get
 * and put otherwise; the barriers between their phases are the team's (sync/barrier.c),
 * which sleep on the doorbell when PEs outnumber cores. */
#ifndef SHMEMI_COLL_H
#define SHMEMI_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "aclshmem/types.h"
#include "core/instance.h"
#include "team/team.h"

/* X(NAME, TYPE, KIND): every element type of the collectives; KIND says how it reduces:
 * INT (integers: every operation, sum and prod wrap around), REAL (min, max, sum, prod),
 * HALF and BF16 (the same, computed in float), CPLX (sum and prod).  The public type tables
 * of aclshmem/types.h name which of these the API offers for each operation. */
#define SHMEMI_COLL_DTYPES(X)                                                                  \
    X(float, float, REAL) X(double, double, REAL) X(longdouble, long double, REAL)            \
    X(char, char, INT) X(schar, signed char, INT) X(short, short, INT) X(int, int, INT)        \
    X(long, long, INT) X(longlong, long long, INT) X(uchar, unsigned char, INT)                \
    X(ushort, unsigned short, INT) X(uint, unsigned int, INT) X(ulong, unsigned long, INT)     \
    X(ulonglong, unsigned long long, INT) X(int8, int8_t, INT) X(int16, int16_t, INT)          \
    X(int32, int32_t, INT) X(int64, int64_t, INT) X(uint8, uint8_t, INT)                       \
    X(uint16, uint16_t, INT) X(uint32, uint32_t, INT) X(uint64, uint64_t, INT)                 \
    X(size, size_t, INT) X(ptrdiff, ptrdiff_t, INT) X(half, aclshmem_half_t, HALF)             \
    X(bfloat16, aclshmem_bfloat16_t, BF16) X(complexf, float _Complex, CPLX)                   \
    X(complexd, double _Complex, CPLX)

typedef enum {
#define SHMEMI_DT_ENUM(NAME, TYPE, KIND) SHMEMI_DT_##NAME,
    SHMEMI_COLL_DTYPES(SHMEMI_DT_ENUM)
#undef SHMEMI_DT_ENUM
    SHMEMI_DT_COUNT
} shmemi_dtype_t;

/* X(NAME): the reduction operations. */
#define SHMEMI_REDUCE_OPS(X) X(and) X(or) X(xor) X(min) X(max) X(sum) X(prod)

typedef enum {
#define SHMEMI_OP_ENUM(NAME) SHMEMI_OP_##NAME,
    SHMEMI_REDUCE_OPS(SHMEMI_OP_ENUM)
#undef SHMEMI_OP_ENUM
    SHMEMI_OP_COUNT
} shmemi_redop_t;

/* Every reduction the API offers, each as SHMEMI_REDUCE_ENTRY(NAME, TYPE, OP): the tables of
 * aclshmem/types.h, one per kind of operation.  Define SHMEMI_REDUCE_ENTRY, expand
 * SHMEMI_REDUCE_FAMILIES, then #undef it (the tables call back with two arguments, so each
 * operation is bound by an adapter that names the entry macro, expanded where used). */
#define SHMEMI_REDUCE_BIND_and(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, and)
#define SHMEMI_REDUCE_BIND_or(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, or)
#define SHMEMI_REDUCE_BIND_xor(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, xor)
#define SHMEMI_REDUCE_BIND_min(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, min)
#define SHMEMI_REDUCE_BIND_max(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, max)
#define SHMEMI_REDUCE_BIND_sum(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, sum)
#define SHMEMI_REDUCE_BIND_prod(NAME, TYPE) SHMEMI_REDUCE_ENTRY(NAME, TYPE, prod)
#define SHMEMI_REDUCE_FAMILIES                                                                 \
    ACLSHMEM_REDUCE_BITWISE_TYPES(SHMEMI_REDUCE_BIND_and)                                      \
    ACLSHMEM_REDUCE_BITWISE_TYPES(SHMEMI_REDUCE_BIND_or)                                       \
    ACLSHMEM_REDUCE_BITWISE_TYPES(SHMEMI_REDUCE_BIND_xor)                                      \
    ACLSHMEM_REDUCE_MINMAX_TYPES(SHMEMI_REDUCE_BIND_min)                                       \
    ACLSHMEM_REDUCE_MINMAX_TYPES(SHMEMI_REDUCE_BIND_max)                                       \
    ACLSHMEM_REDUCE_ARITH_TYPES(SHMEMI_REDUCE_BIND_sum)                                        \
    ACLSHMEM_REDUCE_ARITH_TYPES(SHMEMI_REDUCE_BIND_prod)

typedef enum {
    SHMEMI_COLL_EXCHANGE = 1,
    SHMEMI_COLL_BROADCAST,
    SHMEMI_COLL_COLLECT,
    SHMEMI_COLL_FCOLLECT,
    SHMEMI_COLL_ALLTOALL,
    SHMEMI_COLL_ALLTOALLS,
    SHMEMI_COLL_REDUCE,
    SHMEMI_COLL_REDUCESCATTER,
    SHMEMI_COLL_REDUCE_LOCAL,   /* reduce of local dest and source through a symmetric work area */
    SHMEMI_COLL_BROADCAST_LOCAL /* broadcast into local dest (from a local source) through work */
} shmemi_coll_kind_t;

/* A broadcast of symmetric or of local memory (a team may mix them). */
static inline int shmemi_coll_is_broadcast(shmemi_coll_kind_t kind)
{
    return kind == SHMEMI_COLL_BROADCAST || kind == SHMEMI_COLL_BROADCAST_LOCAL;
}

/* One call.  nelems counts elements of dtype: a member's contribution (collect: this
 * PE's; exchange: bytes), a block (alltoall, alltoalls) or the result (reduce,
 * reduce-scatter). */
typedef struct {
    shmemi_coll_kind_t kind;
    shmemi_dtype_t dtype;
    shmemi_redop_t op;               /* reductions */
    void *dst;
    const void *src;
    void *work;                      /* reduce_local, broadcast_local: symmetric scratch of nelems
                                      * elements, which the other PEs read instead of dest and
                                      * source */
    size_t nelems;
    int root;                        /* broadcast: a team PE */
    ptrdiff_t dst_stride, src_stride; /* alltoalls, in elements */
    int refused;                     /* an error the caller's own checks found (recorded): this PE
                                      * still takes part, so that the call fails on every PE */
} shmemi_coll_t;

/* The engine's per-instance state; made by init, after the teams. */
int shmemi_coll_init(shmemi_instance_t *inst);
void shmemi_coll_fini(shmemi_instance_t *inst);

/* Runs c over team on the active instance (collective).  Errors name api: a PE that cannot
 * take part at all (no library, no such team) fails alone; every other failure (bad
 * arguments on any PE, calls that differ) fails on every PE. */
int shmemi_coll(const char *api, aclshmem_team_t team, const shmemi_coll_t *c);

/* The checks that c passes on this PE before it takes part (what shmemi_coll makes first):
 * for the on-stream forms, at the call.  ACLSHMEM_SUCCESS or the error (recorded). */
int shmemi_coll_check(const char *api, shmemi_instance_t *inst, const shmemi_team_t *t, const shmemi_coll_t *c);

/* The engine's type and operation of aclshmemx_reduce_local's, or -1 when out of range. */
int shmemi_dtype_of_public(int type);
int shmemi_redop_of_public(int op);

/* The size of one element of dt, and the names used in messages. */
size_t shmemi_dtype_size(shmemi_dtype_t dt);
const char *shmemi_dtype_name(shmemi_dtype_t dt);
const char *shmemi_redop_name(shmemi_redop_t op);

/* How op reduces elements of dt, or NULL when it does not apply (bitwise operations on
 * floating types, min and max on complex ones).  Results accumulate in elements of
 * acc_size bytes (float for half and bfloat16, the type itself otherwise). */
typedef struct {
    size_t acc_size;
    void (*load)(void *acc, const void *in, size_t n);    /* acc = in */
    void (*combine)(void *acc, const void *in, size_t n); /* acc = acc op in */
    void (*store)(void *out, const void *acc, size_t n);  /* out = acc, rounded to the type */
} shmemi_reducer_t;

const shmemi_reducer_t *shmemi_reducer(shmemi_dtype_t dt, shmemi_redop_t op);

#endif
