/* Loading transport plug-ins (see plugin.h). */
#include "transport/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/crypto.h"
#include "base/error.h"
#include "base/log.h"
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

/* Everything the one look for the UCX plug-in found out, for the loader (select.c) and for
 * aclshmemx_describe.  The path is resolved once (path_once), the plug-in loaded once
 * (load_once); each part is read-only once its pthread_once has run. */
static struct {
    pthread_once_t path_once, load_once;
    atomic_int tried;  /* load_once has run (read without calling it: ACLSHMEMX_DESCRIBE_NO_LOAD) */
    int from_env;      /* the path is SHMEM_UCX_PLUGIN's */
    int disabled;      /* SHMEM_UCX_PLUGIN=none */
    char self[4096];   /* libaclshmem's own file */
    char path[4096];
    aclshmemx_plugin_status_t status;
    const shmemi_plugin_t *entry;      /* what the file's entry returned (also of another build) */
    shmemi_ucx_data_plane_fn data_plane; /* the plug-in's diagnostics, NULL when it has none */
    char reason[1024];
} ucx = {.path_once = PTHREAD_ONCE_INIT, .load_once = PTHREAD_ONCE_INIT};

/* SHMEM_UCX_PLUGIN, or the plug-in's file in the folder libaclshmem was loaded from (the
 * build tree's src/, the install's libdir, the wheel's .shmem_native.mesonpy.libs). */
static void resolve_path_once(void)
{
    Dl_info info;
    const char *self = dladdr((void *)shmemi_plugin_load_ucx, &info) && info.dli_fname ? info.dli_fname : "";
    snprintf(ucx.self, sizeof(ucx.self), "%s", self);
    const char *forced = getenv(SHMEMI_UCX_PLUGIN_ENV);
    if (forced && *forced) {
        ucx.from_env = 1;
        ucx.disabled = strcmp(forced, SHMEMI_UCX_PLUGIN_DISABLED) == 0;
        snprintf(ucx.path, sizeof(ucx.path), "%s", ucx.disabled ? "" : forced);
        return;
    }
    const char *slash = strrchr(self, '/');
    if (slash)
        snprintf(ucx.path, sizeof(ucx.path), "%.*s/%s", (int)(slash - self), self, SHMEMI_UCX_PLUGIN_FILE);
    else
        snprintf(ucx.path, sizeof(ucx.path), "%s", SHMEMI_UCX_PLUGIN_FILE);
}

static void resolve_path(void)
{
    pthread_once(&ucx.path_once, resolve_path_once);
}

/* A path with a folder that names no file: the loader's error would say the same less clearly. */
static int names_no_file(const char *path)
{
    return strchr(path, '/') && access(path, F_OK) != 0 && errno == ENOENT;
}

static aclshmemx_plugin_status_t open_plugin(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(ucx.reason, sizeof(ucx.reason), "%s", dlerror());
        return names_no_file(path) ? ACLSHMEMX_PLUGIN_NOT_FOUND : ACLSHMEMX_PLUGIN_LOAD_FAILED;
    }
    /* Never dlclose: a library the plug-in pulled in may have started threads. */
    shmemi_plugin_entry_fn entry;
    *(void **)&entry = dlsym(handle, SHMEMI_PLUGIN_ENTRY);
    ucx.entry = entry ? entry() : NULL;
    if (!ucx.entry) {
        snprintf(ucx.reason, sizeof(ucx.reason), "%.512s is not a libaclshmem transport plug-in (no %s)", path,
                 SHMEMI_PLUGIN_ENTRY);
        return ACLSHMEMX_PLUGIN_NOT_A_PLUGIN;
    }
    /* abi, version and name head every plug-in's description, whatever its ABI. */
    if (ucx.entry->abi != SHMEMI_PLUGIN_ABI || !ucx.entry->version ||
        strcmp(ucx.entry->version, SHMEMI_BUILD_VERSION) != 0) {
        snprintf(ucx.reason, sizeof(ucx.reason),
                 "%.512s was built for libaclshmem %.32s (plug-in ABI %d), this is %s (ABI %d)", path,
                 ucx.entry->version ? ucx.entry->version : "(unknown)", ucx.entry->abi, SHMEMI_BUILD_VERSION,
                 SHMEMI_PLUGIN_ABI);
        return ACLSHMEMX_PLUGIN_MISMATCH;
    }
    *(void **)&ucx.data_plane = dlsym(handle, SHMEMI_UCX_DATA_PLANE_FN);
    return ACLSHMEMX_PLUGIN_LOADED;
}

static void load_ucx_once(void)
{
    resolve_path();
    if (ucx.disabled) {
        snprintf(ucx.reason, sizeof(ucx.reason), "disabled by %s=%s", SHMEMI_UCX_PLUGIN_ENV,
                 SHMEMI_UCX_PLUGIN_DISABLED);
        ucx.status = ACLSHMEMX_PLUGIN_DISABLED;
    } else {
        ucx.status = open_plugin(ucx.path);
    }
    if (ucx.status == ACLSHMEMX_PLUGIN_LOADED)
        SHMEMI_INFO("loaded the transport plug-in %s (%s)", ucx.path, ucx.entry->name);
    atomic_store_explicit(&ucx.tried, 1, memory_order_release);
}

const shmemi_plugin_t *shmemi_plugin_load_ucx(char *why, size_t why_len)
{
    pthread_once(&ucx.load_once, load_ucx_once);
    if (ucx.status == ACLSHMEMX_PLUGIN_LOADED)
        return ucx.entry;
    snprintf(why, why_len, "%s", ucx.reason);
    return NULL;
}

const char *shmemi_plugin_library_path(void)
{
    resolve_path();
    return ucx.self;
}

void shmemi_plugin_describe_ucx(aclshmemx_plugin_info_t *out, int load)
{
    if (load)
        pthread_once(&ucx.load_once, load_ucx_once);
    resolve_path();
    *out = (aclshmemx_plugin_info_t){.expected_abi = SHMEMI_PLUGIN_ABI, .from_env = ucx.from_env, .path = ucx.path,
                                     .reason = ""};
    if (!atomic_load_explicit(&ucx.tried, memory_order_acquire)) {
        out->status = ucx.disabled ? ACLSHMEMX_PLUGIN_DISABLED : ACLSHMEMX_PLUGIN_NOT_LOADED_YET;
        out->reason = ucx.disabled ? "disabled by " SHMEMI_UCX_PLUGIN_ENV "=" SHMEMI_UCX_PLUGIN_DISABLED
                                   : "not loaded yet: no job has needed it";
        return;
    }
    out->status = ucx.status;
    out->reason = ucx.reason;
    if (ucx.entry) {
        out->abi = ucx.entry->abi;
        out->version = ucx.entry->version;
        out->name = ucx.entry->name;
    }
    if (ucx.data_plane)
        out->data_plane_error = ucx.data_plane(out->data_plane, sizeof(out->data_plane)) != 0;
}
