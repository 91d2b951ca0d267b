/* What the fuzzers share: their random source (xorshift64*, seeded through splitmix64, so
 * that a printed seed replays a run exactly) and their failure report, which names that
 * seed.  Header-only; each fuzzer is one program and defines FUZZ_NAME before including it. */
#ifndef SHMEM_FUZZ_H
#define SHMEM_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#ifndef FUZZ_NAME
#error "define FUZZ_NAME (the program's name) before including fuzz.h"
#endif

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

/* The seed of the iteration running now: what a failure report tells to replay. */
static uint64_t iteration_seed;

static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));

/* Reports a broken rule with the arguments that replay the iteration alone, and ends the
 * program at once (_exit: a wedged server thread must not keep it alive). */
static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, FUZZ_NAME ": FAILED: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n" FUZZ_NAME ": reproduce with: " FUZZ_NAME " --seed %llu --iterations 1\n",
            (unsigned long long)iteration_seed);
    fflush(NULL);
    _exit(1);
}

#endif
