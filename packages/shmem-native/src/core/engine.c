/* Engine workspace settings (offset, UB size, sync id) per instance.  The cpu platform
 * moves data with the CPU, so they are stored and reported, not used for transfers. */
#include "aclshmem/rma.h"
#include "base/error.h"
#include "core/instance.h"

enum { ENGINE_MTE, ENGINE_SDMA, ENGINE_RDMA, ENGINE_UDMA };

void shmemi_engine_defaults(shmemi_instance_t *inst)
{
    inst->engine_config[ENGINE_MTE] = (aclshmem_ub_config_t){0, 16 * 1024, 0};
    inst->engine_config[ENGINE_SDMA] = (aclshmem_ub_config_t){191 * 1024, 64, 0};
    inst->engine_config[ENGINE_RDMA] = (aclshmem_ub_config_t){190 * 1024, 128, 0};
    inst->engine_config[ENGINE_UDMA] = (aclshmem_ub_config_t){189 * 1024, 128, 0};
}

static int set_engine(int engine, uint64_t offset, uint32_t ub_size, uint32_t sync_id, uint32_t min_ub,
                      const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (ub_size < min_ub)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: ub_size %u is below the minimum of %u bytes", api,
                           ub_size, min_ub);
    inst->engine_config[engine] = (aclshmem_ub_config_t){(int64_t)offset, ub_size, sync_id};
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_get_engine_config(data_op_engine_type_t engine, aclshmem_ub_config_t *config)
{
    static const char api[] = "aclshmemx_get_engine_config";
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (!config)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: config is NULL", api);
    int index;
    switch (engine) {
    case ACLSHMEM_DATA_OP_MTE: index = ENGINE_MTE; break;
    case ACLSHMEM_DATA_OP_SDMA: index = ENGINE_SDMA; break;
    case ACLSHMEM_DATA_OP_ROCE: index = ENGINE_RDMA; break;
    case ACLSHMEM_DATA_OP_UDMA: index = ENGINE_UDMA; break;
    default:
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: engine 0x%x is not one of MTE, SDMA, ROCE, UDMA", api,
                           (unsigned)engine);
    }
    *config = inst->engine_config[index];
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_set_mte_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id)
{
    return set_engine(ENGINE_MTE, offset, ub_size, sync_id, 0, "aclshmemx_set_mte_config");
}

int aclshmemx_set_sdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id)
{
    return set_engine(ENGINE_SDMA, offset, ub_size, sync_id, 0, "aclshmemx_set_sdma_config");
}

int aclshmemx_set_rdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id)
{
    return set_engine(ENGINE_RDMA, offset, ub_size, sync_id, 128, "aclshmemx_set_rdma_config");
}

int aclshmemx_set_udma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id)
{
    return set_engine(ENGINE_UDMA, offset, ub_size, sync_id, 128, "aclshmemx_set_udma_config");
}
