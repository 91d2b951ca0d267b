/* What the OpenSHMEM entry points (the .c files of src/openshmem) share.  Each entry point is thin: it
 * checks what only the OpenSHMEM API knows (contexts, team handles, its own constants),
 * then makes one call into the units below, passing its own name for the error messages. */
#ifndef SHMEMI_OSH_H
#define SHMEMI_OSH_H

#include "shmem.h"
#include "shmemx.h"

/* Defines pshmem_<name>, the profiling name of shmem_<name>: a weak alias of the same code,
 * so a profiling library may define shmem_<name> itself and call pshmem_<name>. */
#define SHMEMI_PROFILED(fn) extern __typeof__(fn) p##fn __attribute__((weak, alias(#fn), visibility("default")));

#endif
