/* The authenticated data plane: puts, gets, AMOs and quiet carried as UCP active messages of
 * our own, for UCX transports where UCX itself would do RMA in software (TCP above all).
 *
 * Why: UCX's software RMA and AMO handlers write to whatever address a message names, with
 * no check of who sent it.  So the plug-in runs UCX without its RMA and AMO features on
 * such transports, and every access travels as one of the messages below.  Each message
 * carries the receiving PE's capability (16 random bytes it published over the
 * authenticated control plane; a reply carries the requester's), compared in constant time,
 * and names its target as (segment, offset, length), checked against the receiver's own
 * segments before a byte is touched.  Anything else is dropped and counted.
 *
 * This file is the wire format and the receiving side's checks and dispatch, written
 * against a small table of actions (shmemi_am_target_t) and with no UCX in it, so that the
 * fuzzer (tests/fuzz/fuzz_ucx_am.c) drives exactly the code a PE runs. */
#ifndef SHMEMI_UCX_AM_H
#define SHMEMI_UCX_AM_H

#include <stddef.h>
#include <stdint.h>

#include "mem/heap.h"
#include "transport/transport.h"

/* The UCP active-message id of every message (one handler; op tells them apart). */
#define SHMEMI_AM_UCP_ID 7
#define SHMEMI_AM_CAP_LEN 16
/* "SHMa" + the format's version in the last byte: a PE of another build is refused. */
#define SHMEMI_AM_MAGIC 0x53484d01u

typedef enum {
    SHMEMI_AM_PUT = 1, /* data follows; written at (seg, offset) */
    SHMEMI_AM_GET,     /* asks for len bytes at (seg, offset); answered by a REPLY with them */
    SHMEMI_AM_AMO,     /* an AMO on one word; answered by a REPLY when token != 0 */
    SHMEMI_AM_FLUSH,   /* answered by a REPLY once everything sent before it is applied */
    SHMEMI_AM_REPLY,   /* to a requester: token names its request; GET data follows */
    SHMEMI_AM_OP_END
} shmemi_am_op_t;

/* Every message's header (the UCP "user header"), in the sender's byte order: PEs of one
 * job share an architecture (the control plane already assumes it). */
typedef struct {
    uint8_t cap[SHMEMI_AM_CAP_LEN]; /* the receiver's capability */
    uint32_t magic;
    uint8_t op;           /* shmemi_am_op_t */
    uint8_t seg;          /* PUT, GET, AMO: the receiver's segment */
    uint8_t amo_op;       /* AMO: shmemi_amo_op_t */
    uint8_t amo_kind;     /* AMO: shmemi_amo_kind_t */
    int32_t src_pe;       /* GET, AMO, FLUSH: who to answer */
    uint32_t amo_width;   /* AMO: 1, 2, 4 or 8 */
    uint64_t token;       /* GET, FLUSH, fetching AMO, REPLY: the requester's slot; 0: none */
    uint64_t offset;      /* PUT, GET, AMO: where in seg */
    uint64_t len;         /* PUT: the data's length; GET: the length asked; REPLY: data sent */
    uint64_t value;       /* AMO: the operand; REPLY to an AMO: the word's old value */
    uint64_t cond;        /* AMO CSWAP: the expected value */
} shmemi_am_header_t;

/* What became of a message: applied, or why it was dropped (counted per reason; the
 * plug-in's stop logs the counts). */
typedef enum {
    SHMEMI_AM_APPLIED = -1,
    SHMEMI_AM_DROP_MALFORMED, /* size, magic or op wrong: not one of our messages */
    SHMEMI_AM_DROP_CAPABILITY, /* the capability does not match: not from a job member */
    SHMEMI_AM_DROP_BOUNDS,    /* a member named memory outside this PE's segments */
    SHMEMI_AM_DROP_ARGUMENT,  /* a member sent an impossible AMO, PE or length */
    SHMEMI_AM_DROP_STALE,     /* a reply to no pending request of ours */
    SHMEMI_AM_DROP_REASONS
} shmemi_am_drop_t;

extern const char *const shmemi_am_drop_names[SHMEMI_AM_DROP_REASONS];

/* ---- the requester's side: pending requests ---------------------------------------------- */

/* A request of ours waiting for its REPLY.  A token is (generation << 32 | slot + 1): a late
 * reply to a request that was given up (its PE died, its thread moved on) finds another
 * generation and is dropped, so it can never write into memory that was reused. */
#define SHMEMI_AM_SLOTS 256

typedef enum { SHMEMI_AM_SLOT_FREE = 0, SHMEMI_AM_SLOT_WAITING, SHMEMI_AM_SLOT_DONE } shmemi_am_slot_state_t;

typedef struct {
    int state; /* shmemi_am_slot_state_t; read by the waiter without the lock */
    uint8_t op; /* GET, AMO or FLUSH */
    int pe;     /* the PE asked */
    uint32_t generation;
    void *dst;  /* GET: where the data goes */
    size_t len; /* GET: how much is expected */
    uint64_t value; /* AMO: the fetched value */
    int detached;   /* GET: nobody awaits the reply, which frees the slot (a get_nbi) */
} shmemi_am_slot_t;

typedef struct {
    shmemi_am_slot_t slot[SHMEMI_AM_SLOTS];
    unsigned next; /* where the search for a free slot starts */
    unsigned detached; /* detached slots still WAITING: the channel's quiet waits for 0 */
} shmemi_am_pending_t;

/* A free slot set WAITING for op to pe, and its token; 0 when all are in use. */
uint64_t shmemi_am_pending_take(shmemi_am_pending_t *p, uint8_t op, int pe, void *dst, size_t len);
/* The slot of a token taken earlier (the token is ours, no check needed). */
shmemi_am_slot_t *shmemi_am_pending_slot(shmemi_am_pending_t *p, uint64_t token);
/* Frees the slot (DONE or given up): its token is dead from now on.  Nothing happens when the
 * token is dead already (a detached slot freed by its reply). */
void shmemi_am_pending_release(shmemi_am_pending_t *p, uint64_t token);
/* Nobody will await the GET of token (WAITING): its reply lands in its dst and frees the
 * slot, and p->detached counts it until then. */
void shmemi_am_pending_detach(shmemi_am_pending_t *p, uint64_t token);
/* Gives up every detached slot still WAITING (the job failed): a late reply is dropped. */
void shmemi_am_pending_abandon_detached(shmemi_am_pending_t *p);

/* ---- the receiving side ------------------------------------------------------------------- */

typedef struct shmemi_am_target {
    uint8_t cap[SHMEMI_AM_CAP_LEN]; /* this PE's capability */
    int my_pe;
    int n_pes;
    struct {
        uint8_t *base;
        size_t size;
    } seg[SHMEMI_SEG_COUNT];
    shmemi_am_pending_t *pending; /* this PE's requests, for REPLYs */

    /* The actions, called only for messages that passed every check. */
    void *ctx;
    /* Writes len bytes at (seg, offset) (word-sized writes in one access: waiters poll). */
    void (*put)(void *ctx, int seg, size_t offset, const void *src, size_t len);
    /* Applies a on the word at (seg, offset); returns its old value. */
    uint64_t (*amo)(void *ctx, int seg, size_t offset, const shmemi_amo_t *a);
    /* 1 when a REPLY can be sent to pe (a PE of another node with an endpoint). */
    int (*can_reply)(void *ctx, int pe);
    /* Sends pe a REPLY for token, with value and len bytes at data (which stay valid). */
    void (*reply)(void *ctx, int pe, uint64_t token, uint64_t value, const void *data, size_t len);

    uint64_t accepted;
    uint64_t dropped[SHMEMI_AM_DROP_REASONS];
} shmemi_am_target_t;

/* One received message: header_len bytes of header, data_len bytes of data.  Checks it,
 * applies it or drops it; returns SHMEMI_AM_APPLIED or why it was dropped (also counted in
 * t->dropped).  Never touches memory outside t's segments and the pending requests' buffers,
 * whatever the bytes are.  Called with the plug-in's lock held. */
shmemi_am_drop_t shmemi_am_receive(shmemi_am_target_t *t, const void *header, size_t header_len, const void *data,
                      size_t data_len);

/* The header of a request to a PE whose capability is cap. */
void shmemi_am_header_init(shmemi_am_header_t *h, const uint8_t cap[SHMEMI_AM_CAP_LEN], shmemi_am_op_t op,
                           int src_pe);

#endif
