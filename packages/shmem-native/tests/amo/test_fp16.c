/*
 * test_fp16.c - the library's half and bfloat16 conversions (src/core/fp16.c) and the AMO
 * arithmetic (src/transport/amo_math.c), compiled in from the sources: they are internal.
 * Exhaustive over the 65536 patterns of each type (values, round trips through float, the
 * midpoints between neighbours and the floats next to them), against fp_ref.h and, where
 * the compiler has it, _Float16; plus a sample of all floats and of half and bfloat16 sums.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp16.h"
#include "fp_ref.h"
#include "transport/transport.h"

static int failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && failures++ < 20) {                                                      \
            printf("%s:%d: ", __FILE__, __LINE__);                                             \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

static uint32_t float_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float float_from(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* A NaN's float payload is the 16-bit one shifted to the top of float's mantissa. */
static uint32_t widened_bits(ref_format fmt, uint16_t b)
{
    uint32_t man = b & ((1u << fmt.man_bits) - 1);
    return (uint32_t)(b & 0x8000) << 16 | 0x7f800000u | man << (23 - fmt.man_bits);
}

typedef struct {
    const char *name;
    ref_format fmt;
    float (*widen)(uint16_t);
    uint16_t (*narrow)(float);
} format_under_test;

/* Every pattern: its float is the reference value (NaNs keep their payload bit for bit)
 * and narrowing it back gives the same pattern. */
static void every_pattern(const format_under_test *t)
{
    for (uint32_t b = 0; b <= 0xffff; b++) {
        float f = t->widen((uint16_t)b);
        if (ref_is_nan(t->fmt, (uint16_t)b))
            CHECK(float_bits(f) == widened_bits(t->fmt, (uint16_t)b), "%s 0x%04x: NaN widened to 0x%08x",
                  t->name, b, float_bits(f));
        else
            CHECK((double)f == ref_value(t->fmt, (uint16_t)b) && !!signbit(f) == !!(b & 0x8000),
                  "%s 0x%04x: %.9g, want %.9g", t->name, b, f, ref_value(t->fmt, (uint16_t)b));
        uint16_t back = t->narrow(f);
        CHECK(back == b, "%s 0x%04x: round trip gives 0x%04x", t->name, b, back);
    }
}

/* Between every two neighbours of the same sign (the largest finite value and infinity
 * too): the exact midpoint rounds to the even one, the floats next to it to the nearer. */
static void every_midpoint(const format_under_test *t)
{
    uint16_t inf = ref_exp_all_ones(t->fmt);
    for (uint32_t sign = 0; sign <= 0x8000; sign += 0x8000) {
        for (uint32_t b = 0; b < inf; b++) {
            uint16_t lo = (uint16_t)(sign | b), hi = (uint16_t)(lo + 1);
            double vlo = ref_value(t->fmt, lo);
            /* past the largest finite value, the next step would be 2^(emax+1) */
            double vhi = hi == (sign | inf) ? (sign ? -1 : 1) * ldexp(1, ref_bias(t->fmt) + 1)
                                            : ref_value(t->fmt, hi);
            float mid = (float)((vlo + vhi) / 2); /* exact: one more bit than the format */
            CHECK((double)mid == (vlo + vhi) / 2, "%s: midpoint of 0x%04x not exact", t->name, lo);
            uint16_t even = (lo & 1) ? hi : lo;
            uint16_t got = t->narrow(mid);
            CHECK(got == even, "%s: midpoint of 0x%04x..0x%04x gives 0x%04x, want 0x%04x", t->name, lo, hi, got,
                  even);
            float below = nextafterf(mid, (float)vlo), above = nextafterf(mid, (float)vhi);
            CHECK(t->narrow(below) == lo, "%s: just past the midpoint towards 0x%04x gives 0x%04x", t->name, lo,
                  t->narrow(below));
            CHECK(t->narrow(above) == hi, "%s: just past the midpoint towards 0x%04x gives 0x%04x", t->name, hi,
                  t->narrow(above));
        }
    }
}

/* A sample of every float (every 65521st pattern, a prime, so all exponents and low bits). */
static void float_sample(const format_under_test *t)
{
    for (uint64_t x = 0; x <= 0xffffffffu; x += 65521) {
        float f = float_from((uint32_t)x);
        uint16_t got = t->narrow(f), want = ref_round(t->fmt, f);
        if (isnan(f))
            CHECK(ref_is_nan(t->fmt, got) && (got & 0x8000) == (x >> 16 & 0x8000), "%s: NaN 0x%08x gives 0x%04x",
                  t->name, (uint32_t)x, got);
        else
            CHECK(got == want, "%s: %.9g (0x%08x) gives 0x%04x, want 0x%04x", t->name, f, (uint32_t)x, got, want);
#ifdef __FLT16_MAX__
        if (t->fmt.man_bits == 10 && !isnan(f)) {
            _Float16 h = (_Float16)f;
            uint16_t hb;
            memcpy(&hb, &h, sizeof hb);
            CHECK(got == hb, "half: %.9g gives 0x%04x, the compiler's _Float16 0x%04x", f, got, hb);
        }
#endif
    }
}

/* fetch_add's arithmetic: a + b for every pattern a and a spread of b, against the exact
 * sum (a double holds it when the exponents are less than 40 apart) rounded once. */
static void sums(const format_under_test *t, shmemi_amo_kind_t kind)
{
    shmemi_amo_t add = {.op = SHMEMI_AMO_ADD, .kind = kind, .width = 2};
    for (uint32_t a = 0; a <= 0xffff; a++) {
        for (uint32_t b = 0x0001; b <= 0xffff; b += 1031) {
            double va = ref_value(t->fmt, (uint16_t)a), vb = ref_value(t->fmt, (uint16_t)b);
            add.value = b;
            uint16_t got = (uint16_t)shmemi_amo_result(&add, a);
            if (isnan(va) || isnan(vb) || (isinf(va) && isinf(vb) && va != vb)) {
                CHECK(ref_is_nan(t->fmt, got), "%s: 0x%04x + 0x%04x gives 0x%04x, want NaN", t->name, a, b, got);
                continue;
            }
            int ea, eb;
            frexp(va, &ea);
            frexp(vb, &eb);
            if (va != 0 && vb != 0 && !isinf(va) && !isinf(vb) && abs(ea - eb) >= 40)
                continue;
            uint16_t want = ref_round(t->fmt, va + vb);
            /* x + (-x) is +0 under round-to-nearest; the reference's double sum agrees. */
            CHECK(got == want, "%s: 0x%04x + 0x%04x gives 0x%04x, want 0x%04x", t->name, a, b, got, want);
        }
    }
}

/* The non-arithmetic operations move bits, masked to the width. */
static void bit_operations(void)
{
    shmemi_amo_t a = {.kind = SHMEMI_AMO_INT, .width = 1, .value = 0x1f0, .cond = 0x1aa};
    a.op = SHMEMI_AMO_SET;
    CHECK(shmemi_amo_result(&a, 0x55) == 0xf0, "set: not masked to 1 byte");
    a.op = SHMEMI_AMO_CSWAP;
    CHECK(shmemi_amo_result(&a, 0xaa) == 0xf0, "cswap: cond compared beyond the width");
    CHECK(shmemi_amo_result(&a, 0xab) == 0xab, "cswap: swapped on a mismatch");
    a.op = SHMEMI_AMO_ADD;
    CHECK(shmemi_amo_result(&a, 0x20) == 0x10, "int add: no wrap at the width");
    a.op = SHMEMI_AMO_XOR;
    CHECK(shmemi_amo_result(&a, 0xff) == 0x0f, "xor");
    a.width = 8;
    a.value = UINT64_MAX;
    a.op = SHMEMI_AMO_ADD;
    CHECK(shmemi_amo_result(&a, 1) == 0, "int64 add: no wrap");
    a.kind = SHMEMI_AMO_FLOAT;
    double x = 0.1, y = 0.2, sum = x + y;
    memcpy(&a.value, &y, 8);
    uint64_t xb, sb;
    memcpy(&xb, &x, 8);
    memcpy(&sb, &sum, 8);
    CHECK(shmemi_amo_result(&a, xb) == sb, "double add");
    a.width = 4;
    float fx = 0.1f, fy = 0.2f, fs = fx + fy;
    a.value = float_bits(fy);
    CHECK(shmemi_amo_result(&a, float_bits(fx)) == float_bits(fs), "float add");
}

int main(void)
{
    const format_under_test half = {"half", REF_HALF, shmemi_half_to_float, shmemi_float_to_half};
    const format_under_test bf16 = {"bfloat16", REF_BF16, shmemi_bfloat16_to_float, shmemi_float_to_bfloat16};
    const format_under_test *formats[] = {&half, &bf16};
    for (int i = 0; i < 2; i++) {
        every_pattern(formats[i]);
        every_midpoint(formats[i]);
        float_sample(formats[i]);
    }
    sums(&half, SHMEMI_AMO_HALF);
    sums(&bf16, SHMEMI_AMO_BFLOAT16);
    bit_operations();
    if (failures)
        printf("test_fp16: %d failures\n", failures);
    else
        printf("test_fp16: ok\n");
    return failures != 0;
}
