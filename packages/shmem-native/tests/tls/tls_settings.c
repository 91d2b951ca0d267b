/*
 * tls_settings.c - the default (TLS on, PSK from the unique ID's secret) and the settings API:
 * bad input to the setters, settings refused while an instance is initialised, the decrypt
 * handlers that the key cases use, and PEs that disagree on TLS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "tls_suite.h"

int decrypt_calls;

int reverse_decrypt(const char *cipher, size_t cipher_len, char *plain, size_t *plain_len)
{
    __atomic_fetch_add(&decrypt_calls, 1, __ATOMIC_RELAXED);
    if (!cipher || !plain || !plain_len || cipher_len > *plain_len)
        return -1;
    for (size_t i = 0; i < cipher_len; i++)
        plain[i] = cipher[cipher_len - 1 - i];
    *plain_len = cipher_len;
    return 0;
}

int failing_decrypt(const char *cipher, size_t cipher_len, char *plain, size_t *plain_len)
{
    (void)cipher, (void)cipher_len, (void)plain, (void)plain_len;
    __atomic_fetch_add(&decrypt_calls, 1, __ATOMIC_RELAXED);
    return -1;
}

void expect_settings_refused(void)
{
    static const char info[] = "tlsCaPath: /x; tlsCert: /x/c.pem; tlsPk: /x/k.pem";
    static const char key[] = "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n";
    harness_mark_error();
    EXPECT_EQ(set_tls(false, NULL), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS("initialized");
    EXPECT_EQ(set_tls(true, NULL), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_EQ(set_tls(true, info), ACLSHMEM_NOT_SUPPORTED);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_set_config_store_tls_key(key, (uint32_t)strlen(key), "pw", 2, reverse_decrypt),
              ACLSHMEM_NOT_SUPPORTED);
    EXPECT_ERROR_SET();
}

int t_default(int me, int n)
{
    /* Bad input to the setters, before init. */
    char big[5000];
    memset(big, 'a', sizeof big);
    big[sizeof big - 1] = '\0';
    harness_mark_error();
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 10), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, big, (uint32_t)strlen(big)), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmemx_set_config_store_tls_key(NULL, 0, NULL, 0, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmemx_set_config_store_tls_key("k", 0, NULL, 0, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmemx_set_config_store_tls_key("k", 1, NULL, 4, NULL), ACLSHMEM_INVALID_PARAM);

    /* The default: TLS on with nothing configured. */
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_job(&uid, 30, NULL), ACLSHMEM_SUCCESS);
    exercise(me, n);
    expect_settings_refused();
    exercise(me, n); /* the refused calls changed nothing */
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);

    /* After finalize they apply to the next init: off, then on with a key the reference
     * format knows but this platform does not use (packagePath). */
    EXPECT_EQ(set_tls(false, ""), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_job(&uid, 30, NULL), ACLSHMEM_SUCCESS);
    exercise(me, n);
    expect_settings_refused();
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_EQ(set_tls(true, "packagePath: /opt/none"), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_job(&uid, 30, NULL), ACLSHMEM_SUCCESS);
    exercise(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* PEs that disagree on TLS (one has it off) fail, in time, instead of hanging. */
int t_mixed_settings(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid;
    if (me == 1)
        ASSERT_EQ(set_tls(false, NULL), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS);
    double elapsed = 0;
    int rc = init_job(&uid, FAIL_TIMEOUT_S, &elapsed);
    harness_log("init returned %d after %.2f s: %s", rc, elapsed, aclshmemx_get_last_error());
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    EXPECT_LT(elapsed, FAIL_TIMEOUT_S + FAIL_MARGIN_S);
    return 0;
}
