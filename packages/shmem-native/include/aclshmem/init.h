/* aclshmem/init.h - initialisation, finalisation, unique IDs, TLS, instances. */
#ifndef ACLSHMEM_INIT_H
#define ACLSHMEM_INIT_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Returns an aclshmemx_init_status_t for the active instance. */
ACLSHMEM_HOST_API int aclshmemx_init_status(void);

/** Makes a unique ID: PE 0's control-plane address and a random job secret.
 *  Call it once (normally on PE 0) and hand the 136 bytes to every PE. */
ACLSHMEM_HOST_API int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid);

/** Fills attr for ACLSHMEMX_INIT_WITH_UNIQUEID: PE, PE count, heap size, default options. */
ACLSHMEM_HOST_API int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size,
                                                      aclshmemx_uniqueid_t *uid,
                                                      aclshmemx_init_attr_t *attr);

/** Sets the queue-pair count of an engine; only before init, same on every PE. */
ACLSHMEM_HOST_API int aclshmemx_set_qp_num(data_op_engine_type_t engine, uint32_t qp_num);

/** Collective: joins the job described by attr and builds the symmetric heaps. */
ACLSHMEM_HOST_API int aclshmemx_init_attr(aclshmemx_bootstrap_t bootstrap_flags,
                                          aclshmemx_init_attr_t *attributes);

/** Collective: finalises the active instance. */
ACLSHMEM_HOST_API int aclshmem_finalize(void);

/** Collective: finalises instance_id (switching to it first if needed). */
ACLSHMEM_HOST_API int aclshmemx_finalize(uint64_t instance_id);

/** The C API version: 1.1. */
ACLSHMEM_HOST_API void aclshmem_info_get_version(int *major, int *minor);

/** Writes "ACLSHMEM vX.Y.Z" (at most ACLSHMEM_MAX_NAME_LEN bytes with the NUL). */
ACLSHMEM_HOST_API void aclshmem_info_get_name(char *name);

/** Describes the library in desc: its version and file, the transports the active instance
 *  uses (before init: those a job would use) and the UCX plug-in: its path, version and
 *  ABI, and why it is not loaded (not found, the loader's error, another build, disabled
 *  by SHMEM_UCX_PLUGIN=none).  Set desc->size first (see aclshmemx_description_t).  flags:
 *  0, or ACLSHMEMX_DESCRIBE_NO_LOAD to leave a plug-in that no job has needed yet unloaded
 *  (status ACLSHMEMX_PLUGIN_NOT_LOADED_YET); otherwise the plug-in is loaded once, as a
 *  multi-node job would.  Returns ACLSHMEM_SUCCESS, or ACLSHMEM_INVALID_PARAM for a NULL
 *  desc, a size below the first version's or an unknown flag.  Callable at any time. */
ACLSHMEM_HOST_API int aclshmemx_describe(aclshmemx_description_t *desc, uint32_t flags);

/** Ends every PE of the job with status. */
ACLSHMEM_HOST_API void aclshmem_global_exit(int status);

/** TLS of the control plane (on by default); takes effect at the next init and is refused
 *  while an instance is initialised.  tls_info: "tlsCaPath: ...; tlsCaFile: a,b; tlsCert: ...;
 *  tlsPk: ...; tlsPkPwd: ...; tlsCrlPath: ...; tlsCrlFile: ..." (empty: a key derived from
 *  the unique ID's secret). */
ACLSHMEM_HOST_API int32_t aclshmemx_set_conf_store_tls(bool enable, const char *tls_info,
                                                      const uint32_t tls_info_len);
/** The TLS private key as PEM content, its (encrypted) password and the handler that
 *  decrypts the password; takes effect at the next init. */
ACLSHMEM_HOST_API int32_t aclshmemx_set_config_store_tls_key(const char *tls_pk, const uint32_t tls_pk_len,
                                                            const char *tls_pk_pw,
                                                            const uint32_t tls_pk_pw_len,
                                                            const aclshmem_decrypt_handler decrypt_handler);

/** The active instance (NULL when none is initialised).  The active instance is per
 *  process; kernels and stream workers act on their stream's instance. */
ACLSHMEM_HOST_API aclshmem_instance_ctx *aclshmemx_instance_ctx_get(void);
/** Makes the initialised instance instance_id the active one. */
ACLSHMEM_HOST_API int aclshmemx_instance_ctx_set(uint64_t instance_id);

/** The message of the last failing call in this thread ("" if none).  A successful call
 *  leaves it alone, so clear it first to learn whether one void call failed.  The pointer
 *  is the calling thread's own buffer, the same for the thread's whole life: a binding may
 *  keep it, read its first byte (0: no message) instead of calling again, and store 0
 *  there to clear it, as aclshmemx_clear_last_error does. */
ACLSHMEM_HOST_API const char *aclshmemx_get_last_error(void);
/** Forgets this thread's last error. */
ACLSHMEM_HOST_API void aclshmemx_clear_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
