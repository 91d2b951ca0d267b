/* oshrun: starting the PEs, copying their output, passing signals on, stopping the job.
 *
 * Every PE runs in a session of its own (so a Ctrl-C at the terminal reaches the launcher
 * only, which passes it on once), with its standard output and error on pipes that the
 * launcher copies, line by line, to its own, each line prefixed with "[PE i] "; it dies
 * with the launcher (PR_SET_PDEATHSIG).  One thread does it all with poll(): the PEs'
 * pipes and a self-pipe on which the signal handlers write the signals that arrived
 * (SIGCHLD, SIGINT, SIGTERM).  It never polls on a timer while the job runs: it wakes for
 * output, a signal, or a deadline (--timeout, the end of --kill-grace). */
#include "oshrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A PE's unfinished line is kept until its newline comes, up to this many bytes; a longer
 * line is passed on in pieces (the prefix before the first only), between which another
 * PE's lines may come. */
#define LINE_MAX_BYTES (1 << 20)
#define READ_BYTES 65536
/* Seconds to wait for the pipes' last output once every PE has ended (a PE's children
 * may hold them open). */
#define DRAIN_SECONDS 5.0
/* Signals passed on to the PEs. */
static const int forwarded_signals[] = {SIGINT, SIGTERM};

typedef struct {
    int fd;           /* the read end of the PE's pipe; -1 once it is closed */
    int sink;         /* 1 or 2: our standard output or error */
    const char *tag;  /* the PE's prefix */
    char *buf;        /* what was read and not passed on yet: an unfinished line */
    size_t len, cap;
    int mid_line;     /* the start of the current line (and its prefix) went out already */
} stream_t;

typedef struct {
    pid_t pid;        /* 0 once reaped */
    int report;       /* until its exec is confirmed: where the PE says why exec failed; else -1 */
    char tag[32];     /* "[PE i] ", or "" */
    stream_t out, err;
} pe_t;

typedef struct {
    const oshrun_job_t *job;
    pe_t *pes;
    int started;            /* PEs started so far */
    int failed_pe;          /* the first PE that failed, or -1 (also -1 for the timeout) */
    int failed_status;      /* its status; 0 while nothing failed */
    int received;           /* the first signal received, or 0 */
    double stopping_since;  /* when the job began to stop, or < 0 */
    int killed;             /* SIGKILL was sent */
    double deadline;        /* when --timeout stops the job, or < 0 */
    double drain_until;     /* once every PE has ended: the last moment to wait for output, or < 0 */
} job_state_t;

static int signal_pipe[2] = {-1, -1};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void oshrun_write_all(int fd, const char *text, size_t len)
{
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* a closed pipe (EPIPE: SIGPIPE is ignored) or a full disk: drop it */
        text += n;
        len -= (size_t)n;
    }
}

void oshrun_note(const oshrun_job_t *job, const char *fmt, ...)
{
    char text[1024];
    int used = snprintf(text, sizeof text, "%s: ", job->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + used, sizeof text - (size_t)used - 1, fmt, ap);
    va_end(ap);
    strcat(text, "\n");
    oshrun_write_all(2, text, strlen(text));
}

/* ---- signals ----------------------------------------------------------------------------- */

static void on_signal(int signum)
{
    int saved = errno;
    unsigned char byte = (unsigned char)signum;
    if (write(signal_pipe[1], &byte, 1) < 0) {
        /* The pipe is full: SIGCHLD is re-checked on every wake-up anyway. */
    }
    errno = saved;
}

static int catch_signals(void)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        sigaction(forwarded_signals[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a reader of our output that went away is no reason to die */
    return 0;
}

/* In a PE, before exec: the dispositions a program expects. */
static void reset_signals(void)
{
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        signal(forwarded_signals[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static void signal_running(job_state_t *st, int signum)
{
    for (int i = 0; i < st->started; i++)
        if (st->pes[i].pid > 0)
            kill(-st->pes[i].pid, signum); /* the PE's whole process group */
}

/* ---- output ------------------------------------------------------------------------------ */

/* Passes on the complete lines in s->buf, or all of it when flush_all (a PE's last words)
 * or when it is full.  The launcher is one thread, so a line written here in two writes
 * (prefix, text) is never split by another PE's. */
static void pass_lines(stream_t *s, int flush_all)
{
    size_t start = 0;
    while (start < s->len) {
        char *newline = memchr(s->buf + start, '\n', s->len - start);
        size_t end = newline ? (size_t)(newline - s->buf) + 1 : s->len;
        if (!newline && !flush_all && s->len < LINE_MAX_BYTES)
            break;
        if (!s->mid_line)
            oshrun_write_all(s->sink, s->tag, strlen(s->tag));
        oshrun_write_all(s->sink, s->buf + start, end - start);
        s->mid_line = !newline;
        if (!newline && flush_all) { /* the last line had no newline: give it one */
            oshrun_write_all(s->sink, "\n", 1);
            s->mid_line = 0;
        }
        start = end;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* Room for READ_BYTES more in s->buf (less once it holds LINE_MAX_BYTES); 0 or -1. */
static int make_room(stream_t *s)
{
    size_t want = s->len + READ_BYTES;
    if (want > LINE_MAX_BYTES)
        want = LINE_MAX_BYTES;
    if (want <= s->cap)
        return 0;
    char *bigger = realloc(s->buf, want);
    if (!bigger)
        return -1;
    s->buf = bigger;
    s->cap = want;
    return 0;
}

/* Reads what the PE wrote; at the end of the pipe, passes on the rest and closes it. */
static void read_stream(stream_t *s)
{
    if (make_room(s) != 0 && s->len == s->cap)
        pass_lines(s, 1); /* out of memory: pass on what there is, finished or not */
    ssize_t n = s->cap ? read(s->fd, s->buf + s->len, s->cap - s->len) : 0;
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        pass_lines(s, 1);
        close(s->fd);
        s->fd = -1;
        return;
    }
    s->len += (size_t)n;
    pass_lines(s, 0);
}

/* ---- starting PEs ------------------------------------------------------------------------ */

static void open_stream(stream_t *s, int fd, int sink, const char *tag)
{
    s->fd = fd;
    s->sink = sink;
    s->tag = tag;
    s->buf = NULL;
    s->len = s->cap = 0;
    s->mid_line = 0;
}

/* In the child of PE index, with --bind-to core: binds it to the (index mod k)-th of the k
 * CPUs the launcher may use (inherited); says so on its standard error and runs unbound
 * when the kernel refuses. */
static void bind_pe(const oshrun_job_t *job, int index)
{
    cpu_set_t allowed, mine;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) == 0)
        return;
    int wanted = index % CPU_COUNT(&allowed), cpu = 0;
    for (int seen = -1; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && ++seen == wanted)
            break;
    CPU_ZERO(&mine);
    CPU_SET(cpu, &mine);
    if (sched_setaffinity(0, sizeof mine, &mine) != 0)
        oshrun_note(job, "cannot bind PE %d to CPU %d (%s): it runs unbound", job->first_pe + index, cpu,
                    strerror(errno));
}

/* In the child: becomes PE index's process and runs the command; tells errno through
 * report (close-on-exec) when it cannot. */
static _Noreturn void become_pe(const oshrun_job_t *job, int index, pid_t launcher, int out, int err, int report)
{
    reset_signals();
    setsid();
    /* No PE outlives the launcher, even one killed by SIGKILL (which it cannot pass on). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher)
        _exit(127); /* it died before prctl */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (job->bind_core)
        bind_pe(job, index);
    execvp(job->command[0], job->command);
    int why = errno;
    if (write(report, &why, sizeof why) < 0) {
        /* the launcher sees the exit status then */
    }
    _exit(127);
}

/* Forks PE index (global number job->first_pe + index) without waiting for its exec, which
 * confirm_pe checks: the PEs start at once instead of one after another (with more PEs than
 * CPUs each exec waited for a CPU, and every later PE with it).  0, or -1 after saying why. */
static int spawn_pe(job_state_t *st, int index)
{
    const oshrun_job_t *job = st->job;
    pe_t *pe = &st->pes[index];
    int out[2], err[2], report[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
        oshrun_note(job, "cannot make the pipes of PE %d: %s", job->first_pe + index, strerror(errno));
        return -1;
    }
    pid_t launcher = getpid(), pid = fork();
    if (pid == 0)
        become_pe(job, index, launcher, out[1], err[1], report[1]);
    close(out[1]);
    close(err[1]);
    close(report[1]);
    if (pid < 0) {
        oshrun_note(job, "cannot start PE %d: %s: %s", job->first_pe + index, job->command[0], strerror(errno));
        close(out[0]);
        close(err[0]);
        close(report[0]);
        return -1;
    }
    pe->pid = pid;
    pe->report = report[0];
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    open_stream(&pe->out, out[0], 1, pe->tag);
    open_stream(&pe->err, err[0], 2, pe->tag);
    st->started = index + 1;
    return 0;
}

/* Waits until PE index has become the program: 0, or -1 after saying why its exec failed
 * (it is reaped then; the caller stops the others). */
static int confirm_pe(job_state_t *st, int index)
{
    pe_t *pe = &st->pes[index];
    int why = 0;
    ssize_t got = read(pe->report, &why, sizeof why); /* 0 bytes: exec worked */
    close(pe->report);
    pe->report = -1;
    if (got <= 0)
        return 0;
    oshrun_note(st->job, "cannot start PE %d: %s: %s", st->job->first_pe + index, st->job->command[0],
                strerror(why));
    waitpid(pe->pid, NULL, 0);
    pe->pid = 0;
    return -1;
}

/* The variables of PE index, set in our own environment just before its fork. */
static void set_pe_variables(const oshrun_job_t *job, int index, int torchrun_vars)
{
    char text[32];
    snprintf(text, sizeof text, "%d", job->first_pe + index);
    setenv("SHMEM_RUN_PE", text, 1);
    if (!torchrun_vars)
        return;
    setenv("RANK", text, 1);
    snprintf(text, sizeof text, "%d", index);
    setenv("LOCAL_RANK", text, 1);
    snprintf(text, sizeof text, "%d", job->total_pes);
    setenv("WORLD_SIZE", text, 1);
    snprintf(text, sizeof text, "%d", job->npes);
    setenv("LOCAL_WORLD_SIZE", text, 1);
}

/* PEs forked ahead of the oldest unconfirmed one: a bound on the report pipes open at once. */
#define SPAWN_AHEAD 32

static int start_all(job_state_t *st)
{
    const oshrun_job_t *job = st->job;
    int torchrun_vars = getenv("RANK") == NULL; /* as torchrun sets them, unless set already */
    int width = snprintf(NULL, 0, "%d", job->total_pes - 1);
    int confirmed = 0, rc = 0;
    for (int i = 0; rc == 0 && i < job->npes; i++) {
        pe_t *pe = &st->pes[i];
        pe->report = -1;
        pe->tag[0] = '\0';
        if (job->prefix)
            snprintf(pe->tag, sizeof pe->tag, "[PE %*d] ", width, job->first_pe + i);
        set_pe_variables(job, i, torchrun_vars);
        rc = spawn_pe(st, i);
        while (rc == 0 && i - confirmed >= SPAWN_AHEAD)
            rc = confirm_pe(st, confirmed++);
    }
    while (rc == 0 && confirmed < st->started)
        rc = confirm_pe(st, confirmed++);
    for (int i = confirmed; i < st->started; i++) { /* after a failure: the job stops, quietly */
        close(st->pes[i].report);
        st->pes[i].report = -1;
    }
    return rc;
}

/* ---- watching and stopping --------------------------------------------------------------- */

static int exit_status(int wait_status)
{
    return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
}

/* Reaps the PEs that ended; remembers the first failure.  Returns how many still run. */
static int reap(job_state_t *st)
{
    int running = 0;
    for (int i = 0; i < st->started; i++) {
        pe_t *pe = &st->pes[i];
        int status;
        if (pe->pid <= 0)
            continue;
        pid_t got = waitpid(pe->pid, &status, WNOHANG);
        if (got == 0 || (got < 0 && errno == EINTR)) {
            running++;
            continue;
        }
        pe->pid = 0;
        int code = got < 0 ? 1 : exit_status(status);
        if (code != 0 && st->failed_status == 0) {
            st->failed_pe = st->job->first_pe + i;
            st->failed_status = code;
        }
    }
    return running;
}

/* Begins to stop the job when a PE failed, a signal came or the time is up: SIGTERM to
 * every PE still running (a received signal was passed on already), SIGKILL after
 * --kill-grace seconds. */
static void stop_if_due(job_state_t *st, double now)
{
    const oshrun_job_t *job = st->job;
    if (st->stopping_since < 0) {
        int timed_out = st->deadline >= 0 && now >= st->deadline;
        if (st->failed_status == 0 && !st->received && !timed_out)
            return;
        if (st->failed_status == 0 && !st->received) {
            oshrun_note(job, "timeout after %g s, stopping the job", job->timeout);
            st->failed_pe = -1;
            st->failed_status = 124;
        } else if (st->failed_pe >= 0 && !st->received) {
            oshrun_note(job, "PE %d exited with status %d; stopping the other PEs", st->failed_pe,
                        st->failed_status);
        }
        st->stopping_since = now;
        if (!st->received)
            signal_running(st, SIGTERM);
    }
    if (!st->killed && now - st->stopping_since >= job->kill_grace) {
        signal_running(st, SIGKILL);
        st->killed = 1;
    }
}

/* Takes the signals that arrived off the self-pipe; passes SIGINT and SIGTERM on. */
static void take_signals(job_state_t *st)
{
    unsigned char byte;
    while (read(signal_pipe[0], &byte, 1) == 1) {
        if (byte == SIGCHLD)
            continue; /* reap() looks at every PE on each wake-up */
        if (!st->received)
            st->received = byte;
        signal_running(st, byte);
    }
}

/* The poll() timeout until the next deadline, in ms (-1: none). */
static int wait_ms(const job_state_t *st, double now)
{
    double next = -1;
    if (st->stopping_since < 0 && st->deadline >= 0)
        next = st->deadline;
    if (st->stopping_since >= 0 && !st->killed)
        next = st->stopping_since + st->job->kill_grace;
    if (st->drain_until >= 0 && (next < 0 || st->drain_until < next))
        next = st->drain_until;
    if (next < 0)
        return -1;
    double ms = (next - now) * 1000.0 + 1.0;
    return ms <= 0 ? 0 : ms > 3600e3 ? 3600000 : (int)ms;
}

/* One wake-up: waits for output, a signal or a deadline, and deals with what came. */
static void wait_and_serve(job_state_t *st, double now)
{
    struct pollfd fds[1 + 2 * st->started];
    stream_t *streams[2 * st->started];
    int n = 0;
    fds[n++] = (struct pollfd){.fd = signal_pipe[0], .events = POLLIN};
    for (int i = 0; i < st->started; i++) {
        stream_t *pair[2] = {&st->pes[i].out, &st->pes[i].err};
        for (int k = 0; k < 2; k++) {
            if (pair[k]->fd < 0)
                continue;
            streams[n - 1] = pair[k];
            fds[n++] = (struct pollfd){.fd = pair[k]->fd, .events = POLLIN};
        }
    }
    if (poll(fds, (nfds_t)n, wait_ms(st, now)) <= 0)
        return;
    if (fds[0].revents)
        take_signals(st);
    for (int k = 1; k < n; k++)
        if (fds[k].revents)
            read_stream(streams[k - 1]);
}

static int any_stream_open(const job_state_t *st)
{
    for (int i = 0; i < st->started; i++)
        if (st->pes[i].out.fd >= 0 || st->pes[i].err.fd >= 0)
            return 1;
    return 0;
}

/* Watches the started PEs until they have ended and their output is passed on. */
static void watch(job_state_t *st)
{
    for (;;) {
        double now = now_seconds();
        int running = reap(st);
        if (!running && st->drain_until < 0)
            st->drain_until = now + DRAIN_SECONDS;
        if (!running && (!any_stream_open(st) || now >= st->drain_until))
            return;
        if (running)
            stop_if_due(st, now);
        wait_and_serve(st, now);
    }
}

/* The job's exit status (see oshrun_run_pes). */
static int job_status(const job_state_t *st)
{
    if (st->failed_status)
        return st->failed_status;
    return st->received ? 128 + st->received : 0;
}

/* Whatever happened: no PE outlives the launcher, no pipe stays open. */
static void clean_up(job_state_t *st)
{
    for (int i = 0; i < st->started; i++) {
        pe_t *pe = &st->pes[i];
        if (pe->pid > 0) {
            kill(-pe->pid, SIGKILL);
            waitpid(pe->pid, NULL, 0);
        }
        stream_t *pair[2] = {&pe->out, &pe->err};
        for (int k = 0; k < 2; k++) {
            if (pair[k]->fd >= 0)
                close(pair[k]->fd);
            free(pair[k]->buf);
        }
    }
}

int oshrun_run_pes(const oshrun_job_t *job)
{
    job_state_t st = {.job = job, .failed_pe = -1, .stopping_since = -1, .deadline = -1, .drain_until = -1};
    st.pes = calloc((size_t)job->npes, sizeof *st.pes);
    if (!st.pes || catch_signals() != 0) {
        oshrun_note(job, "cannot set up the job: %s", strerror(errno));
        free(st.pes);
        return 1;
    }
    if (job->timeout >= 0)
        st.deadline = now_seconds() + job->timeout;
    int status = 1;
    if (start_all(&st) == 0) {
        watch(&st);
        status = job_status(&st);
    }
    clean_up(&st);
    free(st.pes);
    return status;
}
