#include "core/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc_stat.h"

/* Phases of a wait, by elapsed time.  Busy-polling answers fastest when the partner runs on
 * another core; yielding hands the CPU to a PE that needs it when PEs outnumber cores (a
 * yield returns at once when nobody else is runnable, so an idle machine still polls);
 * after that the waiter sleeps on its doorbell.  A wake-up starts the phases over, so a
 * stream of writes to a waiter that stays blocked wakes it once per round, not per write.
 *
 * The handshake between a writer and a waiter going to sleep (Dekker's):
 *   waiter: sleeping = 1; fence; look at the awaited word; sleep unless the doorbell moved
 *   writer: write the data; fence; if sleeping: sleeping = 0, bump the doorbell, FUTEX_WAKE
 * Both fences are sequentially consistent, so either the writer sees sleeping == 1 (and
 * wakes the waiter), or the waiter's look comes after the write (and sees it).  While no
 * waiter sleeps, a write costs the fence and a load of a line that stays shared.
 *
 * The writer's fence is most of what a small put costs (an 8-byte put took 14.6 ns, a third
 * of it in the fence), and writes are many where sleeps are few, so the waiter pays for both
 * when the kernel allows it: before its look it makes every CPU that runs a thread of a
 * registered process pass a full barrier (membarrier(2), MEMBARRIER_CMD_GLOBAL_EXPEDITED;
 * each PE's process registers once, see shmemi_wait_register_process), and a registered
 * writer's fence is then only the compiler's.
 * A writer's load of sleeping either comes after that CPU's barrier, which came after the
 * waiter's sleeping = 1 (it sees 1), or before it, and then so did its write, which the
 * barrier made visible before the waiter's look.  One barrier covers a waiter for as long as
 * its doorbell does not move: until then every writer either came before the barrier or sees
 * sleeping == 1 and rings.  A PE whose kernel refuses membarrier (seccomp, before Linux 4.16)
 * says so in its control segment, and writers fence for it as before. */
#define SPIN_NS 2000L      /* busy-poll for 2 us (after the untimed polls: about 5 us in all) */
#define YIELD_NS 20000L   /* then yield until 20 us */
/* With PEs on other nodes, a write arrives a network round trip after it was made (tens of
 * microseconds over TCP), and falling asleep then costs two more thread wake-ups (the
 * transport's thread, then this one): such waits keep yielding for longer. */
#define REMOTE_YIELD_NS 200000L
/* A waiter woken by a write that did not end its wait (a stream of puts to a PE waiting in a
 * barrier) polls twice as long before it sleeps again, up to this: the writes that follow
 * then find it awake and cost no FUTEX_WAKE each (measured: 2 MiB puts to a PE in a barrier
 * ran at 0.88x the speed of puts to a PE that never sleeps).  Only a ring doubles it, so a
 * wait that nothing disturbs keeps the short poll of its 1 ms rechecks. */
#define MAX_YIELD_NS 1600000L
#define SLEEP_MS 1         /* then sleep; a wake-up missed by a plain store costs at most this */

/* SHMEM_SLEEP_RECHECK_MS overrides SLEEP_MS; 0 sleeps until a wake-up, with no timeout
 * (what the wake-up tests use, so that a missing wake-up hangs instead of costing 1 ms). */
static long recheck_ms(void)
{
    static _Atomic long cached = -1;
    long ms = atomic_load_explicit(&cached, memory_order_relaxed);
    if (ms < 0) {
        const char *text = getenv("SHMEM_SLEEP_RECHECK_MS");
        char *end = NULL;
        long parsed = text ? strtol(text, &end, 10) : -1;
        ms = text && *text && end && *end == '\0' && parsed >= 0 && parsed <= 60000 ? parsed : SLEEP_MS;
        atomic_store_explicit(&cached, ms, memory_order_relaxed);
    }
    return ms;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Whether the kernel has the barriers (since Linux 4.16, unless a seccomp filter says no). */
static int barriers_available(void)
{
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    long wanted = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    return cmds > 0 && (cmds & wanted) == wanted;
}

/* Whether this process is registered for the waiters' barriers, so that its writes need
 * no fence when their target's waiters make one.  Registration is per process, and a
 * child of fork is a new process, not registered. */
static atomic_int writes_unfenced;

static void forked_child(void)
{
    atomic_store(&writes_unfenced, 0);
}

/* The threads of this process (field 20 of /proc/self/stat), or 0 if unknown. */
static unsigned long long process_threads(void)
{
    unsigned long long threads = 0;
    return shmemi_proc_stat_field(20, &threads) == 0 ? threads : 0;
}

static void register_once(void)
{
    pthread_atfork(NULL, NULL, forked_child);
    if (barriers_available() && process_threads() == 1 &&
        membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0)
        atomic_store(&writes_unfenced, 1);
}

void shmemi_wait_register_process(void)
{
    static pthread_once_t registration = PTHREAD_ONCE_INIT;
    pthread_once(&registration, register_once);
}

/* Oversubscribed: more PEs may compete for this PE's CPUs than there are CPUs (PEs of other
 * "nodes" that are network namespaces of this machine compete too).  Counted by the PEs'
 * affinity, not this process's alone: PEs bound one to a CPU (oshrun's default) each have
 * their CPU, and a wait that yielded at once paid a system call for each look (a 2-PE
 * ping-pong made 1.5 million sched_yield calls a second). */
void shmemi_wait_init(shmemi_instance_t *inst)
{
    const shmemi_heap_set_t *h = &inst->heaps;
    inst->oversubscribed = h->cpu_sharers > h->shared_cpus;
    SHMEMI_INFO("PE %d may share %d CPU(s) with %d PE(s) of this machine, itself included: waits %s", inst->my_pe,
                h->shared_cpus, h->cpu_sharers, inst->oversubscribed ? "yield at once" : "spin first");
    atomic_store(&shmemi_ctrl_of(inst, inst->my_pe)->waiter_fences_writers, (uint32_t)barriers_available());
}

void shmemi_doorbell_ring(shmemi_ctrl_t *ctrl)
{
    atomic_store(&ctrl->sleeping, 0);
    atomic_fetch_add(&ctrl->doorbell, 1);
    syscall(SYS_futex, &ctrl->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void shmemi_doorbell_notify(shmemi_ctrl_t *ctrl)
{
    if (atomic_load_explicit(&writes_unfenced, memory_order_relaxed) &&
        atomic_load_explicit(&ctrl->waiter_fences_writers, memory_order_relaxed))
        atomic_signal_fence(memory_order_seq_cst); /* the waiter's barrier is this write's fence */
    else
        atomic_thread_fence(memory_order_seq_cst);
    /* The exchange lets one writer of many pay for the wake-up. */
    if (atomic_load_explicit(&ctrl->sleeping, memory_order_relaxed) &&
        atomic_exchange(&ctrl->sleeping, 0)) {
        atomic_fetch_add(&ctrl->doorbell, 1);
        syscall(SYS_futex, &ctrl->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

/* Sleeps on the futex word while it holds seen, for at most ms milliseconds (0: until a
 * wake-up). */
static void futex_sleep(_Atomic uint32_t *word, uint32_t seen, long ms)
{
    struct timespec timeout = {ms / 1000, (ms % 1000) * 1000000L};
    syscall(SYS_futex, word, FUTEX_WAIT, seen, ms ? &timeout : NULL, NULL, 0);
}

long shmemi_elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

/* One look: progresses the inter-node transport (when there is one), then asks ready. */
static inline int poll_once(shmemi_instance_t *inst, void (*progress)(shmemi_instance_t *),
                            shmemi_ready_fn ready, void *ctx)
{
    if (progress)
        progress(inst);
    return ready(ctx);
}

/* The clock of a wait.  Where PEs outnumber CPUs it is read for the first time only after
 * the wait's first batch of 16 yields: most waits end within it (on 2 CPUs shared by 4 PEs
 * a barrier's waiter is released after a yield or two), and the clock reads were a share of
 * what a PE does between its yields worth measuring.  Without them a barrier of 4 PEs took
 * 1.40 instead of 1.45 us, a broadcast of 8 B and a barrier 3.02 instead of 3.21 us, an
 * alltoall of 4 KiB blocks 3.84 instead of 3.92 us (medians of 8-12 alternating runs).  A
 * phase (20 us and more) lasts at most those 16 yields longer. */
typedef struct {
    struct timespec start;
    int started;
} wait_clock_t;

/* Nanoseconds since the clock started; 0 at its first read, which starts it. */
static long clock_read(wait_clock_t *clock)
{
    if (clock->started)
        return shmemi_elapsed_ns(&clock->start);
    clock_gettime(CLOCK_MONOTONIC, &clock->start);
    clock->started = 1;
    return 0;
}

/* Polls ready until the wait's clock says until_ns, spinning for SPIN_NS then yielding
 * (yielding at once, and the first batch untimed, when the node is oversubscribed);
 * nonzero when it held. */
static int poll_phase(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx, wait_clock_t *clock,
                      long until_ns)
{
    long now = inst->oversubscribed && !clock->started ? 0 : clock_read(clock);
    long spin_until = inst->oversubscribed ? 0 : now + SPIN_NS;
    /* With PEs on other nodes, the inter-node transport delivers their writes (and serves
     * their reads of our memory) when it is progressed: the poller does it while it polls;
     * once asleep, the transport's own thread does, and rings the doorbell. */
    void (*progress)(shmemi_instance_t *) = inst->progress;
    for (; now < until_ns; now = clock_read(clock)) {
        for (int i = 0; i < 16; i++) {
            if (poll_once(inst, progress, ready, ctx))
                return 1;
            if (now < spin_until)
                cpu_relax();
            else
                sched_yield();
        }
    }
    return 0;
}

/* The writers' barrier of one waiting thread: whether it made one during this wait, and
 * the doorbell's value when it did (see the top of this file). */
typedef struct {
    int done;
    uint32_t doorbell;
} writers_barrier_t;

/* Makes the writers' barrier unless the last one still covers this thread (the doorbell
 * has not moved since).  A barrier that fails turns the scheme off for this PE: writers
 * fence from then on, as they see in its control segment (a write that raced with the
 * switch may wait for the next recheck; the kernel that granted the registration does not
 * refuse the barrier). */
static void barrier_writers(shmemi_ctrl_t *ctrl, uint32_t doorbell, writers_barrier_t *last)
{
    if (!atomic_load_explicit(&ctrl->waiter_fences_writers, memory_order_relaxed) ||
        (last->done && last->doorbell == doorbell))
        return;
    if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {
        atomic_store(&ctrl->waiter_fences_writers, 0);
        return;
    }
    last->done = 1;
    last->doorbell = doorbell;
}

/* One sleep on the doorbell, unless ready holds once this PE is registered as sleeping.
 * Nonzero when the doorbell rang (a write woke us), zero after a timeout or no sleep. */
static int sleep_once(shmemi_instance_t *inst, shmemi_ctrl_t *ctrl, shmemi_ready_fn ready, void *ctx,
                      writers_barrier_t *last)
{
    if (inst->before_sleep)
        inst->before_sleep(inst); /* nobody polls the inter-node transport from now on */
    atomic_store(&ctrl->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    uint32_t seen = atomic_load(&ctrl->doorbell);
    barrier_writers(ctrl, seen, last);
    if (ready(ctx))
        return 0;
    futex_sleep(&ctrl->doorbell, seen, recheck_ms());
    return atomic_load(&ctrl->doorbell) != seen;
}

/* ---- waits on a word many PEs sleep on ------------------------------------------------ */

int shmemi_wait_shared(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx, shmemi_wake_word_t *w,
                       long poll_ns, long *waited_ns)
{
    wait_clock_t clock = {.started = 0};
    long until_ns = poll_ns;
    for (;;) {
        if (poll_ns > 0 ? poll_phase(inst, ready, ctx, &clock, until_ns) : poll_once(inst, inst->progress, ready, ctx))
            break;
        int rc = shmemi_check_alive(inst);
        if (rc != ACLSHMEM_SUCCESS)
            return rc;
        clock_read(&clock); /* a wait that sleeps is timed from here at the latest */
        if (inst->before_sleep)
            inst->before_sleep(inst); /* nobody polls the inter-node transport from now on */
        atomic_fetch_add(&w->sleepers, 1);
        uint32_t seen = atomic_load(&w->word);
        if (!ready(ctx)) {
            /* Never unbounded, even with SHMEM_SLEEP_RECHECK_MS=0: a PE that dies rings its
             * peers' doorbells, not this word, so the sleep must end for the check above. */
            futex_sleep(&w->word, seen, recheck_ms() ? recheck_ms() : 1000);
        }
        atomic_fetch_sub(&w->sleepers, 1);
        until_ns = clock_read(&clock) + poll_ns;
    }
    if (waited_ns)
        *waited_ns = clock.started ? clock_read(&clock) : 0;
    return ACLSHMEM_SUCCESS;
}

void shmemi_wake_shared(shmemi_wake_word_t *w)
{
    atomic_fetch_add(&w->word, 1); /* seq_cst: after the writer's own write, before the look */
    if (atomic_load(&w->sleepers))
        syscall(SYS_futex, &w->word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The first polls of a wait read no clock: a wait that ends within them (the partner on
 * another core answering at once, a ping-pong) does not pay for timing, whose clock reads
 * delayed the sight of the awaited write by about 10 ns a hop (measured with a bare
 * shared-memory ping-pong: 38 ns a hop without clock reads, 49 ns with them; the library's
 * 8-byte ping-pong went from 72-86 ns to 65-69 ns in alternating runs).  128 polls with a
 * pause each take about 3.5 us here (a pause is 25 ns on this AMD EPYC; up to 40 ns on
 * other CPUs), so the timed spin phase after them is shorter than it was alone (5 us). */
#define UNTIMED_POLLS 128

static int poll_untimed(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx)
{
    void (*progress)(shmemi_instance_t *) = inst->progress;
    for (int i = 0; i < UNTIMED_POLLS; i++) {
        if (poll_once(inst, progress, ready, ctx))
            return 1;
        cpu_relax();
    }
    return 0;
}

int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx)
{
    /* Oversubscribed: the PE that must write may be waiting for this CPU; one look, then
     * the yielding phase hands it over. */
    if (inst->oversubscribed ? poll_once(inst, inst->progress, ready, ctx) : poll_untimed(inst, ready, ctx))
        return ACLSHMEM_SUCCESS;
    shmemi_ctrl_t *ctrl = shmemi_ctrl_of(inst, inst->my_pe);
    long yield_ns = inst->progress ? REMOTE_YIELD_NS : YIELD_NS;
    writers_barrier_t last_barrier = {0, 0};
    wait_clock_t clock = {.started = 0};
    for (long until_ns = yield_ns;; until_ns = clock_read(&clock) + yield_ns) {
        if (poll_phase(inst, ready, ctx, &clock, until_ns))
            return ACLSHMEM_SUCCESS;
        int rc = shmemi_check_alive(inst);
        if (rc != ACLSHMEM_SUCCESS)
            return rc;
        if (sleep_once(inst, ctrl, ready, ctx, &last_barrier))
            yield_ns = yield_ns * 2 < MAX_YIELD_NS ? yield_ns * 2 : MAX_YIELD_NS;
    }
}
