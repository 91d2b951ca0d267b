#include "prof/prof.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "base/error.h"
#include "core/thread.h"

static aclshmem_prof_pe_t unprofiled = {.pe_id = -1};

uint64_t shmemi_prof_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

int shmemi_prof_init(shmemi_instance_t *inst)
{
    const char *env = getenv("SHMEM_CYCLE_PROF_PE");
    char *end;
    long pe = env && *env ? strtol(env, &end, 10) : -1;
    if (!env || !*env || *end || pe != inst->my_pe)
        return ACLSHMEM_SUCCESS;
    inst->prof = calloc(1, sizeof(aclshmem_prof_pe_t));
    if (!inst->prof)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for the profile");
    inst->prof->pe_id = inst->my_pe;
    return ACLSHMEM_SUCCESS;
}

/* Blocks of a kernel each own a row; the host counts as block 0. */
static void record(aclshmem_prof_pe_t *prof, uint32_t frame, uint64_t cycles)
{
    uint32_t block = shmemi_thread_block_idx();
    if (block >= ACLSHMEM_CYCLE_PROF_MAX_BLOCK || frame >= ACLSHMEM_CYCLE_PROF_FRAME_CNT)
        return;
    aclshmem_prof_block_t *row = &prof->block_prof[block];
    /* Host threads and a kernel's block 0 may share a row: add atomically. */
    __atomic_fetch_add(&row->ccount[frame], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&row->cycles[frame], (int64_t)cycles, __ATOMIC_RELAXED);
}

void shmemi_prof_end_frame(shmemi_instance_t *inst, uint32_t frame, uint64_t start)
{
    if (start && inst->prof)
        record(inst->prof, frame, shmemi_prof_cycles() - start);
}

static _Thread_local uint64_t user_start[SHMEMI_FRAME_FIRST_LIBRARY];

void shmemi_prof_user_start(shmemi_instance_t *inst, uint32_t frame)
{
    user_start[frame] = shmemi_prof_begin(inst);
}

void shmemi_prof_user_end(shmemi_instance_t *inst, uint32_t frame)
{
    if (inst)
        shmemi_prof_end_frame(inst, frame, user_start[frame]);
    user_start[frame] = 0;
}

static void print_profile(const aclshmem_prof_pe_t *prof)
{
    static const char *const library_frames[] = {"put", "get", "put_signal", "signal_op", "wait",
                                                 "barrier", "quiet", "alloc"};
    if (prof->pe_id < 0) {
        printf("aclshmem profile: this PE is not profiled (set SHMEM_CYCLE_PROF_PE)\n");
        return;
    }
    printf("aclshmem profile of PE %d\n%6s %6s %-12s %12s %16s %14s\n", prof->pe_id, "block", "frame", "name",
           "count", "cycles", "cycles/call");
    for (int b = 0; b < ACLSHMEM_CYCLE_PROF_MAX_BLOCK; b++) {
        for (int f = 0; f < ACLSHMEM_CYCLE_PROF_FRAME_CNT; f++) {
            int64_t count = prof->block_prof[b].ccount[f], cycles = prof->block_prof[b].cycles[f];
            if (!count)
                continue;
            int lib = f - SHMEMI_FRAME_FIRST_LIBRARY;
            const char *name = lib >= 0 && lib < (int)(sizeof(library_frames) / sizeof(library_frames[0]))
                                   ? library_frames[lib]
                                   : "user";
            printf("%6d %6d %-12s %12lld %16lld %14lld\n", b, f, name, (long long)count, (long long)cycles,
                   (long long)(cycles / count));
        }
    }
    fflush(stdout);
}

void shmemi_prof_get(shmemi_instance_t *inst, aclshmem_prof_pe_t **out_profs, bool verbose)
{
    aclshmem_prof_pe_t *prof = inst->prof ? inst->prof : &unprofiled;
    if (out_profs)
        *out_profs = prof;
    if (verbose)
        print_profile(prof);
}
