/* Transports: how this PE reaches another PE's segments.  One ops table per kind, chosen
 * per peer at init (shm for same-node PEs, the UCX plug-in for PEs on other nodes).  Every operation addresses the target by
 * (segment, offset), so it never needs the target's virtual addresses. */
#ifndef SHMEMI_TRANSPORT_H
#define SHMEMI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct shmemi_instance;

/* A channel: where the operations of one OpenSHMEM context travel and how they complete, so
 * that a context's quiet completes that context's operations and no others.  NULL is the
 * PE's default channel (every aclshmem call, SHMEM_CTX_DEFAULT, the library's own traffic).
 * Only transports that complete operations later than they issue them have channels of
 * their own (the UCX plug-in defines the struct: a worker and endpoints per channel); shm
 * completes every operation as it issues it and ignores the argument. */
typedef struct shmemi_channel shmemi_channel_t;

/* An atomic memory operation on one word of width 1, 2, 4 or 8 bytes, aligned to its width.
 * Operands and results are the word's bit pattern in the low `width` bytes of a uint64_t
 * (integers zero-extended, floats as their IEEE bits), so one entry serves every type. */
typedef enum {
    SHMEMI_AMO_FETCH, /* old value only */
    SHMEMI_AMO_SET,   /* word = value */
    SHMEMI_AMO_SWAP,  /* word = value */
    SHMEMI_AMO_CSWAP, /* word = value if word == cond (bit patterns) */
    SHMEMI_AMO_ADD,   /* word += value in the arithmetic of kind */
    SHMEMI_AMO_AND,   /* integers only */
    SHMEMI_AMO_OR,
    SHMEMI_AMO_XOR
} shmemi_amo_op_t;

/* What the word holds: how ADD computes (other operations only move bits). */
typedef enum {
    SHMEMI_AMO_INT,     /* two's complement integer of any width: ADD wraps */
    SHMEMI_AMO_FLOAT,   /* binary32 (width 4) or binary64 (width 8) */
    SHMEMI_AMO_HALF,    /* binary16, width 2 */
    SHMEMI_AMO_BFLOAT16 /* bfloat16, width 2 */
} shmemi_amo_kind_t;

typedef struct {
    shmemi_amo_op_t op;
    shmemi_amo_kind_t kind;
    int width;
    uint64_t value;
    uint64_t cond; /* CSWAP only */
    /* Posted only (no fetch): a signal that nobody completes with a quiet, because its
     * target's wait for it is the only thing that needs it (a barrier's arrival).  A
     * transport that makes the next quiet flush every PE written to may leave it out, so
     * that each barrier does not pay a round trip for the last one's arrivals. */
    int untracked;
} shmemi_amo_t;

/* The value a word holds after a applies to old (for FETCH: old): the arithmetic of every
 * operation, for transports that apply an AMO as a compare-and-swap loop.  Floating-point
 * ADD rounds to nearest even; the result is masked to a->width bytes. */
uint64_t shmemi_amo_result(const shmemi_amo_t *a, uint64_t old);

/* Gets the library waits for by themselves (a collective's reads), apart from the channel's
 * other operations: a quiet would complete every put of the channel too, which across nodes
 * costs a round trip per PE written.  A transport that completes a get later than it issues
 * it records the get here (its request or token, in the order issued); gets_wait completes
 * exactly these.  Zero-initialise one per batch; every get of a batch goes through one
 * channel.  When the batch is full the transport completes its oldest get first (the UCX
 * AM plane already at 8 pieces of 64 KiB in flight). */
#define SHMEMI_GETS_MAX 16

typedef struct {
    unsigned first, count; /* the oldest entry and how many are in flight */
    struct {
        uint64_t handle; /* the transport's */
        int pe;
    } entry[SHMEMI_GETS_MAX];
} shmemi_gets_t;

/* Records a get in flight (the batch has room: count < SHMEMI_GETS_MAX). */
static inline void shmemi_gets_add(shmemi_gets_t *g, uint64_t handle, int pe)
{
    unsigned at = (g->first + g->count++) % SHMEMI_GETS_MAX;
    g->entry[at].handle = handle;
    g->entry[at].pe = pe;
}

/* Takes the oldest get in flight out of the batch: 0 when it is empty. */
static inline int shmemi_gets_take_oldest(shmemi_gets_t *g, uint64_t *handle, int *pe)
{
    if (g->count == 0)
        return 0;
    *handle = g->entry[g->first].handle;
    *pe = g->entry[g->first].pe;
    g->first = (g->first + 1) % SHMEMI_GETS_MAX;
    g->count--;
    return 1;
}

/* How a transport completes, or gives up, one get of a batch (by its handle). */
typedef struct {
    int (*complete)(void *ctx, uint64_t handle, int pe);
    void (*give_up)(void *ctx, uint64_t handle);
} shmemi_gets_ops_t;

/* Gives up every get of g (g is empty after). */
static inline void shmemi_gets_abandon(shmemi_gets_t *g, const shmemi_gets_ops_t *ops, void *ctx)
{
    uint64_t handle;
    int pe;
    while (shmemi_gets_take_oldest(g, &handle, &pe))
        ops->give_up(ctx, handle);
}

/* Completes the oldest n gets of g, oldest first; after a failure gives up the rest of g and
 * returns the error. */
static inline int shmemi_gets_complete(shmemi_gets_t *g, unsigned n, const shmemi_gets_ops_t *ops, void *ctx)
{
    uint64_t handle;
    int pe;
    for (; n > 0 && shmemi_gets_take_oldest(g, &handle, &pe); n--) {
        int rc = ops->complete(ctx, handle, pe);
        if (rc != 0) {
            shmemi_gets_abandon(g, ops, ctx);
            return rc;
        }
    }
    return 0;
}

typedef struct shmemi_transport_ops {
    const char *name;
    int (*put)(struct shmemi_instance *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, const void *src,
               size_t len);
    int (*get)(struct shmemi_instance *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
               size_t len);
    /* Starts a get of len bytes at pe's (seg, offset) into dst, which the caller must leave
     * alone until the get lands: with gets NULL by the end of the next quiet of channel ch
     * (OpenSHMEM's get_nbi), else when gets_wait of that batch returns.  A transport may
     * complete it before it returns (shm: a copy).  Bounds and PE are checked by the caller,
     * as for get. */
    int (*get_nbi)(struct shmemi_instance *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset, void *dst,
                   size_t len, shmemi_gets_t *gets);
    /* Completes every get recorded in gets (issued on ch) and empties the batch, also when
     * it fails: then the gets still in flight are given up (a late reply is dropped where
     * the transport sees it; UCX's own RMA releases the request when it ends).  get_nbi
     * that fails empties its batch the same way. */
    int (*gets_wait)(struct shmemi_instance *inst, shmemi_channel_t *ch, shmemi_gets_t *gets);
    /* The AMO a on pe's word at (seg, offset), atomic with respect to every other AMO on
     * that word from any PE or thread, and ordered after every earlier put to pe.  *fetched
     * (if not NULL) gets the word's old value.  When the word changed, pe's waiters wake
     * (the transport knows how to do that cheaply for its own writes; no notify needed). */
    int (*amo)(struct shmemi_instance *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
               const shmemi_amo_t *a, uint64_t *fetched);
    /* Wakes pe's waiters after writes to it. */
    void (*notify)(struct shmemi_instance *inst, int pe);
    /* Completes every operation issued through this transport on channel ch, to any PE
     * (the gets started with get_nbi without a batch among them). */
    int (*quiet)(struct shmemi_instance *inst, shmemi_channel_t *ch);
    /* Orders: every put, AMO and signal issued on ch to a PE before it is applied there
     * before any issued on ch after it (what OpenSHMEM's fence promises); completes nothing. */
    int (*fence)(struct shmemi_instance *inst, shmemi_channel_t *ch);
    /* A load/store address of pe's (seg, offset), or NULL if there is none. */
    void *(*ptr)(struct shmemi_instance *inst, int pe, int seg, size_t offset);
} shmemi_transport_ops_t;

extern const shmemi_transport_ops_t shmemi_transport_shm;

/* Collective: picks a transport for every PE of inst: shm on this node; for PEs on other
 * nodes the UCX plug-in, loaded and connected here (every PE fails when one cannot). */
int shmemi_transport_select(struct shmemi_instance *inst);
/* Completes the operations of channel ch on every transport inst uses. */
int shmemi_transport_quiet(struct shmemi_instance *inst, shmemi_channel_t *ch);
/* Completes the gets of batch gets, started on channel ch with any transport's get_nbi (only
 * a plug-in records gets: shm completes its own as it issues them). */
int shmemi_transport_gets_wait(struct shmemi_instance *inst, shmemi_channel_t *ch, shmemi_gets_t *gets);
/* Orders the operations of channel ch on every transport inst uses, per target PE (a fence). */
int shmemi_transport_fence(struct shmemi_instance *inst, shmemi_channel_t *ch);
/* A channel of its own for a new context: *ch is NULL (the default channel) when no
 * transport of inst needs channels (a job on one node).  Not collective. */
int shmemi_transport_channel_open(struct shmemi_instance *inst, shmemi_channel_t **ch);
/* Completes ch's operations and ends it (NULL: nothing to do). */
void shmemi_transport_channel_close(struct shmemi_instance *inst, shmemi_channel_t *ch);
/* Ends what select started (not collective). */
void shmemi_transport_fini(struct shmemi_instance *inst);
/* The aclshmemx_transport_kind_t bits inst uses (0 before select). */
uint32_t shmemi_transport_kinds(const struct shmemi_instance *inst);

#endif
