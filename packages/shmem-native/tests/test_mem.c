/*
 * test_mem.c - the symmetric heaps: malloc / calloc / align / free (DEVICE_SIDE and
 * HOST_SIDE), heap bases, aclshmem_ptr, bad input, asymmetric requests, exhaustion, and a
 * long deterministic random alloc/free run.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1024ULL * 1024)
#define HEAP HARNESS_DEFAULT_HEAP

static const aclshmem_mem_type_t mem_types[2] = { DEVICE_SIDE, HOST_SIDE };
static const char *mt_name(aclshmem_mem_type_t mt)
{
    return mt == DEVICE_SIDE ? "DEVICE_SIDE" : "HOST_SIDE";
}

static int in_heap(const void *p, aclshmem_mem_type_t mt, size_t size)
{
    const char *base = aclshmemx_get_heap_base(mt);
    const char *c = p;
    return base && c >= base && c + size <= base + HEAP;
}

/* All PEs agree on the offset of p in heap mt. */
static void expect_symmetric(const void *p, aclshmem_mem_type_t mt, const char *what)
{
    const char *base = aclshmemx_get_heap_base(mt);
    int64_t off = p && base ? (int64_t)((const char *)p - base) : -1;
    int64_t all[HARNESS_MAX_PES];
    harness_allgather(&off, sizeof off, all);
    for (int i = 0; i < harness_n_pes; i++)
        if (all[i] != all[0])
            harness_report(__FILE__, __LINE__, "%s: offset on PE %d is %lld, on PE 0 %lld", what, i,
                           (long long)all[i], (long long)all[0]);
}

/* The heap can still hand out nearly all of itself in one piece. */
static void expect_heap_whole(aclshmem_mem_type_t mt, const char *when)
{
    size_t big = HEAP - 1 * MiB;
    void *p = aclshmemx_malloc(big, mt);
    if (!p) {
        harness_report(__FILE__, __LINE__, "%s: %s heap cannot give %zu bytes in one piece", when,
                       mt_name(mt), big);
        /* Say how much it can give. */
        size_t lo = 0, hi = big;
        while (hi - lo > 64 * 1024) {
            size_t mid = lo + (hi - lo) / 2;
            void *q = aclshmemx_malloc(mid, mt);
            if (q) {
                lo = mid;
                aclshmemx_free(q, mt);
            } else {
                hi = mid;
            }
        }
        harness_log("%s: the largest %s block is about %zu bytes", when, mt_name(mt), lo);
        return;
    }
    EXPECT(in_heap(p, mt, big));
    aclshmemx_free(p, mt);
}

/* ---- normal use ---------------------------------------------------------------------- */
static int t_basic(int me, int n)
{
    void *dbase = aclshmemx_get_heap_base(DEVICE_SIDE);
    void *hbase = aclshmemx_get_heap_base(HOST_SIDE);
    ASSERT_NOT_NULL(dbase);
    EXPECT_NOT_NULL(hbase);
    EXPECT(dbase != hbase);
    EXPECT_NULL(aclshmemx_get_heap_base((aclshmem_mem_type_t)7));

    for (int k = 0; k < 2; k++) {
        aclshmem_mem_type_t mt = mem_types[k];
        unsigned char *p = aclshmemx_malloc(1000, mt);
        ASSERT_NOT_NULL(p);
        EXPECT(in_heap(p, mt, 1000));
        EXPECT_EQ((uintptr_t)p % 16, 0);
        expect_symmetric(p, mt, "malloc");
        memset(p, 0xAB, 1000);
        /* Each PE's block is its own memory. */
        p[0] = (unsigned char)me;
        aclshmem_barrier_all();
        EXPECT_EQ(p[0], me);
        EXPECT_EQ(p[999], 0xAB);
        aclshmemx_free(p, mt);

        /* calloc zeroes, even memory that was dirty a moment ago. */
        unsigned char *z = aclshmemx_calloc(10, 100, mt);
        ASSERT_NOT_NULL(z);
        EXPECT(in_heap(z, mt, 1000));
        expect_symmetric(z, mt, "calloc");
        int nonzero = 0;
        for (int i = 0; i < 1000; i++)
            nonzero += z[i] != 0;
        EXPECT_EQ(nonzero, 0);
        aclshmemx_free(z, mt);

        /* align honours the alignment. */
        static const size_t aligns[] = { 1, 2, 8, 16, 64, 256, 4096, 65536, 1 << 20, 2 << 20 };
        for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
            void *q = aclshmemx_align(aligns[i], 100, mt);
            if (!q) {
                harness_report(__FILE__, __LINE__, "align(%zu, 100) on %s gave NULL", aligns[i],
                               mt_name(mt));
                continue;
            }
            if ((uintptr_t)q % aligns[i] != 0)
                harness_report(__FILE__, __LINE__, "align(%zu) gave %p", aligns[i], q);
            EXPECT(in_heap(q, mt, 100));
            expect_symmetric(q, mt, "align");
            aclshmemx_free(q, mt);
        }
    }

    /* The plain names use the DEVICE_SIDE heap. */
    void *a = aclshmem_malloc(256);
    void *b = aclshmem_calloc(16, 16);
    void *c = aclshmem_align(4096, 256);
    ASSERT(a && b && c);
    EXPECT(in_heap(a, DEVICE_SIDE, 256));
    EXPECT(in_heap(b, DEVICE_SIDE, 256));
    EXPECT(in_heap(c, DEVICE_SIDE, 256));
    EXPECT_EQ((uintptr_t)c % 4096, 0);
    EXPECT(a != b && b != c && a != c);
    expect_symmetric(b, DEVICE_SIDE, "aclshmem_calloc");
    aclshmem_free(b);
    aclshmem_free(a);
    aclshmem_free(c);
    aclshmem_free(NULL); /* a no-op */
    aclshmemx_free(NULL, HOST_SIDE);

    /* Live blocks never overlap. */
    void *blk[8];
    for (int i = 0; i < 8; i++) {
        blk[i] = aclshmem_malloc(1000 + (size_t)i * 333);
        ASSERT_NOT_NULL(blk[i]);
        memset(blk[i], i + 1, 1000 + (size_t)i * 333);
    }
    for (int i = 0; i < 8; i++) {
        const unsigned char *u = blk[i];
        size_t sz = 1000 + (size_t)i * 333;
        EXPECT(u[0] == i + 1 && u[sz - 1] == i + 1);
    }
    for (int i = 7; i >= 0; i--)
        aclshmem_free(blk[i]);
    (void)n;
    return 0;
}

/* ---- bad input ---------------------------------------------------------------------- */
static int t_bad_input(int me, int n)
{
    (void)me;
    (void)n;
    for (int k = 0; k < 2; k++) {
        aclshmem_mem_type_t mt = mem_types[k];
        harness_mark_error();
        EXPECT_NULL(aclshmemx_malloc(0, mt));
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_calloc(0, 16, mt));
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_calloc(SIZE_MAX / 2, 4, mt)); /* the product overflows */
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_calloc((size_t)1 << 40, (size_t)1 << 40, mt));
        EXPECT_ERROR_SET();
        static const size_t bad_align[] = { 0, 3, 48, 100, 4097 };
        for (size_t i = 0; i < sizeof bad_align / sizeof bad_align[0]; i++) {
            harness_mark_error();
            void *q = aclshmemx_align(bad_align[i], 64, mt);
            if (q)
                harness_report(__FILE__, __LINE__, "align(%zu, 64) was accepted", bad_align[i]);
            else
                EXPECT_ERROR_SET();
        }
        harness_mark_error();
        EXPECT_NULL(aclshmemx_align(64, 0, mt));
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_malloc(HEAP + 1, mt));
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_malloc(SIZE_MAX, mt));
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_NULL(aclshmemx_malloc(SIZE_MAX - 8, mt));
        EXPECT_ERROR_SET();
    }
    harness_mark_error();
    EXPECT_NULL(aclshmem_malloc(0));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmem_calloc(SIZE_MAX / 2, 4));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmem_align(3, 64));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmemx_malloc(64, (aclshmem_mem_type_t)7));
    EXPECT_ERROR_SET();
    EXPECT_NULL(aclshmemx_malloc(64, (aclshmem_mem_type_t)-1));

    /* Frees of things that are not live blocks: an error, nothing breaks. */
    int local = 0;
    harness_mark_error();
    aclshmem_free(&local);
    EXPECT_ERROR_SET();
    char *p = aclshmem_malloc(4096);
    ASSERT_NOT_NULL(p);
    p[0] = 42;
    harness_mark_error();
    aclshmem_free(p + 1); /* inside a block, not its start */
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_free(p + 64);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmemx_free(p, HOST_SIDE); /* the wrong heap */
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmemx_free(p, (aclshmem_mem_type_t)7);
    EXPECT_ERROR_SET();
    char *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    harness_mark_error();
    aclshmem_free(base + HEAP - 16); /* never allocated */
    EXPECT_ERROR_SET();
    EXPECT_EQ(p[0], 42);
    /* The block is still live: a new allocation does not land on it. */
    char *q = aclshmem_malloc(4096);
    ASSERT_NOT_NULL(q);
    EXPECT(q + 4096 <= p || q >= p + 4096);
    harness_mark_error();
    aclshmem_free(p);
    EXPECT(!harness_error_since_mark());
    harness_mark_error();
    aclshmem_free(p); /* double free */
    EXPECT_ERROR_SET();
    aclshmem_free(q);

    for (int k = 0; k < 2; k++)
        expect_heap_whole(mem_types[k], "after bad input");
    return 0;
}

/* ---- exhaustion ------------------------------------------------------------------------ */
static int t_exhaustion(int me, int n)
{
    (void)me;
    (void)n;
    for (int k = 0; k < 2; k++) {
        aclshmem_mem_type_t mt = mem_types[k];
        enum { MAXB = 256 };
        void *blocks[MAXB];
        int count = 0;
        harness_mark_error();
        while (count < MAXB) {
            void *b = aclshmemx_malloc(1 * MiB, mt);
            if (!b)
                break;
            ((char *)b)[0] = (char)count;
            blocks[count++] = b;
        }
        EXPECT(count < MAXB);
        EXPECT_GE(count, (int)(HEAP / MiB) - 2);
        EXPECT_LE(count, (int)(HEAP / MiB));
        EXPECT_ERROR_SET();
        for (int i = 0; i < count; i++)
            EXPECT_EQ(((char *)blocks[i])[0], (char)i);
        for (int i = count - 1; i >= 0; i--)
            aclshmemx_free(blocks[i], mt);
        expect_heap_whole(mt, "after exhaustion");
    }
    return 0;
}

/* ---- asymmetric requests: every PE gets NULL, the heap stays usable ---------------- */
static void expect_all_null(void *p, const char *what)
{
    int got = p != NULL;
    int all[HARNESS_MAX_PES];
    harness_allgather(&got, sizeof got, all);
    for (int i = 0; i < harness_n_pes; i++)
        if (all[i])
            harness_report(__FILE__, __LINE__, "%s: PE %d got a block", what, i);
    if (!p && !harness_error_since_mark())
        harness_report(__FILE__, __LINE__, "%s: NULL without a new last-error message", what);
}

static int t_asymmetric(int me, int n)
{
    (void)n;
    void *p;
    int odd = me % 2;

    harness_mark_error();
    p = aclshmem_malloc(me == 0 ? 1024 : 2048);
    expect_all_null(p, "malloc of different sizes");

    harness_mark_error();
    p = aclshmem_malloc(me == n - 1 ? 4096 + 16 : 4096);
    expect_all_null(p, "malloc where only the last PE differs");

    harness_mark_error();
    p = aclshmem_calloc(odd ? 8 : 16, 64);
    expect_all_null(p, "calloc of different counts");

    harness_mark_error();
    p = aclshmem_align(odd ? 128 : 64, 4096);
    expect_all_null(p, "align with different alignments");

    harness_mark_error();
    p = aclshmemx_malloc(4096, odd ? HOST_SIDE : DEVICE_SIDE);
    expect_all_null(p, "malloc on different heaps");

    harness_mark_error();
    p = me == 0 ? aclshmem_malloc(4096) : aclshmem_calloc(1, 4096);
    /* malloc and calloc of the same size are the same request; either answer is fine, but
     * it must be the same on every PE. */
    {
        int got = p != NULL, all[HARNESS_MAX_PES];
        harness_allgather(&got, sizeof got, all);
        for (int i = 0; i < harness_n_pes; i++)
            EXPECT_EQ(all[i], all[0]);
        if (p)
            aclshmem_free(p);
    }

    /* The heap is fine afterwards. */
    void *a = aclshmem_malloc(1024);
    void *b = aclshmem_malloc(1024);
    ASSERT(a && b);
    expect_symmetric(a, DEVICE_SIDE, "malloc after asymmetric requests");
    expect_symmetric(b, DEVICE_SIDE, "second malloc after asymmetric requests");

    /* Asymmetric free: PE 0 frees a, the others b.  Refused everywhere: both stay live. */
    harness_mark_error();
    aclshmem_free(me == 0 ? a : b);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_free(a);
    aclshmem_free(b);
    EXPECT(!harness_error_since_mark());

    for (int k = 0; k < 2; k++)
        expect_heap_whole(mem_types[k], "after asymmetric requests");
    void *c = aclshmem_malloc(1024);
    expect_symmetric(c, DEVICE_SIDE, "malloc at the end");
    aclshmem_free(c);
    return 0;
}

/* ---- thousands of random alloc/free cycles, the same on every PE ---------------------- */
typedef struct {
    unsigned char *p;
    size_t size;
    aclshmem_mem_type_t mt;
    uint64_t tag;
    int zeroed;
} live_t;

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* Reports at most 5 problems of the random run (every PE keeps going, in step). */
#define RC_REPORT(...)                                                                         \
    do {                                                                                       \
        if (bad++ < 5)                                                                         \
            harness_report(__FILE__, __LINE__, __VA_ARGS__);                                   \
    } while (0)

static int t_random_cycles(int me, int n)
{
    (void)me;
    for (int k = 0; k < 2; k++)
        expect_heap_whole(mem_types[k], "before the random run");
    enum { MAXLIVE = 48 };
    live_t live[MAXLIVE];
    int nlive = 0;
    int steps = n >= 8 ? 1000 : 2000;
    uint64_t hash = 1469598103934665603ULL;
    int bad = 0;
    rng_state = 42;
    for (int s = 0; s < steps; s++) { /* never stop early: the PEs must stay in step */
        uint32_t r = rng();
        if (nlive < MAXLIVE && (nlive == 0 || r % 3 != 0)) {
            aclshmem_mem_type_t mt = (rng() & 1) ? DEVICE_SIDE : HOST_SIDE;
            size_t size = 16 + rng() % (256 * 1024);
            if (rng() % 20 == 0)
                size = 1 * MiB + rng() % (3 * MiB);
            uint32_t kind = rng() % 3;
            size_t align = (size_t)16 << (rng() % 10);
            unsigned char *p;
            if (kind == 0)
                p = aclshmemx_malloc(size, mt);
            else if (kind == 1)
                p = aclshmemx_calloc(1, size, mt);
            else
                p = aclshmemx_align(align, size, mt);
            if (!p) {
                RC_REPORT("step %d: alloc of %zu on %s failed", s, size,
                               mt_name(mt));
                continue;
            }
            if (!in_heap(p, mt, size)) {
                RC_REPORT("step %d: block outside its heap", s);
            }
            if (kind == 2 && (uintptr_t)p % align) {
                RC_REPORT("step %d: align(%zu) gave %p", s, align, (void *)p);
            }
            if (kind == 1) {
                for (size_t i = 0; i < size; i++)
                    if (p[i]) {
                        RC_REPORT("step %d: calloc byte %zu is %d", s, i, p[i]);
                        break;
                    }
            }
            for (int i = 0; i < nlive; i++) {
                if (live[i].mt == mt && p < live[i].p + live[i].size && live[i].p < p + size) {
                    RC_REPORT("step %d: new block overlaps a live one", s);
                }
            }
            uint64_t tag = ((uint64_t)s << 32) | 0xC0DEu;
            memcpy(p, &tag, 8);
            memcpy(p + size - 8, &tag, 8);
            const unsigned char *base = aclshmemx_get_heap_base(mt);
            hash = (hash ^ (uint64_t)(p - base) ^ ((uint64_t)mt << 60)) * 1099511628211ULL;
            live[nlive++] = (live_t){ p, size, mt, tag, kind == 1 };
        } else {
            int i = (int)(rng() % (uint32_t)nlive);
            uint64_t a, b;
            memcpy(&a, live[i].p, 8);
            memcpy(&b, live[i].p + live[i].size - 8, 8);
            if (a != live[i].tag || b != live[i].tag) {
                RC_REPORT("step %d: a live block was overwritten", s);
            }
            aclshmemx_free(live[i].p, live[i].mt);
            live[i] = live[--nlive];
        }
    }
    while (nlive > 0) {
        nlive--;
        aclshmemx_free(live[nlive].p, live[nlive].mt);
    }
    uint64_t all[HARNESS_MAX_PES];
    harness_allgather(&hash, sizeof hash, all);
    for (int i = 0; i < n; i++)
        if (all[i] != all[0])
            harness_report(__FILE__, __LINE__, "PE %d's block offsets differ from PE 0's", i);
    for (int k = 0; k < 2; k++)
        expect_heap_whole(mem_types[k], "after the random run");
    return 0;
}

/* ---- aclshmem_ptr ------------------------------------------------------------------------ */
static int t_ptr(int me, int n)
{
    for (int k = 0; k < 2; k++) {
        aclshmem_mem_type_t mt = mem_types[k];
        int32_t *p = aclshmemx_calloc((size_t)n, sizeof(int32_t), mt);
        ASSERT_NOT_NULL(p);
        /* My own PE: an alias of my block. */
        int32_t *mine = aclshmem_ptr(p, me);
        ASSERT_NOT_NULL(mine);
        mine[me] = 7;
        EXPECT_EQ(((volatile int32_t *)p)[me], 7);
        p[me] = 0;
        aclshmem_barrier_all();
        /* Store into every peer's block through its address. */
        for (int q = 0; q < n; q++) {
            if (q == me)
                continue;
            int32_t *r = aclshmem_ptr(p, q);
            if (!r) {
                harness_report(__FILE__, __LINE__, "aclshmem_ptr(p, %d) on %s is NULL", q, mt_name(mt));
                continue;
            }
            EXPECT(r != p);
            /* Page-aligned like p, but not at p's place modulo the heap alignment: a store
             * through r and a load of p must not look like the same address to the CPU. */
            EXPECT_EQ((uintptr_t)r % 4096, (uintptr_t)p % 4096);
            EXPECT((uintptr_t)r % (1u << 30) != (uintptr_t)p % (1u << 30));
            r[me] = 100 * me + q + 1;
        }
        aclshmem_barrier_all();
        for (int j = 0; j < n; j++) {
            if (j == me)
                continue;
            if (((volatile int32_t *)p)[j] != 100 * j + me + 1)
                harness_report(__FILE__, __LINE__, "%s: slot %d is %d, expected %d", mt_name(mt), j,
                               p[j], 100 * j + me + 1);
        }
        /* Any address inside the heap maps, not only block starts. */
        char *base = aclshmemx_get_heap_base(mt);
        EXPECT_NOT_NULL(aclshmem_ptr(p + 1, (me + 1) % n));
        EXPECT_NOT_NULL(aclshmem_ptr(base, (me + 1) % n));
        EXPECT_NOT_NULL(aclshmem_ptr(base + HEAP - 1, (me + 1) % n));

        /* Bad PE numbers. */
        static const int bad_pes[] = { -1, -100, 0x7fffffff, (int)0x80000000 };
        for (size_t i = 0; i < sizeof bad_pes / sizeof bad_pes[0]; i++) {
            harness_mark_error();
            EXPECT_NULL(aclshmem_ptr(p, bad_pes[i]));
            EXPECT_ERROR_SET();
        }
        harness_mark_error();
        EXPECT_NULL(aclshmem_ptr(p, n));
        EXPECT_ERROR_SET();
        /* Addresses outside the heaps. */
        int local = 0;
        void *libc = malloc(64);
        harness_mark_error();
        EXPECT_NULL(aclshmem_ptr(&local, 0));
        EXPECT_ERROR_SET();
        EXPECT_NULL(aclshmem_ptr(libc, 0));
        EXPECT_NULL(aclshmem_ptr(NULL, 0));
        /* Below the lower heap and far above the upper one (the heaps may be neighbours). */
        char *d = aclshmemx_get_heap_base(DEVICE_SIDE), *h = aclshmemx_get_heap_base(HOST_SIDE);
        char *lo = d < h ? d : h, *hi = d < h ? h : d;
        EXPECT_NULL(aclshmem_ptr(lo - 1, 0));
        EXPECT_NULL(aclshmem_ptr(hi + HEAP + 64 * MiB, 0));
        free(libc);
        aclshmem_barrier_all();
        aclshmemx_free(p, mt);
    }
    return 0;
}

static const harness_case cases[] = {
    { "basic", t_basic, { 0 }, { 2, 4, 8 } },
    { "bad_input", t_bad_input, { 0 }, { 2, 4 } },
    { "exhaustion", t_exhaustion, { 0 }, { 2 } },
    { "asymmetric", t_asymmetric, { 0 }, { 2, 4, 8 } },
    { "random_cycles", t_random_cycles, { .timeout_s = 100 }, { 2, 4, 8 } },
    { "ptr", t_ptr, { 0 }, { 2, 4, 8 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
