/* Process-wide settings that apply at the next init: control-plane TLS and queue pairs. */
#ifndef SHMEMI_SETTINGS_H
#define SHMEMI_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclshmem/types.h"

typedef struct {
    bool tls_enabled;
    char tls_info[4096];
    char *tls_pk;
    size_t tls_pk_len;
    char *tls_pk_pw;
    size_t tls_pk_pw_len;
    aclshmem_decrypt_handler decrypt;
} shmemi_tls_settings_t;

/* A copy of the TLS settings (the key buffers are shared; do not free them). */
void shmemi_settings_tls(shmemi_tls_settings_t *out);

/* The stores behind aclshmemx_set_conf_store_tls, _set_config_store_tls_key and
 * _set_qp_num, whose arguments the caller checked (tls_info_len < sizeof(tls_info), a
 * non-empty key, an engine with queue pairs): each refuses while an instance is live. */
int shmemi_settings_set_tls(bool enable, const char *tls_info, uint32_t tls_info_len);
int shmemi_settings_set_tls_key(const char *tls_pk, uint32_t tls_pk_len, const char *tls_pk_pw,
                                uint32_t tls_pk_pw_len, aclshmem_decrypt_handler decrypt_handler);
int shmemi_settings_set_qp_num(data_op_engine_type_t engine);

/* Counts live instances: settings are frozen while any is alive. */
void shmemi_settings_instance_started(void);
void shmemi_settings_instance_stopped(void);

#endif
