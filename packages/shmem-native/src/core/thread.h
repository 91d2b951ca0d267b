/* What the calling thread runs: a block of a kernel, or host code.  The platform records it
 * when a thread starts and ends a block; code of any layer may read it (the profiler picks
 * its row by block) without depending on how the platform runs kernels. */
#ifndef SHMEMI_THREAD_H
#define SHMEMI_THREAD_H

#include <stdint.h>

/* The calling thread now runs block idx of a kernel of num blocks. */
void shmemi_thread_enter_block(uint32_t idx, uint32_t num);
/* The calling thread's block returned: it is host code again. */
void shmemi_thread_leave_block(void);

/* Nonzero while the calling thread runs a kernel block. */
int shmemi_thread_in_kernel(void);
/* The calling thread's block, 0 on the host (as aclshmemx_block_idx). */
uint32_t shmemi_thread_block_idx(void);
/* The number of blocks of the calling thread's kernel, 1 on the host (as aclshmemx_block_num). */
uint32_t shmemi_thread_block_num(void);

#endif
