/* The control-plane service that PE 0 runs: admits PEs, completes collectives, relays
 * global exit and reports PEs whose connection dropped.
 *
 * One thread serves everything with poll(): new connections (admission.c), and the PEs,
 * whose messages are read piece by piece as they arrive, so no peer, however slow or
 * hostile, can hold the server up.  Even a PE that knows the secret is not trusted: every
 * field of every message is checked against the state it touches before it is used, and a
 * PE that breaks the protocol is dropped (the others learn it died) instead of being
 * believed. */
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
#include "bootstrap/admission.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/channel.h"
#include "bootstrap/net.h"
#include "bootstrap/protocol.h"
#include "base/error.h"
#include "base/log.h"

/* What unfinished collectives may hold at once: far above any real job's needs, and a
 * bound on what a misbehaving PE can make PE 0 allocate. */
#define MAX_PENDING_COLLECTIVES 1024
#define MAX_PENDING_BYTES (2ull * SHMEMI_MAX_PAYLOAD)
/* Messages read from one PE before the others get a turn. */
#define MESSAGES_PER_TURN 16
#define SEND_TIMEOUT_MS 30000

enum { PE_ABSENT = 0, PE_JOINED, PE_LEFT, PE_DEAD };

typedef struct {
    shmemi_channel_t *ch;
    int state;
    int broken;           /* a send to it failed: dropped at the end of this turn */
    shmemi_msg_t msg;     /* the message being received */
    size_t msg_got;
    uint8_t *payload;     /* [msg.len] */
    size_t payload_got;
} peer_t;

typedef struct pending {
    uint64_t key;
    int n;
    uint32_t len;
    int count;       /* members recorded */
    int failed;      /* members disagreed: every member gets COLL_ERROR */
    int *member_pe;  /* [n], -1 until that member arrives */
    uint8_t *data;   /* [n * len] */
    struct pending *next;
} pending_t;

struct shmemi_store_server {
    int listen_fd;
    int n_pes;
    int wake_pipe[2];
    pthread_t thread;
    shmemi_admission_t *admission;
    peer_t *peers;        /* [n_pes] */
    struct pollfd *pfds;  /* [2 + SHMEMI_ADMISSION_MAX + n_pes] */
    int *pfd_pe;          /* the PE of each pollfd after the admission ones */
    pending_t *pending;
    int pending_count;
    uint64_t pending_bytes;
    atomic_int stopping;
    atomic_llong stop_deadline_ms;
};

static void wake_loop(shmemi_store_server_t *s)
{
    char c = 1;
    ssize_t ignored = write(s->wake_pipe[1], &c, 1);
    (void)ignored;
}

/* ---- sending ------------------------------------------------------------------- */

static int send_msg(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const void *payload)
{
    peer_t *p = &s->peers[pe];
    if (p->state != PE_JOINED || p->broken)
        return -1;
    int64_t deadline = shmemi_now_ms() + SEND_TIMEOUT_MS;
    if (shmemi_channel_send(p->ch, m, sizeof(*m), deadline) != 0 ||
        (m->len && shmemi_channel_send(p->ch, payload, m->len, deadline) != 0)) {
        p->broken = 1; /* dropped by the loop, not here: dropping sends too */
        return -1;
    }
    return 0;
}

static void broadcast(shmemi_store_server_t *s, const shmemi_msg_t *m, int except_pe)
{
    for (int pe = 0; pe < s->n_pes; pe++)
        if (pe != except_pe)
            send_msg(s, pe, m, NULL);
}

static void reply_coll_error(shmemi_store_server_t *s, int pe, uint64_t key, int reason)
{
    shmemi_msg_t err = {.type = SHMEMI_MSG_COLL_ERROR, .key = key, .arg = reason};
    send_msg(s, pe, &err, NULL);
}

/* ---- membership ---------------------------------------------------------------- */

static void forget_message(peer_t *p)
{
    free(p->payload);
    p->payload = NULL;
    p->msg_got = p->payload_got = 0;
}

static void mark_gone(shmemi_store_server_t *s, int pe, int state)
{
    peer_t *p = &s->peers[pe];
    if (p->state != PE_JOINED)
        return;
    shmemi_channel_close(p->ch);
    p->ch = NULL;
    p->state = state;
    forget_message(p);
    if (state == PE_DEAD) {
        SHMEMI_WARN("control plane: PE %d lost its connection; telling the others", pe);
        shmemi_msg_t died = {.type = SHMEMI_MSG_PEER_DIED, .arg = pe};
        broadcast(s, &died, pe);
    }
}

static void drop_for_protocol(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const char *why)
{
    SHMEMI_WARN("control plane: PE %d sent a message that breaks the protocol (type %u, %u payload "
                "bytes: %s); dropping it", pe, m->type, m->len, why);
    mark_gone(s, pe, PE_DEAD);
}

/* Sends that failed mark their PE broken; dropping one broadcasts, which may break more. */
static void drop_broken_peers(shmemi_store_server_t *s)
{
    for (int again = 1; again;) {
        again = 0;
        for (int pe = 0; pe < s->n_pes; pe++) {
            if (s->peers[pe].state == PE_JOINED && s->peers[pe].broken) {
                mark_gone(s, pe, PE_DEAD);
                again = 1;
            }
        }
    }
}

static int admit_check(void *ctx, int pe, int n_pes)
{
    shmemi_store_server_t *s = ctx;
    if (n_pes != s->n_pes || pe < 0 || pe >= s->n_pes)
        return ACLSHMEM_INVALID_PARAM;
    if (s->peers[pe].state != PE_ABSENT || atomic_load(&s->stopping))
        return ACLSHMEM_BOOTSTRAP_ERROR;
    return 0;
}

static void admitted(void *ctx, int pe, shmemi_channel_t *ch)
{
    shmemi_store_server_t *s = ctx;
    s->peers[pe].ch = ch;
    s->peers[pe].state = PE_JOINED;
}

/* ---- collectives --------------------------------------------------------------- */

static pending_t *find_pending(shmemi_store_server_t *s, uint64_t key)
{
    for (pending_t *p = s->pending; p; p = p->next)
        if (p->key == key)
            return p;
    return NULL;
}

static uint64_t pending_size(int n, uint32_t len)
{
    return (uint64_t)n * len;
}

static pending_t *new_pending(shmemi_store_server_t *s, const shmemi_msg_t *m)
{
    uint64_t bytes = pending_size(m->n, m->len);
    if (s->pending_count >= MAX_PENDING_COLLECTIVES || s->pending_bytes + bytes > MAX_PENDING_BYTES)
        return NULL;
    pending_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->key = m->key;
    p->n = m->n;
    p->len = m->len;
    p->member_pe = malloc(sizeof(int) * (size_t)m->n);
    p->data = calloc(1, bytes ? bytes : 1);
    if (!p->member_pe || !p->data) {
        free(p->member_pe);
        free(p->data);
        free(p);
        return NULL;
    }
    for (int i = 0; i < p->n; i++)
        p->member_pe[i] = -1;
    p->next = s->pending;
    s->pending = p;
    s->pending_count++;
    s->pending_bytes += bytes;
    return p;
}

static void retire_pending(shmemi_store_server_t *s, pending_t *p)
{
    for (pending_t **it = &s->pending; *it; it = &(*it)->next) {
        if (*it == p) {
            *it = p->next;
            break;
        }
    }
    s->pending_count--;
    s->pending_bytes -= pending_size(p->n, p->len);
    free(p->member_pe);
    free(p->data);
    free(p);
}

/* Members learn at once that their collective failed; later arrivals are told as they come. */
static void fail_pending(shmemi_store_server_t *s, pending_t *p, int reason)
{
    if (p->failed)
        return;
    p->failed = reason;
    for (int i = 0; i < p->n; i++)
        if (p->member_pe[i] >= 0)
            reply_coll_error(s, p->member_pe[i], p->key, reason);
}

static int is_member(const pending_t *p, int pe)
{
    for (int i = 0; i < p->n; i++)
        if (p->member_pe[i] == pe)
            return 1;
    return 0;
}

/* A contribution fits when it agrees with the first one on the collective's shape, its
 * member index is free, and its PE has not contributed under another index. */
static int contribution_fits(const pending_t *p, const shmemi_msg_t *m, int pe)
{
    return m->n == p->n && m->len == p->len && p->member_pe[m->idx] == -1 && !is_member(p, pe);
}

static void complete_pending(shmemi_store_server_t *s, pending_t *p)
{
    shmemi_msg_t done = {.type = SHMEMI_MSG_COLL_DONE, .key = p->key, .n = p->n,
                         .len = (uint32_t)pending_size(p->n, p->len)};
    for (int i = 0; i < p->n; i++) {
        done.idx = i;
        send_msg(s, p->member_pe[i], &done, p->data);
    }
    retire_pending(s, p);
}

static int coll_fields_valid(const shmemi_store_server_t *s, const shmemi_msg_t *m)
{
    return m->n > 0 && m->n <= s->n_pes && m->idx >= 0 && m->idx < m->n &&
           pending_size(m->n, m->len) <= SHMEMI_MAX_PAYLOAD;
}

static void on_collective(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const uint8_t *payload)
{
    if (!coll_fields_valid(s, m)) {
        reply_coll_error(s, pe, m->key, SHMEMI_COLL_ERROR_INVALID);
        return;
    }
    pending_t *p = find_pending(s, m->key);
    if (!p && !(p = new_pending(s, m))) {
        reply_coll_error(s, pe, m->key, SHMEMI_COLL_ERROR_RESOURCES);
        return;
    }
    if (!contribution_fits(p, m, pe)) {
        fail_pending(s, p, SHMEMI_COLL_ERROR_MISMATCH);
        reply_coll_error(s, pe, m->key, SHMEMI_COLL_ERROR_MISMATCH);
        return;
    }
    p->member_pe[m->idx] = pe;
    p->count++;
    if (p->failed)
        reply_coll_error(s, pe, m->key, p->failed);
    else if (m->len)
        memcpy(p->data + (size_t)m->idx * p->len, payload, m->len);
    if (p->count < p->n)
        return;
    if (p->failed)
        retire_pending(s, p);
    else
        complete_pending(s, p);
}

/* ---- receiving ----------------------------------------------------------------- */

static void relay_exit(shmemi_store_server_t *s, int status)
{
    /* A fresh message: nothing of the sender's but the status is passed on. */
    shmemi_msg_t exit_msg = {.type = SHMEMI_MSG_EXIT, .arg = status};
    /* PE 0 lives in this process and exits on receipt: tell it last. */
    broadcast(s, &exit_msg, 0);
    send_msg(s, 0, &exit_msg, NULL);
}

static void dispatch(shmemi_store_server_t *s, int pe, const shmemi_msg_t *m, const uint8_t *payload)
{
    switch (m->type) {
    case SHMEMI_MSG_COLL:
        on_collective(s, pe, m, payload);
        break;
    case SHMEMI_MSG_EXIT:
        relay_exit(s, m->arg);
        break;
    case SHMEMI_MSG_BYE:
        mark_gone(s, pe, PE_LEFT);
        break;
    default: /* framing_error let nothing else through */
        drop_for_protocol(s, pe, m, "unexpected type");
        break;
    }
}

/* Why a header cannot start a valid message, or NULL.  Checked before its payload is read,
 * so a bad length costs nothing. */
static const char *framing_error(const shmemi_msg_t *m)
{
    switch (m->type) {
    case SHMEMI_MSG_COLL:
        return m->len > SHMEMI_MAX_PAYLOAD ? "payload too large" : NULL;
    case SHMEMI_MSG_EXIT:
    case SHMEMI_MSG_BYE:
        return m->len != 0 ? "this type carries no payload" : NULL;
    default:
        return "not a type a PE sends";
    }
}

/* Reads into buf[*got..len) what has arrived: 1 when full, 0 when more is to come, -1
 * when the connection is gone. */
static int receive_part(peer_t *p, void *buf, size_t len, size_t *got)
{
    while (*got < len) {
        ssize_t n = shmemi_channel_recv_some(p->ch, (char *)buf + *got, len - *got);
        if (n == -EAGAIN)
            return 0;
        if (n <= 0)
            return -1;
        *got += (size_t)n;
    }
    return 1;
}

/* Advances pe's current message: 1 when one was handled, 0 when more is to come, -1 when
 * pe is gone. */
static int receive_step(shmemi_store_server_t *s, int pe)
{
    peer_t *p = &s->peers[pe];
    if (p->msg_got < sizeof(p->msg)) {
        int rc = receive_part(p, &p->msg, sizeof(p->msg), &p->msg_got);
        if (rc <= 0)
            return rc;
        const char *why = framing_error(&p->msg);
        if (why) {
            drop_for_protocol(s, pe, &p->msg, why);
            return -1;
        }
        if (p->msg.len && !(p->payload = malloc(p->msg.len))) {
            SHMEMI_WARN("control plane: out of memory for PE %d's %u-byte message", pe, p->msg.len);
            return -1;
        }
    }
    int rc = receive_part(p, p->payload, p->msg.len, &p->payload_got);
    if (rc <= 0)
        return rc;
    shmemi_msg_t m = p->msg;
    uint8_t *payload = p->payload;
    p->payload = NULL;
    forget_message(p);
    dispatch(s, pe, &m, payload);
    free(payload);
    return 1;
}

static void serve_peer(shmemi_store_server_t *s, int pe)
{
    for (int turn = 0; turn < MESSAGES_PER_TURN; turn++) {
        if (s->peers[pe].state != PE_JOINED || s->peers[pe].broken)
            return;
        int rc = receive_step(s, pe);
        if (rc < 0)
            mark_gone(s, pe, PE_DEAD);
        if (rc <= 0)
            return;
    }
}

/* ---- the loop ------------------------------------------------------------------ */

static void accept_connections(shmemi_store_server_t *s)
{
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++) {
        struct sockaddr_storage from;
        socklen_t from_len = sizeof(from);
        int fd = accept4(s->listen_fd, (struct sockaddr *)&from, &from_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        shmemi_tcp_nodelay(fd);
        shmemi_admission_add(s->admission, fd, &from); /* the source address counts against a cap */
    }
}

static int all_gone(const shmemi_store_server_t *s)
{
    for (int pe = 0; pe < s->n_pes; pe++)
        if (s->peers[pe].state == PE_JOINED)
            return 0;
    return 1;
}

static int should_end(const shmemi_store_server_t *s)
{
    return atomic_load(&s->stopping) &&
           (all_gone(s) || shmemi_now_ms() > atomic_load(&s->stop_deadline_ms));
}

/* pfds: [wake pipe, listen socket, admissions..., PEs...].  Returns the count; *first_pe is
 * the index of the first PE's pollfd, *buffered is set when TLS holds unread bytes. */
static int gather_pollfds(shmemi_store_server_t *s, int *n_admission, int *buffered)
{
    int count = 0;
    s->pfds[count++] = (struct pollfd){.fd = s->wake_pipe[0], .events = POLLIN};
    s->pfds[count++] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
    *n_admission = shmemi_admission_poll_fds(s->admission, s->pfds + count);
    count += *n_admission;
    *buffered = 0;
    for (int pe = 0; pe < s->n_pes; pe++) {
        if (s->peers[pe].state != PE_JOINED)
            continue;
        *buffered |= shmemi_channel_pending(s->peers[pe].ch);
        s->pfd_pe[count] = pe;
        s->pfds[count++] = (struct pollfd){.fd = shmemi_channel_fd(s->peers[pe].ch),
                                           .events = shmemi_channel_wanted(s->peers[pe].ch)};
    }
    return count;
}

static void serve_once(shmemi_store_server_t *s)
{
    int n_admission, buffered;
    int count = gather_pollfds(s, &n_admission, &buffered);
    int timeout = buffered ? 0 : shmemi_admission_wait_ms(s->admission, 200);
    if (poll(s->pfds, (nfds_t)count, timeout) < 0 && errno != EINTR)
        return;
    if (s->pfds[0].revents) {
        char buf[64];
        ssize_t ignored = read(s->wake_pipe[0], buf, sizeof(buf));
        (void)ignored;
    }
    shmemi_admission_serve(s->admission, s->pfds + 2, n_admission);
    if (s->pfds[1].revents && !atomic_load(&s->stopping))
        accept_connections(s);
    for (int i = 2 + n_admission; i < count; i++) {
        int pe = s->pfd_pe[i];
        if (s->peers[pe].state == PE_JOINED && (s->pfds[i].revents || shmemi_channel_pending(s->peers[pe].ch)))
            serve_peer(s, pe);
    }
    drop_broken_peers(s);
}

static void *serve_loop(void *arg)
{
    shmemi_store_server_t *s = arg;
    while (!should_end(s)) {
        if (atomic_load(&s->stopping))
            shmemi_admission_close_all(s->admission);
        serve_once(s);
    }
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------ */

static void free_server(shmemi_store_server_t *s)
{
    for (int pe = 0; s->peers && pe < s->n_pes; pe++) {
        shmemi_channel_close(s->peers[pe].ch);
        free(s->peers[pe].payload);
    }
    while (s->pending)
        retire_pending(s, s->pending);
    shmemi_admission_free(s->admission);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->wake_pipe[0] >= 0) {
        close(s->wake_pipe[0]);
        close(s->wake_pipe[1]);
    }
    free(s->peers);
    free(s->pfds);
    free(s->pfd_pe);
    free(s);
}

static shmemi_store_server_t *new_server(int listen_fd, const uint8_t secret[SHMEMI_SECRET_LEN], int n_pes)
{
    shmemi_store_server_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->listen_fd = listen_fd;
    s->n_pes = n_pes;
    s->wake_pipe[0] = s->wake_pipe[1] = -1;
    size_t max_fds = 2 + SHMEMI_ADMISSION_MAX + (size_t)n_pes;
    s->peers = calloc((size_t)n_pes, sizeof(*s->peers));
    s->pfds = calloc(max_fds, sizeof(*s->pfds));
    s->pfd_pe = calloc(max_fds, sizeof(*s->pfd_pe));
    s->admission = shmemi_admission_new(secret, admit_check, admitted, s);
    if (!s->peers || !s->pfds || !s->pfd_pe || !s->admission || pipe2(s->wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        s->wake_pipe[0] = s->wake_pipe[1] = -1;
        s->listen_fd = -1; /* the caller closes it */
        free_server(s);
        return NULL;
    }
    return s;
}

int shmemi_store_server_start(int listen_fd, const uint8_t secret[SHMEMI_SECRET_LEN], int n_pes,
                              shmemi_store_server_t **out)
{
    if (n_pes <= 0) {
        close(listen_fd);
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "control plane: %d PEs", n_pes);
    }
    if (listen(listen_fd, 1024) != 0 || fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) != 0) {
        int err = errno;
        close(listen_fd);
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "control plane: listen failed: %s", strerror(err));
    }
    shmemi_store_server_t *s = new_server(listen_fd, secret, n_pes);
    if (!s) {
        close(listen_fd);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "control plane: out of resources");
    }
    if (pthread_create(&s->thread, NULL, serve_loop, s) != 0) {
        free_server(s);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "control plane: cannot start the server thread");
    }
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
    pthread_join(s->thread, NULL);
    free_server(s);
}
