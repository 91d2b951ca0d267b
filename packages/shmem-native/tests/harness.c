/* harness.c - see harness.h. */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Built with AddressSanitizer (gcc: __SANITIZE_ADDRESS__, clang: __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HARNESS_ASAN 1
#endif
#endif
#ifdef HARNESS_ASAN
#include <sanitizer/lsan_interface.h>
#endif

int harness_my_pe = -1;
int harness_n_pes = 0;
int harness_failures = 0;
const char *harness_case_name = "";

enum { MSG_UID = 1, MSG_SYNC = 2, MSG_RELEASE = 3, MSG_GATHER = 4, MSG_GATHER_ALL = 5, MSG_BCAST = 6 };

typedef struct {
    int32_t type;
    int32_t from;
    uint32_t len;
    int32_t arg;
    char data[HARNESS_MSG_MAX];
} hmsg_t;

_Static_assert(sizeof(hmsg_t) == 256, "one harness message is 256 bytes (atomic in a pipe)");

static int g_inbox[HARNESS_MAX_PES][2];
static aclshmemx_uniqueid_t g_uid;
static harness_opts g_opts;
static char g_mark[512];

#define BACKLOG_MAX 512
static hmsg_t g_backlog[BACKLOG_MAX];
static int g_backlog_n;

/* ---- time ------------------------------------------------------------------ */
double harness_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void harness_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- reporting ---------------------------------------------------------------- */
void harness_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "  [%s PE %d/%d] %s\n", harness_case_name, harness_my_pe, harness_n_pes, buf);
    fflush(stderr);
}

void harness_report(const char *file, int line, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *le = aclshmemx_get_last_error();
    fprintf(stderr, "  FAIL %s:%d [%s PE %d/%d]: %s | last error: \"%s\"\n", file, line,
            harness_case_name, harness_my_pe, harness_n_pes, buf, le ? le : "(null)");
    fflush(stderr);
    harness_failures++;
}

_Noreturn void harness_abort(void)
{
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

int harness_contains(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return 0;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

void harness_mark_error(void)
{
    /* A call that is sure to fail, so the mark differs from whatever comes next. */
    (void)aclshmemx_set_log_level(-999);
    const char *le = aclshmemx_get_last_error();
    snprintf(g_mark, sizeof g_mark, "%s", le ? le : "");
}

int harness_error_since_mark(void)
{
    const char *le = aclshmemx_get_last_error();
    return le && le[0] && strcmp(le, g_mark) != 0;
}

/* ---- messages between children -------------------------------------------------- */
/* Writes one message to a child's inbox.  A child that is gone (its inbox closed) must not
 * kill the writer with SIGPIPE: that signal is held back and dropped here, so that a
 * SIGPIPE raised inside the library would still show. */
static int write_msg(int to, const hmsg_t *m)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    const char *p = (const char *)m;
    size_t left = sizeof *m;
    int rc = 0;
    while (left) {
        ssize_t w = write(g_inbox[to][1], p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (rc != 0 && errno == EPIPE) {
        struct timespec zero = { 0, 0 };
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE))
            sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int harness_send(int to, int type, const void *data, size_t len)
{
    if (to < 0 || to >= harness_n_pes || len > HARNESS_MSG_MAX) {
        HARNESS_CHECK_(0, 1, "harness_send: bad destination %d or length %zu", to, len);
        return -1;
    }
    hmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.from = harness_my_pe;
    m.len = (uint32_t)len;
    if (len)
        memcpy(m.data, data, len);
    return write_msg(to, &m);
}

static int read_msg(hmsg_t *m, int timeout_ms)
{
    int fd = g_inbox[harness_my_pe][0];
    char *p = (char *)m;
    size_t got = 0;
    double deadline = harness_now() + timeout_ms / 1000.0;
    while (got < sizeof *m) {
        int left_ms = (int)((deadline - harness_now()) * 1000.0);
        if (left_ms < 0)
            left_ms = 0;
        struct pollfd pfd = { fd, POLLIN, 0 };
        int r = poll(&pfd, 1, got ? 1000 : left_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(fd, p + got, sizeof *m - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

int harness_recv(int type, int from, void *data, size_t max, int timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 60000;
    for (int i = 0; i < g_backlog_n; i++) {
        hmsg_t *m = &g_backlog[i];
        if (m->type == type && (from < 0 || m->from == from)) {
            size_t n = m->len < max ? m->len : max;
            if (data && n)
                memcpy(data, m->data, n);
            int len = (int)m->len;
            memmove(&g_backlog[i], &g_backlog[i + 1], (size_t)(g_backlog_n - i - 1) * sizeof *m);
            g_backlog_n--;
            return len;
        }
    }
    double deadline = harness_now() + timeout_ms / 1000.0;
    for (;;) {
        int left_ms = (int)((deadline - harness_now()) * 1000.0);
        if (left_ms < 0)
            return -1;
        hmsg_t m;
        if (read_msg(&m, left_ms) != 0)
            return -1;
        if (m.type == type && (from < 0 || m.from == from)) {
            size_t n = m.len < max ? m.len : max;
            if (data && n)
                memcpy(data, m.data, n);
            return (int)m.len;
        }
        if (g_backlog_n < BACKLOG_MAX)
            g_backlog[g_backlog_n++] = m;
    }
}

void harness_sync(void)
{
    if (harness_my_pe == 0) {
        for (int i = 1; i < harness_n_pes; i++)
            if (harness_recv(MSG_SYNC, -1, NULL, 0, -1) < 0)
                HARNESS_CHECK_(0, 1, "harness_sync: a PE did not arrive");
        for (int i = 1; i < harness_n_pes; i++)
            harness_send(i, MSG_RELEASE, NULL, 0);
    } else {
        harness_send(0, MSG_SYNC, NULL, 0);
        if (harness_recv(MSG_RELEASE, 0, NULL, 0, -1) < 0)
            HARNESS_CHECK_(0, 1, "harness_sync: PE 0 did not release");
    }
}

void harness_allgather(const void *mine, size_t len, void *all)
{
    char *out = (char *)all;
    if (len > HARNESS_MSG_MAX)
        HARNESS_CHECK_(0, 1, "harness_allgather: %zu bytes is too much", len);
    if (harness_my_pe == 0) {
        memcpy(out, mine, len);
        for (int i = 1; i < harness_n_pes; i++) {
            char buf[HARNESS_MSG_MAX];
            if (harness_recv(MSG_GATHER, i, buf, sizeof buf, -1) < 0)
                HARNESS_CHECK_(0, 1, "harness_allgather: PE %d did not contribute", i);
            memcpy(out + (size_t)i * len, buf, len);
        }
        for (int to = 1; to < harness_n_pes; to++)
            for (int i = 0; i < harness_n_pes; i++)
                harness_send(to, MSG_GATHER_ALL, out + (size_t)i * len, len);
    } else {
        harness_send(0, MSG_GATHER, mine, len);
        for (int i = 0; i < harness_n_pes; i++)
            if (harness_recv(MSG_GATHER_ALL, 0, out + (size_t)i * len, len, -1) < 0)
                HARNESS_CHECK_(0, 1, "harness_allgather: nothing from PE 0");
    }
}

void harness_bcast(void *buf, size_t len)
{
    if (harness_my_pe == 0) {
        for (int i = 1; i < harness_n_pes; i++)
            harness_send(i, MSG_BCAST, buf, len);
    } else if (harness_recv(MSG_BCAST, 0, buf, len, -1) < 0) {
        HARNESS_CHECK_(0, 1, "harness_bcast: nothing from PE 0");
    }
}

int harness_share_uid(aclshmemx_uniqueid_t *uid)
{
    if (harness_my_pe == 0) {
        aclshmemx_uniqueid_t tmp = ACLSHMEM_UNIQUEID_INITIALIZER;
        int rc = aclshmemx_get_uniqueid(&tmp);
        *uid = tmp;
        for (int i = 1; i < harness_n_pes; i++) {
            hmsg_t m;
            memset(&m, 0, sizeof m);
            m.type = MSG_UID;
            m.from = 0;
            m.len = sizeof tmp;
            m.arg = rc;
            memcpy(m.data, &tmp, sizeof tmp);
            if (write_msg(i, &m) != 0)
                HARNESS_CHECK_(0, 1, "harness_share_uid: write to PE %d failed", i);
        }
        return rc;
    }
    /* Receive by hand to get the status too. */
    for (;;) {
        hmsg_t m;
        int found = -1;
        for (int i = 0; i < g_backlog_n; i++)
            if (g_backlog[i].type == MSG_UID) {
                found = i;
                break;
            }
        if (found >= 0) {
            m = g_backlog[found];
            memmove(&g_backlog[found], &g_backlog[found + 1],
                    (size_t)(g_backlog_n - found - 1) * sizeof m);
            g_backlog_n--;
        } else {
            if (read_msg(&m, 60000) != 0)
                HARNESS_CHECK_(0, 1, "harness_share_uid: no unique ID from PE 0");
            if (m.type != MSG_UID) {
                if (g_backlog_n < BACKLOG_MAX)
                    g_backlog[g_backlog_n++] = m;
                continue;
            }
        }
        memcpy(uid, m.data, sizeof *uid);
        return m.arg;
    }
}

const aclshmemx_uniqueid_t *harness_uid(void)
{
    return &g_uid;
}

const harness_opts *harness_current_opts(void)
{
    return &g_opts;
}

int harness_make_attr(int my_pe, int n_pes, aclshmemx_uniqueid_t *uid, aclshmemx_init_attr_t *attr)
{
    uint64_t heap = g_opts.heap_size ? g_opts.heap_size : HARNESS_DEFAULT_HEAP;
    int rc = aclshmemx_set_attr_uniqueid_args(my_pe, n_pes, (int64_t)heap, uid, attr);
    if (rc != 0)
        return rc;
    if (g_opts.init_timeout_s) {
        attr->option_attr.shm_init_timeout = g_opts.init_timeout_s;
        attr->option_attr.shm_create_timeout = g_opts.init_timeout_s;
        attr->option_attr.control_operation_timeout = g_opts.init_timeout_s;
    }
    return 0;
}

int harness_init(void)
{
    int rc = harness_share_uid(&g_uid);
    if (rc != 0) {
        harness_log("aclshmemx_get_uniqueid failed on PE 0: %d", rc);
        return rc;
    }
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    rc = harness_make_attr(harness_my_pe, harness_n_pes, &g_uid, &attr);
    if (rc != 0) {
        harness_log("aclshmemx_set_attr_uniqueid_args failed: %d", rc);
        return rc;
    }
    rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0)
        harness_log("aclshmemx_init_attr failed: %d (%s)", rc, aclshmemx_get_last_error());
    return rc;
}

void harness_ring_check(int me, int n)
{
    int32_t *buf = aclshmem_malloc(sizeof(int32_t) * 2);
    ASSERT_NOT_NULL(buf);
    buf[0] = -1;
    buf[1] = -1;
    aclshmem_barrier_all();
    int32_t v = 1000 + me;
    aclshmem_putmem(&buf[0], &v, sizeof v, (me + 1) % n);
    aclshmem_barrier_all();
    EXPECT_EQ(buf[0], 1000 + (me + n - 1) % n);
    aclshmem_free(buf);
}

int harness_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    socklen_t sl = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* A PE ends with _exit, which skips LeakSanitizer's exit-time check: without this, memory
 * the library leaks in a PE would never be reported.  Runs after finalize, so whatever
 * finalize forgot to free shows up (a no-op without ASan or with detect_leaks=0). */
static void check_leaks(void)
{
#ifdef HARNESS_ASAN
    if (__lsan_do_recoverable_leak_check() != 0)
        harness_report(__FILE__, __LINE__, "LeakSanitizer found leaks (its report is above)");
#endif
}

void harness_drop_ptrace_capability(void)
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &head, data) != 0)
        return;
    uint32_t bit = 1u << (CAP_SYS_PTRACE % 32);
    data[CAP_SYS_PTRACE / 32].effective &= ~bit;
    data[CAP_SYS_PTRACE / 32].permitted &= ~bit;
    data[CAP_SYS_PTRACE / 32].inheritable &= ~bit;
    if (syscall(SYS_capset, &head, data) != 0)
        harness_log("cannot drop CAP_SYS_PTRACE: the hand-off cases may not see the socket used");
}

/* ---- the parent side -------------------------------------------------------------- */
static _Noreturn void child_main(int idx, int n, test_fn fn)
{
    harness_my_pe = idx;
    harness_n_pes = n;
    harness_failures = 0;
    /* Die with the runner, whatever happens to it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    if (!g_opts.tls) {
        int rc = aclshmemx_set_conf_store_tls(false, NULL, 0);
        EXPECT_EQ(rc, 0);
    }
    if (!g_opts.no_init) {
        int rc = harness_init();
        if (rc != 0) {
            harness_report(__FILE__, __LINE__, "init failed: %d", rc);
            harness_abort();
        }
    } else if (!g_opts.no_uid) {
        int rc = harness_share_uid(&g_uid);
        if (rc != 0)
            harness_report(__FILE__, __LINE__, "aclshmemx_get_uniqueid failed: %d", rc);
    }
    int rc = fn(idx, n);
    if (rc != 0 && harness_failures == 0)
        harness_report(__FILE__, __LINE__, "the test body returned %d", rc);
    if (!g_opts.no_init && !g_opts.no_finalize) {
        int f = aclshmem_finalize();
        if (f != 0)
            harness_report(__FILE__, __LINE__, "aclshmem_finalize returned %d", f);
    }
    check_leaks();
    fflush(stdout);
    fflush(stderr);
    _exit(harness_failures ? 1 : 0);
}

int run_pes_named(const char *name, int n, test_fn fn, const harness_opts *opts)
{
    static const harness_opts none;
    g_opts = opts ? *opts : none;
    harness_case_name = name ? name : "";
    if (n < 1 || n > HARNESS_MAX_PES) {
        fprintf(stderr, "run_pes: bad PE count %d\n", n);
        return 1;
    }
    int timeout = g_opts.timeout_s > 0 ? g_opts.timeout_s : 60;

    for (int i = 0; i < n; i++) {
        if (pipe(g_inbox[i]) != 0) {
            perror("pipe");
            return 1;
        }
    }
    fflush(stdout);
    fflush(stderr);

    pid_t pids[HARNESS_MAX_PES];
    pid_t pgid = 0;
    double t0 = harness_now();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            if (pgid)
                kill(-pgid, SIGKILL);
            for (int j = 0; j < i; j++)
                waitpid(pids[j], NULL, 0);
            return 1;
        }
        if (pid == 0) {
            setpgid(0, pgid);
            /* Keep my inbox's read end and everybody's write ends. */
            for (int j = 0; j < n; j++)
                if (j != i)
                    close(g_inbox[j][0]);
            child_main(i, n, fn);
        }
        if (!pgid)
            pgid = pid;
        setpgid(pid, pgid);
        pids[i] = pid;
    }
    for (int i = 0; i < n; i++) {
        close(g_inbox[i][0]);
        close(g_inbox[i][1]);
    }

    int status[HARNESS_MAX_PES];
    int done[HARNESS_MAX_PES] = { 0 };
    int n_done = 0, failed = 0, timed_out = 0;
    double deadline = t0 + timeout;
    while (n_done < n) {
        for (int i = 0; i < n; i++) {
            if (done[i])
                continue;
            pid_t r = waitpid(pids[i], &status[i], WNOHANG);
            if (r == pids[i]) {
                done[i] = 1;
                n_done++;
                int ok = WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == g_opts.expect_status;
                if (!ok && !failed) {
                    failed = 1;
                    /* Give the others a moment to notice and report, then stop them. */
                    double grace = harness_now() + 10.0;
                    if (grace < deadline)
                        deadline = grace;
                }
            }
        }
        if (n_done == n)
            break;
        if (harness_now() > deadline) {
            if (!failed)
                timed_out = 1;
            kill(-pgid, SIGKILL);
            for (int i = 0; i < n; i++) {
                if (!done[i]) {
                    waitpid(pids[i], &status[i], 0);
                    done[i] = 2; /* killed by us */
                    n_done++;
                }
            }
            break;
        }
        harness_sleep_ms(10);
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (done[i] == 2) {
            fprintf(stderr, "  [%s] PE %d killed: %s\n", harness_case_name, i,
                    timed_out ? "overall timeout" : "another PE failed");
            bad = 1;
        } else if (WIFSIGNALED(status[i])) {
            fprintf(stderr, "  [%s] PE %d died from signal %d\n", harness_case_name, i,
                    WTERMSIG(status[i]));
            bad = 1;
        } else if (WIFEXITED(status[i]) && WEXITSTATUS(status[i]) != g_opts.expect_status) {
            fprintf(stderr, "  [%s] PE %d exited with %d (expected %d)\n", harness_case_name, i,
                    WEXITSTATUS(status[i]), g_opts.expect_status);
            bad = 1;
        }
    }
    if (timed_out)
        fprintf(stderr, "  [%s] TIMEOUT after %d s\n", harness_case_name, timeout);
    return bad;
}

int run_pes(int n, test_fn fn, const harness_opts *opts)
{
    return run_pes_named(harness_case_name, n, fn, opts);
}

int harness_main(int argc, char **argv, const harness_case *cases, size_t n_cases)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Hermetic runs: a fixed PE 0 address would make the parallel jobs collide, and a log
     * level from the caller's shell would change what the log tests see. */
    static const char *const unset[] = { "SHMEM_UID_SESSION_ID", "SHMEM_LOG_LEVEL",
                                         "SHMEM_LOG_TO_STDOUT", "SHMEM_INSTANCE_PORT_RANGE",
                                         "SHMEM_CYCLE_PROF_PE" };
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
        unsetenv(unset[i]);
    const char *filter = argc > 1 ? argv[1] : NULL;
    int n_run = 0, n_failed = 0;
    char failed_names[4096] = "";
    double t_all = harness_now();
    for (size_t c = 0; c < n_cases; c++) {
        const harness_case *tc = &cases[c];
        if (filter && !strstr(tc->name, filter))
            continue;
        static const int default_pes[] = { 2, 0 };
        const int *pes = tc->pes[0] ? tc->pes : default_pes;
        for (int k = 0; k < 4 && pes[k]; k++) {
            char label[128];
            snprintf(label, sizeof label, "%s/%dpe", tc->name, pes[k]);
            printf("[ RUN  ] %s\n", label);
            double t0 = harness_now();
            int rc = run_pes_named(label, pes[k], tc->fn, &tc->opts);
            double dt = harness_now() - t0;
            n_run++;
            if (rc) {
                n_failed++;
                printf("[ FAIL ] %s (%.2f s)\n", label, dt);
                size_t used = strlen(failed_names);
                snprintf(failed_names + used, sizeof failed_names - used, "  %s\n", label);
            } else {
                printf("[  OK  ] %s (%.2f s)\n", label, dt);
            }
        }
    }
    printf("%d run, %d passed, %d failed (%.1f s)\n", n_run, n_run - n_failed, n_failed,
           harness_now() - t_all);
    if (n_failed)
        printf("failed:\n%s", failed_names);
    if (n_run == 0 && filter)
        printf("no case matches \"%s\"\n", filter);
    return n_failed ? 1 : 0;
}
