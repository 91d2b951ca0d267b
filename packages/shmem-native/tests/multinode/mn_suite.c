/*
 * mn_suite.c - the multi-node suite (issue #13): one process per PE, its PEs spread over
 * several nodes.  tests/multinode/test_multinode.py starts it inside network namespaces
 * (each namespace is a node: PEs of one node share memory, PEs of different nodes reach
 * each other through the inter-node transport, UCX) and runs every case on 2 nodes x 2 PEs
 * and on 3 nodes x 1 PE.
 *
 *   mn_suite CASE [rank=R] [n_pes=N] [ppn=K] [addr=A] [port=P]
 *   mn_suite --list
 *
 * Settings come from argv or else the environment: MN_RANK, MN_N_PES, MN_PPN (PEs per node;
 * the PEs of a node are consecutive, node = pe / ppn), MN_ADDR and MN_PORT (PE 0's
 * control-plane address: init is DEFAULT mode, ip_port "tcp://ADDR:PORT", so every PE needs
 * the same SHMEM_JOB_SECRET), MN_TIMEOUT (seconds for the case, default 150), MN_TLS=0
 * (turn the control plane's TLS off), MN_ONE_NODE=1 (a self-test of the suite: the PEs are
 * really all on one node, whatever ppn says, so the layout check expects that).  The case
 * "victim" also reads MN_VICTIM_FILE and MN_VICTIM_SECONDS (see case_victim).
 *
 * Built with -DMN_SHARE_DATA (mn_suite_data: the library's objects linked in, since its init
 * entry is internal) it initialises through shmemi_init_with_options with the program's
 * global and static data shared (issue #24, src/mem/data_segment.c), and has one case more,
 * "globals": the cases above keep working, and globals are targets across nodes.
 *
 * Every case checks real data.  Each PE sends to peer = (me + ppn) % n, which is on the next
 * node, and receives from src = (me - ppn) mod n, on the previous node.  Exit status: 0 when
 * every check passed; 1 a check failed ("FAIL ..." lines on stdout); 2 bad usage; 3 init
 * failed (its FAIL line has the library's error); 4 the case did not end in MN_TIMEOUT s.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aclshmem.h"
#include "aclshmem/coll.h"
#include "coll/coll_mix.h"

/* Built with AddressSanitizer (gcc: __SANITIZE_ADDRESS__, clang: __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define MN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MN_ASAN 1
#endif
#endif
#ifdef MN_ASAN
#include <sanitizer/lsan_interface.h>
#endif

/* LeakSanitizer's check, made right after finalize rather than at exit, where every thread of
 * the library and of UCX is gone or idle.  __lsan_do_leak_check ends the process with
 * LeakSanitizer's status when it finds a leak, and makes the exit-time check a no-op.  (Its
 * tracer's crash here in CI, "Tracer caught signal 11: addr=<small>", is a bug of gcc 12's
 * runtime with dlopen'd libraries' TLS, such as libucs's, whatever the moment of the check:
 * ci/lib.sh sets intercept_tls_get_addr=0 against it and says why.) */
static void check_leaks(void)
{
#ifdef MN_ASAN
    __lsan_do_leak_check();
#endif
}
#ifdef MN_SHARE_DATA
#include "init/init.h"
#endif

#define MiB (1024UL * 1024)
#define HEAP_SIZE (64 * MiB)

static int me, n, ppn, nodes, peer, src;
static const char *case_name = "?";
static int failures;

/* ---- reporting ----------------------------------------------------------------------- */
static void fail_at(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_at(int line, const char *fmt, ...)
{
    if (++failures > 12) { /* the first ones say what broke; the rest is its echo */
        if (failures == 13)
            printf("FAIL PE %d [%s]: (further failures not shown)\n", me, case_name);
        return;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *err = aclshmemx_get_last_error();
    if (err && *err)
        printf("FAIL PE %d [%s] mn_suite.c:%d: %s  (last error: %s)\n", me, case_name, line, msg, err);
    else
        printf("FAIL PE %d [%s] mn_suite.c:%d: %s\n", me, case_name, line, msg);
    aclshmemx_clear_last_error(); /* the next FAIL line shows only a newer error */
}
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond))                                                                            \
            fail_at(__LINE__, __VA_ARGS__);                                                     \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int len = snprintf(msg, sizeof msg, "FAIL PE %d [%s]: the case did not end in time (hung)\n",
                       me, case_name);
    if (write(STDOUT_FILENO, msg, (size_t)len) < 0)
        _exit(4);
    _exit(4);
}

/* ---- byte patterns: every byte depends on its offset, the sender and a salt ------------ */
static inline unsigned char pat(size_t i, int pe, int salt)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 11) * 40503u;
    return (unsigned char)((x >> 13) ^ (x >> 24) ^ (unsigned)(pe * 31 + salt * 7 + 1));
}

static void fill(void *p, size_t len, int pe, int salt)
{
    unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        b[i] = pat(i, pe, salt);
}

/* Checks that p[0, len) holds the pattern of (pe, salt) shifted by off bytes. */
static int expect_pat(int line, const char *what, const void *p, size_t len, size_t off, int pe,
                      int salt)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        if (b[i] != pat(i + off, pe, salt)) {
            size_t bad = 0;
            for (size_t j = i; j < len; j++)
                bad += b[j] != pat(j + off, pe, salt);
            fail_at(line, "%s: %zu of %zu bytes wrong, first at byte %zu (0x%02x, want 0x%02x "
                    "from PE %d)", what, bad, len, i, b[i], pat(i + off, pe, salt), pe);
            return 0;
        }
    }
    return 1;
}
#define EXPECT_PAT(what, p, len, off, pe, salt) expect_pat(__LINE__, what, p, len, off, pe, salt)

static int all_zero(const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            return 0;
    return 1;
}

static void *xmalloc(size_t len)
{
    void *p = malloc(len);
    if (!p) {
        fail_at(__LINE__, "malloc(%zu) returned NULL", len);
        exit(1);
    }
    return p;
}

static void *sym_alloc(size_t len)
{
    void *p = aclshmem_malloc(len);
    if (!p) {
        fail_at(__LINE__, "aclshmem_malloc(%zu) returned NULL", len);
        exit(1);
    }
    return p;
}

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
static void case_putmem(void)
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
static void case_typed(void)
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
static void case_strided(void)
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
static void case_nbi(void)
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

static void case_signal(void)
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

/* ---- waits and tests, woken by a writer on another node --------------------------------- */
#define NV 4
#define V0 1000 /* the writer puts V0 + i into element i; scalar forms wait for >= V0 */
typedef struct {
    const char *name;
    unsigned written;  /* elements the writer sets, in index order, 10 ms apart */
    unsigned excluded; /* status[i] = 1 */
    int test;          /* a test family: polled, and false before the writer writes */
    /* Returns the family's result: 1/0 (wait, test, all), an index (any; -1 for SIZE_MAX) or
     * a count (some, with idx filled). */
    long (*call)(int64_t *iv, const int *status, size_t *idx, int64_t *cmp_values);
    long want; /* the result once satisfied; -2: a count of 1 or more (some) */
    long none; /* the result of a test family before the writer wrote: 0, or -1 (any) */
} wait_family_t;

#define RES(x) ((x) == SIZE_MAX ? -1L : (long)(x))
static long f_wait_until(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)st, (void)idx, (void)cv; aclshmem_int64_wait_until(&iv[2], ACLSHMEM_CMP_GE, V0); return iv[2] >= V0; }
static long f_wait(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)st, (void)idx, (void)cv; aclshmem_int64_wait(&iv[2], 0); return iv[2] != 0; }
static long f_wait_all(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx, (void)cv; aclshmem_int64_wait_until_all(iv, NV, st, ACLSHMEM_CMP_GE, V0); return 1; }
static long f_wait_any(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx, (void)cv; size_t r = 0; aclshmem_int64_wait_until_any(iv, NV, st, ACLSHMEM_CMP_GE, V0, &r); return RES(r); }
static long f_wait_some(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)cv; size_t r = 0; aclshmem_int64_wait_until_some(iv, NV, idx, st, ACLSHMEM_CMP_GE, V0, &r); return (long)r; }
static long f_wait_all_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx; aclshmem_int64_wait_until_all_vector(iv, NV, st, ACLSHMEM_CMP_EQ, cv); return 1; }
static long f_wait_any_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx; size_t r = 0; aclshmem_int64_wait_until_any_vector(iv, NV, st, ACLSHMEM_CMP_EQ, cv, &r); return RES(r); }
static long f_wait_some_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ size_t r = 0; aclshmem_int64_wait_until_some_vector(iv, NV, idx, st, ACLSHMEM_CMP_EQ, cv, &r); return (long)r; }
static long f_test(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)st, (void)idx, (void)cv; int r = -1; aclshmem_int64_test(&iv[2], ACLSHMEM_CMP_GE, V0, &r); return r; }
static long f_test_any(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx, (void)cv; size_t r = 0; aclshmem_int64_test_any(iv, NV, st, ACLSHMEM_CMP_GE, V0, &r); return RES(r); }
static long f_test_some(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)cv; size_t r = 0; aclshmem_int64_test_some(iv, NV, idx, st, ACLSHMEM_CMP_GE, V0, &r); return (long)r; }
static long f_test_all_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx; int r = -1; aclshmem_int64_test_all_vector(iv, NV, st, ACLSHMEM_CMP_EQ, cv, &r); return r; }
static long f_test_any_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ (void)idx; size_t r = 0; aclshmem_int64_test_any_vector(iv, NV, st, ACLSHMEM_CMP_EQ, cv, &r); return RES(r); }
static long f_test_some_v(int64_t *iv, const int *st, size_t *idx, int64_t *cv)
{ size_t r = 0; aclshmem_int64_test_some_vector(iv, NV, idx, st, ACLSHMEM_CMP_EQ, cv, &r); return (long)r; }

static const wait_family_t wait_families[] = {
    {"wait_until", 1u << 2, 0, 0, f_wait_until, 1, 0},
    {"wait", 1u << 2, 0, 0, f_wait, 1, 0},
    {"wait_until_all", 0xF, 0, 0, f_wait_all, 1, 0},
    {"wait_until_all (status leaves 0 out)", 0xE, 1u << 0, 0, f_wait_all, 1, 0},
    {"wait_until_any (status leaves 1 out)", (1u << 1) | (1u << 3), 1u << 1, 0, f_wait_any, 3, -1},
    {"wait_until_some", (1u << 1) | (1u << 3), 0, 0, f_wait_some, -2, 0},
    {"wait_until_all_vector", 0xF, 0, 0, f_wait_all_v, 1, 0},
    {"wait_until_any_vector", 1u << 2, 0, 0, f_wait_any_v, 2, -1},
    {"wait_until_some_vector (status leaves 3 out)", (1u << 0) | (1u << 3), 1u << 3, 0, f_wait_some_v, -2, 0},
    {"test", 1u << 2, 0, 1, f_test, 1, 0},
    {"test_any", 1u << 3, 0, 1, f_test_any, 3, -1},
    {"test_some", (1u << 0) | (1u << 2), 0, 1, f_test_some, -2, 0},
    {"test_all_vector", 0xF, 0, 1, f_test_all_v, 1, 0},
    {"test_all_vector (status leaves 2 out)", 0xB, 1u << 2, 1, f_test_all_v, 1, 0},
    {"test_any_vector", 1u << 1, 0, 1, f_test_any_v, 1, -1},
    {"test_some_vector", (1u << 1) | (1u << 2), 0, 1, f_test_some_v, -2, 0},
};
#define N_WAIT_FAMILIES (sizeof wait_families / sizeof wait_families[0])

/* One family per phase; the readers of a phase are the PEs of one node (rotating), the
 * writers their src PEs on the previous node. */
static void case_wait(void)
{
    int64_t *iv = sym_alloc(NV * sizeof(int64_t));
    int32_t *sig = sym_alloc(sizeof(int32_t));
    int64_t cv[NV];
    for (int i = 0; i < NV; i++)
        cv[i] = V0 + i;
    for (size_t k = 0; k <= N_WAIT_FAMILIES; k++) {
        int reader_node = (int)(k % (size_t)nodes);
        int reader = me / ppn == reader_node, writer = peer / ppn == reader_node;
        memset(iv, 0, NV * sizeof(int64_t));
        *sig = 0;
        aclshmem_barrier_all();
        if (k == N_WAIT_FAMILIES) { /* signal_wait_until, woken by aclshmemx_signal_op */
            if (writer) {
                sleep_ms(30);
                aclshmemx_signal_op(sig, V0 + 7, ACLSHMEM_SIGNAL_SET, peer);
            }
            if (reader) {
                int32_t got = aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, V0);
                CHECK(got == V0 + 7, "signal_wait_until returned %d, want %d", got, V0 + 7);
            }
            aclshmem_barrier_all();
            break;
        }
        const wait_family_t *f = &wait_families[k];
        int status[NV];
        for (int i = 0; i < NV; i++)
            status[i] = (f->excluded >> i) & 1;
        size_t idx[NV];
        long res = 0;
        if (reader && f->test) {
            res = f->call(iv, status, idx, cv);
            CHECK(res == f->none, "%s before any write: %ld", f->name, res);
        }
        aclshmem_barrier_all();
        if (writer) {
            sleep_ms(30);
            for (int i = 0; i < NV; i++) {
                if (!((f->written >> i) & 1))
                    continue;
                aclshmem_int64_p(&iv[i], V0 + i, peer);
                sleep_ms(10);
            }
        }
        if (reader) {
            double deadline = now() + 10;
            memset(idx, 0xFF, sizeof idx);
            do {
                res = f->call(iv, status, idx, cv);
            } while (f->test && res == f->none && now() < deadline && (sleep_ms(1), 1));
            if (f->want == -2) {
                CHECK(res >= 1 && res <= NV, "%s: count %ld", f->name, res);
                for (long j = 0; j < res && j < NV; j++)
                    CHECK(idx[j] < NV && ((f->written & ~f->excluded) >> idx[j] & 1) &&
                              iv[idx[j]] == V0 + (int64_t)idx[j],
                          "%s: index %zu is not one the writer set", f->name, idx[j]);
            } else {
                CHECK(res == f->want, "%s returned %ld, want %ld", f->name, res, f->want);
            }
            /* what the wait promised is in memory */
            for (int i = 0; i < NV && f->want == 1 && f->written == 0xF && !f->excluded; i++)
                CHECK(iv[i] == V0 + i, "%s: element %d is %lld after it returned", f->name, i,
                      (long long)iv[i]);
        }
        aclshmem_barrier_all();
    }
    aclshmem_free(sig);
    aclshmem_free(iv);
}

/* ---- atomics from every PE on one word of PE 0 ------------------------------------------ */
#define AMO_TYPES(X) X(int32, int32_t) X(uint32, uint32_t) X(int64, int64_t) X(uint64, uint64_t) \
    X(float, float) X(double, double)
typedef struct {
    const char *name;
    int64_t (*fetch_add)(void *, int64_t, int);
    void (*add)(void *, int64_t, int);
    int64_t (*cswap)(void *, int64_t, int64_t, int);
    int64_t (*fetch)(void *, int);
    void (*set)(void *, int64_t, int);
    int64_t (*swap)(void *, int64_t, int);
    int64_t (*load)(const void *);
    void (*store)(void *, int64_t);
} amo_kind_t;
#define AMO_WRAPPERS(NAME, T)                                                                   \
    static int64_t fadd_##NAME(void *d, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_fetch_add(d, (T)v, pe); } \
    static void add_##NAME(void *d, int64_t v, int pe) { aclshmem_##NAME##_atomic_add(d, (T)v, pe); } \
    static int64_t cswap_##NAME(void *d, int64_t c, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_compare_swap(d, (T)c, (T)v, pe); } \
    static int64_t fetch_##NAME(void *d, int pe) { return (int64_t)aclshmem_##NAME##_atomic_fetch(d, pe); } \
    static void set_##NAME(void *d, int64_t v, int pe) { aclshmem_##NAME##_atomic_set(d, (T)v, pe); } \
    static int64_t swap_##NAME(void *d, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_swap(d, (T)v, pe); } \
    static int64_t load_##NAME(const void *d) { return (int64_t)*(const T *)d; }               \
    static void store_##NAME(void *d, int64_t v) { *(T *)d = (T)v; }
AMO_TYPES(AMO_WRAPPERS)
static const amo_kind_t amo_kinds[] = {
#define AMO_ENTRY(NAME, T) {#NAME, fadd_##NAME, add_##NAME, cswap_##NAME, fetch_##NAME, set_##NAME, \
                            swap_##NAME, load_##NAME, store_##NAME},
    AMO_TYPES(AMO_ENTRY)
};

#define K 100 /* operations per PE and kind */

/* On PE 0: the n * K tickets every PE handed in (plus extra) are exactly 0 .. total - 1. */
static void check_tickets(const char *what, const int64_t *tickets, int64_t total)
{
    unsigned char *seen = calloc((size_t)total, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < total; i++) {
        int64_t t = tickets[i];
        if (t < 0 || t >= total || seen[t]++)
            bad++;
    }
    CHECK(bad == 0, "%s: %lld of %lld values missing or repeated", what, (long long)bad,
          (long long)total);
    free(seen);
}

static void case_amo(void)
{
    int64_t *word = sym_alloc(sizeof(int64_t));
    int64_t *tickets = sym_alloc((size_t)(n * K + 1) * sizeof(int64_t)), mine[K];
    for (size_t k = 0; k < sizeof amo_kinds / sizeof amo_kinds[0]; k++) {
        const amo_kind_t *a = &amo_kinds[k];
        char what[64];
        /* fetch_add: every PE takes K tickets; PE 0 sees each of 0 .. nK-1 once */
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            mine[i] = a->fetch_add(word, 1, 0);
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        CHECK(a->fetch(word, 0) == n * K, "%s atomic_fetch after fetch_add: %lld, want %d", a->name,
              (long long)a->fetch(word, 0), n * K);
        snprintf(what, sizeof what, "%s atomic_fetch_add tickets", a->name);
        if (me == 0)
            check_tickets(what, tickets, n * K);
        /* add: PE p adds p + 1, K times */
        aclshmem_barrier_all();
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            a->add(word, me + 1, 0);
        aclshmem_barrier_all();
        CHECK(me != 0 || a->load(word) == (int64_t)K * n * (n + 1) / 2, "%s atomic_add: %lld, want %lld",
              a->name, (long long)a->load(word), (long long)K * n * (n + 1) / 2);
        /* compare_swap increments: the old values of the successful swaps are tickets too */
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++) {
            int64_t old = a->fetch(word, 0), seen;
            while ((seen = a->cswap(word, old, old + 1, 0)) != old)
                old = seen;
            mine[i] = old;
        }
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s atomic_compare_swap increments", a->name);
        if (me == 0) {
            CHECK(a->load(word) == n * K, "%s: %lld, want %d", what, (long long)a->load(word), n * K);
            check_tickets(what, tickets, n * K);
        }
        /* swap: the old values returned, with the final value, are each value written (1 ..
         * nK) and the initial 0 exactly once */
        aclshmem_barrier_all();
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            mine[i] = a->swap(word, me * K + i + 1, 0);
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s atomic_swap", a->name);
        if (me == 0) {
            tickets[n * K] = a->load(word);
            check_tickets(what, tickets, n * K + 1);
        }
        /* set and fetch: each PE in turn sets, everyone fetches */
        for (int p = 0; p < n; p++) {
            aclshmem_barrier_all();
            if (me == p)
                a->set(word, 500 + p, 0);
            aclshmem_barrier_all();
            int64_t got = a->fetch(word, 0);
            CHECK(got == 500 + p, "%s atomic_set by PE %d, atomic_fetch: %lld", a->name, p,
                  (long long)got);
        }
        aclshmem_barrier_all();
    }
    aclshmem_free(tickets);
    aclshmem_free(word);
}

/* ---- barriers ----------------------------------------------------------------------------- */
/* rounds barriers of team (members only): before each, an nbi put of (round, sender) to the
 * team's next PE; after it, the value from the team's previous PE must be there. */
static void checked_barriers(aclshmem_team_t team, int rounds, int64_t *slot, int variants)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    int to = aclshmem_team_translate_pe(team, (tme + 1) % tn, ACLSHMEM_TEAM_WORLD);
    int from = aclshmem_team_translate_pe(team, (tme + tn - 1) % tn, ACLSHMEM_TEAM_WORLD);
    CHECK(to >= 0 && from >= 0, "team %d: translate_pe gave %d and %d", team, to, from);
    for (int r = 0; r < rounds; r++) {
        int64_t v = (int64_t)r * 1000 + me;
        aclshmem_putmem_nbi(&slot[r & 1], &v, sizeof v, to);
        switch (variants ? r % 4 : 1) {
        case 0: aclshmem_barrier_all(); break;
        case 1: aclshmem_barrier(team); break;
        case 2: aclshmem_sync_all(); break;
        default: aclshmemx_barrier_all_vec(); break;
        }
        int64_t want = (int64_t)r * 1000 + from;
        if (slot[r & 1] != want) {
            CHECK(0, "team %d barrier %d: slot holds %lld, want %lld (from PE %d)", team, r,
                  (long long)slot[r & 1], (long long)want, from);
            break;
        }
    }
}

static void case_barrier(void)
{
    int64_t *slot = sym_alloc(2 * sizeof(int64_t));
    slot[0] = slot[1] = -1;
    aclshmem_barrier_all();
    double t0 = now();
    checked_barriers(ACLSHMEM_TEAM_WORLD, 200, slot, 1);
    printf("PE %d: 200 checked barriers (barrier_all, barrier, sync_all, barrier_all_vec) in %.2f s\n",
           me, now() - t0);
    t0 = now();
    for (int i = 0; i < 200; i++)
        aclshmem_barrier_all();
    printf("PE %d: 200 barrier_all in a row in %.2f s\n", me, now() - t0);
    aclshmem_free(slot);
}

/* Teams that span nodes: one PE of each node, every PE but PE 0, and the PEs of even rank. */
static void case_teams(void)
{
    int64_t *slot = sym_alloc(2 * sizeof(int64_t));
    static const struct { const char *name; int start, stride, size; } specs[] = {
        {"one PE per node", 0, -1, -1}, {"all but PE 0", 1, 1, -1}, {"even PEs", 0, 2, -1}};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        int stride = specs[s].stride > 0 ? specs[s].stride : ppn;
        int size = s == 0 ? nodes : s == 1 ? n - 1 : (n + 1) / 2;
        aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
        int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, specs[s].start, stride, size, &team);
        CHECK(rc == 0, "team_split_strided(%s: %d, %d, %d) returned %d", specs[s].name,
              specs[s].start, stride, size, rc);
        int member = me >= specs[s].start && (me - specs[s].start) % stride == 0 &&
                     (me - specs[s].start) / stride < size;
        CHECK(member == (team != ACLSHMEM_TEAM_INVALID), "team %s: member %d but team %d",
              specs[s].name, member, team);
        slot[0] = slot[1] = -1;
        aclshmem_barrier_all();
        if (member && team != ACLSHMEM_TEAM_INVALID) {
            CHECK(aclshmem_team_n_pes(team) == size, "team %s has %d PEs, want %d", specs[s].name,
                  aclshmem_team_n_pes(team), size);
            CHECK(aclshmem_team_my_pe(team) == (me - specs[s].start) / stride,
                  "team %s: my_pe %d", specs[s].name, aclshmem_team_my_pe(team));
            checked_barriers(team, 100, slot, 0);
        }
        aclshmem_barrier_all();
        if (team != ACLSHMEM_TEAM_INVALID)
            aclshmem_team_destroy(team);
    }
    aclshmem_free(slot);
}

/* ---- a PE that dies ------------------------------------------------------------------------ */
/* The last PE (on the last node) SIGKILLs itself while the others wait in a barrier: every
 * survivor's barrier must fail within 10 s with an error naming it. */
static void case_killed(void)
{
    int dead = n - 1;
    aclshmem_barrier_all();
    if (me == dead) {
        sleep_ms(500);
        printf("PE %d: SIGKILL myself\n", me);
        fflush(stdout);
        raise(SIGKILL);
    }
    aclshmemx_clear_last_error();
    double t0 = now();
    aclshmem_barrier_all();
    double secs = now() - t0 - 0.5;
    const char *err = aclshmemx_get_last_error();
    char want[32];
    snprintf(want, sizeof want, "PE %d", dead);
    printf("PE %d: barrier_all after PE %d died: %.2f s, \"%s\"\n", me, dead, secs, err);
    CHECK(secs < 10.0, "the barrier took %.1f s to fail", secs);
    CHECK(err && *err, "the barrier returned without an error");
    CHECK(err && strstr(err, want), "the error does not name \"%s\"", want);
}

/* ---- a victim for an attacker outside the job (tests/multinode/test_outsider.py) ------------ */
/* Every PE fills a symmetric "target" with its own pattern and publishes where it lies: the
 * file $MN_VICTIM_FILE.pe<N> says "pid P", "target ADDRESS LENGTH" (what an attacker who
 * guessed right would aim at).  Then, until $MN_VICTIM_FILE.done exists or MN_VICTIM_SECONDS
 * (default 2) have passed, the job keeps busy the way a real one would while the attacker
 * works: each round a put and an atomic add to the PE on the next node, a barrier, a get of
 * that PE's whole target, and a 20 ms sleep, so that the UCX worker is progressed all along.
 * Every round checks that the own target still holds its pattern (the first change is
 * reported with the time it was seen), that the peer's target reads back as its pattern and
 * that the job's own RMA delivered.  A barrier that fails (a PE died) ends the PE at once,
 * after a last look at its target. */
#define VICTIM_TARGET (64 * 1024)
#define VICTIM_CHUNK 4096
#define VICTIM_SALT 77

static void victim_publish(const char *file, const void *target)
{
    char path[4096], tmp[4096 + 8];
    snprintf(path, sizeof path, "%s.pe%d", file, me);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fail_at(__LINE__, "cannot write %s", tmp);
        return;
    }
    fprintf(f, "pid %d\ntarget 0x%llx %d\n", (int)getpid(),
            (unsigned long long)(uintptr_t)target, VICTIM_TARGET);
    fclose(f);
    CHECK(rename(tmp, path) == 0, "cannot rename %s to %s", tmp, path); /* seen whole or not at all */
}

/* PE 0 decides when the rounds end and tells every PE through its stop word. */
static int victim_over(double deadline, const char *file)
{
    char done[4096];
    snprintf(done, sizeof done, "%s.done", file ? file : "");
    return now() > deadline || (file && access(done, F_OK) == 0);
}

/* Ends this PE when the last barrier failed (the job is broken), after a last look at its
 * target: what an attacker wrote before a PE died is reported too. */
static void victim_check_barrier(int round, const unsigned char *target)
{
    const char *err = aclshmemx_get_last_error();
    if (!err || !*err)
        return;
    printf("FAIL PE %d [%s]: barrier of round %d failed, the job is broken: %s\n", me, case_name,
           round, err);
    EXPECT_PAT("my target when the job broke", target, VICTIM_TARGET, 0, me, VICTIM_SALT);
    fflush(stdout);
    _exit(1); /* finalize with a dead PE is not what this case tests */
}

typedef struct {
    unsigned char *target, *inbox, *loc;
    int64_t *words; /* [0]: atomic adds received, [1]: stop */
    double t0;
    int target_ok, peer_ok; /* a change is reported once */
} victim_t;

/* One round (see above); returns 1 when it was the last one. */
static int victim_round(victim_t *v, int round, double deadline, const char *file)
{
    fill(v->loc, VICTIM_CHUNK, me, round);
    aclshmem_putmem(v->inbox, v->loc, VICTIM_CHUNK, peer);
    aclshmem_int64_atomic_add(&v->words[0], 1, peer);
    if (me == 0 && victim_over(deadline, file))
        for (int q = 0; q < n; q++)
            aclshmem_int64_p(&v->words[1], 1, q);
    aclshmem_barrier_all();
    victim_check_barrier(round, v->target);
    int stop = v->words[1] != 0; /* read between the barriers: PE 0 writes it before the first */
    char what[64];
    snprintf(what, sizeof what, "round %d: the put from PE %d", round, src);
    EXPECT_PAT(what, v->inbox, VICTIM_CHUNK, 0, src, round);
    CHECK(v->words[0] == round, "round %d: %lld atomic adds arrived, want %d", round,
          (long long)v->words[0], round);
    aclshmem_getmem(v->loc, v->target, VICTIM_TARGET, peer);
    snprintf(what, sizeof what, "round %d: PE %d's target, read by a get", round, peer);
    v->peer_ok = v->peer_ok && EXPECT_PAT(what, v->loc, VICTIM_TARGET, 0, peer, VICTIM_SALT);
    snprintf(what, sizeof what, "my target, %.2f s after it was published", now() - v->t0);
    v->target_ok = v->target_ok && EXPECT_PAT(what, v->target, VICTIM_TARGET, 0, me, VICTIM_SALT);
    aclshmem_barrier_all(); /* the inbox is checked before the next round overwrites it */
    victim_check_barrier(round, v->target);
    return stop;
}

static void case_victim(void)
{
    const char *file = getenv("MN_VICTIM_FILE"), *s_secs = getenv("MN_VICTIM_SECONDS");
    victim_t v = {.target = sym_alloc(VICTIM_TARGET), .inbox = sym_alloc(VICTIM_CHUNK),
                  .loc = xmalloc(VICTIM_TARGET), .words = sym_alloc(2 * sizeof(int64_t)),
                  .target_ok = 1, .peer_ok = 1};
    fill(v.target, VICTIM_TARGET, me, VICTIM_SALT);
    v.words[0] = v.words[1] = 0;
    aclshmem_barrier_all();
    if (file)
        victim_publish(file, v.target);
    v.t0 = now();
    double deadline = v.t0 + (s_secs ? atof(s_secs) : 2.0);
    int round = 1;
    while (!victim_round(&v, round, deadline, file)) {
        sleep_ms(20);
        round++;
    }
    printf("PE %d: %d rounds in %.2f s\n", me, round, now() - v.t0);
    free(v.loc);
    aclshmem_free(v.words);
    aclshmem_free(v.inbox);
    aclshmem_free(v.target);
}

/* ---- the program's globals as targets (mn_suite_data only) ------------------------------ */
#ifdef MN_SHARE_DATA
#define G_CAP (MiB + 64)
unsigned char g_bytes[G_CAP];                     /* .bss */
int64_t g_table[8] = {1, 2, 3, 5, 8, 13, 21, 34}; /* .data */
static int64_t g_counter, g_cswap, g_flag;       /* .bss statics */
static int32_t g_sig;

/* putmem/getmem of 1 byte to 1 MiB into and out of a peer's global array, guards kept. */
static void globals_putget(unsigned char *loc)
{
    static const size_t sizes[] = {1, 8, 4095, 65536 + 5, MiB};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k], off = 1 + k;
        int salt = 100 + (int)k;
        memset(g_bytes, 0xA5, G_CAP);
        fill(loc, len, me, salt);
        aclshmem_barrier_all();
        aclshmem_putmem(g_bytes + off, loc, len, peer);
        aclshmem_barrier_all();
        EXPECT_PAT("putmem into a global", g_bytes + off, len, 0, src, salt);
        CHECK(g_bytes[off - 1] == 0xA5 && g_bytes[off + len] == 0xA5, "putmem of %zu: a guard changed", len);
        fill(g_bytes + off, len, me, salt + 50);
        aclshmem_barrier_all();
        aclshmem_getmem(loc, g_bytes + off, len, peer);
        EXPECT_PAT("getmem from a global", loc, len, 0, peer, salt + 50);
        aclshmem_barrier_all();
    }
}

static void case_globals(void)
{
    static const int64_t initial[8] = {1, 2, 3, 5, 8, 13, 21, 34};
    CHECK(memcmp(g_table, initial, sizeof initial) == 0, "init changed the initialised globals");
    const char *one_node = getenv("MN_ONE_NODE");
    int all_here = one_node && strcmp(one_node, "1") == 0;
    for (int q = 0; q < n; q++) /* same-node peers' globals are mapped here, the others' not */
        CHECK((all_here || q / ppn == me / ppn) == (aclshmem_ptr(g_table, q) != NULL), "aclshmem_ptr(g_table, %d)", q);
    unsigned char *loc = xmalloc(G_CAP);
    globals_putget(loc);
    free(loc);
    /* p and g on initialised data */
    g_table[1] = 100 + me;
    aclshmem_barrier_all();
    CHECK(aclshmem_int64_g(&g_table[1], peer) == 100 + peer, "g of a peer's global");
    aclshmem_int64_p(&g_table[2], 200 + me, peer);
    aclshmem_barrier_all();
    CHECK(g_table[2] == 200 + src, "p into a global: %lld, want %d", (long long)g_table[2], 200 + src);
    /* AMOs on static words: every PE adds to PE 0's; one compare_swap of n wins */
    for (int i = 0; i < 100; i++)
        aclshmem_int64_atomic_add(&g_counter, me + 1, 0);
    int64_t old = aclshmem_int64_atomic_compare_swap(&g_cswap, 0, 1000 + me, n - 1);
    aclshmem_barrier_all();
    int64_t total = aclshmem_int64_atomic_fetch(&g_counter, 0), winner = aclshmem_int64_atomic_fetch(&g_cswap, n - 1);
    CHECK(total == 50LL * n * (n + 1), "atomic_add to a static: %lld, want %lld", (long long)total, 50LL * n * (n + 1));
    CHECK(winner >= 1000 && winner < 1000 + n && (old == 0) == (winner == 1000 + me), "compare_swap: %lld",
          (long long)winner);
    /* put-with-signal into globals, waited for on a static signal word */
    unsigned char data[4096];
    fill(data, sizeof data, me, 7);
    aclshmem_barrier_all();
    aclshmemx_putmem_signal(g_bytes, data, sizeof data, &g_sig, me + 1, ACLSHMEM_SIGNAL_SET, peer);
    CHECK(aclshmem_signal_wait_until(&g_sig, ACLSHMEM_CMP_EQ, src + 1) == src + 1, "signal_wait_until on a static");
    EXPECT_PAT("data put with a signal into a global", g_bytes, sizeof data, 0, src, 7);
    /* wait_until on a static flag, set from the previous node */
    aclshmem_barrier_all();
    aclshmem_int64_p(&g_flag, 77, peer);
    aclshmem_int64_wait_until(&g_flag, ACLSHMEM_CMP_EQ, 77);
    CHECK(g_flag == 77, "wait_until on a static flag");
}
#endif

/* ---- collectives (issue #25) ----------------------------------------------------------- */
/* Every collective of aclshmem/coll.h across the nodes: the members of another node are
 * read with gets and written with puts, those of this node through the mappings. */
static void coll_moves(aclshmem_team_t team, size_t len, unsigned char *src, unsigned char *dst, int salt)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    for (int root = 0; root < tn; root += tn > 2 ? tn - 1 : 1) {
        fill(src, len, root, salt);
        memset(dst, 0, len);
        CHECK(aclshmem_broadcastmem(team, dst, src, len, root) == 0, "broadcast of %zu from %d", len, root);
        EXPECT_PAT("broadcast", dst, len, 0, root, salt);
    }
    /* Into local memory through a symmetric work area (dst); with the second root, the odd team
     * PEs call broadcastmem (in place in dst) instead: a team may mix the two. */
    unsigned char *own = malloc(len + 1), *from = malloc(len + 1);
    CHECK(own && from, "out of memory");
    for (int root = 0; own && from && root < tn; root += tn > 2 ? tn - 1 : 1) {
        int mixed = root != 0 && tme % 2 == 1;
        unsigned char *to = mixed ? dst : own;
        if (tme == root)
            fill(mixed ? dst : from, len, root, salt);
        else
            memset(to, 0, len);
        int rc = mixed ? aclshmem_broadcastmem(team, dst, dst, len, root)
                       : aclshmemx_broadcastmem_local(team, own, from, dst, len, root);
        CHECK(rc == 0, "broadcast_local of %zu from %d%s", len, root, mixed ? " (mixed)" : "");
        EXPECT_PAT("broadcast_local", to, len, 0, root, salt);
    }
    free(own);
    free(from);
    fill(src, len, tme, salt);
    CHECK(aclshmem_fcollectmem(team, dst, src, len) == 0, "fcollect of %zu", len);
    for (int p = 0; p < tn; p++)
        EXPECT_PAT("fcollect", dst + (size_t)p * len, len, 0, p, salt);
    size_t at = 0, mine = len / (size_t)(tme + 1);
    CHECK(aclshmem_collectmem(team, dst, src, mine) == 0, "collect of %zu", mine);
    for (int p = 0; p < tn; p++) {
        EXPECT_PAT("collect", dst + at, len / (size_t)(p + 1), 0, p, salt);
        at += len / (size_t)(p + 1);
    }
    for (int j = 0; j < tn; j++)
        fill(src + (size_t)j * len, len, tme * 64 + j, salt);
    CHECK(aclshmem_alltoallmem(team, dst, src, len) == 0, "alltoall of %zu", len);
    for (int p = 0; p < tn; p++)
        EXPECT_PAT("alltoall", dst + (size_t)p * len, len, 0, p * 64 + tme, salt);
    aclshmem_barrier(team);
}

static void coll_reductions(aclshmem_team_t team, size_t count, int64_t *src, int64_t *dst)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    for (size_t i = 0; i < count * (size_t)tn; i++)
        src[i] = (int64_t)tme * 1000003 + (int64_t)i;
    CHECK(aclshmem_int64_sum_reduce(team, dst, src, count) == 0, "int64 sum of %zu", count);
    int64_t base = 1000003LL * tn * (tn - 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (dst[i] != base + (int64_t)i * tn) {
            CHECK(0, "sum reduce of %zu: element %zu is %lld", count, i, (long long)dst[i]);
            break;
        }
    CHECK(aclshmem_int64_max_reduce(team, src, src, count) == 0, "int64 max in place of %zu", count);
    for (size_t i = 0; i < count; i++)
        if (src[i] != (int64_t)(tn - 1) * 1000003 + (int64_t)i) {
            CHECK(0, "max reduce in place of %zu: element %zu is %lld", count, i, (long long)src[i]);
            break;
        }
    for (size_t i = 0; i < count * (size_t)tn; i++)
        src[i] = (int64_t)tme + (int64_t)i;
    CHECK(aclshmem_int64_sum_reducescatter(team, dst, src, count) == 0, "reducescatter of %zu", count);
    for (size_t i = 0; i < count; i++)
        if (dst[i] != (int64_t)tn * (int64_t)((size_t)tme * count + i) + tn * (tn - 1) / 2) {
            CHECK(0, "reducescatter of %zu: element %zu is %lld", count, i, (long long)dst[i]);
            break;
        }
    /* Local memory through a symmetric work area (dst). */
    int64_t *mine = malloc((count + 1) * sizeof(int64_t)), *all = malloc((count + 1) * sizeof(int64_t));
    CHECK(mine && all, "out of memory");
    /* ... then with the odd team PEs reducing symmetric memory in the same call (a team may mix) */
    for (int mixed = 0; mixed < 2; mixed++) {
        int symmetric = mixed && tme % 2 == 1;
        int64_t *in = symmetric ? src : mine, *out = symmetric ? dst : all;
        for (size_t i = 0; mine && all && i < count; i++)
            in[i] = (int64_t)tme + (int64_t)i;
        int rc = symmetric ? aclshmem_int64_sum_reduce(team, out, in, count)
                           : aclshmemx_reduce_local(team, out, in, dst, count, ACLSHMEMX_TYPE_int64, ACLSHMEMX_OP_SUM);
        CHECK(rc == 0, "reduce_local of %zu%s", count, mixed ? " (mixed)" : "");
        for (size_t i = 0; mine && all && i < count; i++)
            if (out[i] != (int64_t)tn * (int64_t)i + tn * (tn - 1) / 2) {
                CHECK(0, "reduce_local of %zu%s: element %zu is %lld", count, mixed ? " (mixed)" : "", i,
                      (long long)out[i]);
                break;
            }
    }
    free(mine);
    free(all);
    aclshmem_barrier(team);
}

static void case_coll(void)
{
    static const size_t lens[] = {0, 1, 4097, 200001, 2 * MiB + 3};
    size_t cap = (2 * MiB + 3) * (size_t)n;
    unsigned char *src = sym_alloc(cap), *dst = sym_alloc(cap);
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        double t0 = now();
        coll_moves(ACLSHMEM_TEAM_WORLD, lens[k], src, dst, (int)k);
        coll_reductions(ACLSHMEM_TEAM_WORLD, lens[k] / 8, (int64_t *)(void *)src, (int64_t *)(void *)dst);
        printf("PE %d: the collectives of %zu bytes in %.3f s\n", me, lens[k], now() - t0);
    }
    /* Teams across nodes: one PE of each node (stride ppn), the even PEs, and all but PE 0
     * (a node with fewer members than the others). */
    static const struct { int start, stride; } specs[] = {{0, -1}, {0, 2}, {1, 1}};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        int stride = specs[s].stride > 0 ? specs[s].stride : ppn;
        int size = (n - 1 - specs[s].start) / stride + 1;
        if (size < 1)
            continue;
        aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
        CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, specs[s].start, stride, size, &team) == 0, "split");
        if (team != ACLSHMEM_TEAM_INVALID) {
            coll_moves(team, 70001, src, dst, 9);
            coll_reductions(team, 70001, (int64_t *)(void *)src, (int64_t *)(void *)dst);
            aclshmem_team_destroy(team);
        }
        aclshmem_barrier_all();
    }
    /* The exchange, and calls that do not match: they fail on every PE of every node. */
    int64_t mine = 5000 + me, *all = xmalloc(sizeof(int64_t) * (size_t)n);
    CHECK(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, &mine, sizeof mine, all) == 0, "exchange");
    for (int p = 0; p < n; p++)
        CHECK(all[p] == 5000 + p, "exchange: PE %d sent %lld", p, (long long)all[p]);
    int rc = aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, me == n - 1 ? 9 : 8, 0);
    CHECK(rc == ACLSHMEM_INVALID_PARAM, "a broadcast whose sizes differ returned %d", rc);
    CHECK(strstr(aclshmemx_get_last_error(), "different calls") != NULL, "mismatch message: %s",
          aclshmemx_get_last_error());
    free(all);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---- get_nbi across nodes (issue #25) ------------------------------------------------------ */
/* More gets in flight at once than the AM plane has request slots (256), a large one among
 * them, completed by one quiet; the data is checked only after the quiet (before it, dest
 * may hold anything). */
#define GN_SMALL 1000
#define GN_PIECE 97

/* The error text of a call named after `name` (its message starts with it), name cut off. */
static const char *after_name(const char *msg, const char *name)
{
    return strncmp(msg, name, strlen(name)) == 0 ? msg + strlen(name) : msg;
}

/* get_nbi refuses what get refuses, with get's message (under its own name), and leaves
 * nothing outstanding: a quiet after it works. */
static void get_nbi_bad_input(unsigned char *sym, unsigned char *loc)
{
    static const int bad_pes[] = {-1, 1 << 20};
    for (size_t k = 0; k < 3; k++) {
        int pe = k < 2 ? bad_pes[k] : peer;
        const void *from = k < 2 ? (const void *)sym : (const void *)loc; /* loc: not symmetric */
        char blocking[256];
        aclshmem_getmem(loc, from, 8, pe);
        snprintf(blocking, sizeof blocking, "%s", aclshmemx_get_last_error());
        aclshmemx_clear_last_error();
        aclshmem_getmem_nbi(loc, from, 8, pe);
        const char *nbi = aclshmemx_get_last_error();
        CHECK(*blocking && strcmp(after_name(nbi, "aclshmem_getmem_nbi"), after_name(blocking, "aclshmem_getmem")) == 0,
              "get_nbi's error \"%s\" is not get's \"%s\"", nbi, blocking);
    }
    aclshmemx_clear_last_error();
    aclshmem_quiet();
    CHECK(*aclshmemx_get_last_error() == 0, "quiet after refused get_nbi: %s", aclshmemx_get_last_error());
}

static void case_get_nbi(void)
{
    const size_t big = 3 * MiB + 5, small_at = big, cap = big + GN_SMALL * GN_PIECE;
    unsigned char *sym = sym_alloc(cap), *loc = xmalloc(cap);
    fill(sym, cap, me, 41);
    memset(loc, 0, cap);
    aclshmem_barrier_all();
    for (int k = 0; k < GN_SMALL; k++)
        aclshmem_getmem_nbi(loc + small_at + (size_t)k * GN_PIECE, sym + small_at + (size_t)k * GN_PIECE, GN_PIECE,
                            peer);
    aclshmem_getmem_nbi(loc, sym, big, peer);
    aclshmem_quiet();
    EXPECT_PAT("1001 get_nbi from another node, one quiet", loc, cap, 0, peer, 41);
    /* put_nbi and get_nbi to the same PE, one quiet completes both */
    int64_t *flag = sym_alloc(sizeof(int64_t));
    *flag = 0;
    unsigned char *landing = sym_alloc(64 * 1024), *out = xmalloc(64 * 1024);
    fill(out, 64 * 1024, me, 43);
    memset(loc, 0, cap);
    aclshmem_barrier_all();
    aclshmem_putmem_nbi(landing, out, 64 * 1024, peer);
    aclshmem_getmem_nbi(loc, sym, 256 * 1024, peer);
    aclshmem_int64_get_nbi((int64_t *)(void *)(loc + 256 * 1024), (const int64_t *)(void *)sym, 8, peer);
    aclshmem_quiet();
    EXPECT_PAT("get_nbi beside a put_nbi", loc, 256 * 1024, 0, peer, 41);
    EXPECT_PAT("int64_get_nbi", loc + 256 * 1024, 64, 0, peer, 41);
    aclshmem_int64_p(flag, 1, peer); /* after the quiet: the data is there before the flag */
    aclshmem_int64_wait_until(flag, ACLSHMEM_CMP_EQ, 1);
    EXPECT_PAT("put_nbi beside a get_nbi", landing, 64 * 1024, 0, src, 43);
    get_nbi_bad_input(sym, loc);
    aclshmem_barrier_all();
    free(out);
    free(loc);
    aclshmem_free(landing);
    aclshmem_free(flag);
    aclshmem_free(sym);
}

/* A reduction whose chunks span several fetch blocks (1 MiB) of the inputs on other nodes,
 * the last one short: the fetch of block k + 1 travels while block k is reduced. */
static void case_reduce_blocks(void)
{
    size_t count = 5 * MiB / 8 + 3;
    int64_t *src_buf = sym_alloc(count * sizeof(int64_t)), *dst_buf = sym_alloc(count * sizeof(int64_t));
    for (size_t i = 0; i < count; i++)
        src_buf[i] = (int64_t)me * 1000003 + (int64_t)i;
    CHECK(aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, dst_buf, src_buf, count) == 0, "int64 sum of %zu: %s",
          count, aclshmemx_get_last_error());
    int64_t base = 1000003LL * n * (n - 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (dst_buf[i] != base + (int64_t)i * n) {
            CHECK(0, "sum of %zu: element %zu is %lld", count, i, (long long)dst_buf[i]);
            break;
        }
    CHECK(aclshmem_int64_max_reduce(ACLSHMEM_TEAM_WORLD, src_buf, src_buf, count) == 0, "int64 max in place");
    for (size_t i = 0; i < count; i++)
        if (src_buf[i] != (int64_t)(n - 1) * 1000003 + (int64_t)i) {
            CHECK(0, "max in place of %zu: element %zu is %lld", count, i, (long long)src_buf[i]);
            break;
        }
    aclshmem_barrier_all();
    aclshmem_free(dst_buf);
    aclshmem_free(src_buf);
}

/* The seeded mixes of tests/coll/coll_mix.c across nodes: collectives of the world and of
 * strided sub-teams that come and go (teams on one node, on several, with one PE on some
 * node), every result checked.  Two seeds of 1500 steps each. */
static void mix_fail(int line, const char *message)
{
    fail_at(__LINE__, "coll_mix.c:%d: %s", line, message);
}

static void case_coll_mix(void)
{
    CHECK(n <= COLL_MIX_MAX_PES, "coll_mix runs on at most %d PEs, not %d", COLL_MIX_MAX_PES, n);
    if (n > COLL_MIX_MAX_PES)
        return;
    static const uint64_t seeds[] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        double t0 = now();
        CHECK(coll_mix_run(n, seeds[k], 1500, mix_fail) == 0, "coll_mix_run");
        printf("PE %d: 1500 mixed collectives in %.3f s\n", me, now() - t0);
    }
}

/* ---- main ------------------------------------------------------------------------------- */
static void case_init(void) { aclshmem_barrier_all(); }

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},       {"putmem", case_putmem}, {"typed", case_typed},
    {"strided", case_strided}, {"nbi", case_nbi},       {"signal", case_signal},
    {"wait", case_wait},       {"amo", case_amo},       {"barrier", case_barrier},
    {"teams", case_teams},     {"killed", case_killed}, {"victim", case_victim},
    {"coll", case_coll},       {"get_nbi", case_get_nbi}, {"reduce_blocks", case_reduce_blocks},
    {"coll_mix", case_coll_mix},
#ifdef MN_SHARE_DATA
    {"globals", case_globals},
#endif
};

/* Every PE of my node gives a pointer; the others are reached through the transport. */
static void check_layout(int one_node)
{
    CHECK(aclshmem_my_pe() == me && aclshmem_n_pes() == n, "my_pe %d n_pes %d", aclshmem_my_pe(),
          aclshmem_n_pes());
    void *p = sym_alloc(64);
    for (int q = 0; q < n; q++) {
        int same = one_node || q / ppn == me / ppn;
        CHECK(same == (aclshmem_ptr(p, q) != NULL), "aclshmem_ptr(p, %d) is %s: PE %d is %s node",
              q, same ? "NULL" : "not NULL", q, same ? "on my" : "on another");
    }
    aclshmem_free(p);
    /* The library's own account: UCX in use exactly when the job spans nodes. */
    aclshmemx_description_t d = ACLSHMEMX_DESCRIPTION_INITIALIZER;
    CHECK(aclshmemx_describe(&d, ACLSHMEMX_DESCRIBE_NO_LOAD) == ACLSHMEM_SUCCESS, "describe: %s",
          aclshmemx_get_last_error());
    uint32_t want = ACLSHMEMX_TRANSPORT_SHM | (one_node ? 0u : (uint32_t)ACLSHMEMX_TRANSPORT_UCX);
    CHECK(d.initialized && d.my_pe == me && d.n_pes == n && d.transports_in_use == want,
          "describe: initialized %d, PE %d of %d, transports in use 0x%x (expected 0x%x)", d.initialized,
          d.my_pe, d.n_pes, d.transports_in_use, want);
    CHECK(one_node || (d.ucx.status == ACLSHMEMX_PLUGIN_LOADED && d.ucx.name),
          "describe: the UCX plug-in's status is %d (%s)", (int)d.ucx.status, d.ucx.reason);
}

static const char *setting(int argc, char **argv, const char *key, const char *env)
{
    size_t len = strlen(key);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], key, len) == 0 && argv[i][len] == '=')
            return argv[i] + len + 1;
    return getenv(env);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    void (*fn)(void) = NULL;
    for (size_t i = 0; argc >= 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            fn = cases[i].fn, case_name = cases[i].name;
    const char *s_rank = setting(argc, argv, "rank", "MN_RANK");
    const char *s_n = setting(argc, argv, "n_pes", "MN_N_PES");
    const char *s_ppn = setting(argc, argv, "ppn", "MN_PPN");
    const char *addr = setting(argc, argv, "addr", "MN_ADDR");
    const char *s_port = setting(argc, argv, "port", "MN_PORT");
    const char *s_timeout = getenv("MN_TIMEOUT"), *tls = getenv("MN_TLS");
    const char *one_node = getenv("MN_ONE_NODE");
    if (!fn || !s_rank || !s_n || !addr || !s_port) {
        fprintf(stderr, "usage: %s CASE [rank=R] [n_pes=N] [ppn=K] [addr=A] [port=P] (or MN_RANK, "
                "MN_N_PES, MN_PPN, MN_ADDR, MN_PORT); %s --list names the cases\n", argv[0], argv[0]);
        return 2;
    }
    me = atoi(s_rank);
    n = atoi(s_n);
    ppn = s_ppn ? atoi(s_ppn) : 1;
    if (n < 2 || me < 0 || me >= n || ppn < 1 || n % ppn) {
        fprintf(stderr, "bad rank %d / n_pes %d / ppn %d\n", me, n, ppn);
        return 2;
    }
    nodes = n / ppn;
    peer = (me + ppn) % n;
    src = (me - ppn + n) % n;
    signal(SIGALRM, on_alarm);
    alarm(s_timeout ? (unsigned)atoi(s_timeout) : 150);

    if (tls && strcmp(tls, "0") == 0)
        aclshmemx_set_conf_store_tls(false, NULL, 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = me;
    attr.n_pes = n;
    attr.local_mem_size = HEAP_SIZE;
    attr.option_attr.shm_init_timeout = 60;
    attr.option_attr.shm_create_timeout = 60;
    attr.option_attr.control_operation_timeout = 60;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://%s:%s", addr, s_port);
    double t0 = now();
#ifdef MN_SHARE_DATA
    shmemi_init_options_t opts = {.share_data_segment = 1};
    int rc = shmemi_init_with_options(ACLSHMEMX_INIT_WITH_DEFAULT, &attr, &opts);
#else
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
#endif
    if (rc != ACLSHMEM_SUCCESS) {
        printf("FAIL PE %d [%s]: init (%s, %d PEs, %d per node) returned %d: %s\n", me, case_name,
               attr.ip_port, n, ppn, rc, aclshmemx_get_last_error());
        return 3;
    }
    printf("PE %d of %d (node %d of %d): init in %.2f s\n", me, n, me / ppn, nodes, now() - t0);
    check_layout(one_node && strcmp(one_node, "1") == 0);
    t0 = now();
    fn();
    if (fn == case_killed) { /* the job lost a PE: finalize must still return */
        double t1 = now();
        (void)aclshmem_finalize();
        CHECK(now() - t1 < 15.0, "finalize after the death took %.1f s", now() - t1);
    } else {
        aclshmem_barrier_all();
        CHECK(aclshmem_finalize() == ACLSHMEM_SUCCESS, "finalize failed");
    }
    check_leaks();
    if (failures)
        printf("FAIL PE %d [%s]: %d check(s) failed\n", me, case_name, failures);
    else
        printf("PASS PE %d [%s] in %.2f s\n", me, case_name, now() - t0);
    return failures ? 1 : 0;
}
