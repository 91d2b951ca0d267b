/* The arithmetic of the AMOs, apart from how a transport makes them atomic: what a word
 * becomes.  Floating-point addition of half and bfloat16 is done in float and rounded
 * once more to the 16-bit type.  That double rounding gives the correctly rounded sum
 * (what an addition in the type itself gives): float's 24-bit significand is at least
 * 2p + 2 bits for half (p = 11) and bfloat16 (p = 8), the bound under which rounding twice
 * to nearest is innocuous for addition (Figueroa, "When is double rounding innocuous?",
 * 1995), and float's exponent range covers both types' range and subnormals. */
#include <string.h>

#include "core/fp16.h"
#include "transport/transport.h"

static uint64_t width_mask(int width)
{
    return width >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

static uint64_t add_float(uint64_t a, uint64_t b)
{
    uint32_t x = (uint32_t)a, y = (uint32_t)b;
    float fx, fy;
    memcpy(&fx, &x, sizeof fx);
    memcpy(&fy, &y, sizeof fy);
    fx += fy;
    memcpy(&x, &fx, sizeof x);
    return x;
}

static uint64_t add_double(uint64_t a, uint64_t b)
{
    double dx, dy;
    memcpy(&dx, &a, sizeof dx);
    memcpy(&dy, &b, sizeof dy);
    dx += dy;
    memcpy(&a, &dx, sizeof a);
    return a;
}

static uint64_t add_half(uint64_t a, uint64_t b)
{
    return shmemi_float_to_half(shmemi_half_to_float((uint16_t)a) + shmemi_half_to_float((uint16_t)b));
}

static uint64_t add_bfloat16(uint64_t a, uint64_t b)
{
    return shmemi_float_to_bfloat16(shmemi_bfloat16_to_float((uint16_t)a) +
                                    shmemi_bfloat16_to_float((uint16_t)b));
}

static uint64_t add(const shmemi_amo_t *a, uint64_t old)
{
    switch (a->kind) {
    case SHMEMI_AMO_FLOAT:
        return a->width == 8 ? add_double(old, a->value) : add_float(old, a->value);
    case SHMEMI_AMO_HALF:
        return add_half(old, a->value);
    case SHMEMI_AMO_BFLOAT16:
        return add_bfloat16(old, a->value);
    default:
        return old + a->value; /* unsigned: wraps, as two's complement addition does */
    }
}

uint64_t shmemi_amo_result(const shmemi_amo_t *a, uint64_t old)
{
    uint64_t mask = width_mask(a->width), now;
    old &= mask;
    switch (a->op) {
    case SHMEMI_AMO_SET:
    case SHMEMI_AMO_SWAP:
        now = a->value;
        break;
    case SHMEMI_AMO_CSWAP:
        now = old == (a->cond & mask) ? a->value : old;
        break;
    case SHMEMI_AMO_ADD:
        now = add(a, old);
        break;
    case SHMEMI_AMO_AND:
        now = old & a->value;
        break;
    case SHMEMI_AMO_OR:
        now = old | a->value;
        break;
    case SHMEMI_AMO_XOR:
        now = old ^ a->value;
        break;
    default: /* FETCH */
        now = old;
    }
    return now & mask;
}
