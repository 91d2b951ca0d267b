/*
 * test_coll_reduce.c - the reductions of aclshmem/coll.h: every operation on every type of
 * its tables (ACLSHMEM_REDUCE_*_TYPES), reduce and reduce-scatter, out of place and in
 * place, on the world team and on a strided sub-team, with counts from zero to sizes that
 * straddle the engine's pieces and its small/large switch, on streams; and the results are
 * the same bits on every PE.  aclshmemx_reduce_local the same way, on local memory.
 *
 * Each PE's source holds small integers (1..9, complex ones with an imaginary part), so
 * every exact result is exact in every type up to 4 PEs (9^4 = 6561 is a float); integers
 * wrap as C's unsigned arithmetic does; half and bfloat16 are the exact result rounded once
 * (what the engine promises: it computes in float).
 */
#define _GNU_SOURCE
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amo/fp_ref.h"
#include "aclshmem/coll.h"
#include "harness.h"

typedef enum { K_INT, K_REAL, K_HALF, K_BF16, K_CPLX } kind_t;
typedef enum { OP_AND, OP_OR, OP_XOR, OP_MIN, OP_MAX, OP_SUM, OP_PROD } op_t;
static const char *const op_names[] = {"and", "or", "xor", "min", "max", "sum", "prod"};

typedef int (*reduce_fn)(aclshmem_team_t team, void *dest, const void *source, size_t nreduce);
typedef int (*reduce_stream_fn)(aclshmem_team_t team, void *dest, const void *source, size_t nreduce,
                                aclrtStream stream);

/* One (type, operation) of the API, with its three calls. */
typedef struct {
    const char *type;
    size_t size;
    kind_t kind;
    op_t op;
    reduce_fn reduce, scatter;
    reduce_stream_fn on_stream;
    /* element i of base = the value (iv for integers, re + im*i otherwise) in the type */
    void (*store)(void *base, size_t i, kind_t kind, unsigned long long iv, double re, double im);
} combo_t;

#define KIND_OF(NAME, TYPE)                                                                        \
    (strcmp(#NAME, "half") == 0       ? K_HALF                                                     \
     : strcmp(#NAME, "bfloat16") == 0 ? K_BF16                                                     \
                                      : _Generic((TYPE)0, float: K_REAL, double: K_REAL, long double: K_REAL, \
                                                 float _Complex: K_CPLX, double _Complex: K_CPLX,  \
                                                 default: K_INT))

/* One store per type (the reduction tables share types: defined once, from the union). */
#define STORE_FN(NAME, TYPE)                                                                       \
    static void store_##NAME(void *base, size_t i, kind_t kind, unsigned long long iv, double re, double im) \
    {                                                                                              \
        TYPE v;                                                                                    \
        if (kind == K_INT)                                                                         \
            v = (TYPE)iv;                                                                          \
        else if (kind == K_HALF)                                                                   \
            v = (TYPE)ref_round(REF_HALF, re);                                                     \
        else if (kind == K_BF16)                                                                   \
            v = (TYPE)ref_round(REF_BF16, re);                                                     \
        else                                                                                       \
            v = (TYPE)(re + im * I);                                                               \
        memcpy((char *)base + i * sizeof(TYPE), &v, sizeof v);                                     \
    }
ACLSHMEM_COLL_TYPES(STORE_FN)
STORE_FN(complexf, float _Complex)
STORE_FN(complexd, double _Complex)

#define OP_ENUM_and OP_AND
#define OP_ENUM_or OP_OR
#define OP_ENUM_xor OP_XOR
#define OP_ENUM_min OP_MIN
#define OP_ENUM_max OP_MAX
#define OP_ENUM_sum OP_SUM
#define OP_ENUM_prod OP_PROD

#define COMBO(NAME, TYPE, OP)                                                                      \
    static int reduce_##NAME##_##OP(aclshmem_team_t t, void *d, const void *s, size_t n)           \
    {                                                                                              \
        return aclshmem_##NAME##_##OP##_reduce(t, d, s, n);                                        \
    }                                                                                              \
    static int scatter_##NAME##_##OP(aclshmem_team_t t, void *d, const void *s, size_t n)          \
    {                                                                                              \
        return aclshmem_##NAME##_##OP##_reducescatter(t, d, s, n);                                 \
    }                                                                                              \
    static int stream_##NAME##_##OP(aclshmem_team_t t, void *d, const void *s, size_t n, aclrtStream st) \
    {                                                                                              \
        return aclshmemx_##NAME##_##OP##_reduce_on_stream(t, d, s, n, st);                         \
    }
#define COMBO_ROW(NAME, TYPE, OP)                                                                  \
    {#NAME, sizeof(TYPE), K_INT, OP_ENUM_##OP, reduce_##NAME##_##OP, scatter_##NAME##_##OP,        \
     stream_##NAME##_##OP, store_##NAME},

/* The functions, then the table, over the same (type, operation) lists as the header. */
#define EACH_REDUCTION(F)                                                                          \
    ACLSHMEM_REDUCE_BITWISE_TYPES(F##_and) ACLSHMEM_REDUCE_BITWISE_TYPES(F##_or)                   \
    ACLSHMEM_REDUCE_BITWISE_TYPES(F##_xor) ACLSHMEM_REDUCE_MINMAX_TYPES(F##_min)                   \
    ACLSHMEM_REDUCE_MINMAX_TYPES(F##_max) ACLSHMEM_REDUCE_ARITH_TYPES(F##_sum)                     \
    ACLSHMEM_REDUCE_ARITH_TYPES(F##_prod)
#define COMBO_and(N, T) COMBO(N, T, and)
#define COMBO_or(N, T) COMBO(N, T, or)
#define COMBO_xor(N, T) COMBO(N, T, xor)
#define COMBO_min(N, T) COMBO(N, T, min)
#define COMBO_max(N, T) COMBO(N, T, max)
#define COMBO_sum(N, T) COMBO(N, T, sum)
#define COMBO_prod(N, T) COMBO(N, T, prod)
#define COMBO_ROW_and(N, T) COMBO_ROW(N, T, and)
#define COMBO_ROW_or(N, T) COMBO_ROW(N, T, or)
#define COMBO_ROW_xor(N, T) COMBO_ROW(N, T, xor)
#define COMBO_ROW_min(N, T) COMBO_ROW(N, T, min)
#define COMBO_ROW_max(N, T) COMBO_ROW(N, T, max)
#define COMBO_ROW_sum(N, T) COMBO_ROW(N, T, sum)
#define COMBO_ROW_prod(N, T) COMBO_ROW(N, T, prod)
EACH_REDUCTION(COMBO)

static combo_t combos[] = {EACH_REDUCTION(COMBO_ROW)};
#define N_COMBOS (sizeof combos / sizeof combos[0])

/* The kinds, which a static initializer cannot compute with strcmp. */
#define SET_KIND(NAME, TYPE)                                                                       \
    for (size_t c = 0; c < N_COMBOS; c++)                                                          \
        if (strcmp(combos[c].type, #NAME) == 0)                                                    \
            combos[c].kind = KIND_OF(NAME, TYPE);
static void set_kinds(void)
{
    ACLSHMEM_COLL_TYPES(SET_KIND)
    SET_KIND(complexf, float _Complex)
    SET_KIND(complexd, double _Complex)
}

/* ---- values and the reference ---------------------------------------------------------- */

/* Team PE p's element i: 1..9, and an imaginary part 0..2 for the complex types. */
static unsigned value(int p, size_t i)
{
    return 1 + (unsigned)((size_t)p * 5 + i * 3 + ((size_t)p * i) % 7) % 9;
}

static unsigned imag_part(int p, size_t i)
{
    return (unsigned)((size_t)p + 2 * i) % 3;
}

static void fill_source(const combo_t *c, void *base, size_t count, size_t first, int p)
{
    for (size_t i = 0; i < count; i++)
        c->store(base, i, c->kind, value(p, first + i), value(p, first + i), imag_part(p, first + i));
}

/* Element i of the result over team PEs 0..n-1, in the type, at out[0]. */
static void expected(const combo_t *c, int n, size_t i, void *out)
{
    unsigned long long acc = value(0, i);
    double real = value(0, i);
    double complex z = value(0, i) + imag_part(0, i) * I;
    for (int p = 1; p < n; p++) {
        unsigned long long v = value(p, i);
        double complex w = v + imag_part(p, i) * I;
        switch (c->op) {
        case OP_AND: acc &= v; break;
        case OP_OR: acc |= v; break;
        case OP_XOR: acc ^= v; break;
        case OP_MIN: acc = v < acc ? v : acc; real = acc; break;
        case OP_MAX: acc = v > acc ? v : acc; real = acc; break;
        case OP_SUM: acc += v; real += (double)v; z += w; break;
        case OP_PROD: acc *= v; real *= (double)v; z *= w; break;
        }
    }
    if (c->kind == K_CPLX)
        c->store(out, 0, c->kind, 0, creal(z), cimag(z));
    else
        c->store(out, 0, c->kind, acc, real, 0);
}

/* Whether two elements are the same: their bits, but for long double, whose padding bytes
 * (6 of 16 on x86-64) hold whatever was there: its value. */
static int same_element(const combo_t *c, const void *a, const void *b)
{
    if (strcmp(c->type, "longdouble") == 0) {
        long double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    return memcmp(a, b, c->size) == 0;
}

/* The first element of got[0..count) that differs from the result of elements first.., or -1. */
static long check_result(const combo_t *c, int n, const void *got, size_t count, size_t first)
{
    unsigned char want[32];
    for (size_t i = 0; i < count; i++) {
        expected(c, n, first + i, want);
        if (!same_element(c, (const char *)got + i * c->size, want))
            return (long)i;
    }
    return -1;
}

#define EXPECT_RESULT(c, n, got, count, first, what)                                               \
    do {                                                                                           \
        long at_ = check_result((c), (n), (got), (count), (first));                                \
        HARNESS_CHECK_(at_ < 0, 0, "%s %s %s of %zu: element %ld differs", (c)->type, op_names[(c)->op], \
                       (what), (size_t)(count), at_);                                              \
    } while (0)

/* ---- the cases ----------------------------------------------------------------------------- */

/* Counts: none, one, fewer than the PEs, small, the most a record carries for 8-byte
 * types (16: 128 bytes, ACLSHMEMX_TEAM_EXCHANGE_MAX) and for 2-byte ones (64), one more, the
 * 4 KiB switch of every type size and several 8 KiB pieces with a rest. */
static const size_t counts[] = {0, 1, 3, 16, 17, 64, 65, 255, 257, 1025, 4099};
#define N_COUNTS (sizeof counts / sizeof counts[0])
#define MAX_COUNT 4099

static void reduce_case(const combo_t *c, aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t count,
                        int in_place)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    uint8_t *from = in_place ? dst : src;
    memset(dst, 0xa5, (count + 1) * c->size);
    fill_source(c, from, count, 0, me);
    EXPECT_EQ(c->reduce(team, dst, from, count), ACLSHMEM_SUCCESS);
    EXPECT_RESULT(c, n, dst, count, 0, in_place ? "reduce in place" : "reduce");
    EXPECT_EQ(dst[count * c->size], 0xa5);
    aclshmem_barrier(team);
}

static void scatter_case(const combo_t *c, aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t count)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    memset(dst, 0xa5, (count + 1) * c->size);
    fill_source(c, src, count * (size_t)n, 0, me);
    EXPECT_EQ(c->scatter(team, dst, src, count), ACLSHMEM_SUCCESS);
    EXPECT_RESULT(c, n, dst, count, (size_t)me * count, "reducescatter");
    EXPECT_EQ(dst[count * c->size], 0xa5);
    aclshmem_barrier(team);
}

/* Symmetric buffers for teams of up to the world's PEs (allocation is collective over the
 * world: made before a sub-team's cases). */
static uint8_t *alloc_source(void)
{
    uint8_t *p = aclshmem_malloc((MAX_COUNT + 1) * 16 * (size_t)aclshmem_n_pes());
    ASSERT_NOT_NULL(p);
    return p;
}

static uint8_t *alloc_dest(void)
{
    uint8_t *p = aclshmem_malloc((MAX_COUNT + 1) * 16);
    ASSERT_NOT_NULL(p);
    return p;
}

static void every_combo(aclshmem_team_t team, const size_t *use_counts, size_t n_counts, uint8_t *src,
                        uint8_t *dst)
{
    for (size_t c = 0; c < N_COMBOS; c++)
        for (size_t k = 0; k < n_counts; k++) {
            reduce_case(&combos[c], team, src, dst, use_counts[k], (int)((c + k) % 2));
            scatter_case(&combos[c], team, src, dst, use_counts[k]);
        }
}

static int t_every_combo(int me, int n)
{
    (void)me, (void)n;
    set_kinds();
    uint8_t *src = alloc_source(), *dst = alloc_dest();
    static const size_t few[] = {0, 1, 3, 1025};
    every_combo(ACLSHMEM_TEAM_WORLD, few, sizeof few / sizeof few[0], src, dst);
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* Every count on the types of each size (and the 16-bit floats), all operations. */
static int t_counts(int me, int n)
{
    (void)me, (void)n;
    set_kinds();
    uint8_t *src = alloc_source(), *dst = alloc_dest();
    static const char *const types[] = {"uint8", "int16", "int32", "uint64", "float", "double", "longdouble",
                                        "half", "bfloat16", "complexd"};
    for (size_t c = 0; c < N_COMBOS; c++) {
        int wanted = 0;
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            wanted |= strcmp(combos[c].type, types[t]) == 0;
        for (size_t k = 0; wanted && k < N_COUNTS; k++) {
            reduce_case(&combos[c], ACLSHMEM_TEAM_WORLD, src, dst, counts[k], (int)(k % 2));
            scatter_case(&combos[c], ACLSHMEM_TEAM_WORLD, src, dst, counts[k]);
        }
    }
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* Back-to-back sums whose inputs change every round, of 2 to 1100 int32 (in the records,
 * beside them in the control segment, the general way) and a reduce-scatter: each round
 * reduces that round's data, never an earlier one's left where it travels. */
static int t_rounds(int me, int n)
{
    static const size_t counts_of[] = {2, 50, 128, 129, 512, 513, 1100};
    int32_t *src = aclshmem_malloc(1100 * sizeof(int32_t) * (size_t)n), *dst = aclshmem_malloc(1100 * sizeof(int32_t));
    ASSERT(src && dst);
    for (size_t c = 0; c < sizeof counts_of / sizeof counts_of[0]; c++) {
        size_t count = counts_of[c];
        for (int round = 0; round < 6; round++) {
            for (size_t k = 0; k < count * (size_t)n; k++)
                src[k] = me * 1000 + round * 100000 + (int32_t)k;
            int32_t base = n * (n - 1) / 2 * 1000 + n * round * 100000;
            EXPECT_EQ(aclshmem_int32_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, count), ACLSHMEM_SUCCESS);
            for (size_t k = 0; k < count; k++)
                if (dst[k] != base + n * (int32_t)k) {
                    harness_report(__FILE__, __LINE__, "sum of %zu, round %d: element %zu is %d", count, round, k,
                                   (int)dst[k]);
                    break;
                }
            size_t part = count / (size_t)n;
            EXPECT_EQ(aclshmem_int32_sum_reducescatter(ACLSHMEM_TEAM_WORLD, dst, src, part), ACLSHMEM_SUCCESS);
            for (size_t k = 0; k < part; k++)
                if (dst[k] != base + n * (int32_t)((size_t)me * part + k)) {
                    harness_report(__FILE__, __LINE__, "reduce-scatter of %zu, round %d: element %zu", part, round, k);
                    break;
                }
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* PEs 1, 3 (stride 2) of 4, or 0, 2 of 3: a sub-team reduces while the others wait. */
static int t_subteam(int me, int n)
{
    set_kinds();
    uint8_t *src = alloc_source(), *dst = alloc_dest();
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    int start = n >= 4 ? 1 : 0;
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, start, 2, 2, &t), ACLSHMEM_SUCCESS);
    if ((me - start) % 2 == 0 && me >= start) {
        ASSERT(t != ACLSHMEM_TEAM_INVALID);
        static const size_t some[] = {0, 5, 4099};
        every_combo(t, some, sizeof some / sizeof some[0], src, dst);
        aclshmem_team_destroy(t);
    } else {
        EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
    }
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* Floating-point sums whose order matters: every PE still gets the same bits. */
static int t_same_bits(int me, int n)
{
    size_t count = 20000;
    double *src = aclshmem_malloc(count * sizeof(double)), *dst = aclshmem_malloc(count * sizeof(double));
    double *all = aclshmem_malloc(count * sizeof(double) * (size_t)n);
    ASSERT(src && dst && all);
    srand(77 + me);
    for (size_t i = 0; i < count; i++)
        src[i] = (rand() - RAND_MAX / 2) * 1e-3 * (1 + (double)(i % 13) * 1e7);
    EXPECT_EQ(aclshmem_double_sum_reduce(ACLSHMEM_TEAM_WORLD, dst, src, count), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_double_fcollect(ACLSHMEM_TEAM_WORLD, all, dst, count), ACLSHMEM_SUCCESS);
    for (int p = 1; p < n; p++)
        EXPECT_EQ(memcmp(all, all + (size_t)p * count, count * sizeof(double)), 0);
    aclshmem_free(all);
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* On a stream: reductions in stream order, then one that fails on every PE's stream. */
static int t_on_stream(int me, int n)
{
    set_kinds();
    aclrtStream stream = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&stream), ACLSHMEM_SUCCESS);
    uint8_t *src = aclshmem_malloc(4099 * 16), *dst = aclshmem_malloc(4099 * 16);
    ASSERT(src && dst);
    for (size_t c = 0; c < N_COMBOS; c += 7) {
        fill_source(&combos[c], src, 4099, 0, me);
        EXPECT_EQ(combos[c].on_stream(ACLSHMEM_TEAM_WORLD, dst, src, 4099, stream), ACLSHMEM_SUCCESS);
        EXPECT_EQ(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
        EXPECT_RESULT(&combos[c], n, dst, 4099, 0, "reduce on a stream");
        aclshmem_barrier_all();
    }
    /* In stream order: a sum of sums. */
    int64_t *a = (int64_t *)(void *)src, *b = (int64_t *)(void *)dst;
    for (int i = 0; i < 100; i++)
        a[i] = me + i;
    EXPECT_EQ(aclshmemx_int64_sum_reduce_on_stream(ACLSHMEM_TEAM_WORLD, b, a, 100, stream), 0);
    EXPECT_EQ(aclshmemx_int64_sum_reduce_on_stream(ACLSHMEM_TEAM_WORLD, b, b, 100, stream), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(b[i], (int64_t)n * (n * (n - 1) / 2 + (int64_t)n * i));
    aclshmem_barrier_all();
    int64_t local[4];
    int rc = aclshmemx_int64_max_reduce_on_stream(ACLSHMEM_TEAM_WORLD, b, me == 0 ? local : a, 4, stream);
    EXPECT_EQ(rc, me == 0 ? ACLSHMEM_INVALID_PARAM : ACLSHMEM_SUCCESS);
    EXPECT_NE(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_destroy(stream), ACLSHMEM_SUCCESS);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* Inside a kernel: one block of each PE makes the call (the others go on). */
typedef struct {
    int32_t *dst, *src;
    size_t count;
    int rc;
} kernel_arg_t;

static void reduce_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)blocks;
    kernel_arg_t *a = arg;
    if (block == 1)
        a->rc = aclshmem_int32_sum_reduce(ACLSHMEM_TEAM_WORLD, a->dst, a->src, a->count);
}

static int t_in_kernel(int me, int n)
{
    size_t count = 5000;
    int32_t *src = aclshmem_malloc(count * sizeof(int32_t)), *dst = aclshmem_malloc(count * sizeof(int32_t));
    ASSERT(src && dst);
    for (size_t i = 0; i < count; i++)
        src[i] = me + (int32_t)i;
    aclrtStream stream = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&stream), ACLSHMEM_SUCCESS);
    kernel_arg_t arg = {dst, src, count, -99};
    ASSERT_EQ(aclshmemx_kernel_launch(stream, reduce_kernel, 3, &arg), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    EXPECT_EQ(arg.rc, ACLSHMEM_SUCCESS);
    for (size_t i = 0; i < count; i++)
        if (dst[i] != n * (n - 1) / 2 + n * (int32_t)i) {
            harness_report(__FILE__, __LINE__, "element %zu is %d", i, dst[i]);
            break;
        }
    EXPECT_EQ(aclshmemx_stream_destroy(stream), ACLSHMEM_SUCCESS);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* ---- aclshmemx_reduce_local: local dest and source, symmetric work -------------------------- */

/* The public enum value of a type name (ACLSHMEM_REDUCE_ARITH_TYPES names every type). */
static aclshmemx_type_t public_type(const char *name)
{
#define TYPE_ROW(NAME, TYPE)                                                                       \
    if (strcmp(name, #NAME) == 0)                                                                  \
        return ACLSHMEMX_TYPE_##NAME;
    ACLSHMEM_REDUCE_ARITH_TYPES(TYPE_ROW)
#undef TYPE_ROW
    return ACLSHMEMX_TYPE_COUNT;
}

static const aclshmemx_reduce_op_t public_ops[] = {ACLSHMEMX_OP_AND, ACLSHMEMX_OP_OR, ACLSHMEMX_OP_XOR,
                                                   ACLSHMEMX_OP_MIN, ACLSHMEMX_OP_MAX, ACLSHMEMX_OP_SUM,
                                                   ACLSHMEMX_OP_PROD};

/* dst and src are this process's own memory (malloc), work symmetric; the source is left as
 * it was (out of place) and nothing past count is written. */
static void local_case(const combo_t *c, aclshmem_team_t team, uint8_t *work, size_t count, int in_place)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    uint8_t *src = malloc((count + 1) * c->size), *dst = malloc((count + 1) * c->size);
    ASSERT(src && dst);
    uint8_t *from = in_place ? dst : src;
    memset(dst, 0xa5, (count + 1) * c->size);
    fill_source(c, from, count, 0, me);
    EXPECT_EQ(aclshmemx_reduce_local(team, dst, from, work, count, public_type(c->type), public_ops[c->op]),
              ACLSHMEM_SUCCESS);
    EXPECT_RESULT(c, n, dst, count, 0, in_place ? "reduce_local in place" : "reduce_local");
    EXPECT_EQ(dst[count * c->size], 0xa5);
    if (!in_place && count) { /* still this PE's own values */
        uint8_t *again = malloc(count * c->size);
        ASSERT_NOT_NULL(again);
        fill_source(c, again, count, 0, me);
        for (size_t i = 0; i < count; i++)
            if (!same_element(c, again + i * c->size, src + i * c->size)) {
                harness_report(__FILE__, __LINE__, "%s: source element %zu changed", c->type, i);
                break;
            }
        free(again);
    }
    free(src);
    free(dst);
}

/* Past this many bytes the engine takes its chunked way on one node (reduce.c). */
#define LOCAL_IN_WORK_BYTES (256 << 10)

static int t_local(int me, int n)
{
    (void)me, (void)n;
    set_kinds();
    uint8_t *work = aclshmem_malloc(LOCAL_IN_WORK_BYTES + 64 * 16);
    ASSERT_NOT_NULL(work);
    static const size_t some[] = {0, 1, 3, 17, 1025, 4099};
    for (size_t c = 0; c < N_COMBOS; c++) {
        for (size_t k = 0; k < sizeof some / sizeof some[0]; k++)
            local_case(&combos[c], ACLSHMEM_TEAM_WORLD, work, some[k], (int)((c + k) % 2));
        local_case(&combos[c], ACLSHMEM_TEAM_WORLD, work, LOCAL_IN_WORK_BYTES / combos[c].size + 61, (int)(c % 2));
    }
    aclshmem_barrier_all();
    aclshmem_free(work);
    return 0;
}

/* A sub-team (stride 2) and a count that leaves every chunk a rest, in several pieces. */
static int t_local_subteam_large(int me, int n)
{
    (void)me;
    size_t count = 100003;
    float *work = aclshmem_malloc(count * sizeof(float));
    ASSERT_NOT_NULL(work);
    aclshmem_team_t t = ACLSHMEM_TEAM_WORLD;
    if (n >= 3)
        ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &t), ACLSHMEM_SUCCESS);
    if (t != ACLSHMEM_TEAM_INVALID) {
        int tme = aclshmem_team_my_pe(t), tn = aclshmem_team_n_pes(t);
        float *v = malloc(count * sizeof(float));
        ASSERT_NOT_NULL(v);
        for (size_t i = 0; i < count; i++)
            v[i] = (float)(tme + 1) * (float)(i % 1000);
        EXPECT_EQ(aclshmemx_reduce_local(t, v, v, work, count, ACLSHMEMX_TYPE_float, ACLSHMEMX_OP_SUM), 0);
        for (size_t i = 0; i < count; i++)
            if (v[i] != (float)(tn * (tn + 1) / 2) * (float)(i % 1000)) {
                harness_report(__FILE__, __LINE__, "element %zu is %g", i, (double)v[i]);
                break;
            }
        free(v);
        if (t != ACLSHMEM_TEAM_WORLD)
            aclshmem_team_destroy(t);
    }
    aclshmem_barrier_all();
    aclshmem_free(work);
    return 0;
}

/* Refused calls fail on every PE (PE 0's arguments are bad, the others' good), nothing is
 * written, and the next call works. */
static int t_local_refused(int me, int n)
{
    (void)n;
    int32_t *work = aclshmem_malloc(64 * sizeof(int32_t)), *other = aclshmem_malloc(64 * sizeof(int32_t));
    ASSERT(work && other);
    int32_t src[64], dst[64], not_symmetric[64];
    for (int i = 0; i < 64; i++)
        src[i] = i;
    struct {
        const char *what;
        void *dest, *work;
        int type, op;
    } bad[] = {
        {"work not symmetric", dst, not_symmetric, ACLSHMEMX_TYPE_int32, ACLSHMEMX_OP_SUM},
        {"unknown type", dst, work, ACLSHMEMX_TYPE_COUNT, ACLSHMEMX_OP_SUM},
        {"unknown op", dst, work, ACLSHMEMX_TYPE_int32, 99},
        {"and of float", dst, work, ACLSHMEMX_TYPE_float, ACLSHMEMX_OP_AND},
        {"dest is work", work, work, ACLSHMEMX_TYPE_int32, ACLSHMEMX_OP_SUM},
        {"NULL dest", NULL, work, ACLSHMEMX_TYPE_int32, ACLSHMEMX_OP_SUM},
        {"another op on PE 0", dst, work, ACLSHMEMX_TYPE_int32, ACLSHMEMX_OP_MAX},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        memset(dst, 0x5a, sizeof dst);
        int rc = me == 0 ? aclshmemx_reduce_local(ACLSHMEM_TEAM_WORLD, bad[b].dest, src, bad[b].work, 64,
                                                  (aclshmemx_type_t)bad[b].type, (aclshmemx_reduce_op_t)bad[b].op)
                         : aclshmemx_reduce_local(ACLSHMEM_TEAM_WORLD, dst, src, other, 64, ACLSHMEMX_TYPE_int32,
                                                  ACLSHMEMX_OP_SUM);
        HARNESS_CHECK_(rc == ACLSHMEM_INVALID_PARAM, 0, "%s: rc %d", bad[b].what, rc);
        HARNESS_CHECK_(strlen(aclshmemx_get_last_error()) > 0, 0, "%s: no message", bad[b].what);
        EXPECT_EQ(dst[0], 0x5a5a5a5a);
    }
    EXPECT_EQ(aclshmemx_reduce_local(ACLSHMEM_TEAM_WORLD, dst, src, work, 64, ACLSHMEMX_TYPE_int32, ACLSHMEMX_OP_MAX),
              ACLSHMEM_SUCCESS);
    EXPECT_EQ(dst[63], 63);
    aclshmem_barrier_all();
    aclshmem_free(other);
    aclshmem_free(work);
    return 0;
}

/* PE 0 reduces symmetric memory (aclshmem_int64_sum_reduce), the others local memory: one
 * call of the team, in place and not, small and large. */
static int t_local_mixed(int me, int n)
{
    static const size_t sizes[] = {5, 3000, 70001};
    int64_t *sym_src = aclshmem_malloc(70001 * sizeof(int64_t)), *sym_dst = aclshmem_malloc(70001 * sizeof(int64_t));
    int64_t *work = aclshmem_malloc(70001 * sizeof(int64_t));
    int64_t *src = malloc(70001 * sizeof(int64_t)), *dst = malloc(70001 * sizeof(int64_t));
    ASSERT(sym_src && sym_dst && work && src && dst);
    for (size_t k = 0; k < 2 * sizeof sizes / sizeof sizes[0]; k++) {
        size_t count = sizes[k / 2];
        int in_place = (int)(k % 2);
        int64_t *from = me == 0 ? sym_src : src, *to = me == 0 ? sym_dst : dst;
        if (in_place)
            from = to;
        for (size_t i = 0; i < count; i++)
            from[i] = (int64_t)(me + 1) * (int64_t)i;
        int rc = me == 0 ? aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, to, from, count)
                         : aclshmemx_reduce_local(ACLSHMEM_TEAM_WORLD, to, from, work, count, ACLSHMEMX_TYPE_int64,
                                                  ACLSHMEMX_OP_SUM);
        EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
        for (size_t i = 0; i < count; i++)
            if (to[i] != (int64_t)(n * (n + 1) / 2) * (int64_t)i) {
                harness_report(__FILE__, __LINE__, "count %zu%s: element %zu is %lld", count,
                               in_place ? " in place" : "", i, (long long)to[i]);
                break;
            }
    }
    aclshmem_barrier_all();
    free(dst);
    free(src);
    aclshmem_free(work);
    aclshmem_free(sym_dst);
    aclshmem_free(sym_src);
    return 0;
}

static const harness_case cases[] = {
    {"every_combo", t_every_combo, {0}, {1, 2, 3, 4}},
    {"counts", t_counts, {0}, {2, 3, 4}},
    {"rounds", t_rounds, {0}, {1, 2, 3, 4}},
    {"subteam", t_subteam, {0}, {3, 4}},
    {"same_bits", t_same_bits, {0}, {2, 3, 4}},
    {"on_stream", t_on_stream, {0}, {2, 3}},
    {"in_kernel", t_in_kernel, {0}, {2, 4}},
    {"local", t_local, {0}, {1, 2, 3, 4}},
    {"local_subteam_large", t_local_subteam_large, {0}, {2, 3, 4}},
    {"local_refused", t_local_refused, {0}, {2, 3}},
    {"local_mixed", t_local_mixed, {0}, {2, 3, 4}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
