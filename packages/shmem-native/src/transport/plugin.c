/* Loading transport plug-ins (see plugin.h). */
#include "transport/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/crypto.h"
#include "core/error.h"
#include "core/log.h"
#include "core/wait.h"

static int host_allgather(shmemi_instance_t *inst, uint64_t key, const void *in, size_t len, void *out)
{
    return shmemi_bootstrap_collective(inst->boot, key, inst->n_pes, inst->my_pe, in, len, out,
                                       inst->control_timeout_ms);
}

static void host_wake_local(shmemi_instance_t *inst)
{
    shmemi_doorbell_notify(shmemi_ctrl_of(inst, inst->my_pe));
}

static void host_put_local(shmemi_instance_t *inst, int seg, size_t offset, const void *src, size_t len)
{
    shmemi_transport_shm.put(inst, NULL, inst->my_pe, seg, offset, src, len);
}

static uint64_t host_amo_local(shmemi_instance_t *inst, int seg, size_t offset, const shmemi_amo_t *a)
{
    uint64_t old = 0;
    shmemi_transport_shm.amo(inst, NULL, inst->my_pe, seg, offset, a, &old);
    return old;
}

static int host_random(void *out, size_t len)
{
    if (shmemi_random_bytes(out, len) != 0)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "the kernel gave no random bytes (getrandom failed)");
    return ACLSHMEM_SUCCESS;
}

const shmemi_plugin_host_t shmemi_plugin_host = {
    .fail = shmemi_fail,
    .log = shmemi_log,
    .allgather = host_allgather,
    .check_alive = shmemi_check_alive,
    .wake_local = host_wake_local,
    .amo_result = shmemi_amo_result,
    .put_local = host_put_local,
    .amo_local = host_amo_local,
    .random = host_random,
};

/* SHMEM_UCX_PLUGIN, or the plug-in's file in the folder libaclshmem was loaded from (the
 * build tree's src/, the install's libdir, the wheel's .shmem_native.mesonpy.libs). */
static void plugin_path(char *path, size_t len)
{
    const char *forced = getenv(SHMEMI_UCX_PLUGIN_ENV);
    if (forced && *forced) {
        snprintf(path, len, "%s", forced);
        return;
    }
    Dl_info info;
    const char *self = dladdr((void *)shmemi_plugin_load_ucx, &info) && info.dli_fname ? info.dli_fname : "";
    const char *slash = strrchr(self, '/');
    if (slash)
        snprintf(path, len, "%.*s/%s", (int)(slash - self), self, SHMEMI_UCX_PLUGIN_FILE);
    else
        snprintf(path, len, "%s", SHMEMI_UCX_PLUGIN_FILE);
}

static const shmemi_plugin_t *open_plugin(const char *path, char *why, size_t why_len)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(why, why_len, "%s", dlerror());
        return NULL;
    }
    shmemi_plugin_entry_fn entry;
    *(void **)&entry = dlsym(handle, SHMEMI_PLUGIN_ENTRY);
    const shmemi_plugin_t *plugin = entry ? entry() : NULL;
    if (!plugin)
        snprintf(why, why_len, "%.512s is not a libaclshmem transport plug-in (no %s)", path, SHMEMI_PLUGIN_ENTRY);
    else if (plugin->abi != SHMEMI_PLUGIN_ABI || strcmp(plugin->version, SHMEMI_BUILD_VERSION) != 0)
        snprintf(why, why_len, "%.512s was built for libaclshmem %.32s (plug-in ABI %d), this is %s (ABI %d)", path,
                 plugin->version, plugin->abi, SHMEMI_BUILD_VERSION, SHMEMI_PLUGIN_ABI);
    else
        return plugin;
    /* Never dlclose: a library the plug-in pulled in may have started threads. */
    return NULL;
}

static pthread_once_t ucx_once = PTHREAD_ONCE_INIT;
static const shmemi_plugin_t *ucx_plugin;
static char ucx_path[4096];
static char ucx_error[1024];

static void load_ucx_once(void)
{
    plugin_path(ucx_path, sizeof(ucx_path));
    ucx_plugin = open_plugin(ucx_path, ucx_error, sizeof(ucx_error));
    if (ucx_plugin)
        SHMEMI_INFO("loaded the transport plug-in %s (%s)", ucx_path, ucx_plugin->name);
}

const shmemi_plugin_t *shmemi_plugin_load_ucx(char *why, size_t why_len)
{
    pthread_once(&ucx_once, load_ucx_once);
    if (!ucx_plugin)
        snprintf(why, why_len, "%s", ucx_error);
    return ucx_plugin;
}
