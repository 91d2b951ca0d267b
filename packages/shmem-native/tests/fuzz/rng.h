/* The fuzzers' random source: xorshift64*, seeded through splitmix64, so that a printed
 * seed replays a run exactly.  Header-only; each fuzzer is one program. */
#ifndef SHMEM_FUZZ_RNG_H
#define SHMEM_FUZZ_RNG_H

#include <stddef.h>
#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint64_t rnd64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint32_t rnd(uint32_t n)
{
    return n ? (uint32_t)(rnd64() % n) : 0;
}

static inline void rnd_fill(void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)rnd64();
}

#endif
