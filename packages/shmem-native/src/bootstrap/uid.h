/* The layout of aclshmemx_uniqueid_t.internal (124 bytes, host byte order except the port):
 *
 *   offset  0  uint32  magic SHMEMI_UID_MAGIC ("SHMU")
 *   offset  4  uint16  address family (AF_INET or AF_INET6)
 *   offset  6  uint16  port, network byte order
 *   offset  8  16 B    address (IPv4 in the first 4 bytes)
 *   offset 24  32 B    job secret: every control-plane connection proves it knows it
 *   offset 56  68 B    zero
 */
#ifndef SHMEMI_UID_H
#define SHMEMI_UID_H

#include <stdint.h>
#include <sys/socket.h>

#include "aclshmem/types.h"

#define SHMEMI_UID_MAGIC 0x554D4853u
#define SHMEMI_SECRET_LEN 32

typedef struct {
    uint32_t magic;
    uint16_t family;
    uint16_t port_be;
    uint8_t addr[16];
    uint8_t secret[SHMEMI_SECRET_LEN];
} shmemi_uid_inner_t;

_Static_assert(sizeof(shmemi_uid_inner_t) <= ACLSHMEM_UNIQUE_ID_INNER_LEN, "uid layout too large");
_Static_assert(sizeof(aclshmemx_uniqueid_t) == 136, "the unique ID is 136 bytes");

/* Checks version and magic; fills *inner. */
int shmemi_uid_decode(const aclshmemx_uniqueid_t *uid, shmemi_uid_inner_t *inner);
void shmemi_uid_encode(aclshmemx_uniqueid_t *uid, const shmemi_uid_inner_t *inner);
/* aclshmemx_get_uniqueid's work: binds PE 0's control-plane socket and draws a job secret. */
int shmemi_uid_create(aclshmemx_uniqueid_t *uid);

/* The listening socket reserved when this process made the UID, or -1. Ownership passes
 * to the caller. */
int shmemi_uid_take_reserved_socket(const shmemi_uid_inner_t *inner);

/* Builds an inner UID for DEFAULT mode from "tcp://host:port" / "tcp6://[host]:port".
 * Instances other than 0 give port 0 and take SHMEM_INSTANCE_PORT_RANGE=start:end's
 * start + instance_id.  An aclshmem error code (recorded) on failure. */
int shmemi_uid_from_url(const char *url, uint64_t instance_id, shmemi_uid_inner_t *inner);

/* DEFAULT mode runs only with a secret: SHMEM_JOB_SECRET set (non-empty), TLS certificates
 * configured, or TLS turned off by the user (then with a warning that the job is
 * unauthenticated).  ACLSHMEM_INVALID_PARAM (recorded) otherwise. */
int shmemi_uid_check_default_auth(const char *url);

/* sockaddr of the UID's address. */
socklen_t shmemi_uid_sockaddr(const shmemi_uid_inner_t *inner, struct sockaddr_storage *ss);

#endif
