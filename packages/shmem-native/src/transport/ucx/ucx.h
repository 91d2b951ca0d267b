/* The UCX transport plug-in (libaclshmem_ucx.so): RMA and atomics to PEs on other nodes
 * through UCX's UCP layer, over whatever UCX finds (TCP, RDMA, ...).
 *
 * ucx_conn.c sets up and tears down: the UCP context and worker, the registration of this
 * PE's three segments, the exchange of worker addresses and remote keys over the control
 * plane, the endpoints, and the progress thread.  ucx_ops.c is the ops table.
 *
 * Threads: every UCP call goes through one worker, called by the application's threads,
 * kernel blocks, stream workers and the progress thread; the worker is created SERIALIZED
 * and st->lock serialises the calls. */
#ifndef SHMEMI_UCX_H
#define SHMEMI_UCX_H

#include <pthread.h>
#include <stdatomic.h>
#include <ucp/api/ucp.h>

#include "core/instance.h"
#include "mem/heap.h"
#include "transport/plugin.h"

typedef struct {
    ucp_ep_h ep;                           /* NULL for PEs on this node */
    ucp_rkey_h rkey[SHMEMI_SEG_COUNT];     /* its segments' remote keys */
    uint64_t base[SHMEMI_SEG_COUNT];       /* its segments' addresses in its process */
    atomic_int failure;                    /* a ucs_status_t, set by the endpoint's error handler */
    int pe;
} ucx_peer_t;

typedef struct {
    const shmemi_plugin_host_t *host;
    shmemi_instance_t *inst;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_mem_h memh[SHMEMI_SEG_COUNT];
    ucx_peer_t *peers; /* [n_pes] */
    pthread_mutex_t lock;

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

extern const shmemi_transport_ops_t shmemi_ucx_ops;

/* ucx_conn.c */
int shmemi_ucx_start(shmemi_instance_t *inst, const shmemi_plugin_host_t *host);
void shmemi_ucx_stop(shmemi_instance_t *inst);
/* Progresses the worker if no other thread does (nonblocking); returns the events seen. */
unsigned shmemi_ucx_progress_once(ucx_state_t *st);
void shmemi_ucx_progress(shmemi_instance_t *inst);
void shmemi_ucx_before_sleep(shmemi_instance_t *inst);

/* ucx_ops.c: waits for req (NULL: done already) while progressing; frees it.  what and
 * pe name the operation in an error. */
int shmemi_ucx_wait(ucx_state_t *st, ucs_status_ptr_t req, const char *what, int pe);

static inline ucx_state_t *ucx_state(shmemi_instance_t *inst)
{
    return (ucx_state_t *)inst->remote;
}

#endif
