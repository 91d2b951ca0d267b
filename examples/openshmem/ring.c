/*
 * ring.c - an OpenSHMEM 1.5 program: every PE sends its number to the next PE around a
 * ring, through symmetric memory.
 *
 *     oshcc examples/openshmem/ring.c -o ring
 *     oshrun -np 4 ./ring
 *
 * Run without oshrun (./ring), it is a job of one PE, which sends to itself.
 */
#include <shmem.h>
#include <stdio.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, previous = (me + npes - 1) % npes;

    int *received = shmem_malloc(sizeof *received); /* symmetric: at the same place on every PE */
    shmem_putmem(received, &me, sizeof me, next);   /* into the next PE's copy */
    shmem_barrier_all();                            /* every put is complete and visible */

    printf("PE %d of %d: PE %d sent me %d\n", me, npes, previous, *received);
    int ok = *received == previous;
    shmem_free(received);
    shmem_finalize();
    return ok ? 0 : 1;
}
