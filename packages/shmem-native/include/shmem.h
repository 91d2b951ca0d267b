/*
 * shmem.h - the OpenSHMEM 1.5 C API of libaclshmem.
 *
 * The shmem_* functions of the OpenSHMEM 1.5 specification, over the same engine as the
 * aclshmem_* API of aclshmem.h: every process is a PE, the symmetric heap is shmem_malloc's,
 * and puts, gets and atomics reach the other PEs through shared memory on one node and
 * through UCX across nodes.  shmem_init() takes its place in the job from the launcher
 * (oshrun); a program started without one is a job of one PE.  Link with -laclshmem
 * (oshcc does it, or pkg-config --cflags --libs aclshmem).
 *
 * Every function also has its profiling name pshmem_* (a weak alias of the same code).
 * A call that cannot be carried out (an address that is not symmetric, a PE out of range,
 * a destroyed team or context, the library not initialised) does nothing, logs an error
 * naming the call and leaves its text in shmemx_get_last_error() (shmemx.h); functions
 * that return a status return nonzero, fetching ones 0.
 *
 * The typed families are declared once, as X-macro templates expanded over the type
 * tables below, so the list of types of each family is written in one place; the
 * compiler sees ordinary prototypes (gcc -E shows them).  X-macros rather than a header
 * generated at build time: the same tables also generate the library's definitions, its
 * tests and the C11 generic names, and the documentation reads them from this file, so
 * there is no second list to keep in step and the installed header is the source.
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SHMEMI_API __attribute__((visibility("default")))
#define SHMEMI_DEPRECATED __attribute__((deprecated))
#else
#define SHMEMI_API
#define SHMEMI_DEPRECATED
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define SHMEMI_NORETURN [[noreturn]]
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SHMEMI_NORETURN _Noreturn
#else
#define SHMEMI_NORETURN
#endif

/* ---- versions and constants ---------------------------------------------- */
/* The OpenSHMEM specification this header implements (the aclshmem API has its own). */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256 /* bytes of shmem_info_get_name's text, the NUL included */
#define SHMEM_VENDOR_STRING "libaclshmem (SHMEM for every Linux machine)"

#define SHMEM_THREAD_SINGLE 0     /* one thread of the PE calls OpenSHMEM */
#define SHMEM_THREAD_FUNNELED 1   /* only the thread that called shmem_init_thread */
#define SHMEM_THREAD_SERIALIZED 2 /* any thread, one at a time */
#define SHMEM_THREAD_MULTIPLE 3   /* any thread, any time: what shmem_init_thread provides */

#define SHMEM_CMP_EQ 0 /* equal */
#define SHMEM_CMP_NE 1 /* not equal */
#define SHMEM_CMP_GT 2 /* greater than */
#define SHMEM_CMP_GE 3 /* greater than or equal */
#define SHMEM_CMP_LT 4 /* less than */
#define SHMEM_CMP_LE 5 /* less than or equal */

#define SHMEM_SIGNAL_SET 0 /* the signal word becomes the signal value */
#define SHMEM_SIGNAL_ADD 1 /* the signal value is added to the signal word */

#define SHMEM_CTX_PRIVATE (1L << 0)    /* only the creating thread uses the context */
#define SHMEM_CTX_SERIALIZED (1L << 1) /* threads use the context one at a time */
#define SHMEM_CTX_NOSTORE (1L << 2)    /* quiet and fence need not order stores */

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0) /* config_mask bit of shmem_team_config_t.num_contexts */

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0) /* the block is used by remote atomics */
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)  /* the block holds signal words */

/* The pSync arrays of the deprecated active-set shmem_barrier and shmem_sync: that many
 * longs, each SHMEM_SYNC_VALUE before the first call (and after every call). */
#define SHMEM_BARRIER_SYNC_SIZE 16
#define SHMEM_SYNC_VALUE 0L
/* The pSync arrays of the deprecated active-set collectives (longs, each SHMEM_SYNC_VALUE
 * before the call; they still are after it: the collectives here do not use them), and the
 * fewest elements of a reduction's pWrk array (which the specification asks to be
 * max(nreduce / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) elements; it is not used either). */
#define SHMEM_BCAST_SYNC_SIZE 16
#define SHMEM_COLLECT_SYNC_SIZE 16
#define SHMEM_REDUCE_SYNC_SIZE 16
#define SHMEM_ALLTOALL_SYNC_SIZE 16
#define SHMEM_ALLTOALLS_SYNC_SIZE 16
#define SHMEM_SYNC_SIZE 16 /* enough for any collective (and the barrier) */
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1

/* Spellings that OpenSHMEM 1.3 deprecated, for older programs. */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- feature tests ------------------------------------------------------------ */
/* Which of the parts that OpenSHMEM 1.4 and 1.5 added this header declares and libaclshmem
 * defines (each macro 1; a part it lacked would have no macro), for code built against
 * several implementations that supplies its own stand-ins where one lacks a part: it can
 * test these instead of guessing from the vendor.  tests/openshmem/test_osh_features.c checks
 * that every routine of each part is in the library.  (aclshmem/shmem4py.h turns them into
 * the settings of one such client, shmem4py: docs/guides/openshmem.rst.) */
#define ACLSHMEM_HAVE_MALLOC_WITH_HINTS 1  /* shmem_malloc_with_hints, SHMEM_MALLOC_* */
#define ACLSHMEM_HAVE_TEAMS 1              /* shmem_team_t, SHMEM_TEAM_*, shmem_team_* */
#define ACLSHMEM_HAVE_TEAM_CONTEXTS 1      /* shmem_team_create_ctx, shmem_ctx_get_team, SHMEM_CTX_INVALID */
#define ACLSHMEM_HAVE_AMO_NBI 1            /* the non-blocking fetching AMOs (..._atomic_fetch_add_nbi ...) */
#define ACLSHMEM_HAVE_PUT_SIGNAL 1         /* shmem_put_signal and _nbi in every form, SHMEM_SIGNAL_* */
#define ACLSHMEM_HAVE_SIGNAL_FETCH 1       /* shmem_signal_fetch */
#define ACLSHMEM_HAVE_SIGNAL_WAIT_UNTIL 1  /* shmem_signal_wait_until */
#define ACLSHMEM_HAVE_TEAM_COLLECTIVES 1   /* shmem_<T>_broadcast ... alltoalls on teams, and the *mem forms */
#define ACLSHMEM_HAVE_TEAM_REDUCTIONS 1    /* shmem_<T>_<OP>_reduce */
#define ACLSHMEM_HAVE_WAIT_TEST_MANY 1     /* wait_until and test _all, _any, _some and their _vector forms */
#define ACLSHMEM_HAVE_PCONTROL 1           /* shmem_pcontrol */

/* ---- teams and contexts ------------------------------------------------------- */
/* A team: an ordered set of PEs (numbered from 0 within the team).  A handle that is
 * destroyed stays recognisable: using it is an error, never another team. */
typedef struct shmemi_team_handle *shmem_team_t;
/* A communication context: a stream of operations with its own fence and quiet, on a team
 * (PE numbers of its operations are numbers in that team). */
typedef struct shmemi_ctx_handle *shmem_ctx_t;

/* What a team split may be asked for (the members the config_mask selects). */
typedef struct {
    int num_contexts; /* contexts the program means to create from the team at once */
} shmem_team_config_t;

#define SHMEM_TEAM_INVALID ((shmem_team_t)0)   /* no team: what non-members of a split get */
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)     /* every PE of the job */
#define SHMEM_TEAM_SHARED ((shmem_team_t)0xFFF) /* the PEs whose memory this PE can load and store */
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)     /* no context */
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)     /* the context of the calls without a ctx argument */

/* ---- type tables of the generated families --------------------------------- */
/* X(NAME, TYPE): the standard RMA types (put, get, p, g, iput, iget, nbi, put_signal). */
#define SHMEMI_TYPES_RMA(X)                                                                    \
    X(float, float) X(double, double) X(longdouble, long double) X(char, char)                 \
    X(schar, signed char) X(short, short) X(int, int) X(long, long) X(longlong, long long)     \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                    \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t)                   \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                    \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)                \
    X(ptrdiff, ptrdiff_t)

/* X(BITS): the element widths of the sized RMA families. */
#define SHMEMI_SIZES_RMA(X) X(8) X(16) X(32) X(64) X(128)

/* X(NAME, TYPE): the standard AMO types (every AMO but the bitwise ones). */
#define SHMEMI_TYPES_AMO(X)                                                                    \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                     \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)                 \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)                  \
    X(ptrdiff, ptrdiff_t)

/* X(NAME, TYPE): the types the extended AMOs (fetch, set, swap) add to SHMEMI_TYPES_AMO. */
#define SHMEMI_TYPES_AMO_FLOAT(X) X(float, float) X(double, double)

/* X(NAME, TYPE): the bitwise AMO types (and, or, xor). */
#define SHMEMI_TYPES_AMO_BITWISE(X)                                                            \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)             \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)

/* X(NAME, TYPE): the point-to-point synchronization types (wait_until, test); short and
 * ushort are the ones 1.5 deprecated. */
#define SHMEMI_TYPES_P2P(X)                                                                    \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(ushort, unsigned short) \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)             \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)                \
    X(size, size_t) X(ptrdiff, ptrdiff_t)

/* X(NAME, TYPE): the types of the team-based reductions, by operation: and, or, xor ... */
#define SHMEMI_TYPES_REDUCE_BITWISE(X)                                                         \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                    \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                  \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)

/* ... min and max (and sum and prod, which also take the complex types) ... */
#define SHMEMI_TYPES_REDUCE_MINMAX(X)                                                          \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long)              \
    X(longlong, long long) X(ptrdiff, ptrdiff_t) SHMEMI_TYPES_REDUCE_BITWISE(X) X(float, float) \
    X(double, double) X(longdouble, long double)

/* ... and the complex types of sum and prod, of both kinds of reduction (declared where the
 * compiler has complex types: C99 and later unless __STDC_NO_COMPLEX__, and GNU C++). */
#define SHMEMI_TYPES_REDUCE_COMPLEX(X) X(complexd, double _Complex) X(complexf, float _Complex)

/* X(NAME, TYPE): the types of the deprecated active-set reductions (shmem_TYPE_OP_to_all):
 * the integers take every operation, the reals min, max, sum and prod. */
#define SHMEMI_TYPES_TO_ALL_INT(X) X(short, short) X(int, int) X(long, long) X(longlong, long long)
#define SHMEMI_TYPES_TO_ALL_REAL(X) X(float, float) X(double, double) X(longdouble, long double)

/* X(BITS): the element widths of the deprecated active-set collectives. */
#define SHMEMI_SIZES_COLL(X) X(32) X(64)

/* ---- library setup, exit and query --------------------------------------- */
/** Collective: joins the job the launcher started (SHMEM_RUN_UID, SHMEM_RUN_PE,
 *  SHMEM_RUN_NPES; heap size SHMEM_SYMMETRIC_SIZE) or, without a launcher, makes a job of
 *  one PE.  A failure is fatal: the message is printed and the process exits with 1. */
SHMEMI_API void shmem_init(void);
/** shmem_init that reports a failure instead: 0 and *provided = SHMEM_THREAD_MULTIPLE
 *  (every thread level is supported, whatever was requested), or nonzero with the reason
 *  in shmemx_get_last_error(). */
SHMEMI_API int shmem_init_thread(int requested, int *provided);
/** The thread level of the library: SHMEM_THREAD_MULTIPLE once initialised. */
SHMEMI_API void shmem_query_thread(int *provided);
/** Collective: completes every operation, waits for every PE and releases the library;
 *  contexts and teams still alive are destroyed with it. */
SHMEMI_API void shmem_finalize(void);
/** This PE's number in SHMEM_TEAM_WORLD; -1 before shmem_init. */
SHMEMI_API int shmem_my_pe(void);
/** The number of PEs of SHMEM_TEAM_WORLD; -1 before shmem_init. */
SHMEMI_API int shmem_n_pes(void);
/** 1 when pe is a PE of the job (every PE is reachable), else 0. */
SHMEMI_API int shmem_pe_accessible(int pe);
/** 1 when addr is a symmetric address (the symmetric heap, or a global or static variable
 *  of the program) that pe can reach, else 0. */
SHMEMI_API int shmem_addr_accessible(const void *addr, int pe);
/** A load/store address of dest's twin on pe (a PE of this node), or NULL (another node,
 *  or dest not symmetric). */
SHMEMI_API void *shmem_ptr(const void *dest, int pe);
/** shmem_ptr with pe numbered in team. */
SHMEMI_API void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
/** The specification's version: 1.5. */
SHMEMI_API void shmem_info_get_version(int *major, int *minor);
/** Copies SHMEM_VENDOR_STRING (at most SHMEM_MAX_NAME_LEN bytes with the NUL) to name. */
SHMEMI_API void shmem_info_get_name(char *name);
/** Ends every PE of the job with status (the first caller's). */
SHMEMI_API SHMEMI_NORETURN void shmem_global_exit(int status);
/** The profiling control of the specification; the library keeps no profile, so it does
 *  nothing. */
SHMEMI_API void shmem_pcontrol(int level, ...);

/* ---- memory management ------------------------------------------------------ */
/* Collective: every PE makes the same call.  NULL, with an error, when the heap has no
 * room or the PEs asked for different things (then nothing was allocated anywhere); size
 * 0 gives NULL without an error.  hints (SHMEM_MALLOC_*) change nothing: every block
 * serves atomics and signals. */
SHMEMI_API void *shmem_malloc(size_t size);
SHMEMI_API void *shmem_calloc(size_t count, size_t size);
SHMEMI_API void *shmem_align(size_t alignment, size_t size);
SHMEMI_API void *shmem_malloc_with_hints(size_t size, long hints);
/** Collective: a block of size bytes with ptr's first bytes (the smaller size); ptr NULL
 *  is shmem_malloc, size 0 is shmem_free (NULL returned).  On failure ptr is unchanged. */
SHMEMI_API void *shmem_realloc(void *ptr, size_t size);
/** Collective: frees a block of shmem_malloc (NULL: nothing, on every PE). */
SHMEMI_API void shmem_free(void *ptr);

/* ---- teams ------------------------------------------------------------------------ */
/* This PE's number in team, and team's size; -1 for SHMEM_TEAM_INVALID or a destroyed team. */
SHMEMI_API int shmem_team_my_pe(shmem_team_t team);
SHMEMI_API int shmem_team_n_pes(shmem_team_t team);
/** The members of config that config_mask selects (SHMEM_TEAM_NUM_CONTEXTS), as the team
 *  was created with; 0, or nonzero for a bad team. */
SHMEMI_API int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
/** src_pe of src_team as numbered in dest_team; -1 if it is not a member (or a team is bad). */
SHMEMI_API int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/** Collective over parent_team: PEs start, start + stride, ... (size of them) of the parent
 *  form *new_team; the others get SHMEM_TEAM_INVALID.  0, or nonzero on every PE. */
SHMEMI_API int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                                        const shmem_team_config_t *config, long config_mask,
                                        shmem_team_t *new_team);
/** Collective over parent_team: rows of xrange consecutive PEs (*xaxis_team) and the
 *  columns across them (*yaxis_team).  0, or nonzero on every PE. */
SHMEMI_API int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                                   long xaxis_mask, shmem_team_t *xaxis_team,
                                   const shmem_team_config_t *yaxis_config, long yaxis_mask,
                                   shmem_team_t *yaxis_team);
/** Collective over team: destroys it (SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be). */
SHMEMI_API void shmem_team_destroy(shmem_team_t team);

/* ---- contexts ---------------------------------------------------------------------- */
/* A new context on SHMEM_TEAM_WORLD, or on team; options: SHMEM_CTX_PRIVATE,
 * _SERIALIZED, _NOSTORE (or 0).  0 and *ctx, or nonzero with *ctx unchanged; for team
 * SHMEM_TEAM_INVALID (a PE a split left out) nonzero and *ctx = SHMEM_CTX_INVALID.
 * Completion is tracked per PE: a context's quiet also completes the other contexts'
 * operations. */
SHMEMI_API int shmem_ctx_create(long options, shmem_ctx_t *ctx);
SHMEMI_API int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
/** Completes ctx's operations and destroys it (SHMEM_CTX_INVALID: nothing). */
SHMEMI_API void shmem_ctx_destroy(shmem_ctx_t ctx);
/** The team of ctx: 0, or nonzero with *team = SHMEM_TEAM_INVALID for a bad context. */
SHMEMI_API int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- remote memory access ------------------------------------------------------ */
/* put: nelems elements from source to the symmetric dest on pe; get: from the symmetric
 * source on pe to dest; p and g: one element.  Complete when they return; the _nbi forms
 * are complete after shmem_quiet (here they share the blocking path).  iput and iget move
 * nelems elements dst / sst elements apart.  In the shmem_ctx_ forms pe is a PE of ctx's
 * team. */
#define SHMEMI_DECLARE_RMA_TYPED(NAME, TYPE)                                                   \
    SHMEMI_API void shmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    SHMEMI_API void shmem_ctx_##NAME##_put(shmem_ctx_t ctx, TYPE *dest, const TYPE *source,    \
                                           size_t nelems, int pe);                             \
    SHMEMI_API void shmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    SHMEMI_API void shmem_ctx_##NAME##_get(shmem_ctx_t ctx, TYPE *dest, const TYPE *source,    \
                                           size_t nelems, int pe);                             \
    SHMEMI_API void shmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems,      \
                                           int pe);                                            \
    SHMEMI_API void shmem_ctx_##NAME##_put_nbi(shmem_ctx_t ctx, TYPE *dest, const TYPE *source, \
                                               size_t nelems, int pe);                         \
    SHMEMI_API void shmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems,      \
                                           int pe);                                            \
    SHMEMI_API void shmem_ctx_##NAME##_get_nbi(shmem_ctx_t ctx, TYPE *dest, const TYPE *source, \
                                               size_t nelems, int pe);                         \
    SHMEMI_API void shmem_##NAME##_p(TYPE *dest, TYPE value, int pe);                          \
    SHMEMI_API void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, TYPE *dest, TYPE value, int pe);     \
    SHMEMI_API TYPE shmem_##NAME##_g(const TYPE *source, int pe);                              \
    SHMEMI_API TYPE shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const TYPE *source, int pe);         \
    SHMEMI_API void shmem_##NAME##_iput(TYPE *dest, const TYPE *source, ptrdiff_t dst,         \
                                        ptrdiff_t sst, size_t nelems, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_iput(shmem_ctx_t ctx, TYPE *dest, const TYPE *source,   \
                                            ptrdiff_t dst, ptrdiff_t sst, size_t nelems,       \
                                            int pe);                                           \
    SHMEMI_API void shmem_##NAME##_iget(TYPE *dest, const TYPE *source, ptrdiff_t dst,         \
                                        ptrdiff_t sst, size_t nelems, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_iget(shmem_ctx_t ctx, TYPE *dest, const TYPE *source,   \
                                            ptrdiff_t dst, ptrdiff_t sst, size_t nelems,       \
                                            int pe);
SHMEMI_TYPES_RMA(SHMEMI_DECLARE_RMA_TYPED)

/* The same with elements of BITS bits (nelems counts them). */
#define SHMEMI_DECLARE_RMA_SIZED(BITS)                                                         \
    SHMEMI_API void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);    \
    SHMEMI_API void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source,       \
                                        size_t nelems, int pe);                                \
    SHMEMI_API void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);    \
    SHMEMI_API void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source,       \
                                        size_t nelems, int pe);                                \
    SHMEMI_API void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems,       \
                                          int pe);                                             \
    SHMEMI_API void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                              size_t nelems, int pe);                          \
    SHMEMI_API void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems,       \
                                          int pe);                                             \
    SHMEMI_API void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                              size_t nelems, int pe);                          \
    SHMEMI_API void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst,            \
                                     ptrdiff_t sst, size_t nelems, int pe);                    \
    SHMEMI_API void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source,      \
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    SHMEMI_API void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst,            \
                                     ptrdiff_t sst, size_t nelems, int pe);                    \
    SHMEMI_API void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source,      \
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
SHMEMI_SIZES_RMA(SHMEMI_DECLARE_RMA_SIZED)

/* The same in bytes (nelems counts bytes). */
SHMEMI_API void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);

/* ---- atomic memory operations ---------------------------------------------------- */
/* dest is a symmetric object of this type on pe, naturally aligned.  Each AMO is atomic
 * with respect to every other AMO on the same object (from any PE, thread or context).
 * The fetching forms return the old value; their _nbi forms write it to fetch instead
 * (complete when they return here).  inc, fetch_inc, add, fetch_add, compare_swap (if
 * *dest == cond then *dest = value): the standard AMO types. */
#define SHMEMI_DECLARE_AMO_STANDARD(NAME, TYPE)                                                \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe);                       \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch_inc(shmem_ctx_t ctx, TYPE *dest, int pe);  \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_inc_nbi(TYPE *fetch, TYPE *dest, int pe);      \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, TYPE *fetch,      \
                                                            TYPE *dest, int pe);               \
    SHMEMI_API void shmem_##NAME##_atomic_inc(TYPE *dest, int pe);                             \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_inc(shmem_ctx_t ctx, TYPE *dest, int pe);        \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch_add(TYPE *dest, TYPE value, int pe);           \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch_add(shmem_ctx_t ctx, TYPE *dest,           \
                                                        TYPE value, int pe);                   \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_add_nbi(TYPE *fetch, TYPE *dest, TYPE value,   \
                                                        int pe);                               \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_add_nbi(shmem_ctx_t ctx, TYPE *fetch,      \
                                                            TYPE *dest, TYPE value, int pe);   \
    SHMEMI_API void shmem_##NAME##_atomic_add(TYPE *dest, TYPE value, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_add(shmem_ctx_t ctx, TYPE *dest, TYPE value,     \
                                                  int pe);                                     \
    SHMEMI_API TYPE shmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value,      \
                                                       int pe);                                \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_compare_swap(shmem_ctx_t ctx, TYPE *dest,        \
                                                           TYPE cond, TYPE value, int pe);     \
    SHMEMI_API void shmem_##NAME##_atomic_compare_swap_nbi(TYPE *fetch, TYPE *dest, TYPE cond, \
                                                           TYPE value, int pe);                \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_compare_swap_nbi(shmem_ctx_t ctx, TYPE *fetch,   \
                                                               TYPE *dest, TYPE cond,          \
                                                               TYPE value, int pe);
SHMEMI_TYPES_AMO(SHMEMI_DECLARE_AMO_STANDARD)

/* fetch (the value), set (*dest = value) and swap (*dest = value, the old value returned):
 * the standard AMO types and float and double. */
#define SHMEMI_DECLARE_AMO_EXTENDED(NAME, TYPE)                                                \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch(const TYPE *source, int pe);                   \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch(shmem_ctx_t ctx, const TYPE *source,       \
                                                    int pe);                                   \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_nbi(TYPE *fetch, const TYPE *source, int pe);  \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_nbi(shmem_ctx_t ctx, TYPE *fetch,          \
                                                        const TYPE *source, int pe);           \
    SHMEMI_API void shmem_##NAME##_atomic_set(TYPE *dest, TYPE value, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_set(shmem_ctx_t ctx, TYPE *dest, TYPE value,     \
                                                  int pe);                                     \
    SHMEMI_API TYPE shmem_##NAME##_atomic_swap(TYPE *dest, TYPE value, int pe);                \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_swap(shmem_ctx_t ctx, TYPE *dest, TYPE value,    \
                                                   int pe);                                    \
    SHMEMI_API void shmem_##NAME##_atomic_swap_nbi(TYPE *fetch, TYPE *dest, TYPE value,        \
                                                   int pe);                                    \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_swap_nbi(shmem_ctx_t ctx, TYPE *fetch,           \
                                                       TYPE *dest, TYPE value, int pe);
SHMEMI_TYPES_AMO(SHMEMI_DECLARE_AMO_EXTENDED)
SHMEMI_TYPES_AMO_FLOAT(SHMEMI_DECLARE_AMO_EXTENDED)

/* and, or, xor (*dest = *dest OP value) and their fetching forms: the bitwise AMO types. */
#define SHMEMI_DECLARE_AMO_BITWISE(NAME, TYPE)                                                 \
    SHMEMI_API void shmem_##NAME##_atomic_and(TYPE *dest, TYPE value, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_and(shmem_ctx_t ctx, TYPE *dest, TYPE value,     \
                                                  int pe);                                     \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch_and(TYPE *dest, TYPE value, int pe);           \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch_and(shmem_ctx_t ctx, TYPE *dest,           \
                                                        TYPE value, int pe);                   \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_and_nbi(TYPE *fetch, TYPE *dest, TYPE value,   \
                                                        int pe);                               \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_and_nbi(shmem_ctx_t ctx, TYPE *fetch,      \
                                                            TYPE *dest, TYPE value, int pe);   \
    SHMEMI_API void shmem_##NAME##_atomic_or(TYPE *dest, TYPE value, int pe);                  \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_or(shmem_ctx_t ctx, TYPE *dest, TYPE value,      \
                                                 int pe);                                      \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch_or(TYPE *dest, TYPE value, int pe);            \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch_or(shmem_ctx_t ctx, TYPE *dest,            \
                                                       TYPE value, int pe);                    \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_or_nbi(TYPE *fetch, TYPE *dest, TYPE value,    \
                                                       int pe);                                \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_or_nbi(shmem_ctx_t ctx, TYPE *fetch,       \
                                                           TYPE *dest, TYPE value, int pe);    \
    SHMEMI_API void shmem_##NAME##_atomic_xor(TYPE *dest, TYPE value, int pe);                 \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_xor(shmem_ctx_t ctx, TYPE *dest, TYPE value,     \
                                                  int pe);                                     \
    SHMEMI_API TYPE shmem_##NAME##_atomic_fetch_xor(TYPE *dest, TYPE value, int pe);           \
    SHMEMI_API TYPE shmem_ctx_##NAME##_atomic_fetch_xor(shmem_ctx_t ctx, TYPE *dest,           \
                                                        TYPE value, int pe);                   \
    SHMEMI_API void shmem_##NAME##_atomic_fetch_xor_nbi(TYPE *fetch, TYPE *dest, TYPE value,   \
                                                        int pe);                               \
    SHMEMI_API void shmem_ctx_##NAME##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, TYPE *fetch,      \
                                                            TYPE *dest, TYPE value, int pe);
SHMEMI_TYPES_AMO_BITWISE(SHMEMI_DECLARE_AMO_BITWISE)

/* ---- signals ------------------------------------------------------------------------ */
/* Put with signal: nelems elements from source to dest on pe, then the 64-bit signal word
 * sig_addr on pe is updated with signal (sig_op: SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD,
 * atomically); a PE that sees the update also sees the data. */
#define SHMEMI_DECLARE_SIGNAL_TYPED(NAME, TYPE)                                                \
    SHMEMI_API void shmem_##NAME##_put_signal(TYPE *dest, const TYPE *source, size_t nelems,   \
                                              uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                              int pe);                                         \
    SHMEMI_API void shmem_ctx_##NAME##_put_signal(shmem_ctx_t ctx, TYPE *dest,                 \
                                                  const TYPE *source, size_t nelems,           \
                                                  uint64_t *sig_addr, uint64_t signal,         \
                                                  int sig_op, int pe);                         \
    SHMEMI_API void shmem_##NAME##_put_signal_nbi(TYPE *dest, const TYPE *source,              \
                                                  size_t nelems, uint64_t *sig_addr,           \
                                                  uint64_t signal, int sig_op, int pe);        \
    SHMEMI_API void shmem_ctx_##NAME##_put_signal_nbi(shmem_ctx_t ctx, TYPE *dest,             \
                                                      const TYPE *source, size_t nelems,       \
                                                      uint64_t *sig_addr, uint64_t signal,     \
                                                      int sig_op, int pe);
SHMEMI_TYPES_RMA(SHMEMI_DECLARE_SIGNAL_TYPED)

/* The same with elements of BITS bits. */
#define SHMEMI_DECLARE_SIGNAL_SIZED(BITS)                                                      \
    SHMEMI_API void shmem_put##BITS##_signal(void *dest, const void *source, size_t nelems,    \
                                             uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                             int pe);                                          \
    SHMEMI_API void shmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void *dest,                  \
                                                 const void *source, size_t nelems,            \
                                                 uint64_t *sig_addr, uint64_t signal,          \
                                                 int sig_op, int pe);                          \
    SHMEMI_API void shmem_put##BITS##_signal_nbi(void *dest, const void *source,               \
                                                 size_t nelems, uint64_t *sig_addr,            \
                                                 uint64_t signal, int sig_op, int pe);         \
    SHMEMI_API void shmem_ctx_put##BITS##_signal_nbi(shmem_ctx_t ctx, void *dest,              \
                                                     const void *source, size_t nelems,        \
                                                     uint64_t *sig_addr, uint64_t signal,      \
                                                     int sig_op, int pe);
SHMEMI_SIZES_RMA(SHMEMI_DECLARE_SIGNAL_SIZED)

/* The same in bytes. */
SHMEMI_API void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe);
SHMEMI_API void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEMI_API void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                        uint64_t signal, int sig_op, int pe);
SHMEMI_API void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);

/** The value of this PE's signal word sig_addr (an atomic read). */
SHMEMI_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
/** Waits until this PE's signal word sig_addr compares to cmp_value as cmp says
 *  (SHMEM_CMP_*), and returns the value that met the condition. */
SHMEMI_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- point-to-point synchronization --------------------------------------------- */
/* Waiting on and testing this PE's symmetric variables, which other PEs update: cmp is a
 * SHMEM_CMP_* comparison with cmp_value (or, in the _vector forms, with cmp_values[i]).
 * status[i] != 0 leaves element i out (status NULL: all in).  all: every element holds;
 * any: one does (its index is returned; SIZE_MAX when none is left in, and a series of
 * calls returns each element that holds in turn); some: the indices of those that hold go
 * to indices[] and their count is returned.  test returns 1 when the condition holds, else 0. */
#define SHMEMI_DECLARE_P2P(NAME, TYPE)                                                         \
    SHMEMI_API void shmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value);            \
    SHMEMI_API void shmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems,                  \
                                                  const int *status, int cmp, TYPE cmp_value); \
    SHMEMI_API size_t shmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems,                \
                                                    const int *status, int cmp,                \
                                                    TYPE cmp_value);                           \
    SHMEMI_API size_t shmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems,               \
                                                     size_t *indices, const int *status,       \
                                                     int cmp, TYPE cmp_value);                 \
    SHMEMI_API void shmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems,           \
                                                         const int *status, int cmp,           \
                                                         TYPE *cmp_values);                    \
    SHMEMI_API size_t shmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems,         \
                                                           const int *status, int cmp,         \
                                                           TYPE *cmp_values);                  \
    SHMEMI_API size_t shmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems,        \
                                                            size_t *indices,                   \
                                                            const int *status, int cmp,        \
                                                            TYPE *cmp_values);                 \
    SHMEMI_API int shmem_##NAME##_test(TYPE *ivar, int cmp, TYPE cmp_value);                   \
    SHMEMI_API int shmem_##NAME##_test_all(TYPE *ivars, size_t nelems, const int *status,      \
                                           int cmp, TYPE cmp_value);                           \
    SHMEMI_API size_t shmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status,   \
                                              int cmp, TYPE cmp_value);                        \
    SHMEMI_API size_t shmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices,    \
                                               const int *status, int cmp, TYPE cmp_value);    \
    SHMEMI_API int shmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems,                  \
                                                  const int *status, int cmp,                  \
                                                  TYPE *cmp_values);                           \
    SHMEMI_API size_t shmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems,               \
                                                     const int *status, int cmp,               \
                                                     TYPE *cmp_values);                        \
    SHMEMI_API size_t shmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems,              \
                                                      size_t *indices, const int *status,      \
                                                      int cmp, TYPE *cmp_values);
SHMEMI_TYPES_P2P(SHMEMI_DECLARE_P2P)

/* ---- memory ordering ------------------------------------------------------------------ */
/* fence: this PE's earlier puts, AMOs and signals to each PE are delivered before its later
 * ones to that PE; quiet: they are all complete.  On a context: its operations (with
 * per-PE tracking here, every context's). */
SHMEMI_API void shmem_fence(void);
SHMEMI_API void shmem_ctx_fence(shmem_ctx_t ctx);
SHMEMI_API void shmem_quiet(void);
SHMEMI_API void shmem_ctx_quiet(shmem_ctx_t ctx);

/* ---- barriers -------------------------------------------------------------------------- */
/** Collective over SHMEM_TEAM_WORLD: completes this PE's operations, then waits for
 *  every PE. */
SHMEMI_API void shmem_barrier_all(void);
/** Collective over SHMEM_TEAM_WORLD: waits for every PE (this PE's stores are visible). */
SHMEMI_API void shmem_sync_all(void);
/** Collective over team, like shmem_sync_all; 0, or nonzero for a bad team.  shmem_sync(team)
 *  is this call too (the C11 name of OpenSHMEM 1.5, in C and C++ here); shmem_sync with
 *  four arguments is the deprecated active-set sync. */
SHMEMI_API int shmem_team_sync(shmem_team_t team);
/* Deprecated (1.5): the active-set barrier and sync of the PEs PE_start, PE_start +
 * 2^logPE_stride, ... (PE_size of them), over the symmetric array pSync of
 * SHMEM_BARRIER_SYNC_SIZE longs (SHMEM_SYNC_VALUE everywhere before the first call;
 * restored by every call).  Only the members call. */
SHMEMI_API void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync) SHMEMI_DEPRECATED;
/* The name shmem_sync has both forms, as in OpenSHMEM 1.5: shmem_sync(team) is
 * shmem_team_sync(team) (the C11 synopsis), shmem_sync(PE_start, logPE_stride, PE_size,
 * pSync) the deprecated active-set sync above.  The form is chosen by the number of
 * arguments, by the preprocessor, so only the chosen function is named (a team call gets
 * no deprecation warning) and it works in every C and C++ version; another count does not
 * compile.  (shmem_sync), in parentheses, is the active-set function itself. */
#define shmem_sync(...)                                                                        \
    SHMEMI_C11_SYNC_FORM(__VA_ARGS__, (shmem_sync), shmemi_sync_takes_a_team_or_four_arguments, \
                         shmemi_sync_takes_a_team_or_four_arguments, shmem_team_sync, 0)(__VA_ARGS__)
#define SHMEMI_C11_SYNC_FORM(a1, a2, a3, a4, FORM, ...) FORM

/* ---- collectives ---------------------------------------------------------------------- */
/* Collective over team: every PE of the team makes the same call (the same operation, type,
 * counts, root and strides; collect's counts may differ) in the same order as its other
 * collectives on that team.  dest and source are symmetric; each PE may pass its own.  They
 * return 0 when this PE's dest holds the result and its source may be changed again.  A call
 * that does not match the others', or has a bad argument on any PE, returns nonzero on every
 * PE of the team, writes nothing, and leaves in shmemx_get_last_error() a message that names
 * a PE that differs; SHMEM_TEAM_INVALID or a destroyed team: nonzero on this PE.
 * broadcast: nelems elements of source on the team's PE PE_root to dest on every PE (the
 * root's too; dest may be source).  collect: each PE's nelems elements (the counts may
 * differ) to every PE's dest, one after the other in team order.  fcollect: the same with
 * one count; source may be dest + my_pe * nelems (in place).  alltoall: block j of source
 * (nelems elements) on PE i goes to block i of dest on PE j.  alltoalls: the same, element
 * k of a block at index k * sst of source and k * dst of dest (strides >= 1).  The *mem forms
 * count bytes, the typed ones elements. */
SHMEMI_API int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
SHMEMI_API int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
SHMEMI_API int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
SHMEMI_API int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
SHMEMI_API int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                                  size_t nelems);

/* The same for elements of each standard RMA type. */
#define SHMEMI_DECLARE_COLL_TYPED(NAME, TYPE)                                                  \
    SHMEMI_API int shmem_##NAME##_broadcast(shmem_team_t team, TYPE *dest, const TYPE *source, \
                                            size_t nelems, int PE_root);                       \
    SHMEMI_API int shmem_##NAME##_collect(shmem_team_t team, TYPE *dest, const TYPE *source,   \
                                          size_t nelems);                                      \
    SHMEMI_API int shmem_##NAME##_fcollect(shmem_team_t team, TYPE *dest, const TYPE *source,  \
                                           size_t nelems);                                     \
    SHMEMI_API int shmem_##NAME##_alltoall(shmem_team_t team, TYPE *dest, const TYPE *source,  \
                                           size_t nelems);                                     \
    SHMEMI_API int shmem_##NAME##_alltoalls(shmem_team_t team, TYPE *dest, const TYPE *source, \
                                            ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
SHMEMI_TYPES_RMA(SHMEMI_DECLARE_COLL_TYPED)

/* shmem_<TYPE>_<OP>_reduce: dest (nreduce elements) on every PE of team gets the element-wise
 * OP of every PE's source (nreduce elements); dest may be source, but not overlap it
 * otherwise.  Integers wrap around.  Every PE gets the same bits: each result element is
 * computed once, in team order.  Returns as the collectives above do. */
#define SHMEMI_DECLARE_REDUCE(NAME, TYPE, OP)                                                  \
    SHMEMI_API int shmem_##NAME##_##OP##_reduce(shmem_team_t team, TYPE *dest, const TYPE *source, \
                                                size_t nreduce);

/* One family per operation, each over the types of its table. */
#define SHMEMI_DECLARE_REDUCE_AND(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, and)
#define SHMEMI_DECLARE_REDUCE_OR(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, or)
#define SHMEMI_DECLARE_REDUCE_XOR(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, xor)
#define SHMEMI_DECLARE_REDUCE_MAX(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, max)
#define SHMEMI_DECLARE_REDUCE_MIN(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, min)
#define SHMEMI_DECLARE_REDUCE_SUM(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, sum)
#define SHMEMI_DECLARE_REDUCE_PROD(NAME, TYPE) SHMEMI_DECLARE_REDUCE(NAME, TYPE, prod)
SHMEMI_TYPES_REDUCE_BITWISE(SHMEMI_DECLARE_REDUCE_AND)
SHMEMI_TYPES_REDUCE_BITWISE(SHMEMI_DECLARE_REDUCE_OR)
SHMEMI_TYPES_REDUCE_BITWISE(SHMEMI_DECLARE_REDUCE_XOR)
SHMEMI_TYPES_REDUCE_MINMAX(SHMEMI_DECLARE_REDUCE_MAX)
SHMEMI_TYPES_REDUCE_MINMAX(SHMEMI_DECLARE_REDUCE_MIN)
SHMEMI_TYPES_REDUCE_MINMAX(SHMEMI_DECLARE_REDUCE_SUM)
SHMEMI_TYPES_REDUCE_MINMAX(SHMEMI_DECLARE_REDUCE_PROD)
#if !defined(__STDC_NO_COMPLEX__) && (!defined(__cplusplus) || defined(__GNUC__))
SHMEMI_TYPES_REDUCE_COMPLEX(SHMEMI_DECLARE_REDUCE_SUM)
SHMEMI_TYPES_REDUCE_COMPLEX(SHMEMI_DECLARE_REDUCE_PROD)
#endif

/* Deprecated (1.5): the same collectives over the active set of the PEs PE_start, PE_start +
 * 2^logPE_stride, ... (PE_size of them), which alone make the call, numbered 0 .. PE_size - 1
 * within it (PE_root is such a number).  pSync is a symmetric array of SHMEM_BCAST_SYNC_SIZE,
 * SHMEM_COLLECT_SYNC_SIZE, SHMEM_ALLTOALL_SYNC_SIZE or SHMEM_ALLTOALLS_SYNC_SIZE longs, each
 * SHMEM_SYNC_VALUE; it is checked, not used, and so stays as it was.  The elements are of
 * BITS bits, and nelems counts them.  The broadcast leaves the root's dest alone.  Each call
 * runs over a team of the active set's PEs, which its first call makes (a collective over
 * those PEs only) and later calls reuse; so calls that do not match fail on every PE of the
 * set, as the team-based ones do. */
#define SHMEMI_DECLARE_COLL_SIZED(BITS)                                                        \
    SHMEMI_API void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, \
                                          int PE_start, int logPE_stride, int PE_size,         \
                                          long *pSync) SHMEMI_DEPRECATED;                      \
    SHMEMI_API void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                        int logPE_stride, int PE_size, long *pSync) SHMEMI_DEPRECATED; \
    SHMEMI_API void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                         int logPE_stride, int PE_size, long *pSync) SHMEMI_DEPRECATED; \
    SHMEMI_API void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                         int logPE_stride, int PE_size, long *pSync) SHMEMI_DEPRECATED; \
    SHMEMI_API void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                          size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                                          long *pSync) SHMEMI_DEPRECATED;
SHMEMI_SIZES_COLL(SHMEMI_DECLARE_COLL_SIZED)

/* Deprecated (1.5): the reductions over an active set, as above; pSync has
 * SHMEM_REDUCE_SYNC_SIZE longs, pWrk is a symmetric array of the type (both are checked, not
 * used), nreduce must not be negative. */
#define SHMEMI_DECLARE_TO_ALL(NAME, TYPE, OP)                                                  \
    SHMEMI_API void shmem_##NAME##_##OP##_to_all(TYPE *dest, const TYPE *source, int nreduce,  \
                                                 int PE_start, int logPE_stride, int PE_size,  \
                                                 TYPE *pWrk, long *pSync) SHMEMI_DEPRECATED;

/* One family per operation, each over the types of its tables. */
#define SHMEMI_DECLARE_TO_ALL_AND(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, and)
#define SHMEMI_DECLARE_TO_ALL_OR(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, or)
#define SHMEMI_DECLARE_TO_ALL_XOR(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, xor)
#define SHMEMI_DECLARE_TO_ALL_MAX(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, max)
#define SHMEMI_DECLARE_TO_ALL_MIN(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, min)
#define SHMEMI_DECLARE_TO_ALL_SUM(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, sum)
#define SHMEMI_DECLARE_TO_ALL_PROD(NAME, TYPE) SHMEMI_DECLARE_TO_ALL(NAME, TYPE, prod)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_AND)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_OR)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_XOR)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_MAX)
SHMEMI_TYPES_TO_ALL_REAL(SHMEMI_DECLARE_TO_ALL_MAX)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_MIN)
SHMEMI_TYPES_TO_ALL_REAL(SHMEMI_DECLARE_TO_ALL_MIN)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_SUM)
SHMEMI_TYPES_TO_ALL_REAL(SHMEMI_DECLARE_TO_ALL_SUM)
SHMEMI_TYPES_TO_ALL_INT(SHMEMI_DECLARE_TO_ALL_PROD)
SHMEMI_TYPES_TO_ALL_REAL(SHMEMI_DECLARE_TO_ALL_PROD)
#if !defined(__STDC_NO_COMPLEX__) && (!defined(__cplusplus) || defined(__GNUC__))
SHMEMI_TYPES_REDUCE_COMPLEX(SHMEMI_DECLARE_TO_ALL_SUM)
SHMEMI_TYPES_REDUCE_COMPLEX(SHMEMI_DECLARE_TO_ALL_PROD)
#endif

/* ---- distributed locks ------------------------------------------------------------ */
/* A lock is a symmetric long, 0 before its first use, that only these calls touch.  The
 * lock is fair: PEs get it in the order in which they asked (a ticket lock kept on PE 0). */
SHMEMI_API void shmem_set_lock(long *lock);
/** Releases a lock this PE holds (any of its threads may). */
SHMEMI_API void shmem_clear_lock(long *lock);
/** Takes the lock if it is free: 0 when taken, 1 when another PE holds it or waits for it. */
SHMEMI_API int shmem_test_lock(long *lock);

/* ---- names deprecated before 1.5 --------------------------------------------------- */
/* Kept so that older programs build unchanged (each warns where it is used); new code
 * uses the names in the comments.  start_pes(npes) is shmem_init() (npes is ignored, and
 * a second call changes nothing); _my_pe and _num_pes are shmem_my_pe and shmem_n_pes;
 * shmalloc, shfree, shrealloc and shmemalign are shmem_malloc, shmem_free, shmem_realloc
 * and shmem_align. */
SHMEMI_API void start_pes(int npes) SHMEMI_DEPRECATED;
SHMEMI_API int _my_pe(void) SHMEMI_DEPRECATED;
SHMEMI_API int _num_pes(void) SHMEMI_DEPRECATED;
SHMEMI_API void *shmalloc(size_t size) SHMEMI_DEPRECATED;
SHMEMI_API void shfree(void *ptr) SHMEMI_DEPRECATED;
SHMEMI_API void *shrealloc(void *ptr, size_t size) SHMEMI_DEPRECATED;
SHMEMI_API void *shmemalign(size_t alignment, size_t size) SHMEMI_DEPRECATED;
/* Cache management of machines without coherent caches: nothing to do here. */
SHMEMI_API void shmem_set_cache_inv(void) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_set_cache_line_inv(void *dest) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_clear_cache_inv(void) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_clear_cache_line_inv(void *dest) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_udcflush(void) SHMEMI_DEPRECATED;
SHMEMI_API void shmem_udcflush_line(void *dest) SHMEMI_DEPRECATED;

/* The atomics' names before 1.4: fadd, finc, add, inc and cswap are atomic_fetch_add,
 * atomic_fetch_inc, atomic_add, atomic_inc and atomic_compare_swap. */
#define SHMEMI_DECLARE_AMO_DEPRECATED(NAME, TYPE)                                              \
    SHMEMI_API TYPE shmem_##NAME##_fadd(TYPE *dest, TYPE value, int pe) SHMEMI_DEPRECATED;     \
    SHMEMI_API TYPE shmem_##NAME##_finc(TYPE *dest, int pe) SHMEMI_DEPRECATED;                 \
    SHMEMI_API void shmem_##NAME##_add(TYPE *dest, TYPE value, int pe) SHMEMI_DEPRECATED;      \
    SHMEMI_API void shmem_##NAME##_inc(TYPE *dest, int pe) SHMEMI_DEPRECATED;                  \
    SHMEMI_API TYPE shmem_##NAME##_cswap(TYPE *dest, TYPE cond, TYPE value, int pe) SHMEMI_DEPRECATED;
SHMEMI_TYPES_AMO(SHMEMI_DECLARE_AMO_DEPRECATED)

/* swap, fetch and set are atomic_swap, atomic_fetch and atomic_set. */
#define SHMEMI_DECLARE_AMO_EXTENDED_DEPRECATED(NAME, TYPE)                                     \
    SHMEMI_API TYPE shmem_##NAME##_swap(TYPE *dest, TYPE value, int pe) SHMEMI_DEPRECATED;     \
    SHMEMI_API TYPE shmem_##NAME##_fetch(const TYPE *source, int pe) SHMEMI_DEPRECATED;        \
    SHMEMI_API void shmem_##NAME##_set(TYPE *dest, TYPE value, int pe) SHMEMI_DEPRECATED;
SHMEMI_TYPES_AMO(SHMEMI_DECLARE_AMO_EXTENDED_DEPRECATED)
SHMEMI_TYPES_AMO_FLOAT(SHMEMI_DECLARE_AMO_EXTENDED_DEPRECATED)

/* wait (until *ivar != cmp_value) is wait_until with SHMEM_CMP_NE. */
#define SHMEMI_DECLARE_P2P_DEPRECATED(NAME, TYPE)                                              \
    SHMEMI_API void shmem_##NAME##_wait(TYPE *ivar, TYPE cmp_value) SHMEMI_DEPRECATED;
SHMEMI_TYPES_P2P(SHMEMI_DECLARE_P2P_DEPRECATED)

/* ---- C11 generic interfaces ---------------------------------------------------------- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* X(NAME, TYPE, OP): the distinct C types of each family, for _Generic. */
#define SHMEMI_C11_TYPES_RMA(X, OP)                                                            \
    X(float, float, OP) X(double, double, OP) X(longdouble, long double, OP) X(char, char, OP) \
    X(schar, signed char, OP) X(short, short, OP) X(int, int, OP) X(long, long, OP)            \
    X(longlong, long long, OP) X(uchar, unsigned char, OP) X(ushort, unsigned short, OP)       \
    X(uint, unsigned int, OP) X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP)
#define SHMEMI_C11_TYPES_AMO(X, OP)                                                            \
    X(int, int, OP) X(long, long, OP) X(longlong, long long, OP) X(uint, unsigned int, OP)     \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP)
#define SHMEMI_C11_TYPES_AMO_EXTENDED(X, OP) SHMEMI_C11_TYPES_AMO(X, OP) X(float, float, OP) X(double, double, OP)
#define SHMEMI_C11_TYPES_AMO_BITWISE(X, OP)                                                    \
    X(uint, unsigned int, OP) X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP)
#define SHMEMI_C11_TYPES_P2P(X, OP)                                                            \
    X(short, short, OP) X(int, int, OP) X(long, long, OP) X(longlong, long long, OP)           \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP)        \
    X(ulonglong, unsigned long long, OP)
#define SHMEMI_C11_TYPES_COLL(X, OP) SHMEMI_C11_TYPES_RMA(X, OP)
/* The reductions' types: the signed fixed-width ones name the signed integers that and, or and
 * xor take (int8_t is signed char ...), and none of them is another row's type. */
#define SHMEMI_C11_TYPES_REDUCE_BITWISE(X, OP)                                                 \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP)        \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP)       \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP)
#define SHMEMI_C11_TYPES_REDUCE_MINMAX(X, OP)                                                  \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP)            \
    X(long, long, OP) X(longlong, long long, OP) X(uchar, unsigned char, OP)                   \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP)        \
    X(ulonglong, unsigned long long, OP) X(float, float, OP) X(double, double, OP)             \
    X(longdouble, long double, OP)
#if defined(__STDC_NO_COMPLEX__)
#define SHMEMI_C11_TYPES_REDUCE_ARITH(X, OP) SHMEMI_C11_TYPES_REDUCE_MINMAX(X, OP)
#else
#define SHMEMI_C11_TYPES_REDUCE_ARITH(X, OP)                                                   \
    SHMEMI_C11_TYPES_REDUCE_MINMAX(X, OP) X(complexd, double _Complex, OP) X(complexf, float _Complex, OP)
#endif

/* Never defined: the generic names' choice for a type their family does not have. */
void shmemi_c11_type_not_supported(void);

/* One association of a _Generic: TYPE * (and, where the argument may be const, const
 * TYPE *) selects the typed function or its shmem_ctx_ form. */
#define SHMEMI_C11_ASSOC(NAME, TYPE, OP) TYPE *: shmem_##NAME##_##OP,
#define SHMEMI_C11_ASSOC_CONST(NAME, TYPE, OP) TYPE *: shmem_##NAME##_##OP, const TYPE *: shmem_##NAME##_##OP,
#define SHMEMI_C11_CTX_ASSOC(NAME, TYPE, OP) TYPE *: shmem_ctx_##NAME##_##OP,
#define SHMEMI_C11_CTX_ASSOC_CONST(NAME, TYPE, OP)                                             \
    TYPE *: shmem_ctx_##NAME##_##OP, const TYPE *: shmem_ctx_##NAME##_##OP,

#define SHMEMI_C11_ARG1(a, ...) a
#define SHMEMI_C11_ARG2(a, b, ...) b

/* The function for a call without a context (chosen by the first argument's type) or with
 * one (by the second's). */
#define SHMEMI_C11_PICK(TABLE, ASSOC, CTX_ASSOC, OP, ...)                                      \
    _Generic(SHMEMI_C11_ARG1(__VA_ARGS__, 0),                                                  \
        shmem_ctx_t: _Generic(SHMEMI_C11_ARG2(__VA_ARGS__, 0, 0),                              \
                         TABLE(CTX_ASSOC, OP) default: shmemi_c11_type_not_supported),         \
        TABLE(ASSOC, OP) default: shmemi_c11_type_not_supported)(__VA_ARGS__)
#define SHMEMI_C11_PICK_NO_CTX(TABLE, OP, ...)                                                 \
    _Generic(SHMEMI_C11_ARG1(__VA_ARGS__, 0),                                                  \
        TABLE(SHMEMI_C11_ASSOC, OP) default: shmemi_c11_type_not_supported)(__VA_ARGS__)
#define SHMEMI_C11_PICK_NO_CTX_CONST(TABLE, OP, ...)                                           \
    _Generic(SHMEMI_C11_ARG1(__VA_ARGS__, 0),                                                  \
        TABLE(SHMEMI_C11_ASSOC_CONST, OP) default: shmemi_c11_type_not_supported)(__VA_ARGS__)
/* A collective's: by its second argument, dest (the team comes first). */
#define SHMEMI_C11_PICK_TEAM(TABLE, OP, ...)                                                   \
    _Generic(SHMEMI_C11_ARG2(__VA_ARGS__, 0, 0),                                               \
        TABLE(SHMEMI_C11_ASSOC, OP) default: shmemi_c11_type_not_supported)(__VA_ARGS__)

#define SHMEMI_C11_RMA(OP, ...)                                                                \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_RMA, SHMEMI_C11_ASSOC, SHMEMI_C11_CTX_ASSOC, OP, __VA_ARGS__)
#define SHMEMI_C11_RMA_CONST(OP, ...)                                                          \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_RMA, SHMEMI_C11_ASSOC_CONST, SHMEMI_C11_CTX_ASSOC_CONST, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO(OP, ...)                                                                \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_AMO, SHMEMI_C11_ASSOC, SHMEMI_C11_CTX_ASSOC, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO_EXTENDED(OP, ...)                                                       \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_AMO_EXTENDED, SHMEMI_C11_ASSOC, SHMEMI_C11_CTX_ASSOC, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO_EXTENDED_CONST(OP, ...)                                                 \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_AMO_EXTENDED, SHMEMI_C11_ASSOC_CONST, SHMEMI_C11_CTX_ASSOC_CONST, OP,  \
                    __VA_ARGS__)
#define SHMEMI_C11_AMO_BITWISE(OP, ...)                                                        \
    SHMEMI_C11_PICK(SHMEMI_C11_TYPES_AMO_BITWISE, SHMEMI_C11_ASSOC, SHMEMI_C11_CTX_ASSOC, OP, __VA_ARGS__)
#define SHMEMI_C11_P2P(OP, ...) SHMEMI_C11_PICK_NO_CTX(SHMEMI_C11_TYPES_P2P, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO_DEPRECATED(OP, ...) SHMEMI_C11_PICK_NO_CTX(SHMEMI_C11_TYPES_AMO, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO_EXTENDED_DEPRECATED(OP, ...)                                            \
    SHMEMI_C11_PICK_NO_CTX(SHMEMI_C11_TYPES_AMO_EXTENDED, OP, __VA_ARGS__)
#define SHMEMI_C11_AMO_EXTENDED_CONST_DEPRECATED(OP, ...)                                      \
    SHMEMI_C11_PICK_NO_CTX_CONST(SHMEMI_C11_TYPES_AMO_EXTENDED, OP, __VA_ARGS__)
#define SHMEMI_C11_COLL(OP, ...) SHMEMI_C11_PICK_TEAM(SHMEMI_C11_TYPES_COLL, OP, __VA_ARGS__)
#define SHMEMI_C11_REDUCE_BITWISE(OP, ...) SHMEMI_C11_PICK_TEAM(SHMEMI_C11_TYPES_REDUCE_BITWISE, OP, __VA_ARGS__)
#define SHMEMI_C11_REDUCE_MINMAX(OP, ...) SHMEMI_C11_PICK_TEAM(SHMEMI_C11_TYPES_REDUCE_MINMAX, OP, __VA_ARGS__)
#define SHMEMI_C11_REDUCE_ARITH(OP, ...) SHMEMI_C11_PICK_TEAM(SHMEMI_C11_TYPES_REDUCE_ARITH, OP, __VA_ARGS__)

/* In C11 (not C++), the typed families also go by their generic names, which pick the
 * typed function from the type of the first pointer argument, and its shmem_ctx_ form when
 * the first argument is a shmem_ctx_t: shmem_put(dest, source, nelems, pe) calls
 * shmem_long_put when dest is a long *, shmem_put(ctx, dest, source, nelems, pe) calls
 * shmem_ctx_long_put.  The types are the C types of each family's table (the fixed-width
 * and size types are among them: int64_t is long or long long); a pointer to another type
 * does not compile (the call names shmemi_c11_type_not_supported).  As with any macro, an
 * argument with a comma of its own (a compound literal) needs parentheses around it. */
#define shmem_put(...) SHMEMI_C11_RMA(put, __VA_ARGS__)
#define shmem_get(...) SHMEMI_C11_RMA(get, __VA_ARGS__)
#define shmem_put_nbi(...) SHMEMI_C11_RMA(put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) SHMEMI_C11_RMA(get_nbi, __VA_ARGS__)
#define shmem_p(...) SHMEMI_C11_RMA(p, __VA_ARGS__)
#define shmem_g(...) SHMEMI_C11_RMA_CONST(g, __VA_ARGS__)
#define shmem_iput(...) SHMEMI_C11_RMA(iput, __VA_ARGS__)
#define shmem_iget(...) SHMEMI_C11_RMA(iget, __VA_ARGS__)
#define shmem_put_signal(...) SHMEMI_C11_RMA(put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEMI_C11_RMA(put_signal_nbi, __VA_ARGS__)

/* Atomic memory operations: shmem_atomic_add(dest, value, pe), shmem_atomic_add(ctx, ...) ... */
#define shmem_atomic_fetch_inc(...) SHMEMI_C11_AMO(atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEMI_C11_AMO(atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_inc(...) SHMEMI_C11_AMO(atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHMEMI_C11_AMO(atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEMI_C11_AMO(atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_add(...) SHMEMI_C11_AMO(atomic_add, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEMI_C11_AMO(atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) SHMEMI_C11_AMO(atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch(...) SHMEMI_C11_AMO_EXTENDED_CONST(atomic_fetch, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) SHMEMI_C11_AMO_EXTENDED(atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_set(...) SHMEMI_C11_AMO_EXTENDED(atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) SHMEMI_C11_AMO_EXTENDED(atomic_swap, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) SHMEMI_C11_AMO_EXTENDED(atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_and(...) SHMEMI_C11_AMO_BITWISE(atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_or(...) SHMEMI_C11_AMO_BITWISE(atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_xor(...) SHMEMI_C11_AMO_BITWISE(atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEMI_C11_AMO_BITWISE(atomic_fetch_xor_nbi, __VA_ARGS__)

/* Point-to-point synchronization: shmem_wait_until(ivar, cmp, value) ... */
#define shmem_wait_until(...) SHMEMI_C11_P2P(wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...) SHMEMI_C11_P2P(wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...) SHMEMI_C11_P2P(wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...) SHMEMI_C11_P2P(wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) SHMEMI_C11_P2P(wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) SHMEMI_C11_P2P(wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) SHMEMI_C11_P2P(wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...) SHMEMI_C11_P2P(test, __VA_ARGS__)
#define shmem_test_all(...) SHMEMI_C11_P2P(test_all, __VA_ARGS__)
#define shmem_test_any(...) SHMEMI_C11_P2P(test_any, __VA_ARGS__)
#define shmem_test_some(...) SHMEMI_C11_P2P(test_some, __VA_ARGS__)
#define shmem_test_all_vector(...) SHMEMI_C11_P2P(test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...) SHMEMI_C11_P2P(test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) SHMEMI_C11_P2P(test_some_vector, __VA_ARGS__)

/* Collectives: shmem_broadcast(team, dest, source, nelems, PE_root) calls shmem_long_broadcast
 * when dest is a long *; shmem_sum_reduce(team, dest, source, nreduce) shmem_long_sum_reduce.
 * They pick by dest, the second argument (there are no context forms). */
#define shmem_broadcast(...) SHMEMI_C11_COLL(broadcast, __VA_ARGS__)
#define shmem_collect(...) SHMEMI_C11_COLL(collect, __VA_ARGS__)
#define shmem_fcollect(...) SHMEMI_C11_COLL(fcollect, __VA_ARGS__)
#define shmem_alltoall(...) SHMEMI_C11_COLL(alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHMEMI_C11_COLL(alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...) SHMEMI_C11_REDUCE_BITWISE(and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...) SHMEMI_C11_REDUCE_BITWISE(or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...) SHMEMI_C11_REDUCE_BITWISE(xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...) SHMEMI_C11_REDUCE_MINMAX(max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...) SHMEMI_C11_REDUCE_MINMAX(min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...) SHMEMI_C11_REDUCE_ARITH(sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) SHMEMI_C11_REDUCE_ARITH(prod_reduce, __VA_ARGS__)

/* The generic names before 1.4 of the atomics and of wait (deprecated as their typed
 * functions are): shmem_fadd(dest, value, pe) calls shmem_long_fadd when dest is a long *. */
#define shmem_fadd(...) SHMEMI_C11_AMO_DEPRECATED(fadd, __VA_ARGS__)
#define shmem_finc(...) SHMEMI_C11_AMO_DEPRECATED(finc, __VA_ARGS__)
#define shmem_add(...) SHMEMI_C11_AMO_DEPRECATED(add, __VA_ARGS__)
#define shmem_inc(...) SHMEMI_C11_AMO_DEPRECATED(inc, __VA_ARGS__)
#define shmem_cswap(...) SHMEMI_C11_AMO_DEPRECATED(cswap, __VA_ARGS__)
#define shmem_swap(...) SHMEMI_C11_AMO_EXTENDED_DEPRECATED(swap, __VA_ARGS__)
#define shmem_fetch(...) SHMEMI_C11_AMO_EXTENDED_CONST_DEPRECATED(fetch, __VA_ARGS__)
#define shmem_set(...) SHMEMI_C11_AMO_EXTENDED_DEPRECATED(set, __VA_ARGS__)
#define shmem_wait(...) SHMEMI_C11_P2P(wait, __VA_ARGS__)

#endif /* C11 */

#ifdef __cplusplus
}
#endif
#endif /* SHMEM_H */
