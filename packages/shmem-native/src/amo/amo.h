/* The AMO engine every public atomic goes through: validate, then the peer's transport. */
#ifndef SHMEMI_AMO_H
#define SHMEMI_AMO_H

#include <stdint.h>
#include <string.h>

#include "transport/transport.h"

/* Applies a to the word at the symmetric address dst on pe, on the active instance, and
 * wakes pe's waiters when the word may have changed.  *fetched (if not NULL) gets the old
 * value, or 0 when the call fails.  Fails, with a last error naming api and nothing
 * changed, when the library is not initialised, pe is not a PE of the job, or
 * [dst, dst + a->width) is not inside a symmetric heap or not aligned to a->width. */
int shmemi_amo(const char *api, shmemi_channel_t *ch, const void *dst, const shmemi_amo_t *a, int pe,
               uint64_t *fetched);

/* The bit pattern of the value of size 1, 2, 4 or 8 bytes at value, zero-extended (what
 * shmemi_amo_t carries), and back. */
static inline uint64_t shmemi_amo_bits(const void *value, size_t size)
{
    uint8_t b1;
    uint16_t b2;
    uint32_t b4;
    uint64_t b8;
    switch (size) {
    case 1:
        memcpy(&b1, value, 1);
        return b1;
    case 2:
        memcpy(&b2, value, 2);
        return b2;
    case 4:
        memcpy(&b4, value, 4);
        return b4;
    default:
        memcpy(&b8, value, 8);
        return b8;
    }
}

static inline void shmemi_amo_value(uint64_t bits, void *value, size_t size)
{
    uint8_t b1 = (uint8_t)bits;
    uint16_t b2 = (uint16_t)bits;
    uint32_t b4 = (uint32_t)bits;
    switch (size) {
    case 1:
        memcpy(value, &b1, 1);
        break;
    case 2:
        memcpy(value, &b2, 2);
        break;
    case 4:
        memcpy(value, &b4, 4);
        break;
    default:
        memcpy(value, &bits, 8);
    }
}

#endif
