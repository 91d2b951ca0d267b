/*
 * shmemx.h - what libaclshmem adds to the OpenSHMEM 1.5 API of shmem.h.
 *
 * Extensions carry the shmemx_ prefix the specification reserves for them, so a program
 * that uses them says so by including this header.
 */
#ifndef SHMEMX_H
#define SHMEMX_H

#include "shmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---------------------------------------------------------------------- */
/** The message of the calling thread's last failing call ("" if none), such as
 *  "shmem_int_put: PE 7 is not in 0..3 (ACLSHMEM_INVALID_PARAM)".  A call that succeeds
 *  leaves it alone: clear it first to learn whether one void call failed. */
SHMEMI_API const char *shmemx_get_last_error(void);
/** Forgets the calling thread's last error. */
SHMEMI_API void shmemx_clear_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* SHMEMX_H */
