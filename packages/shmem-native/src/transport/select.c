/* Transport selection, and the stand-in for peers this build cannot reach. */
#include <stdlib.h>

#include "core/error.h"
#include "core/instance.h"
#include "core/log.h"
#include "transport/transport.h"

static int unreachable(shmemi_instance_t *inst, int pe)
{
    return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                       "PE %d is on another node (another host or network namespace) and this "
                       "build of libaclshmem has no inter-node transport; PE %d can only reach "
                       "PEs on its own node", pe, inst->my_pe);
}

static int none_put(shmemi_instance_t *inst, int pe, int seg, size_t offset, const void *src, size_t len)
{
    (void)seg, (void)offset, (void)src, (void)len;
    return unreachable(inst, pe);
}

static int none_get(shmemi_instance_t *inst, int pe, int seg, size_t offset, void *dst, size_t len)
{
    (void)seg, (void)offset, (void)dst, (void)len;
    return unreachable(inst, pe);
}

static int none_amo(shmemi_instance_t *inst, int pe, int seg, size_t offset, const shmemi_amo_t *a,
                    uint64_t *fetched)
{
    (void)seg, (void)offset, (void)a, (void)fetched;
    return unreachable(inst, pe);
}

static void none_notify(shmemi_instance_t *inst, int pe)
{
    (void)inst, (void)pe;
}

static int none_quiet(shmemi_instance_t *inst)
{
    (void)inst;
    return ACLSHMEM_SUCCESS;
}

static void *none_ptr(shmemi_instance_t *inst, int pe, int seg, size_t offset)
{
    (void)inst, (void)pe, (void)seg, (void)offset;
    return NULL;
}

const shmemi_transport_ops_t shmemi_transport_none = {
    .name = "none",
    .put = none_put,
    .get = none_get,
    .amo = none_amo,
    .notify = none_notify,
    .quiet = none_quiet,
    .ptr = none_ptr,
};

int shmemi_transport_select(shmemi_instance_t *inst)
{
    inst->transport = calloc((size_t)inst->n_pes, sizeof(*inst->transport));
    if (!inst->transport)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int remote = 0;
    for (int pe = 0; pe < inst->n_pes; pe++) {
        inst->transport[pe] = inst->heaps.same_node[pe] ? &shmemi_transport_shm : &shmemi_transport_none;
        remote += !inst->heaps.same_node[pe];
    }
    if (remote)
        SHMEMI_WARN("PE %d: %d PE(s) are on other nodes and cannot be reached by this build",
                    inst->my_pe, remote);
    return ACLSHMEM_SUCCESS;
}
