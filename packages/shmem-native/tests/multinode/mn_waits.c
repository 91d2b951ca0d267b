/*
 * mn_waits.c - the multi-node suite's case wait: every wait and test family (and
 * signal_wait_until), woken by a writer on another node.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aclshmem.h"
#include "mn_suite.h"

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
void case_wait(void)
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
