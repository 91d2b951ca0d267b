/*
 * test_amo.c - the atomic memory operations of aclshmem/amo.h on real PEs: every operation
 * of every type (generated from the header's type tables) on both symmetric heaps, values
 * of fetch_add unique across PEs, a compare_swap lock around a read-modify-write, exact
 * float, half and bfloat16 sums and rounding against a reference, AMOs ordered after puts,
 * 16 kernel blocks at once, bad input of every function; and what came with the family:
 * half and bfloat16 RMA, barrier_vec (host and kernel) and the host signal_op.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp_ref.h"
#include "harness.h"

/* ---- numbers of every AMO type ------------------------------------------------------------
 * num_T(x): the T nearest x; dbl_T(v): v's value.  Half and bfloat16 go through the
 * reference conversion (fp_ref.h), not the library's. */
#define DEFINE_PLAIN_NUMBERS(NAME, TYPE)                                                          \
    static inline TYPE num_##NAME(double x) { return (TYPE)x; }                                   \
    static inline double dbl_##NAME(TYPE v) { return (double)v; }
ACLSHMEM_AMO_INT_TYPES(DEFINE_PLAIN_NUMBERS)
ACLSHMEM_AMO_FLOAT_TYPES(DEFINE_PLAIN_NUMBERS)
static inline aclshmem_half_t num_half(double x) { return ref_round(REF_HALF, x); }
static inline double dbl_half(aclshmem_half_t v) { return ref_value(REF_HALF, v); }
static inline aclshmem_bfloat16_t num_bfloat16(double x) { return ref_round(REF_BF16, x); }
static inline double dbl_bfloat16(aclshmem_bfloat16_t v) { return ref_value(REF_BF16, v); }

#define WORDS 16 /* per type and PE; the last one is a guard that no AMO may touch */
#define GUARD 0x5a

static void *alloc_words(size_t size, aclshmem_mem_type_t heap)
{
    unsigned char *p = aclshmemx_malloc(WORDS * size, heap);
    ASSERT_NOT_NULL(p);
    memset(p, GUARD, WORDS * size);
    return p;
}

static int guard_intact(const void *words, size_t size)
{
    const unsigned char *g = (const unsigned char *)words + (WORDS - 1) * size;
    for (size_t i = 0; i < size; i++)
        if (g[i] != GUARD)
            return 0;
    return 1;
}

#define FAIL_UNLESS(cond, tn, what)                                                               \
    do {                                                                                          \
        if (!(cond))                                                                              \
            harness_report(__FILE__, __LINE__, "%s: %s", tn, what);                               \
    } while (0)

/* add, fetch_add, set, fetch, swap: every type.  Every PE acts on the next one's words (its
 * own owner set them up before a barrier), and all PEs add to PE 0's word 1 at once. */
#define DEFINE_STANDARD_TEST(NAME, TYPE)                                                          \
    static void standard_##NAME(int me, int n, aclshmem_mem_type_t heap)                         \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n;                                                                  \
        TYPE *w = alloc_words(sizeof(TYPE), heap);                                                \
        w[0] = num_##NAME(0);                                                                     \
        w[1] = num_##NAME(0);                                                                     \
        w[2] = num_##NAME(5);                                                                     \
        w[3] = num_##NAME(10 + me % 4);                                                           \
        aclshmem_barrier_all();                                                                   \
        aclshmem_##NAME##_atomic_set(&w[0], num_##NAME(3), next);                                 \
        aclshmem_##NAME##_atomic_add(&w[1], num_##NAME(me + 1), 0);                               \
        TYPE old = aclshmem_##NAME##_atomic_fetch_add(&w[2], num_##NAME(2), next);                \
        FAIL_UNLESS(old == num_##NAME(5), tn, "fetch_add did not return the old value");          \
        old = aclshmem_##NAME##_atomic_swap(&w[3], num_##NAME(20), next);                         \
        FAIL_UNLESS(old == num_##NAME(10 + next % 4), tn, "swap did not return the old value");   \
        aclshmem_barrier_all();                                                                   \
        FAIL_UNLESS(w[0] == num_##NAME(3), tn, "set");                                            \
        FAIL_UNLESS(me != 0 || dbl_##NAME(w[1]) == n * (n + 1) / 2, tn, "add from every PE");     \
        FAIL_UNLESS(w[2] == num_##NAME(7), tn, "fetch_add");                                      \
        FAIL_UNLESS(w[3] == num_##NAME(20), tn, "swap");                                          \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch(&w[2], next) == num_##NAME(7), tn, "fetch");   \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch(&w[3], me) == num_##NAME(20), tn, "fetch of myself"); \
        FAIL_UNLESS(guard_intact(w, sizeof(TYPE)), tn, "an AMO wrote past its word");             \
        aclshmem_barrier_all();                                                                   \
        aclshmemx_free(w, heap);                                                                  \
    }
ACLSHMEM_AMO_INT_TYPES(DEFINE_STANDARD_TEST)
ACLSHMEM_AMO_FLOAT_TYPES(DEFINE_STANDARD_TEST)
ACLSHMEM_AMO_HALF_TYPES(DEFINE_STANDARD_TEST)

/* compare_swap: integers, float and double. */
#define DEFINE_CSWAP_TEST(NAME, TYPE)                                                             \
    static void cswap_##NAME(int me, int n, aclshmem_mem_type_t heap)                            \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n;                                                                  \
        TYPE *w = alloc_words(sizeof(TYPE), heap);                                                \
        w[0] = num_##NAME(2);                                                                     \
        aclshmem_barrier_all();                                                                   \
        TYPE old = aclshmem_##NAME##_atomic_compare_swap(&w[0], num_##NAME(9), num_##NAME(4), next); \
        FAIL_UNLESS(old == num_##NAME(2), tn, "compare_swap that fails: wrong old value");        \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch(&w[0], next) == num_##NAME(2), tn,             \
                    "compare_swap swapped although the word differed from cond");                 \
        old = aclshmem_##NAME##_atomic_compare_swap(&w[0], num_##NAME(2), num_##NAME(4), next);   \
        FAIL_UNLESS(old == num_##NAME(2), tn, "compare_swap that succeeds: wrong old value");     \
        aclshmem_barrier_all();                                                                   \
        FAIL_UNLESS(w[0] == num_##NAME(4), tn, "compare_swap did not swap");                      \
        FAIL_UNLESS(guard_intact(w, sizeof(TYPE)), tn, "compare_swap wrote past its word");       \
        aclshmem_barrier_all();                                                                   \
        aclshmemx_free(w, heap);                                                                  \
    }
ACLSHMEM_AMO_INT_TYPES(DEFINE_CSWAP_TEST)
ACLSHMEM_AMO_FLOAT_TYPES(DEFINE_CSWAP_TEST)

/* inc, fetch_inc, and, or, xor (plain and fetching): integers, with bit patterns that use
 * every byte of the word, and wrapping at the top. */
#define PATTERN(TYPE, x) ((TYPE)(uint64_t)(x))
#define DEFINE_INTEGER_TEST(NAME, TYPE)                                                           \
    static void integer_##NAME(int me, int n, aclshmem_mem_type_t heap)                          \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n;                                                                  \
        TYPE *w = alloc_words(sizeof(TYPE), heap);                                                \
        w[0] = 0;                                                                                 \
        w[1] = PATTERN(TYPE, 0x5a5a5a5a5a5a5a5aULL);                                              \
        w[2] = PATTERN(TYPE, -1);                                                                 \
        w[3] = 0;                                                                                 \
        aclshmem_barrier_all();                                                                   \
        aclshmem_##NAME##_atomic_inc(&w[0], next);                                                \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch_inc(&w[0], next) == 1, tn, "fetch_inc");       \
        uint64_t x = 0x5a5a5a5a5a5a5a5aULL, ops[] = {0x0f0f0f0f0f0f0f0fULL, 0x3030303030303030ULL, \
                                                      0x1111111111111111ULL};                     \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch_and(&w[1], PATTERN(TYPE, ops[0]), next) ==     \
                        PATTERN(TYPE, x), tn, "fetch_and");                                       \
        x &= ops[0];                                                                              \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch_or(&w[1], PATTERN(TYPE, ops[1]), next) ==      \
                        PATTERN(TYPE, x), tn, "fetch_or");                                        \
        x |= ops[1];                                                                              \
        FAIL_UNLESS(aclshmem_##NAME##_atomic_fetch_xor(&w[1], PATTERN(TYPE, ops[2]), next) ==     \
                        PATTERN(TYPE, x), tn, "fetch_xor");                                       \
        x ^= ops[2];                                                                              \
        aclshmem_##NAME##_atomic_and(&w[1], PATTERN(TYPE, 0x7e7e7e7e7e7e7e7eULL), next);          \
        x &= 0x7e7e7e7e7e7e7e7eULL;                                                               \
        aclshmem_##NAME##_atomic_or(&w[1], PATTERN(TYPE, 0x4141414141414141ULL), next);           \
        x |= 0x4141414141414141ULL;                                                               \
        aclshmem_##NAME##_atomic_xor(&w[1], PATTERN(TYPE, 0x0202020202020202ULL), next);          \
        x ^= 0x0202020202020202ULL;                                                               \
        aclshmem_##NAME##_atomic_inc(&w[2], next);                                                \
        aclshmem_##NAME##_atomic_add(&w[3], PATTERN(TYPE, -1), next);                             \
        aclshmem_barrier_all();                                                                   \
        FAIL_UNLESS(w[0] == 2, tn, "inc");                                                        \
        FAIL_UNLESS(w[1] == PATTERN(TYPE, x), tn, "and / or / xor");                              \
        FAIL_UNLESS(w[2] == 0, tn, "inc does not wrap to 0 at the top");                          \
        FAIL_UNLESS(w[3] == PATTERN(TYPE, -1), tn, "adding -1 (all ones) to 0");                  \
        FAIL_UNLESS(guard_intact(w, sizeof(TYPE)), tn, "an AMO wrote past its word");             \
        aclshmem_barrier_all();                                                                   \
        aclshmemx_free(w, heap);                                                                  \
    }
ACLSHMEM_AMO_INT_TYPES(DEFINE_INTEGER_TEST)

static int t_every_operation(int me, int n)
{
    aclshmem_mem_type_t heaps[] = {DEVICE_SIDE, HOST_SIDE};
    for (int h = 0; h < 2; h++) {
#define CALL_STANDARD(NAME, TYPE) standard_##NAME(me, n, heaps[h]);
#define CALL_CSWAP(NAME, TYPE) cswap_##NAME(me, n, heaps[h]);
#define CALL_INTEGER(NAME, TYPE) integer_##NAME(me, n, heaps[h]);
        ACLSHMEM_AMO_INT_TYPES(CALL_STANDARD)
        ACLSHMEM_AMO_FLOAT_TYPES(CALL_STANDARD)
        ACLSHMEM_AMO_HALF_TYPES(CALL_STANDARD)
        ACLSHMEM_AMO_INT_TYPES(CALL_CSWAP)
        ACLSHMEM_AMO_FLOAT_TYPES(CALL_CSWAP)
        ACLSHMEM_AMO_INT_TYPES(CALL_INTEGER)
#undef CALL_STANDARD
#undef CALL_CSWAP
#undef CALL_INTEGER
    }
    return 0;
}

/* ---- fetch_add hands out unique values ------------------------------------------------------ */
#define TICKETS 100

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every PE draws TICKETS tickets from PE 0's 64-bit and PE n-1's 32-bit counter at once;
 * each counter hands out 0 .. n * TICKETS - 1, each value exactly once. */
static int t_fetch_add_unique(int me, int n)
{
    int64_t *counter64 = aclshmemx_calloc(1, sizeof(int64_t), HOST_SIDE);
    int32_t *counter32 = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *drawn = aclshmem_calloc((size_t)n * TICKETS * 2, sizeof(int64_t));
    ASSERT_NOT_NULL(counter64);
    ASSERT_NOT_NULL(counter32);
    ASSERT_NOT_NULL(drawn);
    int64_t mine[2 * TICKETS];
    aclshmem_barrier_all();
    for (int i = 0; i < TICKETS; i++) {
        mine[i] = aclshmem_int64_atomic_fetch_add(counter64, 1, 0);
        mine[TICKETS + i] = aclshmem_int32_atomic_fetch_inc(counter32, n - 1);
    }
    aclshmem_int64_put(drawn + (size_t)me * TICKETS, mine, TICKETS, 0);
    aclshmem_int64_put(drawn + (size_t)(n + me) * TICKETS, mine + TICKETS, TICKETS, n - 1);
    aclshmem_barrier_all();
    for (int which = 0; which < 2; which++) {
        int owner = which == 0 ? 0 : n - 1;
        if (me != owner)
            continue;
        int64_t *all = drawn + (size_t)which * n * TICKETS;
        qsort(all, (size_t)n * TICKETS, sizeof(int64_t), cmp_int64);
        int wrong = 0;
        for (int64_t i = 0; i < (int64_t)n * TICKETS; i++)
            wrong += all[i] != i;
        if (wrong)
            harness_report(__FILE__, __LINE__, "%s counter: %d tickets are not 0..%d once each",
                           which ? "int32" : "int64", wrong, n * TICKETS - 1);
    }
    if (me == 0)
        EXPECT_EQ(*counter64, (int64_t)n * TICKETS);
    if (me == n - 1)
        EXPECT_EQ(*counter32, n * TICKETS);
    aclshmem_barrier_all();
    aclshmem_free(drawn);
    aclshmem_free(counter32);
    aclshmemx_free(counter64, HOST_SIDE);
    return 0;
}

/* ---- a compare_swap lock ----------------------------------------------------------------------
 * A lock word on PE n-1 guards a counter on PE 0 that is read with g and written with p
 * (no AMO), with a yield in between to invite every other PE in.  The release is an
 * atomic_set, ordered after the p.  Without mutual exclusion updates get lost. */
#define LOCKED_ROUNDS 25

static int t_cswap_lock(int me, int n)
{
    int32_t *lock = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *counter = aclshmem_calloc(1, sizeof(int64_t));
    ASSERT_NOT_NULL(lock);
    ASSERT_NOT_NULL(counter);
    int holder = n - 1, overlaps = 0;
    aclshmem_barrier_all();
    for (int r = 0; r < LOCKED_ROUNDS; r++) {
        while (aclshmem_int32_atomic_compare_swap(lock, 0, me + 1, holder) != 0)
            sched_yield();
        int64_t v = aclshmem_int64_g(counter, 0);
        sched_yield();
        aclshmem_int64_p(counter, v + 1, 0);
        overlaps += aclshmem_int32_atomic_fetch(lock, holder) != me + 1;
        aclshmem_int32_atomic_set(lock, 0, holder);
    }
    EXPECT_EQ(overlaps, 0);
    aclshmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(*counter, (int64_t)n * LOCKED_ROUNDS);
    if (me == holder)
        EXPECT_EQ(*lock, 0);
    aclshmem_barrier_all();
    aclshmem_free(counter);
    aclshmem_free(lock);
    return 0;
}

/* ---- floating-point sums ------------------------------------------------------------------------
 * Adding 1.0 from every PE to 0 is exact in every type, in any order; so is adding 0.5 twice.
 * Rounding cases against the reference: 2048 + 1 in half and 256 + 1 in bfloat16 are ties
 * that stay at the even value, + 3 rounds up to the next even one; infinities and NaN. */
#define DEFINE_SUM_TEST(NAME, TYPE)                                                               \
    static void sums_##NAME(int n)                                                                \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        TYPE *w = alloc_words(sizeof(TYPE), DEVICE_SIDE);                                         \
        for (int i = 0; i < WORDS - 1; i++)                                                       \
            w[i] = num_##NAME(0);                                                                 \
        aclshmem_barrier_all();                                                                   \
        for (int pe = 0; pe < n; pe++) {                                                          \
            aclshmem_##NAME##_atomic_add(&w[0], num_##NAME(1.0), pe);                             \
            aclshmem_##NAME##_atomic_fetch_add(&w[1], num_##NAME(0.5), pe);                       \
            aclshmem_##NAME##_atomic_add(&w[1], num_##NAME(0.5), pe);                             \
        }                                                                                         \
        aclshmem_barrier_all();                                                                   \
        FAIL_UNLESS(dbl_##NAME(w[0]) == n, tn, "1.0 from every PE");                              \
        FAIL_UNLESS(dbl_##NAME(w[1]) == n, tn, "0.5 twice from every PE");                        \
        aclshmem_barrier_all();                                                                   \
        aclshmemx_free(w, DEVICE_SIDE);                                                           \
    }
ACLSHMEM_AMO_FLOAT_TYPES(DEFINE_SUM_TEST)
ACLSHMEM_AMO_HALF_TYPES(DEFINE_SUM_TEST)

/* fetch_add of b to a word holding a on pe: the old value, and what the word became. */
#define DEFINE_ADD_ONCE(NAME, TYPE)                                                               \
    static TYPE add_once_##NAME(TYPE *word, TYPE a, TYPE b, int pe)                               \
    {                                                                                             \
        aclshmem_##NAME##_atomic_set(word, a, pe);                                                \
        TYPE old = aclshmem_##NAME##_atomic_fetch_add(word, b, pe);                               \
        if (old != a)                                                                             \
            harness_report(__FILE__, __LINE__, #NAME " fetch_add: old 0x%x, want 0x%x", (unsigned)old, \
                           (unsigned)a);                                                          \
        return aclshmem_##NAME##_atomic_fetch(word, pe);                                          \
    }
ACLSHMEM_AMO_HALF_TYPES(DEFINE_ADD_ONCE)

static void rounding_case(const char *tn, ref_format f, uint16_t got, double a, double b)
{
    uint16_t want = ref_round(f, a + b);
    if (got != want)
        harness_report(__FILE__, __LINE__, "%s: %g + %g gave 0x%04x, want 0x%04x", tn, a, b, got, want);
}

/* A pseudo-random 16-bit pattern that is a finite number. */
static uint16_t finite_pattern(ref_format f, uint32_t *seed)
{
    for (;;) {
        *seed = *seed * 1103515245u + 12345u;
        uint16_t b = (uint16_t)(*seed >> 8);
        if ((b & ref_exp_all_ones(f)) != ref_exp_all_ones(f))
            return b;
    }
}

static int t_float_sums(int me, int n)
{
#define CALL_SUMS(NAME, TYPE) sums_##NAME(n);
    ACLSHMEM_AMO_FLOAT_TYPES(CALL_SUMS)
    ACLSHMEM_AMO_HALF_TYPES(CALL_SUMS)
#undef CALL_SUMS
    /* Rounding, on the next PE's words. */
    int next = (me + 1) % n;
    aclshmem_half_t *h = aclshmem_calloc(1, sizeof *h);
    aclshmem_bfloat16_t *b = aclshmem_calloc(1, sizeof *b);
    ASSERT_NOT_NULL(h);
    ASSERT_NOT_NULL(b);
    aclshmem_barrier_all();
    static const double cases[][2] = {{2048, 1}, {2048, 3}, {256, 1}, {256, 3}, {1, 0x1p-11},
                                      {1, 0x1p-8}, {65504, 16}, {-65504, -16}, {0x1p-24, 0x1p-25},
                                      {1, -1}, {INFINITY, 1}, {-INFINITY, 65504}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double x = cases[i][0], y = cases[i][1];
        rounding_case("half", REF_HALF, add_once_half(h, num_half(x), num_half(y), next), dbl_half(num_half(x)),
                      dbl_half(num_half(y)));
        rounding_case("bfloat16", REF_BF16, add_once_bfloat16(b, num_bfloat16(x), num_bfloat16(y), next),
                      dbl_bfloat16(num_bfloat16(x)), dbl_bfloat16(num_bfloat16(y)));
    }
    /* inf + -inf is a NaN (any NaN: the CPU's default one has the sign bit set on x86) */
    EXPECT(ref_is_nan(REF_HALF, add_once_half(h, num_half(INFINITY), num_half(-INFINITY), next)));
    EXPECT(ref_is_nan(REF_BF16, add_once_bfloat16(b, num_bfloat16(INFINITY), num_bfloat16(-INFINITY), next)));
    /* Random finite pairs whose exact sum a double holds (exponents < 40 apart). */
    uint32_t seed = 12345u + (uint32_t)me;
    for (int i = 0; i < 200; i++) {
        uint16_t x = finite_pattern(REF_HALF, &seed), y = finite_pattern(REF_HALF, &seed);
        rounding_case("half (random)", REF_HALF, add_once_half(h, x, y, next), dbl_half(x), dbl_half(y));
        x = finite_pattern(REF_BF16, &seed);
        y = finite_pattern(REF_BF16, &seed);
        int ex, ey;
        frexp(dbl_bfloat16(x), &ex);
        frexp(dbl_bfloat16(y), &ey);
        if (abs(ex - ey) < 40 || dbl_bfloat16(x) == 0 || dbl_bfloat16(y) == 0)
            rounding_case("bfloat16 (random)", REF_BF16, add_once_bfloat16(b, x, y, next), dbl_bfloat16(x),
                          dbl_bfloat16(y));
    }
    aclshmem_barrier_all();
    aclshmem_free(b);
    aclshmem_free(h);
    return 0;
}

/* ---- AMOs come after earlier puts --------------------------------------------------------------
 * Each round a PE puts a block into the next PE, then increments the next PE's flag with
 * an AMO; the next PE waits for the flag (sleeping: the AMO must wake it) and then must
 * find the whole block. */
#define ORDER_ROUNDS 40
#define ORDER_BYTES 4096

static int t_after_puts(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    uint64_t *flag = aclshmem_calloc(1, sizeof(uint64_t));
    unsigned char *block = aclshmem_calloc(ORDER_BYTES, 1);
    uint64_t *ack = aclshmem_calloc(1, sizeof(uint64_t));
    ASSERT_NOT_NULL(flag);
    ASSERT_NOT_NULL(block);
    ASSERT_NOT_NULL(ack);
    unsigned char src[ORDER_BYTES];
    int torn = 0;
    aclshmem_barrier_all();
    for (int r = 1; r <= ORDER_ROUNDS; r++) {
        memset(src, (me * 16 + r) & 0xff, sizeof src);
        aclshmem_putmem(block, src, sizeof src, next);
        aclshmem_uint64_atomic_inc(flag, next);
        aclshmem_uint64_wait_until(flag, ACLSHMEM_CMP_GE, (uint64_t)r);
        for (int i = 0; i < ORDER_BYTES; i++)
            torn += block[i] != ((prev * 16 + r) & 0xff);
        /* let prev overwrite the block only after it was checked */
        aclshmem_uint64_atomic_add(ack, 1, prev);
        aclshmem_uint64_wait_until(ack, ACLSHMEM_CMP_GE, (uint64_t)r);
    }
    EXPECT_EQ(torn, 0);
    aclshmem_barrier_all();
    aclshmem_free(ack);
    aclshmem_free(block);
    aclshmem_free(flag);
    return 0;
}

/* ---- 16 kernel blocks at once ---------------------------------------------------------------- */
#define BLOCKS 16
#define BLOCK_TICKETS 40

typedef struct {
    int64_t *counter;             /* symmetric: one per PE */
    aclshmem_half_t *half_sum;    /* symmetric */
    aclshmem_bfloat16_t *bf_sum;  /* symmetric */
    int32_t *mask;                /* symmetric: bit b set by block b of every PE */
    int n_pes;
    int64_t drawn[BLOCKS][BLOCK_TICKETS]; /* tickets this PE's blocks drew from PE 0 */
    int not_increasing[BLOCKS];   /* a block saw PE 0's counter go back */
    int64_t seen_after_barrier[BLOCKS];
} kernel_arg;

static void amo_kernel(uint32_t block, uint32_t block_dim, void *varg)
{
    (void)block_dim;
    kernel_arg *a = varg;
    int me = aclshmem_my_pe();
    for (int i = 0; i < BLOCK_TICKETS; i++) {
        for (int k = 0; k < a->n_pes; k++) {
            int pe = (me + k) % a->n_pes;
            int64_t t = aclshmem_int64_atomic_fetch_add(a->counter, 1, pe);
            if (pe == 0) {
                if (i > 0 && t <= a->drawn[block][i - 1])
                    a->not_increasing[block] = 1;
                a->drawn[block][i] = t;
            }
        }
    }
    aclshmem_half_atomic_add(a->half_sum, 0x3c00 /* 1.0 */, 0);
    aclshmem_bfloat16_atomic_fetch_add(a->bf_sum, 0x3f80 /* 1.0 */, a->n_pes - 1);
    aclshmem_int32_atomic_or(a->mask, (int32_t)(1u << block), (me + 1) % a->n_pes);
    /* Every block of every PE is done once this returns: the counters are final. */
    aclshmemx_barrier_all_vec();
    a->seen_after_barrier[block] = aclshmem_int64_atomic_fetch(a->counter, me);
}

static int t_kernel_blocks(int me, int n)
{
    kernel_arg *a = calloc(1, sizeof *a);
    ASSERT_NOT_NULL(a);
    a->counter = aclshmem_calloc(1, sizeof(int64_t));
    a->half_sum = aclshmem_calloc(1, sizeof(aclshmem_half_t));
    a->bf_sum = aclshmem_calloc(1, sizeof(aclshmem_bfloat16_t));
    a->mask = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *all = aclshmem_calloc((size_t)n * BLOCKS * BLOCK_TICKETS, sizeof(int64_t));
    ASSERT_NOT_NULL(a->counter);
    ASSERT_NOT_NULL(a->half_sum);
    ASSERT_NOT_NULL(a->bf_sum);
    ASSERT_NOT_NULL(a->mask);
    ASSERT_NOT_NULL(all);
    a->n_pes = n;
    aclshmem_barrier_all();
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, amo_kernel, BLOCKS, a), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    int64_t total = (int64_t)n * BLOCKS * BLOCK_TICKETS;
    for (int b = 0; b < BLOCKS; b++) {
        EXPECT_EQ(a->not_increasing[b], 0);
        EXPECT_EQ(a->seen_after_barrier[b], total);
    }
    /* Every ticket of PE 0's counter went to exactly one block of one PE. */
    aclshmem_int64_put(all + (size_t)me * BLOCKS * BLOCK_TICKETS, &a->drawn[0][0], BLOCKS * BLOCK_TICKETS, 0);
    aclshmem_barrier_all();
    if (me == 0) {
        qsort(all, (size_t)total, sizeof(int64_t), cmp_int64);
        int wrong = 0;
        for (int64_t i = 0; i < total; i++)
            wrong += all[i] != i;
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(dbl_half(*a->half_sum), n * BLOCKS);
    }
    if (me == n - 1)
        EXPECT_EQ(dbl_bfloat16(*a->bf_sum), n * BLOCKS);
    EXPECT_EQ(*a->mask, (int32_t)((1u << BLOCKS) - 1));
    EXPECT_EQ(*a->counter, total);
    aclshmem_barrier_all();
    aclshmem_free(all);
    aclshmem_free(a->mask);
    aclshmem_free(a->bf_sum);
    aclshmem_free(a->half_sum);
    aclshmem_free(a->counter);
    free(a);
    return 0;
}

/* A failing AMO in a kernel is the kernel's stream error. */
static void bad_amo_kernel(uint32_t block, uint32_t block_dim, void *arg)
{
    (void)block_dim;
    int32_t *word = arg;
    if (block == 1)
        aclshmem_int32_atomic_add(word, 1, aclshmem_n_pes());
}

static int t_kernel_bad_input(int me, int n)
{
    (void)me, (void)n;
    int32_t *word = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(word);
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, bad_amo_kernel, 2, word), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("aclshmem_int32_atomic_add");
    EXPECT_EQ(*word, 0);
    aclshmem_barrier_all();
    aclshmem_free(word);
    return 0;
}

/* ---- bad input, for every function ---------------------------------------------------------
 * Each function of a type, through a pointer of its shape, against each bad target: a PE
 * out of range either way, a local (non-symmetric) address, NULL, and (words of 2 bytes or
 * more) an address off the word's alignment.  Each call must fail with a last error that
 * says why, fetching forms must return 0, and no word may change. */
typedef struct {
    const char *what, *text;
    int offset; /* bytes from the symmetric word (misaligned), or -1: the local word, -2: NULL */
    int pe;     /* -100: the next PE */
} bad_target;

static void *bad_address(const bad_target *t, void *sym, void *local)
{
    if (t->offset == -1)
        return local;
    if (t->offset == -2)
        return NULL;
    return (char *)sym + t->offset;
}

#define BAD_CALL_CHECK(tn, fname, t, call, returns_zero)                                         \
    do {                                                                                          \
        harness_mark_error();                                                                     \
        int zero_ = (returns_zero);                                                               \
        (void)(call);                                                                             \
        if (!harness_error_since_mark() || !harness_contains(aclshmemx_get_last_error(), (t)->text)) \
            harness_report(__FILE__, __LINE__, "%s %s with %s: last error \"%s\"", tn, fname,     \
                           (t)->what, aclshmemx_get_last_error());                                \
        if (!zero_)                                                                               \
            harness_report(__FILE__, __LINE__, "%s %s with %s: did not return 0", tn, fname,      \
                           (t)->what);                                                            \
    } while (0)

#define DEFINE_BAD_TEST(NAME, TYPE, WITH_CSWAP, WITH_INTEGER)                                      \
    static void bad_##NAME(int me, int n, const bad_target *targets, size_t n_targets)           \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n;                                                                  \
        /* room for a misaligned word inside the heap: two words, the first one used */          \
        TYPE *sym = aclshmem_calloc(2, sizeof(TYPE));                                             \
        ASSERT_NOT_NULL(sym);                                                                     \
        TYPE local[2] = {0, 0}, one = num_##NAME(1);                                              \
        struct { const char *name; void (*fn)(TYPE *, TYPE, int32_t); } puts_[] = {               \
            {"atomic_add", aclshmem_##NAME##_atomic_add}, {"atomic_set", aclshmem_##NAME##_atomic_set}}; \
        struct { const char *name; TYPE (*fn)(TYPE *, TYPE, int32_t); } fetches[] = {             \
            {"atomic_fetch_add", aclshmem_##NAME##_atomic_fetch_add},                             \
            {"atomic_swap", aclshmem_##NAME##_atomic_swap}};                                      \
        aclshmem_barrier_all();                                                                   \
        for (size_t k = 0; k < n_targets; k++) {                                                  \
            const bad_target *t = &targets[k];                                                    \
            if (t->offset > 0 && (size_t)t->offset % sizeof(TYPE) == 0)                           \
                continue; /* not misaligned for this width */                                     \
            TYPE *dst = bad_address(t, sym, local);                                               \
            int pe = t->pe == -100 ? next : t->pe == -101 ? n : t->pe;                            \
            for (size_t f = 0; f < sizeof puts_ / sizeof puts_[0]; f++)                           \
                BAD_CALL_CHECK(tn, puts_[f].name, t, (puts_[f].fn(dst, one, pe), 0), 1);          \
            for (size_t f = 0; f < sizeof fetches / sizeof fetches[0]; f++)                       \
                BAD_CALL_CHECK(tn, fetches[f].name, t, 0, fetches[f].fn(dst, one, pe) == 0);      \
            BAD_CALL_CHECK(tn, "atomic_fetch", t, 0, aclshmem_##NAME##_atomic_fetch(dst, pe) == 0); \
            WITH_CSWAP(BAD_CALL_CHECK(tn, "atomic_compare_swap", t, 0,                            \
                                      aclshmem_##NAME##_atomic_compare_swap(dst, 0, one, pe) == 0);) \
            WITH_INTEGER(bad_integer_##NAME(tn, t, dst, pe);)                                     \
        }                                                                                         \
        aclshmem_barrier_all();                                                                   \
        /* nothing changed anywhere */                                                            \
        TYPE zero = 0;                                                                            \
        EXPECT(memcmp(&sym[0], &zero, sizeof zero) == 0 && memcmp(&sym[1], &zero, sizeof zero) == 0); \
        EXPECT(memcmp(&local[0], &zero, sizeof zero) == 0 && memcmp(&local[1], &zero, sizeof zero) == 0); \
        aclshmem_barrier_all();                                                                   \
        aclshmem_free(sym);                                                                       \
    }
#define YES(...) __VA_ARGS__
#define NO(...)

/* inc, fetch_inc and the bitwise forms (integers). */
#define DEFINE_BAD_INTEGER(NAME, TYPE)                                                            \
    static void bad_integer_##NAME(const char *tn, const bad_target *t, TYPE *dst, int pe)       \
    {                                                                                             \
        struct { const char *name; void (*fn)(TYPE *, TYPE, int32_t); } puts_[] = {               \
            {"atomic_and", aclshmem_##NAME##_atomic_and}, {"atomic_or", aclshmem_##NAME##_atomic_or}, \
            {"atomic_xor", aclshmem_##NAME##_atomic_xor}};                                        \
        struct { const char *name; TYPE (*fn)(TYPE *, TYPE, int32_t); } fetches[] = {             \
            {"atomic_fetch_and", aclshmem_##NAME##_atomic_fetch_and},                             \
            {"atomic_fetch_or", aclshmem_##NAME##_atomic_fetch_or},                               \
            {"atomic_fetch_xor", aclshmem_##NAME##_atomic_fetch_xor}};                            \
        for (size_t f = 0; f < sizeof puts_ / sizeof puts_[0]; f++)                               \
            BAD_CALL_CHECK(tn, puts_[f].name, t, (puts_[f].fn(dst, (TYPE)-1, pe), 0), 1);         \
        for (size_t f = 0; f < sizeof fetches / sizeof fetches[0]; f++)                           \
            BAD_CALL_CHECK(tn, fetches[f].name, t, 0, fetches[f].fn(dst, (TYPE)-1, pe) == 0);     \
        BAD_CALL_CHECK(tn, "atomic_inc", t, (aclshmem_##NAME##_atomic_inc(dst, pe), 0), 1);       \
        BAD_CALL_CHECK(tn, "atomic_fetch_inc", t, 0, aclshmem_##NAME##_atomic_fetch_inc(dst, pe) == 0); \
    }
ACLSHMEM_AMO_INT_TYPES(DEFINE_BAD_INTEGER)

#define BAD_INT(NAME, TYPE) DEFINE_BAD_TEST(NAME, TYPE, YES, YES)
#define BAD_FLOAT(NAME, TYPE) DEFINE_BAD_TEST(NAME, TYPE, YES, NO)
#define BAD_HALF(NAME, TYPE) DEFINE_BAD_TEST(NAME, TYPE, NO, NO)
ACLSHMEM_AMO_INT_TYPES(BAD_INT)
ACLSHMEM_AMO_FLOAT_TYPES(BAD_FLOAT)
ACLSHMEM_AMO_HALF_TYPES(BAD_HALF)

static int t_bad_input(int me, int n)
{
    static const bad_target targets[] = {
        {"PE n", "PE", 0, -101},
        {"PE -1", "PE -1", 0, -1},
        {"a local address", "symmetric heap", -1, -100},
        {"NULL", "NULL", -2, -100},
        {"an address 1 byte off", "aligned", 1, -100},
        {"an address 2 bytes off", "aligned", 2, -100},
        {"an address 4 bytes off", "aligned", 4, -100},
    };
    size_t n_targets = sizeof targets / sizeof targets[0];
#define CALL_BAD(NAME, TYPE) bad_##NAME(me, n, targets, n_targets);
    ACLSHMEM_AMO_INT_TYPES(CALL_BAD)
    ACLSHMEM_AMO_FLOAT_TYPES(CALL_BAD)
    ACLSHMEM_AMO_HALF_TYPES(CALL_BAD)
#undef CALL_BAD
    /* the heap's last byte: a word there would run past the heap's end */
    uint64_t *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    ASSERT_NOT_NULL(base);
    harness_mark_error();
    EXPECT_EQ(aclshmem_uint64_atomic_fetch_inc(
                  (uint64_t *)(void *)((char *)base + harness_current_opts()->heap_size - 4), 0),
              0);
    EXPECT_ERROR_SET();
    aclshmem_barrier_all();
    return 0;
}

/* Before init: every shape fails with "not initialized" and fetching forms return 0. */
static int t_not_initialized(int me, int n)
{
    (void)me, (void)n;
    int64_t word = 5;
    EXPECT_REJECTED(aclshmem_int64_atomic_add(&word, 1, 0), "not initialized");
    harness_mark_error();
    EXPECT_EQ(aclshmem_int64_atomic_fetch_add(&word, 1, 0), 0);
    EXPECT_ERROR_CONTAINS("not initialized");
    harness_mark_error();
    EXPECT_EQ(aclshmem_int64_atomic_compare_swap(&word, 5, 1, 0), 0);
    EXPECT_ERROR_CONTAINS("not initialized");
    harness_mark_error();
    EXPECT_EQ(aclshmem_half_atomic_fetch((aclshmem_half_t *)(void *)&word, 0), 0);
    EXPECT_ERROR_CONTAINS("aclshmem_half_atomic_fetch");
    EXPECT_REJECTED(aclshmem_uint8_atomic_inc((uint8_t *)(void *)&word, 0), "not initialized");
    EXPECT_REJECTED(aclshmemx_signal_op((int32_t *)(void *)&word, 1, ACLSHMEM_SIGNAL_ADD, 0), "not initialized");
    EXPECT_REJECTED(aclshmemx_barrier_all_vec(), "not initialized");
    EXPECT_EQ(word, 5);
    return 0;
}

/* ---- half and bfloat16 RMA moves bit patterns ----------------------------------------------
 * Every typed RMA family of the two types, with patterns that a conversion would change:
 * NaN payloads (signalling too), infinities, subnormals, -0. */
static const uint16_t SPECIAL[] = {0x7c01, 0x7e55, 0xfd00, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x8000, 0x7bff,
                                   0x7f81, 0xffc1, 0x7f80, 0x0080, 0x807f, 0x3c00, 0x3f80, 0x1234, 0xabcd};
#define N_SPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

static uint16_t special(int i, int pe)
{
    return SPECIAL[(i + pe) % N_SPECIAL];
}

#define DEFINE_RMA16_TEST(NAME, TYPE)                                                             \
    static void rma16_##NAME(int me, int n)                                                       \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                         \
        TYPE *sym = aclshmem_calloc(4 * N_SPECIAL, sizeof(TYPE));                                 \
        int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));                                       \
        ASSERT_NOT_NULL(sym);                                                                     \
        ASSERT_NOT_NULL(sig);                                                                     \
        TYPE src[2 * N_SPECIAL], got[2 * N_SPECIAL];                                              \
        for (int i = 0; i < N_SPECIAL; i++)                                                       \
            src[i] = special(i, me);                                                              \
        int bad = 0;                                                                              \
        aclshmem_barrier_all();                                                                   \
        aclshmem_##NAME##_put(sym, src, N_SPECIAL, next);                                         \
        aclshmem_##NAME##_p(&sym[N_SPECIAL], src[3], next);                                       \
        aclshmem_##NAME##_iput(&sym[2 * N_SPECIAL], src, 2, 1, N_SPECIAL / 2, next);              \
        aclshmem_##NAME##_put_signal(&sym[3 * N_SPECIAL], src, N_SPECIAL, (uint8_t *)sig, 1,      \
                                     ACLSHMEM_SIGNAL_ADD, next);                                  \
        aclshmem_barrier_all();                                                                   \
        for (int i = 0; i < N_SPECIAL; i++) {                                                     \
            bad += sym[i] != special(i, prev);                                                    \
            bad += sym[3 * N_SPECIAL + i] != special(i, prev);                                    \
        }                                                                                         \
        for (int i = 0; i < N_SPECIAL / 2; i++)                                                   \
            bad += sym[2 * N_SPECIAL + 2 * i] != special(i, prev);                                \
        bad += sym[N_SPECIAL] != special(3, prev);                                                \
        bad += *sig != 1;                                                                         \
        if (bad)                                                                                  \
            harness_report(__FILE__, __LINE__, "%s put/p/iput/put_signal: %d wrong", tn, bad);    \
        bad = 0;                                                                                  \
        aclshmem_##NAME##_get(got, sym, N_SPECIAL, next);                                         \
        for (int i = 0; i < N_SPECIAL; i++)                                                       \
            bad += got[i] != special(i, me);                                                      \
        bad += aclshmem_##NAME##_g(&sym[5], next) != special(5, me);                              \
        memset(got, 0, sizeof got);                                                               \
        aclshmem_##NAME##_iget(got, sym, 2, 3, N_SPECIAL / 3, next);                              \
        for (int i = 0; i < N_SPECIAL / 3; i++)                                                   \
            bad += got[2 * i] != special(3 * i, me) || got[2 * i + 1] != 0;                       \
        if (bad)                                                                                  \
            harness_report(__FILE__, __LINE__, "%s get/g/iget: %d wrong", tn, bad);               \
        aclshmem_barrier_all();                                                                   \
        aclshmem_free(sig);                                                                       \
        aclshmem_free(sym);                                                                       \
    }
ACLSHMEM_AMO_HALF_TYPES(DEFINE_RMA16_TEST)

static int t_rma16(int me, int n)
{
    rma16_half(me, n);
    rma16_bfloat16(me, n);
    return 0;
}

/* ---- barrier_vec on the host ------------------------------------------------------------------ */
static int t_barrier_vec(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int32_t *slot = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(slot);
    aclshmem_barrier_all();
    for (int r = 1; r <= 5; r++) {
        aclshmem_int32_p(slot, me * 100 + r, next);
        if (r % 2)
            aclshmemx_barrier_vec(ACLSHMEM_TEAM_WORLD);
        else
            aclshmemx_barrier_all_vec();
        EXPECT_EQ(*slot, prev * 100 + r);
        aclshmemx_barrier_all_vec(); /* nobody writes round r + 1 before everyone read round r */
    }
    EXPECT_REJECTED(aclshmemx_barrier_vec(1234), "does not exist");
    aclshmemx_barrier_vec(ACLSHMEM_TEAM_INVALID); /* a no-op, as aclshmem_barrier */
    aclshmem_barrier_all();
    aclshmem_free(slot);
    return 0;
}

/* ---- signal_op on the host ---------------------------------------------------------------------
 * Data with putmem, then signal_op ADD; the receiver waits for the signal and finds the
 * data.  SET overwrites.  Bad input fails and changes nothing. */
static int t_signal_op(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int32_t *sig = aclshmem_calloc(2, sizeof(int32_t));
    int64_t *data = aclshmem_calloc(64, sizeof(int64_t));
    ASSERT_NOT_NULL(sig);
    ASSERT_NOT_NULL(data);
    int64_t src[64];
    aclshmem_barrier_all();
    for (int r = 1; r <= 10; r++) {
        for (int i = 0; i < 64; i++)
            src[i] = me * 1000 + r * 64 + i;
        aclshmem_putmem(data, src, sizeof src, next);
        aclshmemx_signal_op(&sig[0], 1, ACLSHMEM_SIGNAL_ADD, next);
        EXPECT_GE(aclshmem_signal_wait_until(&sig[0], ACLSHMEM_CMP_GE, r), r);
        int wrong = 0;
        for (int i = 0; i < 64; i++)
            wrong += data[i] != prev * 1000 + r * 64 + i;
        EXPECT_EQ(wrong, 0);
        aclshmemx_signal_op(&sig[1], r, ACLSHMEM_SIGNAL_SET, prev); /* "read round r" */
        aclshmem_signal_wait_until(&sig[1], ACLSHMEM_CMP_EQ, r);
    }
    EXPECT_REJECTED(aclshmemx_signal_op(&sig[0], 1, 7, next), "sig_op");
    EXPECT_REJECTED(aclshmemx_signal_op(&sig[0], 1, ACLSHMEM_SIGNAL_SET, n), "PE");
    EXPECT_REJECTED(aclshmemx_signal_op((int32_t *)(void *)((char *)sig + 2), 1, ACLSHMEM_SIGNAL_SET, next),
                    "aligned");
    int32_t local = 0;
    EXPECT_REJECTED(aclshmemx_signal_op(&local, 1, ACLSHMEM_SIGNAL_SET, next), "symmetric heap");
    aclshmem_barrier_all();
    EXPECT_EQ(sig[0], 10);
    EXPECT_EQ(sig[1], 10);
    aclshmem_barrier_all();
    aclshmem_free(data);
    aclshmem_free(sig);
    return 0;
}

static const harness_case cases[] = {
    { "every_operation", t_every_operation, { 0 }, { 1, 2, 4, 8 } },
    { "fetch_add_unique", t_fetch_add_unique, { 0 }, { 1, 2, 4, 8 } },
    { "cswap_lock", t_cswap_lock, { 0 }, { 1, 2, 4, 8 } },
    { "float_sums", t_float_sums, { 0 }, { 1, 2, 4, 8 } },
    { "after_puts", t_after_puts, { 0 }, { 1, 2, 4, 8 } },
    { "kernel_blocks", t_kernel_blocks, { 0 }, { 1, 2, 4, 8 } },
    { "kernel_bad_input", t_kernel_bad_input, { 0 }, { 2 } },
    { "bad_input", t_bad_input, { 0 }, { 1, 2 } },
    { "not_initialized", t_not_initialized, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "rma16", t_rma16, { 0 }, { 1, 2, 4 } },
    { "barrier_vec", t_barrier_vec, { 0 }, { 1, 2, 4, 8 } },
    { "signal_op", t_signal_op, { 0 }, { 1, 2, 4, 8 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
