#include "core/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Phases of a wait, by elapsed time.  Busy-polling answers fastest when the partner runs on
 * another core; yielding hands the CPU to a PE that needs it when PEs outnumber cores (a
 * yield returns at once when nobody else is runnable, so an idle machine still polls);
 * after that the waiter sleeps on its doorbell, which every remote write rings. */
#define SPIN_NS 5000L      /* busy-poll for 5 us */
#define YIELD_NS 20000L   /* then yield until 20 us */
#define SLEEP_MS 1         /* then sleep; a wake-up missed by a plain store costs at most this */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void shmemi_doorbell_ring(shmemi_ctrl_t *ctrl)
{
    atomic_fetch_add(&ctrl->doorbell, 1);
    if (atomic_load(&ctrl->sleepers) > 0)
        syscall(SYS_futex, &ctrl->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void sleep_on(shmemi_ctrl_t *ctrl, uint32_t seen)
{
    struct timespec timeout = {0, SLEEP_MS * 1000000L};
    syscall(SYS_futex, &ctrl->doorbell, FUTEX_WAIT, seen, &timeout, NULL, 0);
}

static long elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx)
{
    if (ready(ctx))
        return ACLSHMEM_SUCCESS;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* With PEs on other nodes, the inter-node transport delivers their writes (and serves
     * their reads of our memory) when it is progressed: the poller does it while it polls;
     * once asleep, the transport's own thread does, and rings the doorbell. */
    void (*progress)(shmemi_instance_t *) = inst->progress;
    for (long waited = 0; waited < YIELD_NS; waited = elapsed_ns(&start)) {
        for (int i = 0; i < 16; i++) {
            if (progress)
                progress(inst);
            if (ready(ctx))
                return ACLSHMEM_SUCCESS;
            if (waited < SPIN_NS)
                cpu_relax();
            else
                sched_yield();
        }
    }
    /* Register as a sleeper before reading the doorbell and re-checking, so a writer either
     * sees us registered (and wakes us) or wrote before our check (and we see its data). */
    shmemi_ctrl_t *ctrl = shmemi_ctrl_of(inst, inst->my_pe);
    atomic_fetch_add(&ctrl->sleepers, 1);
    int rc = ACLSHMEM_SUCCESS;
    for (;;) {
        uint32_t seen = atomic_load(&ctrl->doorbell);
        if (ready(ctx))
            break;
        if ((rc = shmemi_check_alive(inst)) != ACLSHMEM_SUCCESS)
            break;
        sleep_on(ctrl, seen);
        if (progress)
            progress(inst);
    }
    atomic_fetch_sub(&ctrl->sleepers, 1);
    return rc;
}
