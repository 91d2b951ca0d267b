/*
 * fuzz_ucx_am.c - a seeded random fuzzer of the data plane's active-message receiver
 * (src/transport/ucx/ucx_am.c, issue #23): the code every PE of a multi-node job runs on
 * each message that arrives through UCX, linked in directly, so that an ASan/UBSan build
 * watches every byte it touches.
 *
 * Each iteration makes a receiving PE with its segments of random sizes (each its own
 * malloc of exactly that size, so a one-byte overrun is caught; the program-data segment is
 * absent, as on a PE that does not share its globals, in half of them), a random capability and a
 * table of requests of its own waiting for replies (gets into exactly-sized buffers, AMOs,
 * flushes, some given up, some gets detached as a get_nbi's are), then feeds it messages:
 *
 *  - from an outsider: random bytes, random headers, our headers with a guessed or
 *    almost-right capability, replies to guessed tokens;
 *  - from a member (who knows the capability): well-formed requests, requests whose
 *    segment, offset, length, AMO or PE are at and past every edge, and mutations of
 *    well-formed messages (random bytes flipped, lengths changed, data cut or extended);
 *  - replies to the PE's own requests, right and wrong (token, generation, PE, length).
 *
 * What must hold, or the run fails with the seed that reproduces it:
 *  - a message without the right capability causes no action at all and is counted as
 *    malformed or as a wrong capability;
 *  - every action lies inside the segments (writes, AMO words, reply data), an AMO word is
 *    aligned to its width, a reply goes to a PE that may be answered;
 *  - a reply completes only a waiting request of that token, PE and length, and writes only
 *    into that request's buffer; a given-up request is never completed; a detached get
 *    that lands frees its slot, and the count of detached gets waiting stays exact;
 *  - every message is counted exactly once (applied or dropped for one reason).
 *
 * Usage: fuzz_ucx_am [--seed N] [--iterations N] [--seconds S]
 *   (default: 3000 iterations of 2000 messages or 30 s; the seed is printed).  A failure
 *   prints "--seed X --iterations 1", which replays the failing iteration alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FUZZ_NAME "fuzz_ucx_am"
#include "fuzz.h"
#include "transport/ucx/ucx_am.h"

#define N_PES 5
#define MY_PE 1
#define NO_ENDPOINT_PE 3 /* a PE of this node: no reply can go there */
#define MESSAGES 2000
#define DEFAULT_ITERATIONS 3000
#define DEFAULT_SECONDS 30
#define REQUESTS 24
#define GET_MAX_PIECE 4096

/* ---- the receiving PE and what it was made to do ------------------------------------------ */

typedef struct {
    shmemi_am_target_t t;
    shmemi_am_pending_t pending;
    int authentic;       /* the message under test carries the right capability */
    unsigned long actions; /* actions the message under test caused */
} pe_t;

static void check_inside(pe_t *pe, int seg, size_t offset, size_t len, const char *what)
{
    if (!pe->authentic)
        fail("a message without the capability caused a %s", what);
    if (seg < 0 || seg >= SHMEMI_SEG_COUNT || !pe->t.seg[seg].base || offset > pe->t.seg[seg].size ||
        len > pe->t.seg[seg].size - offset)
        fail("a %s of %zu bytes at (%d, %zu) lies outside the segment", what, len, seg, offset);
    pe->actions++;
}

static void act_put(void *ctx, int seg, size_t offset, const void *src, size_t len)
{
    pe_t *pe = ctx;
    check_inside(pe, seg, offset, len, "put");
    memcpy(pe->t.seg[seg].base + offset, src, len); /* ASan sees every byte written */
}

static uint64_t act_amo(void *ctx, int seg, size_t offset, const shmemi_amo_t *a)
{
    pe_t *pe = ctx;
    check_inside(pe, seg, offset, (size_t)a->width, "AMO");
    if (a->width != 1 && a->width != 2 && a->width != 4 && a->width != 8)
        fail("an AMO of width %d", a->width);
    if (offset % (size_t)a->width)
        fail("an AMO of width %d at the unaligned offset %zu", a->width, offset);
    uint64_t old = 0;
    memcpy(&old, pe->t.seg[seg].base + offset, (size_t)a->width);
    uint64_t updated = a->value;
    memcpy(pe->t.seg[seg].base + offset, &updated, (size_t)a->width);
    return old;
}

static int act_can_reply(void *ctx, int pe_no)
{
    (void)ctx;
    if (pe_no < 0 || pe_no >= N_PES)
        fail("asked whether PE %d can be answered", pe_no);
    return pe_no != MY_PE && pe_no != NO_ENDPOINT_PE;
}

static void act_reply(void *ctx, int pe_no, uint64_t token, uint64_t value, const void *data, size_t len)
{
    pe_t *pe = ctx;
    (void)value;
    if (!pe->authentic)
        fail("a message without the capability caused a reply");
    if (!act_can_reply(ctx, pe_no) || token == 0)
        fail("a reply to PE %d with token %llu", pe_no, (unsigned long long)token);
    if (len) {
        int seg = -1;
        for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
            if (pe->t.seg[s].base && (const uint8_t *)data >= pe->t.seg[s].base &&
                (const uint8_t *)data < pe->t.seg[s].base + pe->t.seg[s].size)
                seg = s; /* the segment whose bytes data starts in (segments never overlap) */
        if (seg < 0)
            fail("a reply's data does not point into a segment");
        check_inside(pe, seg, (size_t)((const uint8_t *)data - pe->t.seg[seg].base), len, "reply");
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < len; i++) /* read every byte, as UCX would */
            sum ^= ((const uint8_t *)data)[i];
    } else {
        pe->actions++;
    }
}

static size_t segment_size(void)
{
    static const size_t sizes[] = {1, 7, 8, 64, 4096, 65536 + 3};
    return sizes[rnd(sizeof(sizes) / sizeof(sizes[0]))];
}

static void make_pe(pe_t *pe)
{
    memset(pe, 0, sizeof(*pe));
    rnd_fill(pe->t.cap, sizeof(pe->t.cap));
    pe->t.my_pe = MY_PE;
    pe->t.n_pes = N_PES;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (s == SHMEMI_SEG_DATA && rnd(2))
            continue; /* absent: base NULL, size 0; every access to it must be dropped */
        pe->t.seg[s].size = segment_size();
        pe->t.seg[s].base = malloc(pe->t.seg[s].size);
        rnd_fill(pe->t.seg[s].base, pe->t.seg[s].size);
    }
    pe->t.pending = &pe->pending;
    pe->t.ctx = pe;
    pe->t.put = act_put;
    pe->t.amo = act_amo;
    pe->t.can_reply = act_can_reply;
    pe->t.reply = act_reply;
}

static void free_pe(pe_t *pe);

/* ---- the PE's own requests ------------------------------------------------------------------ */

typedef struct {
    uint64_t token;
    uint8_t op;
    int pe;
    size_t len;
    int given_up; /* released: its token is dead */
    int detached; /* a get nobody awaits: its reply frees the slot */
    void *dst;
} request_t;

static request_t requests[REQUESTS];

static void make_requests(pe_t *pe)
{
    static const uint8_t ops[] = {SHMEMI_AM_GET, SHMEMI_AM_AMO, SHMEMI_AM_FLUSH};
    for (int i = 0; i < REQUESTS; i++) {
        request_t *r = &requests[i];
        r->op = ops[rnd(3)];
        r->pe = (int)rnd(N_PES);
        r->len = r->op == SHMEMI_AM_GET ? 1 + rnd(GET_MAX_PIECE) : 0;
        void *dst = r->len ? malloc(r->len) : NULL;
        r->token = shmemi_am_pending_take(&pe->pending, r->op, r->pe, dst, r->len);
        if (!r->token)
            fail("no free request slot for request %d", i);
        r->given_up = rnd(5) == 0;
        r->detached = !r->given_up && r->op == SHMEMI_AM_GET && rnd(3) == 0;
        r->dst = dst;
        if (r->given_up) {
            shmemi_am_pending_release(&pe->pending, r->token);
            free(dst);
        }
        if (r->detached)
            shmemi_am_pending_detach(&pe->pending, r->token);
    }
}

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct {
    uint8_t header[2 * sizeof(shmemi_am_header_t)];
    size_t header_len;
    uint8_t data[3 * GET_MAX_PIECE];
    size_t data_len;
} message_t;

static uint64_t edge_value(uint64_t around)
{
    switch (rnd(8)) {
    case 0: return around;
    case 1: return around - 1;
    case 2: return around + 1;
    case 3: return 0;
    case 4: return UINT64_MAX - rnd(16);
    case 5: return (uint64_t)1 << rnd(64);
    case 6: return rnd64();
    default: return rnd((uint32_t)around + 8);
    }
}

/* A request as a member might send it: fields at and around every edge. */
static void member_request(const pe_t *pe, message_t *m)
{
    shmemi_am_header_t h;
    shmemi_am_header_init(&h, pe->t.cap, (shmemi_am_op_t)(1 + rnd(SHMEMI_AM_OP_END + 1)), (int)rnd(N_PES + 2) - 1);
    h.seg = (uint8_t)(rnd(8) == 0 ? rnd(256) : rnd(SHMEMI_SEG_COUNT));
    size_t size = h.seg < SHMEMI_SEG_COUNT ? pe->t.seg[h.seg].size : 64;
    h.offset = edge_value(size);
    h.len = edge_value(rnd(2) ? size - (h.offset < size ? h.offset : 0) : 8);
    h.amo_op = (uint8_t)rnd(SHMEMI_AMO_XOR + 3);
    h.amo_kind = (uint8_t)rnd(SHMEMI_AMO_BFLOAT16 + 3);
    static const uint32_t widths[] = {1, 2, 4, 8, 0, 3, 16, 0xffffffffu};
    h.amo_width = widths[rnd(8)];
    if (rnd(2) && h.amo_width <= 8)
        h.offset &= ~(uint64_t)(h.amo_width ? h.amo_width - 1 : 0);
    h.token = rnd(4) ? 1 + rnd64() % 1000 : 0;
    h.value = rnd64();
    h.cond = rnd64();
    memcpy(m->header, &h, sizeof(h));
    m->header_len = sizeof(h);
    m->data_len = h.op == SHMEMI_AM_PUT && h.len <= sizeof(m->data) && rnd(4) ? (size_t)h.len : rnd(64);
    rnd_fill(m->data, m->data_len);
}

/* A reply to one of the PE's requests: right, or wrong in one field. */
static void reply_to_request(const pe_t *pe, message_t *m)
{
    const request_t *r = &requests[rnd(REQUESTS)];
    shmemi_am_header_t h;
    shmemi_am_header_init(&h, pe->t.cap, SHMEMI_AM_REPLY, r->pe);
    h.token = r->token;
    h.len = r->len;
    m->data_len = r->len;
    switch (rnd(6)) {
    case 0: h.token ^= (uint64_t)1 << rnd(64); break;
    case 1: h.src_pe = (int32_t)rnd(N_PES + 2) - 1; break;
    case 2: h.len = edge_value(r->len); break;
    case 3: m->data_len = (size_t)edge_value(r->len) % sizeof(m->data); break;
    default: break; /* the right reply */
    }
    memcpy(m->header, &h, sizeof(h));
    m->header_len = sizeof(h);
    rnd_fill(m->data, m->data_len);
}

/* Random bytes flipped, the header cut or extended, the data resized. */
static void mutate(message_t *m)
{
    for (int i = (int)rnd(4); i > 0; i--)
        m->header[rnd((uint32_t)m->header_len)] ^= (uint8_t)(1 + rnd(255));
    if (rnd(8) == 0)
        m->header_len = rnd(sizeof(m->header) + 1);
    if (rnd(8) == 0)
        m->data_len = rnd(sizeof(m->data) + 1);
}

/* An outsider: garbage, or our header with a guessed capability. */
static void outsider_message(const pe_t *pe, message_t *m)
{
    m->header_len = rnd(4) == 0 ? rnd(sizeof(m->header) + 1) : sizeof(shmemi_am_header_t);
    rnd_fill(m->header, m->header_len);
    m->data_len = rnd(256);
    rnd_fill(m->data, m->data_len);
    if (m->header_len == sizeof(shmemi_am_header_t) && rnd(2)) {
        message_t real;
        rnd(2) ? member_request(pe, &real) : reply_to_request(pe, &real);
        memcpy(m->header, real.header, sizeof(shmemi_am_header_t));
        shmemi_am_header_t *h = (shmemi_am_header_t *)(void *)m->header;
        h->cap[rnd(SHMEMI_AM_CAP_LEN)] ^= (uint8_t)(1 + rnd(255)); /* almost right */
        if (rnd(2))
            rnd_fill(h->cap, SHMEMI_AM_CAP_LEN);
        if (memcmp(h->cap, pe->t.cap, SHMEMI_AM_CAP_LEN) == 0)
            h->cap[0] ^= 1;
    }
}

/* ---- the checks around one message ----------------------------------------------------------- */

static uint64_t counted(const shmemi_am_target_t *t)
{
    uint64_t n = t->accepted;
    for (int r = 0; r < SHMEMI_AM_DROP_REASONS; r++)
        n += t->dropped[r];
    return n;
}

static int carries_capability(const pe_t *pe, const message_t *m)
{
    return m->header_len == sizeof(shmemi_am_header_t) &&
           memcmp(((const shmemi_am_header_t *)(const void *)m->header)->cap, pe->t.cap, SHMEMI_AM_CAP_LEN) == 0;
}

/* Frees the PE and the buffers of its gets (a detached get that landed left its slot). */
static void free_pe(pe_t *pe)
{
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        free(pe->t.seg[s].base);
    for (int i = 0; i < SHMEMI_AM_SLOTS; i++)
        if (pe->pending.slot[i].state != SHMEMI_AM_SLOT_FREE && pe->pending.slot[i].op == SHMEMI_AM_GET)
            free(pe->pending.slot[i].dst);
    for (int i = 0; i < REQUESTS; i++) {
        const shmemi_am_slot_t *s = shmemi_am_pending_slot(&pe->pending, requests[i].token);
        if (requests[i].detached && s->state == SHMEMI_AM_SLOT_FREE)
            free(requests[i].dst);
    }
}

/* A request's token still names its slot (a released slot has moved to another generation). */
static int token_alive(const pe_t *pe, const request_t *r)
{
    const shmemi_am_slot_t *s = shmemi_am_pending_slot((shmemi_am_pending_t *)&pe->pending, r->token);
    return s->state != SHMEMI_AM_SLOT_FREE && s->generation == (uint32_t)(r->token >> 32);
}

/* A detached get that was waiting and is gone now: only its own right reply may have ended it,
 * with its data in its buffer; and the count of detached gets waiting is exact. */
static void check_detached(const pe_t *pe, const message_t *m, const int was_waiting[REQUESTS])
{
    unsigned waiting = 0;
    for (int i = 0; i < REQUESTS; i++) {
        const request_t *r = &requests[i];
        if (!r->detached)
            continue;
        waiting += token_alive(pe, r);
        if (!was_waiting[i] || token_alive(pe, r))
            continue;
        const shmemi_am_header_t *h = (const shmemi_am_header_t *)(const void *)m->header;
        if (!carries_capability(pe, m) || h->op != SHMEMI_AM_REPLY || h->token != r->token || h->src_pe != r->pe ||
            m->data_len != r->len || memcmp(r->dst, m->data, r->len) != 0)
            fail("detached get %d (PE %d, %zu bytes) was ended by a message that is not its reply", i, r->pe, r->len);
    }
    if (waiting != pe->pending.detached)
        fail("%u detached gets wait, the count says %u", waiting, pe->pending.detached);
}

/* The requests a reply may have completed: only the one its token names, and only right. */
static void check_requests(const pe_t *pe, const message_t *m, const int was_waiting[REQUESTS])
{
    for (int i = 0; i < REQUESTS; i++) {
        const request_t *r = &requests[i];
        const shmemi_am_slot_t *s = shmemi_am_pending_slot((shmemi_am_pending_t *)&pe->pending, r->token);
        if (!was_waiting[i] || s->state != SHMEMI_AM_SLOT_DONE)
            continue;
        const shmemi_am_header_t *h = (const shmemi_am_header_t *)(const void *)m->header;
        if (r->given_up)
            fail("a request that was given up was completed");
        if (!carries_capability(pe, m) || h->op != SHMEMI_AM_REPLY || h->token != r->token || h->src_pe != r->pe ||
            m->data_len != r->len || (r->len && memcmp(s->dst, m->data, r->len) != 0))
            fail("request %d (op %u, PE %d, %zu bytes) was completed by a message that is not its reply", i,
                 r->op, r->pe, r->len);
    }
}

static void deliver(pe_t *pe, message_t *m)
{
    int was_waiting[REQUESTS];
    for (int i = 0; i < REQUESTS; i++)
        was_waiting[i] = shmemi_am_pending_slot(&pe->pending, requests[i].token)->state == SHMEMI_AM_SLOT_WAITING;
    pe->authentic = carries_capability(pe, m);
    pe->actions = 0;
    uint64_t before = counted(&pe->t);
    shmemi_am_drop_t result = shmemi_am_receive(&pe->t, m->header, m->header_len, m->data_len ? m->data : NULL,
                                                m->data_len);
    if (counted(&pe->t) != before + 1)
        fail("a message was counted %llu times", (unsigned long long)(counted(&pe->t) - before));
    if (!pe->authentic && result != SHMEMI_AM_DROP_MALFORMED && result != SHMEMI_AM_DROP_CAPABILITY)
        fail("a message without the capability was %s", result == SHMEMI_AM_APPLIED ? "applied"
                                                          : shmemi_am_drop_names[result]);
    if (result != SHMEMI_AM_APPLIED && pe->actions)
        fail("a dropped message (%s) caused %lu actions", shmemi_am_drop_names[result], pe->actions);
    check_requests(pe, m, was_waiting);
    check_detached(pe, m, was_waiting);
}

static void run_iteration(void)
{
    rng_state = splitmix64(iteration_seed) | 1;
    pe_t pe;
    make_pe(&pe);
    make_requests(&pe);
    for (int i = 0; i < MESSAGES; i++) {
        message_t m;
        memset(m.header, 0, sizeof(m.header)); /* a mutation may lengthen the header */
        switch (rnd(5)) {
        case 0: outsider_message(&pe, &m); break;
        case 1: reply_to_request(&pe, &m); break;
        case 2: member_request(&pe, &m); mutate(&m); break;
        default: member_request(&pe, &m); break;
        }
        deliver(&pe, &m);
    }
    free_pe(&pe);
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    long iterations = DEFAULT_ITERATIONS, seconds = DEFAULT_SECONDS;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--iterations") == 0)
            iterations = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = strtol(argv[i + 1], NULL, 10);
    }
    printf("fuzz_ucx_am: seed %llu\n", (unsigned long long)seed);
    time_t start = time(NULL);
    long done = 0;
    for (iteration_seed = seed; iterations == 0 || done < iterations; iteration_seed = splitmix64(iteration_seed)) {
        run_iteration();
        done++;
        if (seconds > 0 && time(NULL) - start >= seconds)
            break;
    }
    printf("fuzz_ucx_am: %ld iterations of %d messages, every check held\n", done, MESSAGES);
    return 0;
}
