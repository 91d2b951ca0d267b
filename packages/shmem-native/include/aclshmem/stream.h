/* aclshmem/stream.h - emulated streams, kernels and stream-ordered operations.
 *
 * On the cpu platform a stream is an ordered queue served by a worker thread, and a
 * kernel runs fn(block_idx, block_dim, arg) on block_dim threads.  Inside a kernel the
 * RMA, signal, wait, quiet and barrier calls work: they are this platform's device API.
 * NULL is the active instance's default stream.  *_on_stream calls only enqueue.
 */
#ifndef ACLSHMEM_STREAM_H
#define ACLSHMEM_STREAM_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLSHMEM_HOST_API int aclshmemx_stream_create(aclrtStream *stream);
/** Waits for everything enqueued so far; returns the first error that happened on it. */
ACLSHMEM_HOST_API int aclshmemx_stream_synchronize(aclrtStream stream);
ACLSHMEM_HOST_API int aclshmemx_stream_destroy(aclrtStream stream);

ACLSHMEM_HOST_API int aclshmemx_kernel_launch(aclrtStream stream, aclshmemx_kernel_fn fn,
                                              uint32_t block_dim, void *arg);
/** Inside a kernel: this block's index and the block count (0 and 1 outside one). */
ACLSHMEM_HOST_API uint32_t aclshmemx_block_idx(void);
ACLSHMEM_HOST_API uint32_t aclshmemx_block_num(void);

ACLSHMEM_HOST_API void aclshmemx_putmem_on_stream(void *dst, const void *src, size_t elem_size,
                                                  int32_t pe, aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_getmem_on_stream(void *dst, const void *src, size_t elem_size,
                                                  int32_t pe, aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_signal_op_on_stream(int32_t *sig_addr, int32_t signal, int sig_op,
                                                     int pe, aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_signal_wait_until_on_stream(int32_t *sig_addr, int cmp,
                                                             int32_t cmp_val, aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_quiet_on_stream(aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_barrier_on_stream(aclshmem_team_t team, aclrtStream stream);
ACLSHMEM_HOST_API void aclshmemx_barrier_all_on_stream(aclrtStream stream);
/** A completion point plus a rendezvous of the handle's team members. */
ACLSHMEM_HOST_API void aclshmemx_handle_wait(aclshmem_handle_t handle, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
