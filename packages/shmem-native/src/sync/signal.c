/* Put-with-signal, the engine behind every public shape (api/signal.c).  The signal word is
 * 32 bits on the target PE (64 bits for the OpenSHMEM API, which shares the engine:
 * shmemi_put_signal_word).  The order on the wire is data, then the atomic update (which the
 * transport orders after earlier puts, and which wakes the receiver's waiters), so a
 * receiver that sees the signal also sees the data.  Every operation completes when issued
 * here, so the _nbi forms share the blocking path. */
#include "sync/signal.h"

#include <stdint.h>

#include "aclshmem/signal.h"
#include "base/error.h"
#include "prof/prof.h"
#include "rma/rma.h"
#include "transport/transport.h"

int shmemi_signal_word_check(shmemi_instance_t *inst, const char *api, const void *sig_addr, size_t width,
                             int sig_op, int pe, int *seg, size_t *offset)
{
    if (sig_op != ACLSHMEM_SIGNAL_SET && sig_op != ACLSHMEM_SIGNAL_ADD)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: sig_op %d is neither SIGNAL_SET (0) nor SIGNAL_ADD (1)", api, sig_op);
    if (!sig_addr)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the signal address is NULL", api);
    if ((uintptr_t)sig_addr % width)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: the signal address %p is not %zu-byte aligned (a signal is a %zu-bit word)", api,
                           sig_addr, width, 8 * width);
    return shmemi_rma_resolve(inst, sig_addr, width, pe, api, seg, offset);
}

int shmemi_signal_check(shmemi_instance_t *inst, const char *api, const void *sig_addr, int sig_op, int pe,
                        int *seg, size_t *offset)
{
    return shmemi_signal_word_check(inst, api, sig_addr, sizeof(int32_t), sig_op, pe, seg, offset);
}

int shmemi_put_signal_word(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                           size_t elem_size, void *sig_addr, uint64_t signal, size_t sig_width, int sig_op, int pe)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    int sig_seg, data_seg = 0;
    size_t sig_offset, data_offset = 0;
    SHMEMI_TRY(shmemi_signal_word_check(inst, api, sig_addr, sig_width, sig_op, pe, &sig_seg, &sig_offset));
    if (elem_size && nelems > SIZE_MAX / elem_size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %zu elements of %zu bytes overflow size_t", api, nelems,
                           elem_size);
    size_t bytes = nelems * elem_size;
    if (bytes) {
        if (!src)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the source address is NULL", api);
        SHMEMI_TRY(shmemi_rma_resolve(inst, dst, bytes, pe, api, &data_seg, &data_offset));
    }
    uint64_t start = shmemi_prof_begin(inst);
    const shmemi_transport_ops_t *t = inst->transport[pe];
    if (bytes)
        SHMEMI_TRY(t->put(inst, ch, pe, data_seg, data_offset, src, bytes));
    shmemi_amo_t update = {.op = sig_op == ACLSHMEM_SIGNAL_SET ? SHMEMI_AMO_SET : SHMEMI_AMO_ADD,
                           .kind = SHMEMI_AMO_INT, .width = (int)sig_width, .value = signal};
    SHMEMI_TRY(t->amo(inst, ch, pe, sig_seg, sig_offset, &update, NULL)); /* wakes pe's waiters too */
    shmemi_prof_end_frame(inst, bytes ? SHMEMI_FRAME_PUT_SIGNAL : SHMEMI_FRAME_SIGNAL_OP, start);
    return ACLSHMEM_SUCCESS;
}

int shmemi_put_signal(const char *api, void *dst, const void *src, size_t nelems, size_t elem_size,
                      void *sig_addr, int32_t signal, int sig_op, int pe)
{
    return shmemi_put_signal_word(api, NULL, dst, src, nelems, elem_size, sig_addr, (uint32_t)signal, sizeof(int32_t),
                                  sig_op, pe);
}
