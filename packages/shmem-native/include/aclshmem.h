/*
 * aclshmem.h - the whole public API of libaclshmem.
 *
 * A symmetric-memory communication library (OpenSHMEM family) with the API of
 * Ascend SHMEM, running on any Linux machine: every process is a PE, every PE owns
 * symmetric heaps, and any PE can read, write and signal any other PE's heaps.
 */
#ifndef ACLSHMEM_H
#define ACLSHMEM_H

#include "aclshmem/types.h"
#include "aclshmem/init.h"
#include "aclshmem/mem.h"
#include "aclshmem/team.h"
#include "aclshmem/rma.h"
#include "aclshmem/amo.h"
#include "aclshmem/signal.h"
#include "aclshmem/p2p_sync.h"
#include "aclshmem/sync.h"
#include "aclshmem/coll.h"
#include "aclshmem/stream.h"
#include "aclshmem/log.h"

#endif /* ACLSHMEM_H */
