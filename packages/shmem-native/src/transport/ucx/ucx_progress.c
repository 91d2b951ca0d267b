/* Moving the UCX workers on: the progress thread (the main worker's), and the waits of the
 * ops (any channel's; see ucx.h). */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "transport/ucx/ucx.h"

/* A wait polls this many times before it starts yielding the CPU ... */
#define SPIN_POLLS 64
/* ... yields until this much time went by (a round trip over TCP between two idle hosts
 * takes 20-40 us, and a yield returns at once when nobody else wants the CPU) when the
 * machine runs more PEs than it has CPUs; when it does not, a yield takes nobody's CPU, and
 * the wait yields for longer: a large get waits for each of its pieces in turn, and a waiter
 * that slept between them was woken late enough, on a virtual machine, to halve a 2x1
 * broadcast's speed (8 MiB between two namespaces: 5.3-6.3 ms against 2.9-3.0 ms) ... */
#define YIELD_NS 50000L
#define YIELD_NS_OWN_CPU 2000000L
/* ... and then sleeps until the worker has an event, at most this long at a time: when the
 * CPUs are shared, a yielding waiter runs again only after the others' time slices, so
 * each round trip would cost one; a sleeper is woken by the kernel when the data comes.
 * The timeout covers transports that complete without an event. */
#define SLEEP_MS 1
/* It checks the job's liveness every this many polls. */
#define LIVENESS_POLLS 256

/* ---- progress by the PE's own threads ------------------------------------------------------- */

/* Progresses the main worker if no other thread does (nonblocking); returns the events. */
static unsigned progress_main_once(ucx_state_t *st)
{
    if (pthread_mutex_trylock(&st->main.lock) != 0)
        return 0; /* another thread is progressing the worker right now */
    unsigned events = 0;
    while (ucp_worker_progress(st->main.worker))
        events++;
    pthread_mutex_unlock(&st->main.lock);
    return events;
}

/* Only the main worker: the others' peers send them nothing but answers, which the threads
 * waiting for them collect. */
void shmemi_ucx_progress(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    atomic_fetch_add_explicit(&st->polls, 1, memory_order_relaxed);
    if (progress_main_once(st))
        st->host->wake_local(inst); /* other threads of this PE may sleep on the doorbell */
}

int shmemi_ucx_fail(ucx_state_t *st, ucs_status_t status, const char *what)
{
    return st->host->fail(ACLSHMEM_INNER_ERROR, "PE %d: UCX %s failed: %s", st->inst->my_pe, what,
                          ucs_status_string(status));
}

int shmemi_ucx_op_failed(ucx_state_t *st, ucs_status_t status, const char *what, int pe)
{
    int alive = st->host->check_alive(st->inst); /* "PE n died" says more than UCX's status */
    if (alive != ACLSHMEM_SUCCESS)
        return alive;
    if (pe < 0)
        return st->host->fail(ACLSHMEM_INNER_ERROR, "%s of the PEs on other nodes failed in UCX: %s", what,
                              ucs_status_string(status));
    return st->host->fail(ACLSHMEM_INNER_ERROR, "%s to PE %d (on another node) failed in UCX: %s", what, pe,
                          ucs_status_string(status));
}

/* Sleeps until c's worker has an event (at most SLEEP_MS), unless done holds once the
 * worker is armed, or it has events already.  Arming and the look are one step under the
 * lock, so an event another thread collected before the arm is not waited for. */
static void sleep_on_worker(ucx_channel_t *c, shmemi_ucx_done_fn done, void *arg)
{
    pthread_mutex_lock(&c->lock);
    ucs_status_t armed = ucp_worker_arm(c->worker);
    int finished = done(c, arg);
    pthread_mutex_unlock(&c->lock);
    if (armed == UCS_OK && !finished) {
        struct pollfd fd = {.fd = c->efd, .events = POLLIN};
        (void)poll(&fd, 1, SLEEP_MS);
    }
}

static long elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

int shmemi_ucx_poll_until(ucx_channel_t *c, shmemi_ucx_done_fn done, void *arg)
{
    ucx_state_t *st = c->st;
    int is_main = c == &st->main; /* the progress thread parks while the main worker is polled */
    long yield_ns = st->inst->oversubscribed ? YIELD_NS : YIELD_NS_OWN_CPU;
    struct timespec start;
    for (unsigned polls = 1;; polls++) {
        if (is_main)
            atomic_fetch_add_explicit(&st->polls, 1, memory_order_relaxed);
        pthread_mutex_lock(&c->lock);
        unsigned events = ucp_worker_progress(c->worker);
        int finished = done(c, arg);
        pthread_mutex_unlock(&c->lock);
        if (events && is_main)
            st->host->wake_local(st->inst); /* handlers may have written our memory */
        if (finished)
            return ACLSHMEM_SUCCESS;
        if (polls % LIVENESS_POLLS == 0) {
            int alive = st->host->check_alive(st->inst);
            if (alive != ACLSHMEM_SUCCESS)
                return alive;
        }
        if (polls == SPIN_POLLS)
            clock_gettime(CLOCK_MONOTONIC, &start);
        else if (polls > SPIN_POLLS && (events || elapsed_ns(&start) < yield_ns))
            sched_yield();
        else if (polls > SPIN_POLLS)
            sleep_on_worker(c, done, arg);
    }
}

typedef struct {
    ucs_status_ptr_t req;
    ucs_status_t status;
} request_wait_t;

static int request_done(ucx_channel_t *c, void *arg)
{
    (void)c;
    request_wait_t *w = arg;
    w->status = ucp_request_check_status(w->req);
    return w->status != UCS_INPROGRESS;
}

int shmemi_ucx_wait(ucx_channel_t *c, ucs_status_ptr_t req, const char *what, int pe)
{
    if (req == NULL)
        return ACLSHMEM_SUCCESS;
    if (UCS_PTR_IS_ERR(req))
        return shmemi_ucx_op_failed(c->st, UCS_PTR_STATUS(req), what, pe);
    request_wait_t w = {.req = req, .status = UCS_INPROGRESS};
    int rc = shmemi_ucx_poll_until(c, request_done, &w);
    /* Also when the job failed: UCX releases the request once it completes (with an error,
     * as the peer is gone). */
    pthread_mutex_lock(&c->lock);
    ucp_request_free(req);
    pthread_mutex_unlock(&c->lock);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    return w.status == UCS_OK ? ACLSHMEM_SUCCESS : shmemi_ucx_op_failed(c->st, w.status, what, pe);
}

typedef struct {
    const int *state;
    int until;
} state_wait_t;

static int state_reached(ucx_channel_t *c, void *arg)
{
    (void)c;
    state_wait_t *w = arg;
    return __atomic_load_n(w->state, __ATOMIC_ACQUIRE) == w->until;
}

int shmemi_ucx_wait_state(ucx_channel_t *c, const int *state, int until)
{
    state_wait_t w = {state, until};
    return shmemi_ucx_poll_until(c, state_reached, &w);
}

/* ---- the progress thread -------------------------------------------------------------------- */

/* Progresses, then arms the worker's event fd: UCS_OK (armed, nothing pending) or
 * UCS_ERR_BUSY (more to do). */
static ucs_status_t progress_and_arm(ucx_state_t *st, unsigned *events)
{
    pthread_mutex_lock(&st->main.lock);
    while (ucp_worker_progress(st->main.worker))
        (*events)++;
    ucs_status_t status = ucp_worker_arm(st->main.worker);
    pthread_mutex_unlock(&st->main.lock);
    return status;
}

static void wake_thread(ucx_state_t *st)
{
    atomic_fetch_add(&st->park, 1);
    syscall(SYS_futex, &st->park, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void shmemi_ucx_before_sleep(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    atomic_store(&st->needed, 1);
    wake_thread(st);
}

/* Parks the progress thread for PARK_MS while the PE's own threads poll: 1 when it parked
 * (polls moved since *seen), 0 when the thread must progress.  A park that outlives the
 * polling (a waiter went back to user code) ends by its timeout. */
#define PARK_MS 1
static int park_while_polled(ucx_state_t *st, unsigned *seen)
{
    unsigned polls = atomic_load(&st->polls);
    if (atomic_exchange(&st->needed, 0) || polls == *seen) {
        *seen = polls;
        return 0;
    }
    *seen = polls;
    unsigned word = atomic_load(&st->park);
    struct timespec timeout = {0, PARK_MS * 1000000L};
    syscall(SYS_futex, &st->park, FUTEX_WAIT_PRIVATE, word, &timeout, NULL, 0);
    return 1;
}

static void *progress_main(void *arg)
{
    ucx_state_t *st = arg;
    unsigned seen = atomic_load(&st->polls);
    while (!atomic_load(&st->stopping)) {
        if (park_while_polled(st, &seen))
            continue;
        unsigned events = 0;
        ucs_status_t status = progress_and_arm(st, &events);
        if (events)
            st->host->wake_local(st->inst);
        if (status == UCS_ERR_BUSY)
            continue;
        /* Armed: the fd turns readable when the network brings something.  The timeout
         * only matters for transports that write without an event (RDMA): their writes
         * are seen by polling waiters at once and by sleeping ones within the futex's
         * own timeout. */
        struct pollfd fds[2] = {{.fd = st->main.efd, .events = POLLIN}, {.fd = st->stop_fd, .events = POLLIN}};
        (void)poll(fds, 2, status == UCS_OK ? 100 : 1);
    }
    return NULL;
}

int shmemi_ucx_start_thread(ucx_state_t *st)
{
    st->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (st->stop_fd < 0)
        return st->host->fail(ACLSHMEM_INNER_ERROR, "eventfd: %s", strerror(errno));
    int err = pthread_create(&st->thread, NULL, progress_main, st);
    if (err)
        return st->host->fail(ACLSHMEM_INNER_ERROR, "cannot start the UCX progress thread: %s", strerror(err));
    st->thread_started = 1;
    return ACLSHMEM_SUCCESS;
}

void shmemi_ucx_stop_thread(ucx_state_t *st)
{
    if (st->thread_started) {
        atomic_store(&st->stopping, 1);
        wake_thread(st);
        uint64_t one = 1;
        ssize_t wrote = write(st->stop_fd, &one, sizeof(one));
        (void)wrote;
        pthread_join(st->thread, NULL);
        st->thread_started = 0;
    }
    if (st->stop_fd >= 0)
        close(st->stop_fd);
    st->stop_fd = -1;
}
