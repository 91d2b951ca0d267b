/* Transport selection: shm for PEs on this node, a plug-in for PEs on other nodes. */
#include <stdint.h>
#include <stdlib.h>

#include "bootstrap/bootstrap.h"
#include "base/error.h"
#include "core/instance.h"
#include "base/log.h"
#include "transport/plugin.h"
#include "transport/transport.h"

/* Control-plane key of the plug-in agreement (the plug-in's own collectives use others). */
#define SELECT_KEY_PLUGIN 0x53454C4500000001ull

static int first_remote_pe(const shmemi_instance_t *inst)
{
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (!inst->heaps.same_node[pe])
            return pe;
    return -1;
}

/* Every PE tells whether it loaded the plug-in, so that a PE that cannot makes the whole
 * job fail at init with a reason, instead of the others waiting for it. */
static int agree_on_plugin(shmemi_instance_t *inst, const shmemi_plugin_t *plugin, const char *why)
{
    int32_t mine = plugin != NULL;
    int32_t *all = calloc((size_t)inst->n_pes, sizeof(*all));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int rc = shmemi_bootstrap_collective(inst->boot, SELECT_KEY_PLUGIN, inst->n_pes, inst->my_pe, &mine,
                                         sizeof(mine), all, inst->control_timeout_ms);
    int missing = -1;
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes && missing < 0; pe++)
        if (all[pe] != 1)
            missing = pe;
    free(all);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    if (!plugin)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                           "init: PE %d shares the job with PEs on other nodes (PE %d is one), which "
                           "libaclshmem reaches through its UCX transport plug-in, and the plug-in "
                           "cannot be loaded: %s.  Install UCX on every node (Debian/Ubuntu: apt "
                           "install libucx0; to build: libucx-dev), build libaclshmem with "
                           "-Ducx=enabled, or set %s to the plug-in's path",
                           inst->my_pe, first_remote_pe(inst), why, SHMEMI_UCX_PLUGIN_ENV);
    if (missing >= 0)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                           "init: PE %d cannot load libaclshmem's UCX transport plug-in, which this "
                           "multi-node job needs; its own error says why (install UCX there, or build "
                           "libaclshmem with -Ducx=enabled)", missing);
    return ACLSHMEM_SUCCESS;
}

static int connect_remote(shmemi_instance_t *inst, int remote)
{
    char why[1024] = "";
    const shmemi_plugin_t *plugin = shmemi_plugin_load_ucx(why, sizeof(why));
    SHMEMI_TRY(agree_on_plugin(inst, plugin, why));
    inst->plugin = plugin; /* from here fini stops it, also after a failed start */
    SHMEMI_TRY(plugin->start(inst, &shmemi_plugin_host));
    inst->progress = plugin->progress;
    inst->before_sleep = plugin->before_sleep;
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (!inst->heaps.same_node[pe])
            inst->transport[pe] = plugin->ops(inst);
    SHMEMI_INFO("PE %d reaches %d PE(s) on other nodes through %s", inst->my_pe, remote, plugin->name);
    return ACLSHMEM_SUCCESS;
}

int shmemi_transport_select(shmemi_instance_t *inst)
{
    inst->transport = calloc((size_t)inst->n_pes, sizeof(*inst->transport));
    if (!inst->transport)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int remote = 0;
    for (int pe = 0; pe < inst->n_pes; pe++) {
        inst->transport[pe] = &shmemi_transport_shm;
        remote += !inst->heaps.same_node[pe];
    }
    return remote ? connect_remote(inst, remote) : ACLSHMEM_SUCCESS;
}

int shmemi_transport_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    SHMEMI_TRY(shmemi_transport_shm.quiet(inst, ch));
    return inst->plugin ? inst->plugin->ops(inst)->quiet(inst, ch) : ACLSHMEM_SUCCESS;
}

int shmemi_transport_gets_wait(shmemi_instance_t *inst, shmemi_channel_t *ch, shmemi_gets_t *gets)
{
    if (gets->count == 0)
        return ACLSHMEM_SUCCESS;
    return inst->plugin->ops(inst)->gets_wait(inst, ch, gets);
}

int shmemi_transport_fence(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    SHMEMI_TRY(shmemi_transport_shm.fence(inst, ch));
    return inst->plugin ? inst->plugin->ops(inst)->fence(inst, ch) : ACLSHMEM_SUCCESS;
}

int shmemi_transport_channel_open(shmemi_instance_t *inst, shmemi_channel_t **ch)
{
    *ch = NULL;
    return inst->plugin ? inst->plugin->channel_open(inst, ch) : ACLSHMEM_SUCCESS;
}

void shmemi_transport_channel_close(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    if (ch && inst->plugin)
        inst->plugin->channel_close(inst, ch);
}

void shmemi_transport_fini(shmemi_instance_t *inst)
{
    inst->progress = NULL;
    inst->before_sleep = NULL;
    if (inst->plugin)
        inst->plugin->stop(inst);
    inst->plugin = NULL;
    free(inst->transport);
    inst->transport = NULL;
}

uint32_t shmemi_transport_kinds(const shmemi_instance_t *inst)
{
    if (!inst->transport)
        return 0;
    return ACLSHMEMX_TRANSPORT_SHM | (inst->plugin ? ACLSHMEMX_TRANSPORT_UCX : 0);
}
