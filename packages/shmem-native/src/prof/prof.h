/* Cycle profiling on the PE named by SHMEM_CYCLE_PROF_PE: counts and cycles per
 * (block, frame) in the instance's 64 x 1024 table.
 *
 * Frames 0 .. SHMEMI_FRAME_FIRST_LIBRARY - 1 belong to user kernels
 * (aclshmemx_prof_start / _end); the library records its own operations in the frames
 * below, so a profile shows both. */
#ifndef SHMEMI_PROF_H
#define SHMEMI_PROF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/instance.h"

enum {
    SHMEMI_FRAME_FIRST_LIBRARY = 1000,
    SHMEMI_FRAME_PUT = 1000,        /* putmem and every put family, incl. on-stream */
    SHMEMI_FRAME_GET = 1001,        /* getmem and every get family */
    SHMEMI_FRAME_PUT_SIGNAL = 1002, /* put-with-signal */
    SHMEMI_FRAME_SIGNAL_OP = 1003,  /* a signal SET / ADD */
    SHMEMI_FRAME_WAIT = 1004,       /* signal_wait_until and the wait families */
    SHMEMI_FRAME_BARRIER = 1005,    /* barrier / sync, host or stream */
    SHMEMI_FRAME_QUIET = 1006,      /* quiet / fence */
    SHMEMI_FRAME_ALLOC = 1007,      /* symmetric malloc / calloc / align / free */
};

/* Sets up inst->prof when SHMEM_CYCLE_PROF_PE names this PE. */
int shmemi_prof_init(shmemi_instance_t *inst);

uint64_t shmemi_prof_cycles(void);

/* User frames (frame < SHMEMI_FRAME_FIRST_LIBRARY, checked by the caller) of the calling
 * thread: start timing, and end adding one count and the cycles to inst's profile (inst
 * NULL: nothing is recorded). */
void shmemi_prof_user_start(shmemi_instance_t *inst, uint32_t frame);
void shmemi_prof_user_end(shmemi_instance_t *inst, uint32_t frame);

/* inst's profile (pe_id -1 unless SHMEM_CYCLE_PROF_PE names this PE) into *out_profs when
 * out_profs is not NULL; printed when verbose. */
void shmemi_prof_get(shmemi_instance_t *inst, aclshmem_prof_pe_t **out_profs, bool verbose);

/* Start of a library frame: 0 when this PE is not profiled (then end does nothing). */
static inline uint64_t shmemi_prof_begin(const shmemi_instance_t *inst)
{
    return inst && inst->prof ? shmemi_prof_cycles() : 0;
}

void shmemi_prof_end_frame(shmemi_instance_t *inst, uint32_t frame, uint64_t start);

#endif
