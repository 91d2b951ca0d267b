/* Where an OpenSHMEM program's shmem_init() finds its place in the job.
 *
 * A launcher (oshrun / shmemrun, or python -m shmem.run) makes the job's unique ID and
 * starts every PE with:
 *
 *     SHMEM_RUN_UID        the 136-byte unique ID, hex (272 digits)
 *     SHMEM_RUN_PE         this PE's number, 0 .. SHMEM_RUN_NPES - 1
 *     SHMEM_RUN_NPES       the number of PEs
 *     SHMEM_RUN_MEM_SIZE   optional: the heap size of --mem-size
 *
 * The symmetric heap size is SHMEM_SYMMETRIC_SIZE (OpenSHMEM's own variable), else
 * SHMEM_RUN_MEM_SIZE, else SHMEMI_OSH_DEFAULT_HEAP_SIZE; both variables take the sizes of
 * openshmem/sizes.h ("64M", "1.5G", ...).  A program started without a launcher (no
 * SHMEM_RUN_* variable set) is a job of one PE, with a unique ID made here, as under
 * other OpenSHMEM implementations. */
#ifndef SHMEMI_OSH_LAUNCH_H
#define SHMEMI_OSH_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

/* The heap size when neither variable gives one (Open MPI's OSHMEM defaults to 256 MiB,
 * Sandia OpenSHMEM to 512 MiB; the heaps are sparse memfds, so only pages used cost). */
#define SHMEMI_OSH_DEFAULT_HEAP_SIZE ((size_t)128 << 20)

#define SHMEMI_OSH_UID_SIZE 136

typedef struct {
    int pe, n_pes;
    uint8_t uid[SHMEMI_OSH_UID_SIZE]; /* an aclshmemx_uniqueid_t, byte for byte */
    size_t heap_size;
} shmemi_osh_job_t;

/* This process's place in a job: from the launcher's environment (SHMEM_RUN_UID hex,
 * SHMEM_RUN_PE, SHMEM_RUN_NPES; heap size from SHMEM_SYMMETRIC_SIZE, else
 * SHMEM_RUN_MEM_SIZE, else the library default), or, with no launcher, a job of one
 * PE with a unique ID made here.  ACLSHMEM_SUCCESS, or an error (recorded) that
 * names the variable that is wrong. */
int shmemi_osh_job_from_env(shmemi_osh_job_t *job);

#endif
