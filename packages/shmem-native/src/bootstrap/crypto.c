#include "bootstrap/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string.h>
#include <sys/random.h>

int shmemi_random_bytes(void *out, size_t len)
{
    if (RAND_bytes(out, (int)len) == 1)
        return 0;
    return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}

void shmemi_proof(const uint8_t key[32], const char *label, const void *data, size_t len,
                  uint8_t out[SHMEMI_PROOF_LEN])
{
    uint8_t buf[256];
    size_t label_len = strlen(label);
    unsigned int out_len = SHMEMI_PROOF_LEN;
    if (label_len + len <= sizeof(buf)) {
        memcpy(buf, label, label_len);
        memcpy(buf + label_len, data, len);
        HMAC(EVP_sha256(), key, 32, buf, label_len + len, out, &out_len);
    } else {
        memset(out, 0, SHMEMI_PROOF_LEN);
    }
}

int shmemi_proof_equal(const uint8_t *a, const uint8_t *b)
{
    return CRYPTO_memcmp(a, b, SHMEMI_PROOF_LEN) == 0;
}

void shmemi_sha256(const void *data, size_t len, uint8_t out[32])
{
    unsigned int out_len = 32;
    EVP_Digest(data, len, out, &out_len, EVP_sha256(), NULL);
}
