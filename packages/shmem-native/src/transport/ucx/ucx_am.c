/* The data plane's active messages: checks and dispatch on the receiving side, and the
 * requester's table of pending requests (see ucx_am.h).  No UCX here: the plug-in wraps
 * shmemi_am_receive in its UCP handler, and the fuzzer calls it directly. */
#include "transport/ucx/ucx_am.h"

#include <string.h>

/* A GET asks for at most this much (requesters send larger gets in pieces), so that a
 * member cannot make a PE queue a reply of a whole segment. */
#define SHMEMI_AM_GET_MAX ((uint64_t)1 << 20)

const char *const shmemi_am_drop_names[SHMEMI_AM_DROP_REASONS] = {
    [SHMEMI_AM_DROP_MALFORMED] = "malformed",
    [SHMEMI_AM_DROP_CAPABILITY] = "wrong capability",
    [SHMEMI_AM_DROP_BOUNDS] = "outside the segments",
    [SHMEMI_AM_DROP_ARGUMENT] = "impossible argument",
    [SHMEMI_AM_DROP_STALE] = "reply to no request",
};

void shmemi_am_header_init(shmemi_am_header_t *h, const uint8_t cap[SHMEMI_AM_CAP_LEN], shmemi_am_op_t op,
                           int src_pe)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->cap, cap, SHMEMI_AM_CAP_LEN);
    h->magic = SHMEMI_AM_MAGIC;
    h->op = (uint8_t)op;
    h->src_pe = src_pe;
}

/* ---- pending requests ------------------------------------------------------------------- */

static uint64_t token_of(const shmemi_am_pending_t *p, unsigned index)
{
    return ((uint64_t)p->slot[index].generation << 32) | (uint64_t)(index + 1);
}

uint64_t shmemi_am_pending_take(shmemi_am_pending_t *p, uint8_t op, int pe, void *dst, size_t len)
{
    for (unsigned i = 0; i < SHMEMI_AM_SLOTS; i++) {
        unsigned index = (p->next + i) % SHMEMI_AM_SLOTS;
        shmemi_am_slot_t *s = &p->slot[index];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SHMEMI_AM_SLOT_FREE)
            continue;
        s->op = op;
        s->pe = pe;
        s->dst = dst;
        s->len = len;
        s->value = 0;
        s->detached = 0;
        __atomic_store_n(&s->state, SHMEMI_AM_SLOT_WAITING, __ATOMIC_RELEASE);
        p->next = (index + 1) % SHMEMI_AM_SLOTS;
        return token_of(p, index);
    }
    return 0;
}

shmemi_am_slot_t *shmemi_am_pending_slot(shmemi_am_pending_t *p, uint64_t token)
{
    return &p->slot[(uint32_t)token - 1];
}

static void release_slot(shmemi_am_pending_t *p, shmemi_am_slot_t *s)
{
    if (s->detached && s->state == SHMEMI_AM_SLOT_WAITING)
        __atomic_store_n(&p->detached, p->detached - 1, __ATOMIC_RELEASE);
    s->detached = 0;
    s->generation++; /* a reply still on its way to this token no longer matches */
    s->dst = NULL;
    __atomic_store_n(&s->state, SHMEMI_AM_SLOT_FREE, __ATOMIC_RELEASE);
}

void shmemi_am_pending_release(shmemi_am_pending_t *p, uint64_t token)
{
    shmemi_am_slot_t *s = shmemi_am_pending_slot(p, token);
    if (s->state != SHMEMI_AM_SLOT_FREE && token == token_of(p, (unsigned)((uint32_t)token - 1)))
        release_slot(p, s); /* (a detached slot's reply may have freed it already) */
}

void shmemi_am_pending_detach(shmemi_am_pending_t *p, uint64_t token)
{
    shmemi_am_pending_slot(p, token)->detached = 1;
    __atomic_store_n(&p->detached, p->detached + 1, __ATOMIC_RELEASE);
}

void shmemi_am_pending_abandon_detached(shmemi_am_pending_t *p)
{
    for (unsigned i = 0; i < SHMEMI_AM_SLOTS; i++)
        if (p->slot[i].detached && p->slot[i].state == SHMEMI_AM_SLOT_WAITING)
            release_slot(p, &p->slot[i]);
}

/* ---- checks --------------------------------------------------------------------------------- */

/* Compares the capabilities in constant time: how long a wrong guess takes tells nothing
 * about how many of its bytes were right. */
static int capability_matches(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;
    for (int i = 0; i < SHMEMI_AM_CAP_LEN; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

/* [offset, offset + len) lies inside segment seg of this PE (no overflow on any input). */
static int inside_segment(const shmemi_am_target_t *t, uint64_t seg, uint64_t offset, uint64_t len)
{
    if (seg >= SHMEMI_SEG_COUNT)
        return 0;
    uint64_t size = t->seg[seg].size;
    return t->seg[seg].base != NULL && offset <= size && len <= size - offset;
}

/* The AMO a header describes, if it is one the engine can do. */
static int amo_from_header(const shmemi_am_header_t *h, shmemi_amo_t *a)
{
    uint32_t w = h->amo_width;
    if (w != 1 && w != 2 && w != 4 && w != 8)
        return 0;
    if (h->amo_op > SHMEMI_AMO_XOR || h->amo_kind > SHMEMI_AMO_BFLOAT16)
        return 0;
    int bitwise = h->amo_op == SHMEMI_AMO_AND || h->amo_op == SHMEMI_AMO_OR || h->amo_op == SHMEMI_AMO_XOR;
    switch (h->amo_kind) {
    case SHMEMI_AMO_FLOAT:
        if (bitwise || (w != 4 && w != 8))
            return 0;
        break;
    case SHMEMI_AMO_HALF:
    case SHMEMI_AMO_BFLOAT16:
        if (bitwise || w != 2)
            return 0;
        break;
    default:
        break;
    }
    a->op = (shmemi_amo_op_t)h->amo_op;
    a->kind = (shmemi_amo_kind_t)h->amo_kind;
    a->width = (int)w;
    a->value = h->value;
    a->cond = h->cond;
    return 1;
}

static shmemi_am_drop_t drop(shmemi_am_target_t *t, shmemi_am_drop_t why)
{
    t->dropped[why]++;
    return why;
}

/* A request that asks for an answer names a PE we can answer. */
static int can_answer(shmemi_am_target_t *t, const shmemi_am_header_t *h)
{
    return h->src_pe >= 0 && h->src_pe < t->n_pes && h->src_pe != t->my_pe && t->can_reply(t->ctx, h->src_pe);
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static shmemi_am_drop_t receive_put(shmemi_am_target_t *t, const shmemi_am_header_t *h, const void *data, size_t data_len)
{
    if (h->len != data_len)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (!inside_segment(t, h->seg, h->offset, h->len))
        return drop(t, SHMEMI_AM_DROP_BOUNDS);
    if (data_len)
        t->put(t->ctx, h->seg, (size_t)h->offset, data, data_len);
    return SHMEMI_AM_APPLIED;
}

static shmemi_am_drop_t receive_get(shmemi_am_target_t *t, const shmemi_am_header_t *h, size_t data_len)
{
    if (data_len != 0 || h->token == 0)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (h->len > SHMEMI_AM_GET_MAX || !can_answer(t, h))
        return drop(t, SHMEMI_AM_DROP_ARGUMENT);
    if (!inside_segment(t, h->seg, h->offset, h->len))
        return drop(t, SHMEMI_AM_DROP_BOUNDS);
    t->reply(t->ctx, h->src_pe, h->token, 0, t->seg[h->seg].base + h->offset, (size_t)h->len);
    return SHMEMI_AM_APPLIED;
}

static shmemi_am_drop_t receive_amo(shmemi_am_target_t *t, const shmemi_am_header_t *h, size_t data_len)
{
    shmemi_amo_t a;
    if (data_len != 0)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (!amo_from_header(h, &a) || (h->token != 0 && !can_answer(t, h)))
        return drop(t, SHMEMI_AM_DROP_ARGUMENT);
    if ((h->offset & (uint64_t)(a.width - 1)) != 0 || !inside_segment(t, h->seg, h->offset, (uint64_t)a.width))
        return drop(t, SHMEMI_AM_DROP_BOUNDS);
    uint64_t old = t->amo(t->ctx, h->seg, (size_t)h->offset, &a);
    if (h->token != 0)
        t->reply(t->ctx, h->src_pe, h->token, old, NULL, 0);
    return SHMEMI_AM_APPLIED;
}

static shmemi_am_drop_t receive_flush(shmemi_am_target_t *t, const shmemi_am_header_t *h, size_t data_len)
{
    if (data_len != 0 || h->token == 0)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (!can_answer(t, h))
        return drop(t, SHMEMI_AM_DROP_ARGUMENT);
    /* Messages of one sender are applied in the order they were sent: everything before
     * this one is in place. */
    t->reply(t->ctx, h->src_pe, h->token, 0, NULL, 0);
    return SHMEMI_AM_APPLIED;
}

/* A reply is accepted only for a request of ours that waits for exactly this answer from
 * exactly this PE; its data goes only into that request's own buffer. */
static shmemi_am_drop_t receive_reply(shmemi_am_target_t *t, const shmemi_am_header_t *h, const void *data, size_t data_len)
{
    uint64_t index = (uint32_t)h->token;
    if (index == 0 || index > SHMEMI_AM_SLOTS)
        return drop(t, SHMEMI_AM_DROP_STALE);
    shmemi_am_pending_t *p = t->pending;
    shmemi_am_slot_t *s = &p->slot[index - 1];
    if (s->state != SHMEMI_AM_SLOT_WAITING || h->token != token_of(p, (unsigned)(index - 1)) || h->src_pe != s->pe)
        return drop(t, SHMEMI_AM_DROP_STALE);
    size_t expected = s->op == SHMEMI_AM_GET ? s->len : 0;
    if (data_len != expected || h->len != expected)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (expected)
        memcpy(s->dst, data, expected);
    if (s->detached) { /* a get_nbi: landed, and nobody awaits it */
        release_slot(p, s);
        return SHMEMI_AM_APPLIED;
    }
    s->value = h->value;
    __atomic_store_n(&s->state, SHMEMI_AM_SLOT_DONE, __ATOMIC_RELEASE);
    return SHMEMI_AM_APPLIED;
}

shmemi_am_drop_t shmemi_am_receive(shmemi_am_target_t *t, const void *header, size_t header_len, const void *data,
                      size_t data_len)
{
    shmemi_am_header_t h;
    if (header_len != sizeof(h) || (data_len != 0 && data == NULL))
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    memcpy(&h, header, sizeof(h)); /* aligned, and no second read of bytes already checked */
    if (h.magic != SHMEMI_AM_MAGIC)
        return drop(t, SHMEMI_AM_DROP_MALFORMED);
    if (!capability_matches(h.cap, t->cap))
        return drop(t, SHMEMI_AM_DROP_CAPABILITY);
    shmemi_am_drop_t rc;
    switch (h.op) {
    case SHMEMI_AM_PUT: rc = receive_put(t, &h, data, data_len); break;
    case SHMEMI_AM_GET: rc = receive_get(t, &h, data_len); break;
    case SHMEMI_AM_AMO: rc = receive_amo(t, &h, data_len); break;
    case SHMEMI_AM_FLUSH: rc = receive_flush(t, &h, data_len); break;
    case SHMEMI_AM_REPLY: rc = receive_reply(t, &h, data, data_len); break;
    default: rc = drop(t, SHMEMI_AM_DROP_MALFORMED); break;
    }
    if (rc == SHMEMI_AM_APPLIED)
        t->accepted++;
    return rc;
}
