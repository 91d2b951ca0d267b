/* The control-plane service that PE 0 runs: authenticates PEs, completes collectives,
 * relays global exit and reports PEs whose connection dropped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/channel.h"
#include "bootstrap/net.h"
#include "bootstrap/protocol.h"
#include "core/error.h"
#include "core/log.h"

enum { PE_ABSENT = 0, PE_JOINED, PE_LEFT, PE_DEAD };

typedef struct pending {
    uint64_t key;
    int n;
    uint32_t len;
    int count;
    int failed;
    int *member_pe; /* [n] */
    uint8_t *data;  /* [n * len] */
    struct pending *next;
} pending_t;

struct shmemi_store_server {
    int listen_fd;
    uint8_t secret[SHMEMI_SECRET_LEN];
    int n_pes;
    int wake_pipe[2];
    pthread_t accept_thread, loop_thread;
    pthread_mutex_t lock; /* guards pe_ch / pe_state and handshakes */
    pthread_cond_t handshakes_done;
    int handshakes;
    shmemi_channel_t **pe_ch;
    int *pe_state;
    pending_t *pending;
    atomic_int stopping;
    atomic_llong stop_deadline_ms;
};

typedef struct {
    shmemi_store_server_t *server;
    int fd;
} handshake_arg_t;

static void wake_loop(shmemi_store_server_t *s)
{
    char c = 1;
    ssize_t ignored = write(s->wake_pipe[1], &c, 1);
    (void)ignored;
}

static int handshake(shmemi_store_server_t *s, shmemi_channel_t *ch, int64_t deadline, int *pe_out)
{
    shmemi_wire_challenge_t challenge = {.magic = SHMEMI_WIRE_MAGIC};
    shmemi_random_bytes(challenge.nonce, sizeof(challenge.nonce));
    if (shmemi_channel_send(ch, &challenge, sizeof(challenge), deadline) != 0)
        return -1;
    shmemi_wire_hello_t hello;
    if (shmemi_channel_recv(ch, &hello, sizeof(hello), deadline) != 0)
        return -1;
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(s->secret, "aclshmem-client", challenge.nonce, sizeof(challenge.nonce), expected);
    if (!shmemi_proof_equal(expected, hello.proof)) {
        SHMEMI_WARN("control plane: refused a connection that does not know the job secret");
        return -1; /* say nothing to an outsider */
    }
    shmemi_wire_welcome_t welcome = {0};
    shmemi_proof(s->secret, "aclshmem-server", hello.nonce, sizeof(hello.nonce), welcome.proof);
    pthread_mutex_lock(&s->lock);
    if (hello.n_pes != s->n_pes || hello.pe < 0 || hello.pe >= s->n_pes)
        welcome.status = ACLSHMEM_INVALID_PARAM;
    else if (s->pe_state[hello.pe] != PE_ABSENT)
        welcome.status = ACLSHMEM_BOOTSTRAP_ERROR;
    pthread_mutex_unlock(&s->lock);
    if (shmemi_channel_send(ch, &welcome, sizeof(welcome), deadline) != 0 || welcome.status != 0)
        return -1;
    *pe_out = hello.pe;
    return 0;
}

static void *handshake_thread(void *p)
{
    handshake_arg_t arg = *(handshake_arg_t *)p;
    free(p);
    shmemi_store_server_t *s = arg.server;
    int pe = -1;
    int64_t deadline = shmemi_now_ms() + SHMEMI_HANDSHAKE_MS;
    shmemi_channel_t *ch = NULL;
    int ok = shmemi_channel_open(arg.fd, 1, s->secret, deadline, &ch) == ACLSHMEM_SUCCESS &&
             handshake(s, ch, deadline, &pe) == 0;
    pthread_mutex_lock(&s->lock);
    if (ok && s->pe_state[pe] == PE_ABSENT) {
        s->pe_ch[pe] = ch;
        s->pe_state[pe] = PE_JOINED;
    } else {
        ok = 0;
        shmemi_channel_close(ch);
    }
    s->handshakes--;
    pthread_cond_broadcast(&s->handshakes_done);
    pthread_mutex_unlock(&s->lock);
    if (ok)
        wake_loop(s);
    return NULL;
}

static void *accept_loop(void *p)
{
    shmemi_store_server_t *s = p;
    while (!atomic_load(&s->stopping)) {
        struct pollfd pfd = {.fd = s->listen_fd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        shmemi_tcp_nodelay(fd);
        handshake_arg_t *arg = malloc(sizeof(*arg));
        pthread_t tid;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_mutex_lock(&s->lock);
        s->handshakes++;
        pthread_mutex_unlock(&s->lock);
        if (arg)
            *arg = (handshake_arg_t){s, fd};
        if (!arg || pthread_create(&tid, &attr, handshake_thread, arg) != 0) {
            free(arg);
            close(fd);
            pthread_mutex_lock(&s->lock);
            s->handshakes--;
            pthread_mutex_unlock(&s->lock);
        }
        pthread_attr_destroy(&attr);
    }
    return NULL;
}

static int send_msg(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const void *payload)
{
    shmemi_channel_t *ch = s->pe_ch[pe];
    if (!ch || s->pe_state[pe] != PE_JOINED)
        return -1;
    int64_t deadline = shmemi_now_ms() + 30000;
    if (shmemi_channel_send(ch, m, sizeof(*m), deadline) != 0)
        return -1;
    if (m->len && shmemi_channel_send(ch, payload, m->len, deadline) != 0)
        return -1;
    return 0;
}

static void broadcast(shmemi_store_server_t *s, const shmemi_msg_t *m, int except_pe)
{
    for (int pe = 0; pe < s->n_pes; pe++)
        if (pe != except_pe)
            send_msg(s, pe, m, NULL);
}

static void mark_gone(shmemi_store_server_t *s, int pe, int state)
{
    pthread_mutex_lock(&s->lock);
    shmemi_channel_close(s->pe_ch[pe]);
    s->pe_ch[pe] = NULL;
    s->pe_state[pe] = state;
    pthread_mutex_unlock(&s->lock);
    if (state == PE_DEAD) {
        SHMEMI_WARN("control plane: PE %d lost its connection; telling the others", pe);
        shmemi_msg_t died = {.type = SHMEMI_MSG_PEER_DIED, .arg = pe};
        broadcast(s, &died, pe);
    }
}

static pending_t *find_pending(shmemi_store_server_t *s, uint64_t key, int n, uint32_t len)
{
    for (pending_t *p = s->pending; p; p = p->next)
        if (p->key == key)
            return p;
    pending_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->key = key;
    p->n = n;
    p->len = len;
    p->member_pe = malloc(sizeof(int) * (size_t)n);
    p->data = calloc((size_t)n, len ? len : 1);
    if (!p->member_pe || !p->data) {
        free(p->member_pe);
        free(p->data);
        free(p);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        p->member_pe[i] = -1;
    p->next = s->pending;
    s->pending = p;
    return p;
}

static void finish_pending(shmemi_store_server_t *s, pending_t *p)
{
    shmemi_msg_t done = {.key = p->key, .n = p->n};
    if (p->failed) {
        done.type = SHMEMI_MSG_COLL_ERROR;
    } else {
        done.type = SHMEMI_MSG_COLL_DONE;
        done.len = (uint32_t)((size_t)p->n * p->len);
    }
    for (int i = 0; i < p->n; i++) {
        done.idx = i;
        send_msg(s, p->member_pe[i], &done, p->data);
    }
    for (pending_t **it = &s->pending; *it; it = &(*it)->next) {
        if (*it == p) {
            *it = p->next;
            break;
        }
    }
    free(p->member_pe);
    free(p->data);
    free(p);
}

static void on_collective(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const uint8_t *payload)
{
    if (m->n <= 0 || m->n > s->n_pes || m->idx < 0 || m->idx >= m->n ||
        (uint64_t)m->len * (uint64_t)m->n > SHMEMI_MAX_PAYLOAD) {
        shmemi_msg_t err = {.type = SHMEMI_MSG_COLL_ERROR, .key = m->key};
        send_msg(s, pe, &err, NULL);
        return;
    }
    pending_t *p = find_pending(s, m->key, m->n, m->len);
    if (!p)
        return;
    if (p->n != m->n || p->len != m->len || p->member_pe[m->idx] != -1)
        p->failed = 1;
    else if (m->len)
        memcpy(p->data + (size_t)m->idx * p->len, payload, m->len);
    if (p->member_pe[m->idx] == -1) {
        p->member_pe[m->idx] = pe;
        p->count++;
    }
    if (p->count == p->n)
        finish_pending(s, p);
}

static void serve_message(shmemi_store_server_t *s, int pe)
{
    shmemi_msg_t m;
    shmemi_channel_t *ch = s->pe_ch[pe];
    int64_t deadline = shmemi_now_ms() + 30000;
    if (shmemi_channel_recv(ch, &m, sizeof(m), deadline) != 0) {
        mark_gone(s, pe, PE_DEAD);
        return;
    }
    uint8_t *payload = NULL;
    if (m.len > SHMEMI_MAX_PAYLOAD || (m.len && !(payload = malloc(m.len))) ||
        (m.len && shmemi_channel_recv(ch, payload, m.len, deadline) != 0)) {
        free(payload);
        mark_gone(s, pe, PE_DEAD);
        return;
    }
    switch (m.type) {
    case SHMEMI_MSG_COLL:
        on_collective(s, pe, &m, payload);
        break;
    case SHMEMI_MSG_EXIT:
        /* PE 0 lives in this process and exits on receipt: tell it last. */
        broadcast(s, &m, 0);
        send_msg(s, 0, &m, NULL);
        break;
    case SHMEMI_MSG_BYE:
        mark_gone(s, pe, PE_LEFT);
        break;
    default:
        mark_gone(s, pe, PE_DEAD);
        break;
    }
    free(payload);
}

static int all_gone(shmemi_store_server_t *s)
{
    for (int pe = 0; pe < s->n_pes; pe++)
        if (s->pe_state[pe] == PE_JOINED)
            return 0;
    return 1;
}

static void *serve_loop(void *p)
{
    shmemi_store_server_t *s = p;
    struct pollfd *pfds = calloc((size_t)s->n_pes + 1, sizeof(*pfds));
    int *pes = calloc((size_t)s->n_pes + 1, sizeof(int));
    if (!pfds || !pes) {
        free(pfds);
        free(pes);
        return NULL;
    }
    for (;;) {
        if (atomic_load(&s->stopping) &&
            (all_gone(s) || shmemi_now_ms() > atomic_load(&s->stop_deadline_ms)))
            break;
        int count = 0, pending = 0;
        pfds[count++] = (struct pollfd){.fd = s->wake_pipe[0], .events = POLLIN};
        pthread_mutex_lock(&s->lock);
        for (int pe = 0; pe < s->n_pes; pe++) {
            if (s->pe_state[pe] == PE_JOINED) {
                pes[count] = pe;
                pending |= shmemi_channel_pending(s->pe_ch[pe]);
                pfds[count++] = (struct pollfd){.fd = shmemi_channel_fd(s->pe_ch[pe]), .events = POLLIN};
            }
        }
        pthread_mutex_unlock(&s->lock);
        if (poll(pfds, (nfds_t)count, pending ? 0 : 200) <= 0 && !pending)
            continue;
        if (pfds[0].revents) {
            char buf[64];
            ssize_t ignored = read(s->wake_pipe[0], buf, sizeof(buf));
            (void)ignored;
        }
        for (int i = 1; i < count; i++)
            if (pfds[i].revents || shmemi_channel_pending(s->pe_ch[pes[i]]))
                serve_message(s, pes[i]);
    }
    free(pfds);
    free(pes);
    return NULL;
}

int shmemi_store_server_start(int listen_fd, const uint8_t secret[SHMEMI_SECRET_LEN], int n_pes,
                              shmemi_store_server_t **out)
{
    if (listen(listen_fd, 1024) != 0) {
        int err = errno;
        close(listen_fd);
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "control plane: listen failed: %s", strerror(err));
    }
    shmemi_store_server_t *s = calloc(1, sizeof(*s));
    if (!s || pipe2(s->wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(s);
        close(listen_fd);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "control plane: out of resources");
    }
    s->listen_fd = listen_fd;
    memcpy(s->secret, secret, SHMEMI_SECRET_LEN);
    s->n_pes = n_pes;
    s->pe_ch = calloc((size_t)n_pes, sizeof(shmemi_channel_t *));
    s->pe_state = calloc((size_t)n_pes, sizeof(int));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->handshakes_done, NULL);
    if (!s->pe_ch || !s->pe_state || pthread_create(&s->loop_thread, NULL, serve_loop, s) != 0) {
        free(s->pe_ch);
        free(s->pe_state);
        close(s->wake_pipe[0]);
        close(s->wake_pipe[1]);
        close(listen_fd);
        free(s);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "control plane: cannot start the server");
    }
    pthread_create(&s->accept_thread, NULL, accept_loop, s);
    *out = s;
    return ACLSHMEM_SUCCESS;
}

void shmemi_store_server_stop(shmemi_store_server_t *s, int64_t timeout_ms)
{
    if (!s)
        return;
    atomic_store(&s->stop_deadline_ms, shmemi_now_ms() + timeout_ms);
    atomic_store(&s->stopping, 1);
    wake_loop(s);
    pthread_join(s->accept_thread, NULL);
    pthread_join(s->loop_thread, NULL);
    pthread_mutex_lock(&s->lock);
    while (s->handshakes > 0)
        pthread_cond_wait(&s->handshakes_done, &s->lock);
    pthread_mutex_unlock(&s->lock);
    for (int pe = 0; pe < s->n_pes; pe++)
        shmemi_channel_close(s->pe_ch[pe]);
    while (s->pending) {
        pending_t *p = s->pending;
        s->pending = p->next;
        free(p->member_pe);
        free(p->data);
        free(p);
    }
    close(s->listen_fd);
    close(s->wake_pipe[0]);
    close(s->wake_pipe[1]);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->handshakes_done);
    free(s->pe_ch);
    free(s->pe_state);
    free(s);
}
