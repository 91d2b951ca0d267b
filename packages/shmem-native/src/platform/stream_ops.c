/* Stream-ordered operations: each checks its arguments now (so bad input fails at the call,
 * with a last error, and nothing is enqueued), then enqueues a one-block library kernel that
 * does the host operation when the stream reaches it.  Their arguments travel by value in
 * the task; the buffers they point to must stay valid until then.  They live with the
 * platform, above the engine whose calls their kernels make. */
#include <stdint.h>

#include "aclshmem/stream.h"
#include "aclshmem/sync.h"
#include "base/error.h"
#include "platform/platform.h"
#include "rma/rma.h"
#include "sync/signal.h"
#include "team/team.h"

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    int pe;
    int seg;       /* put and get: the symmetric side, resolved when they were enqueued */
    size_t offset;
    void *sig_addr;
    int32_t signal; /* and the comparison value of a wait */
    int op;         /* sig_op, or cmp of a wait */
    aclshmem_team_t team;
} stream_op_t;

/* put and get run with the segment transfer() resolved: the kernel's instance is the
 * stream's, whose heaps outlive the stream's work (finalize drains the streams first). */
static void put_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    stream_op_t *a = arg;
    shmemi_instance_t *inst = shmemi_require("aclshmemx_putmem_on_stream");
    if (inst && a->bytes)
        shmemi_rma_put_resolved(inst, NULL, a->pe, a->seg, a->offset, a->src, a->bytes);
}

static void get_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    stream_op_t *a = arg;
    shmemi_instance_t *inst = shmemi_require("aclshmemx_getmem_on_stream");
    if (inst && a->bytes)
        shmemi_rma_get_resolved(inst, NULL, a->pe, a->seg, a->offset, a->dst, a->bytes);
}

static void signal_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    stream_op_t *a = arg;
    shmemi_put_signal("aclshmemx_signal_op_on_stream", NULL, NULL, 0, 1, a->sig_addr, a->signal, a->op, a->pe);
}

static void signal_wait_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    stream_op_t *a = arg;
    int32_t value;
    shmemi_signal_wait("aclshmemx_signal_wait_until_on_stream", a->sig_addr, a->op, a->signal, &value);
}

static void quiet_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks, (void)arg;
    shmemi_instance_t *inst = shmemi_require("aclshmemx_quiet_on_stream");
    if (inst)
        shmemi_quiet(inst, NULL);
}

/* Inside a kernel, aclshmem_barrier is the device-side barrier (it also completes this PE's
 * RMA first), which makes it the completion point and rendezvous of handle_wait as well. */
static void barrier_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    aclshmem_barrier(((stream_op_t *)arg)->team);
}

static void enqueue(const char *api, aclrtStream stream, aclshmemx_kernel_fn fn, const stream_op_t *op)
{
    shmemi_platform_launch(api, stream, fn, 1, op, sizeof(*op));
}

/* put and get: the symmetric side on pe and the local side are checked now. */
static void transfer(const char *api, aclshmemx_kernel_fn fn, void *dst, const void *src, size_t bytes, int pe,
                     aclrtStream stream, int is_put)
{
    shmemi_instance_t *inst = shmemi_platform_stream_instance(api, stream);
    if (!inst)
        return;
    int seg = 0;
    size_t offset = 0;
    if (bytes) {
        if (!(is_put ? src : dst)) {
            shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the local address is NULL", api);
            return;
        }
        if (shmemi_rma_resolve(inst, is_put ? dst : src, bytes, pe, api, &seg, &offset) != ACLSHMEM_SUCCESS)
            return;
    }
    enqueue(api, stream, fn,
            &(stream_op_t){.dst = dst, .src = src, .bytes = bytes, .pe = pe, .seg = seg, .offset = offset});
}

void aclshmemx_putmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, aclrtStream stream)
{
    transfer("aclshmemx_putmem_on_stream", put_kernel, dst, src, elem_size, pe, stream, 1);
}

void aclshmemx_getmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, aclrtStream stream)
{
    transfer("aclshmemx_getmem_on_stream", get_kernel, dst, src, elem_size, pe, stream, 0);
}

void aclshmemx_signal_op_on_stream(int32_t *sig_addr, int32_t signal, int sig_op, int pe, aclrtStream stream)
{
    static const char api[] = "aclshmemx_signal_op_on_stream";
    shmemi_instance_t *inst = shmemi_platform_stream_instance(api, stream);
    int seg;
    size_t offset;
    if (!inst || shmemi_signal_check(inst, api, sig_addr, sig_op, pe, &seg, &offset) != ACLSHMEM_SUCCESS)
        return;
    enqueue(api, stream, signal_kernel,
            &(stream_op_t){.sig_addr = sig_addr, .signal = signal, .op = sig_op, .pe = pe});
}

void aclshmemx_signal_wait_until_on_stream(int32_t *sig_addr, int cmp, int32_t cmp_val, aclrtStream stream)
{
    static const char api[] = "aclshmemx_signal_wait_until_on_stream";
    shmemi_instance_t *inst = shmemi_platform_stream_instance(api, stream);
    if (!inst || shmemi_signal_wait_check(inst, api, sig_addr, cmp) != ACLSHMEM_SUCCESS)
        return;
    enqueue(api, stream, signal_wait_kernel, &(stream_op_t){.sig_addr = sig_addr, .signal = cmp_val, .op = cmp});
}

void aclshmemx_quiet_on_stream(aclrtStream stream)
{
    static const char api[] = "aclshmemx_quiet_on_stream";
    if (shmemi_platform_stream_instance(api, stream))
        enqueue(api, stream, quiet_kernel, &(stream_op_t){0});
}

/* A team barrier on a stream; TEAM_INVALID is a no-op, as for aclshmem_barrier. */
static void team_op(const char *api, aclshmem_team_t team, aclrtStream stream)
{
    shmemi_instance_t *inst = shmemi_platform_stream_instance(api, stream);
    if (!inst || team == ACLSHMEM_TEAM_INVALID)
        return;
    if (!shmemi_team_get(inst, team)) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %d does not exist (never created or destroyed)", api, team);
        return;
    }
    enqueue(api, stream, barrier_kernel, &(stream_op_t){.team = team});
}

void aclshmemx_barrier_on_stream(aclshmem_team_t team, aclrtStream stream)
{
    team_op("aclshmemx_barrier_on_stream", team, stream);
}

void aclshmemx_barrier_all_on_stream(aclrtStream stream)
{
    team_op("aclshmemx_barrier_all_on_stream", ACLSHMEM_TEAM_WORLD, stream);
}

void aclshmemx_handle_wait(aclshmem_handle_t handle, aclrtStream stream)
{
    team_op("aclshmemx_handle_wait", handle.team_id, stream);
}
