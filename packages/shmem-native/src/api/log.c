/* The entry points of aclshmem/log.h: each checks its arguments, then makes one call into
 * the log (base/log.c) or the cycle profiler (prof/prof.c). */
#include "aclshmem/log.h"

#include "base/error.h"
#include "base/log.h"
#include "core/instance.h"
#include "prof/prof.h"

int32_t aclshmemx_set_log_level(int level)
{
    if (level < SHMEMI_LOG_DEBUG || level > SHMEMI_LOG_FATAL)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "aclshmemx_set_log_level: level %d is not in 0 (debug) .. 4 (fatal)", level);
    shmemi_log_set_level(level);
    return ACLSHMEM_SUCCESS;
}

int32_t aclshmemx_set_extern_logger(void (*func)(int level, const char *msg))
{
    shmemi_log_set_extern_logger(func); /* NULL is valid: the default output again */
    return ACLSHMEM_SUCCESS;
}

void aclshmemx_get_prof(aclshmem_prof_pe_t **out_profs, bool verbose)
{
    shmemi_instance_t *inst = shmemi_require("aclshmemx_get_prof");
    if (inst)
        shmemi_prof_get(inst, out_profs, verbose);
}

void aclshmemx_show_prof(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmemx_show_prof");
    if (inst)
        shmemi_prof_get(inst, NULL, true);
}

static int is_user_frame(uint32_t frame, const char *api)
{
    if (frame < SHMEMI_FRAME_FIRST_LIBRARY)
        return 1;
    shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: frame %u is not a user frame (0..%d)", api, frame,
                SHMEMI_FRAME_FIRST_LIBRARY - 1);
    return 0;
}

void aclshmemx_prof_start(uint32_t frame)
{
    if (is_user_frame(frame, "aclshmemx_prof_start"))
        shmemi_prof_user_start(shmemi_active(), frame);
}

void aclshmemx_prof_end(uint32_t frame)
{
    if (is_user_frame(frame, "aclshmemx_prof_end"))
        shmemi_prof_user_end(shmemi_active(), frame);
}
