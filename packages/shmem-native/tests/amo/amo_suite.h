/*
 * amo_suite.h - what the files of the AMO test share (test_amo.c says which file holds what):
 * the numbers of every AMO type, made from the header's type tables, and the cases that main's
 * table names.
 */
#ifndef ACLSHMEM_TEST_AMO_SUITE_H
#define ACLSHMEM_TEST_AMO_SUITE_H

#include "fp_ref.h"
#include "harness.h"

/* ---- numbers of every AMO type ------------------------------------------------------------
 * num_T(x): the T nearest x; dbl_T(v): v's value.  Half and bfloat16 go through the
 * reference conversion (fp_ref.h), not the library's. */
#define DEFINE_PLAIN_NUMBERS(NAME, TYPE)                                                          \
    static inline TYPE num_##NAME(double x) { return (TYPE)x; }                                   \
    static inline double dbl_##NAME(TYPE v) { return (double)v; }
ACLSHMEM_AMO_INT_TYPES(DEFINE_PLAIN_NUMBERS)
ACLSHMEM_AMO_FLOAT_TYPES(DEFINE_PLAIN_NUMBERS)
static inline aclshmem_half_t num_half(double x) { return ref_round(REF_HALF, x); }
static inline double dbl_half(aclshmem_half_t v) { return ref_value(REF_HALF, v); }
static inline aclshmem_bfloat16_t num_bfloat16(double x) { return ref_round(REF_BF16, x); }
static inline double dbl_bfloat16(aclshmem_bfloat16_t v) { return ref_value(REF_BF16, v); }

/* ---- the cases (main's table in test_amo.c names them) ------------------------------------- */
/* amo_ops.c */
int t_every_operation(int me, int n);
int t_float_sums(int me, int n);
/* amo_concurrency.c */
int t_fetch_add_unique(int me, int n);
int t_cswap_lock(int me, int n);
int t_after_puts(int me, int n);
int t_kernel_blocks(int me, int n);
int t_kernel_bad_input(int me, int n);
/* amo_bad_input.c */
int t_bad_input(int me, int n);
int t_not_initialized(int me, int n);
/* amo_rma16_sync.c */
int t_rma16(int me, int n);
int t_barrier_vec(int me, int n);
int t_signal_op(int me, int n);

#endif
