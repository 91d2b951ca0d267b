/*
 * test_tls.c - TLS on the control plane (on by default).
 *
 *  - The default (PSK from the unique ID's secret) works, and settings are refused while an
 *    instance is initialised.
 *  - A proxy run by the test sits between PE 0's control-plane port and the other PEs and
 *    records every byte: with TLS on, a plaintext that crosses the control plane during init
 *    (this machine's boot id, which every PE sends) must not be in the recording; with TLS off
 *    it must be (the control that shows the check can fail).  The job secret never is.
 *  - Outsiders that know the address but not the secret (garbage, silence, TLS with a wrong
 *    PSK, a library PE with a damaged unique ID, a plaintext client with a wrong proof) are
 *    refused, and the job is unaffected.
 *  - Certificates made here with the openssl CLI: CA file, hashed CA directory, CA lists,
 *    encrypted keys (tlsPkPwd, aclshmemx_set_config_store_tls_key with a decrypt handler),
 *    CRLs; a wrong CA, a revoked certificate and bad key material fail init on every PE with
 *    a clear error, without a hang.
 *
 * The cases live in the files beside this one, by concern; tls_suite.h is what they share.
 *   test_tls.c        the certificate folder g_dir, the small helpers (init_job, set_tls,
 *                     exercise, read_file), the table of cases and main, which makes the
 *                     certificates first
 *   tls_certs.c       the certificates, made with the openssl CLI, and the tls_info that names them
 *   tls_proxy.c       the recording proxy and the cases that run a job through it
 *   tls_settings.c    the default, the settings API, the decrypt handlers, PEs that disagree on TLS
 *   tls_outsiders.c   outsiders that know the address but not the secret
 *   tls_cert_cases.c  jobs with certificates: those that work and those that must fail
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tls_suite.h"

char g_dir[256]; /* certificates, made once by main() */

/* ---- small helpers -------------------------------------------------------------------- */

void uid_sockaddr(const aclshmemx_uniqueid_t *uid, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    uint16_t family;
    memcpy(&family, uid->internal + UID_FAMILY_OFF, sizeof family);
    sa->sin_family = AF_INET;
    memcpy(&sa->sin_port, uid->internal + UID_PORT_OFF, 2);
    memcpy(&sa->sin_addr, uid->internal + UID_ADDR_OFF, 4);
    if (family != AF_INET)
        harness_report(__FILE__, __LINE__, "the unique ID's address family is %u, not AF_INET", family);
}

/* Init of this PE with uid and the given TLS settings; timeout_s (0 = 30) for every phase. */
int init_job(aclshmemx_uniqueid_t *uid, uint32_t timeout_s, double *elapsed)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = aclshmemx_set_attr_uniqueid_args(harness_my_pe, harness_n_pes, (int64_t)HARNESS_DEFAULT_HEAP, uid,
                                              &attr);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    uint32_t t = timeout_s ? timeout_s : 30;
    attr.option_attr.shm_init_timeout = t;
    attr.option_attr.shm_create_timeout = t;
    attr.option_attr.control_operation_timeout = t;
    double t0 = harness_now();
    rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (elapsed)
        *elapsed = harness_now() - t0;
    return rc;
}

int set_tls(bool on, const char *info)
{
    return aclshmemx_set_conf_store_tls(on, info, info ? (uint32_t)strlen(info) : 0);
}

/* Everything a job should be able to do once it is up, over the data and control planes. */
void exercise(int me, int n)
{
    harness_ring_check(me, n);
    void *p = aclshmem_malloc(1 << 20);
    EXPECT_NOT_NULL(p);
    aclshmem_barrier_all();
    aclshmem_free(p);
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[size] = '\0';
        *len = (size_t)size;
    }
    return buf;
}

#define FAIL_OPTS { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 }

static const harness_case cases[] = {
    { "default", t_default, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 }, { 2, 4 } },
    { "proxy_tls_on", t_proxy_tls_on, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 }, { 2, 3 } },
    { "proxy_tls_off", t_proxy_tls_off, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 }, { 2 } },
    { "proxy_certificates", t_proxy_certificates, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 },
      { 2 } },
    { "outsiders_tls", t_outsiders_tls, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 60 }, { 2 } },
    { "outsiders_plain", t_outsiders_plain, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 60 }, { 2 } },
    { "certificates", t_certificates, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 60 }, { 2 } },
    { "key_api", t_key_api, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 40 }, { 2 } },
    { "wrong_ca", t_wrong_ca, FAIL_OPTS, { 2, 3 } },
    { "wrong_ca_late", t_wrong_ca_late, FAIL_OPTS, { 2 } },
    { "wrong_ca_one_pe", t_wrong_ca_one_pe, FAIL_OPTS, { 2 } },
    { "revoked", t_revoked, FAIL_OPTS, { 2 } },
    { "bad_key_material", t_bad_key_material, { .no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 90 }, { 2 } },
    { "mixed_settings", t_mixed_settings, FAIL_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/aclshmem-tls-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (system("openssl version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_tls needs the openssl command-line tool to make its certificates\n");
        sh("rm -rf '%s'", g_dir);
        return 1;
    }
    double t0 = harness_now();
    if (make_certs() != 0) {
        fprintf(stderr, "could not make the test certificates; the openssl output was:\n");
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cat '%s/openssl.log' >&2; rm -rf '%s'", g_dir, g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "(and %s could not be removed)\n", g_dir);
        return 1;
    }
    printf("certificates made in %.2f s in %s\n", harness_now() - t0, g_dir);
    int rc = harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return rc;
}
