/* aclshmem/sync.h - barriers.  barrier and sync also complete this PE's outstanding
 * host-issued RMA and signals before the rendezvous. */
#ifndef ACLSHMEM_SYNC_H
#define ACLSHMEM_SYNC_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over team: returns when every member has arrived. */
ACLSHMEM_HOST_API void aclshmem_barrier(aclshmem_team_t team);
/** aclshmem_barrier over the world team. */
ACLSHMEM_HOST_API void aclshmem_barrier_all(void);
/** Collective over team, like aclshmem_barrier (prior host stores are complete and visible). */
ACLSHMEM_HOST_API void aclshmem_sync(aclshmem_team_t team);
/** aclshmem_sync over the world team. */
ACLSHMEM_HOST_API void aclshmem_sync_all(void);
/** The vector-core barrier of the original's device API.  On the cpu platform every kernel
 *  block is a vector core, so it is aclshmem_barrier (kernel-aware: inside a kernel, every
 *  block of the calling kernel takes part). */
ACLSHMEM_HOST_API void aclshmemx_barrier_vec(aclshmem_team_t team);
/** aclshmemx_barrier_vec over the world team. */
ACLSHMEM_HOST_API void aclshmemx_barrier_all_vec(void);

#ifdef __cplusplus
}
#endif
#endif
