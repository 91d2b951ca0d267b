/* The AM data plane over UCP (see ucx.h, ucx_am.h): the ops table that sends our active
 * messages, and the UCP handler that hands received ones to shmemi_am_receive.
 *
 * Order: every message is sent eagerly (never rendezvous) and waited for until UCX has
 * taken it, so the messages of one thread to one PE leave in program order on the
 * endpoint's one active-message lane and are applied in that order.  A put followed by a
 * signal is therefore seen in that order, and a FLUSH answered means that everything sent
 * to that PE before it is in place: quiet sends one to every PE written since the last
 * quiet and waits for the answers. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "transport/ucx/ucx.h"

/* Puts and gets travel in pieces of at most this many bytes, so that a piece (a put, or a
 * get's reply) reaches the receiver as one fragment.  UCX's TCP transport receives into
 * segments of 64 KiB (UCX_TCP_RX_SEG_SIZE), of which the transport's and UCP's headers, our
 * header and UCP's receive descriptor take about 0.4 KiB (UCX 1.13: 65536 - 448 bytes still
 * fit, 65536 - 384 did not).  A longer message is sent in fragments that UCP puts together
 * again before our handler sees it (UCP_AM_FLAG_WHOLE_MSG), and a piece just over one
 * segment cost far more than that copy: a broadcast of 8 MiB across 2 nodes x 2 PEs took
 * 10.3-10.7 ms in 64 KiB pieces, 5.5-5.8 ms in 60 KiB pieces (alternating runs); 60, 63 and
 * 63.5 KiB measured the same, and 60 leaves room for other versions' headers.  Fragments as
 * such cost less: with UCX_TCP_RX_SEG_SIZE=32k, 60 KiB pieces took that broadcast
 * 5.0-5.3 ms and pieces of 31 KiB, one segment each, 5.5-5.7 ms, so the size does not
 * follow that variable.  A get's reply also stays within what the receiver accepts
 * (SHMEMI_AM_GET_MAX in ucx_am.c). */
#define AM_PIECE ((size_t)60 << 10)
/* A batch keeps at most this many pieces in flight (the oldest is awaited first), as the
 * blocking get always did: 16 measured no faster over TCP between two namespaces (a 2x1
 * broadcast of 8 MiB, one get, the same at best and slower in the median; with 60 KiB
 * pieces, 2x2, the same within the noise). */
#define AM_GET_WINDOW 8
/* (A batch holds SHMEMI_GETS_MAX entries: a wider window would overrun it.) */
_Static_assert(AM_GET_WINDOW <= SHMEMI_GETS_MAX, "a get batch holds the whole window");

/* ---- sending -------------------------------------------------------------------------------- */

/* Sends h (and len bytes at data) to pe on channel c and waits until UCX has taken both.  A
 * context channel asks for UCP's reply endpoint, so that the answers to its requests come
 * back to its own worker. */
static int am_send(ucx_channel_t *c, int pe, const shmemi_am_header_t *h, const void *data, size_t len,
                   const char *what)
{
    uint32_t flags = UCP_AM_SEND_FLAG_EAGER | (c == &c->st->main ? 0 : UCP_AM_SEND_FLAG_REPLY);
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = flags};
    ucp_ep_h ep;
    pthread_mutex_lock(&c->lock);
    int rc = shmemi_ucx_endpoint(c, pe, &ep);
    ucs_status_ptr_t req = rc == ACLSHMEM_SUCCESS
                               ? ucp_am_send_nbx(ep, SHMEMI_AM_UCP_ID, h, sizeof(*h), data, len, &param)
                               : NULL;
    pthread_mutex_unlock(&c->lock);
    return rc == ACLSHMEM_SUCCESS ? shmemi_ucx_wait(c, req, what, pe) : rc;
}

typedef struct {
    uint8_t op;
    int pe;
    void *dst;
    size_t len;
    uint64_t token;
} slot_request_t;

/* Under c->lock: takes a free slot for the request, if there is one. */
static int slot_taken(ucx_channel_t *c, void *arg)
{
    slot_request_t *r = arg;
    r->token = shmemi_am_pending_take(&c->pending, r->op, r->pe, r->dst, r->len);
    return r->token != 0;
}

/* A request slot of channel c for op to pe (its token).  When all are in use (many threads
 * with requests in flight), progresses until one of them is answered. */
static int take_slot(ucx_channel_t *c, uint8_t op, int pe, void *dst, size_t len, uint64_t *token)
{
    slot_request_t r = {op, pe, dst, len, 0};
    pthread_mutex_lock(&c->lock);
    int taken = slot_taken(c, &r);
    pthread_mutex_unlock(&c->lock);
    int rc = taken ? ACLSHMEM_SUCCESS : shmemi_ucx_poll_until(c, slot_taken, &r);
    *token = r.token;
    return rc;
}

static void release_slot(ucx_channel_t *c, uint64_t token)
{
    pthread_mutex_lock(&c->lock);
    shmemi_am_pending_release(&c->pending, token);
    pthread_mutex_unlock(&c->lock);
}

/* Waits for the reply to token; its value in *value (if not NULL).  The slot is freed
 * either way, so that a reply arriving after a failure is dropped. */
static int await_reply(ucx_channel_t *c, uint64_t token, uint64_t *value)
{
    shmemi_am_slot_t *slot = shmemi_am_pending_slot(&c->pending, token);
    int rc = shmemi_ucx_wait_state(c, &slot->state, SHMEMI_AM_SLOT_DONE);
    if (rc == ACLSHMEM_SUCCESS && value)
        *value = slot->value;
    release_slot(c, token);
    return rc;
}

static void mark_written(ucx_channel_t *c, int pe)
{
    pthread_mutex_lock(&c->lock);
    c->dirty[pe] = 1;
    pthread_mutex_unlock(&c->lock);
}

static void header_for(ucx_channel_t *c, shmemi_am_header_t *h, shmemi_am_op_t op, int pe)
{
    shmemi_am_header_init(h, c->st->peers[pe].cap, op, c->st->inst->my_pe);
}

static int am_put(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, const void *src,
                  size_t len)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    shmemi_am_header_t h;
    header_for(c, &h, SHMEMI_AM_PUT, pe);
    h.seg = (uint8_t)seg;
    mark_written(c, pe);
    size_t done = 0;
    do {
        size_t piece = len - done < AM_PIECE ? len - done : AM_PIECE;
        h.offset = offset + done;
        h.len = piece;
        SHMEMI_TRY(am_send(c, pe, &h, (const uint8_t *)src + done, piece, "a put"));
        done += piece;
    } while (done < len);
    return ACLSHMEM_SUCCESS;
}

/* One piece of a get: asks for it (the reply lands in dst) and returns its token.  detached:
 * nobody will await it (a get_nbi that quiet completes): its reply frees the slot. */
static int ask_piece(ucx_channel_t *c, int pe, int seg, size_t offset, void *dst, size_t len, int detached,
                     uint64_t *token)
{
    SHMEMI_TRY(take_slot(c, SHMEMI_AM_GET, pe, dst, len, token));
    if (detached) {
        pthread_mutex_lock(&c->lock);
        shmemi_am_pending_detach(&c->pending, *token);
        pthread_mutex_unlock(&c->lock);
    }
    shmemi_am_header_t h;
    header_for(c, &h, SHMEMI_AM_GET, pe);
    h.seg = (uint8_t)seg;
    h.offset = offset;
    h.len = len;
    h.token = *token;
    int rc = am_send(c, pe, &h, NULL, 0, "a get");
    if (rc != ACLSHMEM_SUCCESS)
        release_slot(c, *token); /* (a no-op if a reply came after all and freed it) */
    return rc;
}

/* A batch's gets on this plane are request tokens: awaited, or released (a late reply is
 * then dropped). */
static int complete_token(void *ctx, uint64_t token, int pe)
{
    (void)pe;
    return await_reply(ctx, token, NULL);
}

static void give_up_token(void *ctx, uint64_t token)
{
    release_slot(ctx, token);
}

static const shmemi_gets_ops_t token_gets = {complete_token, give_up_token};

/* Asks for every piece; with a batch, each piece's token joins it (the oldest awaited when
 * AM_GET_WINDOW are in flight), without one the pieces are detached and the channel's quiet
 * waits for them (as many in flight as the channel has request slots). */
static int am_get_nbi(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                      size_t len, shmemi_gets_t *gets)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    size_t asked = 0;
    do {
        size_t piece = len - asked < AM_PIECE ? len - asked : AM_PIECE;
        uint64_t token = 0;
        if (gets && gets->count >= AM_GET_WINDOW)
            SHMEMI_TRY(shmemi_gets_complete(gets, 1, &token_gets, c));
        int rc = ask_piece(c, pe, seg, offset + asked, (uint8_t *)dst + asked, piece, gets == NULL, &token);
        if (rc != ACLSHMEM_SUCCESS) {
            if (gets)
                shmemi_gets_abandon(gets, &token_gets, c);
            return rc;
        }
        if (gets)
            shmemi_gets_add(gets, token, pe);
        asked += piece;
    } while (asked < len);
    return ACLSHMEM_SUCCESS;
}

static int am_gets_wait(shmemi_instance_t *inst, shmemi_channel_t *ch, shmemi_gets_t *gets)
{
    return shmemi_gets_complete(gets, gets->count, &token_gets, ucx_channel(inst, ch));
}

/* Up to AM_GET_WINDOW pieces in flight: the oldest is awaited before another is asked. */
static int am_get(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                  size_t len)
{
    shmemi_gets_t gets = {0};
    SHMEMI_TRY(am_get_nbi(inst, ch, pe, seg, offset, dst, len, &gets));
    return am_gets_wait(inst, ch, &gets);
}

static int am_amo(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                  const shmemi_amo_t *a, uint64_t *fetched)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    shmemi_am_header_t h;
    header_for(c, &h, SHMEMI_AM_AMO, pe);
    h.seg = (uint8_t)seg;
    h.offset = offset;
    h.amo_op = (uint8_t)a->op;
    h.amo_kind = (uint8_t)a->kind;
    h.amo_width = (uint32_t)a->width;
    h.value = a->value;
    h.cond = a->cond;
    if (!fetched) { /* posted: complete at the next quiet, as a put (unless untracked) */
        if (!a->untracked)
            mark_written(c, pe);
        return am_send(c, pe, &h, NULL, 0, "an atomic operation");
    }
    SHMEMI_TRY(take_slot(c, SHMEMI_AM_AMO, pe, NULL, 0, &h.token));
    int rc = am_send(c, pe, &h, NULL, 0, "an atomic operation");
    if (rc != ACLSHMEM_SUCCESS) {
        release_slot(c, h.token);
        return rc;
    }
    return await_reply(c, h.token, fetched);
}

/* Nothing to ring: the target applies our messages in its own progress and rings its own
 * doorbell. */
static void am_notify(shmemi_instance_t *inst, int pe)
{
    (void)inst, (void)pe;
}

/* Under c->lock: every get_nbi of the channel landed. */
static int detached_gets_landed(ucx_channel_t *c, void *arg)
{
    (void)arg;
    return c->pending.detached == 0;
}

/* The end of a quiet (rc: how its flushes went): the channel's get_nbi land, or are given up
 * when the job failed (a late reply then writes nothing). */
static int await_detached_gets(ucx_channel_t *c, int rc)
{
    if (rc == ACLSHMEM_SUCCESS && __atomic_load_n(&c->pending.detached, __ATOMIC_ACQUIRE))
        rc = shmemi_ucx_poll_until(c, detached_gets_landed, NULL);
    if (rc != ACLSHMEM_SUCCESS) {
        pthread_mutex_lock(&c->lock);
        shmemi_am_pending_abandon_detached(&c->pending);
        pthread_mutex_unlock(&c->lock);
    }
    return rc;
}

/* A FLUSH to every PE written on the channel since its last quiet, then their answers, then
 * the channel's get_nbi (a get needs no FLUSH: its reply is its completion). */
static int am_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    ucx_channel_t *c = ucx_channel(inst, ch);
    int rc = ACLSHMEM_SUCCESS;
    uint64_t *tokens = calloc((size_t)inst->n_pes, sizeof(*tokens));
    if (!tokens)
        return c->st->host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    for (int pe = 0; pe < inst->n_pes && rc == ACLSHMEM_SUCCESS; pe++) {
        pthread_mutex_lock(&c->lock);
        int written = c->dirty[pe];
        c->dirty[pe] = 0;
        pthread_mutex_unlock(&c->lock);
        if (!written)
            continue;
        rc = take_slot(c, SHMEMI_AM_FLUSH, pe, NULL, 0, &tokens[pe]);
        shmemi_am_header_t h;
        header_for(c, &h, SHMEMI_AM_FLUSH, pe);
        h.token = tokens[pe];
        if (rc == ACLSHMEM_SUCCESS)
            rc = am_send(c, pe, &h, NULL, 0, "quiet (a flush)");
    }
    for (int pe = 0; pe < inst->n_pes; pe++) {
        if (!tokens[pe])
            continue;
        if (rc == ACLSHMEM_SUCCESS)
            rc = await_reply(c, tokens[pe], NULL);
        else
            release_slot(c, tokens[pe]);
    }
    free(tokens);
    return await_detached_gets(c, rc);
}

/* Nothing to do: the messages of one channel to one PE are sent eagerly, one after the
 * other, on one lane, and applied in that order (see the top of this file). */
static int am_fence(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    (void)inst, (void)ch;
    return ACLSHMEM_SUCCESS;
}

const shmemi_transport_ops_t shmemi_ucx_am_ops = {
    .name = "ucx-am",
    .put = am_put,
    .get = am_get,
    .get_nbi = am_get_nbi,
    .gets_wait = am_gets_wait,
    .amo = am_amo,
    .notify = am_notify,
    .quiet = am_quiet,
    .fence = am_fence,
    .ptr = shmemi_ucx_no_ptr,
};

/* ---- receiving ------------------------------------------------------------------------------- */

static void target_put(void *ctx, int seg, size_t offset, const void *src, size_t len)
{
    ucx_channel_t *c = ctx;
    c->st->host->put_local(c->st->inst, seg, offset, src, len);
}

static uint64_t target_amo(void *ctx, int seg, size_t offset, const shmemi_amo_t *a)
{
    ucx_channel_t *c = ctx;
    return c->st->host->amo_local(c->st->inst, seg, offset, a);
}

static int target_can_reply(void *ctx, int pe)
{
    ucx_channel_t *c = ctx;
    return c->st->main.ep[pe] != NULL; /* a PE of another node */
}

/* A reply that UCX could not send at once is done (sent, or cancelled as its endpoint
 * closed): its header and its request go. */
static void reply_sent(void *request, ucs_status_t status, void *user_data)
{
    (void)status;
    free(user_data);
    ucp_request_free(request);
}

/* Runs inside the worker's progress, under c->lock.  The reply goes where the request asked
 * (a context channel of the requester) or else to the requester's main worker. */
static void target_reply(void *ctx, int pe, uint64_t token, uint64_t value, const void *data, size_t len)
{
    ucx_channel_t *c = ctx;
    shmemi_am_header_t *h = malloc(sizeof(*h));
    if (!h)
        return; /* the requester's wait ends when the job fails or this PE answers again */
    header_for(c, h, SHMEMI_AM_REPLY, pe);
    h->token = token;
    h->value = value;
    h->len = len;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .flags = UCP_AM_SEND_FLAG_EAGER,
        .cb.send = reply_sent,
        .user_data = h,
    };
    ucp_ep_h ep = c->reply_ep ? c->reply_ep : c->st->main.ep[pe];
    ucs_status_ptr_t req = ucp_am_send_nbx(ep, SHMEMI_AM_UCP_ID, h, sizeof(*h), data, len, &param);
    if (!UCS_PTR_IS_PTR(req))
        free(h); /* sent at once (or failed): no callback will come */
}

static uint64_t total_dropped(const shmemi_am_target_t *t)
{
    uint64_t n = 0;
    for (int r = 0; r < SHMEMI_AM_DROP_REASONS; r++)
        n += t->dropped[r];
    return n;
}

/* Logs the first message dropped at warning level, later ones at debug level, so that a
 * flood of forged messages cannot flood the log. */
static void note_drop(ucx_channel_t *c, shmemi_am_drop_t why)
{
    ucx_state_t *st = c->st;
    int first = total_dropped(&c->target) == 1;
    st->host->log(first ? SHMEMI_LOG_WARN : SHMEMI_LOG_DEBUG, "PE %d: data plane: dropped an active message (%s)%s",
                  st->inst->my_pe, shmemi_am_drop_names[why],
                  first ? "; further drops are logged at debug level and counted" : "");
}

static ucs_status_t am_arrived(void *arg, const void *header, size_t header_length, void *data, size_t length,
                               const ucp_am_recv_param_t *param)
{
    ucx_channel_t *c = arg;
    shmemi_am_drop_t result;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) { /* we never send rendezvous: not ours */
        c->target.dropped[result = SHMEMI_AM_DROP_MALFORMED]++;
    } else {
        c->reply_ep = param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP ? param->reply_ep : NULL;
        result = shmemi_am_receive(&c->target, header, header_length, data, length);
        c->reply_ep = NULL;
    }
    if (result != SHMEMI_AM_APPLIED)
        note_drop(c, result);
    return UCS_OK; /* the data is not kept (UCX releases it; a rendezvous is dropped) */
}

/* An active message of UCP's user kind under an id that is not ours: nobody of the job
 * sends one, so it is dropped and counted like a malformed message of ours. */
static ucs_status_t am_foreign(void *arg, const void *header, size_t header_length, void *data, size_t length,
                               const ucp_am_recv_param_t *param)
{
    ucx_channel_t *c = arg;
    (void)header, (void)header_length, (void)data, (void)length, (void)param;
    c->target.dropped[SHMEMI_AM_DROP_MALFORMED]++;
    note_drop(c, SHMEMI_AM_DROP_MALFORMED);
    return UCS_OK;
}

/* Installs am_arrived under SHMEMI_AM_UCP_ID and am_foreign under every id below it, in
 * ascending order.  Why all of them: when UCX 1.13 grows its table of handlers it fills
 * only the entry of the id being set and leaves the rest of the new capacity as it found
 * the memory (ucp_am.c, ucp_worker_set_am_handler_common), so a message under another id
 * would call a stale pointer.  Setting ids 0, 1, 2 ... in turn leaves no such entry (the
 * table grows to an even capacity at least twice the old one: 2, 4, 8). */
static int set_handlers(ucx_channel_t *c)
{
    for (unsigned id = 0; id <= SHMEMI_AM_UCP_ID; id++) {
        ucp_am_handler_param_t param = {
            .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                          UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
            .id = id,
            .flags = UCP_AM_FLAG_WHOLE_MSG,
            .cb = id == SHMEMI_AM_UCP_ID ? am_arrived : am_foreign,
            .arg = c,
        };
        ucs_status_t status = ucp_worker_set_am_recv_handler(c->worker, &param);
        if (status != UCS_OK)
            return shmemi_ucx_fail(c->st, status, "active-message handler");
    }
    return ACLSHMEM_SUCCESS;
}

int shmemi_ucx_am_listen(ucx_channel_t *c)
{
    ucx_state_t *st = c->st;
    shmemi_am_target_t *t = &c->target;
    if (c != &st->main) { /* the same PE as a receiver: its capability and segments */
        *t = st->main.target;
        memset(t->dropped, 0, sizeof(t->dropped));
        t->accepted = 0;
    } else {
        shmemi_instance_t *inst = st->inst;
        t->my_pe = inst->my_pe;
        t->n_pes = inst->n_pes;
        for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
            t->seg[s].base = inst->heaps.seg[s].base;
            t->seg[s].size = inst->heaps.seg[s].size;
        }
        t->put = target_put;
        t->amo = target_amo;
        t->can_reply = target_can_reply;
        t->reply = target_reply;
        SHMEMI_TRY(st->host->random(t->cap, sizeof(t->cap)));
    }
    t->pending = &c->pending;
    t->ctx = c;
    return set_handlers(c);
}

void shmemi_ucx_am_report(ucx_state_t *st)
{
    const shmemi_am_target_t *t = &st->main.target;
    uint64_t dropped = total_dropped(t);
    int level = dropped ? SHMEMI_LOG_WARN : SHMEMI_LOG_INFO;
    st->host->log(level,
                  "PE %d: data plane: %llu active messages applied, %llu dropped (%llu malformed, %llu with a "
                  "wrong capability, %llu outside the segments, %llu impossible, %llu stale replies); %lu "
                  "connections from outside the job shut down",
                  st->inst->my_pe, (unsigned long long)t->accepted, (unsigned long long)dropped,
                  (unsigned long long)t->dropped[SHMEMI_AM_DROP_MALFORMED],
                  (unsigned long long)t->dropped[SHMEMI_AM_DROP_CAPABILITY],
                  (unsigned long long)t->dropped[SHMEMI_AM_DROP_BOUNDS],
                  (unsigned long long)t->dropped[SHMEMI_AM_DROP_ARGUMENT],
                  (unsigned long long)t->dropped[SHMEMI_AM_DROP_STALE], st->main.guard.swept);
}
