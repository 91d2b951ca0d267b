/*
 * fp_ref.h - reference conversions for the tests of half and bfloat16, written differently
 * from the library's (src/core/fp16.c): values through ldexp, and rounding by rint() of the
 * exact quotient in double, so that the two agreeing means something.  Values are doubles:
 * every half, bfloat16 and float is exact in a double.  NaNs come out as the default quiet
 * NaN; the tests compare NaN payloads on their own.
 */
#ifndef ACLSHMEM_TEST_FP_REF_H
#define ACLSHMEM_TEST_FP_REF_H

#include <math.h>
#include <stdint.h>

/* A binary format with man_bits stored significand bits and an exponent field of exp_bits. */
typedef struct {
    int man_bits, exp_bits;
} ref_format;

static const ref_format REF_HALF = {10, 5};
static const ref_format REF_BF16 = {7, 8};

static inline int ref_bias(ref_format f)
{
    return (1 << (f.exp_bits - 1)) - 1;
}

static inline uint16_t ref_exp_all_ones(ref_format f)
{
    return (uint16_t)(((1u << f.exp_bits) - 1) << f.man_bits);
}

/* The value of a 16-bit pattern of format f. */
static inline double ref_value(ref_format f, uint16_t bits)
{
    int sign = bits >> 15;
    int exp = (bits >> f.man_bits) & ((1 << f.exp_bits) - 1);
    int man = bits & ((1 << f.man_bits) - 1);
    double v;
    if (exp == (1 << f.exp_bits) - 1)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp(man, 1 - ref_bias(f) - f.man_bits);
    else
        v = ldexp(man + (1 << f.man_bits), exp - ref_bias(f) - f.man_bits);
    return sign ? -v : v;
}

/* x rounded to the nearest value of format f, ties to even (x a float's value or a sum
 * that a double holds exactly).  NaN: the default quiet NaN of the format. */
static inline uint16_t ref_round(ref_format f, double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (isnan(x))
        return (uint16_t)(ref_exp_all_ones(f) | (1u << (f.man_bits - 1)));
    x = fabs(x);
    int min_exp = 1 - ref_bias(f); /* exponent of the smallest normal number */
    int e;
    frexp(x, &e);
    e -= 1; /* x = m * 2^e with 1 <= m < 2 */
    if (x == 0 || e < min_exp)
        e = min_exp; /* subnormal range: units of the subnormal step */
    double units = rint(ldexp(x, f.man_bits - e)); /* exact scaling, then round to even */
    if (units >= ldexp(1, f.man_bits + 1)) { /* rounded up into the next binade */
        units /= 2;
        e += 1;
    }
    if (isinf(x) || e > ref_bias(f))
        return sign | ref_exp_all_ones(f);
    if (units < ldexp(1, f.man_bits)) /* subnormal (or zero) */
        return sign | (uint16_t)units;
    return sign | (uint16_t)((uint32_t)(e + ref_bias(f)) << f.man_bits) |
           (uint16_t)((uint32_t)units - (1u << f.man_bits));
}

static inline int ref_is_nan(ref_format f, uint16_t bits)
{
    return (bits & ref_exp_all_ones(f)) == ref_exp_all_ones(f) && (bits & ((1u << f.man_bits) - 1));
}

#endif
