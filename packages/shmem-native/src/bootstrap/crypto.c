#include "bootstrap/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>

int shmemi_random_bytes(void *out, size_t len)
{
    if (RAND_bytes(out, (int)len) == 1)
        return 0;
    return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}

/* HMAC through EVP_DigestSign: streaming, so any input length works, and available from
 * OpenSSL 1.1.1 on without the deprecated HMAC_CTX calls. */
static int hmac_sha256(const uint8_t key[32], const char *label, const void *data, size_t len,
                       uint8_t out[SHMEMI_PROOF_LEN])
{
    EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, NULL, key, 32);
    EVP_MD_CTX *ctx = pkey ? EVP_MD_CTX_new() : NULL;
    size_t out_len = SHMEMI_PROOF_LEN;
    int ok = ctx && EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, pkey) == 1 &&
             EVP_DigestSignUpdate(ctx, label, strlen(label)) == 1 &&
             (len == 0 || EVP_DigestSignUpdate(ctx, data, len) == 1) &&
             EVP_DigestSignFinal(ctx, out, &out_len) == 1 && out_len == SHMEMI_PROOF_LEN;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    return ok ? 0 : -1;
}

int shmemi_proof(const uint8_t key[32], const char *label, const void *data, size_t len,
                 uint8_t out[SHMEMI_PROOF_LEN])
{
    if (hmac_sha256(key, label, data, len, out) == 0)
        return 0;
    /* Never a predictable MAC: fresh random bytes match nothing the peer computes, so a
     * caller that ignores the result still fails the handshake instead of trusting it. */
    if (shmemi_random_bytes(out, SHMEMI_PROOF_LEN) != 0)
        memset(out, 0xA5, SHMEMI_PROOF_LEN);
    return -1;
}

int shmemi_proof_equal(const uint8_t *a, const uint8_t *b)
{
    return CRYPTO_memcmp(a, b, SHMEMI_PROOF_LEN) == 0;
}

int shmemi_sha256(const void *data, size_t len, uint8_t out[32])
{
    unsigned int out_len = 32;
    return EVP_Digest(data, len, out, &out_len, EVP_sha256(), NULL) == 1 && out_len == 32 ? 0 : -1;
}

/* Each piece goes in as its 8-byte length then its bytes, so that no two different lists
 * of pieces hash the same input ("a:b" + "c" vs "a" + "b:c"). */
int shmemi_sha256_strings(uint8_t out[32], ...)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    va_list ap;
    va_start(ap, out);
    for (const char *piece = va_arg(ap, const char *); ok && piece; piece = va_arg(ap, const char *)) {
        uint64_t len = strlen(piece);
        ok = EVP_DigestUpdate(ctx, &len, sizeof(len)) == 1 && EVP_DigestUpdate(ctx, piece, len) == 1;
    }
    va_end(ap);
    unsigned int out_len = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, out, &out_len) == 1 && out_len == 32;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}
