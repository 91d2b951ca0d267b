/*
 * pshmem.h - the profiling interface of OpenSHMEM 1.5 (its section 10): every function
 * shmem_X of shmem.h and shmemx.h is also pshmem_X.
 *
 * In libaclshmem, pshmem_X is a weak alias of shmem_X: the same code under a second name.
 * A profiling tool defines the shmem_ functions it wants to observe (its definitions take
 * the place of the library's when it is linked into the program or preloaded) and reaches
 * the library through the pshmem_ ones:
 *
 *     #include <pshmem.h>
 *     void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
 *     {
 *         count_a_put(nelems);
 *         pshmem_long_put(dest, source, nelems, pe);
 *     }
 *
 * The types and constants are shmem.h's, which this header includes.  Each pshmem_X is
 * declared with the type of shmem_X (__typeof__), so the two cannot differ; the lists below
 * name the members of each family of shmem.h over the same type tables.  The C11 generic
 * names (shmem_put ...) are macros and have no pshmem_ form, as the specification says;
 * their typed functions do.
 */
#ifndef PSHMEM_H
#define PSHMEM_H

#include "shmem.h"
#include "shmemx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The deprecated functions have deprecated profiling names too, but naming them in
 * __typeof__ is no use of them: no warning here. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

/* pshmem_<X>, declared as shmem_<X> is; SHMEMI_PSHMEM_CTX also declares pshmem_ctx_<X>. */
#define SHMEMI_PSHMEM(X) SHMEMI_API extern __typeof__(shmem_##X) pshmem_##X;
#define SHMEMI_PSHMEM_CTX(X) SHMEMI_PSHMEM(X) SHMEMI_PSHMEM(ctx_##X)

/* ---- the functions declared one by one in shmem.h and shmemx.h -------------------- */
SHMEMI_PSHMEM(init) SHMEMI_PSHMEM(init_thread) SHMEMI_PSHMEM(query_thread) SHMEMI_PSHMEM(finalize)
SHMEMI_PSHMEM(my_pe) SHMEMI_PSHMEM(n_pes) SHMEMI_PSHMEM(pe_accessible) SHMEMI_PSHMEM(addr_accessible)
SHMEMI_PSHMEM(ptr) SHMEMI_PSHMEM(team_ptr) SHMEMI_PSHMEM(info_get_version) SHMEMI_PSHMEM(info_get_name)
SHMEMI_PSHMEM(pcontrol)
SHMEMI_PSHMEM(malloc) SHMEMI_PSHMEM(calloc) SHMEMI_PSHMEM(align) SHMEMI_PSHMEM(malloc_with_hints)
SHMEMI_PSHMEM(realloc) SHMEMI_PSHMEM(free)
SHMEMI_PSHMEM(team_my_pe) SHMEMI_PSHMEM(team_n_pes) SHMEMI_PSHMEM(team_get_config)
SHMEMI_PSHMEM(team_translate_pe) SHMEMI_PSHMEM(team_split_strided) SHMEMI_PSHMEM(team_split_2d)
SHMEMI_PSHMEM(team_destroy)
SHMEMI_PSHMEM(ctx_create) SHMEMI_PSHMEM(team_create_ctx) SHMEMI_PSHMEM(ctx_destroy) SHMEMI_PSHMEM(ctx_get_team)
SHMEMI_PSHMEM_CTX(putmem) SHMEMI_PSHMEM_CTX(getmem) SHMEMI_PSHMEM_CTX(putmem_nbi) SHMEMI_PSHMEM_CTX(getmem_nbi)
SHMEMI_PSHMEM_CTX(putmem_signal) SHMEMI_PSHMEM_CTX(putmem_signal_nbi)
SHMEMI_PSHMEM(signal_fetch) SHMEMI_PSHMEM(signal_wait_until)
SHMEMI_PSHMEM_CTX(fence) SHMEMI_PSHMEM_CTX(quiet)
SHMEMI_PSHMEM(barrier_all) SHMEMI_PSHMEM(sync_all) SHMEMI_PSHMEM(team_sync)
SHMEMI_PSHMEM(set_lock) SHMEMI_PSHMEM(clear_lock) SHMEMI_PSHMEM(test_lock)
SHMEMI_PSHMEM(set_cache_inv) SHMEMI_PSHMEM(set_cache_line_inv) SHMEMI_PSHMEM(clear_cache_inv)
SHMEMI_PSHMEM(clear_cache_line_inv) SHMEMI_PSHMEM(udcflush) SHMEMI_PSHMEM(udcflush_line)
SHMEMI_PSHMEM(barrier) SHMEMI_PSHMEM(sync)
SHMEMI_PSHMEM(broadcastmem) SHMEMI_PSHMEM(collectmem) SHMEMI_PSHMEM(fcollectmem) SHMEMI_PSHMEM(alltoallmem)
SHMEMI_PSHMEM(alltoallsmem)
/* The deprecated names without the shmem_ prefix. */
SHMEMI_API extern __typeof__(start_pes) pstart_pes;
SHMEMI_API extern __typeof__(_my_pe) p_my_pe;
SHMEMI_API extern __typeof__(_num_pes) p_num_pes;
SHMEMI_API extern __typeof__(shmalloc) pshmalloc;
SHMEMI_API extern __typeof__(shfree) pshfree;
SHMEMI_API extern __typeof__(shrealloc) pshrealloc;
SHMEMI_API extern __typeof__(shmemalign) pshmemalign;
/* shmemx.h */
SHMEMI_API extern __typeof__(shmemx_get_last_error) pshmemx_get_last_error;
SHMEMI_API extern __typeof__(shmemx_clear_last_error) pshmemx_clear_last_error;
/* __typeof__ leaves out _Noreturn, which a profiler's shmem_global_exit needs to see. */
SHMEMI_API SHMEMI_NORETURN void pshmem_global_exit(int status);

/* ---- the families: their members, over shmem.h's type tables ----------------------- */
#define SHMEMI_PSHMEM_RMA_TYPED(NAME, TYPE)                                                    \
    SHMEMI_PSHMEM_CTX(NAME##_put) SHMEMI_PSHMEM_CTX(NAME##_get) SHMEMI_PSHMEM_CTX(NAME##_put_nbi) \
    SHMEMI_PSHMEM_CTX(NAME##_get_nbi) SHMEMI_PSHMEM_CTX(NAME##_p) SHMEMI_PSHMEM_CTX(NAME##_g)  \
    SHMEMI_PSHMEM_CTX(NAME##_iput) SHMEMI_PSHMEM_CTX(NAME##_iget)                              \
    SHMEMI_PSHMEM_CTX(NAME##_put_signal) SHMEMI_PSHMEM_CTX(NAME##_put_signal_nbi)
SHMEMI_TYPES_RMA(SHMEMI_PSHMEM_RMA_TYPED)

#define SHMEMI_PSHMEM_RMA_SIZED(BITS)                                                          \
    SHMEMI_PSHMEM_CTX(put##BITS) SHMEMI_PSHMEM_CTX(get##BITS) SHMEMI_PSHMEM_CTX(put##BITS##_nbi) \
    SHMEMI_PSHMEM_CTX(get##BITS##_nbi) SHMEMI_PSHMEM_CTX(iput##BITS) SHMEMI_PSHMEM_CTX(iget##BITS) \
    SHMEMI_PSHMEM_CTX(put##BITS##_signal) SHMEMI_PSHMEM_CTX(put##BITS##_signal_nbi)
SHMEMI_SIZES_RMA(SHMEMI_PSHMEM_RMA_SIZED)

/* An AMO OP with its fetching and non-blocking fetching forms (atomic_add, atomic_fetch_add,
 * atomic_fetch_add_nbi), each with its context form. */
#define SHMEMI_PSHMEM_AMO_OP(NAME, OP)                                                         \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_##OP) SHMEMI_PSHMEM_CTX(NAME##_atomic_fetch_##OP)          \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_fetch_##OP##_nbi)
#define SHMEMI_PSHMEM_AMO_STANDARD(NAME, TYPE)                                                 \
    SHMEMI_PSHMEM_AMO_OP(NAME, inc) SHMEMI_PSHMEM_AMO_OP(NAME, add)                            \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_compare_swap) SHMEMI_PSHMEM_CTX(NAME##_atomic_compare_swap_nbi) \
    SHMEMI_PSHMEM(NAME##_fadd) SHMEMI_PSHMEM(NAME##_finc) SHMEMI_PSHMEM(NAME##_add)            \
    SHMEMI_PSHMEM(NAME##_inc) SHMEMI_PSHMEM(NAME##_cswap)
SHMEMI_TYPES_AMO(SHMEMI_PSHMEM_AMO_STANDARD)

#define SHMEMI_PSHMEM_AMO_EXTENDED(NAME, TYPE)                                                 \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_fetch) SHMEMI_PSHMEM_CTX(NAME##_atomic_fetch_nbi)          \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_set) SHMEMI_PSHMEM_CTX(NAME##_atomic_swap)                 \
    SHMEMI_PSHMEM_CTX(NAME##_atomic_swap_nbi) SHMEMI_PSHMEM(NAME##_swap) SHMEMI_PSHMEM(NAME##_fetch) \
    SHMEMI_PSHMEM(NAME##_set)
SHMEMI_TYPES_AMO(SHMEMI_PSHMEM_AMO_EXTENDED)
SHMEMI_TYPES_AMO_FLOAT(SHMEMI_PSHMEM_AMO_EXTENDED)

#define SHMEMI_PSHMEM_AMO_BITWISE(NAME, TYPE)                                                  \
    SHMEMI_PSHMEM_AMO_OP(NAME, and) SHMEMI_PSHMEM_AMO_OP(NAME, or) SHMEMI_PSHMEM_AMO_OP(NAME, xor)
SHMEMI_TYPES_AMO_BITWISE(SHMEMI_PSHMEM_AMO_BITWISE)

/* A wait or test, and its _all, _any, _some forms and their _vector forms. */
#define SHMEMI_PSHMEM_P2P_OP(NAME, OP)                                                         \
    SHMEMI_PSHMEM(NAME##_##OP) SHMEMI_PSHMEM(NAME##_##OP##_all) SHMEMI_PSHMEM(NAME##_##OP##_any) \
    SHMEMI_PSHMEM(NAME##_##OP##_some) SHMEMI_PSHMEM(NAME##_##OP##_all_vector)                  \
    SHMEMI_PSHMEM(NAME##_##OP##_any_vector) SHMEMI_PSHMEM(NAME##_##OP##_some_vector)
#define SHMEMI_PSHMEM_P2P(NAME, TYPE)                                                          \
    SHMEMI_PSHMEM_P2P_OP(NAME, wait_until) SHMEMI_PSHMEM_P2P_OP(NAME, test) SHMEMI_PSHMEM(NAME##_wait)
SHMEMI_TYPES_P2P(SHMEMI_PSHMEM_P2P)

/* The collectives: typed, sized (deprecated), and the reductions, team-based (_reduce) and
 * over active sets (_to_all, deprecated), each operation over its table of types. */
#define SHMEMI_PSHMEM_COLL_TYPED(NAME, TYPE)                                                   \
    SHMEMI_PSHMEM(NAME##_broadcast) SHMEMI_PSHMEM(NAME##_collect) SHMEMI_PSHMEM(NAME##_fcollect) \
    SHMEMI_PSHMEM(NAME##_alltoall) SHMEMI_PSHMEM(NAME##_alltoalls)
SHMEMI_TYPES_RMA(SHMEMI_PSHMEM_COLL_TYPED)

#define SHMEMI_PSHMEM_COLL_SIZED(BITS)                                                         \
    SHMEMI_PSHMEM(broadcast##BITS) SHMEMI_PSHMEM(collect##BITS) SHMEMI_PSHMEM(fcollect##BITS)   \
    SHMEMI_PSHMEM(alltoall##BITS) SHMEMI_PSHMEM(alltoalls##BITS)
SHMEMI_SIZES_COLL(SHMEMI_PSHMEM_COLL_SIZED)

#define SHMEMI_PSHMEM_BITWISE_OPS(NAME, KIND)                                                  \
    SHMEMI_PSHMEM(NAME##_and_##KIND) SHMEMI_PSHMEM(NAME##_or_##KIND) SHMEMI_PSHMEM(NAME##_xor_##KIND)
#define SHMEMI_PSHMEM_ORDER_OPS(NAME, KIND) SHMEMI_PSHMEM(NAME##_max_##KIND) SHMEMI_PSHMEM(NAME##_min_##KIND)
#define SHMEMI_PSHMEM_ARITH_OPS(NAME, KIND) SHMEMI_PSHMEM(NAME##_sum_##KIND) SHMEMI_PSHMEM(NAME##_prod_##KIND)
#define SHMEMI_PSHMEM_REDUCE_BITWISE(NAME, TYPE) SHMEMI_PSHMEM_BITWISE_OPS(NAME, reduce)
#define SHMEMI_PSHMEM_REDUCE_MINMAX(NAME, TYPE) SHMEMI_PSHMEM_ORDER_OPS(NAME, reduce) SHMEMI_PSHMEM_ARITH_OPS(NAME, reduce)
#define SHMEMI_PSHMEM_TO_ALL_INT(NAME, TYPE)                                                   \
    SHMEMI_PSHMEM_BITWISE_OPS(NAME, to_all) SHMEMI_PSHMEM_ORDER_OPS(NAME, to_all) SHMEMI_PSHMEM_ARITH_OPS(NAME, to_all)
#define SHMEMI_PSHMEM_TO_ALL_REAL(NAME, TYPE) SHMEMI_PSHMEM_ORDER_OPS(NAME, to_all) SHMEMI_PSHMEM_ARITH_OPS(NAME, to_all)
#define SHMEMI_PSHMEM_COMPLEX(NAME, TYPE) SHMEMI_PSHMEM_ARITH_OPS(NAME, reduce) SHMEMI_PSHMEM_ARITH_OPS(NAME, to_all)
SHMEMI_TYPES_REDUCE_BITWISE(SHMEMI_PSHMEM_REDUCE_BITWISE)
SHMEMI_TYPES_REDUCE_MINMAX(SHMEMI_PSHMEM_REDUCE_MINMAX)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_PSHMEM_TO_ALL_INT)
SHMEMI_TYPES_TO_ALL_REAL(SHMEMI_PSHMEM_TO_ALL_REAL)
#if !defined(__STDC_NO_COMPLEX__) && (!defined(__cplusplus) || defined(__GNUC__))
SHMEMI_TYPES_REDUCE_COMPLEX(SHMEMI_PSHMEM_COMPLEX)
#endif

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* PSHMEM_H */
