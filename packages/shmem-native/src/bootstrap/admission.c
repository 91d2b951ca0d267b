/* Pre-authentication handling of control-plane connections (see admission.h).
 *
 * A connection goes through: the TLS handshake (skipped with TLS off), the server's
 * challenge, the client's hello with its proof of the secret, and the server's welcome.
 * Everything it sends is read without blocking and nothing it says is trusted until the
 * proof checks out. */
#include "bootstrap/admission.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "bootstrap/protocol.h"
#include "core/log.h"

enum { SLOT_FREE = 0, SLOT_TLS, SLOT_HELLO };

typedef struct {
    int stage;
    shmemi_channel_t *ch;
    int64_t deadline_ms;
    shmemi_wire_challenge_t challenge;
    shmemi_wire_hello_t hello;
    size_t hello_got;
} slot_t;

struct shmemi_admission {
    uint8_t secret[SHMEMI_SECRET_LEN];
    shmemi_admit_check_fn check;
    shmemi_admitted_fn admitted;
    void *ctx;
    slot_t slots[SHMEMI_ADMISSION_MAX];
    int polled[SHMEMI_ADMISSION_MAX]; /* slot of each pollfd of the last poll_fds */
    unsigned long refused;
};

shmemi_admission_t *shmemi_admission_new(const uint8_t secret[SHMEMI_SECRET_LEN], shmemi_admit_check_fn check,
                                         shmemi_admitted_fn admitted, void *ctx)
{
    shmemi_admission_t *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    memcpy(a->secret, secret, SHMEMI_SECRET_LEN);
    a->check = check;
    a->admitted = admitted;
    a->ctx = ctx;
    return a;
}

static void release(slot_t *slot)
{
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
    memset(a->secret, 0, sizeof(a->secret));
    free(a);
}

/* The free slot, or else the one closest to its deadline (the oldest): a newcomer pushes
 * out the connection that has had the longest to prove itself. */
static slot_t *slot_for_newcomer(shmemi_admission_t *a)
{
    slot_t *oldest = &a->slots[0];
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++) {
        if (a->slots[i].stage == SLOT_FREE)
            return &a->slots[i];
        if (a->slots[i].deadline_ms < oldest->deadline_ms)
            oldest = &a->slots[i];
    }
    refuse(a, oldest, "too many connections are being admitted at once; the oldest made way");
    return oldest;
}

static void advance(shmemi_admission_t *a, slot_t *slot);

void shmemi_admission_add(shmemi_admission_t *a, int fd)
{
    slot_t *slot = slot_for_newcomer(a);
    if (shmemi_channel_start(fd, 1, a->secret, &slot->ch) != ACLSHMEM_SUCCESS) {
        memset(slot, 0, sizeof(*slot));
        return;
    }
    slot->stage = SLOT_TLS;
    slot->deadline_ms = shmemi_now_ms() + SHMEMI_HANDSHAKE_MS;
    advance(a, slot);
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
        refuse(a, slot, "it does not know the job secret"); /* and say nothing to it */
        return;
    }
    welcome(a, slot);
}

static void advance(shmemi_admission_t *a, slot_t *slot)
{
    if (slot->stage == SLOT_TLS) {
        int rc = shmemi_channel_handshake_step(slot->ch);
        if (rc == -EAGAIN)
            return;
        if (rc != 0) {
            refuse(a, slot, shmemi_channel_failure(slot->ch));
            return;
        }
        if (send_challenge(slot) != 0) {
            refuse(a, slot, "it did not take the challenge");
            return;
        }
        slot->stage = SLOT_HELLO;
    }
    int rc = receive_hello(slot); /* it may have arrived with the end of the TLS handshake */
    if (rc < 0)
        refuse(a, slot, "it hung up before proving the job secret");
    else if (rc > 0)
        check_hello(a, slot);
}

int shmemi_admission_poll_fds(shmemi_admission_t *a, struct pollfd *fds)
{
    int count = 0;
    for (int i = 0; i < SHMEMI_ADMISSION_MAX; i++) {
        if (a->slots[i].stage == SLOT_FREE)
            continue;
        a->polled[count] = i;
        fds[count++] = (struct pollfd){.fd = shmemi_channel_fd(a->slots[i].ch),
                                       .events = shmemi_channel_wanted(a->slots[i].ch)};
    }
    return count;
}

void shmemi_admission_serve(shmemi_admission_t *a, const struct pollfd *fds, int count)
{
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
