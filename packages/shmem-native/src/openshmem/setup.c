/* Library setup, exit and query: shmem_init and shmem_finalize over the instance of
 * init/init.c, the job's place from the launcher (openshmem/launch.c), thread levels,
 * version and name, global exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/init.h"
#include "base/error.h"
#include "core/instance.h"
#include "base/log.h"
#include "init/init.h"
#include "openshmem/launch.h"
#include "openshmem/osh.h"

/* The thread level of the library once initialised: every level is supported (the engine
 * serves any thread at any time), so shmem_init_thread provides the highest. */
static _Atomic int thread_level = SHMEM_THREAD_MULTIPLE;

/* Joins the job of the launcher's environment (or a job of one PE) as instance 0, with the
 * program's global and static variables symmetric (OpenSHMEM requires it), then builds what
 * the OpenSHMEM API adds (SHMEM_TEAM_SHARED).  A second call while the library
 * is initialised changes nothing (OpenSHMEM leaves it undefined; start_pes programs made it
 * a no-op). */
static int init_from_env(const char *api)
{
    if (aclshmemx_init_status() == ACLSHMEM_STATUS_IS_INITIALIZED) {
        SHMEMI_WARN("%s: the library is already initialized; the call changes nothing", api);
        return ACLSHMEM_SUCCESS;
    }
    shmemi_osh_job_t job;
    SHMEMI_TRY(shmemi_osh_job_from_env(&job));
    aclshmemx_uniqueid_t uid;
    memcpy(&uid, job.uid, sizeof(uid));
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    SHMEMI_TRY(aclshmemx_set_attr_uniqueid_args(job.pe, job.n_pes, (int64_t)job.heap_size, &uid, &attr));
    const shmemi_init_options_t options = {.share_data_segment = 1};
    SHMEMI_TRY(shmemi_init_with_options(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr, &options));
    int rc = shmemi_osh_teams_init(shmemi_active());
    if (rc != ACLSHMEM_SUCCESS)
        aclshmem_finalize();
    return rc;
}

void shmem_init(void)
{
    if (init_from_env("shmem_init") == ACLSHMEM_SUCCESS)
        return;
    /* shmem_init has no way to report a failure, and nothing can work after it. */
    fprintf(stderr, "shmem_init failed: %s\n", aclshmemx_get_last_error());
    fflush(NULL);
    exit(EXIT_FAILURE);
}
SHMEMI_PROFILED(shmem_init)

int shmem_init_thread(int requested, int *provided)
{
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "shmem_init_thread: requested %d is not a SHMEM_THREAD_* level",
                           requested);
    if (init_from_env("shmem_init_thread") != ACLSHMEM_SUCCESS)
        return -1;
    if (provided)
        *provided = atomic_load(&thread_level);
    return 0;
}
SHMEMI_PROFILED(shmem_init_thread)

void shmem_query_thread(int *provided)
{
    if (!provided) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "shmem_query_thread: provided is NULL");
        return;
    }
    if (shmemi_require("shmem_query_thread"))
        *provided = atomic_load(&thread_level);
}
SHMEMI_PROFILED(shmem_query_thread)

void shmem_finalize(void)
{
    shmemi_instance_t *inst = shmemi_require("shmem_finalize");
    if (!inst)
        return;
    shmemi_osh_contexts_fini(inst);
    shmemi_osh_teams_fini();
    shmemi_osh_active_sets_fini();
    aclshmem_finalize();
}
SHMEMI_PROFILED(shmem_finalize)

int shmem_my_pe(void)
{
    shmemi_instance_t *inst = shmemi_require("shmem_my_pe");
    return inst ? inst->my_pe : -1;
}
SHMEMI_PROFILED(shmem_my_pe)

int shmem_n_pes(void)
{
    shmemi_instance_t *inst = shmemi_require("shmem_n_pes");
    return inst ? inst->n_pes : -1;
}
SHMEMI_PROFILED(shmem_n_pes)

void shmem_info_get_version(int *major, int *minor)
{
    if (!major || !minor) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "shmem_info_get_version: major or minor is NULL");
        return;
    }
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}
SHMEMI_PROFILED(shmem_info_get_version)

void shmem_info_get_name(char *name)
{
    if (!name) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "shmem_info_get_name: name is NULL");
        return;
    }
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}
SHMEMI_PROFILED(shmem_info_get_name)

void shmem_global_exit(int status)
{
    aclshmem_global_exit(status);
    _exit(status); /* not reached: aclshmem_global_exit ends the process */
}
extern __typeof__(shmem_global_exit) pshmem_global_exit
    __attribute__((weak, noreturn, alias("shmem_global_exit"), visibility("default")));

/* Profiling control: levels 0 (off) .. 2 (detailed) and above are the profiler's; there is
 * no profiling library behind the calls here, so every level is accepted and changes
 * nothing. */
void shmem_pcontrol(int level, ...)
{
    (void)level;
}
SHMEMI_PROFILED(shmem_pcontrol)

const char *shmemx_get_last_error(void)
{
    return aclshmemx_get_last_error();
}
SHMEMI_PROFILED(shmemx_get_last_error)

void shmemx_clear_last_error(void)
{
    shmemi_clear_error();
}
SHMEMI_PROFILED(shmemx_clear_last_error)
