/* Byte sizes as people write them ("4096", "64M", "64 MiB", "1.5G"), in C: the twin of
 * shmem-core's shmem/_sizes.py, with the same rules, so that SHMEM_SYMMETRIC_SIZE,
 * SHMEM_RUN_MEM_SIZE and oshrun's --mem-size mean the same bytes to the C library, the
 * C launcher and the Python package.
 *
 * A size is a decimal number (digits, optionally a point and more digits, or a point and
 * digits), optional blanks, and an optional unit: B, or K, M, G, T followed by nothing,
 * B or iB, in any case.  Units are binary whatever their spelling (K, KB and KiB are all
 * 1024).  The result must be a whole number of bytes that fits in 64 bits.
 *
 * This file needs only the C library: the C launcher (programs/oshrun.c) compiles it too. */
#ifndef SHMEMI_OSH_SIZES_H
#define SHMEMI_OSH_SIZES_H

#include <stdint.h>

typedef enum {
    SHMEMI_SIZE_OK = 0,
    SHMEMI_SIZE_NOT_A_SIZE,  /* not of the form above */
    SHMEMI_SIZE_NOT_WHOLE,   /* "1.5" or "0.3K": a fraction of a byte */
    SHMEMI_SIZE_TOO_LARGE,   /* more than 2**64 - 1 bytes */
} shmemi_size_status_t;

/* Reads text into *bytes (left alone unless SHMEMI_SIZE_OK). */
shmemi_size_status_t shmemi_parse_size(const char *text, uint64_t *bytes);

/* What was wrong, to follow "VARIABLE=\"text\" is ", e.g. "not a size (a number of bytes,
 * optionally with a binary unit: 8, 4K, 64MiB, 1.5G)". */
const char *shmemi_size_status_text(shmemi_size_status_t status);

#endif
