/* aclshmem/log.h - logging and cycle profiling. */
#ifndef ACLSHMEM_LOG_H
#define ACLSHMEM_LOG_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels: 0 debug, 1 info, 2 warn, 3 error, 4 fatal.  SHMEM_LOG_LEVEL wins over this. */
ACLSHMEM_HOST_API int32_t aclshmemx_set_log_level(int level);
/** Routes log lines to func instead of the file / stdout; NULL restores the default. */
ACLSHMEM_HOST_API int32_t aclshmemx_set_extern_logger(void (*func)(int level, const char *msg));

/** Points *out_profs at this instance's profile (pe_id -1 unless SHMEM_CYCLE_PROF_PE names
 *  this PE); prints it when verbose. */
ACLSHMEM_HOST_API void aclshmemx_get_prof(aclshmem_prof_pe_t **out_profs, bool verbose);
/** Prints this instance's profile (aclshmemx_get_prof with verbose). */
ACLSHMEM_HOST_API void aclshmemx_show_prof(void);
/** Inside a kernel (or on the host, as block 0): starts timing user frame (0..999). */
ACLSHMEM_HOST_API void aclshmemx_prof_start(uint32_t frame);
/** Ends user frame: adds one count and the cycles since aclshmemx_prof_start. */
ACLSHMEM_HOST_API void aclshmemx_prof_end(uint32_t frame);

#ifdef __cplusplus
}
#endif
#endif
