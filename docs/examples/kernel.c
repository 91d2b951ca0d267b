/*
 * kernel.c - a kernel on the cpu platform: BLOCKS threads, each a "block", each writing
 * one value into the right neighbour's symmetric array.
 *
 *   cc kernel.c $(pkg-config --cflags --libs aclshmem) -o kernel && ./kernel 2
 *
 * The parent makes the unique ID and forks one child per PE; every child joins the job
 * with those 136 bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <aclshmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCKS 4

struct job {
    int64_t *slots; /* symmetric: BLOCKS values */
    int me, right;
};

/* Runs once per block, on its own thread, in stream order. */
static void fill_right(uint32_t block_idx, uint32_t block_dim, void *arg)
{
    (void)block_dim;
    struct job *job = arg;
    aclshmem_int64_p(&job->slots[block_idx], 100 * job->me + (int64_t)block_idx, job->right);
}

static int run_pe(aclshmemx_uniqueid_t *uid, int me, int n)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(me, n, 16 << 20, uid, &attr) != ACLSHMEM_SUCCESS ||
        aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS) {
        fprintf(stderr, "PE %d: init failed: %s\n", me, aclshmemx_get_last_error());
        return 1;
    }
    struct job job = {aclshmem_calloc(BLOCKS, sizeof(int64_t)), me, (me + 1) % n};
    aclrtStream stream;
    if (!job.slots || aclshmemx_stream_create(&stream) != ACLSHMEM_SUCCESS ||
        aclshmemx_kernel_launch(stream, fill_right, BLOCKS, &job) != ACLSHMEM_SUCCESS ||
        aclshmemx_stream_synchronize(stream) != ACLSHMEM_SUCCESS) {
        fprintf(stderr, "PE %d: %s\n", me, aclshmemx_get_last_error());
        return 1;
    }
    aclshmem_barrier_all(); /* every PE's kernel has written */
    printf("PE %d: the %d blocks of PE %d wrote", me, BLOCKS, (me + n - 1) % n);
    for (int b = 0; b < BLOCKS; b++)
        printf(" %lld", (long long)job.slots[b]);
    printf("\n");
    fflush(stdout);
    aclshmemx_stream_destroy(stream);
    aclshmem_barrier_all();
    aclshmem_free(job.slots);
    return aclshmem_finalize() == ACLSHMEM_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    if (n < 1 || aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS) {
        fprintf(stderr, "cannot make a unique ID: %s\n", aclshmemx_get_last_error());
        return 1;
    }
    for (int pe = 0; pe < n; pe++) {
        if (fork() == 0)
            _exit(run_pe(&uid, pe, n));
    }
    int failed = 0, status;
    while (wait(&status) > 0)
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return failed;
}
