/*
 * osh_coll_values.h - the values the collectives' tests (test_osh_coll.c,
 * test_osh_coll_active_set.c) give each PE, and the operations that fold them into what the
 * specification says a reduction yields.
 */
#ifndef OSH_COLL_VALUES_H
#define OSH_COLL_VALUES_H

#include <complex.h>

/* The value PE pe puts at index i of its source (small enough for char, distinct enough that a
 * block from the wrong place or PE shows). */
#define VAL(TYPE, pe, i) ((TYPE)(((pe) * 37 + (i) * 11) % 113 + 1))

#define OP_and(a, b) ((a) & (b))
#define OP_or(a, b) ((a) | (b))
#define OP_xor(a, b) ((a) ^ (b))
#define OP_max(a, b) ((a) > (b) ? (a) : (b))
#define OP_min(a, b) ((a) < (b) ? (a) : (b))
#define OP_sum(a, b) ((a) + (b))
#define OP_prod(a, b) ((a) * (b))

/* i for the complex types (their values get imaginary parts), 0 for the others. */
#define IMAG_UNIT(TYPE) _Generic((TYPE)0, float _Complex: (float _Complex)I, double _Complex: (double _Complex)I, default: 0)

/* The inputs of each operation: bit patterns, small numbers (negative ones for min and max), ones
 * and twos for prod, so that no result overflows even a char. */
#define IN_BITS(TYPE, pe, i) ((TYPE)(0x5A ^ ((pe) * 0x21) ^ ((i) * 3)))
#define IN_and IN_BITS
#define IN_or IN_BITS
#define IN_xor IN_BITS
#define IN_max(TYPE, pe, i) ((TYPE)((TYPE)(((pe) * 5 + (i) * 3) % 11) - (TYPE)5))
#define IN_min IN_max
#define IN_sum(TYPE, pe, i) ((TYPE)((TYPE)(((pe) * 3 + (i)) % 7 + 1) + (TYPE)((TYPE)((pe) + 1) * IMAG_UNIT(TYPE))))
#define IN_prod(TYPE, pe, i) ((TYPE)((TYPE)(1 + ((pe) + (i)) % 2) + (TYPE)((TYPE)((pe) % 2) * IMAG_UNIT(TYPE))))

/* The wrong results of reduction OP on nelems elements of TYPE on this PE (me of n PEs), out of
 * place then in place, added to bad: CALL makes the call on dst_ and src_ (the macro's) and is
 * nonzero when it failed.  The expected value folds every PE's inputs in team order, as the
 * library computes it. */
#define REDUCTION_ERRORS(TYPE, OP, me, n, nelems, dest, source, CALL, bad)                          \
    do {                                                                                           \
        TYPE *d_ = (dest), *s_ = (source);                                                         \
        for (int i_ = 0; i_ < (nelems); i_++) {                                                    \
            s_[i_] = IN_##OP(TYPE, (me), i_);                                                      \
            d_[i_] = (TYPE)0;                                                                      \
        }                                                                                          \
        {                                                                                          \
            TYPE *dst_ = d_, *src_ = s_;                                                           \
            (bad) += (CALL) != 0;                                                                  \
        }                                                                                          \
        for (int i_ = 0; i_ < (nelems); i_++) {                                                    \
            TYPE want_ = IN_##OP(TYPE, 0, i_);                                                     \
            for (int p_ = 1; p_ < (n); p_++)                                                       \
                want_ = (TYPE)OP_##OP(want_, IN_##OP(TYPE, p_, i_));                               \
            (bad) += d_[i_] != want_ || s_[i_] != IN_##OP(TYPE, (me), i_);                         \
            d_[i_] = want_;                                                                        \
        }                                                                                          \
        {                                                                                          \
            TYPE *dst_ = s_, *src_ = s_;                                                           \
            (bad) += (CALL) != 0;                                                                  \
        }                                                                                          \
        for (int i_ = 0; i_ < (nelems); i_++)                                                      \
            (bad) += s_[i_] != d_[i_];                                                             \
    } while (0)

/* Tables of reductions: BIND_<OP>(NAME, TYPE) is R(NAME, TYPE, OP), for the R of the list. */
#define BIND_and(NAME, TYPE) R(NAME, TYPE, and)
#define BIND_or(NAME, TYPE) R(NAME, TYPE, or)
#define BIND_xor(NAME, TYPE) R(NAME, TYPE, xor)
#define BIND_max(NAME, TYPE) R(NAME, TYPE, max)
#define BIND_min(NAME, TYPE) R(NAME, TYPE, min)
#define BIND_sum(NAME, TYPE) R(NAME, TYPE, sum)
#define BIND_prod(NAME, TYPE) R(NAME, TYPE, prod)

#endif
