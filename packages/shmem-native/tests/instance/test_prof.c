/*
 * test_prof.c - cycle profiling on the PE named by SHMEM_CYCLE_PROF_PE: the library's own
 * frames (1000 put, 1001 get, 1002 put_signal, 1003 signal_op, 1004 wait, 1005 barrier,
 * 1006 quiet, 1007 alloc; block 0 on the host), user frames from kernels (one row per block)
 * and from the host, isolation between instances, aclshmemx_show_prof's table, bad input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

enum {
    F_PUT = 1000,
    F_GET = 1001,
    F_PUT_SIGNAL = 1002,
    F_SIGNAL_OP = 1003,
    F_WAIT = 1004,
    F_BARRIER = 1005,
    F_QUIET = 1006,
    F_ALLOC = 1007,
};

#define PROF_PE 1

/* Profiling is chosen at init from the environment (the harness clears it first). */
static int init_profiled(const char *value)
{
    setenv("SHMEM_CYCLE_PROF_PE", value, 1);
    return harness_init();
}

static aclshmem_prof_pe_t *profile(void)
{
    aclshmem_prof_pe_t *p = NULL;
    aclshmemx_get_prof(&p, false);
    return p;
}

static int64_t count(const aclshmem_prof_pe_t *p, int block, int frame)
{
    return p->block_prof[block].ccount[frame];
}

static int64_t cycles(const aclshmem_prof_pe_t *p, int block, int frame)
{
    return p->block_prof[block].cycles[frame];
}

/* Nothing recorded anywhere in the table. */
static int all_zero(const aclshmem_prof_pe_t *p)
{
    for (int b = 0; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++)
        for (int f = 0; f < ACLSHMEM_CYCLE_PROF_FRAME_CNT; f++)
            if (p->block_prof[b].ccount[f] || p->block_prof[b].cycles[f])
                return 0;
    return 1;
}

/* ---- the library's frames ----------------------------------------------------------- */

static int t_library_frames(int me, int n)
{
    ASSERT_EQ(init_profiled("1"), ACLSHMEM_SUCCESS);
    int peer = (me + 1) % n;
    aclshmem_prof_pe_t *p = profile();
    ASSERT_NOT_NULL(p);
    /* Counts before this test's operations (init may use some frames itself). */
    aclshmem_prof_block_t before = p->block_prof[0];

    int64_t *buf = aclshmem_calloc(16, sizeof(int64_t)); /* alloc 1 */
    ASSERT_NOT_NULL(buf);
    void *extra = aclshmem_malloc(4096);                    /* alloc 2 */
    aclshmem_barrier_all();                                  /* barrier 1 */
    for (int i = 0; i < 5; i++) {
        int64_t v = 100 * me + i;
        aclshmem_putmem(&buf[i], &v, sizeof v, peer);      /* 5 puts */
    }
    aclshmem_barrier_all();                                  /* barrier 2 */
    int64_t got[3];
    for (int i = 0; i < 3; i++)
        aclshmem_getmem(&got[i], &buf[i], sizeof got[i], peer); /* 3 gets */
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(got[i], 100 * me + i);
    aclshmem_free(extra); /* alloc frame 3 (free) */
    aclshmem_barrier_all(); /* barrier 3 */

    if (me == PROF_PE) {
        aclshmem_prof_pe_t *q = profile();
        EXPECT(q == p); /* the same table, live */
        EXPECT_EQ(p->pe_id, PROF_PE);
        const aclshmem_prof_block_t *row = &p->block_prof[0];
        EXPECT_EQ(row->ccount[F_PUT] - before.ccount[F_PUT], 5);
        EXPECT_EQ(row->ccount[F_GET] - before.ccount[F_GET], 3);
        EXPECT_GE(row->ccount[F_BARRIER] - before.ccount[F_BARRIER], 3);
        EXPECT_GE(row->ccount[F_ALLOC] - before.ccount[F_ALLOC], 2);
        const int frames[] = { F_PUT, F_GET, F_BARRIER, F_ALLOC };
        for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
            int f = frames[i];
            HARNESS_CHECK_(row->cycles[f] > before.cycles[f], 0, "frame %d: no cycles (%lld)", f,
                           (long long)row->cycles[f]);
        }
        /* The host is block 0: the other rows stay empty, and so do user frames. */
        for (int b = 1; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++)
            for (int f = 0; f < ACLSHMEM_CYCLE_PROF_FRAME_CNT; f++)
                if (count(p, b, f)) {
                    harness_report(__FILE__, __LINE__, "block %d frame %d has a count on the host", b, f);
                    b = ACLSHMEM_CYCLE_PROF_MAX_BLOCK;
                    break;
                }
        for (int f = 0; f < 1000; f++)
            if (count(p, 0, f)) {
                harness_report(__FILE__, __LINE__, "user frame %d counted without a user", f);
                break;
            }
    } else {
        EXPECT_EQ(p->pe_id, -1);
        EXPECT(all_zero(p));
    }
    aclshmem_barrier_all();
    aclshmem_free(buf);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* Every library frame has its operations (put_signal, signal_op, wait, quiet too; strided
 * and typed put/get are put/get). */
static int t_all_frames(int me, int n)
{
    ASSERT_EQ(init_profiled("1"), ACLSHMEM_SUCCESS);
    int peer = (me + 1) % n;
    aclshmem_prof_pe_t *p = profile();
    ASSERT_NOT_NULL(p);
    int64_t *data = aclshmem_calloc(32, sizeof(int64_t));
    int32_t *sig = aclshmem_calloc(4, sizeof(int32_t));
    ASSERT_NOT_NULL(data);
    ASSERT_NOT_NULL(sig);
    aclshmem_barrier_all();
    aclshmem_prof_block_t before = p->block_prof[0];

    int64_t src[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    aclshmem_int64_put(data, src, 2, peer);                  /* typed put */
    aclshmem_int64_iput(&data[8], src, 2, 1, 4, peer);       /* strided put */
    aclshmem_int64_p(&data[20], 42, peer);                   /* single put */
    int64_t back[8];
    aclshmem_int64_get(back, data, 2, peer);                 /* typed get */
    aclshmem_int64_iget(back, &data[8], 1, 2, 2, peer);      /* strided get */
    (void)aclshmem_int64_g(&data[20], peer);                  /* single get */
    aclshmemx_putmem_signal(&data[24], src, sizeof(int64_t), &sig[0], 1, ACLSHMEM_SIGNAL_SET, peer);
    aclshmemx_signal_op_on_stream(&sig[1], 5, ACLSHMEM_SIGNAL_ADD, peer, NULL);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_signal_wait_until(&sig[0], ACLSHMEM_CMP_EQ, 1), 1);
    aclshmem_int32_wait_until(&sig[1], ACLSHMEM_CMP_GE, 5);
    aclshmem_quiet();
    aclshmem_barrier_all();

    if (me == PROF_PE) {
        const aclshmem_prof_block_t *row = &p->block_prof[0];
        static const struct {
            int frame, min;
            const char *what;
        } expect[] = {
            { F_PUT, 3, "typed, strided and single puts" },
            { F_GET, 3, "typed, strided and single gets" },
            { F_PUT_SIGNAL, 1, "aclshmemx_putmem_signal" },
            { F_SIGNAL_OP, 1, "aclshmemx_signal_op_on_stream" },
            { F_WAIT, 2, "aclshmem_signal_wait_until and aclshmem_int32_wait_until" },
            { F_QUIET, 1, "aclshmem_quiet" },
        };
        for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
            int f = expect[i].frame;
            int64_t got = row->ccount[f] - before.ccount[f];
            HARNESS_CHECK_(got >= expect[i].min, 0, "frame %d counted %lld calls of %s, expected at least %d", f,
                           (long long)got, expect[i].what, expect[i].min);
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(sig);
    aclshmem_free(data);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- user frames: kernels (a row per block) and the host (block 0) ------------------- */

typedef struct {
    int64_t *buf;
    int peer;
} kernel_arg_t;

static void user_kernel(uint32_t block, uint32_t block_dim, void *arg)
{
    (void)block_dim;
    kernel_arg_t *a = arg;
    aclshmemx_prof_start(10);
    int64_t v = 1000 + block;
    aclshmem_putmem(&a->buf[block], &v, sizeof v, a->peer);
    for (volatile int i = 0; i < 10000; i++) {
    }
    aclshmemx_prof_end(10);
    aclshmemx_prof_start(11 + block % 2);
    aclshmemx_prof_end(11 + block % 2);
}

/* More blocks than the table has rows: the extra ones are not recorded, nothing breaks. */
static void wide_kernel(uint32_t block, uint32_t block_dim, void *arg)
{
    (void)block;
    (void)block_dim;
    (void)arg;
    aclshmemx_prof_start(20);
    aclshmemx_prof_end(20);
}

static int t_user_frames(int me, int n)
{
    ASSERT_EQ(init_profiled("1"), ACLSHMEM_SUCCESS);
    int peer = (me + 1) % n;
    int64_t *buf = aclshmem_calloc(64, sizeof(int64_t));
    ASSERT_NOT_NULL(buf);
    aclshmem_prof_pe_t *p = profile();
    ASSERT_NOT_NULL(p);
    aclshmem_prof_block_t row0 = p->block_prof[0];

    aclrtStream s = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&s), ACLSHMEM_SUCCESS);
    kernel_arg_t arg = { buf, peer };
    const uint32_t blocks = 4;
    EXPECT_EQ(aclshmemx_kernel_launch(s, user_kernel, blocks, &arg), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_kernel_launch(s, wide_kernel, 70, NULL), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_stream_destroy(s), ACLSHMEM_SUCCESS);

    /* A user frame timed on the host goes to block 0. */
    aclshmemx_prof_start(30);
    usleep(1000);
    aclshmemx_prof_end(30);
    /* An end without a start records nothing. */
    aclshmemx_prof_end(31);
    /* Library frames are not user frames. */
    harness_mark_error();
    aclshmemx_prof_start(1000);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmemx_prof_end(1000);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmemx_prof_start(UINT32_MAX);
    EXPECT_ERROR_SET();
    aclshmem_barrier_all();

    for (uint32_t b = 0; b < blocks; b++)
        EXPECT_EQ(buf[b], 1000 + (int64_t)b);
    if (me == PROF_PE) {
        for (uint32_t b = 0; b < blocks; b++) {
            int64_t base = b == 0 ? row0.ccount[10] : 0;
            EXPECT_EQ(count(p, (int)b, 10) - base, 1);
            EXPECT_GT(cycles(p, (int)b, 10), 0);
            EXPECT_EQ(count(p, (int)b, 11 + (int)b % 2), 1);
            EXPECT_EQ(count(p, (int)b, 12 - (int)b % 2), 0);
            /* The put inside the kernel is in that block's row. */
            int64_t put_base = b == 0 ? row0.ccount[F_PUT] : 0;
            EXPECT_EQ(count(p, (int)b, F_PUT) - put_base, 1);
        }
        for (int b = (int)blocks; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++) {
            EXPECT_EQ(count(p, b, 10), 0);
            EXPECT_EQ(count(p, b, F_PUT), 0);
        }
        for (int b = 0; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++)
            EXPECT_EQ(count(p, b, 20), 1);
        EXPECT_EQ(count(p, 0, 30), 1);
        EXPECT_GT(cycles(p, 0, 30), 0);
        EXPECT_EQ(count(p, 0, 31), 0);
        EXPECT_EQ(count(p, 0, 1000 - 1), 0);
    } else {
        EXPECT_EQ(p->pe_id, -1);
        EXPECT(all_zero(p));
    }
    aclshmem_barrier_all();
    aclshmem_free(buf);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- instances are isolated -------------------------------------------------------------- */

static int t_instances(int me, int n)
{
    ASSERT_EQ(init_profiled("1"), ACLSHMEM_SUCCESS);
    int peer = (me + 1) % n;
    aclshmemx_uniqueid_t uid3;
    ASSERT_EQ(harness_share_uid(&uid3), ACLSHMEM_SUCCESS);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(harness_make_attr(me, n, &uid3, &attr), ACLSHMEM_SUCCESS);
    attr.instance_id = 3;
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_SUCCESS);

    /* Instance 0: four puts. */
    int64_t *b0 = aclshmem_calloc(8, sizeof(int64_t));
    ASSERT_NOT_NULL(b0);
    aclshmem_prof_pe_t *p0 = profile();
    ASSERT_NOT_NULL(p0);
    int64_t puts0 = count(p0, 0, F_PUT);
    for (int i = 0; i < 4; i++)
        aclshmem_putmem(&b0[i], &i, sizeof(int), peer);
    aclshmem_barrier_all();

    /* Instance 3 has its own table and saw none of them. */
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    aclshmem_prof_pe_t *p3 = profile();
    ASSERT_NOT_NULL(p3);
    if (me == PROF_PE) {
        EXPECT(p3 != p0);
        EXPECT_EQ(p3->pe_id, PROF_PE);
        EXPECT_EQ(count(p3, 0, F_PUT), 0);
        EXPECT_EQ(count(p0, 0, F_PUT) - puts0, 4);
    } else {
        EXPECT_EQ(p3->pe_id, -1);
    }
    int64_t *b3 = aclshmem_calloc(8, sizeof(int64_t));
    ASSERT_NOT_NULL(b3);
    for (int i = 0; i < 2; i++)
        aclshmem_putmem(&b3[i], &i, sizeof(int), peer);
    aclshmem_barrier_all();
    if (me == PROF_PE) {
        EXPECT_EQ(count(p3, 0, F_PUT), 2);
        EXPECT_EQ(count(p0, 0, F_PUT) - puts0, 4); /* unchanged by instance 3 */
        EXPECT_GE(count(p3, 0, F_ALLOC), 1);
    }
    aclshmem_free(b3);
    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_SUCCESS);
    /* Back on instance 0: its own table again. */
    EXPECT(profile() == p0);
    aclshmem_free(b0);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- the printed table --------------------------------------------------------------------- */

/* Runs fn with stdout going to a temporary file; returns what it printed (malloc'd). */
static char *capture_stdout(void (*fn)(void))
{
    fflush(stdout);
    char path[] = "/tmp/aclshmem-prof-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path);
    int saved = dup(1);
    dup2(fd, 1);
    fn();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    if (text && len > 0 && pread(fd, text, (size_t)len, 0) != len) {
        free(text);
        text = NULL;
    }
    close(fd);
    return text;
}

static void show(void)
{
    aclshmemx_show_prof();
}

static void get_verbose(void)
{
    aclshmem_prof_pe_t *p = NULL;
    aclshmemx_get_prof(&p, true);
}

static int t_show(int me, int n)
{
    ASSERT_EQ(init_profiled("1"), ACLSHMEM_SUCCESS);
    int peer = (me + 1) % n;
    int64_t *buf = aclshmem_calloc(4, sizeof(int64_t));
    ASSERT_NOT_NULL(buf);
    int64_t v = 9;
    aclshmem_putmem(buf, &v, sizeof v, peer);
    aclshmem_getmem(&v, buf, sizeof v, peer);
    aclshmemx_prof_start(3);
    aclshmemx_prof_end(3);
    aclshmem_barrier_all();

    char *text = capture_stdout(show);
    char *again = capture_stdout(get_verbose);
    ASSERT_NOT_NULL(text);
    ASSERT_NOT_NULL(again);
    if (me == PROF_PE) {
        const char *want[] = { "PE 1", "block", "frame", "count", "cycles", "put", "get", "barrier", "alloc",
                               "user" };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            HARNESS_CHECK_(harness_contains(text, want[i]), 0, "show_prof's table lacks \"%s\":\n%s", want[i],
                           text);
        /* One line per recorded (block, frame): frame 1000 appears on a line with "put". */
        int found = 0;
        for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            int b, f;
            char name[32];
            long long c;
            if (sscanf(line, "%d %d %31s %lld", &b, &f, name, &c) == 4 && b == 0 && f == F_PUT &&
                strcmp(name, "put") == 0 && c >= 1)
                found = 1;
        }
        HARNESS_CHECK_(found, 0, "no row \"0 1000 put <count>\" in:\n%s", text);
        EXPECT(strcmp(text, again) == 0 || harness_contains(again, "PE 1"));
    } else {
        HARNESS_CHECK_(harness_contains(text, "not profiled"), 0, "PE %d printed:\n%s", me, text);
        EXPECT(harness_contains(again, "not profiled"));
    }
    free(text);
    free(again);
    aclshmem_barrier_all();
    aclshmem_free(buf);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- bad input and unusual settings ---------------------------------------------------------- */

static int t_not_inited(int me, int n)
{
    (void)me;
    (void)n;
    aclshmem_prof_pe_t *p = NULL;
    harness_mark_error();
    aclshmemx_get_prof(&p, false);
    EXPECT_NULL(p);
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS("not initialized");
    harness_mark_error();
    aclshmemx_show_prof();
    EXPECT_ERROR_SET();
    /* User frames outside a job are harmless. */
    aclshmemx_prof_start(1);
    aclshmemx_prof_end(1);
    aclshmemx_get_prof(NULL, false);
    return 0;
}

/* SHMEM_CYCLE_PROF_PE that names no PE of the job: nobody profiles, init works. */
static int t_unprofiled(int me, int n)
{
    static const char *const values[] = { "", "abc", "-1", "1x", "99" };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        ASSERT_EQ(init_profiled(values[i]), ACLSHMEM_SUCCESS);
        harness_ring_check(me, n);
        aclshmem_prof_pe_t *p = profile();
        ASSERT_NOT_NULL(p);
        HARNESS_CHECK_(p->pe_id == -1, 0, "SHMEM_CYCLE_PROF_PE=\"%s\": pe_id %d", values[i], p->pe_id);
        EXPECT(all_zero(p));
        aclshmemx_get_prof(NULL, false); /* a NULL output pointer is allowed */
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    }
    /* PE 0 can be the profiled one too. */
    ASSERT_EQ(init_profiled("0"), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    aclshmem_prof_pe_t *p = profile();
    ASSERT_NOT_NULL(p);
    EXPECT_EQ(p->pe_id, me == 0 ? 0 : -1);
    if (me == 0)
        EXPECT_GE(count(p, 0, F_PUT), 1);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

static const harness_case cases[] = {
    { "library_frames", t_library_frames, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2, 3 } },
    { "all_frames", t_all_frames, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "user_frames", t_user_frames, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "instances", t_instances, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "show", t_show, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "not_inited", t_not_inited, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 1 } },
    { "unprofiled", t_unprofiled, { .no_init = 1, .no_uid = 1, .timeout_s = 40 }, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
