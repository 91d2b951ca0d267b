/*
 * shmem.h - the OpenSHMEM 1.5 C API of libaclshmem.
 *
 * The shmem_* functions of the OpenSHMEM 1.5 specification, over the same engine as the
 * aclshmem_* API of aclshmem.h: every process is a PE, the symmetric heap is shmem_malloc's,
 * and puts, gets and atomics reach the other PEs through shared memory on one node and
 * through UCX across nodes.  shmem_init() takes its place in the job from the launcher
 * (oshrun); a program started without one is a job of one PE.  Link with -laclshmem
 * (oshcc does it, or pkg-config --cflags --libs aclshmem).
 *
 * Every function also has its profiling name pshmem_* (a weak alias of the same code).
 * A call that cannot be carried out (an address that is not symmetric, a PE out of range,
 * a destroyed team or context, the library not initialised) does nothing, logs an error
 * naming the call and leaves its text in shmemx_get_last_error() (shmemx.h); functions
 * that return a status return nonzero.
 *
 * The typed families are declared once, as X-macro templates expanded over the type
 * tables below, so the list of types of each family is written in one place; the
 * compiler sees ordinary prototypes (gcc -E shows them).
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SHMEMI_API __attribute__((visibility("default")))
#else
#define SHMEMI_API
#endif

/* ---- versions and constants ---------------------------------------------- */
/* The OpenSHMEM specification this header implements (the aclshmem API has its own). */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256 /* bytes of shmem_info_get_name's text, the NUL included */
#define SHMEM_VENDOR_STRING "libaclshmem (SHMEM for every Linux machine)"

/* ---- library setup, exit and query --------------------------------------- */
/** Collective: joins the job the launcher started (SHMEM_RUN_UID, SHMEM_RUN_PE,
 *  SHMEM_RUN_NPES; heap size SHMEM_SYMMETRIC_SIZE) or, without a launcher, makes a job of
 *  one PE.  A failure is fatal: the message is printed and the process exits with 1. */
SHMEMI_API void shmem_init(void);
/** Collective: completes every operation, waits for every PE and releases the library. */
SHMEMI_API void shmem_finalize(void);
/** This PE's number in SHMEM_TEAM_WORLD; -1 before shmem_init. */
SHMEMI_API int shmem_my_pe(void);
/** The number of PEs of SHMEM_TEAM_WORLD; -1 before shmem_init. */
SHMEMI_API int shmem_n_pes(void);
/** The specification's version: 1.5. */
SHMEMI_API void shmem_info_get_version(int *major, int *minor);
/** Copies SHMEM_VENDOR_STRING (at most SHMEM_MAX_NAME_LEN bytes with the NUL) to name. */
SHMEMI_API void shmem_info_get_name(char *name);

/* ---- memory management ------------------------------------------------------ */
/* Collective: every PE makes the same call.  NULL, with an error, when the heap has no
 * room or the PEs asked for different things (then nothing was allocated anywhere). */
SHMEMI_API void *shmem_malloc(size_t size);
/** Collective: frees a block of shmem_malloc (NULL: nothing, on every PE). */
SHMEMI_API void shmem_free(void *ptr);

/* ---- remote memory access ------------------------------------------------------ */
/* nelems bytes from source to dest on pe (put: dest symmetric) or back (get: source
 * symmetric); complete when they return. */
SHMEMI_API void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
SHMEMI_API void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);

/* ---- barriers ------------------------------------------------------------------ */
/** Collective over SHMEM_TEAM_WORLD: completes this PE's operations, then waits for
 *  every PE. */
SHMEMI_API void shmem_barrier_all(void);

#ifdef __cplusplus
}
#endif
#endif /* SHMEM_H */
