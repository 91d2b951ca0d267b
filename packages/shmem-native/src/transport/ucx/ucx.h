/* The UCX transport plug-in (libaclshmem_ucx.so): RMA and atomics to PEs on other nodes
 * through UCX's UCP layer, over whatever UCX finds (TCP, RDMA, ...).
 *
 * Two data planes, chosen at start and the same on every PE (ucx_card.c):
 *   - AM (the default): puts, gets, AMOs and quiet travel as our own active messages, each
 *     carrying the receiver's capability and bounds-checked at the receiver (ucx_am.h,
 *     ucx_am_ops.c).  UCX runs without its RMA and AMO features, so its software RMA
 *     handlers, which write wherever a message says, are never installed.
 *   - RMA: UCX's own put/get/atomics with remote keys (ucx_rma.c), for fabrics whose
 *     hardware does RMA (InfiniBand, RoCE): there the rkey is the capability.  Chosen only
 *     when UCX_TLS names no transport that UCX would emulate RMA on (TCP), or when
 *     SHMEM_UCX_DATA_PLANE=rma says so.
 * On TCP the plug-in also fences UCX's listening sockets so that only the job's nodes can
 * connect to them (ucx_guard.c): UCX's TCP transport trusts whoever connects.
 *
 * ucx_conn.c sets up and tears down (context, main channel, cards, the channels of
 * OpenSHMEM contexts) from the parts ucx_channel.c makes (workers, endpoints);
 * ucx_progress.c moves the workers on (the progress thread, waits for requests) and words
 * UCX's failures.
 *
 * Threads: every UCP call goes through a channel's worker, called by the application's
 * threads (and, for the main channel, kernel blocks, stream workers and the progress
 * thread); workers are created SERIALIZED and the channel's lock serialises the calls
 * (active-message handlers run under it too). */
#ifndef SHMEMI_UCX_H
#define SHMEMI_UCX_H

#include <pthread.h>
#include <stdatomic.h>
#include <ucp/api/ucp.h>

#include "core/instance.h"
#include "mem/heap.h"
#include "transport/plugin.h"
#include "transport/ucx/ucx_am.h"
#include "transport/ucx/ucx_guard.h"

typedef enum { UCX_PLANE_AM = 1, UCX_PLANE_RMA = 2 } ucx_plane_t;

/* What this PE knows of another: from its card (ucx_card.c), fixed after start. */
typedef struct {
    const uint8_t *address;                  /* its main worker's address (in st->cards) */
    const uint8_t *packed_rkey[SHMEMI_SEG_COUNT]; /* RMA plane: its segments' keys, packed */
    uint64_t base[SHMEMI_SEG_COUNT];       /* RMA plane: its segments' addresses in its process */
    uint8_t cap[SHMEMI_AM_CAP_LEN];        /* AM plane: its capability */
    atomic_int failure;                    /* a ucs_status_t, set by an endpoint's error handler */
    int pe;
} ucx_peer_t;

struct ucx_state;

/* A channel (transport.h): a UCX worker and endpoints, where operations travel and are
 * completed.  st->main is the PE's default channel: every other PE sends to its worker, and
 * the progress thread moves it on.  A context's channel is a worker of its own that only
 * sends (to the peers' main workers) and receives the replies to its own requests, through
 * the reply endpoints UCP gives the receiver (UCP_AM_SEND_FLAG_REPLY); so its quiet
 * flushes its own operations only, and threads on different contexts take different locks.
 * Its endpoints are made at first use; the threads that wait on it progress it. */
struct shmemi_channel {
    struct ucx_state *st;
    ucp_worker_h worker;
    int efd;               /* the worker's event fd (ucp_worker_get_efd): readable once armed
                            * and the network brings something; waits block on it */
    pthread_mutex_t lock;  /* serialises the calls on the worker (handlers run under it) */
    ucp_ep_h *ep;          /* [n_pes]: NULL for PEs on this node, or not yet connected */
    ucp_rkey_h *rkey;      /* [n_pes * SHMEMI_SEG_COUNT] RMA plane: keys unpacked for ep */
    uint8_t *dirty;        /* [n_pes] AM plane: written since the last quiet */
    shmemi_am_pending_t pending; /* AM plane: its requests waiting for replies */
    shmemi_am_target_t target;   /* AM plane: the receiving side of its worker */
    unsigned gets_in_flight; /* RMA plane: get_nbi without a batch, until their callback */
    int gets_failed;         /* RMA plane: a ucs_status_t of one that failed, for the quiet */
    ucp_ep_h reply_ep;     /* while a handler runs: where its sender wants the reply */
    ucx_guard_t guard;     /* the fence around its worker's listening sockets */
    struct shmemi_channel *next; /* context channels: the list of the open ones */
};
typedef struct shmemi_channel ucx_channel_t;

typedef struct ucx_state {
    const shmemi_plugin_host_t *host;
    shmemi_instance_t *inst;
    ucx_plane_t plane;
    const shmemi_transport_ops_t *ops; /* the plane's */
    ucp_context_h context;
    ucp_mem_h memh[SHMEMI_SEG_COUNT]; /* RMA plane */
    ucx_peer_t *peers; /* [n_pes] */
    uint8_t *cards;    /* every PE's card, which peers[] point into */
    ucx_channel_t main;

    /* The addresses the socket filters let in (the other nodes'), for context channels. */
    ucx_host_addr_t *allowed;
    int n_allowed;
    int filter;
    pthread_mutex_t channels_lock; /* the list, and one channel's sockets fenced at a time */
    ucx_channel_t *channels;

    /* The progress thread: sleeps on the main worker's event fd, progresses when the
     * network has something for us (a peer's put or atomic over TCP is applied then) and
     * rings this PE's doorbell, so that a waiter asleep on it wakes.  While the PE's own
     * threads poll the worker (a wait in its poll phase, a request being completed), the
     * thread parks instead: waking it for every message would put a thread switch on the
     * critical path of each round trip (measured: 25 us against 12.6 us one way). */
    pthread_t thread;
    int thread_started;
    int stop_fd;   /* eventfd that ends the thread */
    atomic_int stopping;
    atomic_uint polls;  /* bumped by every poll of the main worker by the PE's own threads */
    atomic_uint park;   /* futex word of the parked thread; bumped to wake it */
    atomic_int needed;  /* a waiter went to sleep: the thread must not park on old polls */
} ucx_state_t;

/* The planes' ops tables. */
extern const shmemi_transport_ops_t shmemi_ucx_rma_ops;
extern const shmemi_transport_ops_t shmemi_ucx_am_ops;

/* ucx_conn.c: start and stop, and the channels of contexts. */
int shmemi_ucx_start(shmemi_instance_t *inst, const shmemi_plugin_host_t *host);
void shmemi_ucx_stop(shmemi_instance_t *inst);
int shmemi_ucx_channel_open(shmemi_instance_t *inst, shmemi_channel_t **out);
void shmemi_ucx_channel_close(shmemi_instance_t *inst, shmemi_channel_t *ch);

/* ucx_channel.c: the parts of a channel (the main one's too), and its endpoints. */
/* The arrays of a channel for inst's PEs (st->main's too). */
int shmemi_ucx_channel_alloc(ucx_state_t *st, ucx_channel_t *c);
/* c's worker, with its listening sockets fenced off (closed to everyone) from the start. */
int shmemi_ucx_channel_worker(ucx_channel_t *c);
/* Closes c's endpoints (graceful: flushed, the peer told; force: at once, for a job that
 * failed), destroys its keys and its worker, frees its arrays. */
void shmemi_ucx_channel_free(ucx_channel_t *c, int force);
/* c's endpoint to pe (a PE of another node), made now if c is a context channel that has
 * none yet; under c->lock.  An error when it cannot be made. */
int shmemi_ucx_endpoint(ucx_channel_t *c, int pe, ucp_ep_h *ep);
/* The endpoint to a peer on c's worker, with the peer's keys unpacked for it (RMA plane). */
int shmemi_ucx_connect(ucx_channel_t *c, int pe);
/* Both planes' ptr operation: another node's memory has no address here (NULL). */
void *shmemi_ucx_no_ptr(shmemi_instance_t *inst, int pe, int seg, size_t offset);

/* ucx_card.c: the exchange of what each PE tells the others (worker address, plane,
 * capability or remote keys, its host's addresses), then the main endpoints.  Collective. */
int shmemi_ucx_exchange_cards(ucx_state_t *st);

/* ucx_am_ops.c: the AM plane's receiving side of a channel's worker (before its endpoints
 * exist).  The main channel's makes this PE's capability; a context channel's copies it. */
int shmemi_ucx_am_listen(ucx_channel_t *c);
/* Logs what the receiving side dropped (at stop). */
void shmemi_ucx_am_report(ucx_state_t *st);

/* ucx_progress.c */
void shmemi_ucx_progress(shmemi_instance_t *inst);
void shmemi_ucx_before_sleep(shmemi_instance_t *inst);
int shmemi_ucx_start_thread(ucx_state_t *st);
void shmemi_ucx_stop_thread(ucx_state_t *st);
/* Waits for req (NULL: done already) while progressing c; frees it.  what and pe name the
 * operation in an error (pe -1: every PE). */
int shmemi_ucx_wait(ucx_channel_t *c, ucs_status_ptr_t req, const char *what, int pe);
/* One poll of a wait: asked under c->lock, right after c's worker was progressed. */
typedef int (*shmemi_ucx_done_fn)(ucx_channel_t *c, void *arg);
/* Polls c until done says so (1), or the job failed (an error).  After a few polls it
 * yields the CPU at each one (the PE that must answer may need this core), and after a
 * while it sleeps until c's worker has an event (see ucx_progress.c). */
int shmemi_ucx_poll_until(ucx_channel_t *c, shmemi_ucx_done_fn done, void *arg);
/* Waits until *state (written under c->lock by a handler) is `until`, while progressing c.
 * An error when the job failed first. */
int shmemi_ucx_wait_state(ucx_channel_t *c, const int *state, int until);
/* A UCX call of set-up or tear-down failed: the error, naming what. */
int shmemi_ucx_fail(ucx_state_t *st, ucs_status_t status, const char *what);
/* An operation failed with status: the error, or "PE n died" when that is the cause. */
int shmemi_ucx_op_failed(ucx_state_t *st, ucs_status_t status, const char *what, int pe);

static inline ucx_state_t *ucx_state(shmemi_instance_t *inst)
{
    return (ucx_state_t *)inst->remote;
}

/* The channel an operation on ch uses: NULL is the PE's default one. */
static inline ucx_channel_t *ucx_channel(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    return ch ? ch : &ucx_state(inst)->main;
}

#endif
