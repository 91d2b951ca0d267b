#define _GNU_SOURCE /* usleep */
/* Wake-ups: a PE asleep in each kind of wait is woken by each kind of write.
 *
 * Writers ring a target's doorbell only when it has registered as asleep (core/wait.c),
 * so a missing ring would leave a waiter asleep.  meson runs this program with
 * SHMEM_SLEEP_RECHECK_MS=0: a sleeping waiter then has no timeout to fall back on, and a
 * wake-up that does not come makes the test hang and fail on the harness's timeout.  In
 * every round the writer first sleeps long enough for the waiter to pass its spin and
 * yield phases (20 us) and fall asleep, writes, and then touches nothing of the waiter's
 * until the waiter answers on the writer's own ack word (a barrier would ring the waiter's
 * doorbell too and hide a missing wake-up). */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"

#define ROUNDS 5
#define WRITER_DELAY_US 3000 /* the waiter is asleep by then */

typedef enum { WRITE_PUT, WRITE_P, WRITE_IPUT, WRITE_PUT_NBI, WRITE_AMO_SET, WRITE_AMO_ADD, WRITE_AMO_CSWAP } write_kind_t;
typedef enum { WAIT_UNTIL, WAIT_UNTIL_ALL, WAIT_UNTIL_ANY, WAIT_UNTIL_SOME } wait_kind_t;

static const char *const write_names[] = {"putmem", "p", "iput", "put_nbi+quiet", "atomic_set", "atomic_add",
                                          "atomic_compare_swap"};
static const char *const wait_names[] = {"wait_until", "wait_until_all", "wait_until_any", "wait_until_some"};

/* Writes round into *word on pe (its value was round - 1). */
static void write_word(write_kind_t kind, int64_t *word, int64_t round, int pe)
{
    switch (kind) {
    case WRITE_PUT: aclshmem_putmem(word, &round, sizeof(round), pe); break;
    case WRITE_P: aclshmem_int64_p(word, round, pe); break;
    case WRITE_IPUT: aclshmem_int64_iput(word, &round, 1, 1, 1, pe); break;
    case WRITE_PUT_NBI:
        aclshmem_int64_put_nbi(word, &round, 1, pe);
        aclshmem_quiet();
        break;
    case WRITE_AMO_SET: aclshmem_int64_atomic_set(word, round, pe); break;
    case WRITE_AMO_ADD: aclshmem_int64_atomic_add(word, 1, pe); break;
    case WRITE_AMO_CSWAP: (void)aclshmem_int64_atomic_compare_swap(word, round - 1, round, pe); break;
    }
}

/* Waits until *word == round, through the vector forms on a one-element vector. */
static void wait_word(wait_kind_t kind, int64_t *word, int64_t round)
{
    size_t index = 0, found = 0;
    switch (kind) {
    case WAIT_UNTIL: aclshmem_int64_wait_until(word, ACLSHMEM_CMP_EQ, round); break;
    case WAIT_UNTIL_ALL: aclshmem_int64_wait_until_all(word, 1, NULL, ACLSHMEM_CMP_EQ, round); break;
    case WAIT_UNTIL_ANY: aclshmem_int64_wait_until_any(word, 1, NULL, ACLSHMEM_CMP_EQ, round, &found); break;
    case WAIT_UNTIL_SOME:
        aclshmem_int64_wait_until_some(word, 1, &index, NULL, ACLSHMEM_CMP_EQ, round, &found);
        break;
    }
}

/* The writer's side of a round: waits for the waiter's answer on its own word. */
static void await_ack(int64_t *ack, int64_t round)
{
    aclshmem_int64_wait_until(ack, ACLSHMEM_CMP_EQ, round);
}

static void send_ack(int64_t *ack, int64_t round)
{
    aclshmem_int64_p(ack, round, 0);
}

/* PE 1 waits in every wait family; PE 0 writes with every kind of write. */
static int t_word_waits(int me, int n)
{
    (void)n;
    int64_t *word = aclshmem_malloc(2 * sizeof(int64_t)), *ack = word + 1;
    ASSERT_NOT_NULL(word);
    for (int wait = WAIT_UNTIL; wait <= WAIT_UNTIL_SOME; wait++) {
        for (int write = WRITE_PUT; write <= WRITE_AMO_CSWAP; write++) {
            *word = *ack = 0;
            aclshmem_barrier_all();
            for (int64_t round = 1; round <= ROUNDS; round++) {
                if (me == 0) {
                    usleep(WRITER_DELAY_US);
                    write_word((write_kind_t)write, word, round, 1);
                    await_ack(ack, round);
                } else {
                    wait_word((wait_kind_t)wait, word, round);
                    EXPECT_EQ(*word, round);
                    send_ack(ack, round);
                }
            }
            aclshmem_barrier_all();
            if (me == 1 && harness_failures)
                harness_log("failed: %s woken by %s", wait_names[wait], write_names[write]);
        }
    }
    aclshmem_free(word);
    return 0;
}

/* PE 1 waits on a signal; PE 0 sets it with put-with-signal (data visible with it) and with
 * a signal operation (set and add). */
static int t_signal_waits(int me, int n)
{
    (void)n;
    int32_t *sig = aclshmem_malloc(sizeof(int32_t));
    int64_t *data = aclshmem_malloc(65 * sizeof(int64_t)), *ack = data + 64;
    ASSERT_NOT_NULL(sig);
    ASSERT_NOT_NULL(data);
    *sig = 0;
    *ack = 0;
    aclshmem_barrier_all();
    int64_t payload[64];
    for (int32_t round = 1; round <= 3 * ROUNDS; round++) {
        if (me == 0) {
            for (int i = 0; i < 64; i++)
                payload[i] = round * 1000 + i;
            usleep(WRITER_DELAY_US);
            if (round % 3 == 1)
                aclshmemx_putmem_signal(data, payload, sizeof(payload), sig, round, ACLSHMEM_SIGNAL_SET, 1);
            else if (round % 3 == 2)
                aclshmemx_signal_op(sig, round, ACLSHMEM_SIGNAL_SET, 1);
            else
                aclshmemx_signal_op(sig, 1, ACLSHMEM_SIGNAL_ADD, 1);
            await_ack(ack, round);
        } else {
            EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, round), round);
            if (round % 3 == 1)
                EXPECT_EQ(data[63], round * 1000 + 63);
            send_ack(ack, round);
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(data);
    aclshmem_free(sig);
    return 0;
}

/* Everyone but the last PE sleeps in the barrier until the last arrives. */
static int t_barrier_arrival(int me, int n)
{
    for (int round = 0; round < ROUNDS; round++) {
        if (me == n - 1)
            usleep(WRITER_DELAY_US);
        aclshmem_barrier_all();
    }
    return 0;
}

/* Everyone but the last PE sleeps in a collective's exchange until the last arrives (on two
 * PEs the exchange has no barrier: the last PE's record must wake the other). */
static int t_collective_arrival(int me, int n)
{
    int64_t *mine = aclshmem_malloc(sizeof(int64_t)), *all = aclshmem_malloc((size_t)n * sizeof(int64_t));
    ASSERT(mine && all);
    for (int round = 0; round < ROUNDS; round++) {
        *mine = me * 100 + round;
        if (me == n - 1)
            usleep(WRITER_DELAY_US);
        ASSERT_EQ(aclshmem_int64_fcollect(ACLSHMEM_TEAM_WORLD, all, mine, 1), ACLSHMEM_SUCCESS);
        for (int p = 0; p < n; p++)
            EXPECT_EQ(all[p], p * 100 + round);
    }
    aclshmem_barrier_all();
    aclshmem_free(all);
    aclshmem_free(mine);
    return 0;
}

/* Two threads of PE 1 asleep at once on the same doorbell (the wake-up clears the shared
 * "sleeping" mark once): both must wake. */
typedef struct {
    int64_t *word;
    int64_t value;
} waiter_arg_t;

static void *waiter_main(void *arg)
{
    waiter_arg_t *w = arg;
    aclshmem_int64_wait_until(w->word, ACLSHMEM_CMP_GE, w->value);
    return NULL;
}

static int t_two_sleepers(int me, int n)
{
    (void)n;
    int64_t *words = aclshmem_malloc(3 * sizeof(int64_t)), *ack = words + 2;
    ASSERT_NOT_NULL(words);
    words[0] = words[1] = *ack = 0;
    aclshmem_barrier_all();
    for (int64_t round = 1; round <= ROUNDS; round++) {
        if (me == 0) {
            usleep(WRITER_DELAY_US);
            aclshmem_int64_p(&words[0], round, 1);
            usleep(WRITER_DELAY_US);
            aclshmem_int64_p(&words[1], round, 1);
            await_ack(ack, round);
        } else {
            pthread_t threads[2];
            waiter_arg_t args[2] = {{&words[0], round}, {&words[1], round}};
            for (int i = 0; i < 2; i++)
                ASSERT_EQ(pthread_create(&threads[i], NULL, waiter_main, &args[i]), 0);
            for (int i = 0; i < 2; i++)
                pthread_join(threads[i], NULL);
            EXPECT_EQ(words[0], round);
            EXPECT_EQ(words[1], round);
            send_ack(ack, round);
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(words);
    return 0;
}

/* Busy-waits for ns nanoseconds (usleep's granularity is too coarse for the sweep below). */
static void spin_ns(long ns)
{
    double end = harness_now() + (double)ns * 1e-9;
    while (harness_now() < end)
        ;
}

/* Writes that land while the waiter is falling asleep.  A put's notify has no fence of its
 * own when the waiter makes every CPU pass one before it sleeps (membarrier, core/wait.c),
 * and a wake-up lost around that moment would hang the round (no recheck here).  The
 * writer's delay sweeps, in steps of SWEEP_STEP_NS, across the time the waiter spins and
 * yields before it sleeps (20 us), several times over; the acks go the other way through
 * the same moment.  The window a missing barrier would open is a few nanoseconds wide: on
 * the 2-CPU machine this was written on, 60000 rounds with the waiter's barrier removed did
 * not hit it, so this case guards the whole fall-asleep path rather than proving the
 * barrier, whose proof is the kernel's guarantee (see core/wait.c). */
#define SWEEP_STEP_NS 25L
#define SWEEP_END_NS 40000L
#define SWEEPS 4

static int t_sleep_races(int me, int n)
{
    (void)n;
    int64_t *words = aclshmem_malloc(2 * sizeof(int64_t)), *word = words, *ack = words + 1;
    ASSERT_NOT_NULL(words);
    *word = *ack = 0;
    aclshmem_barrier_all();
    int64_t round = 0;
    for (int sweep = 0; sweep < SWEEPS; sweep++) {
        for (long delay = 0; delay < SWEEP_END_NS; delay += SWEEP_STEP_NS) {
            round++;
            if (me == 0) {
                spin_ns(delay);
                if (round % 2)
                    aclshmem_putmem(word, &round, sizeof(round), 1);
                else
                    aclshmem_int64_p(word, round, 1);
                await_ack(ack, round);
            } else {
                aclshmem_int64_wait_until(word, ACLSHMEM_CMP_EQ, round);
                send_ack(ack, round);
            }
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(words);
    return 0;
}

static const harness_case cases[] = {
    {"word_waits", t_word_waits, {0}, {2, 0}},
    {"signal_waits", t_signal_waits, {0}, {2, 0}},
    {"barrier_arrival", t_barrier_arrival, {0}, {2, 3, 4, 0}},
    {"collective_arrival", t_collective_arrival, {0}, {2, 3, 4, 0}},
    {"two_sleepers", t_two_sleepers, {0}, {2, 0}},
    {"sleep_races", t_sleep_races, {0}, {2, 0}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
