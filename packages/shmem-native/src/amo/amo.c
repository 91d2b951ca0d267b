/* The engine of the atomic memory operations: every family of aclshmem/amo.h (api/amo.c)
 * goes through shmemi_amo, which checks the word and calls one ops-table entry of the
 * transports.  Values travel as bit patterns in a uint64_t. */
#include "amo/amo.h"

#include "base/error.h"
#include "core/instance.h"
#include "rma/rma.h"

int shmemi_amo(const char *api, shmemi_channel_t *ch, const void *dst, const shmemi_amo_t *a, int pe,
               uint64_t *fetched)
{
    if (fetched)
        *fetched = 0;
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    int seg;
    size_t offset;
    SHMEMI_TRY(shmemi_rma_resolve(inst, dst, (size_t)a->width, pe, api, &seg, &offset));
    if ((uintptr_t)dst % (uintptr_t)a->width)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the address %p is not aligned to the %d-byte word", api,
                           dst, a->width);
    /* The transport also wakes pe's waiters when the word changed. */
    return inst->transport[pe]->amo(inst, ch, pe, seg, offset, a, fetched);
}
