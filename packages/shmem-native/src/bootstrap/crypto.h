/* Small wrappers over OpenSSL's libcrypto: random bytes, HMAC-SHA256 proofs, SHA-256.
 * Every hash is computed with streaming calls, so inputs of any length are hashed whole. */
#ifndef SHMEMI_CRYPTO_H
#define SHMEMI_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define SHMEMI_PROOF_LEN 32

int shmemi_random_bytes(void *out, size_t len);
/* out = HMAC-SHA256(key, label || data) for any len.  0, or -1 when OpenSSL failed: then
 * out holds random bytes (never a constant), so a proof made from it is simply wrong. */
int shmemi_proof(const uint8_t key[32], const char *label, const void *data, size_t len,
                 uint8_t out[SHMEMI_PROOF_LEN]);
/* Constant-time comparison. */
int shmemi_proof_equal(const uint8_t *a, const uint8_t *b);
/* 0, or -1 when OpenSSL failed. */
int shmemi_sha256(const void *data, size_t len, uint8_t out[32]);
/* SHA-256 of a NULL-terminated list of strings, each length-prefixed; 0 or -1. */
int shmemi_sha256_strings(uint8_t out[32], ...) __attribute__((sentinel));

#endif
