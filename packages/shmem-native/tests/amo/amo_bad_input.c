/*
 * amo_bad_input.c - bad input of every AMO function of every type (PEs out of range, local and
 * NULL addresses, misaligned words, the heap's last byte), and every shape before init.
 */
#define _GNU_SOURCE
#include <string.h>

#include "amo_suite.h"

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

int t_bad_input(int me, int n)
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
int t_not_initialized(int me, int n)
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
