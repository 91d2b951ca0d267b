/* Pre-authentication handling of control-plane connections (see admission.h).
 *
 * A connection goes through: silence (TLS on: nothing is spent on it but its socket until
 * it sends something), the TLS handshake (skipped with TLS off), the server's challenge,
 * the client's hello with its proof of the secret, and the server's welcome.  Everything
 * it sends is read without blocking and nothing it says is trusted until the proof checks
 * out. */
#include "bootstrap/admission.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "bootstrap/protocol.h"
#include "base/log.h"
#include "base/settings.h"

enum { SLOT_FREE = 0, SLOT_SILENT, SLOT_TLS, SLOT_HELLO };

/* Where a connection comes from, as far as the per-source cap is concerned: an IPv4
 * address, or the /64 prefix of an IPv6 one (a host usually holds a whole /64). */
typedef struct {
    uint8_t family;
    uint8_t prefix[8];
} source_t;

typedef struct {
    int stage;
    int fd;                /* SLOT_SILENT: the bare socket; later ch owns it */
    shmemi_channel_t *ch;
    int progressing;       /* its first message was accepted: it is never pushed out */
    source_t source;
    uint64_t arrival;      /* order of acceptance: the smallest has waited longest */
    uint64_t round;        /* the serve round it arrived in (see evictable) */
    int64_t deadline_ms;
    shmemi_wire_challenge_t challenge;
    shmemi_wire_hello_t hello;
    size_t hello_got;
} slot_t;

struct shmemi_admission {
    uint8_t secret[SHMEMI_SECRET_LEN];
    int tls; /* TLS on: a connection gets its TLS objects only once it says something */
    shmemi_channel_context_t *tls_context; /* the server side's, shared by every connection */
    shmemi_admit_check_fn check;
    shmemi_admitted_fn admitted;
    void *ctx;
    slot_t slots[SHMEMI_ADMISSION_MAX];
    int polled[SHMEMI_ADMISSION_MAX]; /* slot of each pollfd of the last poll_fds */
    uint64_t arrivals, round;
    unsigned long refused;     /* failed or gave up on their own */
    unsigned long displaced;   /* idle ones that made way for a newcomer */
    unsigned long turned_away; /* newcomers closed at once: nobody could make way */
};

shmemi_admission_t *shmemi_admission_new(const uint8_t secret[SHMEMI_SECRET_LEN], shmemi_admit_check_fn check,
                                         shmemi_admitted_fn admitted, void *ctx)
{
    shmemi_admission_t *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    memcpy(a->secret, secret, SHMEMI_SECRET_LEN);
    shmemi_tls_settings_t tls;
    shmemi_settings_tls(&tls);
    a->tls = tls.tls_enabled;
    if (shmemi_channel_context_new(1, &a->tls_context) != ACLSHMEM_SUCCESS) {
        free(a);
        return NULL;
    }
    a->check = check;
    a->admitted = admitted;
    a->ctx = ctx;
    return a;
}

static void release(slot_t *slot)
{
    if (slot->stage == SLOT_SILENT)
        close(slot->fd);
    else
        shmemi_channel_close(slot->ch);
    memset(slot, 0, sizeof(*slot));
}

/* One warning for the first refusal, so a flood of strangers does not flood the log. */
static void refuse(shmemi_admission_t *a, slot_t *slot, const char *why)
{
    if (a->refused++ == 0)
        SHMEMI_WARN("control plane: refused a connection: %s (further refusals are logged at debug level)", why);
    else
        SHMEMI_DEBUG("control plane: refused a connection: %s", why);
    release(slot);
}

/* Once, the first time: an operator should know that PE 0's port is being flooded, even
 * when every PE still gets in. */
static void note_full_table(shmemi_admission_t *a)
{
    if (a->displaced + a->turned_away == 0)
        SHMEMI_WARN("control plane: the pre-authentication slots are full (%d, at most %d per source "
                    "address; a flood of connections?): connections that have sent nothing now make way "
                    "for newcomers", SHMEMI_ADMISSION_MAX, SHMEMI_ADMISSION_PER_SOURCE);
}

void shmemi_admission_close_all(shmemi_admission_t *a)
{
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++)
        if (a->slots[i].stage != SLOT_FREE)
            release(&a->slots[i]);
}

void shmemi_admission_free(shmemi_admission_t *a)
{
    if (!a)
        return;
    shmemi_admission_close_all(a);
    if (a->refused > 1)
        SHMEMI_INFO("control plane: refused %lu connections in all", a->refused);
    if (a->displaced + a->turned_away)
        SHMEMI_INFO("control plane: the pre-authentication slots were full: %lu idle connections made way, "
                    "%lu newcomers were closed at once", a->displaced, a->turned_away);
    memset(a->secret, 0, sizeof(a->secret));
    shmemi_channel_context_free(a->tls_context);
    free(a);
}

/* ---- who takes a slot ---------------------------------------------------------------- */

static source_t source_of(const struct sockaddr_storage *from)
{
    source_t s;
    memset(&s, 0, sizeof(s));
    s.family = (uint8_t)from->ss_family;
    if (from->ss_family == AF_INET) {
        memcpy(s.prefix, &((const struct sockaddr_in *)from)->sin_addr, 4);
    } else if (from->ss_family == AF_INET6) {
        const struct in6_addr *addr = &((const struct sockaddr_in6 *)from)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(addr)) {
            s.family = AF_INET;
            memcpy(s.prefix, addr->s6_addr + 12, 4);
        } else {
            memcpy(s.prefix, addr->s6_addr, 8);
        }
    }
    return s;
}

static int same_source(const source_t *x, const source_t *y)
{
    return x->family == y->family && memcmp(x->prefix, y->prefix, sizeof(x->prefix)) == 0;
}

/* May make way for a newcomer: it has sent nothing acceptable yet, and it has been polled
 * since it arrived (a serve round has passed), so bytes that were already waiting for it
 * have been read. */
static int evictable(const shmemi_admission_t *a, const slot_t *slot)
{
    return slot->stage != SLOT_FREE && !slot->progressing && slot->round < a->round;
}

static const slot_t *longer_waiting(const slot_t *x, const slot_t *y)
{
    return !x || (y && y->arrival < x->arrival) ? y : x;
}

/* The slot a newcomer from src takes: a free one, or that of the idle connection that has
 * waited longest (of src's own once src holds its cap); NULL when none can make way. */
static slot_t *slot_for_newcomer(shmemi_admission_t *a, const source_t *src)
{
    slot_t *free_slot = NULL;
    const slot_t *own_idle = NULL, *any_idle = NULL;
    int held = 0;
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++) {
        slot_t *slot = &a->slots[i];
        if (slot->stage == SLOT_FREE) {
            free_slot = free_slot ? free_slot : slot;
            continue;
        }
        int mine = same_source(&slot->source, src);
        held += mine;
        if (!evictable(a, slot))
            continue;
        any_idle = longer_waiting(any_idle, slot);
        if (mine)
            own_idle = longer_waiting(own_idle, slot);
    }
    if (held < SHMEMI_ADMISSION_PER_SOURCE && free_slot)
        return free_slot;
    slot_t *victim = (slot_t *)(held < SHMEMI_ADMISSION_PER_SOURCE ? any_idle : own_idle);
    note_full_table(a);
    if (!victim) {
        a->turned_away++;
        return NULL;
    }
    a->displaced++;
    SHMEMI_DEBUG("control plane: a connection that had sent nothing made way for a newcomer");
    release(victim);
    return victim;
}

/* ---- the handshake ------------------------------------------------------------------- */

static void advance(shmemi_admission_t *a, slot_t *slot);

/* Wraps the socket in a channel; 0, or -1 when that failed (the slot is then free). */
static int wrap(shmemi_admission_t *a, slot_t *slot)
{
    int fd = slot->fd;
    slot->fd = -1;
    if (shmemi_channel_start_in(a->tls_context, fd, a->secret, &slot->ch) != ACLSHMEM_SUCCESS) {
        memset(slot, 0, sizeof(*slot)); /* the channel closed fd */
        return -1;
    }
    slot->stage = SLOT_TLS;
    return 0;
}

void shmemi_admission_add(shmemi_admission_t *a, int fd, const struct sockaddr_storage *from)
{
    source_t src = source_of(from);
    slot_t *slot = slot_for_newcomer(a, &src);
    if (!slot) {
        close(fd); /* it sent nothing yet; a real PE tries again */
        return;
    }
    *slot = (slot_t){.stage = SLOT_SILENT, .fd = fd, .source = src, .arrival = ++a->arrivals,
                     .round = a->round, .deadline_ms = shmemi_now_ms() + SHMEMI_HANDSHAKE_MS};
    /* Plain TCP: the server speaks first.  TLS: its ClientHello may be here already. */
    if (!a->tls && wrap(a, slot) != 0)
        return;
    advance(a, slot);
}

/* SLOT_SILENT: 1 once the client has sent something (its channel is then made), else 0. */
static int spoke(shmemi_admission_t *a, slot_t *slot)
{
    char byte;
    ssize_t n = recv(slot->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        refuse(a, slot, "it hung up without a word");
        return 0;
    }
    return wrap(a, slot) == 0;
}

/* The challenge is the first thing this server writes on a fresh socket (after TLS's
 * own few hundred bytes), so the socket's send buffer takes it without waiting. */
static int send_challenge(slot_t *slot)
{
    slot->challenge.magic = SHMEMI_WIRE_MAGIC;
    if (shmemi_random_bytes(slot->challenge.nonce, sizeof(slot->challenge.nonce)) != 0)
        return -1;
    return shmemi_channel_send(slot->ch, &slot->challenge, sizeof(slot->challenge), slot->deadline_ms);
}

/* SLOT_TLS: 1 once TLS is done and the challenge sent (the slot is then SLOT_HELLO). */
static int finish_tls(shmemi_admission_t *a, slot_t *slot)
{
    int rc = shmemi_channel_handshake_step(slot->ch);
    if (rc == -EAGAIN) {
        slot->progressing = shmemi_channel_handshake_begun(slot->ch);
        return 0;
    }
    if (rc != 0) {
        refuse(a, slot, shmemi_channel_failure(slot->ch));
        return 0;
    }
    /* With TLS, finishing it took the key: that is progress.  Without, only a whole
     * hello is, and it is judged at once. */
    slot->progressing = a->tls;
    if (send_challenge(slot) != 0) {
        refuse(a, slot, "it did not take the challenge");
        return 0;
    }
    slot->stage = SLOT_HELLO;
    return 1;
}

/* 1 when the whole hello is in, 0 when more is to come, -1 when the client hung up. */
static int receive_hello(slot_t *slot)
{
    while (slot->hello_got < sizeof(slot->hello)) {
        ssize_t n = shmemi_channel_recv_some(slot->ch, (char *)&slot->hello + slot->hello_got,
                                             sizeof(slot->hello) - slot->hello_got);
        if (n == -EAGAIN)
            return 0;
        if (n <= 0)
            return -1;
        slot->hello_got += (size_t)n;
    }
    return 1;
}

/* The client proved the secret: tell it the verdict and, when it is in, hand it over. */
static void welcome(shmemi_admission_t *a, slot_t *slot)
{
    shmemi_wire_welcome_t w = {0};
    shmemi_proof(a->secret, "aclshmem-server", slot->hello.nonce, sizeof(slot->hello.nonce), w.proof);
    int pe = slot->hello.pe;
    w.status = a->check(a->ctx, pe, slot->hello.n_pes);
    /* An authenticated client that does not read its welcome delays only itself: its
     * deadline bounds the wait. */
    if (shmemi_channel_send(slot->ch, &w, sizeof(w), slot->deadline_ms) != 0 || w.status != 0) {
        release(slot);
        return;
    }
    shmemi_channel_t *ch = slot->ch;
    slot->ch = NULL;
    release(slot);
    a->admitted(a->ctx, pe, ch);
}

static void check_hello(shmemi_admission_t *a, slot_t *slot)
{
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(a->secret, "aclshmem-client", slot->challenge.nonce, sizeof(slot->challenge.nonce), expected);
    if (!shmemi_proof_equal(expected, slot->hello.proof)) {
        /* Four bytes that say "wrong secret" and nothing else, so a PE with the wrong ID
         * fails at once instead of taking this for a dropped connection and trying again. */
        uint32_t refused = SHMEMI_WIRE_REFUSED;
        (void)shmemi_channel_send(slot->ch, &refused, sizeof(refused), slot->deadline_ms);
        refuse(a, slot, "it does not know the job secret");
        return;
    }
    welcome(a, slot);
}

static void advance(shmemi_admission_t *a, slot_t *slot)
{
    if (slot->stage == SLOT_SILENT && !spoke(a, slot))
        return;
    if (slot->stage == SLOT_TLS && !finish_tls(a, slot))
        return;
    int rc = receive_hello(slot); /* it may have arrived with the end of the TLS handshake */
    if (rc < 0)
        refuse(a, slot, "it hung up before proving the job secret");
    else if (rc > 0)
        check_hello(a, slot);
}

/* ---- the server loop's side ---------------------------------------------------------- */

int shmemi_admission_poll_fds(shmemi_admission_t *a, struct pollfd *fds)
{
    int count = 0;
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++) {
        const slot_t *slot = &a->slots[i];
        if (slot->stage == SLOT_FREE)
            continue;
        a->polled[count] = i;
        fds[count++] = slot->stage == SLOT_SILENT
                           ? (struct pollfd){.fd = slot->fd, .events = POLLIN}
                           : (struct pollfd){.fd = shmemi_channel_fd(slot->ch), .events = shmemi_channel_wanted(slot->ch)};
    }
    return count;
}

void shmemi_admission_serve(shmemi_admission_t *a, const struct pollfd *fds, int count)
{
    a->round++; /* every connection there now has been polled */
    for (int i = 0; i < count; i++) {
        slot_t *slot = &a->slots[a->polled[i]];
        if (slot->stage != SLOT_FREE && fds[i].revents)
            advance(a, slot);
    }
    int64_t now = shmemi_now_ms();
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++)
        if (a->slots[i].stage != SLOT_FREE && now >= a->slots[i].deadline_ms)
            refuse(a, &a->slots[i], "it did not prove the job secret in time");
}

int shmemi_admission_wait_ms(const shmemi_admission_t *a, int cap_ms)
{
    int64_t now = shmemi_now_ms(), wait = cap_ms;
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++)
        if (a->slots[i].stage != SLOT_FREE && a->slots[i].deadline_ms - now < wait)
            wait = a->slots[i].deadline_ms - now;
    return wait < 0 ? 0 : (int)wait;
}
