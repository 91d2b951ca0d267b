/* The RMA core every public family goes through: validate, then the peer's transport. */
#ifndef SHMEMI_RMA_H
#define SHMEMI_RMA_H

#include <stddef.h>
#include <stdint.h>

#include "core/instance.h"
#include "transport/transport.h"

/* Finds the symmetric range [sym, sym + len) in this PE's heaps and checks pe; on failure
 * records an error naming api. */
int shmemi_rma_resolve(shmemi_instance_t *inst, const void *sym, size_t len, int pe, const char *api,
                       int *seg, size_t *offset);

/* Contiguous transfers of nelems elements of elem_size bytes ("put": dst symmetric), on
 * channel ch (NULL: the default one; see shmemi_channel_t). */
int shmemi_rma_put(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                   size_t elem_size, int pe);
int shmemi_rma_get(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                   size_t elem_size, int pe);

/* get_nbi: checks as shmemi_rma_get, then starts the get; dst holds the data after the next
 * quiet of channel ch (shm: at once). */
int shmemi_rma_get_nbi(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                       size_t elem_size, int pe);

/* The transfers of shmemi_rma_put / _get once their symmetric side is resolved (seg and
 * offset from shmemi_rma_resolve, bytes > 0): for a caller that checked its arguments
 * earlier, as the on-stream calls do when they are enqueued. */
int shmemi_rma_put_resolved(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                            const void *src, size_t bytes);
int shmemi_rma_get_resolved(shmemi_instance_t *inst, shmemi_channel_t *ch, int pe, int seg, size_t offset,
                            void *dst, size_t bytes);

/* Strided transfers: element i goes from src + i*sst to dst + i*dst_stride (in elements). */
int shmemi_rma_iput(const char *api, shmemi_channel_t *ch, void *dst, const void *src, ptrdiff_t dst_stride,
                    ptrdiff_t src_stride,
                    size_t nelems, size_t elem_size, int pe);
int shmemi_rma_iget(const char *api, shmemi_channel_t *ch, void *dst, const void *src, ptrdiff_t dst_stride,
                    ptrdiff_t src_stride,
                    size_t nelems, size_t elem_size, int pe);

/* A load/store address of the symmetric ptr's twin on pe, or NULL: with an error naming api
 * for a bad PE or an address outside the heaps, without one for a PE of another node. */
void *shmemi_rma_ptr(const char *api, const void *ptr, int pe);

/* Completes this PE's outstanding RMA and AMOs of channel ch on every transport. */
int shmemi_quiet(shmemi_instance_t *inst, shmemi_channel_t *ch);
/* Orders this PE's RMA and AMOs of channel ch per target PE on every transport (cheaper
 * than a quiet across nodes: no round trip). */
int shmemi_fence(shmemi_instance_t *inst, shmemi_channel_t *ch);

#endif
