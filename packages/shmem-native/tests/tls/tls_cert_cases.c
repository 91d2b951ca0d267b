/*
 * tls_cert_cases.c - jobs with the certificates of tls_certs.c.  Those that work: a CA file, a
 * hashed CA directory, a list of CA files, CRLs, encrypted keys (tlsPkPwd, and the key as
 * content with a decrypt handler).  Those that must fail on every PE, quickly, with a clear
 * error: a wrong CA, a revoked certificate, bad key material.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls_suite.h"

/* ---- certificates that work ------------------------------------------------------------------ */

static void cert_job(int me, int n, const char *info, const char *what)
{
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(set_tls(true, info), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    int rc = init_job(&uid, 20, NULL);
    HARNESS_CHECK_(rc == ACLSHMEM_SUCCESS, 1, "%s: init returned %d (tls_info \"%s\")", what, rc, info);
    exercise(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
}

int t_certificates(int me, int n)
{
    char ca[512], info[2048];
    good_ca(ca, sizeof ca);
    cert_info(info, sizeof info, ca, "cert.pem", "key.pem", NULL);
    cert_job(me, n, info, "CA file in tlsCaPath");
    /* While initialised the settings are frozen, certificates or not. */
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_job(&uid, 20, NULL), ACLSHMEM_SUCCESS);
    expect_settings_refused();
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);

    char dir_ca[512];
    snprintf(dir_ca, sizeof dir_ca, "tlsCaPath: %s/cadir", g_dir);
    cert_info(info, sizeof info, dir_ca, "cert.pem", "key.pem", NULL);
    cert_job(me, n, info, "hashed CA directory");

    char list_ca[512];
    snprintf(list_ca, sizeof list_ca, "tlsCaPath: %s; tlsCaFile: ca2.pem, ca.pem", g_dir);
    cert_info(info, sizeof info, list_ca, "cert.pem", "key.pem", NULL);
    cert_job(me, n, info, "a list of CA files");

    char abs_ca[512];
    snprintf(abs_ca, sizeof abs_ca, "tlsCaFile: %s/ca.pem", g_dir);
    cert_info(info, sizeof info, abs_ca, "cert.pem", "key.pem", NULL);
    cert_job(me, n, info, "an absolute CA file without tlsCaPath");

    /* A CRL that revokes another certificate. */
    char crl[512];
    snprintf(crl, sizeof crl, "tlsCrlPath: %s; tlsCrlFile: crl_revoked.pem", g_dir);
    cert_info(info, sizeof info, ca, "cert.pem", "key.pem", crl);
    cert_job(me, n, info, "CRL check, certificate not revoked");

    /* An encrypted key with its password. */
    cert_info(info, sizeof info, ca, "cert.pem", "key_enc.pem", "tlsPkPwd: pe-key-pass");
    cert_job(me, n, info, "encrypted key with tlsPkPwd");
    return 0;
}

/* The key given as content, with an encrypted password and a decrypt handler (last in its
 * process: a key set this way stays for every later init). */
int t_key_api(int me, int n)
{
    size_t len = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/key_enc.pem", g_dir);
    char *pem = read_file(path, &len);
    ASSERT_NOT_NULL(pem);
    static const char cipher[] = "ssap-yek-ep"; /* "pe-key-pass" reversed */
    decrypt_calls = 0;
    EXPECT_EQ(aclshmemx_set_config_store_tls_key(pem, (uint32_t)len, cipher, (uint32_t)strlen(cipher),
                                                 reverse_decrypt),
              ACLSHMEM_SUCCESS);
    char ca[512], info[1024];
    good_ca(ca, sizeof ca);
    snprintf(info, sizeof info, "%s; tlsCert: %s/cert.pem", ca, g_dir);
    cert_job(me, n, info, "key content with a decrypt handler");
    EXPECT_GT(decrypt_calls, 0);

    /* A plain key as content, no password, no handler. */
    free(pem);
    snprintf(path, sizeof path, "%s/key.pem", g_dir);
    pem = read_file(path, &len);
    ASSERT_NOT_NULL(pem);
    EXPECT_EQ(aclshmemx_set_config_store_tls_key(pem, (uint32_t)len, NULL, 0, NULL), ACLSHMEM_SUCCESS);
    decrypt_calls = 0;
    cert_job(me, n, info, "plain key content");
    EXPECT_EQ(decrypt_calls, 0);
    free(pem);
    return 0;
}

/* ---- certificates that must fail, on every PE, quickly ------------------------------------------ */

/* Every PE inits with its own tls_info; every PE must fail within the timeout and a margin.
 * want_code 0: any error.  must_say: words the message must contain (NULL: anything). */
static void failing_job(const char *info, int want_code, const char *must_say, int delay_ms)
{
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(set_tls(true, info), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    harness_sync();
    if (delay_ms)
        harness_sleep_ms(delay_ms);
    double elapsed = 0;
    harness_mark_error();
    int rc = init_job(&uid, FAIL_TIMEOUT_S, &elapsed);
    const char *msg = aclshmemx_get_last_error();
    harness_log("init returned %d after %.2f s: %s", rc, elapsed, msg);
    HARNESS_CHECK_(rc != ACLSHMEM_SUCCESS, 1, "init succeeded with tls_info \"%s\"", info);
    if (want_code)
        EXPECT_EQ(rc, want_code);
    EXPECT_ERROR_SET();
    if (must_say)
        HARNESS_CHECK_(harness_contains(msg, must_say), 0, "the error should mention \"%s\": \"%s\"", must_say, msg);
    HARNESS_CHECK_(elapsed < FAIL_TIMEOUT_S + FAIL_MARGIN_S, 0, "init took %.2f s to fail", elapsed);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    harness_sync();
}

/* After a failed init the process can still join a good job. */
static void then_good_job(int me, int n)
{
    char ca[512], info[2048];
    good_ca(ca, sizeof ca);
    cert_info(info, sizeof info, ca, "cert.pem", "key.pem", NULL);
    cert_job(me, n, info, "a good job after a failed one");
}

int t_wrong_ca(int me, int n)
{
    char ca2[512], info[2048];
    snprintf(ca2, sizeof ca2, "tlsCaPath: %s; tlsCaFile: ca2.pem", g_dir);
    cert_info(info, sizeof info, ca2, "cert.pem", "key.pem", NULL);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "certificate", 0);
    then_good_job(me, n);
    return 0;
}

/* PE 1 arrives a second after PE 0 already gave up: it must still fail in time. */
int t_wrong_ca_late(int me, int n)
{
    (void)n;
    char ca2[512], info[2048];
    snprintf(ca2, sizeof ca2, "tlsCaPath: %s; tlsCaFile: ca2.pem", g_dir);
    cert_info(info, sizeof info, ca2, "cert.pem", "key.pem", NULL);
    failing_job(info, 0, NULL, me == 0 ? 0 : 1000);
    return 0;
}

/* Only one PE trusts the wrong CA: it fails at once, the others fail in time. */
int t_wrong_ca_one_pe(int me, int n)
{
    char ca[512], info[2048];
    if (me == n - 1)
        snprintf(ca, sizeof ca, "tlsCaPath: %s; tlsCaFile: ca2.pem", g_dir);
    else
        good_ca(ca, sizeof ca);
    cert_info(info, sizeof info, ca, "cert.pem", "key.pem", NULL);
    failing_job(info, me == n - 1 ? ACLSHMEM_BOOTSTRAP_ERROR : 0, me == n - 1 ? "certificate" : NULL, 0);
    then_good_job(me, n);
    return 0;
}

int t_revoked(int me, int n)
{
    char ca[512], crl[512], info[2048];
    good_ca(ca, sizeof ca);
    snprintf(crl, sizeof crl, "tlsCrlPath: %s; tlsCrlFile: crl_revoked.pem", g_dir);
    cert_info(info, sizeof info, ca, "cert_r.pem", "key_r.pem", crl);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "revoked", 0);
    (void)me, (void)n;
    return 0;
}

int t_bad_key_material(int me, int n)
{
    char ca[512], info[2048];
    good_ca(ca, sizeof ca);
    /* Wrong password, no password, a key that does not match the certificate. */
    cert_info(info, sizeof info, ca, "cert.pem", "key_enc.pem", "tlsPkPwd: not-the-password");
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "private key", 0);
    cert_info(info, sizeof info, ca, "cert.pem", "key_enc.pem", NULL);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "private key", 0);
    cert_info(info, sizeof info, ca, "cert.pem", "key_r.pem", NULL);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "private key", 0);
    /* Files that are not there; a certificate without any CA. */
    cert_info(info, sizeof info, ca, "missing.pem", "key.pem", NULL);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "certificate", 0);
    char no_ca[512];
    snprintf(no_ca, sizeof no_ca, "tlsCaPath: %s; tlsCaFile: missing-ca.pem", g_dir);
    cert_info(info, sizeof info, no_ca, "cert.pem", "key.pem", NULL);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "missing-ca.pem", 0);
    snprintf(info, sizeof info, "tlsCert: %s/cert.pem; tlsPk: %s/key.pem", g_dir, g_dir);
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "CA", 0);
    /* A decrypt handler that fails. */
    size_t len = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/key_enc.pem", g_dir);
    char *pem = read_file(path, &len);
    ASSERT_NOT_NULL(pem);
    EXPECT_EQ(aclshmemx_set_config_store_tls_key(pem, (uint32_t)len, "x", 1, failing_decrypt), ACLSHMEM_SUCCESS);
    free(pem);
    snprintf(info, sizeof info, "%s; tlsCert: %s/cert.pem", ca, g_dir);
    decrypt_calls = 0;
    failing_job(info, ACLSHMEM_BOOTSTRAP_ERROR, "decrypt", 0);
    EXPECT_GT(decrypt_calls, 0);
    (void)me, (void)n;
    return 0;
}
