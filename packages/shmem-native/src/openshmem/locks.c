/* Distributed locks: a ticket lock in the lock's own symmetric long on PE 0, changed only by
 * AMOs (amo/amo.c), so it works wherever the lock lives (heap or static data) and from any
 * node.  The 64 bits of the word on PE 0:
 *
 *     bits 40..63  the next ticket to hand out
 *     bits 16..39  the ticket being served (the holder's)
 *     bits  0..15  the holder's PE + 1 (0: none yet)
 *
 * A PE takes a ticket with one fetch-and-add and waits until its ticket is served, so PEs
 * get the lock in the order they asked for it (fair, FIFO); the holder releases it by
 * serving the next ticket and clearing the holder.  Tickets count modulo 2^24: more than
 * 16 million waiters at once would be needed to confuse them.  The word's copies on the
 * other PEs are not used.  A word that no lock state can hold (a holder beyond the job, a
 * holder while nobody holds) is reported, since it means the word is used as something
 * else, or was not 0 before its first use. */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "amo/amo.h"
#include "base/error.h"
#include "openshmem/osh.h"
#include "rma/rma.h"

_Static_assert(sizeof(long) == sizeof(uint64_t), "a lock is a 64-bit long");

#define HOME_PE 0
#define TICKET_SHIFT 40
#define SERVING_SHIFT 16
#define TICKET_MASK 0xFFFFFFull
#define HOLDER_MASK 0xFFFFull

static uint64_t next_ticket(uint64_t word)
{
    return word >> TICKET_SHIFT;
}

static uint64_t serving(uint64_t word)
{
    return (word >> SERVING_SHIFT) & TICKET_MASK;
}

static int holder(uint64_t word)
{
    return (int)(word & HOLDER_MASK) - 1;
}

/* One AMO on the lock word on its home PE. */
static int lock_amo(const char *api, long *lock, shmemi_amo_op_t op, uint64_t value, uint64_t cond,
                    uint64_t *old)
{
    shmemi_amo_t a = {.op = op, .kind = SHMEMI_AMO_INT, .width = sizeof(long), .value = value, .cond = cond};
    return shmemi_amo(api, NULL, lock, &a, HOME_PE, old);
}

static int check_word(const shmemi_instance_t *inst, const char *api, const long *lock, uint64_t word)
{
    int pe = holder(word);
    int queued = (int)((next_ticket(word) - serving(word)) & TICKET_MASK);
    if (pe >= inst->n_pes || (pe >= 0 && queued == 0))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: the lock %p holds 0x%016llx, which is no state of a lock (is the long used as "
                           "something else, or was it not 0 before its first use?)", api, (const void *)lock,
                           (unsigned long long)word);
    return ACLSHMEM_SUCCESS;
}

/* Between two looks at a lock another PE holds: spin a little, then yield, then sleep for
 * longer and longer (up to 100 us), so that waiters do not starve the holder of CPU. */
static void back_off(unsigned round)
{
    if (round < 64) {
        sched_yield();
        return;
    }
    unsigned shift = (round - 64) / 16;
    long ns = 1000L << (shift < 7 ? shift : 7);
    struct timespec pause = {0, ns < 100000 ? ns : 100000};
    nanosleep(&pause, NULL);
}

static int wait_for_turn(shmemi_instance_t *inst, const char *api, long *lock, uint64_t ticket)
{
    for (unsigned round = 0;; round++) {
        uint64_t word = 0;
        SHMEMI_TRY(lock_amo(api, lock, SHMEMI_AMO_FETCH, 0, 0, &word));
        if (serving(word) == ticket)
            return ACLSHMEM_SUCCESS;
        if (round % 256 == 255)
            SHMEMI_TRY(shmemi_check_alive(inst));
        back_off(round);
    }
}

void shmem_set_lock(long *lock)
{
    static const char api[] = "shmem_set_lock";
    shmemi_instance_t *inst = shmemi_require(api);
    uint64_t word = 0;
    if (!inst || lock_amo(api, lock, SHMEMI_AMO_FETCH, 0, 0, &word) != ACLSHMEM_SUCCESS ||
        check_word(inst, api, lock, word) != ACLSHMEM_SUCCESS ||
        lock_amo(api, lock, SHMEMI_AMO_ADD, 1ull << TICKET_SHIFT, 0, &word) != ACLSHMEM_SUCCESS)
        return;
    uint64_t ticket = next_ticket(word);
    if (serving(word) != ticket && wait_for_turn(inst, api, lock, ticket) != ACLSHMEM_SUCCESS)
        return;
    lock_amo(api, lock, SHMEMI_AMO_ADD, (uint64_t)inst->my_pe + 1, 0, NULL);
}
SHMEMI_PROFILED(shmem_set_lock)

int shmem_test_lock(long *lock)
{
    static const char api[] = "shmem_test_lock";
    shmemi_instance_t *inst = shmemi_require(api);
    uint64_t word = 0;
    if (!inst || lock_amo(api, lock, SHMEMI_AMO_FETCH, 0, 0, &word) != ACLSHMEM_SUCCESS)
        return 1;
    for (;;) {
        if (check_word(inst, api, lock, word) != ACLSHMEM_SUCCESS)
            return 1;
        if (next_ticket(word) != serving(word))
            return 1; /* held, or promised to a waiter */
        /* Free: take the ticket being served and become the holder in one step. */
        uint64_t taken = word + (1ull << TICKET_SHIFT) + (uint64_t)inst->my_pe + 1, seen = 0;
        if (lock_amo(api, lock, SHMEMI_AMO_CSWAP, taken, word, &seen) != ACLSHMEM_SUCCESS)
            return 1;
        if (seen == word)
            return 0;
        word = seen; /* another PE changed it meanwhile: look again */
    }
}
SHMEMI_PROFILED(shmem_test_lock)

void shmem_clear_lock(long *lock)
{
    static const char api[] = "shmem_clear_lock";
    shmemi_instance_t *inst = shmemi_require(api);
    uint64_t word = 0;
    /* What the holder wrote in the critical section is complete before the next one enters. */
    if (!inst || shmemi_osh_quiet_every_context(inst) != ACLSHMEM_SUCCESS ||
        lock_amo(api, lock, SHMEMI_AMO_FETCH, 0, 0, &word) != ACLSHMEM_SUCCESS)
        return;
    for (;;) {
        if (check_word(inst, api, lock, word) != ACLSHMEM_SUCCESS)
            return;
        if (holder(word) != inst->my_pe) {
            shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d does not hold the lock %p (%s)", api, inst->my_pe,
                        (void *)lock, holder(word) < 0 ? "nobody does" : "another PE does");
            return;
        }
        uint64_t next = ((serving(word) + 1) & TICKET_MASK) << SERVING_SHIFT;
        uint64_t released = (word & ~(HOLDER_MASK | (TICKET_MASK << SERVING_SHIFT))) | next, seen = 0;
        if (lock_amo(api, lock, SHMEMI_AMO_CSWAP, released, word, &seen) != ACLSHMEM_SUCCESS || seen == word)
            return;
        word = seen; /* a new waiter took a ticket meanwhile: try again */
    }
}
SHMEMI_PROFILED(shmem_clear_lock)
