/* The entry points of aclshmem/init.h: each checks its arguments, then makes one call into
 * the unit that does the work: init/ (an instance's life, the active instance, the job's
 * exit, the library's description), bootstrap/ (unique IDs) or base/ (settings, the last
 * error). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "aclshmem/init.h"
#include "base/error.h"
#include "base/settings.h"
#include "bootstrap/uid.h"
#include "init/init.h"

int aclshmemx_init_status(void)
{
    return shmemi_init_status();
}

int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid)
{
    if (!uid)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_get_uniqueid: uid is NULL");
    return shmemi_uid_create(uid);
}

int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size, aclshmemx_uniqueid_t *uid,
                                     aclshmemx_init_attr_t *attr)
{
    if (!uid || !attr)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_set_attr_uniqueid_args: uid or attr is NULL");
    if (local_mem_size < 0 || (uint64_t)local_mem_size > ACLSHMEM_MAX_LOCAL_SIZE || n_pes > ACLSHMEM_MAX_PES ||
        my_pe >= ACLSHMEM_MAX_PES)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "aclshmemx_set_attr_uniqueid_args: my_pe %d, n_pes %d or local_mem_size %lld "
                           "is beyond the limits", my_pe, n_pes, (long long)local_mem_size);
    shmemi_attr_for_uniqueid(my_pe, n_pes, (uint64_t)local_mem_size, uid, attr);
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_set_qp_num(data_op_engine_type_t engine, uint32_t qp_num)
{
    if (qp_num < 1 || qp_num > ACLSHMEM_MAX_QP_NUM)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "aclshmemx_set_qp_num: qp_num %u is not in 1..%d", qp_num,
                           ACLSHMEM_MAX_QP_NUM);
    if (engine != ACLSHMEM_DATA_OP_ROCE && engine != ACLSHMEM_DATA_OP_UDMA)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "aclshmemx_set_qp_num: engine 0x%x has no queue pairs",
                           (unsigned)engine);
    return shmemi_settings_set_qp_num(engine);
}

int aclshmemx_init_attr(aclshmemx_bootstrap_t bootstrap_flags, aclshmemx_init_attr_t *attributes)
{
    if (!attributes)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "init: attributes is NULL");
    return shmemi_init_with_options(bootstrap_flags, attributes, NULL);
}

int aclshmem_finalize(void)
{
    return shmemi_finalize_active();
}

int aclshmemx_finalize(uint64_t instance_id)
{
    SHMEMI_TRY(shmemi_check_instance_id(instance_id, "aclshmemx_finalize"));
    return shmemi_finalize_id(instance_id);
}

void aclshmem_info_get_version(int *major, int *minor)
{
    if (!major || !minor) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_info_get_version: major or minor is NULL");
        return;
    }
    *major = ACLSHMEM_MAJOR_VERSION;
    *minor = ACLSHMEM_MINOR_VERSION;
}

void aclshmem_info_get_name(char *name)
{
    if (!name) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_info_get_name: name is NULL");
        return;
    }
    snprintf(name, ACLSHMEM_MAX_NAME_LEN, "ACLSHMEM v%d.%d.%d", ACLSHMEM_VENDOR_MAJOR_VER,
             ACLSHMEM_VENDOR_MINOR_VER, ACLSHMEM_VENDOR_PATCH_VER);
}

/* The first version's size: a caller's structure is never smaller (later versions append). */
#define DESCRIPTION_V1_SIZE (offsetof(aclshmemx_description_t, ucx) + sizeof(aclshmemx_plugin_info_t))
#define DESCRIBE_FLAGS ((uint32_t)ACLSHMEMX_DESCRIBE_NO_LOAD)

int aclshmemx_describe(aclshmemx_description_t *desc, uint32_t flags)
{
    if (!desc)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_describe: desc is NULL");
    if (desc->size < DESCRIPTION_V1_SIZE)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "aclshmemx_describe: desc->size is %zu, below the %zu bytes of the first version: "
                           "set it to sizeof(aclshmemx_description_t) first",
                           desc->size, (size_t)DESCRIPTION_V1_SIZE);
    if (flags & ~DESCRIBE_FLAGS)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_describe: unknown flags 0x%x (known: 0x%x)",
                           (unsigned)(flags & ~DESCRIBE_FLAGS), (unsigned)DESCRIBE_FLAGS);
    aclshmemx_description_t d;
    shmemi_describe(&d, !(flags & ACLSHMEMX_DESCRIBE_NO_LOAD));
    /* A caller built against a newer header keeps its later fields: we know only ours. */
    size_t filled = desc->size < sizeof(d) ? desc->size : sizeof(d);
    memcpy(desc, &d, filled);
    desc->size = filled;
    return ACLSHMEM_SUCCESS;
}

void aclshmem_global_exit(int status)
{
    shmemi_global_exit(status);
}

int32_t aclshmemx_set_conf_store_tls(bool enable, const char *tls_info, const uint32_t tls_info_len)
{
    if (enable && tls_info_len > 0 && !tls_info)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_set_conf_store_tls: tls_info is NULL");
    size_t room = sizeof(((shmemi_tls_settings_t *)0)->tls_info);
    if (tls_info_len >= room)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_set_conf_store_tls: tls_info is longer than %zu bytes",
                           room - 1);
    return shmemi_settings_set_tls(enable, tls_info, tls_info_len);
}

int32_t aclshmemx_set_config_store_tls_key(const char *tls_pk, const uint32_t tls_pk_len, const char *tls_pk_pw,
                                           const uint32_t tls_pk_pw_len,
                                           const aclshmem_decrypt_handler decrypt_handler)
{
    if (!tls_pk || tls_pk_len == 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_set_config_store_tls_key: the private key is empty");
    if (tls_pk_pw_len > 0 && !tls_pk_pw)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmemx_set_config_store_tls_key: tls_pk_pw is NULL");
    return shmemi_settings_set_tls_key(tls_pk, tls_pk_len, tls_pk_pw, tls_pk_pw_len, decrypt_handler);
}

aclshmem_instance_ctx *aclshmemx_instance_ctx_get(void)
{
    return shmemi_active_ctx();
}

int aclshmemx_instance_ctx_set(uint64_t instance_id)
{
    SHMEMI_TRY(shmemi_check_instance_id(instance_id, "aclshmemx_instance_ctx_set"));
    return shmemi_activate_id(instance_id);
}

const char *aclshmemx_get_last_error(void)
{
    return shmemi_last_error();
}

void aclshmemx_clear_last_error(void)
{
    shmemi_clear_error();
}
