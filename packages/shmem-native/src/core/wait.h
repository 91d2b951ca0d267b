/* Waiting without starving other PEs: spin briefly, yield, then sleep on this PE's
 * doorbell (a futex in the control segment that a remote write rings when it finds a
 * waiter asleep). */
#ifndef SHMEMI_WAIT_H
#define SHMEMI_WAIT_H

#include <time.h>

#include "core/instance.h"
#include "core/ctrl.h"

/* Returns nonzero when the awaited condition holds. */
typedef int (*shmemi_ready_fn)(void *ctx);

/* Waits until ready(ctx).  ACLSHMEM_SUCCESS, or an error when the job failed (a PE died). */
int shmemi_wait(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx);

/* Waits until ready(ctx), polling for poll_ns (spinning, then yielding; one look when 0),
 * then sleeping on w instead of this PE's doorbell; an error when the job failed first.
 * Sleeps recheck every SHMEM_SLEEP_RECHECK_MS, so a PE that dies is noticed as in
 * shmemi_wait.  waited_ns (unless NULL) gets how long the wait took, not counting its first
 * batch of polls, which no clock times (0: it ended within them). */
int shmemi_wait_shared(shmemi_instance_t *inst, shmemi_ready_fn ready, void *ctx, shmemi_wake_word_t *w,
                       long poll_ns, long *waited_ns);
/* Call after making the condition of w's sleepers true: wakes them all (a system call only
 * when one sleeps). */
void shmemi_wake_shared(shmemi_wake_word_t *w);

/* Nanoseconds of CLOCK_MONOTONIC since since (a time read with clock_gettime). */
long shmemi_elapsed_ns(const struct timespec *since);

/* Decides how inst's waits poll, once the PEs of this machine are known (init): whether
 * more PEs may compete for this PE's CPUs than there are CPUs (inst->oversubscribed). */
void shmemi_wait_init(shmemi_instance_t *inst);

/* Registers this process for the barriers that waiters make before they sleep, so that
 * its writes need no fence of their own (core/wait.c); where it is not registered they
 * fence.  Registering a process that has one thread costs 2 us; one with more waits for an
 * RCU grace period (17 ms measured), in the kernel, so only a process that has one thread
 * when its first init starts registers (a C program, Python without numpy or torch).
 * Once per process, before the init's threads start. */
void shmemi_wait_register_process(void);

/* Call after writing into the PE of ctrl: wakes its waiters if one may sleep.  It costs a
 * fence (only the compiler's when this process registered and ctrl's waiters make the
 * barrier, see shmemi_wait_register_process) and a load of a line nobody writes while no
 * one sleeps; no system call, no read-modify-write on the target's lines. */
void shmemi_doorbell_notify(shmemi_ctrl_t *ctrl);
/* Wakes the PE's waiters whatever they wait for (the job failed, a wait must end). */
void shmemi_doorbell_ring(shmemi_ctrl_t *ctrl);

static inline shmemi_ctrl_t *shmemi_ctrl_of(shmemi_instance_t *inst, int pe)
{
    return (shmemi_ctrl_t *)inst->heaps.seg[SHMEMI_SEG_CTRL].peer_base[pe];
}

#endif
