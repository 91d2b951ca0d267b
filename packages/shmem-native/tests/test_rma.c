/*
 * test_rma.c - remote memory access: putmem/getmem (+ _nbi), every typed family over
 * ACLSHMEM_RMA_TYPES and every sized family over ACLSHMEM_RMA_SIZES (generated from the
 * same X-macro tables as the header), quiet and fence, get_nbi (many in flight, one quiet;
 * get's checks and messages), and bad input.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1024ULL * 1024)
#define HEAP HARNESS_DEFAULT_HEAP
#define NE 37      /* elements per contiguous transfer */
#define NSTRIDED 10 /* elements per strided transfer */

/* A value that fits every type (also int8 and char) and differs per PE and index. */
#define VAL(TYPE, pe, i, salt) ((TYPE)((pe) * 7 + (i) % 50 + 1 + (salt)))

/* ---- typed families ---------------------------------------------------------------------- */
#define DEFINE_TYPED_TEST(NAME, TYPE)                                                            \
    static void typed_##NAME(int me, int n)                                                      \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        TYPE *sym = aclshmem_calloc(4 * NE, sizeof(TYPE));                                       \
        ASSERT_NOT_NULL(sym);                                                                    \
        TYPE loc[4 * NE];                                                                        \
        int bad = 0;                                                                             \
        /* put */                                                                                \
        for (int i = 0; i < NE; i++)                                                             \
            loc[i] = VAL(TYPE, me, i, 0);                                                        \
        aclshmem_barrier_all();                                                                  \
        aclshmem_##NAME##_put(sym, loc, NE, next);                                               \
        aclshmem_barrier_all();                                                                  \
        for (int i = 0; i < NE; i++)                                                             \
            bad += sym[i] != VAL(TYPE, prev, i, 0);                                              \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_put: %d wrong elements", tn, bad);            \
        /* get */                                                                                \
        for (int i = 0; i < NE; i++)                                                             \
            sym[NE + i] = VAL(TYPE, me, i, 1);                                                   \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_barrier_all();                                                                  \
        aclshmem_##NAME##_get(loc, sym + NE, NE, next);                                          \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += loc[i] != VAL(TYPE, next, i, 1);                                              \
        bad += loc[NE] != 0;                                                                     \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_get: %d wrong elements", tn, bad);            \
        /* put_nbi + quiet */                                                                    \
        for (int i = 0; i < NE; i++)                                                             \
            loc[i] = VAL(TYPE, me, i, 2);                                                        \
        aclshmem_barrier_all();                                                                  \
        aclshmem_##NAME##_put_nbi(sym, loc, NE, next);                                           \
        aclshmem_quiet();                                                                        \
        aclshmem_barrier_all();                                                                  \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += sym[i] != VAL(TYPE, prev, i, 2);                                              \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_put_nbi: %d wrong elements", tn, bad);        \
        /* get_nbi + quiet */                                                                    \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_##NAME##_get_nbi(loc, sym + NE, NE, next);                                      \
        aclshmem_quiet();                                                                        \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += loc[i] != VAL(TYPE, next, i, 1);                                              \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_get_nbi: %d wrong elements", tn, bad);        \
        /* p and g */                                                                            \
        aclshmem_barrier_all();                                                                  \
        aclshmem_##NAME##_p(&sym[5], VAL(TYPE, me, 40, 3), next);                                \
        aclshmem_barrier_all();                                                                  \
        if (sym[5] != VAL(TYPE, prev, 40, 3) || sym[4] != VAL(TYPE, prev, 4, 2) ||               \
            sym[6] != VAL(TYPE, prev, 6, 2))                                                     \
            harness_report(__FILE__, __LINE__, "%s_p: wrong element or neighbours", tn);         \
        TYPE g = aclshmem_##NAME##_g(&sym[NE + 3], next);                                        \
        if (g != VAL(TYPE, next, 3, 1))                                                          \
            harness_report(__FILE__, __LINE__, "%s_g: wrong value", tn);                         \
        /* iput: dest stride 3, source stride 2 */                                               \
        memset(sym + 2 * NE, 0, 2 * NE * sizeof(TYPE));                                          \
        memset(loc, 0, sizeof loc);                                                              \
        for (int i = 0; i < NSTRIDED; i++)                                                       \
            loc[2 * i] = VAL(TYPE, me, i, 4);                                                    \
        aclshmem_barrier_all();                                                                  \
        aclshmem_##NAME##_iput(sym + 2 * NE, loc, 3, 2, NSTRIDED, next);                         \
        aclshmem_barrier_all();                                                                  \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NE; j++) {                                                       \
            TYPE want = (j % 3 == 0 && j / 3 < NSTRIDED) ? VAL(TYPE, prev, j / 3, 4) : (TYPE)0;  \
            bad += sym[2 * NE + j] != want;                                                      \
        }                                                                                        \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_iput: %d wrong elements", tn, bad);           \
        /* iget: dest stride 2, source stride 3 (next's strided area was written by me) */       \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_##NAME##_iget(loc, sym + 2 * NE, 2, 3, NSTRIDED, next);                         \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NSTRIDED + 2; j++) {                                             \
            TYPE want = (j % 2 == 0 && j / 2 < NSTRIDED) ? VAL(TYPE, me, j / 2, 4) : (TYPE)0;    \
            bad += loc[j] != want;                                                               \
        }                                                                                        \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_iget: %d wrong elements", tn, bad);           \
        /* to myself */                                                                          \
        aclshmem_barrier_all();                                                                  \
        for (int i = 0; i < NE; i++)                                                             \
            loc[i] = VAL(TYPE, me, i, 5);                                                        \
        aclshmem_##NAME##_put(sym, loc, NE, me);                                                 \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += sym[i] != VAL(TYPE, me, i, 5);                                                \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "%s_put to myself: %d wrong", tn, bad);           \
        /* a bad PE: an error, and nothing happens */                                            \
        harness_mark_error();                                                                    \
        aclshmem_##NAME##_put(sym, loc, NE, n);                                                  \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "%s_put to PE n: no error", tn);                  \
        harness_mark_error();                                                                    \
        aclshmem_##NAME##_p(sym, loc[0], -1);                                                    \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "%s_p to PE -1: no error", tn);                   \
        harness_mark_error();                                                                    \
        (void)aclshmem_##NAME##_g(sym, n + 5);                                                   \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "%s_g from a bad PE: no error", tn);              \
        harness_mark_error();                                                                    \
        aclshmem_##NAME##_iget(loc, sym, 1, 1, 2, -3);                                           \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "%s_iget from a bad PE: no error", tn);           \
        aclshmem_barrier_all();                                                                  \
        aclshmem_free(sym);                                                                      \
    }
ACLSHMEM_RMA_TYPES(DEFINE_TYPED_TEST)

static int t_typed(int me, int n)
{
#define CALL_TYPED_TEST(NAME, TYPE) typed_##NAME(me, n);
    ACLSHMEM_RMA_TYPES(CALL_TYPED_TEST)
#undef CALL_TYPED_TEST
    return 0;
}

/* ---- sized families: B bits per element, counts in elements ---------------------------- */
static unsigned char bval(int pe, int i, int salt)
{
    return (unsigned char)(pe * 31 + i * 7 + salt + 1);
}

static int count_bad(const unsigned char *got, int pe, int nbytes, int salt)
{
    int bad = 0;
    for (int i = 0; i < nbytes; i++)
        bad += got[i] != bval(pe, i, salt);
    return bad;
}

#define DEFINE_SIZED_TEST(BITS)                                                                  \
    static void sized_##BITS(int me, int n)                                                      \
    {                                                                                            \
        enum { EB = (BITS) / 8 };                                                                \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        unsigned char *sym = aclshmem_calloc(4 * NE, EB);                                        \
        ASSERT_NOT_NULL(sym);                                                                    \
        unsigned char loc[4 * NE * EB];                                                          \
        int bad;                                                                                 \
        /* put<B>: NE elements = NE * EB bytes, and not one more */                              \
        for (int i = 0; i < NE * EB; i++)                                                        \
            loc[i] = bval(me, i, 0);                                                             \
        aclshmem_barrier_all();                                                                  \
        aclshmem_put##BITS(sym, loc, NE, next);                                                  \
        aclshmem_barrier_all();                                                                  \
        bad = count_bad(sym, prev, NE * EB, 0);                                                  \
        if (bad || sym[NE * EB] != 0)                                                            \
            harness_report(__FILE__, __LINE__, "put%d: %d wrong bytes, byte after %d", BITS, bad, \
                           sym[NE * EB]);                                                        \
        /* get<B> */                                                                             \
        for (int i = 0; i < NE * EB; i++)                                                        \
            sym[NE * EB + i] = bval(me, i, 1);                                                   \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_barrier_all();                                                                  \
        aclshmem_get##BITS(loc, sym + NE * EB, NE, next);                                        \
        bad = count_bad(loc, next, NE * EB, 1);                                                  \
        if (bad || loc[NE * EB] != 0)                                                            \
            harness_report(__FILE__, __LINE__, "get%d: %d wrong bytes", BITS, bad);              \
        /* put<B>_nbi + quiet */                                                                 \
        for (int i = 0; i < NE * EB; i++)                                                        \
            loc[i] = bval(me, i, 2);                                                             \
        aclshmem_barrier_all();                                                                  \
        aclshmem_put##BITS##_nbi(sym, loc, NE, next);                                            \
        aclshmem_quiet();                                                                        \
        aclshmem_barrier_all();                                                                  \
        bad = count_bad(sym, prev, NE * EB, 2);                                                  \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "put%d_nbi: %d wrong bytes", BITS, bad);          \
        /* get<B>_nbi + quiet */                                                                 \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_get##BITS##_nbi(loc, sym + NE * EB, NE, next);                                  \
        aclshmem_quiet();                                                                        \
        bad = count_bad(loc, next, NE * EB, 1);                                                  \
        if (bad || loc[NE * EB] != 0)                                                            \
            harness_report(__FILE__, __LINE__, "get%d_nbi: %d wrong bytes", BITS, bad);          \
        /* iput<B>: dest stride 3, source stride 2 (strides in elements) */                      \
        memset(sym + 2 * NE * EB, 0, 2 * NE * EB);                                               \
        memset(loc, 0, sizeof loc);                                                              \
        for (int i = 0; i < NSTRIDED; i++)                                                       \
            for (int k = 0; k < EB; k++)                                                         \
                loc[(2 * i) * EB + k] = bval(me, i * EB + k, 3);                                 \
        aclshmem_barrier_all();                                                                  \
        aclshmem_iput##BITS(sym + 2 * NE * EB, loc, 3, 2, NSTRIDED, next);                       \
        aclshmem_barrier_all();                                                                  \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NE; j++)                                                         \
            for (int k = 0; k < EB; k++) {                                                       \
                unsigned char want =                                                             \
                    (j % 3 == 0 && j / 3 < NSTRIDED) ? bval(prev, (j / 3) * EB + k, 3) : 0;      \
                bad += sym[2 * NE * EB + j * EB + k] != want;                                    \
            }                                                                                    \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "iput%d: %d wrong bytes", BITS, bad);             \
        /* iget<B>: dest stride 2, source stride 3 */                                            \
        memset(loc, 0, sizeof loc);                                                              \
        aclshmem_iget##BITS(loc, sym + 2 * NE * EB, 2, 3, NSTRIDED, next);                       \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NSTRIDED + 2; j++)                                               \
            for (int k = 0; k < EB; k++) {                                                       \
                unsigned char want =                                                             \
                    (j % 2 == 0 && j / 2 < NSTRIDED) ? bval(me, (j / 2) * EB + k, 3) : 0;        \
                bad += loc[j * EB + k] != want;                                                  \
            }                                                                                    \
        if (bad)                                                                                 \
            harness_report(__FILE__, __LINE__, "iget%d: %d wrong bytes", BITS, bad);             \
        /* bad PE */                                                                             \
        harness_mark_error();                                                                    \
        aclshmem_put##BITS(sym, loc, 1, -1);                                                     \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "put%d to PE -1: no error", BITS);                \
        harness_mark_error();                                                                    \
        aclshmem_iput##BITS(sym, loc, 1, 1, 1, n);                                               \
        if (!harness_error_since_mark())                                                         \
            harness_report(__FILE__, __LINE__, "iput%d to PE n: no error", BITS);                \
        aclshmem_barrier_all();                                                                  \
        aclshmem_free(sym);                                                                      \
    }
ACLSHMEM_RMA_SIZES(DEFINE_SIZED_TEST)

static int t_sized(int me, int n)
{
#define CALL_SIZED_TEST(BITS) sized_##BITS(me, n);
    ACLSHMEM_RMA_SIZES(CALL_SIZED_TEST)
#undef CALL_SIZED_TEST
    return 0;
}

/* ---- putmem / getmem: sizes, offsets, heaps, private and symmetric sources ----------- */
static unsigned char pat(int pe, size_t i)
{
    return (unsigned char)((size_t)pe * 131 + i * 17 + (i >> 11) + 3);
}

static int t_mem(int me, int n)
{
    static const size_t sizes[] = { 1, 3, 8, 100, 4097, 65536 + 5, 1 * MiB + 3 };
    static const size_t offs[] = { 0, 1, 7 };
    const aclshmem_mem_type_t mts[2] = { DEVICE_SIDE, HOST_SIDE };
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    size_t cap = 2 * MiB;
    unsigned char *priv = malloc(cap);
    ASSERT_NOT_NULL(priv);
    for (int k = 0; k < 2; k++) {
        unsigned char *sym = aclshmemx_malloc(2 * cap, mts[k]);
        ASSERT_NOT_NULL(sym);
        unsigned char *sym_src = sym + cap;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
                size_t sz = sizes[si], off = offs[oi];
                int nbi = (int)((si + oi) % 2);
                memset(sym, 0, cap);
                for (size_t i = 0; i < sz; i++) {
                    priv[i] = pat(me, i);
                    sym_src[off + i] = pat(me, i + 1);
                }
                aclshmem_barrier_all();
                /* put from private memory */
                if (nbi) {
                    aclshmem_putmem_nbi(sym + off, priv, sz, next);
                    aclshmem_quiet();
                } else {
                    aclshmem_putmem(sym + off, priv, sz, next);
                }
                aclshmem_barrier_all();
                size_t bad = 0;
                for (size_t i = 0; i < sz; i++)
                    bad += sym[off + i] != pat(prev, i);
                bad += (off && sym[off - 1] != 0) + (sym[off + sz] != 0);
                if (bad)
                    harness_report(__FILE__, __LINE__, "putmem%s %zu bytes at +%zu: %zu wrong",
                                   nbi ? "_nbi" : "", sz, off, bad);
                /* get into private memory */
                memset(priv, 0, sz + 1);
                if (nbi) {
                    aclshmem_getmem_nbi(priv, sym_src + off, sz, next);
                    aclshmem_quiet();
                } else {
                    aclshmem_getmem(priv, sym_src + off, sz, next);
                }
                bad = 0;
                for (size_t i = 0; i < sz; i++)
                    bad += priv[i] != pat(next, i + 1);
                bad += priv[sz] != 0;
                if (bad)
                    harness_report(__FILE__, __LINE__, "getmem%s %zu bytes at +%zu: %zu wrong",
                                   nbi ? "_nbi" : "", sz, off, bad);
                aclshmem_barrier_all();
            }
        }
        /* put from symmetric memory (the other heap) into this one */
        unsigned char *other = aclshmemx_malloc(4096, mts[1 - k]);
        ASSERT_NOT_NULL(other);
        for (int i = 0; i < 4096; i++)
            other[i] = pat(me, (size_t)i + 9);
        aclshmem_barrier_all();
        aclshmem_putmem(sym, other, 4096, next);
        aclshmem_barrier_all();
        size_t bad = 0;
        for (int i = 0; i < 4096; i++)
            bad += sym[i] != pat(prev, (size_t)i + 9);
        EXPECT_EQ(bad, 0);
        aclshmemx_free(other, mts[1 - k]);
        aclshmemx_free(sym, mts[k]);
    }
    free(priv);
    return 0;
}

/* Every size from 1 to 70 bytes (the shm transport copies up to 64 inline, in overlapping
 * halves) at every alignment, to the next PE and back; and puts to this PE whose source
 * overlaps the destination, which must act as memmove. */
static int t_small(int me, int n)
{
    enum { MAXB = 70, ROOM = 96 };
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *sym = aclshmem_calloc(2, ROOM);
    ASSERT_NOT_NULL(sym);
    unsigned char priv[ROOM], want[ROOM];
    size_t bad = 0;
    for (size_t sz = 1; sz <= MAXB; sz++) {
        for (size_t off = 0; off < 8; off++) {
            memset(sym, 0, 2 * ROOM);
            for (size_t i = 0; i < sz; i++) {
                priv[i] = pat(me, i + sz);
                sym[ROOM + off + i] = pat(me, i + 2 * sz);
            }
            aclshmem_barrier_all();
            aclshmem_putmem(sym + off, priv, sz, next);
            aclshmem_barrier_all();
            for (size_t i = 0; i < ROOM; i++)
                bad += sym[i] != (i >= off && i < off + sz ? pat(prev, i - off + sz) : 0);
            memset(priv, 0, sizeof priv);
            aclshmem_getmem(priv + off, sym + ROOM + off, sz, next);
            for (size_t i = 0; i < ROOM; i++)
                bad += priv[i] != (i >= off && i < off + sz ? pat(next, i - off + 2 * sz) : 0);
            aclshmem_barrier_all();
            for (int shift = -3; shift <= 3; shift++) { /* to this PE, source overlapping */
                unsigned char *buf = sym + ROOM;
                for (size_t i = 0; i < ROOM; i++)
                    buf[i] = want[i] = pat(me, i * 3 + sz);
                size_t dst = 8 + off, src = (size_t)((int)dst + shift);
                memmove(want + dst, want + src, sz);
                aclshmem_putmem(buf + dst, buf + src, sz, me);
                bad += memcmp(buf, want, ROOM) != 0;
            }
        }
        if (bad) {
            harness_report(__FILE__, __LINE__, "putmem/getmem of %zu bytes: %zu wrong", sz, bad);
            bad = 0;
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(sym);
    return 0;
}

/* Everybody writes its slot on everybody, blocking and non-blocking mixed. */
static int t_all_to_all(int me, int n)
{
    enum { CH = 8192 };
    unsigned char *sym = aclshmem_calloc((size_t)n, CH);
    ASSERT_NOT_NULL(sym);
    unsigned char *src = malloc(CH);
    ASSERT_NOT_NULL(src);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < CH; i++)
            src[i] = pat(me, (size_t)i + (size_t)round);
        aclshmem_barrier_all();
        for (int d = 0; d < n; d++) {
            int pe = (me + d) % n;
            if ((d + round) % 2)
                aclshmem_putmem_nbi(sym + (size_t)me * CH, src, CH, pe);
            else
                aclshmem_putmem(sym + (size_t)me * CH, src, CH, pe);
        }
        aclshmem_barrier_all(); /* completes the nbi puts too */
        for (int j = 0; j < n; j++) {
            size_t bad = 0;
            for (int i = 0; i < CH; i++)
                bad += sym[(size_t)j * CH + i] != pat(j, (size_t)i + (size_t)round);
            if (bad)
                harness_report(__FILE__, __LINE__, "round %d: slot of PE %d has %zu wrong bytes", round,
                               j, bad);
        }
    }
    free(src);
    aclshmem_barrier_all();
    aclshmem_free(sym);
    return 0;
}

/* ---- quiet and fence ----------------------------------------------------------------------- */
static void wait_flag(volatile int32_t *flag, int32_t want)
{
    double t0 = harness_now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
        if (harness_now() - t0 > 20.0) {
            harness_report(__FILE__, __LINE__, "flag stuck at %d, waiting for %d", *flag, want);
            harness_abort();
        }
        harness_sleep_ms(1);
    }
}

static int t_quiet_fence(int me, int n)
{
    enum { CHUNKS = 64, CH = 4096 };
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *data = aclshmem_calloc(CHUNKS, CH);
    int32_t *flag = aclshmem_calloc(2, sizeof(int32_t));
    ASSERT(data && flag);
    unsigned char *src = malloc((size_t)CHUNKS * CH);
    ASSERT_NOT_NULL(src);
    aclshmem_barrier_all();
    for (int round = 1; round <= 10; round++) {
        for (size_t i = 0; i < (size_t)CHUNKS * CH; i++)
            src[i] = pat(me, i + (size_t)round);
        /* nbi data, then quiet, then the flag: the receiver sees all of the data. */
        for (int c = 0; c < CHUNKS; c++)
            aclshmem_putmem_nbi(data + (size_t)c * CH, src + (size_t)c * CH, CH, next);
        if (round % 2)
            aclshmem_quiet();
        else
            aclshmem_fence(); /* orders the data before the flag to the same PE */
        aclshmem_int32_p(&flag[0], round, next);
        wait_flag(&flag[0], round);
        size_t bad = 0;
        for (size_t i = 0; i < (size_t)CHUNKS * CH; i++)
            bad += data[i] != pat(prev, i + (size_t)round);
        if (bad)
            harness_report(__FILE__, __LINE__, "round %d (%s): %zu bytes not there with the flag",
                           round, round % 2 ? "quiet" : "fence", bad);
        /* the next round may overwrite data only after I have read it */
        aclshmem_int32_p(&flag[1], round, prev);
        wait_flag(&flag[1], round);
    }
    /* get_nbi is complete after quiet */
    unsigned char *dst = calloc(CHUNKS, CH);
    ASSERT_NOT_NULL(dst);
    aclshmem_barrier_all();
    for (int c = 0; c < CHUNKS; c++)
        aclshmem_getmem_nbi(dst + (size_t)c * CH, data + (size_t)c * CH, CH, next);
    aclshmem_quiet();
    size_t bad = 0;
    for (size_t i = 0; i < (size_t)CHUNKS * CH; i++)
        bad += dst[i] != pat(me, i + 10);
    EXPECT_EQ(bad, 0);
    aclshmem_quiet(); /* nothing outstanding: fine */
    aclshmem_fence();
    free(dst);
    free(src);
    aclshmem_barrier_all();
    aclshmem_free(flag);
    aclshmem_free(data);
    return 0;
}

/* ---- get_nbi: many in flight, one quiet; get's checks --------------------------------------- */
#define NBI_GETS 600 /* more than a UCX channel's 256 request slots, were the peers remote */

/* The text after a message's leading API name (the messages of get and get_nbi differ there only). */
static const char *after_name(const char *msg, const char *name)
{
    return strncmp(msg, name, strlen(name)) == 0 ? msg + strlen(name) : msg;
}

static int t_get_nbi(int me, int n)
{
    int next = (me + 1) % n;
    const size_t piece = 333, len = NBI_GETS * piece;
    unsigned char *sym = aclshmem_malloc(len), *dst = calloc(1, len);
    ASSERT(sym && dst);
    for (size_t i = 0; i < len; i++)
        sym[i] = pat(me, i + 3);
    aclshmem_barrier_all();
    /* every get in flight, then one quiet: dest is read only after it */
    for (int k = NBI_GETS - 1; k >= 0; k--)
        aclshmem_getmem_nbi(dst + (size_t)k * piece, sym + (size_t)k * piece, piece, next);
    aclshmem_quiet();
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += dst[i] != pat(next, i + 3);
    EXPECT_EQ(bad, 0);
    /* typed and sized forms */
    int64_t got64[5] = {0};
    uint32_t got32[3] = {0};
    aclshmem_int64_get_nbi(got64, (const int64_t *)(void *)sym, 5, next);
    aclshmem_get32_nbi(got32, sym + 40, 3, next);
    aclshmem_quiet();
    EXPECT_EQ(memcmp(got64, dst, sizeof got64), 0);
    EXPECT_EQ(memcmp(got32, dst + 40, sizeof got32), 0);
    /* refused as get refuses, with get's message under its own name */
    const void *froms[] = {sym, sym, dst};
    const int pes[] = {-1, n, next};
    for (int k = 0; k < 3; k++) {
        char blocking[256];
        harness_mark_error();
        aclshmem_getmem(dst, froms[k], 8, pes[k]);
        EXPECT_ERROR_SET();
        snprintf(blocking, sizeof blocking, "%s", aclshmemx_get_last_error());
        harness_mark_error();
        aclshmem_getmem_nbi(dst, froms[k], 8, pes[k]);
        EXPECT_ERROR_SET();
        const char *nbi = aclshmemx_get_last_error();
        if (strcmp(after_name(nbi, "aclshmem_getmem_nbi"), after_name(blocking, "aclshmem_getmem")) != 0)
            harness_report(__FILE__, __LINE__, "get_nbi said \"%s\", get \"%s\"", nbi, blocking);
    }
    aclshmem_quiet();
    aclshmem_barrier_all();
    free(dst);
    aclshmem_free(sym);
    return 0;
}

/* ---- bad input --------------------------------------------------------------------------- */
static int t_bad_input(int me, int n)
{
    int next = (me + 1) % n;
    unsigned char *sym = aclshmem_calloc(4096, 1);
    ASSERT_NOT_NULL(sym);
    unsigned char src[64];
    memset(src, 0xEE, sizeof src);
    unsigned char local[64];
    char *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    aclshmem_barrier_all();

    static const int bad_pes[] = { -1, -1000, 0x7fffffff };
    for (size_t i = 0; i < sizeof bad_pes / sizeof bad_pes[0]; i++) {
        harness_mark_error();
        aclshmem_putmem(sym, src, 8, bad_pes[i]);
        EXPECT_ERROR_SET();
        harness_mark_error();
        aclshmem_getmem(local, sym, 8, bad_pes[i]);
        EXPECT_ERROR_SET();
        harness_mark_error();
        aclshmem_putmem_nbi(sym, src, 8, bad_pes[i]);
        aclshmem_quiet();
        EXPECT_ERROR_SET();
        harness_mark_error();
        aclshmem_getmem_nbi(local, sym, 8, bad_pes[i]);
        aclshmem_quiet();
        EXPECT_ERROR_SET();
    }
    harness_mark_error();
    aclshmem_putmem(sym, src, 8, n);
    EXPECT_ERROR_SET();

    /* A destination (put) or source (get) outside the symmetric heaps. */
    harness_mark_error();
    aclshmem_putmem(local, src, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_getmem(local, src, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_putmem(base - 64, src, 8, next);
    EXPECT_ERROR_SET();
    /* Running off the end of the heap. */
    harness_mark_error();
    aclshmem_putmem(base + HEAP - 4, src, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_getmem(local, base + HEAP - 4, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_putmem(sym, src, (size_t)HEAP * 4, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_putmem(sym, src, SIZE_MAX, next);
    EXPECT_ERROR_SET();
    /* NULL pointers. */
    harness_mark_error();
    aclshmem_putmem(NULL, src, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_putmem(sym, NULL, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_getmem(NULL, sym, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_getmem(local, NULL, 8, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_int32_put(NULL, (const int32_t *)src, 2, next);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_int64_iput((int64_t *)(void *)local, (const int64_t *)(void *)src, 1, 1, 2, next);
    EXPECT_ERROR_SET();
    /* Zero bytes: nothing happens (and nothing crashes, even with NULL). */
    aclshmem_putmem(sym, src, 0, next);
    aclshmem_getmem(local, sym, 0, next);
    aclshmem_putmem(NULL, NULL, 0, next);
    aclshmem_int32_iput((int32_t *)(void *)sym, (const int32_t *)(void *)src, 1, 1, 0, next);

    aclshmem_barrier_all();
    /* Nobody's block was touched by any of that. */
    size_t dirty = 0;
    for (int i = 0; i < 4096; i++)
        dirty += sym[i] != 0;
    EXPECT_EQ(dirty, 0);
    aclshmem_barrier_all();
    /* And RMA still works. */
    aclshmem_putmem(sym, src, 8, next);
    aclshmem_barrier_all();
    EXPECT_EQ(sym[7], 0xEE);
    aclshmem_barrier_all();
    aclshmem_free(sym);
    return 0;
}

static const harness_case cases[] = {
    { "typed", t_typed, { 0 }, { 2, 4 } },
    { "sized", t_sized, { 0 }, { 2, 4 } },
    { "mem", t_mem, { 0 }, { 2, 8 } },
    { "small", t_small, { 0 }, { 2 } },
    { "all_to_all", t_all_to_all, { 0 }, { 4, 8 } },
    { "quiet_fence", t_quiet_fence, { 0 }, { 2, 4 } },
    { "get_nbi", t_get_nbi, { 0 }, { 2 } },
    { "bad_input", t_bad_input, { 0 }, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
