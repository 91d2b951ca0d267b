#include "bootstrap/channel.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "base/error.h"
#include "base/settings.h"

#define PSK_IDENTITY "aclshmem-job"

struct shmemi_channel {
    int fd;
    int is_server;
    SSL *ssl; /* NULL: plain TCP */
    SSL_CTX *ctx;
    pthread_mutex_t lock;
    uint8_t psk[32];
    short wanted;       /* poll events the last -EAGAIN waits for */
    atomic_int hung_up; /* the socket read end-of-file or was reset (set by any thread) */
    char failure[256];  /* why the TLS handshake failed */
};

/* ---- tls_info: "key: value; key: value; ..." -------------------------------- */

typedef struct {
    char ca_path[512], ca_file[1024], cert[512], pk[512], pk_pwd[512], crl_path[512], crl_file[1024];
} tls_files_t;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t lead = strspn(s, " \t\n");
    memmove(s, s + lead, n - lead + 1);
}

static void parse_tls_info(const char *info, tls_files_t *f)
{
    memset(f, 0, sizeof(*f));
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", info);
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(item, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *key = item, *value = colon + 1;
        trim(key);
        trim(value);
        struct {
            const char *name;
            char *dst;
            size_t len;
        } fields[] = {
            {"tlsCaPath", f->ca_path, sizeof(f->ca_path)},   {"tlsCaFile", f->ca_file, sizeof(f->ca_file)},
            {"tlsCert", f->cert, sizeof(f->cert)},            {"tlsPk", f->pk, sizeof(f->pk)},
            {"tlsPkPwd", f->pk_pwd, sizeof(f->pk_pwd)},       {"tlsCrlPath", f->crl_path, sizeof(f->crl_path)},
            {"tlsCrlFile", f->crl_file, sizeof(f->crl_file)},
        };
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
            if (strcmp(key, fields[i].name) == 0)
                snprintf(fields[i].dst, fields[i].len, "%s", value);
    }
}

/* Joins dir and each comma-separated name, calling load(path) on each. */
static int for_each_file(const char *dir, const char *names, int (*load)(void *, const char *), void *arg)
{
    char copy[1024];
    snprintf(copy, sizeof(copy), "%s", names);
    char *save = NULL;
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        trim(name);
        char path[1600];
        if (name[0] == '/' || !*dir)
            snprintf(path, sizeof(path), "%s", name);
        else
            snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (load(arg, path) != 0)
            return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "TLS: cannot load %s", path);
    }
    return ACLSHMEM_SUCCESS;
}

static int load_ca(void *store, const char *path)
{
    return X509_STORE_load_file(store, path) == 1 ? 0 : -1;
}

static int load_crl(void *store, const char *path)
{
    FILE *f = fopen(path, "r");
    X509_CRL *crl = f ? PEM_read_X509_CRL(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    int ok = crl && X509_STORE_add_crl(store, crl) == 1;
    X509_CRL_free(crl);
    return ok ? 0 : -1;
}

/* The private key password: tlsPkPwd or the one given with the key, run through the
 * user's decrypt handler when there is one. */
static int key_password(const shmemi_tls_settings_t *s, const tls_files_t *f, char *out, size_t out_len)
{
    const char *cipher = s->tls_pk_pw ? s->tls_pk_pw : f->pk_pwd;
    size_t cipher_len = s->tls_pk_pw ? s->tls_pk_pw_len : strlen(f->pk_pwd);
    out[0] = '\0';
    if (!cipher_len)
        return ACLSHMEM_SUCCESS;
    if (!s->decrypt) {
        snprintf(out, out_len, "%.*s", (int)cipher_len, cipher);
        return ACLSHMEM_SUCCESS;
    }
    size_t plain_len = out_len - 1;
    if (s->decrypt(cipher, cipher_len, out, &plain_len) != 0 || plain_len >= out_len)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "TLS: the decrypt handler could not decrypt the key password");
    out[plain_len] = '\0';
    return ACLSHMEM_SUCCESS;
}

static int load_private_key(SSL_CTX *ctx, const shmemi_tls_settings_t *s, const tls_files_t *f)
{
    char password[512];
    SHMEMI_TRY(key_password(s, f, password, sizeof(password)));
    BIO *bio = s->tls_pk ? BIO_new_mem_buf(s->tls_pk, (int)s->tls_pk_len) : BIO_new_file(f->pk, "r");
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, password) : NULL;
    BIO_free(bio);
    OPENSSL_cleanse(password, sizeof(password));
    int ok = key && SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(key);
    if (!ok)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "TLS: cannot use the private key %s (wrong password, or it does not match "
                           "tlsCert)", s->tls_pk ? "given to aclshmemx_set_config_store_tls_key" : f->pk);
    return ACLSHMEM_SUCCESS;
}

static int configure_certificates(SSL_CTX *ctx, const shmemi_tls_settings_t *s, const tls_files_t *f)
{
    if (SSL_CTX_use_certificate_chain_file(ctx, f->cert) != 1)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "TLS: cannot load the certificate tlsCert=%s", f->cert);
    SHMEMI_TRY(load_private_key(ctx, s, f));
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    if (f->ca_file[0])
        SHMEMI_TRY(for_each_file(f->ca_path, f->ca_file, load_ca, store));
    else if (f->ca_path[0] && X509_STORE_load_path(store, f->ca_path) != 1)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "TLS: cannot load CA certificates from %s", f->ca_path);
    if (!f->ca_file[0] && !f->ca_path[0])
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "TLS: tlsCert is set but no CA (tlsCaPath / tlsCaFile)");
    if (f->crl_file[0]) {
        SHMEMI_TRY(for_each_file(f->crl_path, f->crl_file, load_crl, store));
        X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    return ACLSHMEM_SUCCESS;
}

/* ---- PSK from the job secret (TLS 1.3 external PSK) ---------------------------- */

static const unsigned char tls_aes_128_gcm_sha256[] = {0x13, 0x01};

static SSL_SESSION *psk_session(SSL *ssl, const uint8_t psk[32])
{
    const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, tls_aes_128_gcm_sha256);
    SSL_SESSION *sess = cipher ? SSL_SESSION_new() : NULL;
    if (sess && (!SSL_SESSION_set1_master_key(sess, psk, 32) || !SSL_SESSION_set_cipher(sess, cipher) ||
                 !SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION))) {
        SSL_SESSION_free(sess);
        sess = NULL;
    }
    return sess;
}

static int psk_use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *id_len,
                           SSL_SESSION **sess)
{
    (void)md;
    shmemi_channel_t *ch = SSL_get_app_data(ssl);
    *sess = psk_session(ssl, ch->psk);
    *id = (const unsigned char *)PSK_IDENTITY;
    *id_len = strlen(PSK_IDENTITY);
    return *sess != NULL;
}

static int psk_find_session(SSL *ssl, const unsigned char *id, size_t id_len, SSL_SESSION **sess)
{
    shmemi_channel_t *ch = SSL_get_app_data(ssl);
    if (id_len != strlen(PSK_IDENTITY) || memcmp(id, PSK_IDENTITY, id_len) != 0) {
        *sess = NULL;
        return 1; /* unknown identity: the handshake then fails */
    }
    *sess = psk_session(ssl, ch->psk);
    return *sess != NULL;
}

static SSL_CTX *make_context(int is_server, const shmemi_tls_settings_t *s, const tls_files_t *f, int *rc)
{
    SSL_CTX *ctx = SSL_CTX_new(is_server ? TLS_server_method() : TLS_client_method());
    *rc = ACLSHMEM_SUCCESS;
    if (!ctx) {
        *rc = shmemi_fail(ACLSHMEM_INNER_ERROR, "TLS: cannot create an OpenSSL context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    if (f->cert[0]) {
        *rc = configure_certificates(ctx, s, f);
    } else {
        /* The PSK is bound to SHA-256: offer only suites of that hash, or the server would
         * pick AES-256/SHA-384 and ignore the key. */
        SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256");
        if (is_server)
            SSL_CTX_set_psk_find_session_callback(ctx, psk_find_session);
        else
            SSL_CTX_set_psk_use_session_callback(ctx, psk_use_session);
    }
    if (*rc != ACLSHMEM_SUCCESS) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* This PE's certificate must chain to its own CA: otherwise no peer could accept it. */
static int verify_own_certificate(SSL_CTX *ctx)
{
    X509 *cert = SSL_CTX_get0_certificate(ctx);
    X509_STORE_CTX *check = X509_STORE_CTX_new();
    int ok = cert && check && X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(ctx), cert, NULL) == 1 &&
             X509_verify_cert(check) == 1;
    int reason = check ? X509_STORE_CTX_get_error(check) : X509_V_ERR_UNSPECIFIED;
    X509_STORE_CTX_free(check);
    if (!ok)
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                           "TLS: this PE's certificate does not verify against the configured CA: %s",
                           X509_verify_cert_error_string(reason));
    return ACLSHMEM_SUCCESS;
}

int shmemi_channel_uses_certificates(void)
{
    shmemi_tls_settings_t settings;
    shmemi_settings_tls(&settings);
    if (!settings.tls_enabled)
        return 0;
    tls_files_t files;
    parse_tls_info(settings.tls_info, &files);
    return files.cert[0] != '\0';
}

int shmemi_channel_check_settings(void)
{
    shmemi_tls_settings_t settings;
    shmemi_settings_tls(&settings);
    if (!settings.tls_enabled)
        return ACLSHMEM_SUCCESS;
    tls_files_t files;
    parse_tls_info(settings.tls_info, &files);
    /* The pre-shared key has nothing to check before the handshake: no context is made
     * here only to be thrown away (the first one of a process costs a millisecond). */
    if (!files.cert[0])
        return ACLSHMEM_SUCCESS;
    int rc;
    SSL_CTX *ctx = make_context(0, &settings, &files, &rc);
    if (ctx && files.cert[0])
        rc = verify_own_certificate(ctx);
    SSL_CTX_free(ctx);
    return rc;
}

/* ---- a socket BIO that never raises SIGPIPE ---------------------------------------
 * OpenSSL's socket BIO writes with write(), which kills a process that has not ignored
 * SIGPIPE when the peer is gone; a library must not change the process's signal setup. */

static shmemi_channel_t *bio_channel(BIO *b)
{
    return BIO_get_data(b);
}

/* A closed or reset connection, as opposed to "not now": remembered, so that a failed
 * handshake can tell a dropped connection from a refusal (which comes as a TLS alert). */
static void note_transport_end(BIO *b, ssize_t n)
{
    if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
        atomic_store(&bio_channel(b)->hung_up, 1);
}

static int bio_write(BIO *b, const char *buf, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t n = send(bio_channel(b)->fd, buf, (size_t)len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    else if (n < 0)
        note_transport_end(b, n);
    return (int)n;
}

static int bio_read(BIO *b, char *buf, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t n = recv(bio_channel(b)->fd, buf, (size_t)len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    else if (n <= 0)
        note_transport_end(b, n);
    return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static BIO_METHOD *socket_method;
static pthread_once_t socket_method_once = PTHREAD_ONCE_INIT;

static void make_socket_method(void)
{
    socket_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "aclshmem socket");
    BIO_meth_set_write(socket_method, bio_write);
    BIO_meth_set_read(socket_method, bio_read);
    BIO_meth_set_ctrl(socket_method, bio_ctrl);
    BIO_meth_set_create(socket_method, bio_create);
}

static BIO *socket_bio(shmemi_channel_t *ch)
{
    pthread_once(&socket_method_once, make_socket_method);
    BIO *b = socket_method ? BIO_new(socket_method) : NULL;
    if (b)
        BIO_set_data(b, ch);
    return b;
}

/* ---- I/O ---------------------------------------------------------------------- */

static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    int timeout = 100;
    if (deadline_ms >= 0) {
        int64_t left = deadline_ms - shmemi_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        if (left < timeout)
            timeout = (int)left;
    }
    struct pollfd pfd = {.fd = fd, .events = events};
    poll(&pfd, 1, timeout);
    return 0;
}

/* Every SSL I/O call starts with an empty error queue: SSL_get_error reads this thread's
 * queue, and an error left there by another connection (one server thread serves many)
 * would turn a plain "no data yet" into a fatal error and drop a healthy peer. */

/* Runs op until it completes, waiting on the socket as OpenSSL asks. */
static int ssl_io(shmemi_channel_t *ch, int writing, void *buf, size_t len, int64_t deadline_ms)
{
    size_t done = 0;
    while (done < len) {
        pthread_mutex_lock(&ch->lock);
        size_t n = 0;
        ERR_clear_error(); /* see above */
        int ok = writing ? SSL_write_ex(ch->ssl, (char *)buf + done, len - done, &n)
                         : SSL_read_ex(ch->ssl, (char *)buf + done, len - done, &n);
        int err = ok ? SSL_ERROR_NONE : SSL_get_error(ch->ssl, 0);
        pthread_mutex_unlock(&ch->lock);
        if (ok) {
            done += n;
            continue;
        }
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            int rc = wait_fd(ch->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_ms);
            if (rc)
                return rc;
            continue;
        }
        if (err == SSL_ERROR_ZERO_RETURN)
            atomic_store(&ch->hung_up, 1); /* closed cleanly (close_notify): a close, not a refusal */
        ERR_clear_error();
        return -EPIPE;
    }
    return 0;
}

/* Plain TCP: the same note as the TLS socket BIO's. */
static int note_plain_end(shmemi_channel_t *ch, int rc)
{
    if (rc == -EPIPE || rc == -ECONNRESET)
        atomic_store(&ch->hung_up, 1);
    return rc;
}

int shmemi_channel_send(shmemi_channel_t *ch, const void *buf, size_t len, int64_t deadline_ms)
{
    if (!ch->ssl)
        return note_plain_end(ch, shmemi_send_all(ch->fd, buf, len, deadline_ms));
    return ssl_io(ch, 1, (void *)buf, len, deadline_ms);
}

int shmemi_channel_recv(shmemi_channel_t *ch, void *buf, size_t len, int64_t deadline_ms)
{
    if (!ch->ssl)
        return note_plain_end(ch, shmemi_recv_all(ch->fd, buf, len, deadline_ms));
    return ssl_io(ch, 0, buf, len, deadline_ms);
}

/* Records why the TLS handshake failed, in words a user can act on. */
static void note_handshake_failure(shmemi_channel_t *ch)
{
    char reason[256] = "the peer closed the connection (TLS settings or certificates differ?)";
    unsigned long code = ERR_get_error();
    if (code)
        ERR_error_string_n(code, reason, sizeof(reason));
    long verify = SSL_get_verify_result(ch->ssl);
    ERR_clear_error();
    snprintf(ch->failure, sizeof(ch->failure), "TLS handshake with the %s failed: %s%s%s",
             ch->is_server ? "client" : "server", reason, verify != X509_V_OK ? "; certificate check: " : "",
             verify != X509_V_OK ? X509_verify_cert_error_string(verify) : "");
}

int shmemi_channel_handshake_step(shmemi_channel_t *ch)
{
    if (!ch->ssl)
        return 0;
    pthread_mutex_lock(&ch->lock);
    ERR_clear_error();
    int ok = SSL_do_handshake(ch->ssl);
    int err = ok == 1 ? SSL_ERROR_NONE : SSL_get_error(ch->ssl, ok);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
        ch->wanted = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    else if (err != SSL_ERROR_NONE)
        note_handshake_failure(ch);
    pthread_mutex_unlock(&ch->lock);
    if (err == SSL_ERROR_NONE)
        return 0;
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? -EAGAIN : -EPROTO;
}

const char *shmemi_channel_failure(const shmemi_channel_t *ch)
{
    return ch->failure[0] ? ch->failure : "no TLS failure";
}

int shmemi_channel_handshake_begun(shmemi_channel_t *ch)
{
    if (!ch->ssl)
        return 0;
    pthread_mutex_lock(&ch->lock);
    int begun = SSL_get_state(ch->ssl) != TLS_ST_BEFORE;
    pthread_mutex_unlock(&ch->lock);
    return begun;
}

int shmemi_channel_peer_hung_up(shmemi_channel_t *ch)
{
    return atomic_load(&ch->hung_up);
}

short shmemi_channel_wanted(const shmemi_channel_t *ch)
{
    return ch->wanted;
}

int shmemi_channel_handshake(shmemi_channel_t *ch, int64_t deadline_ms)
{
    for (;;) {
        int rc = shmemi_channel_handshake_step(ch);
        if (rc == 0)
            return ACLSHMEM_SUCCESS;
        if (rc != -EAGAIN)
            return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "%s", ch->failure);
        if (wait_fd(ch->fd, ch->wanted, deadline_ms) != 0)
            return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR, "TLS: the handshake timed out");
    }
}

/* ---- contexts: what the channels of one side share ------------------------------- */

struct shmemi_channel_context {
    int is_server;
    SSL_CTX *ctx; /* NULL: TLS is off */
};

int shmemi_channel_context_new(int is_server, shmemi_channel_context_t **out)
{
    shmemi_channel_context_t *c = calloc(1, sizeof(*c));
    if (!c)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    c->is_server = is_server;
    shmemi_tls_settings_t settings;
    shmemi_settings_tls(&settings);
    int rc = ACLSHMEM_SUCCESS;
    if (settings.tls_enabled) {
        tls_files_t files;
        parse_tls_info(settings.tls_info, &files);
        c->ctx = make_context(is_server, &settings, &files, &rc);
    }
    if (rc != ACLSHMEM_SUCCESS) {
        free(c);
        return rc;
    }
    *out = c;
    return ACLSHMEM_SUCCESS;
}

void shmemi_channel_context_free(shmemi_channel_context_t *c)
{
    if (!c)
        return;
    SSL_CTX_free(c->ctx); /* channels made from it hold references of their own */
    free(c);
}

/* The socket BIO and the TLS objects of ch, the handshake not started. */
static int setup_tls(shmemi_channel_t *ch, SSL_CTX *ctx)
{
    fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
    if (!SSL_CTX_up_ref(ctx))
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "TLS: cannot share the OpenSSL context");
    ch->ctx = ctx;
    if (!(ch->ssl = SSL_new(ch->ctx)))
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "TLS: cannot create a connection");
    BIO *bio = socket_bio(ch);
    if (!bio)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "TLS: cannot create a socket BIO");
    SSL_set_app_data(ch->ssl, ch);
    SSL_set_bio(ch->ssl, bio, bio);
    if (ch->is_server)
        SSL_set_accept_state(ch->ssl);
    else
        SSL_set_connect_state(ch->ssl);
    return ACLSHMEM_SUCCESS;
}

int shmemi_channel_start_in(const shmemi_channel_context_t *c, int fd, const uint8_t secret[32],
                            shmemi_channel_t **out)
{
    shmemi_channel_t *ch = calloc(1, sizeof(*ch));
    if (!ch) {
        close(fd);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    ch->fd = fd;
    ch->is_server = c->is_server;
    ch->wanted = POLLIN;
    pthread_mutex_init(&ch->lock, NULL);
    shmemi_proof(secret, "aclshmem-tls-psk", "", 0, ch->psk);
    int rc = c->ctx ? setup_tls(ch, c->ctx) : ACLSHMEM_SUCCESS;
    if (rc != ACLSHMEM_SUCCESS) {
        shmemi_channel_close(ch);
        return rc;
    }
    *out = ch;
    return ACLSHMEM_SUCCESS;
}

int shmemi_channel_start(int fd, int is_server, const uint8_t secret[32], shmemi_channel_t **out)
{
    shmemi_channel_context_t *c;
    int rc = shmemi_channel_context_new(is_server, &c);
    if (rc != ACLSHMEM_SUCCESS) {
        close(fd);
        return rc;
    }
    rc = shmemi_channel_start_in(c, fd, secret, out);
    shmemi_channel_context_free(c);
    return rc;
}

int shmemi_channel_open(int fd, int is_server, const uint8_t secret[32], int64_t deadline_ms,
                        shmemi_channel_t **out)
{
    shmemi_channel_t *ch;
    SHMEMI_TRY(shmemi_channel_start(fd, is_server, secret, &ch));
    int rc = shmemi_channel_handshake(ch, deadline_ms);
    if (rc != ACLSHMEM_SUCCESS) {
        shmemi_channel_close(ch);
        return rc;
    }
    *out = ch;
    return ACLSHMEM_SUCCESS;
}

static ssize_t plain_recv_some(shmemi_channel_t *ch, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = recv(ch->fd, buf, len, MSG_DONTWAIT);
        if (n > 0)
            return n;
        if (n == 0)
            return -EPIPE;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            ch->wanted = POLLIN;
            return -EAGAIN;
        }
        return -EPIPE;
    }
}

ssize_t shmemi_channel_recv_some(shmemi_channel_t *ch, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (!ch->ssl)
        return plain_recv_some(ch, buf, len);
    pthread_mutex_lock(&ch->lock);
    size_t n = 0;
    ERR_clear_error();
    int ok = SSL_read_ex(ch->ssl, buf, len, &n);
    int err = ok ? SSL_ERROR_NONE : SSL_get_error(ch->ssl, 0);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
        ch->wanted = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    else if (err != SSL_ERROR_NONE)
        ERR_clear_error();
    pthread_mutex_unlock(&ch->lock);
    if (ok)
        return (ssize_t)n;
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? -EAGAIN : -EPIPE;
}

int shmemi_channel_pending(shmemi_channel_t *ch)
{
    if (!ch->ssl)
        return 0;
    pthread_mutex_lock(&ch->lock);
    int pending = SSL_has_pending(ch->ssl);
    pthread_mutex_unlock(&ch->lock);
    return pending;
}

int shmemi_channel_fd(const shmemi_channel_t *ch)
{
    return ch->fd;
}

void shmemi_channel_shutdown(shmemi_channel_t *ch)
{
    shutdown(ch->fd, SHUT_RDWR);
}

void shmemi_channel_close(shmemi_channel_t *ch)
{
    if (!ch)
        return;
    if (ch->ssl) {
        pthread_mutex_lock(&ch->lock);
        /* Only a finished handshake has anything to shut down; on a half-open one
         * SSL_shutdown leaves errors in this thread's queue. */
        if (SSL_is_init_finished(ch->ssl))
            SSL_shutdown(ch->ssl);
        ERR_clear_error();
        pthread_mutex_unlock(&ch->lock);
        SSL_free(ch->ssl);
    }
    SSL_CTX_free(ch->ctx);
    close(ch->fd);
    OPENSSL_cleanse(ch->psk, sizeof(ch->psk));
    pthread_mutex_destroy(&ch->lock);
    free(ch);
}
