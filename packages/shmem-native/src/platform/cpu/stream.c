/* Placeholder until the cpu platform's streams land: instances get no default stream. */
#include "platform/platform.h"

int shmemi_platform_instance_init(shmemi_instance_t *inst)
{
    inst->default_stream = NULL;
    return ACLSHMEM_SUCCESS;
}

void shmemi_platform_instance_fini(shmemi_instance_t *inst)
{
    (void)inst;
}

const char *shmemi_platform_name(void)
{
    return "cpu";
}
