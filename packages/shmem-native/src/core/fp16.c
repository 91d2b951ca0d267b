/* float <-> half and float <-> bfloat16 with integer arithmetic on the bit patterns, so the
 * result does not depend on the FPU's rounding mode or on compiler support for _Float16. */
#include "core/fp16.h"

#include <string.h>

#define F32_SIGN 0x80000000u
#define F32_EXP_MASK 0x7f800000u /* also the bits of +infinity */
#define F32_MAN_MASK 0x007fffffu
#define F32_HIDDEN 0x00800000u
#define F32_BIAS 127

#define F16_EXP_MASK 0x7c00u /* also the bits of +infinity */
#define F16_MAN_MASK 0x03ffu
#define F16_QUIET 0x0200u
#define F16_BIAS 15
#define F16_MIN_EXP (-14) /* exponent of the smallest normal half */
#define F16_MAN_BITS 10
#define F32_MAN_BITS 23

#define BF16_QUIET 0x0040u

static uint32_t bits_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float float_of(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* m / 2^shift rounded to nearest, ties to even (m < 2^25). */
static uint32_t shift_right_even(uint32_t m, unsigned shift)
{
    if (shift == 0)
        return m;
    if (shift > 25) /* below half of the last unit: rounds to 0 */
        return 0;
    uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1)))
        q++;
    return q;
}

float shmemi_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h & F16_EXP_MASK) >> F16_MAN_BITS, man = h & F16_MAN_MASK;
    if (exp == F16_EXP_MASK >> F16_MAN_BITS) /* infinity, or NaN with its payload */
        return float_of(sign | F32_EXP_MASK | man << (F32_MAN_BITS - F16_MAN_BITS));
    if (exp != 0)
        return float_of(sign | (exp - F16_BIAS + F32_BIAS) << F32_MAN_BITS |
                        man << (F32_MAN_BITS - F16_MAN_BITS));
    /* zero or subnormal: man * 2^-24, exact in float */
    return float_of(sign | bits_of((float)man * 0x1p-24f));
}

uint16_t shmemi_float_to_half(float f)
{
    uint32_t x = bits_of(f), abs = x & ~F32_SIGN;
    uint16_t sign = (uint16_t)((x & F32_SIGN) >> 16);
    if (abs > F32_EXP_MASK) { /* NaN: keep the top of the payload; never let it become inf */
        uint16_t payload = (uint16_t)((abs & F32_MAN_MASK) >> (F32_MAN_BITS - F16_MAN_BITS));
        return sign | F16_EXP_MASK | (payload ? payload : F16_QUIET);
    }
    int exp = (int)(abs >> F32_MAN_BITS) - F32_BIAS;
    if (exp > F16_BIAS) /* >= 2^16, or infinity */
        return sign | F16_EXP_MASK;
    /* abs = sig * 2^(exp - 23), sig with its hidden bit (float subnormals: exp = -126) */
    uint32_t sig = abs & F32_MAN_MASK;
    if (abs >= F32_HIDDEN)
        sig |= F32_HIDDEN;
    else
        exp = 1 - F32_BIAS;
    if (exp < F16_MIN_EXP) /* a half subnormal: a count of 2^-24 units */
        return sign | (uint16_t)shift_right_even(sig, (unsigned)(F16_MIN_EXP - exp + F32_MAN_BITS - F16_MAN_BITS));
    /* Normal: an 11-bit significand q (hidden bit 0x400) under the biased exponent.  Adding
     * q to (exp + 14) << 10 counts the hidden bit as 1 in the exponent field; a rounding
     * carry (q = 0x800) moves to the next binade, and past the top binade to infinity. */
    uint32_t q = shift_right_even(sig, F32_MAN_BITS - F16_MAN_BITS);
    uint32_t h = ((uint32_t)(exp - F16_MIN_EXP) << F16_MAN_BITS) + q;
    return sign | (uint16_t)(h >= F16_EXP_MASK ? F16_EXP_MASK : h);
}

float shmemi_bfloat16_to_float(uint16_t b)
{
    return float_of((uint32_t)b << 16);
}

uint16_t shmemi_float_to_bfloat16(float f)
{
    uint32_t x = bits_of(f);
    if ((x & ~F32_SIGN) > F32_EXP_MASK) { /* NaN: truncate the payload, keep it a NaN */
        uint16_t b = (uint16_t)(x >> 16);
        return (b & 0x7f) ? b : (uint16_t)(b | BF16_QUIET);
    }
    /* Round the low 16 bits away, ties to even; a carry runs into the exponent (and from
     * the largest finite values up to infinity), which is the right result. */
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)((x + rounding) >> 16);
}
