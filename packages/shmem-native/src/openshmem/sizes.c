/* Byte sizes as people write them: see sizes.h (and shmem/_sizes.py, its Python twin). */
#include "openshmem/sizes.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

/* A fraction has at most this many digits that matter: with more (trailing zeros
 * dropped) it is never a whole number of bytes, even in T (see fraction_bytes). */
#define MAX_FRACTION_DIGITS 40

static const char *skip_blanks(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

static const char *skip_digits(const char *p)
{
    while (isdigit((unsigned char)*p))
        p++;
    return p;
}

/* The unit at p ("", "B", or K/M/G/T followed by "", "B" or "iB", any case): its power of
 * two in *shift; returns where it ends. */
static const char *parse_unit(const char *p, unsigned *shift)
{
    static const char letters[] = "KMGT";
    const char *letter = *p ? strchr(letters, toupper((unsigned char)*p)) : NULL;
    *shift = 0;
    if (!letter)
        return toupper((unsigned char)*p) == 'B' ? p + 1 : p;
    *shift = 10u * (unsigned)(letter - letters + 1);
    p++;
    if (toupper((unsigned char)p[0]) == 'I' && toupper((unsigned char)p[1]) == 'B')
        return p + 2;
    return toupper((unsigned char)*p) == 'B' ? p + 1 : p;
}

/* The whole part [begin, end) times 2**shift, or SHMEMI_SIZE_TOO_LARGE. */
static shmemi_size_status_t whole_bytes(const char *begin, const char *end, unsigned shift, uint64_t *out)
{
    uint64_t value = 0;
    for (const char *p = begin; p < end; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return SHMEMI_SIZE_TOO_LARGE;
        value = value * 10 + digit;
    }
    if (value > (UINT64_MAX >> shift))
        return SHMEMI_SIZE_TOO_LARGE;
    *out = value << shift;
    return SHMEMI_SIZE_OK;
}

/* Divides the decimal number digits[0..n) (values 0..9) by 5 in place; whether it divided
 * exactly. */
static int divide_by_5(unsigned char *digits, size_t n)
{
    unsigned rest = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned part = rest * 10 + digits[i];
        digits[i] = (unsigned char)(part / 5);
        rest = part % 5;
    }
    return rest == 0;
}

/* The bytes of the fraction 0.[begin, end) times 2**shift, exactly, or NOT_WHOLE.
 *
 * With k digits after trailing zeros are dropped, the fraction is f / 10**k and the bytes
 * f * 2**shift / (2**k * 5**k).  That is whole only when 5**k divides f; then f ends in 5,
 * so f is odd and 2**k must divide 2**shift: k <= shift (at most 40, for T).  So: divide f
 * by 5, k times, each exactly; what is left, q < 10**k / 5**k = 2**k, fits in 64 bits, and
 * the bytes are q * 2**(shift - k).  No arithmetic wider than 64 bits is needed. */
static shmemi_size_status_t fraction_bytes(const char *begin, const char *end, unsigned shift, uint64_t *out)
{
    while (end > begin && end[-1] == '0')
        end--;
    size_t k = (size_t)(end - begin);
    *out = 0;
    if (k == 0)
        return SHMEMI_SIZE_OK;
    if (k > shift || k > MAX_FRACTION_DIGITS)
        return SHMEMI_SIZE_NOT_WHOLE;
    unsigned char digits[MAX_FRACTION_DIGITS];
    for (size_t i = 0; i < k; i++)
        digits[i] = (unsigned char)(begin[i] - '0');
    for (size_t i = 0; i < k; i++)
        if (!divide_by_5(digits, k))
            return SHMEMI_SIZE_NOT_WHOLE;
    uint64_t q = 0;
    for (size_t i = 0; i < k; i++)
        q = q * 10 + digits[i];
    *out = q << (shift - k);
    return SHMEMI_SIZE_OK;
}

shmemi_size_status_t shmemi_parse_size(const char *text, uint64_t *bytes)
{
    if (!text)
        return SHMEMI_SIZE_NOT_A_SIZE;
    const char *whole = skip_blanks(text);
    const char *whole_end = skip_digits(whole);
    const char *fraction = whole_end, *fraction_end = whole_end;
    if (*whole_end == '.') {
        fraction = whole_end + 1;
        fraction_end = skip_digits(fraction);
    }
    if (whole_end == whole && fraction_end == fraction) /* no digit at all */
        return SHMEMI_SIZE_NOT_A_SIZE;
    unsigned shift;
    const char *rest = skip_blanks(parse_unit(skip_blanks(fraction_end), &shift));
    if (*rest)
        return SHMEMI_SIZE_NOT_A_SIZE;
    uint64_t high, low;
    shmemi_size_status_t status = whole_bytes(whole, whole_end, shift, &high);
    if (status == SHMEMI_SIZE_OK)
        status = fraction_bytes(fraction, fraction_end, shift, &low);
    if (status == SHMEMI_SIZE_OK && high > UINT64_MAX - low)
        status = SHMEMI_SIZE_TOO_LARGE;
    if (status == SHMEMI_SIZE_OK)
        *bytes = high + low;
    return status;
}

const char *shmemi_size_status_text(shmemi_size_status_t status)
{
    switch (status) {
    case SHMEMI_SIZE_OK:
        return "a size";
    case SHMEMI_SIZE_NOT_WHOLE:
        return "not a whole number of bytes";
    case SHMEMI_SIZE_TOO_LARGE:
        return "too large: more than 2**64 - 1 bytes";
    case SHMEMI_SIZE_NOT_A_SIZE:
    default:
        return "not a size (a number of bytes, optionally with a binary unit: 8, 4K, 64MiB, 1.5G)";
    }
}
