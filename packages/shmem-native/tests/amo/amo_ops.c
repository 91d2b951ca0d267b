/*
 * amo_ops.c - every operation of every AMO type (generated from the type tables of
 * aclshmem/amo.h) on both symmetric heaps, on words with a guard behind them; and the exact
 * float, half and bfloat16 sums with their rounding against the reference (fp_ref.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "amo_suite.h"

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

int t_every_operation(int me, int n)
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

int t_float_sums(int me, int n)
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
