/*
 * tls_suite.h - what the files of the TLS test share (test_tls.c says which file holds what):
 * where the unique ID keeps things, how long a failing init may take, the certificate folder,
 * the small helpers, the certificate and socket helpers, the decrypt handlers and the cases
 * that main's table names.
 */
#ifndef ACLSHMEM_TEST_TLS_SUITE_H
#define ACLSHMEM_TEST_TLS_SUITE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* Where the unique ID keeps things (src/bootstrap/uid.h: internal[] holds magic, family,
 * port in network order at 6, address at 8, the 32-byte secret at 24). */
#define UID_FAMILY_OFF 4
#define UID_PORT_OFF 6
#define UID_ADDR_OFF 8
#define UID_SECRET_OFF 24
#define UID_SECRET_LEN 32

/* How long a failing init may take beyond its timeout before we call it a hang. */
#define FAIL_TIMEOUT_S 5
#define FAIL_MARGIN_S 4.0

extern char g_dir[256]; /* certificates, made once by main() */

/* ---- small helpers (test_tls.c) ------------------------------------------------------------ */
/* PE 0's control-plane address, as the unique ID carries it. */
void uid_sockaddr(const aclshmemx_uniqueid_t *uid, struct sockaddr_in *sa);
int init_job(aclshmemx_uniqueid_t *uid, uint32_t timeout_s, double *elapsed);
int set_tls(bool on, const char *info);
void exercise(int me, int n);
/* The whole file, NUL-terminated, its length in *len; NULL if it cannot be read. */
char *read_file(const char *path, size_t *len);

/* ---- certificates (tls_certs.c) ------------------------------------------------------------ */
/* Runs a shell command line (printf format); its output goes to g_dir/openssl.log.  0 on success. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Makes in g_dir: ca.pem (the CA), ca2.pem (another CA), cert.pem/key.pem and
 * cert_r.pem/key_r.pem (PE certificates, cert_r.pem revoked in crl_revoked.pem, not in crl.pem),
 * key_enc.pem (key.pem encrypted with "pe-key-pass") and cadir/ (the CA, hashed). */
int make_certs(void);
void cert_info(char *out, size_t len, const char *ca_part, const char *cert, const char *key, const char *extra);
/* The tls_info part that trusts the CA of the PE certificates. */
void good_ca(char *out, size_t len);

/* ---- sockets (tls_proxy.c; the outsiders use them too) ------------------------------------- */
int send_all(int fd, const void *buf, size_t len);
int connect_retry(const struct sockaddr_in *sa, double seconds);

/* ---- the settings API (tls_settings.c) ----------------------------------------------------- */
/* Calls of the decrypt handlers below; a case resets it before it counts. */
extern int decrypt_calls;
/* A handler that "decrypts" by reversing the cipher text. */
int reverse_decrypt(const char *cipher, size_t cipher_len, char *plain, size_t *plain_len);
/* A handler that always fails. */
int failing_decrypt(const char *cipher, size_t cipher_len, char *plain, size_t *plain_len);
/* Checks that every TLS setter is refused while this PE is initialised. */
void expect_settings_refused(void);

/* ---- the cases (main's table in test_tls.c names them) ------------------------------------- */
/* tls_settings.c */
int t_default(int me, int n);
int t_mixed_settings(int me, int n);
/* tls_proxy.c */
int t_proxy_tls_on(int me, int n);
int t_proxy_tls_off(int me, int n);
int t_proxy_certificates(int me, int n);
/* tls_outsiders.c */
int t_outsiders_tls(int me, int n);
int t_outsiders_plain(int me, int n);
/* tls_cert_cases.c */
int t_certificates(int me, int n);
int t_key_api(int me, int n);
int t_wrong_ca(int me, int n);
int t_wrong_ca_late(int me, int n);
int t_wrong_ca_one_pe(int me, int n);
int t_revoked(int me, int n);
int t_bad_key_material(int me, int n);

#endif
