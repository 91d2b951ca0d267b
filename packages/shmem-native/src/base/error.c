#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "aclshmem/init.h"
#include "base/log.h"

static _Thread_local char last_error[512];
static _Thread_local shmemi_fail_hook_fn fail_hook;
static _Thread_local void *fail_hook_ctx;

void shmemi_set_fail_hook(shmemi_fail_hook_fn hook, void *ctx)
{
    fail_hook = hook;
    fail_hook_ctx = ctx;
}

int shmemi_fail(int code, const char *fmt, ...)
{
    char msg[sizeof(last_error) - 64]; /* room for the code name */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(last_error, sizeof(last_error), "%s (%s)", msg, shmemi_error_name(code));
    shmemi_log(SHMEMI_LOG_ERROR, "%s", last_error);
    if (fail_hook)
        fail_hook(fail_hook_ctx, code, msg);
    return code;
}

void shmemi_clear_error(void)
{
    last_error[0] = '\0';
}

const char *shmemi_last_error(void)
{
    return last_error;
}

const char *shmemi_error_name(int code)
{
    switch (code) {
    case ACLSHMEM_SUCCESS: return "ACLSHMEM_SUCCESS";
    case ACLSHMEM_INVALID_PARAM: return "ACLSHMEM_INVALID_PARAM";
    case ACLSHMEM_INVALID_VALUE: return "ACLSHMEM_INVALID_VALUE";
    case ACLSHMEM_SMEM_ERROR: return "ACLSHMEM_SMEM_ERROR";
    case ACLSHMEM_INNER_ERROR: return "ACLSHMEM_INNER_ERROR";
    case ACLSHMEM_NOT_INITED: return "ACLSHMEM_NOT_INITED";
    case ACLSHMEM_BOOTSTRAP_ERROR: return "ACLSHMEM_BOOTSTRAP_ERROR";
    case ACLSHMEM_TIMEOUT_ERROR: return "ACLSHMEM_TIMEOUT_ERROR";
    case ACLSHMEM_MALLOC_FAILED: return "ACLSHMEM_MALLOC_FAILED";
    case ACLSHMEM_DL_FUNC_FAILED: return "ACLSHMEM_DL_FUNC_FAILED";
    case ACLSHMEM_INNER_TIMEOUT: return "ACLSHMEM_INNER_TIMEOUT";
    case ACLSHMEM_UNDER_API_UNLOAD: return "ACLSHMEM_UNDER_API_UNLOAD";
    case ACLSHMEM_NOT_SUPPORTED: return "ACLSHMEM_NOT_SUPPORTED";
    default: return "unknown error";
    }
}
