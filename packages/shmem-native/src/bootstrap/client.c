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
#include "core/error.h"
#include "core/log.h"

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

static int handshake(shmemi_bootstrap_t *b, const shmemi_uid_inner_t *inner, int64_t deadline)
{
    shmemi_wire_challenge_t challenge;
    if (shmemi_channel_recv(b->ch, &challenge, sizeof(challenge), deadline) != 0 ||
        challenge.magic != SHMEMI_WIRE_MAGIC)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: the address in the unique ID does not answer as an aclshmem "
                           "control plane", b->my_pe);
    shmemi_wire_hello_t hello = {.pe = b->my_pe, .n_pes = b->n_pes};
    shmemi_proof(inner->secret, "aclshmem-client", challenge.nonce, sizeof(challenge.nonce), hello.proof);
    shmemi_random_bytes(hello.nonce, sizeof(hello.nonce));
    shmemi_wire_welcome_t welcome;
    if (shmemi_channel_send(b->ch, &hello, sizeof(hello), deadline) != 0 ||
        shmemi_channel_recv(b->ch, &welcome, sizeof(welcome), deadline) != 0)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "PE %d: PE 0 refused the connection (wrong unique ID, a PE number "
                           "already taken, or a different PE count)", b->my_pe);
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(inner->secret, "aclshmem-server", hello.nonce, sizeof(hello.nonce), expected);
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

int shmemi_bootstrap_connect(const shmemi_uid_inner_t *inner, int my_pe, int n_pes,
                             int64_t timeout_ms, shmemi_bootstrap_t **out)
{
    struct sockaddr_storage ss;
    socklen_t len = shmemi_uid_sockaddr(inner, &ss);
    int64_t deadline = shmemi_now_ms() + timeout_ms;
    int fd = shmemi_tcp_connect(&ss, len, deadline);
    if (fd < 0) {
        char text[80];
        shmemi_sockaddr_text(&ss, text, sizeof(text));
        if (fd == -ETIMEDOUT)
            return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                               "PE %d: PE 0 did not open the control plane at %s within %lld ms",
                               my_pe, text, (long long)timeout_ms);
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "PE %d: cannot connect to PE 0 at %s: %s",
                           my_pe, text, strerror(-fd));
    }
    shmemi_bootstrap_t *b = calloc(1, sizeof(*b));
    if (!b) {
        close(fd);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "out of memory");
    }
    b->my_pe = my_pe;
    b->n_pes = n_pes;
    pthread_mutex_init(&b->lock, NULL);
    pthread_mutex_init(&b->send_lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&b->changed, &cattr);
    pthread_condattr_destroy(&cattr);
    int rc = shmemi_channel_open(fd, 0, inner->secret, deadline, &b->ch);
    if (rc == ACLSHMEM_SUCCESS)
        rc = handshake(b, inner, deadline);
    if (rc == ACLSHMEM_SUCCESS && pthread_create(&b->agent, NULL, agent_loop, b) != 0)
        rc = shmemi_fail(ACLSHMEM_INNER_ERROR, "cannot start the control-plane thread");
    if (rc != ACLSHMEM_SUCCESS) {
        shmemi_channel_close(b->ch);
        pthread_mutex_destroy(&b->lock);
        pthread_mutex_destroy(&b->send_lock);
        pthread_cond_destroy(&b->changed);
        free(b);
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
    shmemi_channel_close(b->ch);
    while (b->done) {
        completion_t *c = b->done;
        b->done = c->next;
        free(c->data);
        free(c);
    }
    pthread_mutex_destroy(&b->lock);
    pthread_mutex_destroy(&b->send_lock);
    pthread_cond_destroy(&b->changed);
    free(b);
}
