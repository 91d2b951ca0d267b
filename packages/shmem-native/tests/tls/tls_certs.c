/*
 * tls_certs.c - the test certificates, made with the openssl command-line tool in g_dir (a CA,
 * a second CA nobody trusts, PE certificates, an encrypted key, a hashed CA directory and
 * CRLs), and the tls_info strings that name them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tls_suite.h"

int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    cmd[0] = '(';
    int n = vsnprintf(cmd + 1, sizeof cmd - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd - 400)
        return -1;
    /* The whole command line's output goes to the log. */
    snprintf(cmd + 1 + n, sizeof cmd - 1 - (size_t)n, ") >>'%s/openssl.log' 2>&1", g_dir);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc == 0 ? 0 : -1;
}

#define EC_KEY_OPTS "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

static int make_ca(const char *name, const char *cn)
{
    return sh("cd '%s' && openssl req -x509 " EC_KEY_OPTS " -keyout %s.key -out %s.pem -days 3 -subj /CN=%s "
              "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
              g_dir, name, name, cn);
}

static int make_pe_cert(const char *key, const char *cert)
{
    return sh("cd '%s' && openssl req -new " EC_KEY_OPTS " -keyout %s -out %s.csr -subj /CN=aclshmem-pe && "
              "openssl ca -batch -config ca.cnf -extensions pe_ext -notext -in %s.csr -out %s",
              g_dir, key, cert, cert, cert);
}

int make_certs(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ca.cnf", g_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "[ ca ]\ndefault_ca = test_ca\n"
            "[ test_ca ]\ndir = %s\ndatabase = $dir/index.txt\nnew_certs_dir = $dir/issued\n"
            "certificate = $dir/ca.pem\nprivate_key = $dir/ca.key\nserial = $dir/serial\n"
            "crlnumber = $dir/crlnumber\ndefault_md = sha256\ndefault_days = 3\ndefault_crl_days = 3\n"
            "policy = any_name\nunique_subject = no\n"
            "[ any_name ]\ncommonName = supplied\n"
            "[ pe_ext ]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n"
            "extendedKeyUsage = serverAuth,clientAuth\n",
            g_dir);
    fclose(f);
    if (sh("cd '%s' && mkdir -p issued cadir && : > index.txt && echo 1000 > serial && echo 1000 > crlnumber",
           g_dir) != 0)
        return -1;
    if (make_ca("ca", "aclshmem-test-ca") != 0 || make_ca("ca2", "aclshmem-other-ca") != 0)
        return -1;
    if (make_pe_cert("key.pem", "cert.pem") != 0 || make_pe_cert("key_r.pem", "cert_r.pem") != 0)
        return -1;
    /* An encrypted copy of the PE key, a hashed CA directory, CRLs before and after
     * revoking cert_r.pem. */
    if (sh("cd '%s' && openssl pkey -in key.pem -aes256 -passout pass:pe-key-pass -out key_enc.pem", g_dir) != 0)
        return -1;
    if (sh("cd '%s' && cp ca.pem cadir/ && openssl rehash cadir", g_dir) != 0)
        return -1;
    if (sh("cd '%s' && openssl ca -config ca.cnf -gencrl -out crl.pem && "
           "openssl ca -config ca.cnf -revoke cert_r.pem && "
           "openssl ca -config ca.cnf -gencrl -out crl_revoked.pem",
           g_dir) != 0)
        return -1;
    return 0;
}

/* tls_info with the given CA part, certificate and key (relative names live in g_dir). */
void cert_info(char *out, size_t len, const char *ca_part, const char *cert, const char *key,
                      const char *extra)
{
    snprintf(out, len, "%s; tlsCert: %s/%s; tlsPk: %s/%s%s%s", ca_part, g_dir, cert, g_dir, key,
             extra ? "; " : "", extra ? extra : "");
}

void good_ca(char *out, size_t len)
{
    snprintf(out, len, "tlsCaPath: %s; tlsCaFile: ca.pem", g_dir);
}
