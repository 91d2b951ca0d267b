/* Library setup, exit and query: shmem_init and shmem_finalize over the instance of
 * init/init.c, the job's place from the launcher (openshmem/launch.c), version and name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/init.h"
#include "core/error.h"
#include "core/instance.h"
#include "core/log.h"
#include "openshmem/launch.h"
#include "openshmem/osh.h"

/* Joins the job of the launcher's environment (or a job of one PE) as instance 0.  A second
 * call while the library is initialised changes nothing (OpenSHMEM leaves it undefined;
 * start_pes programs made it a no-op). */
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
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
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

void shmem_finalize(void)
{
    shmemi_instance_t *inst = shmemi_require("shmem_finalize");
    if (inst)
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
