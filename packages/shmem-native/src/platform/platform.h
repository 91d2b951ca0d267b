/* The platform layer: device memory, streams and kernel launch.  Everything specific to a
 * kind of device stays behind this interface; the cpu platform (platform/cpu/) emulates a
 * device with threads: a stream is an ordered queue served by a worker thread and a kernel
 * runs one thread per block.
 *
 * It sits above the engine (src/README.md): kernels and stream operations call rma, sync and
 * amo, never the other way.  Code below that needs to know which block it runs on asks
 * core/thread.h, which the platform keeps up to date. */
#ifndef SHMEMI_PLATFORM_H
#define SHMEMI_PLATFORM_H

#include "aclshmem/types.h"
#include "core/instance.h"

struct shmemi_team;

/* Creates inst->default_stream. */
int shmemi_platform_instance_init(shmemi_instance_t *inst);
/* Drains and destroys the instance's streams (the default one and the user's); idempotent.
 * Bounded: work still running after timeout_ms has its waits ended with an error (the
 * instance's abandon_waits); a kernel that still does not return is abandoned, and
 * *abandoned is set: it may still use the instance, which must then never be freed.
 * ACLSHMEM_SUCCESS, or ACLSHMEM_TIMEOUT_ERROR naming the first stream that was late. */
int shmemi_platform_instance_fini(shmemi_instance_t *inst, int64_t timeout_ms, int *abandoned);

/* The platform's name, "cpu" here. */
const char *shmemi_platform_name(void);

/* Enqueues fn as a kernel of block_dim blocks on stream (NULL: the active instance's default
 * stream) and returns at once.  arg_size > 0: the blocks get a private copy of arg_size
 * bytes at arg (the library's own stream operations pass their arguments this way); 0: arg
 * as given.  Checks the stream, fn and block_dim first; errors name api. */
int shmemi_platform_launch(const char *api, aclrtStream stream, aclshmemx_kernel_fn fn, uint32_t block_dim,
                           const void *arg, size_t arg_size);

/* The instance stream acts on (NULL: the active instance, whose default stream it is);
 * NULL with a last error naming api for a bad handle or an uninitialised instance.
 * Stream operations check their arguments against this instance, not the active one. */
shmemi_instance_t *shmemi_platform_stream_instance(const char *api, aclrtStream stream);

/* Nonzero when the calling thread runs a kernel block (device-side API semantics). */
int shmemi_platform_in_kernel(void);

/* Orders a host call with the device work before it: on the host, completes the work
 * enqueued on the default stream so far (as the host barrier does); inside a kernel,
 * nothing.  The host collectives call it first. */
void shmemi_platform_order_host(shmemi_instance_t *inst);

/* aclshmem_barrier / aclshmem_sync over team t.  On the host: completes the work enqueued on
 * the default stream so far (as the original, which orders its barrier kernel there), then
 * the PE barrier.  Inside a kernel: the kernel's live blocks meet, one of them does the PE
 * barrier, then all of them go on. */
int shmemi_platform_barrier(shmemi_instance_t *inst, struct shmemi_team *t);

#endif
