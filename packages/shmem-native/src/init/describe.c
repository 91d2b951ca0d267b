/* aclshmemx_describe: the library's own account of itself (aclshmem/init.h). */
#include <stddef.h>
#include <string.h>

#include "aclshmem/init.h"
#include "base/error.h"
#include "core/instance.h"
#include "transport/plugin.h"
#include "transport/transport.h"

/* The first version's size: a caller's structure is never smaller (later versions append). */
#define DESCRIPTION_V1_SIZE (offsetof(aclshmemx_description_t, ucx) + sizeof(aclshmemx_plugin_info_t))
#define DESCRIBE_FLAGS ((uint32_t)ACLSHMEMX_DESCRIBE_NO_LOAD)

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

int aclshmemx_describe(aclshmemx_description_t *desc, uint32_t flags)
{
    if (!desc)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_describe: desc is NULL");
    if (desc->size < DESCRIPTION_V1_SIZE)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "aclshmemx_describe: desc->size is %zu, below the %zu bytes of the first version: "
                           "set it to sizeof(aclshmemx_description_t) first",
                           desc->size, (size_t)DESCRIPTION_V1_SIZE);
    if (flags & ~DESCRIBE_FLAGS)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_describe: unknown flags 0x%x (known: 0x%x)",
                           (unsigned)(flags & ~DESCRIBE_FLAGS), (unsigned)DESCRIBE_FLAGS);
    aclshmemx_description_t d = {.size = sizeof(d), .version = SHMEMI_BUILD_VERSION};
    d.library_path = shmemi_plugin_library_path();
    shmemi_plugin_describe_ucx(&d.ucx, !(flags & ACLSHMEMX_DESCRIBE_NO_LOAD));
    d.transports_available =
        ACLSHMEMX_TRANSPORT_SHM | (d.ucx.status == ACLSHMEMX_PLUGIN_LOADED ? ACLSHMEMX_TRANSPORT_UCX : 0);
    describe_instance(&d);
    /* A caller built against a newer header keeps its later fields: we know only ours. */
    size_t filled = desc->size < sizeof(d) ? desc->size : sizeof(d);
    memcpy(desc, &d, filled);
    desc->size = filled;
    return ACLSHMEM_SUCCESS;
}
