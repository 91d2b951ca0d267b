/* The AMO engine every public atomic goes through: validate, then the peer's transport. */
#ifndef SHMEMI_AMO_H
#define SHMEMI_AMO_H

#include <stdint.h>

#include "transport/transport.h"

/* Applies a to the word at the symmetric address dst on pe, on the active instance, and
 * wakes pe's waiters when the word may have changed.  *fetched (if not NULL) gets the old
 * value, or 0 when the call fails.  Fails, with a last error naming api and nothing
 * changed, when the library is not initialised, pe is not a PE of the job, or
 * [dst, dst + a->width) is not inside a symmetric heap or not aligned to a->width. */
int shmemi_amo(const char *api, const void *dst, const shmemi_amo_t *a, int pe, uint64_t *fetched);

#endif
