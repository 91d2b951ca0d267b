/*
 * test_amo.c - the atomic memory operations of aclshmem/amo.h on real PEs: every operation
 * of every type (generated from the header's type tables) on both symmetric heaps, values
 * of fetch_add unique across PEs, a compare_swap lock around a read-modify-write, exact
 * float, half and bfloat16 sums and rounding against a reference, AMOs ordered after puts,
 * 16 kernel blocks at once, bad input of every function; and what came with the family:
 * half and bfloat16 RMA, barrier_vec (host and kernel) and the host signal_op.
 *
 * The cases live in the files beside this one, by concern; amo_suite.h is what they share (the
 * numbers of every AMO type and the cases).
 *   test_amo.c        the table of cases and main
 *   amo_ops.c         every operation of every type on both heaps; exact float, half and
 *                     bfloat16 sums and their rounding against the reference (fp_ref.h)
 *   amo_concurrency.c many PEs and kernel blocks at once: unique fetch_add values, a
 *                     compare_swap lock, AMOs ordered after puts, 16 kernel blocks, a failing
 *                     AMO in a kernel
 *   amo_bad_input.c   bad input of every function, and every shape before init
 *   amo_rma16_sync.c  what came with the family: half and bfloat16 RMA, the host barrier_vec
 *                     and signal_op
 */
#define _GNU_SOURCE
#include "amo_suite.h"

static const harness_case cases[] = {
    { "every_operation", t_every_operation, { 0 }, { 1, 2, 4, 8 } },
    { "fetch_add_unique", t_fetch_add_unique, { 0 }, { 1, 2, 4, 8 } },
    { "cswap_lock", t_cswap_lock, { 0 }, { 1, 2, 4, 8 } },
    { "float_sums", t_float_sums, { 0 }, { 1, 2, 4, 8 } },
    { "after_puts", t_after_puts, { 0 }, { 1, 2, 4, 8 } },
    { "kernel_blocks", t_kernel_blocks, { 0 }, { 1, 2, 4, 8 } },
    { "kernel_bad_input", t_kernel_bad_input, { 0 }, { 2 } },
    { "bad_input", t_bad_input, { 0 }, { 1, 2 } },
    { "not_initialized", t_not_initialized, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "rma16", t_rma16, { 0 }, { 1, 2, 4 } },
    { "barrier_vec", t_barrier_vec, { 0 }, { 1, 2, 4, 8 } },
    { "signal_op", t_signal_op, { 0 }, { 1, 2, 4, 8 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
