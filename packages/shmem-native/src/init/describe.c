/* The library's account of itself, for aclshmemx_describe (api/init.c checks its arguments). */
#include <stddef.h>
#include <string.h>

#include "base/error.h"
#include "core/instance.h"
#include "init/init.h"
#include "transport/plugin.h"
#include "transport/transport.h"

static void describe_instance(aclshmemx_description_t *d)
{
    shmemi_instances_lock();
    shmemi_instance_t *inst = shmemi_active();
    d->initialized = inst && atomic_load(&inst->status) == ACLSHMEM_STATUS_IS_INITIALIZED;
    d->my_pe = d->initialized ? inst->my_pe : -1;
    d->n_pes = d->initialized ? inst->n_pes : -1;
    d->transports_in_use = d->initialized ? shmemi_transport_kinds(inst) : 0;
    shmemi_instances_unlock();
}

void shmemi_describe(aclshmemx_description_t *d, int load)
{
    *d = (aclshmemx_description_t){.size = sizeof(*d), .version = SHMEMI_BUILD_VERSION};
    d->library_path = shmemi_plugin_library_path();
    shmemi_plugin_describe_ucx(&d->ucx, load);
    d->transports_available =
        ACLSHMEMX_TRANSPORT_SHM | (d->ucx.status == ACLSHMEMX_PLUGIN_LOADED ? ACLSHMEMX_TRANSPORT_UCX : 0);
    describe_instance(d);
}
