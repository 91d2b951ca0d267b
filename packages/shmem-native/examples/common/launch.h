/*
 * launch.h - starts a job of N PEs on this machine from one program, for the C examples
 * and the acceptance test (packages/shmem-native/tests/acceptance_ring.c).
 *
 * The parent forks N children (child i is PE i).  PE 0 makes the job's unique ID and pipes
 * its bytes to the others; every PE then joins the job (no TLS on the control plane: a
 * local demo) and runs the program's body.  The parent waits for all of them.
 */
#ifndef EXAMPLE_LAUNCH_H
#define EXAMPLE_LAUNCH_H

#include <stdint.h>

/* The work of PE me of n once it has joined the job (it finalizes itself); 0 when every
 * check passed. */
typedef int (*example_body_t)(int me, int n, void *arg);

/* Runs body on n PEs, each with a heap of heap_size bytes and killed after time_limit
 * seconds.  Returns the number of PEs that failed (each named on stderr, after prog), or
 * -1 when the job could not be started (the reason on stderr). */
int example_launch(const char *prog, int n, int64_t heap_size, unsigned time_limit, example_body_t body,
                   void *arg);

/* Seconds of a monotonic clock, for the examples' timings. */
double example_now(void);

#endif
