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

/* Counts live instances: settings are frozen while any is alive. */
void shmemi_settings_instance_started(void);
void shmemi_settings_instance_stopped(void);

#endif
