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
 * ucx_conn.c sets up and tears down (context, worker, cards, endpoints); ucx_progress.c
 * moves the worker on (the progress thread, waits for requests) and words UCX's failures.
 *
 * Threads: every UCP call goes through one worker, called by the application's threads,
 * kernel blocks, stream workers and the progress thread; the worker is created SERIALIZED
 * and st->lock serialises the calls (active-message handlers run under it too). */
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

typedef struct {
    ucp_ep_h ep;                           /* NULL for PEs on this node */
    ucp_rkey_h rkey[SHMEMI_SEG_COUNT];     /* RMA plane: its segments' remote keys */
    uint64_t base[SHMEMI_SEG_COUNT];       /* RMA plane: its segments' addresses in its process */
    uint8_t cap[SHMEMI_AM_CAP_LEN];        /* AM plane: its capability */
    int dirty;                             /* AM plane: writes sent to it since the last flush */
    atomic_int failure;                    /* a ucs_status_t, set by the endpoint's error handler */
    int pe;
} ucx_peer_t;

typedef struct {
    const shmemi_plugin_host_t *host;
    shmemi_instance_t *inst;
    ucx_plane_t plane;
    const shmemi_transport_ops_t *ops; /* the plane's */
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_mem_h memh[SHMEMI_SEG_COUNT]; /* RMA plane */
    ucx_peer_t *peers; /* [n_pes] */
    pthread_mutex_t lock;

    /* AM plane: this PE as a receiver (its capability and segments) and its requests. */
    shmemi_am_target_t target;
    shmemi_am_pending_t pending;

    /* The fence around UCX's listening TCP sockets. */
    ucx_guard_t guard;

    /* The progress thread: sleeps on the worker's event fd, progresses when the network
     * has something for us (a peer's put or atomic over TCP is applied then) and rings
     * this PE's doorbell, so that a waiter asleep on it wakes.  While the PE's own threads
     * poll the worker (a wait in its poll phase, a request being completed), the thread
     * parks instead: waking it for every message would put a thread switch on the
     * critical path of each round trip (measured: 25 us against 12.6 us one way). */
    pthread_t thread;
    int thread_started;
    int worker_fd; /* ucp_worker_get_efd */
    int stop_fd;   /* eventfd that ends the thread */
    atomic_int stopping;
    atomic_uint polls;  /* bumped by every poll of the PE's own threads */
    atomic_uint park;   /* futex word of the parked thread; bumped to wake it */
    atomic_int needed;  /* a waiter went to sleep: the thread must not park on old polls */
} ucx_state_t;

/* The planes' ops tables. */
extern const shmemi_transport_ops_t shmemi_ucx_rma_ops;
extern const shmemi_transport_ops_t shmemi_ucx_am_ops;

/* ucx_conn.c */
int shmemi_ucx_start(shmemi_instance_t *inst, const shmemi_plugin_host_t *host);
void shmemi_ucx_stop(shmemi_instance_t *inst);

/* ucx_card.c: the exchange of what each PE tells the others (worker address, plane,
 * capability or remote keys, its host's addresses), then the endpoints.  Collective. */
int shmemi_ucx_exchange_cards(ucx_state_t *st);

/* ucx_am_ops.c: the AM plane's receiving side, set up before the endpoints exist. */
int shmemi_ucx_am_listen(ucx_state_t *st);
/* Logs what the receiving side dropped (at stop). */
void shmemi_ucx_am_report(ucx_state_t *st);

/* ucx_progress.c */
/* Progresses the worker if no other thread does (nonblocking); returns the events seen. */
unsigned shmemi_ucx_progress_once(ucx_state_t *st);
void shmemi_ucx_progress(shmemi_instance_t *inst);
void shmemi_ucx_before_sleep(shmemi_instance_t *inst);
int shmemi_ucx_start_thread(ucx_state_t *st);
void shmemi_ucx_stop_thread(ucx_state_t *st);
/* Waits for req (NULL: done already) while progressing; frees it.  what and pe name the
 * operation in an error (pe -1: every PE). */
int shmemi_ucx_wait(ucx_state_t *st, ucs_status_ptr_t req, const char *what, int pe);
/* One poll of a wait: asked under st->lock, right after the worker was progressed. */
typedef int (*shmemi_ucx_done_fn)(ucx_state_t *st, void *arg);
/* Polls until done says so (1), or the job failed (an error).  After a few polls it yields
 * the CPU at each one: the PE that must answer may need this core. */
int shmemi_ucx_poll_until(ucx_state_t *st, shmemi_ucx_done_fn done, void *arg);
/* Waits until *state (written under st->lock by a handler) is `until`, while progressing.
 * An error when the job failed first. */
int shmemi_ucx_wait_state(ucx_state_t *st, const int *state, int until);
/* A UCX call of set-up or tear-down failed: the error, naming what. */
int shmemi_ucx_fail(ucx_state_t *st, ucs_status_t status, const char *what);
/* An operation failed with status: the error, or "PE n died" when that is the cause. */
int shmemi_ucx_op_failed(ucx_state_t *st, ucs_status_t status, const char *what, int pe);

static inline ucx_state_t *ucx_state(shmemi_instance_t *inst)
{
    return (ucx_state_t *)inst->remote;
}

#endif
