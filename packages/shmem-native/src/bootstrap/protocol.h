/* Wire format of the control plane (private to bootstrap/). */
#ifndef SHMEMI_PROTOCOL_H
#define SHMEMI_PROTOCOL_H

#include <stdint.h>

#include "bootstrap/crypto.h"

#define SHMEMI_WIRE_MAGIC 0x53524853u /* "SHRS" */
#define SHMEMI_NONCE_LEN 32
/* How long PE 0 gives a new connection to finish TLS and prove the job secret. */
#define SHMEMI_HANDSHAKE_MS 5000

/* Server -> client, first. */
typedef struct {
    uint32_t magic;
    uint32_t reserved;
    uint8_t nonce[SHMEMI_NONCE_LEN];
} shmemi_wire_challenge_t;

/* Client -> server: proof of the secret over the server nonce, and who it is. */
typedef struct {
    uint8_t proof[SHMEMI_PROOF_LEN];
    uint8_t nonce[SHMEMI_NONCE_LEN];
    int32_t pe;
    int32_t n_pes;
} shmemi_wire_hello_t;

/* Server -> client, instead of a welcome, when the hello's proof was wrong: these 4 bytes
 * alone, then the server closes.  A client tells it from a welcome (40 bytes) by the close
 * that follows, and from a dropped connection by the bytes. */
#define SHMEMI_WIRE_REFUSED 0x58524853u /* "SHRX" */

/* Server -> client: proof of the secret over the client nonce, and a verdict. */
typedef struct {
    uint8_t proof[SHMEMI_PROOF_LEN];
    int32_t status; /* 0, or an aclshmem error code */
    int32_t reserved;
} shmemi_wire_welcome_t;

enum shmemi_msg_type {
    SHMEMI_MSG_COLL = 1,      /* client -> server: a member's contribution */
    SHMEMI_MSG_COLL_DONE = 2, /* server -> client: everyone's contributions */
    SHMEMI_MSG_EXIT = 3,      /* both ways: end the job with status arg */
    SHMEMI_MSG_PEER_DIED = 4, /* server -> client: PE arg lost its connection */
    SHMEMI_MSG_BYE = 5,       /* client -> server: leaving cleanly */
    SHMEMI_MSG_COLL_ERROR = 6 /* server -> client: the collective failed; arg says why */
};

/* COLL_ERROR's arg. */
enum shmemi_coll_error {
    SHMEMI_COLL_ERROR_INVALID = 1,   /* n, idx or len out of range */
    SHMEMI_COLL_ERROR_MISMATCH = 2,  /* members disagreed on n or len, or claimed one index twice */
    SHMEMI_COLL_ERROR_RESOURCES = 3  /* PE 0 holds too many unfinished collectives */
};

/* Every message: this header, then len payload bytes (only COLL and COLL_DONE have any).
 * PE 0 checks each field against the state it touches before use; see store_server.c. */
typedef struct {
    uint32_t type;
    uint32_t len; /* payload bytes that follow */
    uint64_t key;
    int32_t n;
    int32_t idx;
    int32_t arg;
    int32_t reserved;
} shmemi_msg_t;

#define SHMEMI_MAX_PAYLOAD (64u * 1024 * 1024)

#endif
