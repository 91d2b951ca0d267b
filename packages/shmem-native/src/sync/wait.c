#include "sync/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPIN_ROUNDS 64    /* cheap checks before giving up the CPU */
#define YIELD_ROUNDS 16   /* sched_yield()s before sleeping */
#define SLEEP_MS 5        /* upper bound on one sleep; liveness is checked between them */

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

int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (ready(ctx))
            return ACLSHMEM_SUCCESS;
        cpu_relax();
    }
    for (int i = 0; i < YIELD_ROUNDS; i++) {
        if (ready(ctx))
            return ACLSHMEM_SUCCESS;
        sched_yield();
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
    }
    atomic_fetch_sub(&ctrl->sleepers, 1);
    return rc;
}
