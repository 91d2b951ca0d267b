/* A PE's side of the control plane: one authenticated connection to PE 0's server and
 * an agent thread that receives collective results, exit requests and death notices. */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/channel.h"
#include "bootstrap/net.h"
#include "bootstrap/protocol.h"
#include "base/error.h"
#include "base/log.h"

typedef struct completion {
    uint64_t key;
    int status;
    int reason; /* COLL_ERROR's shmemi_coll_error */
    uint32_t len;
    uint8_t *data;
    struct completion *next;
} completion_t;

struct shmemi_bootstrap {
    shmemi_channel_t *ch;
    int my_pe, n_pes;
    pthread_t agent;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t changed;
    pthread_mutex_t send_lock;
    completion_t *done;
    int failure_code;
    char failure[256];
    int closing;
    shmemi_failure_hook hook;
    void *hook_ctx;
};

static void record_failure(shmemi_bootstrap_t *b, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void record_failure(shmemi_bootstrap_t *b, int code, const char *fmt, ...)
{
    pthread_mutex_lock(&b->lock);
    int first = b->failure_code == 0 && !b->closing;
    if (first) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->failure, sizeof(b->failure), fmt, ap);
        va_end(ap);
        b->failure_code = code;
    }
    /* Under the lock, so that once a hook is removed it is never running. */
    if (first && b->hook)
        b->hook(b->hook_ctx);
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
    if (first)
        SHMEMI_WARN("%s", b->failure);
}

static void *agent_loop(void *p)
{
    shmemi_bootstrap_t *b = p;
    for (;;) {
        shmemi_msg_t m;
        int rc = shmemi_channel_recv(b->ch, &m, sizeof(m), -1);
        uint8_t *payload = NULL;
        if (rc == 0 && m.len) {
            payload = m.len <= SHMEMI_MAX_PAYLOAD ? malloc(m.len) : NULL;
            rc = payload ? shmemi_channel_recv(b->ch, payload, m.len, shmemi_now_ms() + 30000) : -ENOMEM;
        }
        if (rc != 0) {
            free(payload);
            record_failure(b, ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d lost its control-plane connection to PE 0 (PE 0 died or the "
                           "network failed)", b->my_pe);
            return NULL;
        }
        switch (m.type) {
        case SHMEMI_MSG_COLL_DONE:
        case SHMEMI_MSG_COLL_ERROR: {
            completion_t *c = calloc(1, sizeof(*c));
            if (!c) {
                free(payload);
                break;
            }
            c->key = m.key;
            c->status = m.type == SHMEMI_MSG_COLL_DONE ? 0 : ACLSHMEM_BOOTSTRAP_ERROR;
            c->reason = m.type == SHMEMI_MSG_COLL_ERROR ? m.arg : 0;
            c->len = m.len;
            c->data = payload;
            payload = NULL;
            pthread_mutex_lock(&b->lock);
            c->next = b->done;
            b->done = c;
            pthread_cond_broadcast(&b->changed);
            pthread_mutex_unlock(&b->lock);
            break;
        }
        case SHMEMI_MSG_EXIT:
            SHMEMI_INFO("global exit with status %d", m.arg);
            fflush(NULL);
            _exit(m.arg);
        case SHMEMI_MSG_PEER_DIED:
            record_failure(b, ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d died or left the job without finalizing", m.arg);
            break;
        default:
            break;
        }
        free(payload);
    }
}

/* ---- joining ---------------------------------------------------------------------------
 * PE 0 drops connections that have not authenticated when its port is flooded (see
 * admission.h), so a connection closed before the welcome is tried again, with doubling
 * waits, until the init deadline; refusals (a wrong secret or certificate, a PE number
 * taken) are final and reported at once. */

#define RETRY_FIRST_MS 10
#define RETRY_MAX_MS 1000
/* PE 0 gives a connection SHMEMI_HANDSHAKE_MS from its accept; one closed before the
 * challenge about that long after it was made is PE 0 giving up on a client that does not
 * speak its protocol (TLS on one side only), not a drop.  The margin covers the time
 * between the connect and PE 0's accept. */
#define GAVE_UP_AFTER_MS (SHMEMI_HANDSHAKE_MS - 500)

typedef struct {
    const shmemi_uid_inner_t *inner;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char where[80];
    int64_t timeout_ms;
    int64_t deadline;
    int64_t connected_ms; /* when this attempt's TCP connection was made */
    int dropped;          /* this attempt ended because PE 0 closed it before the welcome */
} join_t;

/* A failure that another attempt may get past: PE 0 closed the connection. */
static int dropped(join_t *j)
{
    j->dropped = 1;
    return ACLSHMEM_BOOTSTRAP_ERROR;
}

static int receive_challenge(shmemi_bootstrap_t *b, join_t *j, shmemi_wire_challenge_t *challenge)
{
    int rc = shmemi_channel_recv(b->ch, challenge, sizeof(*challenge), j->deadline);
    if (rc == 0 && challenge->magic == SHMEMI_WIRE_MAGIC)
        return ACLSHMEM_SUCCESS;
    if (rc != 0 && shmemi_channel_peer_hung_up(b->ch) && shmemi_now_ms() - j->connected_ms < GAVE_UP_AFTER_MS)
        return dropped(j);
    return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                       "PE %d: the address in the unique ID does not answer as an aclshmem "
                       "control plane", b->my_pe);
}

/* The welcome, or PE 0's 4-byte refusal of a wrong proof followed by its close. */
static int receive_welcome(shmemi_bootstrap_t *b, join_t *j, shmemi_wire_welcome_t *welcome)
{
    const size_t head = sizeof(uint32_t);
    int rc = shmemi_channel_recv(b->ch, welcome, head, j->deadline);
    int got_head = rc == 0;
    if (got_head)
        rc = shmemi_channel_recv(b->ch, (char *)welcome + head, sizeof(*welcome) - head, j->deadline);
    if (rc == 0)
        return ACLSHMEM_SUCCESS;
    uint32_t word;
    memcpy(&word, welcome, head);
    int closed = shmemi_channel_peer_hung_up(b->ch);
    if (got_head && closed && word == SHMEMI_WIRE_REFUSED)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: PE 0 refused this PE's proof of the job secret (a unique ID of another "
                           "job, or a SHMEM_JOB_SECRET that differs from PE 0's)", b->my_pe);
    if (closed)
        return dropped(j);
    return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "PE %d: PE 0 did not answer this PE's hello (%s)", b->my_pe,
                       rc == -ETIMEDOUT ? "the init timeout passed" : "the connection failed");
}

static int handshake(shmemi_bootstrap_t *b, join_t *j)
{
    shmemi_wire_challenge_t challenge;
    SHMEMI_TRY(receive_challenge(b, j, &challenge));
    shmemi_wire_hello_t hello = {.pe = b->my_pe, .n_pes = b->n_pes};
    shmemi_proof(j->inner->secret, "aclshmem-client", challenge.nonce, sizeof(challenge.nonce), hello.proof);
    shmemi_random_bytes(hello.nonce, sizeof(hello.nonce));
    if (shmemi_channel_send(b->ch, &hello, sizeof(hello), j->deadline) != 0)
        return shmemi_channel_peer_hung_up(b->ch) ? dropped(j)
                                                  : shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                                                                "PE %d: cannot send its hello to PE 0", b->my_pe);
    shmemi_wire_welcome_t welcome;
    SHMEMI_TRY(receive_welcome(b, j, &welcome));
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(j->inner->secret, "aclshmem-server", hello.nonce, sizeof(hello.nonce), expected);
    if (!shmemi_proof_equal(expected, welcome.proof))
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: the control-plane server does not know the job secret", b->my_pe);
    if (welcome.status == ACLSHMEM_INVALID_PARAM)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "PE %d: PE 0 runs a job of a different size than n_pes=%d", b->my_pe, b->n_pes);
    if (welcome.status != 0)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: another process already joined as PE %d", b->my_pe, b->my_pe);
    return ACLSHMEM_SUCCESS;
}

static int connect_failure(const shmemi_bootstrap_t *b, const join_t *j, int err)
{
    if (err == -ETIMEDOUT)
        return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                           "PE %d: PE 0 did not open the control plane at %s within %lld ms",
                           b->my_pe, j->where, (long long)j->timeout_ms);
    return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "PE %d: cannot connect to PE 0 at %s: %s",
                       b->my_pe, j->where, strerror(-err));
}

/* One connection, TLS and the proof of the secret; b->ch is set on success only. */
static int join_once(shmemi_bootstrap_t *b, join_t *j)
{
    j->dropped = 0;
    int fd = shmemi_tcp_connect(&j->addr, j->addr_len, j->deadline);
    if (fd < 0)
        return connect_failure(b, j, fd);
    j->connected_ms = shmemi_now_ms();
    SHMEMI_TRY(shmemi_channel_start(fd, 0, j->inner->secret, &b->ch));
    int rc = shmemi_channel_handshake(b->ch, j->deadline);
    if (rc != ACLSHMEM_SUCCESS && shmemi_channel_peer_hung_up(b->ch))
        rc = dropped(j);
    else if (rc == ACLSHMEM_BOOTSTRAP_ERROR)
        rc = shmemi_fail(rc, "PE %d: %s (PE 0 and this PE do not share a key: a unique ID of another job, "
                         "another SHMEM_JOB_SECRET, a certificate that does not verify, or TLS settings that "
                         "differ)", b->my_pe, shmemi_channel_failure(b->ch));
    if (rc == ACLSHMEM_SUCCESS)
        rc = handshake(b, j);
    if (rc != ACLSHMEM_SUCCESS) {
        shmemi_channel_close(b->ch);
        b->ch = NULL;
    }
    return rc;
}

/* A random wait in [ms/2, ms], so that PEs dropped together do not all come back together. */
static void back_off(int ms)
{
    uint32_t r = 0;
    shmemi_random_bytes(&r, sizeof(r));
    int wait = ms / 2 + (int)(r % (uint32_t)(ms / 2 + 1));
    usleep((useconds_t)wait * 1000);
}

static int dropped_too_often(const shmemi_bootstrap_t *b, const join_t *j, int drops)
{
    return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                       "PE %d: PE 0's control plane at %s dropped this PE's connection before authentication "
                       "%d times in %lld ms (PE 0 overloaded, or its port flooded by connections from outside "
                       "the job?)", b->my_pe, j->where, drops, (long long)j->timeout_ms);
}

/* Joins, trying again while PE 0 drops the connection before authentication. */
static int join(shmemi_bootstrap_t *b, join_t *j)
{
    int drops = 0;
    for (int wait_ms = RETRY_FIRST_MS;; wait_ms = wait_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : wait_ms * 2) {
        int rc = join_once(b, j);
        /* A refusal is final; so is any failure with time left.  One at the deadline after
         * drops is reported as the drops that used the time up. */
        if (rc == ACLSHMEM_SUCCESS || (!j->dropped && (!drops || shmemi_now_ms() < j->deadline)))
            return rc;
        if (j->dropped && drops++ == 0)
            SHMEMI_WARN("PE %d: PE 0 dropped the control-plane connection before authentication (overloaded, "
                        "or its port flooded?); trying again until the init timeout", b->my_pe);
        int64_t left = j->deadline - shmemi_now_ms();
        if (!j->dropped || left <= 0)
            return dropped_too_often(b, j, drops);
        SHMEMI_DEBUG("PE %d: dropped before authentication (%d); next try in about %d ms", b->my_pe, drops, wait_ms);
        back_off(left < wait_ms ? (int)left : wait_ms);
    }
}

static shmemi_bootstrap_t *new_bootstrap(int my_pe, int n_pes)
{
    shmemi_bootstrap_t *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->my_pe = my_pe;
    b->n_pes = n_pes;
    pthread_mutex_init(&b->lock, NULL);
    pthread_mutex_init(&b->send_lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&b->changed, &cattr);
    pthread_condattr_destroy(&cattr);
    return b;
}

static void free_bootstrap(shmemi_bootstrap_t *b)
{
    shmemi_channel_close(b->ch);
    pthread_mutex_destroy(&b->lock);
    pthread_mutex_destroy(&b->send_lock);
    pthread_cond_destroy(&b->changed);
    free(b);
}

int shmemi_bootstrap_connect(const shmemi_uid_inner_t *inner, int my_pe, int n_pes,
                             int64_t timeout_ms, shmemi_bootstrap_t **out)
{
    join_t j = {.inner = inner, .timeout_ms = timeout_ms, .deadline = shmemi_now_ms() + timeout_ms};
    j.addr_len = shmemi_uid_sockaddr(inner, &j.addr);
    shmemi_sockaddr_text(&j.addr, j.where, sizeof(j.where));
    shmemi_bootstrap_t *b = new_bootstrap(my_pe, n_pes);
    if (!b)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "out of memory");
    int rc = join(b, &j);
    if (rc == ACLSHMEM_SUCCESS && pthread_create(&b->agent, NULL, agent_loop, b) != 0)
        rc = shmemi_fail(ACLSHMEM_INNER_ERROR, "cannot start the control-plane thread");
    if (rc != ACLSHMEM_SUCCESS) {
        free_bootstrap(b);
        return rc;
    }
    *out = b;
    return ACLSHMEM_SUCCESS;
}

void shmemi_bootstrap_set_failure_hook(shmemi_bootstrap_t *b, shmemi_failure_hook hook, void *ctx)
{
    pthread_mutex_lock(&b->lock);
    b->hook = hook;
    b->hook_ctx = ctx;
    pthread_mutex_unlock(&b->lock);
}

static int send_msg(shmemi_bootstrap_t *b, const shmemi_msg_t *m, const void *payload)
{
    int64_t deadline = shmemi_now_ms() + 30000;
    pthread_mutex_lock(&b->send_lock);
    int rc = shmemi_channel_send(b->ch, m, sizeof(*m), deadline);
    if (rc == 0 && m->len)
        rc = shmemi_channel_send(b->ch, payload, m->len, deadline);
    pthread_mutex_unlock(&b->send_lock);
    return rc;
}

static completion_t *take_completion(shmemi_bootstrap_t *b, uint64_t key)
{
    for (completion_t **it = &b->done; *it; it = &(*it)->next) {
        if ((*it)->key == key) {
            completion_t *c = *it;
            *it = c->next;
            return c;
        }
    }
    return NULL;
}

static int collective_failure(const shmemi_bootstrap_t *b, int reason, int n, int idx, size_t len)
{
    if (reason == SHMEMI_COLL_ERROR_INVALID)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: PE 0 refused a collective of %d members (this PE member %d, %zu bytes "
                           "each) as out of range for a job of %d PEs", b->my_pe, n, idx, len, b->n_pes);
    if (reason == SHMEMI_COLL_ERROR_RESOURCES)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: PE 0 holds too many unfinished collectives (or too much of their data) "
                           "to start another", b->my_pe);
    return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                       "PE %d: members of a collective disagreed on its size or membership", b->my_pe);
}

int shmemi_bootstrap_collective(shmemi_bootstrap_t *b, uint64_t key, int n, int idx,
                                const void *in, size_t len, void *out, int64_t timeout_ms)
{
    if ((uint64_t)len * (uint64_t)n > SHMEMI_MAX_PAYLOAD)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "control-plane collective too large");
    char failure[256];
    int code = shmemi_bootstrap_failure(b, failure, sizeof(failure));
    if (code)
        return shmemi_fail(code, "%s", failure);
    shmemi_msg_t m = {.type = SHMEMI_MSG_COLL, .len = (uint32_t)len, .key = key, .n = n, .idx = idx};
    if (send_msg(b, &m, in) != 0)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "PE %d cannot reach PE 0 on the control plane",
                           b->my_pe);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&b->lock);
    completion_t *c;
    int timed_out = 0;
    while (!(c = take_completion(b, key)) && b->failure_code == 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&b->changed, &b->lock, &until) == ETIMEDOUT;
    code = b->failure_code;
    snprintf(failure, sizeof(failure), "%s", b->failure);
    pthread_mutex_unlock(&b->lock);
    if (!c) {
        if (code)
            return shmemi_fail(code, "%s", failure);
        return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                           "PE %d: not every PE arrived at a collective operation within %lld ms "
                           "(a PE is missing, slow, or called collectives in another order)",
                           b->my_pe, (long long)timeout_ms);
    }
    int rc = ACLSHMEM_SUCCESS;
    if (c->status == 0 && c->len == len * (size_t)n) {
        if (c->len)
            memcpy(out, c->data, c->len);
    } else {
        rc = collective_failure(b, c->reason, n, idx, len);
    }
    free(c->data);
    free(c);
    return rc;
}

void shmemi_bootstrap_global_exit(shmemi_bootstrap_t *b, int status)
{
    shmemi_msg_t m = {.type = SHMEMI_MSG_EXIT, .arg = status};
    if (send_msg(b, &m, NULL) == 0) {
        /* The agent thread exits the process when the broadcast comes back. */
        for (int i = 0; i < 500; i++)
            usleep(10000);
    }
    fflush(NULL);
    _exit(status);
}

int shmemi_bootstrap_failure(shmemi_bootstrap_t *b, char *msg, size_t msg_len)
{
    pthread_mutex_lock(&b->lock);
    int code = b->failure_code;
    if (code && msg)
        snprintf(msg, msg_len, "%s", b->failure);
    pthread_mutex_unlock(&b->lock);
    return code;
}

void shmemi_bootstrap_close(shmemi_bootstrap_t *b, int clean)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->closing = 1;
    pthread_mutex_unlock(&b->lock);
    shmemi_msg_t bye = {.type = SHMEMI_MSG_BYE};
    if (clean)
        send_msg(b, &bye, NULL);
    shmemi_channel_shutdown(b->ch);
    pthread_join(b->agent, NULL);
    while (b->done) {
        completion_t *c = b->done;
        b->done = c->next;
        free(c->data);
        free(c);
    }
    free_bootstrap(b);
}
