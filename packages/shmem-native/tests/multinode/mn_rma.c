/*
 * mn_rma.c - the multi-node suite's RMA cases: every RMA family as one table, and the cases
 * putmem, typed, strided, nbi (with fence) and signal (put-with-signal, a token round every PE).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem.h"
#include "mn_suite.h"

/* ---- the RMA families, as one table -------------------------------------------------------
 * Typed families (every type of ACLSHMEM_RMA_TYPES) and sized ones (ACLSHMEM_RMA_SIZES) behind
 * one signature; counts are elements of esz bytes.  Values go through memcpy: the transports
 * move bytes, so any bit pattern must arrive as it left. */
typedef void (*xfer_fn)(void *dst, const void *src, size_t nelems, int pe);
typedef void (*strided_fn)(void *dst, const void *src, ptrdiff_t dst_stride, ptrdiff_t src_stride,
                           size_t nelems, int pe);
typedef struct {
    const char *name;
    size_t esz;
    xfer_fn put, get, put_nbi, get_nbi;
    strided_fn iput, iget;
    void (*p)(void *dst, const void *value, int pe); /* typed only */
    void (*g)(void *out, const void *src, int pe);
} rma_kind_t;

#define TYPED_WRAPPERS(NAME, TYPE)                                                              \
    static void put_##NAME(void *d, const void *s, size_t k, int pe) { aclshmem_##NAME##_put(d, s, k, pe); } \
    static void get_##NAME(void *d, const void *s, size_t k, int pe) { aclshmem_##NAME##_get(d, s, k, pe); } \
    static void put_nbi_##NAME(void *d, const void *s, size_t k, int pe) { aclshmem_##NAME##_put_nbi(d, s, k, pe); } \
    static void get_nbi_##NAME(void *d, const void *s, size_t k, int pe) { aclshmem_##NAME##_get_nbi(d, s, k, pe); } \
    static void iput_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t k, int pe) \
    { aclshmem_##NAME##_iput(d, s, ds, ss, k, pe); }                                           \
    static void iget_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t k, int pe) \
    { aclshmem_##NAME##_iget(d, s, ds, ss, k, pe); }                                           \
    static void p_##NAME(void *d, const void *v, int pe)                                        \
    { TYPE x; memcpy(&x, v, sizeof x); aclshmem_##NAME##_p(d, x, pe); }                         \
    static void g_##NAME(void *out, const void *s, int pe)                                      \
    { TYPE x = aclshmem_##NAME##_g(s, pe); memcpy(out, &x, sizeof x); }
ACLSHMEM_RMA_TYPES(TYPED_WRAPPERS)

#define SIZED_WRAPPERS(B)                                                                       \
    static void put_##B(void *d, const void *s, size_t k, int pe) { aclshmem_put##B(d, s, (uint32_t)k, pe); } \
    static void get_##B(void *d, const void *s, size_t k, int pe) { aclshmem_get##B(d, s, (uint32_t)k, pe); } \
    static void put_nbi_##B(void *d, const void *s, size_t k, int pe) { aclshmem_put##B##_nbi(d, s, (uint32_t)k, pe); } \
    static void get_nbi_##B(void *d, const void *s, size_t k, int pe) { aclshmem_get##B##_nbi(d, s, (uint32_t)k, pe); } \
    static void iput_##B(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t k, int pe) \
    { aclshmem_iput##B(d, s, ds, ss, k, pe); }                                                 \
    static void iget_##B(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t k, int pe) \
    { aclshmem_iget##B(d, s, ds, ss, k, pe); }
ACLSHMEM_RMA_SIZES(SIZED_WRAPPERS)

static const rma_kind_t kinds[] = {
#define TYPED_ENTRY(NAME, TYPE)                                                                 \
    {#NAME, sizeof(TYPE), put_##NAME, get_##NAME, put_nbi_##NAME, get_nbi_##NAME, iput_##NAME,  \
     iget_##NAME, p_##NAME, g_##NAME},
    ACLSHMEM_RMA_TYPES(TYPED_ENTRY)
#define SIZED_ENTRY(B) {"put" #B "/get" #B, (B) / 8, put_##B, get_##B, put_nbi_##B, get_nbi_##B, \
                        iput_##B, iget_##B, NULL, NULL},
    ACLSHMEM_RMA_SIZES(SIZED_ENTRY)
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* putmem / getmem (blocking and nbi) of 1 byte to 8 MiB at odd offsets, byte-exact, with
 * guard bytes on both sides left alone. */
void case_putmem(void)
{
    static const size_t sizes[] = {1, 3, 8, 4095, 65536 + 5, MiB + 3, 8 * MiB};
    const size_t cap = 8 * MiB + 64;
    unsigned char *sym = sym_alloc(cap), *loc = xmalloc(cap);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int nbi = 0; nbi < 2; nbi++) {
            size_t len = sizes[k], off = 1 + k % 7;
            int salt = (int)k * 2 + nbi;
            char what[64];
            /* put: peer's [off, off + len) gets my bytes, the rest stays 0xA5 */
            memset(sym, 0xA5, cap);
            fill(loc, len, me, salt);
            aclshmem_barrier_all();
            (nbi ? aclshmem_putmem_nbi : aclshmem_putmem)(sym + off, loc, len, peer);
            if (nbi)
                aclshmem_quiet();
            aclshmem_barrier_all();
            snprintf(what, sizeof what, "putmem%s of %zu bytes", nbi ? "_nbi" : "", len);
            EXPECT_PAT(what, sym + off, len, 0, src, salt);
            CHECK(sym[off - 1] == 0xA5 && sym[off + len] == 0xA5, "%s: a guard byte changed", what);
            /* get: my [0, len) gets peer's [off, off + len) */
            fill(sym + off, len, me, salt + 50);
            memset(loc, 0xA5, len + 1);
            aclshmem_barrier_all();
            (nbi ? aclshmem_getmem_nbi : aclshmem_getmem)(loc, sym + off, len, peer);
            if (nbi)
                aclshmem_quiet();
            snprintf(what, sizeof what, "getmem%s of %zu bytes", nbi ? "_nbi" : "", len);
            EXPECT_PAT(what, loc, len, 0, peer, salt + 50);
            CHECK(loc[len] == 0xA5, "%s: wrote past the end", what);
            aclshmem_barrier_all(); /* peer's get is over before my buffer changes */
        }
    }
    aclshmem_barrier_all();
    free(loc);
    aclshmem_free(sym);
}

#define NE 37 /* elements of a contiguous typed transfer */

/* put, get, p and g of every typed and sized family. */
void case_typed(void)
{
    unsigned char *sym = sym_alloc(4 * NE * 16), loc[4 * NE * 16];
    for (size_t k = 0; k < N_KINDS; k++) {
        const rma_kind_t *t = &kinds[k];
        size_t bytes = NE * t->esz;
        char what[80];
        int salt = (int)k * 4;
        /* put NE elements; the element after them stays 0 */
        memset(sym, 0, 4 * NE * 16);
        fill(loc, bytes, me, salt);
        aclshmem_barrier_all();
        t->put(sym, loc, NE, peer);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s put", t->name);
        EXPECT_PAT(what, sym, bytes, 0, src, salt);
        CHECK(all_zero(sym + bytes, t->esz), "%s: wrote past the end", what);
        /* get NE elements */
        fill(sym, bytes, me, salt + 1);
        memset(loc, 0, sizeof loc);
        aclshmem_barrier_all();
        t->get(loc, sym, NE, peer);
        snprintf(what, sizeof what, "%s get", t->name);
        EXPECT_PAT(what, loc, bytes, 0, peer, salt + 1);
        CHECK(all_zero(loc + bytes, t->esz), "%s: wrote past the end", what);
        aclshmem_barrier_all(); /* peer's get is over before my buffer changes */
        if (!t->p)
            continue;
        /* p of element 5; g of element 3 */
        fill(loc, bytes, me, salt + 2);
        aclshmem_barrier_all();
        t->p(sym + 5 * t->esz, loc + 5 * t->esz, peer);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s p", t->name);
        EXPECT_PAT(what, sym + 5 * t->esz, t->esz, 5 * t->esz, src, salt + 2);
        EXPECT_PAT(what, sym, 5 * t->esz, 0, me, salt + 1); /* its neighbours are untouched */
        EXPECT_PAT(what, sym + 6 * t->esz, t->esz, 6 * t->esz, me, salt + 1);
        unsigned char got[16] = {0};
        t->g(got, sym + 3 * t->esz, peer);
        snprintf(what, sizeof what, "%s g", t->name);
        EXPECT_PAT(what, got, t->esz, 3 * t->esz, peer, salt + 1);
        aclshmem_barrier_all();
    }
    aclshmem_barrier_all();
    aclshmem_free(sym);
}

/* iput (target stride 3, source stride 2) and iget (target stride 2, source stride 3) of every
 * family; the elements between the strided ones are not touched. */
#define NSTR 100
void case_strided(void)
{
    const size_t cap = 3 * NSTR * 16;
    unsigned char *sym = sym_alloc(cap), *loc = xmalloc(cap), *want = xmalloc(cap);
    for (size_t k = 0; k < N_KINDS; k++) {
        const rma_kind_t *t = &kinds[k];
        size_t e = t->esz;
        int salt = (int)k * 2;
        memset(sym, 0, cap);
        fill(loc, cap, me, salt);
        aclshmem_barrier_all();
        t->iput(sym, loc, 3, 2, NSTR, peer);
        aclshmem_barrier_all();
        memset(want, 0, cap);
        for (size_t i = 0; i < NSTR; i++)
            for (size_t b = 0; b < e; b++)
                want[3 * i * e + b] = pat(2 * i * e + b, src, salt);
        CHECK(memcmp(sym, want, cap) == 0, "%s iput: the strided elements from PE %d are wrong",
              t->name, src);
        fill(sym, cap, me, salt + 1);
        memset(loc, 0, cap);
        aclshmem_barrier_all();
        t->iget(loc, sym, 2, 3, NSTR, peer);
        memset(want, 0, cap);
        for (size_t i = 0; i < NSTR; i++)
            for (size_t b = 0; b < e; b++)
                want[2 * i * e + b] = pat(3 * i * e + b, peer, salt + 1);
        CHECK(memcmp(loc, want, cap) == 0, "%s iget: the strided elements from PE %d are wrong",
              t->name, peer);
        aclshmem_barrier_all();
    }
    aclshmem_barrier_all();
    free(loc);
    free(want);
    aclshmem_free(sym);
}

/* Non-blocking puts and gets of every family, many outstanding at once: after quiet the puts
 * are complete at the target (a flag put after the quiet finds the data there) and the gets
 * have landed.  Then fence: data, fence, flag, for 50 rounds, acknowledged. */
#define NCHUNK 16
void case_nbi(void)
{
    const size_t cap = 64 * 1024 + NCHUNK * NE * 16; /* the fence rounds put 64 KiB */
    unsigned char *sym = sym_alloc(cap), *loc = xmalloc(cap);
    int64_t *flag = sym_alloc(2 * sizeof(int64_t));
    flag[0] = flag[1] = 0;
    for (size_t k = 0; k < N_KINDS; k++) {
        const rma_kind_t *t = &kinds[k];
        size_t chunk = NE * t->esz;
        int salt = (int)k * 2;
        char what[80];
        memset(sym, 0, cap);
        fill(loc, NCHUNK * chunk, me, salt);
        aclshmem_barrier_all();
        for (int c = 0; c < NCHUNK; c++)
            t->put_nbi(sym + c * chunk, loc + c * chunk, NE, peer);
        aclshmem_quiet();
        aclshmem_int64_p(&flag[0], (int64_t)k + 1, peer);
        aclshmem_int64_wait_until(&flag[0], ACLSHMEM_CMP_GE, (int64_t)k + 1);
        snprintf(what, sizeof what, "%s put_nbi x%d + quiet", t->name, NCHUNK);
        EXPECT_PAT(what, sym, NCHUNK * chunk, 0, src, salt);
        fill(sym, NCHUNK * chunk, me, salt + 1);
        memset(loc, 0, cap);
        aclshmem_barrier_all();
        for (int c = NCHUNK - 1; c >= 0; c--)
            t->get_nbi(loc + c * chunk, sym + c * chunk, NE, peer);
        aclshmem_quiet();
        snprintf(what, sizeof what, "%s get_nbi x%d + quiet", t->name, NCHUNK);
        EXPECT_PAT(what, loc, NCHUNK * chunk, 0, peer, salt + 1);
        aclshmem_barrier_all();
    }
    /* fence: the flag never overtakes the data before it */
    const size_t len = 64 * 1024;
    aclshmem_barrier_all();
    for (int64_t r = 1; r <= 50; r++) {
        fill(loc, len, me, (int)r);
        aclshmem_putmem_nbi(sym, loc, len, peer);
        aclshmem_fence();
        aclshmem_int64_p(&flag[1], r, peer);
        aclshmem_int64_wait_until(&flag[1], ACLSHMEM_CMP_GE, r);
        CHECK(flag[1] == r, "fence round %lld: flag %lld", (long long)r, (long long)flag[1]);
        char what[64];
        snprintf(what, sizeof what, "fence round %lld", (long long)r);
        if (!EXPECT_PAT(what, sym, len, 0, src, (int)r))
            break;
        aclshmem_barrier_all(); /* nobody overwrites data that is still being checked */
    }
    aclshmem_barrier_all();
    free(loc);
    aclshmem_free(flag);
    aclshmem_free(sym);
}

/* ---- put-with-signal: a token goes round every PE, each hop to another node ------------- */
/* The hop order visits the PEs node by node (k = local * nodes + node), so that every hop
 * crosses to another node. */
static int seq_of(int pe) { return (pe % ppn) * nodes + pe / ppn; }
static int pe_of(int seq) { return (seq % nodes) * ppn + seq / nodes; }

#define ROUNDS 400
static void send_hop(int variant, unsigned char *dst, const unsigned char *buf, size_t len,
                     int32_t *sig, int32_t r, int to)
{
    switch (variant) {
    case 0: aclshmemx_putmem_signal(dst, buf, len, sig, r, ACLSHMEM_SIGNAL_SET, to); break;
    case 1:
        aclshmemx_putmem_signal_nbi(dst, buf, len, sig, r, ACLSHMEM_SIGNAL_SET, to);
        aclshmem_quiet();
        break;
    case 2: aclshmem_put64_signal(dst, buf, len / 8, sig, r, ACLSHMEM_SIGNAL_SET, to); break;
    case 3: /* the signal word holds r - 1 at the target: adding 1 makes it r */
        aclshmem_uint8_put_signal(dst, buf, len, (uint8_t *)sig, 1, ACLSHMEM_SIGNAL_ADD, to);
        break;
    case 4: aclshmem_put32_signal_nbi(dst, buf, len / 4, sig, r, ACLSHMEM_SIGNAL_SET, to);
        aclshmem_quiet();
        break;
    default:
        aclshmem_putmem(dst, buf, len, to);
        aclshmemx_signal_op(sig, r, ACLSHMEM_SIGNAL_SET, to);
        break;
    }
}

void case_signal(void)
{
    static const size_t lens[] = {8, 256, 4096, 65536 + 8, 1024};
    const size_t cap = 65536 + 64;
    unsigned char *data = sym_alloc(cap), *buf = xmalloc(cap);
    int32_t *sig = sym_alloc(2 * sizeof(int32_t));
    sig[0] = sig[1] = 0;
    int k = seq_of(me), next = pe_of((k + 1) % n), prev = pe_of((k + n - 1) % n);
    aclshmem_barrier_all();
    double t0 = now();
    for (int32_t r = 1; r <= ROUNDS; r++) {
        size_t len = lens[r % 5];
        int variant = r % 6;
        if (k != 0) { /* wait for the token, check it, pass it on */
            int32_t got = aclshmem_signal_wait_until(&sig[0], ACLSHMEM_CMP_GE, r);
            CHECK(got == r && sig[0] == r, "round %d: signal %d (returned %d)", r, sig[0], got);
            char what[64];
            snprintf(what, sizeof what, "round %d (variant %d): data with the signal", r, variant);
            EXPECT_PAT(what, data, len, 0, prev, r);
        }
        fill(buf, len, me, r);
        send_hop(variant, data, buf, len, &sig[0], r, next);
        if (k == 0) { /* the token comes home */
            int32_t got = aclshmem_signal_wait_until(&sig[0], ACLSHMEM_CMP_GE, r);
            CHECK(got == r && sig[0] == r, "round %d: signal %d (returned %d)", r, sig[0], got);
            char what[64];
            snprintf(what, sizeof what, "round %d (variant %d): data with the signal", r, variant);
            EXPECT_PAT(what, data, len, 0, prev, r);
        }
    }
    printf("PE %d: %d rounds of %d hops in %.2f s\n", me, ROUNDS, n, now() - t0);
    /* signal ADD from every PE to one word on PE 0 */
    aclshmem_barrier_all();
    for (int i = 0; i < 100; i++)
        aclshmemx_signal_op(&sig[1], 1, ACLSHMEM_SIGNAL_ADD, 0);
    if (me == 0) {
        int32_t got = aclshmem_signal_wait_until(&sig[1], ACLSHMEM_CMP_GE, 100 * n);
        CHECK(got == 100 * n, "signal ADD from every PE: %d, want %d", got, 100 * n);
    }
    aclshmem_barrier_all();
    CHECK(me != 0 || sig[1] == 100 * n, "signal ADD: %d after the barrier", sig[1]);
    free(buf);
    aclshmem_free(sig);
    aclshmem_free(data);
}
