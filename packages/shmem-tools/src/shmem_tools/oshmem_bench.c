/*
 * oshmem_bench.c - point-to-point, pairs, barrier and collective numbers of an OpenSHMEM
 * library.
 *
 * Written against the standard OpenSHMEM API only (no extensions), so the same source
 * measures Open MPI's OSHMEM and libaclshmem, each through its own shmem.h:
 *
 *     oshcc -O2 oshmem_bench.c -o bench_oshmem           (Open MPI's wrapper)
 *     cc -O2 oshmem_bench.c -o bench_aclshmem $(pkg-config --cflags --libs aclshmem)
 *
 * _oshmem.py beside it (shmem-perf --oshmem, and the repository's
 * benchmarks/oshmem_compare.py) builds both, runs them in turn and
 * compares them.  PE 0 measures, PE 1
 * is the target of the point-to-point tests; extra PEs take part in the barriers and the
 * collectives, which every PE runs.
 *
 *     bench [-r REPS] [-t MS] [-m MAX_BYTES] [-T test,test,...]
 *
 *   -r  repetitions of each point; the median is printed (default 7)
 *   -t  milliseconds per repetition: the iteration count is calibrated to it (default 20)
 *   -m  the largest message of the bandwidth tests (default 16 MiB; sizes 8, 32, ... x4, and MAX)
 *   -T  only these tests (names as printed below, without the size)
 *
 * Before timing anything it checks that a put of MAX_BYTES reaches PE 1 and a get brings
 * it back (exit status 1 if not).  One line per point on stdout, "metric size value unit",
 * after "#" comment lines; "# end" after the last test, before shmem_finalize:
 *
 *   put_lat_barrier  8  shmem_putmem of 8 B + shmem_quiet, the target in shmem_barrier_all (us)
 *   put_lat_asleep   8  the same, the target in shmem_long_wait_until on a word nobody
 *                       writes until the end, given 10 ms to settle (fall asleep) first (us)
 *   put_lat_spin     8  the same, the target spinning on that word in a volatile loop of
 *                       its own, calling no library routine (us)
 *   p_lat            8  shmem_long_p + shmem_quiet, the target in the barrier (us)
 *   put_lat_static   8  put_lat_barrier into a static array of the program (symmetric data,
 *                       not the heap) (us)
 *   put_lat_ctx      8  put_lat_barrier through a private context: shmem_ctx_putmem +
 *                       shmem_ctx_quiet (us)
 *   get_lat          8  blocking shmem_getmem of 8 B (us)
 *   g_lat            8  shmem_long_g (us)
 *   pingpong         8  half a round trip: PE 0 shmem_long_p's a word to PE 1, which waits
 *                       for it in shmem_long_wait_until and answers the same way (us)
 *   pingpong_ptr     8  the same exchange with no library call in the loop: a store through
 *                       the peer's word's shmem_ptr address and a poll of the own word with
 *                       atomic loads; what the memory each library maps allows (us; a
 *                       reference, not a goal; skipped when shmem_ptr gives no address)
 *   barrier          0  shmem_barrier_all on every PE (us)
 *   put_bw        SIZE  a stream of shmem_putmem, shmem_quiet after every 64 and at the
 *                       end, the target in the barrier (GB/s, 1e9 bytes per second)
 *   put_nbi_bw    SIZE  the same with shmem_putmem_nbi (GB/s)
 *   get_bw        SIZE  a stream of blocking shmem_getmem (GB/s)
 *
 * Message rate and atomics in the shape of the OSU OpenSHMEM benchmarks: the PEs in pairs,
 * PE i of the first half working on PE i + PEs / 2 (the second half, and with an odd count
 * the last PE, wait in the barrier), all pairs at once; each PE's time is summed over the
 * PEs with shmem_double_sum_to_all, as those benchmarks do:
 *
 *   put_mr        SIZE  a stream of shmem_putmem to the partner, shmem_quiet after every 64
 *                       and at the end; messages per second of all pairs together: pairs x
 *                       messages / the first half's mean time, 1 B to 32 KiB x8 (Mmsg/s)
 *   amo_fetch_add    8  shmem_long_atomic_fetch_add on the partner, one op after the other,
 *                       word i % AMO_WORDS of a symmetric array for op i; the first half's
 *                       mean time per op (us); likewise
 *   amo_fetch_inc, amo_add, amo_inc, amo_compare_swap, amo_swap, amo_fetch, amo_set
 *                       (the non-fetching ones, add, inc and set, end with a shmem_quiet
 *                       in the time)
 *
 * The collectives, in the forms every OpenSHMEM library has (the active-set forms of 1.4,
 * over all PEs, with pSync arrays used in turn), one after the other on every PE; SIZE is
 * the bytes of one PE's block, 8 B to 1 MiB x8 (at most MAX / PEs); the time per call is
 * the mean of every PE's own (as the OSU benchmarks report it: a broadcast's root alone
 * may return long before the others have the data):
 *
 *   bcast         SIZE  shmem_broadcast64 from PE 0, then shmem_barrier_all (us)
 *   collect       SIZE  shmem_collect64, every PE the same count (us)
 *   fcollect      SIZE  shmem_fcollect64 (us)
 *   reduce        SIZE  shmem_long_sum_to_all of SIZE bytes (us); its dest holds one block,
 *                       not one per PE, so its sizes go on to MAX (8 B ... x8)
 *   floor         SIZE  every PE at once copies 2 (PEs - 1) / PEs x SIZE bytes (at least 1)
 *                       with one memcpy between two private buffers: the bytes an all-reduce
 *                       of SIZE bytes must move and add per PE, at this machine's memcpy
 *                       bandwidth, with the PEs sharing the CPUs and memory as they do in
 *                       reduce; at reduce's sizes (us; the reference of reduce, no library call)
 *   alltoall      SIZE  shmem_alltoall64 (us)
 *
 * Before timing them it checks one call of each (exit status 1 if one is wrong).
 */
#define _POSIX_C_SOURCE 200809L

#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MAX_SIZE (16L << 20)
#define MAX_REPS 101
#define MAX_ITERS (1L << 24)
#define WINDOW 64            /* puts between two quiets in the bandwidth tests */
#define SETTLE_NS 10000000L  /* the time a waiting target gets to fall asleep (10 ms) */
#define SPIN_LIMIT_S 60.0    /* a spinning target gives up after this (a library that never delivers) */
#define COLL_MAX_BLOCK (1L << 20) /* the largest block of the collectives */
#define CHECK_LONGS 4             /* longs per PE of check_collectives */

/* Words of the symmetric control array. */
enum { C_SHARE, C_WAKE, C_PP, C_WORD, C_COUNT };

static int me, npes;
static char static_target[64]; /* symmetric: a static of the program (put_lat_static) */
static shmem_ctx_t ctx;        /* a private context (put_lat_ctx), or SHMEM_CTX_DEFAULT */
static long *ctl;       /* symmetric, C_COUNT words */
static char *buf;       /* symmetric: what puts write and gets read on PE 1 */
static char *loc;       /* symmetric: the source of puts, the destination of gets */
static int reps = 7;
static double target_s = 0.020;
static long max_size = DEFAULT_MAX_SIZE;
static const char *only = NULL;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* PE 0's value, on every PE. */
static long share(long value)
{
    if (me == 0) {
        for (int pe = 1; pe < npes; pe++)
            shmem_long_p(&ctl[C_SHARE], value, pe);
        shmem_quiet();
    }
    shmem_barrier_all();
    long got = me == 0 ? value : *(volatile long *)&ctl[C_SHARE];
    shmem_barrier_all(); /* nobody writes the next value before everybody has read this one */
    return got;
}

/* A kernel runs n operations of one test on every PE (collective) and returns the seconds
 * PE 0 measured (0 elsewhere). */
typedef double (*kernel_fn)(long n, size_t size);

/* n puts of 8 bytes, each completed by a quiet before the next, the target in the barrier.
 * A macro rather than a function pointer, so that the timed loop calls the library
 * directly. */
#define PUT_LAT_KERNEL(name, put_call, quiet_call)      \
    static double name(long n, size_t size)             \
    {                                                   \
        double t = 0;                                   \
        shmem_barrier_all();                            \
        if (me == 0) {                                  \
            double t0 = now();                          \
            for (long i = 0; i < n; i++) {              \
                put_call;                               \
                quiet_call;                             \
            }                                           \
            t = now() - t0;                             \
        }                                               \
        shmem_barrier_all();                            \
        return t;                                       \
    }

PUT_LAT_KERNEL(k_put_lat_barrier, shmem_putmem(buf, loc, size, 1), shmem_quiet())
PUT_LAT_KERNEL(k_put_lat_static, shmem_putmem(static_target, loc, size, 1), shmem_quiet())
PUT_LAT_KERNEL(k_put_lat_ctx, shmem_ctx_putmem(ctx, buf, loc, size, 1), shmem_ctx_quiet(ctx))

/* The target waits for ctl[C_WAKE], which PE 0 sets after the timed loop: asleep in
 * shmem_long_wait_until, or spinning on it in user code. */
static double put_lat_waiting(long n, size_t size, int spin)
{
    double t = 0;
    ctl[C_WAKE] = 0;
    shmem_barrier_all();
    if (me == 0) {
        nap(SETTLE_NS);
        double t0 = now();
        for (long i = 0; i < n; i++) {
            shmem_putmem(buf, loc, size, 1);
            shmem_quiet();
        }
        t = now() - t0;
        shmem_long_p(&ctl[C_WAKE], 1, 1);
        shmem_quiet();
    } else if (me == 1) {
        if (spin) {
            volatile long *w = &ctl[C_WAKE];
            double give_up = now() + SPIN_LIMIT_S;
            unsigned long k = 0;
            while (*w == 0) {
                if ((++k & 0xfffff) == 0 && now() > give_up) {
                    fprintf(stderr, "# PE 1: put_lat_spin: the wake-up word never arrived in %.0f s while "
                                    "spinning; the library seems to need the target's progress\n",
                            SPIN_LIMIT_S);
                    shmem_long_wait_until(&ctl[C_WAKE], SHMEM_CMP_NE, 0);
                    break;
                }
            }
        } else {
            shmem_long_wait_until(&ctl[C_WAKE], SHMEM_CMP_NE, 0);
        }
    }
    shmem_barrier_all();
    return t;
}

static double k_put_lat_asleep(long n, size_t size) { return put_lat_waiting(n, size, 0); }
static double k_put_lat_spin(long n, size_t size) { return put_lat_waiting(n, size, 1); }

static double k_p_lat(long n, size_t size)
{
    (void)size;
    double t = 0;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (long i = 0; i < n; i++) {
            shmem_long_p(&ctl[C_WORD], i, 1);
            shmem_quiet();
        }
        t = now() - t0;
    }
    shmem_barrier_all();
    return t;
}

/* A stream of blocking gets by PE 0: get_lat (8 B) and get_bw time the same loop. */
static double k_get_stream(long n, size_t size)
{
    double t = 0;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (long i = 0; i < n; i++)
            shmem_getmem(loc, buf, size, 1);
        t = now() - t0;
    }
    shmem_barrier_all();
    return t;
}

static double k_g_lat(long n, size_t size)
{
    (void)size;
    double t = 0;
    long sum = 0;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (long i = 0; i < n; i++)
            sum += shmem_long_g(&ctl[C_WORD], 1);
        t = now() - t0;
    }
    shmem_barrier_all();
    if (sum == -1) /* keeps the loads */
        printf("#\n");
    return t;
}

/* Half round trip: t / (2 n) is taken by the caller through the count 2 n. */
static double k_pingpong(long n, size_t size)
{
    (void)size;
    double t = 0;
    ctl[C_PP] = 0;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (long i = 1; i <= n; i++) {
            shmem_long_p(&ctl[C_PP], i, 1);
            shmem_long_wait_until(&ctl[C_PP], SHMEM_CMP_GE, i);
        }
        t = now() - t0;
    } else if (me == 1) {
        for (long i = 1; i <= n; i++) {
            shmem_long_wait_until(&ctl[C_PP], SHMEM_CMP_GE, i);
            shmem_long_p(&ctl[C_PP], i, 0);
        }
    }
    shmem_barrier_all();
    return t;
}

/* The spin-loop hint of the CPU, as both libraries' waits use it. */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

static void await_at_least(long *word, long value)
{
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value)
        CPU_RELAX();
}

/* pingpong through shmem_ptr: the floor of k_pingpong on this library's memory. */
static double k_pingpong_ptr(long n, size_t size)
{
    (void)size;
    double t = 0;
    ctl[C_PP] = 0;
    long *peer = me < 2 ? shmem_ptr(&ctl[C_PP], 1 - me) : NULL;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (long i = 1; i <= n; i++) {
            __atomic_store_n(peer, i, __ATOMIC_RELEASE);
            await_at_least(&ctl[C_PP], i);
        }
        t = now() - t0;
    } else if (me == 1) {
        for (long i = 1; i <= n; i++) {
            await_at_least(&ctl[C_PP], i);
            __atomic_store_n(peer, i, __ATOMIC_RELEASE);
        }
    }
    shmem_barrier_all();
    return t;
}

/* Nonzero on every PE when PEs 0 and 1 both have a shmem_ptr address of each other's words. */
static int ptr_mapped(void)
{
    ctl[C_WORD] = me < 2 && shmem_ptr(&ctl[C_PP], 1 - me) != NULL;
    shmem_barrier_all();
    long both = shmem_long_g(&ctl[C_WORD], 0) && shmem_long_g(&ctl[C_WORD], 1);
    shmem_barrier_all();
    ctl[C_WORD] = 0;
    shmem_barrier_all();
    return (int)both;
}

static double k_barrier(long n, size_t size)
{
    (void)size;
    shmem_barrier_all();
    double t0 = now();
    for (long i = 0; i < n; i++)
        shmem_barrier_all();
    double t = now() - t0;
    shmem_barrier_all();
    return me == 0 ? t : 0;
}

/* A stream of puts from PE 0, a quiet after every WINDOW and at the end.  A macro rather than
 * a function pointer, so that the timed loop calls the library directly. */
#define PUT_STREAM_KERNEL(name, put_fn)                     \
    static double name(long n, size_t size)                 \
    {                                                       \
        double t = 0;                                       \
        shmem_barrier_all();                                \
        if (me == 0) {                                      \
            double t0 = now();                              \
            for (long i = 0; i < n; i++) {                  \
                put_fn(buf, loc, size, 1);                  \
                if ((i + 1) % WINDOW == 0)                  \
                    shmem_quiet();                          \
            }                                               \
            shmem_quiet();                                  \
            t = now() - t0;                                 \
        }                                                   \
        shmem_barrier_all();                                \
        return t;                                           \
    }

PUT_STREAM_KERNEL(k_put_bw, shmem_putmem)
PUT_STREAM_KERNEL(k_put_nbi_bw, shmem_putmem_nbi)

/* ---- pairs: message rate and atomics ------------------------------------------------- */

/* The active-set forms (the pairs' sum, the collectives) are deprecated in OpenSHMEM 1.5, but
 * Open MPI 4.1's OSHMEM (1.4) has no team-based collectives: these are the forms both
 * libraries have. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define AMO_WORDS 512 /* the atomics' targets, op i on word i % AMO_WORDS */

static long *amo;                       /* symmetric, AMO_WORDS */
static double *pe_value, *pe_sum;       /* symmetric: one double each, the sum's source and dest */
static double *sum_pwrk;                /* symmetric, SHMEM_REDUCE_MIN_WRKDATA_SIZE */
static long *sum_psync;                 /* symmetric, SHMEM_REDUCE_SYNC_SIZE */
static long amo_sink;                   /* what the fetching atomics return, kept */

static int pairs(void) { return npes / 2; }

/* The sum of every PE's value, on every PE. */
static double sum_over_pes(double value)
{
    *pe_value = value;
    shmem_double_sum_to_all(pe_sum, pe_value, 1, 0, 0, npes, sum_pwrk, sum_psync);
    shmem_barrier_all(); /* every PE has left the sum before its pSync is used again */
    return *pe_sum;
}

/* n operations of body by each PE of the first half on its partner, then a quiet; the
 * first half's mean time.  A macro, so that the timed loop calls the library directly. */
#define PAIR_KERNEL(name, body)                             \
    static double name(long n, size_t size)                 \
    {                                                       \
        (void)size;                                         \
        double t = 0;                                       \
        shmem_barrier_all();                                \
        if (me < pairs()) {                                 \
            int peer = me + pairs();                        \
            double t0 = now();                              \
            for (long i = 0; i < n; i++) {                  \
                long *word = &amo[i % AMO_WORDS];           \
                (void)word;                                 \
                body;                                       \
            }                                               \
            shmem_quiet();                                  \
            t = now() - t0;                                 \
        }                                                   \
        return sum_over_pes(t) / pairs();                   \
    }

PAIR_KERNEL(k_put_mr, shmem_putmem(buf, loc, size, peer); if ((i + 1) % WINDOW == 0) shmem_quiet())
PAIR_KERNEL(k_amo_fetch_add, amo_sink += shmem_long_atomic_fetch_add(word, 1, peer))
PAIR_KERNEL(k_amo_fetch_inc, amo_sink += shmem_long_atomic_fetch_inc(word, peer))
PAIR_KERNEL(k_amo_add, shmem_long_atomic_add(word, 1, peer))
PAIR_KERNEL(k_amo_inc, shmem_long_atomic_inc(word, peer))
PAIR_KERNEL(k_amo_compare_swap, amo_sink += shmem_long_atomic_compare_swap(word, i, i + 1, peer))
PAIR_KERNEL(k_amo_swap, amo_sink += shmem_long_atomic_swap(word, i, peer))
PAIR_KERNEL(k_amo_fetch, amo_sink += shmem_long_atomic_fetch(word, peer))
PAIR_KERNEL(k_amo_set, shmem_long_atomic_set(word, i, peer))

/* Before timing them: each PE of the first half adds 1..3 to word 1 of its partner, with
 * fetch_add, and a put of 8 bytes carries its number there; the partner checks both, and
 * the sum of every PE's number is checked.  Exits on a mismatch. */
static void check_pairs(void)
{
    int bad = 0;
    amo[1] = 0;
    shmem_barrier_all();
    if (me < pairs()) {
        int peer = me + pairs();
        for (long k = 1; k <= 3; k++)
            bad |= shmem_long_atomic_fetch_add(&amo[1], k, peer) != k * (k - 1) / 2;
        long mine = me;
        shmem_putmem(&amo[2], &mine, sizeof mine, peer);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me >= pairs() && me < 2 * pairs())
        bad |= amo[1] != 6 || amo[2] != me - pairs();
    bad |= sum_over_pes(me) != (double)npes * (npes - 1) / 2;
    if (sum_over_pes(bad)) {
        if (me == 0)
            fprintf(stderr, "bench: the check of the pairs' atomics, put or sum gave a wrong result\n");
        shmem_global_exit(1);
    }
    memset(amo, 0, AMO_WORDS * sizeof(long));
    shmem_barrier_all();
}

/* ---- collectives ----------------------------------------------------------------------- */

/* Two of each work array, used in turn: a pSync may be used again once every PE has left
 * the collective that used it, which the call in between guarantees where every PE needs
 * every other's data to leave it.  A broadcast's root needs nobody's, so each broadcast is
 * followed by a barrier (in its time, for both libraries alike). */
#define SYNC_LEN (SHMEM_BCAST_SYNC_SIZE + SHMEM_COLLECT_SYNC_SIZE + SHMEM_REDUCE_SYNC_SIZE + \
                  SHMEM_ALLTOALL_SYNC_SIZE)
static long *psync[2];
static long *pwrk[2]; /* shmem_long_sum_to_all's, for MAX / 8 elements (reduce goes on to MAX) */
/* The mean of every PE's t, on every PE. */
static double mean_over_pes(double t)
{
    return sum_over_pes(t) / npes;
}

#define COLL_KERNEL(name, call)                             \
    static double name(long n, size_t size)                 \
    {                                                       \
        size_t nelems = size / 8;                           \
        (void)nelems;                                       \
        shmem_barrier_all();                                \
        double t0 = now();                                  \
        for (long i = 0; i < n; i++) {                      \
            long *ps = psync[i & 1], *pw = pwrk[i & 1];     \
            (void)pw;                                       \
            call;                                           \
        }                                                   \
        return mean_over_pes(now() - t0);                   \
    }

COLL_KERNEL(k_bcast, shmem_broadcast64(buf, loc, nelems, 0, 0, 0, npes, ps); shmem_barrier_all())
COLL_KERNEL(k_collect, shmem_collect64(buf, loc, nelems, 0, 0, npes, ps))
COLL_KERNEL(k_fcollect, shmem_fcollect64(buf, loc, nelems, 0, 0, npes, ps))
COLL_KERNEL(k_reduce, shmem_long_sum_to_all((long *)buf, (long *)loc, (int)nelems, 0, 0, npes, pw, ps))
COLL_KERNEL(k_alltoall, shmem_alltoall64(buf, loc, nelems, 0, 0, npes, ps))

/* The floor's buffers: private (malloc), 2 x MAX each, written once before any timing. */
static char *floor_from, *floor_to;
/* memcpy called through a volatile pointer: the compiler may not drop copies nobody reads. */
static void *(*volatile copy_bytes)(void *, const void *, size_t) = memcpy;

/* What an all-reduce of size bytes moves per PE: its share of the others' data to add, then
 * the others' reduced shares to fetch, 2 (n - 1) / n x size; at least one byte. */
static size_t floor_bytes(size_t size)
{
    size_t bytes = 2 * (size_t)(npes - 1) * size / (size_t)npes;
    return bytes ? bytes : 1;
}

static double k_floor(long n, size_t size)
{
    size_t bytes = floor_bytes(size);
    shmem_barrier_all();
    double t0 = now();
    for (long i = 0; i < n; i++)
        copy_bytes(floor_to, floor_from, bytes);
    return mean_over_pes(now() - t0);
}

/* One call of each collective on CHECK_LONGS longs per PE, checked on every PE; exits on a
 * mismatch. */
static void check_collectives(void)
{
    long *src = (long *)loc, *dst = (long *)buf;
    int bad = 0;
    for (int k = 0; k < CHECK_LONGS * npes; k++)
        src[k] = 1000L * me + k;
    shmem_barrier_all();
    shmem_long_sum_to_all(dst, src, CHECK_LONGS, 0, 0, npes, pwrk[0], psync[0]);
    for (int k = 0; k < CHECK_LONGS; k++)
        bad |= dst[k] != 1000L * npes * (npes - 1) / 2 + (long)npes * k;
    shmem_barrier_all(); /* dest is read before the next call writes it */
    shmem_fcollect64(dst, src, CHECK_LONGS, 0, 0, npes, psync[1]);
    for (int k = 0; k < CHECK_LONGS * npes; k++)
        bad |= dst[k] != 1000L * (k / CHECK_LONGS) + k % CHECK_LONGS;
    shmem_barrier_all();
    shmem_alltoall64(dst, src, CHECK_LONGS, 0, 0, npes, psync[0]);
    for (int k = 0; k < CHECK_LONGS * npes; k++)
        bad |= dst[k] != 1000L * (k / CHECK_LONGS) + (long)CHECK_LONGS * me + k % CHECK_LONGS;
    shmem_barrier_all();
    dst[0] = -1;
    shmem_broadcast64(dst, src, CHECK_LONGS, 0, 0, 0, npes, psync[1]);
    bad |= me == 0 ? dst[0] != -1 : dst[CHECK_LONGS - 1] != CHECK_LONGS - 1;
    shmem_barrier_all();
    shmem_collect64(dst, src, 2, 0, 0, npes, psync[0]);
    for (int k = 0; k < 2 * npes; k++)
        bad |= dst[k] != 1000L * (k / 2) + k % 2;
    if (bad) /* counted on PE 0: a plain put of 0 from another PE could hide it */
        shmem_long_atomic_add(&ctl[C_WORD], 1, 0);
    shmem_barrier_all();
    if (share(me == 0 ? ctl[C_WORD] : 0)) {
        if (me == 0)
            fprintf(stderr, "bench: a collective gave a wrong result\n");
        shmem_global_exit(1);
    }
    ctl[C_WORD] = 0;
    shmem_barrier_all();
}

/* The iteration count for one repetition of about target_s, decided on PE 0. */
static long calibrate(kernel_fn k, size_t size)
{
    long n = 1;
    for (;;) {
        double t = k(n, size);
        long next = 0; /* > 0: try that many; < 0: use -next */
        if (me == 0) {
            if (t >= target_s / 8 || n >= MAX_ITERS) {
                double want = t > 0 ? (double)n * target_s / t : (double)MAX_ITERS;
                if (want > MAX_ITERS)
                    want = MAX_ITERS;
                if (want < 1)
                    want = 1;
                next = -(long)want;
            } else {
                next = n * 8;
            }
        }
        next = share(next);
        if (next < 0)
            return -next;
        n = next;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int wanted(const char *name)
{
    if (!only)
        return 1;
    size_t len = strlen(name);
    for (const char *p = only; *p;) {
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0)
            return 1;
        p += l + (end ? 1 : 0);
    }
    return 0;
}

/* Median seconds per operation (ops_per_iter operations in each of the n iterations). */
static double median_per_op(kernel_fn k, size_t size, double ops_per_iter)
{
    long n = calibrate(k, size);
    double v[MAX_REPS];
    for (int r = 0; r < reps; r++)
        v[r] = k(n, size) / ((double)n * ops_per_iter);
    qsort(v, (size_t)reps, sizeof v[0], cmp_double);
    return reps % 2 ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
}

static void latency(const char *name, kernel_fn k, size_t size, double ops_per_iter)
{
    if (!wanted(name))
        return;
    double s = median_per_op(k, size, ops_per_iter);
    if (me == 0) {
        printf("%s %zu %.4f us\n", name, size, s * 1e6);
        fflush(stdout);
    }
}

/* A collective at block sizes 8 B, 64 B, ... x8, up to what dest holds for every PE. */
static void collective(const char *name, kernel_fn k)
{
    if (!wanted(name))
        return;
    long largest = max_size / npes < COLL_MAX_BLOCK ? max_size / npes : COLL_MAX_BLOCK;
    for (long size = 8; size <= largest; size *= 8)
        latency(name, k, (size_t)size, 1.0);
}

/* A reduction at sizes 8 B, 64 B, ... x8, up to MAX: its dest holds one block. */
static void reduction(const char *name, kernel_fn k)
{
    if (!wanted(name))
        return;
    for (long size = 8; size <= max_size; size *= 8)
        latency(name, k, (size_t)size, 1.0);
}

/* Messages per second of all pairs together, at 1 B, 8 B, ... x8 up to 32 KiB (and MAX). */
static void message_rate(const char *name, kernel_fn k)
{
    if (!wanted(name))
        return;
    for (long size = 1; size <= max_size && size <= (32L << 10); size *= 8) {
        double s = median_per_op(k, (size_t)size, 1.0);
        if (me == 0) {
            printf("%s %ld %.4f Mmsg/s\n", name, size, pairs() / s / 1e6);
            fflush(stdout);
        }
    }
}

static void bandwidth(const char *name, kernel_fn k)
{
    if (!wanted(name))
        return;
    for (long size = 8;; size *= 4) {
        if (size > max_size)
            size = max_size;
        double s = median_per_op(k, (size_t)size, 1.0);
        if (me == 0) {
            printf("%s %ld %.4f GB/s\n", name, size, (double)size / s / 1e9);
            fflush(stdout);
        }
        if (size == max_size)
            break;
    }
}

/* Before any timing: the puts and gets of the sizes measured really move the data, so a
 * library that returned early (or a broken mapping) cannot look fast.  Exits on a mismatch. */
static void check_transfers(void)
{
    int bad = 0;
    if (me == 0) {
        for (long i = 0; i < max_size; i++)
            loc[i] = (char)(i * 7 + 3);
        shmem_putmem_nbi(buf, loc, (size_t)max_size, 1);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 1) {
        for (long i = 0; i < max_size && !bad; i++)
            bad = buf[i] != (char)(i * 7 + 3);
        shmem_long_p(&ctl[C_WORD], bad, 0);
        shmem_quiet();
        ctl[C_WORD] = 4242; /* PE 1's own word, for PE 0's shmem_long_g */
    }
    shmem_barrier_all();
    if (me == 0) {
        bad = ctl[C_WORD] != 0;
        memset(loc, 0, (size_t)max_size);
        shmem_getmem(loc, buf, (size_t)max_size, 1);
        for (long i = 0; i < max_size && !bad; i++)
            bad = loc[i] != (char)(i * 7 + 3);
        bad |= shmem_long_g(&ctl[C_WORD], 1) != 4242;
    }
    if (share(bad)) {
        if (me == 0)
            fprintf(stderr, "bench: the check of put and get (%ld bytes to PE 1 and back) failed\n", max_size);
        shmem_global_exit(1);
    }
    ctl[C_WORD] = 0;
    memset(buf, 1, (size_t)max_size);
    memset(loc, 2, (size_t)max_size);
    shmem_barrier_all();
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [-r REPS (1..%d)] [-t MS] [-m MAX_BYTES] [-T test,test,...]\n", argv0, MAX_REPS);
    exit(2);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage(argv[0]);
        const char *opt = argv[i], *val = argv[++i];
        if (strcmp(opt, "-r") == 0)
            reps = atoi(val);
        else if (strcmp(opt, "-t") == 0)
            target_s = atof(val) / 1e3;
        else if (strcmp(opt, "-m") == 0)
            max_size = atol(val);
        else if (strcmp(opt, "-T") == 0)
            only = val;
        else
            usage(argv[0]);
    }
    if (reps < 1 || reps > MAX_REPS || !(target_s > 0) || max_size < 8)
        usage(argv[0]);

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "bench: needs at least 2 PEs, got %d\n", npes);
        shmem_finalize();
        return 2;
    }
    /* check_collectives uses CHECK_LONGS longs per PE whatever the largest message is. */
    size_t check_bytes = CHECK_LONGS * sizeof(long) * (size_t)npes;
    size_t buf_bytes = (size_t)max_size > check_bytes ? (size_t)max_size : check_bytes;
    ctl = shmem_malloc(C_COUNT * sizeof(long));
    buf = shmem_malloc(buf_bytes);
    loc = shmem_malloc(buf_bytes);
    for (int k = 0; k < 2; k++) {
        psync[k] = shmem_malloc(SYNC_LEN * sizeof(long));
        pwrk[k] = shmem_malloc(((size_t)max_size / 16 + SHMEM_REDUCE_MIN_WRKDATA_SIZE) * sizeof(long));
        if (!psync[k] || !pwrk[k])
            buf = NULL; /* reported below */
        else
            for (int i = 0; i < SYNC_LEN; i++)
                psync[k][i] = SHMEM_SYNC_VALUE;
    }
    amo = shmem_malloc(AMO_WORDS * sizeof(long));
    pe_value = shmem_malloc(sizeof(double));
    pe_sum = shmem_malloc(sizeof(double));
    sum_pwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(double));
    sum_psync = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
    if (!amo || !pe_value || !pe_sum || !sum_pwrk || !sum_psync)
        buf = NULL; /* reported below */
    else
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            sum_psync[i] = SHMEM_SYNC_VALUE;
    if (!ctl || !buf || !loc) {
        fprintf(stderr, "bench: PE %d: shmem_malloc of %ld bytes failed\n", me, max_size);
        shmem_global_exit(1);
    }
    floor_from = malloc(2 * (size_t)max_size);
    floor_to = malloc(2 * (size_t)max_size);
    if (!floor_from || !floor_to) {
        fprintf(stderr, "bench: PE %d: malloc of 2 x %ld bytes failed\n", me, 2 * max_size);
        shmem_global_exit(1);
    }
    memset(floor_from, 3, 2 * (size_t)max_size);
    memset(floor_to, 4, 2 * (size_t)max_size);
    memset(ctl, 0, C_COUNT * sizeof(long));
    memset(buf, 1, (size_t)max_size);
    memset(loc, 2, (size_t)max_size);
    shmem_barrier_all();

    if (me == 0) {
        char name[SHMEM_MAX_NAME_LEN];
        shmem_info_get_name(name);
        printf("# library %s\n# pes %d reps %d ms_per_rep %g max_size %ld\n", name, npes, reps, target_s * 1e3,
               max_size);
        fflush(stdout);
    }

    check_transfers();
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT; /* a library out of contexts: the default one, and say so */
    if (me == 0 && ctx == SHMEM_CTX_DEFAULT)
        printf("# put_lat_ctx uses SHMEM_CTX_DEFAULT: shmem_ctx_create failed\n");

    latency("put_lat_barrier", k_put_lat_barrier, 8, 1.0);
    latency("put_lat_asleep", k_put_lat_asleep, 8, 1.0);
    latency("put_lat_spin", k_put_lat_spin, 8, 1.0);
    latency("p_lat", k_p_lat, 8, 1.0);
    latency("put_lat_static", k_put_lat_static, 8, 1.0);
    latency("put_lat_ctx", k_put_lat_ctx, 8, 1.0);
    latency("get_lat", k_get_stream, 8, 1.0);
    latency("g_lat", k_g_lat, 8, 1.0);
    latency("pingpong", k_pingpong, 8, 2.0);
    if (wanted("pingpong_ptr") && ptr_mapped())
        latency("pingpong_ptr", k_pingpong_ptr, 8, 2.0);
    latency("barrier", k_barrier, 0, 1.0);
    bandwidth("put_bw", k_put_bw);
    bandwidth("put_nbi_bw", k_put_nbi_bw);
    bandwidth("get_bw", k_get_stream);
    check_pairs();
    message_rate("put_mr", k_put_mr);
    latency("amo_fetch_add", k_amo_fetch_add, 8, 1.0);
    latency("amo_fetch_inc", k_amo_fetch_inc, 8, 1.0);
    latency("amo_add", k_amo_add, 8, 1.0);
    latency("amo_inc", k_amo_inc, 8, 1.0);
    latency("amo_compare_swap", k_amo_compare_swap, 8, 1.0);
    latency("amo_swap", k_amo_swap, 8, 1.0);
    latency("amo_fetch", k_amo_fetch, 8, 1.0);
    latency("amo_set", k_amo_set, 8, 1.0);
    check_collectives();
    collective("bcast", k_bcast);
    collective("collect", k_collect);
    collective("fcollect", k_fcollect);
    reduction("reduce", k_reduce);
    reduction("floor", k_floor);
    collective("alltoall", k_alltoall);

    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (me == 0) { /* every test ran: what the library does in shmem_finalize no longer counts */
        printf("# end\n");
        fflush(stdout);
    }
    shmem_free(loc);
    shmem_free(buf);
    shmem_free(ctl);
    shmem_free(sum_psync);
    shmem_free(sum_pwrk);
    shmem_free(pe_sum);
    shmem_free(pe_value);
    shmem_free(amo);
    free(floor_to);
    free(floor_from);
    shmem_finalize();
    return 0;
}
