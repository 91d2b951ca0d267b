/*
 * soak.c - a long run of the library's everyday calls, to show that nothing grows with
 * time: no leaked memory, no leaked file descriptors, no wrong data.
 *
 *   soak [--pes N] [--cycles N] [--ops N] [--streams N] [--rss-tolerance-kib N]
 *
 * N PEs (default 8) first do --cycles collective alloc/free cycles (default 10000; sizes
 * 64 B .. 1 MiB on both heaps, each checked by a put to the right neighbour), then --ops
 * checked puts and --ops puts-with-signal in total (default 1000000 each, split over the
 * PEs, around the ring in flow-controlled windows), then --streams cycles (default 1000)
 * of: create a stream, put and signal on it, launch a kernel, synchronize, destroy, then
 * --ops / N checked int64 fetch-adds and as many compare-swap increments per PE.  Every PE measures its resident memory
 * (/proc/self/status) and its open file descriptors (/proc/self/fd) after a warm-up, after
 * the alloc/free phase and at the end; PE 0 prints a table.  The run fails when any data
 * check fails, when a PE's descriptor count changed, or when its resident memory grew by
 * more than the tolerance (default 256 KiB, see check_flat).
 *
 * `meson test --suite soak` runs the full size (minutes); the test `soak_smoke` of the
 * default run does a small one, so the program keeps working.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Under a sanitizer, resident memory is mostly the runtime's (ASan's quarantine keeps freed
 * blocks, TSan's shadow grows with what is touched): it is shown but not checked there;
 * LeakSanitizer looks for leaks instead (the harness runs it at the end of each PE). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SOAK_SANITIZED 1
#endif
#endif
#ifdef SOAK_SANITIZED
static const int g_check_rss = 0;
#else
static const int g_check_rss = 1;
#endif

/* ---- settings ----------------------------------------------------------------------- */
typedef struct soak_config {
    int pes;
    long cycles;        /* collective alloc/free cycles */
    long ops;           /* checked puts (and as many puts-with-signal), whole job */
    long streams;       /* stream create / use / destroy cycles, each PE */
    long rss_tolerance_kib;
} soak_config;

static soak_config g_cfg = {
    .pes = 8, .cycles = 10000, .ops = 1000000, .streams = 1000, .rss_tolerance_kib = 256,
};

enum {
    WINDOW = 256,        /* operations in flight from one PE to its right neighbour */
    SIZE_STEPS = 15,     /* allocation sizes 64 B << 0..14, i.e. up to 1 MiB */
    WARMUP_CYCLES = 2 * 2 * SIZE_STEPS, /* every size on both heaps, twice */
    WARMUP_ROUNDS = 2,
    WARMUP_STREAMS = 4,
    WARMUP_AMOS = 64,    /* of each kind, each PE */
    KERNEL_BLOCKS = 4,
    SNAPSHOTS = 3,       /* after warm-up, after alloc/free, at the end */
};

/* ---- what a PE measures ------------------------------------------------------------- */
typedef struct usage {
    long vm_rss_kib;
    long rss_anon_kib;  /* private memory: where a malloc leak shows */
    long rss_shmem_kib; /* touched pages of the symmetric heaps (own and peers') */
    long fds;
} usage;

typedef struct pe_report {
    usage at[SNAPSHOTS];
    double alloc_seconds;
    double put_seconds;
    double stream_seconds;
    double amo_seconds;
    long data_errors;
} pe_report;

static pe_report g_mine; /* this PE's */

static long status_field_kib(const char *text, const char *name)
{
    const char *line = strstr(text, name);
    return line ? strtol(line + strlen(name), NULL, 10) : -1;
}

static long count_open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    long n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n - 1; /* the directory's own descriptor */
}

static usage measure(void)
{
    usage u = { -1, -1, -1, count_open_fds() };
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return u;
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    u.vm_rss_kib = status_field_kib(text, "VmRSS:");
    u.rss_anon_kib = status_field_kib(text, "RssAnon:");
    u.rss_shmem_kib = status_field_kib(text, "RssShmem:");
    return u;
}

/* ---- the values that travel: a mix of the sender, the operation and the slot, so that a
 * stale value from an earlier round or another PE never passes for the right one ------- */
static int64_t expected_value(int sender, long op, int slot)
{
    uint64_t x = ((uint64_t)sender << 48) ^ ((uint64_t)op << 1) ^ (uint64_t)slot;
    x += 0x9e3779b97f4a7c15ULL; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return (int64_t)(x ^ (x >> 31));
}

/* ---- phase 1: collective alloc/free cycles -------------------------------------------- */
static size_t cycle_size(long cycle)
{
    return (size_t)64 << (cycle / 2 % SIZE_STEPS);
}

static aclshmem_mem_type_t cycle_heap(long cycle)
{
    return cycle % 2 ? HOST_SIDE : DEVICE_SIDE;
}

/* One cycle: allocate, put a value into the right neighbour's last word, check the one
 * from the left, free.  Returns the number of wrong values (0 or 1). */
static long alloc_free_cycle(long cycle, int me, int n)
{
    size_t size = cycle_size(cycle);
    aclshmem_mem_type_t heap = cycle_heap(cycle);
    int64_t *block = aclshmemx_malloc(size, heap);
    ASSERT_NOT_NULL(block);
    size_t last = size / sizeof *block - 1;
    block[0] = cycle; /* touches the first page too */
    aclshmem_int64_p(&block[last], expected_value(me, cycle, 0), (me + 1) % n);
    aclshmem_barrier_all();
    long wrong = block[last] != expected_value((me + n - 1) % n, cycle, 0);
    if (wrong)
        harness_log("cycle %ld: wrong value from the left in a %zu-byte block", cycle, size);
    aclshmemx_free(block, heap);
    return wrong;
}

static long alloc_free_phase(long first, long count, int me, int n)
{
    long wrong = 0;
    for (long cycle = first; cycle < first + count; cycle++)
        wrong += alloc_free_cycle(cycle, me, n);
    return wrong;
}

/* ---- phase 2: puts and puts-with-signal around the ring ------------------------------- */
typedef struct ring_state {
    int64_t *inbox;    /* 2 * WINDOW slots: even ones by plain puts, odd ones with a signal */
    int32_t *arrived;  /* puts-with-signal received so far (ACLSHMEM_SIGNAL_ADD 1 each) */
    int32_t *checked;  /* the last round the right neighbour has checked */
    int64_t *ack_word; /* where the acknowledgement's own 8 bytes land */
} ring_state;

static void send_round(const ring_state *s, long round, int me, int right)
{
    if (round > 1) /* the right neighbour has checked the previous round: its slots are free */
        aclshmem_signal_wait_until(s->checked, ACLSHMEM_CMP_GE, (int32_t)(round - 1));
    for (int k = 0; k < WINDOW; k++) {
        long op = (round - 1) * WINDOW + k;
        aclshmem_int64_p(&s->inbox[2 * k], expected_value(me, op, 0), right);
        aclshmem_fence(); /* the plain put lands before the signal that announces the slot */
        int64_t v = expected_value(me, op, 1);
        aclshmemx_putmem_signal(&s->inbox[2 * k + 1], &v, sizeof v, s->arrived, 1, ACLSHMEM_SIGNAL_ADD,
                                right);
    }
}

static long check_round(const ring_state *s, long round, int me, int left)
{
    aclshmem_signal_wait_until(s->arrived, ACLSHMEM_CMP_GE, (int32_t)(round * WINDOW));
    long wrong = 0;
    for (int k = 0; k < 2 * WINDOW; k++)
        wrong += s->inbox[k] != expected_value(left, (round - 1) * WINDOW + k / 2, k % 2);
    if (wrong)
        harness_log("round %ld: %ld wrong values from PE %d", round, wrong, left);
    int64_t ack = round;
    aclshmemx_putmem_signal(s->ack_word, &ack, sizeof ack, s->checked, (int32_t)round, ACLSHMEM_SIGNAL_SET,
                            left);
    (void)me;
    return wrong;
}

static long ring_phase(const ring_state *s, long first_round, long rounds, int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long wrong = 0;
    for (long round = first_round; round < first_round + rounds; round++) {
        send_round(s, round, me, right);
        wrong += check_round(s, round, me, left);
    }
    return wrong;
}

/* ---- phase 3: streams and kernels: each has threads, the first place a leak would hide --- */
typedef struct stream_state {
    int64_t *slot;     /* the left neighbour's value of the cycle, put on its stream */
    int32_t *arrived;  /* stream cycles received (signal ADD 1 on the sender's stream) */
    int kernel_blocks_run;
} stream_state;

static void count_block(uint32_t block_idx, uint32_t block_dim, void *arg)
{
    (void)block_idx;
    (void)block_dim;
    __atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED);
}

/* One cycle; the source of the put lives until the stream is synchronized.  The slot is
 * reused: a neighbour's put of cycle c+1 comes only after this PE's barrier of cycle c. */
static long stream_cycle(stream_state *s, long cycle, int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    aclrtStream stream = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&stream), ACLSHMEM_SUCCESS);
    int64_t value = expected_value(me, cycle, 2);
    aclshmemx_putmem_on_stream(s->slot, &value, sizeof value, right, stream);
    aclshmemx_signal_op_on_stream(s->arrived, 1, ACLSHMEM_SIGNAL_ADD, right, stream);
    EXPECT_EQ(aclshmemx_kernel_launch(stream, count_block, KERNEL_BLOCKS, &s->kernel_blocks_run),
              ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_destroy(stream), ACLSHMEM_SUCCESS);
    aclshmem_signal_wait_until(s->arrived, ACLSHMEM_CMP_GE, (int32_t)cycle);
    long wrong = *s->slot != expected_value(left, cycle, 2);
    aclshmem_barrier_all();
    return wrong;
}

static long stream_phase(stream_state *s, long first, long count, int me, int n)
{
    long wrong = 0;
    for (long cycle = first; cycle < first + count; cycle++)
        wrong += stream_cycle(s, cycle, me, n);
    EXPECT_EQ(s->kernel_blocks_run, (int)((first + count - 1) * KERNEL_BLOCKS));
    return wrong;
}

/* ---- phase 4: atomic memory operations ---------------------------------------------------
 * Every PE does ops / n_pes fetch-adds of 1 and as many compare-swap increments, aimed
 * round-robin at PE (me + i) % n_pes.  A PE's fetches from one counter must grow strictly
 * (its own operations on a word are ordered) and stay below the number of operations
 * aimed at that counter; after a barrier each counter must equal that number exactly, so
 * no update was lost or doubled. */
typedef struct amo_state {
    int64_t *counters; /* symmetric: [0] fetch_add counter, [1] compare_swap counter */
    int64_t last[2][HARNESS_MAX_PES];
} amo_state;

/* How many of the per_pe operations of each kind aimed round-robin from every PE land on
 * PE target. */
static int64_t amo_aimed_at(int target, int n, long per_pe)
{
    int64_t total = 0;
    for (int from = 0; from < n; from++) {
        long offset = ((target - from) % n + n) % n; /* i with (from + i) % n == target */
        total += per_pe / n + (offset < per_pe % n ? 1 : 0);
    }
    return total;
}

static int64_t cswap_increment(int64_t *counter, int pe)
{
    int64_t seen = aclshmem_int64_atomic_fetch(counter, pe);
    for (;;) {
        int64_t old = aclshmem_int64_atomic_compare_swap(counter, seen, seen + 1, pe);
        if (old == seen)
            return old;
        seen = old;
    }
}

static long amo_phase(amo_state *s, long per_pe, int me, int n)
{
    long wrong = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int pe = 0; pe < n; pe++)
            s->last[kind][pe] = -1;
    aclshmem_barrier_all(); /* counters zeroed everywhere before anyone adds */
    for (long i = 0; i < per_pe; i++) {
        int target = (int)((me + i) % n);
        int64_t limit = amo_aimed_at(target, n, per_pe);
        int64_t fetched[2] = {aclshmem_int64_atomic_fetch_add(&s->counters[0], 1, target),
                              cswap_increment(&s->counters[1], target)};
        for (int kind = 0; kind < 2; kind++) {
            if (fetched[kind] <= s->last[kind][target] || fetched[kind] >= limit)
                wrong++;
            s->last[kind][target] = fetched[kind];
        }
    }
    aclshmem_barrier_all();
    int64_t expected = amo_aimed_at(me, n, per_pe);
    for (int kind = 0; kind < 2; kind++)
        if (s->counters[kind] != expected) {
            harness_log("PE %d: AMO counter %d is %lld, expected %lld", me, kind,
                        (long long)s->counters[kind], (long long)expected);
            wrong++;
        }
    s->counters[0] = s->counters[1] = 0;
    return wrong;
}

/* ---- the verdict and the table -------------------------------------------------------- */
/* Flat: the same descriptors open, and resident memory within the tolerance.  The
 * tolerance (256 KiB = 64 pages by default) is there for what a steady state still moves:
 * malloc's arena trimming and a few stack and page-table pages; a leak of a few bytes per
 * operation over the run is far above it (1 byte per put is 125 KiB per PE at 8 PEs, and
 * 32 bytes per alloc/free cycle is 320 KiB). */
static int check_flat(const pe_report *r, int pe)
{
    const usage *start = &r->at[0], *end = &r->at[SNAPSHOTS - 1];
    int ok = 1;
    if (end->fds != start->fds) {
        harness_log("PE %d: %ld open file descriptors at the start, %ld at the end", pe, start->fds,
                    end->fds);
        ok = 0;
    }
    if (g_check_rss && end->vm_rss_kib - start->vm_rss_kib > g_cfg.rss_tolerance_kib) {
        harness_log("PE %d: resident memory grew by %ld KiB (tolerance %ld KiB)", pe,
                    end->vm_rss_kib - start->vm_rss_kib, g_cfg.rss_tolerance_kib);
        ok = 0;
    }
    return ok;
}

static void print_usage_row(int pe, const pe_report *r)
{
    printf("%4d | %7ld %7ld %7ld | %7ld %7ld | %7ld %7ld | %3ld %3ld %3ld | %s\n", pe,
           r->at[0].vm_rss_kib, r->at[1].vm_rss_kib, r->at[2].vm_rss_kib, r->at[0].rss_anon_kib,
           r->at[2].rss_anon_kib, r->at[0].rss_shmem_kib, r->at[2].rss_shmem_kib, r->at[0].fds,
           r->at[1].fds, r->at[2].fds, check_flat(r, pe) && !r->data_errors ? "flat" : "GREW/WRONG");
}

static void print_table(const pe_report *all, int n, long rounds)
{
    double alloc_s = 0, put_s = 0;
    for (int pe = 0; pe < n; pe++) {
        alloc_s = all[pe].alloc_seconds > alloc_s ? all[pe].alloc_seconds : alloc_s;
        put_s = all[pe].put_seconds > put_s ? all[pe].put_seconds : put_s;
    }
    long ops = rounds * WINDOW * n;
    printf("soak: %d PEs\n", n);
    printf("  alloc/free: %ld collective cycles (64 B .. 1 MiB, both heaps) in %.1f s: %.0f cycles/s\n",
           g_cfg.cycles, alloc_s, g_cfg.cycles / alloc_s);
    printf("  ring: %ld checked puts + %ld checked puts-with-signal in %.1f s: %.0f ops/s\n", ops, ops,
           put_s, 2.0 * ops / put_s);
    double stream_s = 0;
    for (int pe = 0; pe < n; pe++)
        stream_s = all[pe].stream_seconds > stream_s ? all[pe].stream_seconds : stream_s;
    printf("  streams: %ld create / put+signal+kernel / synchronize / destroy cycles per PE in %.1f s\n",
           g_cfg.streams, stream_s);
    double amo_s = 0;
    for (int pe = 0; pe < n; pe++)
        amo_s = all[pe].amo_seconds > amo_s ? all[pe].amo_seconds : amo_s;
    long amo_ops = g_cfg.ops / n * n;
    printf("  amo: %ld checked int64 fetch-adds + %ld compare-swap increments in %.1f s: %.0f ops/s\n",
           amo_ops, amo_ops, amo_s, 2.0 * amo_ops / amo_s);
    if (!g_check_rss)
        printf("  (a sanitizer build: resident memory is shown, not checked)\n");
    printf("  PE | VmRSS KiB: start  after-alloc  end | RssAnon: start end | RssShmem: start end "
           "| fds: start mid end |\n");
    for (int pe = 0; pe < n; pe++)
        print_usage_row(pe, &all[pe]);
    fflush(stdout);
}

/* Every PE checks itself; PE 0 gathers the reports and prints them. */
static int report_to_pe0(int me, int n, long rounds)
{
    static pe_report all[HARNESS_MAX_PES];
    harness_allgather(&g_mine, sizeof g_mine, all);
    if (me == 0)
        print_table(all, n, rounds);
    EXPECT(check_flat(&g_mine, me));
    return 0;
}

/* ---- the whole run in one PE ---------------------------------------------------------- */

static int soak_pe(int me, int n)
{
    ring_state ring = {
        .inbox = aclshmem_calloc(2 * WINDOW, sizeof(int64_t)),
        .arrived = aclshmem_calloc(1, sizeof(int32_t)),
        .checked = aclshmem_calloc(1, sizeof(int32_t)),
        .ack_word = aclshmem_calloc(1, sizeof(int64_t)),
    };
    stream_state streams = {
        .slot = aclshmem_calloc(1, sizeof(int64_t)),
        .arrived = aclshmem_calloc(1, sizeof(int32_t)),
    };
    ASSERT(ring.inbox && ring.arrived && ring.checked && ring.ack_word);
    amo_state amo = {.counters = aclshmem_calloc(2, sizeof(int64_t))};
    ASSERT(streams.slot && streams.arrived);
    ASSERT(amo.counters);
    long per_round = (long)n * WINDOW; /* at least --ops of each, in whole rounds */
    long rounds = (g_cfg.ops + per_round - 1) / per_round;

    /* Warm-up: every allocation size on both heaps, a few rounds and streams, so that the
     * pages, threads' stacks and buffers a steady state needs exist before the first
     * measurement. */
    long wrong = alloc_free_phase(0, WARMUP_CYCLES, me, n);
    wrong += ring_phase(&ring, 1, WARMUP_ROUNDS, me, n);
    wrong += stream_phase(&streams, 1, WARMUP_STREAMS, me, n);
    wrong += amo_phase(&amo, WARMUP_AMOS, me, n);
    aclshmem_barrier_all();
    g_mine.at[0] = measure();

    double t0 = harness_now();
    wrong += alloc_free_phase(WARMUP_CYCLES, g_cfg.cycles, me, n);
    g_mine.alloc_seconds = harness_now() - t0;
    g_mine.at[1] = measure();

    t0 = harness_now();
    wrong += ring_phase(&ring, 1 + WARMUP_ROUNDS, rounds, me, n);
    aclshmem_barrier_all();
    g_mine.put_seconds = harness_now() - t0;

    t0 = harness_now();
    wrong += stream_phase(&streams, 1 + WARMUP_STREAMS, g_cfg.streams, me, n);
    g_mine.stream_seconds = harness_now() - t0;

    t0 = harness_now();
    wrong += amo_phase(&amo, g_cfg.ops / n, me, n);
    g_mine.amo_seconds = harness_now() - t0;
    aclshmem_barrier_all();
    g_mine.at[2] = measure();
    g_mine.data_errors = wrong;
    EXPECT_EQ(wrong, 0);

    aclshmem_free(amo.counters);
    aclshmem_free(streams.arrived);
    aclshmem_free(streams.slot);
    aclshmem_free(ring.ack_word);
    aclshmem_free(ring.checked);
    aclshmem_free(ring.arrived);
    aclshmem_free(ring.inbox);
    return report_to_pe0(me, n, rounds);
}

static _Noreturn void usage_error(const char *why)
{
    fprintf(stderr, "soak: %s\nusage: soak [--pes 1..%d] [--cycles N] [--ops N] [--streams N] [--rss-tolerance-kib N]\n",
            why, HARNESS_MAX_PES);
    exit(2);
}

static long parse_count(const char *text, long min, long max)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < min || v > max)
        usage_error("a value is not a number in its range");
    return v;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage_error("an option without its value");
        const char *flag = argv[i], *value = argv[i + 1];
        if (!strcmp(flag, "--pes"))
            g_cfg.pes = (int)parse_count(value, 1, HARNESS_MAX_PES);
        else if (!strcmp(flag, "--cycles"))
            g_cfg.cycles = parse_count(value, 0, 100000000);
        else if (!strcmp(flag, "--ops"))
            g_cfg.ops = parse_count(value, 1, 1000000000);
        else if (!strcmp(flag, "--streams"))
            g_cfg.streams = parse_count(value, 0, 100000000);
        else if (!strcmp(flag, "--rss-tolerance-kib"))
            g_cfg.rss_tolerance_kib = parse_count(value, 0, 1L << 30);
        else
            usage_error("unknown option");
    }
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    harness_opts opts = { .timeout_s = 3600 };
    int rc = run_pes_named("soak", g_cfg.pes, soak_pe, &opts);
    printf("soak: %s\n", rc == 0 ? "passed" : "FAILED");
    return rc == 0 ? 0 : 1;
}
