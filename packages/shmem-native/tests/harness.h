/*
 * harness.h - a small multi-PE test harness for libaclshmem.
 *
 * run_pes(n, fn, opts) forks n child processes (one per PE) in their own process group.
 * The child that is PE 0 makes a unique ID and hands its 136 bytes to the others over
 * pipes; every child builds its attributes with aclshmemx_set_attr_uniqueid_args, joins
 * with aclshmemx_init_attr, runs fn(my_pe, n_pes), finalizes and exits 0 when nothing
 * failed.  The parent waits for all of them under an overall timeout and kills the whole
 * group when it expires.
 *
 * The children can also talk to each other without the library (pipes): harness_send /
 * harness_recv, harness_sync (a barrier), harness_allgather and harness_share_uid, which
 * tests that control init themselves (opts.no_init) use.
 */
#ifndef ACLSHMEM_TEST_HARNESS_H
#define ACLSHMEM_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "aclshmem.h"

#define HARNESS_MAX_PES 64 /* the soak run of 64 PEs (issue #26) */
#define HARNESS_MSG_MAX 240          /* payload bytes of one harness message */
#define HARNESS_DEFAULT_HEAP (64ULL << 20)

/* A test body, run in every PE.  Returns 0 on success (EXPECT failures are counted too). */
typedef int (*test_fn)(int my_pe, int n_pes);

typedef struct harness_opts {
    uint64_t heap_size;       /* local_mem_size; 0 means HARNESS_DEFAULT_HEAP */
    int no_init;              /* the test calls init (and finalize) itself */
    int no_uid;               /* with no_init: do not make and share a unique ID first */
    int no_finalize;          /* the harness inits, the test finalizes (or not) */
    int tls;                  /* keep the control-plane TLS on (default: turned off first) */
    int timeout_s;            /* the whole run; 0 means 60 s */
    int expect_status;        /* the exit status every child must end with (default 0) */
    uint32_t init_timeout_s;  /* if set: shm_init / shm_create / control timeouts of attr */
} harness_opts;

typedef struct harness_case {
    const char *name;
    test_fn fn;
    harness_opts opts;
    int pes[4]; /* the PE counts to run with, 0-terminated (all zero: {2}) */
} harness_case;

/* Runs fn on n PEs; returns 0 when every child ended with opts->expect_status. */
int run_pes(int n, test_fn fn, const harness_opts *opts);
int run_pes_named(const char *name, int n, test_fn fn, const harness_opts *opts);

/* A main for a test program: runs every case (argv[1], if given, filters by substring). */
int harness_main(int argc, char **argv, const harness_case *cases, size_t n_cases);

/* ---- inside a child ------------------------------------------------------ */
extern int harness_my_pe;  /* this child's index (PE), -1 in the parent */
extern int harness_n_pes;  /* the number of children of this run */
extern int harness_failures;
extern const char *harness_case_name;

/* The unique ID the harness shared before fn ran (not valid with no_uid). */
const aclshmemx_uniqueid_t *harness_uid(void);
/* The attributes the harness used for init (valid when the harness did the init). */
const harness_opts *harness_current_opts(void);

/* Child-to-child messages, over pipes (no library involved).  type >= 100 for tests. */
int harness_send(int to, int type, const void *data, size_t len);
/* Receives the next message of that type (from any sender if from < 0) within timeout_ms
 * (< 0: the default of 60 s).  Returns the payload length or -1 on timeout. */
int harness_recv(int type, int from, void *data, size_t max, int timeout_ms);
/* A barrier over all children of the run. */
void harness_sync(void);
/* Drops CAP_SYS_PTRACE from every set of the calling PE.  A PE that is then not dumpable
 * (prctl PR_SET_DUMPABLE 0) keeps its /proc/<pid>/fd from its peers, which must fetch its
 * memory files over its hand-off socket; root passes the dumpable check anyway with
 * CAP_SYS_PTRACE, and the kernel also refuses a reader whose effective capabilities are not
 * a superset of the target's permitted ones, so every PE of such a case drops it. */
void harness_drop_ptrace_capability(void);
/* Everyone contributes len bytes (len * n_pes <= 4096); all[] gets them in PE order. */
void harness_allgather(const void *mine, size_t len, void *all);
/* PE 0 broadcasts len bytes (<= HARNESS_MSG_MAX). */
void harness_bcast(void *buf, size_t len);
/* PE 0 calls aclshmemx_get_uniqueid and sends the 136 bytes to every other PE.
 * Returns PE 0's get_uniqueid result on every PE. */
int harness_share_uid(aclshmemx_uniqueid_t *uid);

/* Fills attr for UNIQUEID init of my_pe/n_pes with the run's heap size and timeouts. */
int harness_make_attr(int my_pe, int n_pes, aclshmemx_uniqueid_t *uid, aclshmemx_init_attr_t *attr);
/* Shares a fresh unique ID and inits this PE with it. */
int harness_init(void);

/* Collective over the world of the current job: every PE puts a value into the next PE,
 * barriers, and checks what it got from the previous one.  Proves the job works. */
void harness_ring_check(int my_pe, int n_pes);

/* A TCP port on 127.0.0.1 that was free a moment ago. */
int harness_free_port(void);

double harness_now(void);
void harness_sleep_ms(int ms);

/* Remembers the current last error, so that a later call can be seen to set a new one. */
void harness_mark_error(void);
/* 1 when the last error is non-empty and differs from the one harness_mark_error saw. */
int harness_error_since_mark(void);

/* Case-insensitive substring test. */
int harness_contains(const char *hay, const char *needle);

void harness_report(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void harness_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void harness_abort(void);

/* ---- checks ---------------------------------------------------------------
 * EXPECT_* record a failure and go on; ASSERT_* record it and end this PE (exit 1).
 * Every failure prints file:line, the PE and the library's last error.
 */
#define HARNESS_CHECK_(ok, fatal, ...)                                                        \
    do {                                                                                       \
        if (!(ok)) {                                                                           \
            harness_report(__FILE__, __LINE__, __VA_ARGS__);                                   \
            if (fatal)                                                                         \
                harness_abort();                                                               \
        }                                                                                      \
    } while (0)

#define EXPECT(c) HARNESS_CHECK_((c), 0, "%s", #c)
#define ASSERT(c) HARNESS_CHECK_((c), 1, "%s", #c)

#define HARNESS_CMP_(a, op, b, fatal)                                                         \
    do {                                                                                       \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                  \
        HARNESS_CHECK_(va_ op vb_, fatal, "%s %s %s  (%lld vs %lld)", #a, #op, #b, va_, vb_);  \
    } while (0)

#define EXPECT_EQ(a, b) HARNESS_CMP_(a, ==, b, 0)
#define EXPECT_NE(a, b) HARNESS_CMP_(a, !=, b, 0)
#define EXPECT_LT(a, b) HARNESS_CMP_(a, <, b, 0)
#define EXPECT_LE(a, b) HARNESS_CMP_(a, <=, b, 0)
#define EXPECT_GT(a, b) HARNESS_CMP_(a, >, b, 0)
#define EXPECT_GE(a, b) HARNESS_CMP_(a, >=, b, 0)
#define ASSERT_EQ(a, b) HARNESS_CMP_(a, ==, b, 1)
#define ASSERT_NE(a, b) HARNESS_CMP_(a, !=, b, 1)
#define ASSERT_GE(a, b) HARNESS_CMP_(a, >=, b, 1)

#define EXPECT_NULL(p) HARNESS_CHECK_((p) == NULL, 0, "%s == NULL  (got %p)", #p, (void *)(p))
#define EXPECT_NOT_NULL(p) HARNESS_CHECK_((p) != NULL, 0, "%s != NULL", #p)
#define ASSERT_NOT_NULL(p) HARNESS_CHECK_((p) != NULL, 1, "%s != NULL", #p)

/* The last error is non-empty (and, after harness_mark_error, new). */
#define EXPECT_ERROR_SET()                                                                     \
    HARNESS_CHECK_(harness_error_since_mark(), 0, "a new last error was expected")
#define EXPECT_ERROR_CONTAINS(s)                                                               \
    HARNESS_CHECK_(harness_contains(aclshmemx_get_last_error(), (s)), 0,                      \
                   "last error should contain \"%s\"", (s))

/* call must fail now, with a last error that mentions text. */
#define EXPECT_REJECTED(call, text)                                                              \
    do {                                                                                         \
        harness_mark_error();                                                                    \
        call;                                                                                    \
        EXPECT_ERROR_SET();                                                                      \
        EXPECT_ERROR_CONTAINS(text);                                                             \
    } while (0)

#endif
