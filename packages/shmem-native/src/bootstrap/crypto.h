/* Small wrappers over OpenSSL's libcrypto: random bytes and HMAC-SHA256 proofs. */
#ifndef SHMEMI_CRYPTO_H
#define SHMEMI_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define SHMEMI_PROOF_LEN 32

int shmemi_random_bytes(void *out, size_t len);
/* out = HMAC-SHA256(key, label || data). */
void shmemi_proof(const uint8_t key[32], const char *label, const void *data, size_t len,
                  uint8_t out[SHMEMI_PROOF_LEN]);
/* Constant-time comparison. */
int shmemi_proof_equal(const uint8_t *a, const uint8_t *b);
void shmemi_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
