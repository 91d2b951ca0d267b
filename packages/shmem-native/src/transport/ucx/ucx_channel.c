/* The parts of a channel of the UCX plug-in (see struct shmemi_channel in ucx.h): its
 * arrays, its worker with fenced sockets, its endpoints to the peers' main workers, and
 * their end.  ucx_conn.c puts them together: the main channel at start, a context's when
 * the context is created. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "transport/ucx/ucx.h"

/* A graceful close waits this long for the peer's answer before it forces the close. */
#define CLOSE_WAIT_NS 2000000000LL

int shmemi_ucx_channel_alloc(ucx_state_t *st, ucx_channel_t *c)
{
    size_t n = (size_t)st->inst->n_pes;
    c->st = st;
    c->ep = calloc(n, sizeof(*c->ep));
    c->rkey = calloc(n * SHMEMI_SEG_COUNT, sizeof(*c->rkey));
    c->dirty = calloc(n, sizeof(*c->dirty));
    pthread_mutex_init(&c->lock, NULL);
    if (!c->ep || !c->rkey || !c->dirty)
        return st->host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    return ACLSHMEM_SUCCESS;
}

/* c's worker, its listening sockets fenced off from the moment they exist (ucx_guard.h):
 * the sockets that appeared while it was made are its own. */
int shmemi_ucx_channel_worker(ucx_channel_t *c)
{
    ucx_state_t *st = c->st;
    ucx_guard_before(&c->guard);
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    ucs_status_t status = ucp_worker_create(st->context, &params, &c->worker);
    if (status != UCS_OK)
        return shmemi_ucx_fail(st, status, "worker creation");
    status = ucp_worker_get_efd(c->worker, &c->efd);
    if (status != UCS_OK)
        return shmemi_ucx_fail(st, status, "worker event fd");
    char why[256];
    if (st->filter && ucx_guard_close(&c->guard, why, sizeof(why)) != 0)
        return st->host->fail(ACLSHMEM_INNER_ERROR, "PE %d: %s", st->inst->my_pe, why);
    return ACLSHMEM_SUCCESS;
}

/* ---- endpoints ------------------------------------------------------------------------------ */

static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    ucx_peer_t *peer = arg;
    int expected = UCS_OK;
    atomic_compare_exchange_strong(&peer->failure, &expected, (int)status);
}

/* (UCX reads the worker address itself and has no call that checks one first: a malformed
 * address from a job member can stop this PE inside ucp_ep_create; docs/security.rst says
 * so.) */
int shmemi_ucx_connect(ucx_channel_t *c, int pe)
{
    ucx_state_t *st = c->st;
    ucx_peer_t *peer = &st->peers[pe];
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)peer->address,
        /* Operations to a PE that died complete with an error instead of hanging. */
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = on_peer_error, .arg = peer},
    };
    ucs_status_t status = ucp_ep_create(c->worker, &params, &c->ep[pe]);
    if (status != UCS_OK) {
        c->ep[pe] = NULL;
        return shmemi_ucx_fail(st, status, "connection to a PE on another node");
    }
    for (int s = 0; s < SHMEMI_SEG_COUNT && st->plane == UCX_PLANE_RMA; s++) {
        if (!peer->packed_rkey[s])
            continue; /* a segment no PE has */
        status = ucp_ep_rkey_unpack(c->ep[pe], peer->packed_rkey[s], &c->rkey[(size_t)pe * SHMEMI_SEG_COUNT + s]);
        if (status != UCS_OK)
            return shmemi_ucx_fail(st, status, "remote key unpacking");
    }
    return ACLSHMEM_SUCCESS;
}

int shmemi_ucx_endpoint(ucx_channel_t *c, int pe, ucp_ep_h *ep)
{
    if (!c->ep[pe]) {
        if (c == &c->st->main || !c->st->peers[pe].address) /* transports send only remote PEs here */
            return c->st->host->fail(ACLSHMEM_INNER_ERROR, "UCX plug-in: PE %d has no endpoint (not on another node)",
                                     pe);
        SHMEMI_TRY(shmemi_ucx_connect(c, pe));
    }
    *ep = c->ep[pe];
    return ACLSHMEM_SUCCESS;
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Closes ep: gracefully (its operations flushed, the peer told, so that the peer forgets
 * it without an error) unless force, within a bounded time either way, yielding the CPU
 * while it waits (the peer may need this core to answer). */
static void close_endpoint(ucx_channel_t *c, ucp_ep_h ep, int force)
{
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &param);
    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    long long deadline = now_ns() + CLOSE_WAIT_NS;
    while (ucp_request_check_status(req) == UCS_INPROGRESS && now_ns() < deadline) {
        if (!ucp_worker_progress(c->worker))
            sched_yield();
    }
    if (ucp_request_check_status(req) == UCS_INPROGRESS)
        ucp_request_cancel(c->worker, req); /* completes it (with an error) */
    ucp_request_free(req);
}

void shmemi_ucx_channel_free(ucx_channel_t *c, int force)
{
    ucx_state_t *st = c->st;
    if (!st)
        return; /* start failed before the channel was made */
    pthread_mutex_lock(&c->lock);
    for (int pe = 0; pe < st->inst->n_pes && c->ep; pe++) {
        for (int s = 0; s < SHMEMI_SEG_COUNT && c->rkey; s++)
            if (c->rkey[(size_t)pe * SHMEMI_SEG_COUNT + s])
                ucp_rkey_destroy(c->rkey[(size_t)pe * SHMEMI_SEG_COUNT + s]);
        if (c->ep[pe])
            close_endpoint(c, c->ep[pe], force);
    }
    if (c->worker)
        ucp_worker_destroy(c->worker);
    c->worker = NULL;
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_destroy(&c->lock);
    free(c->ep);
    free(c->rkey);
    free(c->dirty);
    c->ep = NULL;
    c->rkey = NULL;
    c->dirty = NULL;
}

void *shmemi_ucx_no_ptr(shmemi_instance_t *inst, int pe, int seg, size_t offset)
{
    (void)inst, (void)pe, (void)seg, (void)offset;
    return NULL;
}
