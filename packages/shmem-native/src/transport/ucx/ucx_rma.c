/* The RMA data plane: UCX's own put, get and atomics with remote keys, for fabrics whose
 * hardware does RMA, where the rkey is the capability (see ucx.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transport/ucx/ucx.h"

/* Under c->lock: c's endpoint to pe and the remote key of pe's segment seg for it. */
static int route(ucx_channel_t *c, int pe, int seg, ucp_ep_h *ep, ucp_rkey_h *rkey)
{
    SHMEMI_TRY(shmemi_ucx_endpoint(c, pe, ep));
    *rkey = c->rkey[(size_t)pe * SHMEMI_SEG_COUNT + (size_t)seg];
    return ACLSHMEM_SUCCESS;
}

static uint64_t remote_address(ucx_channel_t *c, int pe, int seg, size_t offset)
{
    return c->st->peers[pe].base[seg] + offset;
}

/* One put (local is the source) or get (local is the destination) of len bytes at pe's
 * (seg, offset) on ch, waited for: a put until local may be reused (the data has left or
 * been copied by UCX), a get until the data is in local. */
static int transfer(shmemi_instance_t *inst, shmemi_channel_t *ch, int is_put, int pe, int seg, size_t offset,
                    void *local, size_t len)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    pthread_mutex_lock(&c->lock);
    int rc = route(c, pe, seg, &ep, &rkey);
    uint64_t raddr = remote_address(c, pe, seg, offset);
    ucs_status_ptr_t req = rc != ACLSHMEM_SUCCESS ? NULL
                           : is_put              ? ucp_put_nbx(ep, local, len, raddr, rkey, &param)
                                                 : ucp_get_nbx(ep, local, len, raddr, rkey, &param);
    pthread_mutex_unlock(&c->lock);
    return rc == ACLSHMEM_SUCCESS ? shmemi_ucx_wait(c, req, is_put ? "a put" : "a get", pe) : rc;
}

static int ucx_put(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, const void *src,
                   size_t len)
{
    return transfer(inst, ch, 1, pe, seg, offset, (void *)(uintptr_t)src, len); /* only read */
}

static int ucx_get(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                   size_t len)
{
    return transfer(inst, ch, 0, pe, seg, offset, dst, len);
}

/* ---- non-blocking gets ----------------------------------------------------------------------- */

/* A get_nbi without a batch landed (or failed): the channel's quiet waits for the count to
 * reach 0.  Runs in the worker's progress, under c->lock. */
static void nbi_get_done(void *request, ucs_status_t status, void *user_data)
{
    ucx_channel_t *c = user_data;
    if (status != UCS_OK)
        c->gets_failed = status;
    __atomic_store_n(&c->gets_in_flight, c->gets_in_flight - 1, __ATOMIC_RELEASE);
    ucp_request_free(request);
}

/* A batch's gets on this plane are UCX requests: waited for, or released (UCX frees one
 * when it ends). */
static int complete_request(void *ctx, uint64_t request, int pe)
{
    return shmemi_ucx_wait(ctx, (ucs_status_ptr_t)(uintptr_t)request, "a get", pe);
}

static void give_up_request(void *ctx, uint64_t request)
{
    ucx_channel_t *c = ctx;
    pthread_mutex_lock(&c->lock);
    ucp_request_free((void *)(uintptr_t)request);
    pthread_mutex_unlock(&c->lock);
}

static const shmemi_gets_ops_t request_gets = {complete_request, give_up_request};

/* One ucp_get_nbx: its request joins the batch, or (no batch) the channel counts it until its
 * callback, which the quiet's flush brings. */
static int ucx_get_nbi(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                       size_t len, shmemi_gets_t *gets)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    if (gets && gets->count == SHMEMI_GETS_MAX)
        SHMEMI_TRY(shmemi_gets_complete(gets, 1, &request_gets, c));
    ucp_request_param_t param = {.op_attr_mask = 0};
    if (!gets) {
        param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        param.cb.send = nbi_get_done;
        param.user_data = c;
    }
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    pthread_mutex_lock(&c->lock);
    int rc = route(c, pe, seg, &ep, &rkey);
    ucs_status_ptr_t req =
        rc == ACLSHMEM_SUCCESS ? ucp_get_nbx(ep, dst, len, remote_address(c, pe, seg, offset), rkey, &param) : NULL;
    if (!gets && UCS_PTR_IS_PTR(req))
        c->gets_in_flight++; /* (its callback runs in a progress, under the lock we hold) */
    pthread_mutex_unlock(&c->lock);
    if (rc == ACLSHMEM_SUCCESS && UCS_PTR_IS_ERR(req))
        rc = shmemi_ucx_op_failed(c->st, UCS_PTR_STATUS(req), "a get", pe);
    if (rc != ACLSHMEM_SUCCESS) {
        if (gets)
            shmemi_gets_abandon(gets, &request_gets, c);
        return rc;
    }
    if (gets && UCS_PTR_IS_PTR(req))
        shmemi_gets_add(gets, (uint64_t)(uintptr_t)req, pe);
    return ACLSHMEM_SUCCESS;
}

static int ucx_gets_wait(shmemi_instance_t *inst, shmemi_channel_t *ch, shmemi_gets_t *gets)
{
    return shmemi_gets_complete(gets, gets->count, &request_gets, ucx_channel(inst, ch));
}

/* Under c->lock: every get_nbi without a batch called back. */
static int nbi_gets_landed(ucx_channel_t *c, void *arg)
{
    (void)arg;
    return c->gets_in_flight == 0;
}

/* After a quiet's flush: the channel's get_nbi have called back (the flush completed them;
 * their callbacks may still be due), and none failed. */
static int await_nbi_gets(ucx_channel_t *c)
{
    int rc = ACLSHMEM_SUCCESS;
    if (__atomic_load_n(&c->gets_in_flight, __ATOMIC_ACQUIRE))
        rc = shmemi_ucx_poll_until(c, nbi_gets_landed, NULL);
    pthread_mutex_lock(&c->lock);
    ucs_status_t failed = (ucs_status_t)c->gets_failed;
    c->gets_failed = UCS_OK;
    pthread_mutex_unlock(&c->lock);
    if (rc == ACLSHMEM_SUCCESS && failed != UCS_OK)
        rc = shmemi_ucx_op_failed(c->st, failed, "a get_nbi", -1);
    return rc;
}

/* ---- atomics ------------------------------------------------------------------------------- */

/* One UCP atomic on a 4- or 8-byte word.  With reply (a fetching operation, SWAP, CSWAP) it
 * waits for the result; without, it is posted (UCP copies the operand) and completes at the
 * next quiet, as a put does.  For CSWAP UCP takes the condition as the operand and the new
 * value in *reply ("Result=Y; if (X==Y) then Y=Z", X = buffer, Z = reply_buffer). */
static int word_atomic(ucx_channel_t *c, int pe, int seg, uint64_t raddr, int width, ucp_atomic_op_t op,
                       uint64_t value, uint64_t *reply)
{
    uint32_t value32 = (uint32_t)value, reply32 = reply ? (uint32_t)*reply : 0;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | (reply ? UCP_OP_ATTR_FIELD_REPLY_BUFFER : 0),
        .datatype = ucp_dt_make_contig((size_t)width),
        .reply_buffer = width == 4 ? (void *)&reply32 : (void *)reply,
    };
    const void *operand = width == 4 ? (const void *)&value32 : (const void *)&value;
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    pthread_mutex_lock(&c->lock);
    int rc = route(c, pe, seg, &ep, &rkey);
    ucs_status_ptr_t req = rc == ACLSHMEM_SUCCESS ? ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &param) : NULL;
    if (!reply && UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req); /* released when it completes */
        req = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (rc == ACLSHMEM_SUCCESS)
        rc = shmemi_ucx_wait(c, req, "an atomic operation", pe);
    if (reply && width == 4)
        *reply = reply32;
    return rc;
}

static ucp_atomic_op_t native_op(shmemi_amo_op_t op)
{
    switch (op) {
    case SHMEMI_AMO_SET:
    case SHMEMI_AMO_SWAP: return UCP_ATOMIC_OP_SWAP;
    case SHMEMI_AMO_CSWAP: return UCP_ATOMIC_OP_CSWAP;
    case SHMEMI_AMO_AND: return UCP_ATOMIC_OP_AND;
    case SHMEMI_AMO_OR: return UCP_ATOMIC_OP_OR;
    case SHMEMI_AMO_XOR: return UCP_ATOMIC_OP_XOR;
    default: return UCP_ATOMIC_OP_ADD; /* ADD, and FETCH as a fetch-add of 0 */
    }
}

/* Integer operations on 4 and 8 bytes map onto UCP's own atomics. */
static int native_amo(ucx_channel_t *c, int pe, int seg, uint64_t raddr, const shmemi_amo_t *a,
                      uint64_t *fetched)
{
    ucp_atomic_op_t op = native_op(a->op);
    int cswap = op == UCP_ATOMIC_OP_CSWAP;
    uint64_t operand = a->op == SHMEMI_AMO_FETCH ? 0 : cswap ? a->cond : a->value;
    int needs_reply = fetched || op == UCP_ATOMIC_OP_SWAP || cswap;
    uint64_t reply = cswap ? a->value : 0;
    SHMEMI_TRY(word_atomic(c, pe, seg, raddr, a->width, op, operand, needs_reply ? &reply : NULL));
    if (fetched)
        *fetched = reply;
    return ACLSHMEM_SUCCESS;
}

/* Everything else (1- and 2-byte words, floating-point addition) as a compare-and-swap loop
 * on the aligned 4-byte word (or the 8-byte word) that holds it.  Atomic with respect to
 * UCP's own atomics on that word. */
static int cas_amo(ucx_channel_t *c, int pe, int seg, uint64_t raddr, const shmemi_amo_t *a, uint64_t *fetched)
{
    int wide = a->width == 8 ? 8 : 4;
    uint64_t word_addr = raddr & ~(uint64_t)(wide - 1);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    unsigned shift = (unsigned)(raddr - word_addr) * 8;
#else
    unsigned shift = (unsigned)(wide - a->width - (raddr - word_addr)) * 8;
#endif
    uint64_t mask = a->width == 8 ? UINT64_MAX : ((UINT64_C(1) << (8 * a->width)) - 1);
    uint64_t word = 0;
    SHMEMI_TRY(word_atomic(c, pe, seg, word_addr, wide, UCP_ATOMIC_OP_ADD, 0, &word));
    for (;;) {
        uint64_t old = (word >> shift) & mask;
        if (a->op == SHMEMI_AMO_FETCH || (a->op == SHMEMI_AMO_CSWAP && old != (a->cond & mask))) {
            if (fetched)
                *fetched = old;
            return ACLSHMEM_SUCCESS;
        }
        uint64_t updated = c->st->host->amo_result(a, old) & mask;
        uint64_t desired = (word & ~(mask << shift)) | (updated << shift);
        uint64_t seen = desired; /* the new value in, the word's value out */
        SHMEMI_TRY(word_atomic(c, pe, seg, word_addr, wide, UCP_ATOMIC_OP_CSWAP, word, &seen));
        if (seen == word) {
            if (fetched)
                *fetched = old;
            return ACLSHMEM_SUCCESS;
        }
        word = seen; /* another writer came in between: retry with what it left */
    }
}

/* UCX's own fence: later operations on the channel's worker are applied after earlier
 * ones.  pe names the PE in an error (-1: every PE). */
static int fence_worker(ucx_channel_t *c, int pe)
{
    pthread_mutex_lock(&c->lock);
    ucs_status_t status = ucp_worker_fence(c->worker);
    pthread_mutex_unlock(&c->lock);
    return status == UCS_OK ? ACLSHMEM_SUCCESS : shmemi_ucx_op_failed(c->st, status, "a fence", pe);
}

static int ucx_amo(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                   const shmemi_amo_t *a, uint64_t *fetched)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    /* Ordered after every earlier put to pe (put-with-signal: data before the signal). */
    SHMEMI_TRY(fence_worker(c, pe));
    uint64_t raddr = remote_address(c, pe, seg, offset);
    int integer_word = (a->width == 4 || a->width == 8) && (a->op != SHMEMI_AMO_ADD || a->kind == SHMEMI_AMO_INT);
    return integer_word ? native_amo(c, pe, seg, raddr, a, fetched) : cas_amo(c, pe, seg, raddr, a, fetched);
}

/* Nothing to ring: the target's UCX progress (its waiters or its progress thread) applies
 * our writes and rings its own doorbell. */
static void ucx_notify(shmemi_instance_t *inst, int pe)
{
    (void)inst, (void)pe;
}

/* A quiet flushes each of the channel's endpoints (its operations only, its get_nbi among
 * them), every flush on its way before the first is awaited.  Not the worker: its flush also
 * waits for the endpoints UCX made on it for peers that connected to it, and one made for
 * another PE's context finishes connecting only when that PE progresses the context's
 * worker, which it does only while it waits on that context.  A PE done with its context
 * and waiting in a barrier for this one never does: osh_nodes (2 nodes x 2 PEs, this plane)
 * hung in a barrier's quiet in 5 of some 55 runs, and in none of 80 with the endpoints
 * flushed instead. */
static int ucx_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    ucs_status_ptr_t *flushes = calloc((size_t)inst->n_pes, sizeof(*flushes));
    if (!flushes)
        return c->st->host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory for a quiet");
    ucp_request_param_t param = {.op_attr_mask = 0};
    pthread_mutex_lock(&c->lock);
    for (int pe = 0; pe < inst->n_pes; pe++)
        flushes[pe] = c->ep[pe] ? ucp_ep_flush_nbx(c->ep[pe], &param) : NULL;
    pthread_mutex_unlock(&c->lock);
    int rc = ACLSHMEM_SUCCESS;
    for (int pe = 0; pe < inst->n_pes; pe++) { /* each is awaited (and freed), whatever came before */
        int flushed = shmemi_ucx_wait(c, flushes[pe], "quiet (a flush)", pe);
        rc = rc != ACLSHMEM_SUCCESS ? rc : flushed;
    }
    free(flushes);
    SHMEMI_TRY(rc);
    return await_nbi_gets(c);
}

static int ucx_fence(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    return fence_worker(ucx_channel(inst, ch), -1);
}

const shmemi_transport_ops_t shmemi_ucx_rma_ops = {
    .name = "ucx-rma",
    .put = ucx_put,
    .get = ucx_get,
    .get_nbi = ucx_get_nbi,
    .gets_wait = ucx_gets_wait,
    .amo = ucx_amo,
    .notify = ucx_notify,
    .quiet = ucx_quiet,
    .fence = ucx_fence,
    .ptr = shmemi_ucx_no_ptr,
};
