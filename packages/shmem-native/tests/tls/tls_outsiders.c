/*
 * tls_outsiders.c - outsiders that know PE 0's address but not the job's secret: garbage,
 * silence, TLS with a guessed PSK (and, as the control, the real one), a plaintext client with
 * a wrong proof, a library PE with a damaged unique ID.  All are refused, while the job forms
 * and while it runs, and the job is unaffected.  The outsiders speak TLS with OpenSSL.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tls_suite.h"

/* Reads until the peer closes; returns seconds until then, or -1 if it stayed open for
 * `limit` seconds. */
static double wait_closed(int fd, double limit)
{
    double t0 = harness_now();
    char buf[4096];
    for (;;) {
        double left = t0 + limit - harness_now();
        if (left <= 0)
            return -1;
        struct pollfd pfd = { fd, POLLIN, 0 };
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got <= 0)
            return harness_now() - t0;
    }
}

/* TLS 1.3 with an external PSK, as a client that guesses the key. */
static unsigned char g_psk[32];
static const char *g_psk_identity = "aclshmem-job";

static int psk_client_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *id_len, SSL_SESSION **sess)
{
    (void)md;
    static const unsigned char aes128gcm[] = { 0x13, 0x01 };
    const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, aes128gcm);
    SSL_SESSION *s = cipher ? SSL_SESSION_new() : NULL;
    if (!s || !SSL_SESSION_set1_master_key(s, g_psk, sizeof g_psk) || !SSL_SESSION_set_cipher(s, cipher) ||
        !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
        SSL_SESSION_free(s);
        return 0;
    }
    *sess = s;
    *id = (const unsigned char *)g_psk_identity;
    *id_len = strlen(g_psk_identity);
    return 1;
}

/* Connects with g_psk; returns 1 when the handshake completed, 0 when it failed.  On
 * success *challenge gets the server's first 40 bytes (if it sends them). */
static int psk_handshake(const struct sockaddr_in *sa, unsigned char *challenge, size_t *challenge_len)
{
    int fd = connect_retry(sa, 15.0);
    if (fd < 0) {
        harness_report(__FILE__, __LINE__, "cannot connect to PE 0's control plane");
        return 0;
    }
    struct timeval tv = { 8, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
    SSL_CTX_set_psk_use_session_callback(ctx, psk_client_cb);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    int ok = SSL_connect(ssl) == 1;
    if (ok && challenge) {
        /* In TLS 1.3 a bad PSK binder is reported by the server's first flight already;
         * read to be sure the channel really carries data. */
        size_t got = 0;
        ok = SSL_read_ex(ssl, challenge, 40, &got) == 1;
        *challenge_len = got;
    }
    ERR_clear_error();
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return ok;
}

/* HMAC-SHA256(secret, "aclshmem-tls-psk"): how the library derives the PSK today.  Used only
 * as the positive control of the PSK client above. */
static void derive_psk(const aclshmemx_uniqueid_t *uid, unsigned char out[32])
{
    static const char label[] = "aclshmem-tls-psk";
    unsigned int len = 32;
    HMAC(EVP_sha256(), uid->internal + UID_SECRET_OFF, UID_SECRET_LEN, (const unsigned char *)label,
         strlen(label), out, &len);
}

/* Attacks PE 0's port while the job forms (or runs); every attempt must be turned away.
 * with_silent adds a client that connects and says nothing (dropped after 5 s). */
static void attack(const aclshmemx_uniqueid_t *uid, int tls_on, int with_silent)
{
    struct sockaddr_in sa;
    uid_sockaddr(uid, &sa);

    /* A silent client: the server drops it after its handshake time (5 s). */
    int silent = with_silent ? connect_retry(&sa, 15.0) : -1;
    if (with_silent)
        EXPECT_GE(silent, 0);

    /* Garbage. */
    int fd = connect_retry(&sa, 15.0);
    ASSERT_GE(fd, 0);
    unsigned char junk[512];
    RAND_bytes(junk, sizeof junk);
    junk[0] = 0x16; /* looks like the start of a TLS record */
    junk[1] = 0x03;
    junk[2] = 0x01;
    send_all(fd, junk, sizeof junk);
    double t = wait_closed(fd, 8.0);
    HARNESS_CHECK_(t >= 0, 0, "a garbage client was not disconnected within 8 s");
    close(fd);

    if (tls_on) {
        /* TLS with a guessed PSK, under the right identity and under another one. */
        unsigned char ch[64];
        size_t ch_len = 0;
        RAND_bytes(g_psk, sizeof g_psk);
        EXPECT_EQ(psk_handshake(&sa, ch, &ch_len), 0);
        g_psk_identity = "somebody";
        EXPECT_EQ(psk_handshake(&sa, ch, &ch_len), 0);
        g_psk_identity = "aclshmem-job";
        /* The control: the same client with the real key gets through and is greeted with
         * the challenge, so the refusals above come from the key. */
        derive_psk(uid, g_psk);
        ch_len = 0;
        int ok = psk_handshake(&sa, ch, &ch_len);
        HARNESS_CHECK_(ok && ch_len >= 4 && memcmp(ch, "SHRS", 4) == 0, 0,
                       "control: a TLS client with the real PSK should get the challenge (ok %d, %zu bytes); "
                       "has the PSK derivation changed?",
                       ok, ch_len);
        OPENSSL_cleanse(g_psk, sizeof g_psk);
    } else {
        /* Plaintext: take the challenge, answer with a wrong proof claiming PE 1. */
        fd = connect_retry(&sa, 15.0);
        ASSERT_GE(fd, 0);
        unsigned char challenge[40];
        struct timeval tv = { 8, 0 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ssize_t got = recv(fd, challenge, sizeof challenge, MSG_WAITALL);
        EXPECT_EQ(got, (ssize_t)sizeof challenge);
        EXPECT(got >= 4 && memcmp(challenge, "SHRS", 4) == 0);
        unsigned char hello[72];
        memset(hello, 0, sizeof hello);
        int32_t pe = 1, n_pes = harness_n_pes;
        memcpy(hello + 64, &pe, 4);
        memcpy(hello + 68, &n_pes, 4);
        send_all(fd, hello, sizeof hello);
        double closed = wait_closed(fd, 8.0);
        HARNESS_CHECK_(closed >= 0, 0, "a client with a wrong proof was not disconnected");
        close(fd);
    }

    if (silent >= 0) {
        double closed = wait_closed(silent, 9.0);
        HARNESS_CHECK_(closed >= 0, 0, "a silent client kept its connection for 9 s");
        close(silent);
    }
}

/* A library PE with the right address and a damaged secret cannot join (nor take PE 1's
 * place); afterwards the same process joins with the real ID. */
static void impostor(const aclshmemx_uniqueid_t *uid)
{
    aclshmemx_uniqueid_t bad = *uid;
    bad.internal[UID_SECRET_OFF + 5] ^= 0x5a;
    double elapsed = 0;
    harness_mark_error();
    int rc = init_job(&bad, FAIL_TIMEOUT_S, &elapsed);
    EXPECT_EQ(rc, ACLSHMEM_BOOTSTRAP_ERROR);
    EXPECT_ERROR_SET();
    EXPECT_LT(elapsed, FAIL_TIMEOUT_S + FAIL_MARGIN_S);
    harness_log("impostor refused after %.2f s: %s", elapsed, aclshmemx_get_last_error());
    EXPECT_NULL(aclshmemx_instance_ctx_get());
}

static void outsiders(int me, int n, int tls_on)
{
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    if (me == 1) {
        /* Before PE 1 joins: PE 0 (and the others) are waiting in init. */
        attack(&uid, tls_on, 1);
        impostor(&uid);
    }
    ASSERT_EQ(init_job(&uid, 40, NULL), ACLSHMEM_SUCCESS);
    exercise(me, n);
    /* And while the job runs. */
    if (me == n - 1)
        attack(&uid, tls_on, 0);
    aclshmem_barrier_all();
    exercise(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
}

int t_outsiders_tls(int me, int n)
{
    outsiders(me, n, 1);
    return 0;
}

int t_outsiders_plain(int me, int n)
{
    ASSERT_EQ(set_tls(false, NULL), ACLSHMEM_SUCCESS);
    outsiders(me, n, 0);
    return 0;
}
