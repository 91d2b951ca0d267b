#include "base/settings.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/init.h"
#include "base/error.h"

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static shmemi_tls_settings_t tls = {.tls_enabled = true}; /* TLS is on by default */
static int live_instances;

void shmemi_settings_tls(shmemi_tls_settings_t *out)
{
    pthread_mutex_lock(&settings_lock);
    *out = tls;
    pthread_mutex_unlock(&settings_lock);
}

void shmemi_settings_instance_started(void)
{
    pthread_mutex_lock(&settings_lock);
    live_instances++;
    pthread_mutex_unlock(&settings_lock);
}

void shmemi_settings_instance_stopped(void)
{
    pthread_mutex_lock(&settings_lock);
    if (live_instances > 0)
        live_instances--;
    pthread_mutex_unlock(&settings_lock);
}

static int refuse_while_live(const char *api)
{
    return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                       "%s: settings cannot change while an instance is initialized; they apply at the "
                       "next init", api);
}

int shmemi_settings_set_tls(bool enable, const char *tls_info, uint32_t tls_info_len)
{
    pthread_mutex_lock(&settings_lock);
    int rc = ACLSHMEM_SUCCESS;
    if (live_instances > 0) {
        rc = refuse_while_live("aclshmemx_set_conf_store_tls");
    } else {
        tls.tls_enabled = enable;
        memset(tls.tls_info, 0, sizeof(tls.tls_info));
        if (tls_info && tls_info_len)
            memcpy(tls.tls_info, tls_info, tls_info_len);
    }
    pthread_mutex_unlock(&settings_lock);
    return rc;
}

static char *copy_bytes(const char *src, size_t len)
{
    char *dst = malloc(len + 1);
    if (dst) {
        memcpy(dst, src, len);
        dst[len] = '\0';
    }
    return dst;
}

int shmemi_settings_set_tls_key(const char *tls_pk, uint32_t tls_pk_len, const char *tls_pk_pw,
                                 uint32_t tls_pk_pw_len, aclshmem_decrypt_handler decrypt_handler)
{
    char *pk = copy_bytes(tls_pk, tls_pk_len);
    char *pw = tls_pk_pw_len ? copy_bytes(tls_pk_pw, tls_pk_pw_len) : NULL;
    if (!pk || (tls_pk_pw_len && !pw)) {
        free(pk);
        free(pw);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    pthread_mutex_lock(&settings_lock);
    int rc = ACLSHMEM_SUCCESS;
    if (live_instances > 0) {
        rc = refuse_while_live("aclshmemx_set_config_store_tls_key");
        free(pk);
        free(pw);
    } else {
        free(tls.tls_pk);
        free(tls.tls_pk_pw);
        tls.tls_pk = pk;
        tls.tls_pk_len = tls_pk_len;
        tls.tls_pk_pw = pw;
        tls.tls_pk_pw_len = tls_pk_pw_len;
        tls.decrypt = decrypt_handler;
    }
    pthread_mutex_unlock(&settings_lock);
    return rc;
}

int shmemi_settings_set_qp_num(data_op_engine_type_t engine)
{
    pthread_mutex_lock(&settings_lock);
    int live = live_instances;
    pthread_mutex_unlock(&settings_lock);
    if (live)
        return refuse_while_live("aclshmemx_set_qp_num");
    return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                       "aclshmemx_set_qp_num: the cpu platform has no %s engine (only MTE, over shared memory)",
                       engine == ACLSHMEM_DATA_OP_ROCE ? "ROCE" : "UDMA");
}
