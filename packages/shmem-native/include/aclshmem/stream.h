/* aclshmem/stream.h - emulated streams, kernels and stream-ordered operations.
 *
 * On the cpu platform a stream is an ordered queue served by a worker thread, and a
 * kernel runs fn(block_idx, block_dim, arg) on block_dim threads (1..ACLSHMEMX_MAX_BLOCK_DIM).
 * Inside a kernel the RMA, signal, wait, quiet and barrier calls work: they are this
 * platform's device API, acting on the instance the stream belongs to.
 *
 * Handles: NULL is the active instance's default stream.  A handle that was never created
 * or was destroyed is rejected (ACLSHMEM_INVALID_PARAM and a last error), never used.  A
 * stream belongs to the instance active when it was made; finalizing that instance drains
 * and destroys it.  destroy waits for the stream's work; the default stream cannot be
 * destroyed.  A kernel may not synchronize or destroy its own stream (it would wait for
 * itself).
 *
 * Errors: the first failure of a library call inside a kernel on a stream (an on-stream
 * operation is such a kernel) is the stream's error.  synchronize waits for everything
 * enqueued so far, returns that error (with a last error saying which kernel, block and
 * call failed) and clears it, so the stream stays usable.
 *
 * Barriers inside a kernel: when the blocks of one kernel call aclshmem_barrier /
 * barrier_all / sync / sync_all, they meet; one of them does the PE barrier of the team (it
 * completes this PE's RMA first), then all of them go on.  So a kernel of any block_dim
 * takes part in a team barrier exactly once per call of its blocks.  Blocks that have
 * returned no longer count, and all waiting blocks must name the same team.  On the host,
 * aclshmem_barrier and aclshmem_sync first complete the work enqueued on the default stream.
 *
 * *_on_stream calls check their arguments at once (bad input fails there, with a last error,
 * and nothing is enqueued), then only enqueue; buffers they name must stay valid until the
 * operation has run.  aclshmemx_signal_wait_until_on_stream blocks its stream (not the
 * caller) until the local signal word meets the condition.
 */
#ifndef ACLSHMEM_STREAM_H
#define ACLSHMEM_STREAM_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most blocks a kernel may have. */
#define ACLSHMEMX_MAX_BLOCK_DIM 1024

/** Creates a stream (an ordered queue with its own worker thread) of the active instance. */
ACLSHMEM_HOST_API int aclshmemx_stream_create(aclrtStream *stream);
/** Waits for everything enqueued so far; returns the first error that happened on it. */
ACLSHMEM_HOST_API int aclshmemx_stream_synchronize(aclrtStream stream);
/** Waits for the stream's work, then destroys it (not the default stream). */
ACLSHMEM_HOST_API int aclshmemx_stream_destroy(aclrtStream stream);

/** Enqueues fn(block_idx, block_dim, arg) on block_dim threads (1..ACLSHMEMX_MAX_BLOCK_DIM),
 *  after the stream's earlier work; returns at once. */
ACLSHMEM_HOST_API int aclshmemx_kernel_launch(aclrtStream stream, aclshmemx_kernel_fn fn,
                                              uint32_t block_dim, void *arg);
/** Inside a kernel: this block's index (0 outside one). */
ACLSHMEM_HOST_API uint32_t aclshmemx_block_idx(void);
/** Inside a kernel: the number of blocks (1 outside one). */
ACLSHMEM_HOST_API uint32_t aclshmemx_block_num(void);

/** Enqueues aclshmem_putmem(dst, src, elem_size, pe). */
ACLSHMEM_HOST_API void aclshmemx_putmem_on_stream(void *dst, const void *src, size_t elem_size,
                                                  int32_t pe, aclrtStream stream);
/** Enqueues aclshmem_getmem(dst, src, elem_size, pe). */
ACLSHMEM_HOST_API void aclshmemx_getmem_on_stream(void *dst, const void *src, size_t elem_size,
                                                  int32_t pe, aclrtStream stream);
/** Enqueues an update (ACLSHMEM_SIGNAL_SET or _ADD) of pe's signal word sig_addr. */
ACLSHMEM_HOST_API void aclshmemx_signal_op_on_stream(int32_t *sig_addr, int32_t signal, int sig_op,
                                                     int pe, aclrtStream stream);
/** Enqueues a wait until the local *sig_addr cmp cmp_val holds. */
ACLSHMEM_HOST_API void aclshmemx_signal_wait_until_on_stream(int32_t *sig_addr, int cmp,
                                                             int32_t cmp_val, aclrtStream stream);
/** Enqueues a completion point for this PE's RMA and signals. */
ACLSHMEM_HOST_API void aclshmemx_quiet_on_stream(aclrtStream stream);
/** Enqueues a barrier of team. */
ACLSHMEM_HOST_API void aclshmemx_barrier_on_stream(aclshmem_team_t team, aclrtStream stream);
/** Enqueues a barrier of the world team. */
ACLSHMEM_HOST_API void aclshmemx_barrier_all_on_stream(aclrtStream stream);
/** A completion point plus a rendezvous of the handle's team members. */
ACLSHMEM_HOST_API void aclshmemx_handle_wait(aclshmem_handle_t handle, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
