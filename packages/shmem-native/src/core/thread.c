#include "core/thread.h"

/* block_num 0: host code (no kernel has that few blocks). */
static _Thread_local uint32_t block_idx, block_num;

void shmemi_thread_enter_block(uint32_t idx, uint32_t num)
{
    block_idx = idx;
    block_num = num;
}

void shmemi_thread_leave_block(void)
{
    block_idx = 0;
    block_num = 0;
}

int shmemi_thread_in_kernel(void)
{
    return block_num != 0;
}

uint32_t shmemi_thread_block_idx(void)
{
    return block_idx;
}

uint32_t shmemi_thread_block_num(void)
{
    return block_num ? block_num : 1;
}
