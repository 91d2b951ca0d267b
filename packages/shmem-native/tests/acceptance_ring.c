/*
 * acceptance_ring.c - an end-to-end program written only against the documented API, the
 * way a user would: 4 PEs are forked (examples/common/launch.c, as the C examples do), PE 0
 * makes the unique ID and pipes its 136 bytes to the others, and every PE initialises,
 * passes data around a ring with put and get, stores into its neighbour through
 * aclshmem_ptr, scatters with aclshmem_int32_iput, works in a team of the even PEs, and
 * finalises.  Exit status 0 means every check passed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem.h"
#include "../examples/common/launch.h"

#define NPES 4
#define HEAP_SIZE (32ULL * 1024 * 1024)
#define N 64

static int failures;
static int my_pe_g = -1;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "acceptance_ring PE %d: %s:%d: check failed: %s (last error: %s)\n", \
                    my_pe_g, __FILE__, __LINE__, #cond, aclshmemx_get_last_error());           \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

/* The body of PE me, run once it has joined the job (examples/common/launch.c: PE 0 makes
 * the unique ID and pipes its 136 bytes to the others, every PE initialises with it). */
static int pe_main(int me, int n, void *unused)
{
    (void)unused;
    my_pe_g = me;
    const int next = (me + 1) % n, prev = (me + n - 1) % n;

    /* 1-2. The unique ID and init. */
    CHECK(sizeof(aclshmemx_uniqueid_t) == 136);
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_IS_INITIALIZED);
    CHECK(aclshmem_my_pe() == me);
    CHECK(aclshmem_n_pes() == n);

    /* 3. Ring put: my numbers go to the next PE. */
    int32_t *ring = aclshmem_malloc(N * sizeof(int32_t));
    int32_t *src = aclshmem_malloc(N * sizeof(int32_t));
    CHECK(ring != NULL && src != NULL);
    if (!ring || !src)
        return 1;
    int32_t mine[N];
    for (int i = 0; i < N; i++) {
        mine[i] = me * 1000 + i;
        src[i] = me * 1000 + i + 500;
        ring[i] = -1;
    }
    aclshmem_barrier_all();
    aclshmem_putmem(ring, mine, sizeof mine, next);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK(ring[i] == prev * 1000 + i);

    /* 4. Ring get: the next PE's numbers come to me. */
    int32_t got[N];
    memset(got, 0, sizeof got);
    aclshmem_getmem(got, src, sizeof got, next);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == next * 1000 + i + 500);
    CHECK(aclshmem_int32_g(&src[7], prev) == prev * 1000 + 7 + 500);

    /* 5. Plain stores into the neighbour's block through aclshmem_ptr. */
    aclshmem_barrier_all();
    int32_t *peer = aclshmem_ptr(ring, next);
    CHECK(peer != NULL);
    if (peer)
        for (int i = 0; i < N; i++)
            peer[i] = 7000 + me;
    CHECK(aclshmem_ptr(ring, n) == NULL);
    CHECK(aclshmem_ptr(mine, next) == NULL);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK(ring[i] == 7000 + prev);

    /* 6. Strided put: every 4th element of the next PE's block gets every 2nd of mine. */
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        ring[i] = 0;
    aclshmem_barrier_all();
    aclshmem_int32_iput(ring, mine, 4, 2, N / 4, next);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++) {
        int32_t want = i % 4 == 0 ? prev * 1000 + (i / 4) * 2 : 0;
        CHECK(ring[i] == want);
    }

    /* 7. A team of the even PEs: split, barrier, a put inside the team, destroy. */
    aclshmem_team_t even = ACLSHMEM_TEAM_INVALID;
    CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, n / 2, &even) == ACLSHMEM_SUCCESS);
    if (me % 2 == 0) {
        CHECK(even != ACLSHMEM_TEAM_INVALID);
        CHECK(aclshmem_team_my_pe(even) == me / 2);
        CHECK(aclshmem_team_n_pes(even) == n / 2);
        int partner = aclshmem_team_translate_pe(even, (me / 2 + 1) % (n / 2), ACLSHMEM_TEAM_WORLD);
        CHECK(partner == (me + 2) % n);
        aclshmem_barrier(even);
        int32_t v = 9000 + me;
        aclshmem_putmem(&ring[1], &v, sizeof v, partner);
        aclshmem_barrier(even);
        CHECK(ring[1] == 9000 + (me + n - 2) % n);
        aclshmem_team_destroy(even);
        CHECK(aclshmem_team_n_pes(even) == -1);
    } else {
        CHECK(even == ACLSHMEM_TEAM_INVALID);
    }
    aclshmem_barrier_all();

    /* 8. Free and finalize. */
    aclshmem_free(src);
    aclshmem_free(ring);
    CHECK(aclshmem_finalize() == ACLSHMEM_SUCCESS);
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED);
    return failures ? 1 : 0;
}

int main(void)
{
    int bad = example_launch("acceptance_ring", NPES, (int64_t)HEAP_SIZE, 60, pe_main, NULL);
    printf("acceptance_ring: %s\n", bad == 0 ? "PASS" : "FAIL");
    return bad == 0 ? 0 : 1;
}
