/* Kernels on the cpu platform: fn(block_idx, block_dim, arg) runs once per block, block 0 on
 * the stream's worker and every other block on a thread of its own, and the task ends when
 * all blocks have returned.  Block threads know their block through a thread-local and
 * report failures to the stream through the error hook, so the first failure of any library
 * call inside a kernel is what synchronize reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/stream.h"
#include "base/error.h"
#include "core/thread.h"
#include "platform/cpu/cpu.h"
#include "platform/platform.h"
#include "sync/barrier.h"

#define BLOCK_STACK_SIZE (2u << 20) /* plenty for a block, small enough for 1024 of them */

typedef struct {
    shmemi_launch_t *launch;
    uint32_t idx;
    pthread_t thread;
} block_t;

static _Thread_local block_t *current;

shmemi_launch_t *shmemi_cpu_current_launch(void)
{
    return current ? current->launch : NULL;
}

int shmemi_platform_in_kernel(void)
{
    return shmemi_thread_in_kernel();
}

uint32_t aclshmemx_block_idx(void)
{
    return shmemi_thread_block_idx();
}

uint32_t aclshmemx_block_num(void)
{
    return shmemi_thread_block_num();
}

static void record_failure(void *ctx, int code, const char *msg)
{
    block_t *b = ctx;
    char text[sizeof(b->launch->stream->error_msg)];
    snprintf(text, sizeof(text), "in a kernel of %s (block %u of %u): %s", b->launch->task->api, b->idx,
             b->launch->task->block_dim, msg);
    shmemi_cpu_stream_error(b->launch->stream, code, text);
}

/* With l->lock held and every live block arrived: the PE barrier, then release them all.
 * The caller is one of the arrived blocks or the block whose exit completed the count. */
static int complete_barrier(shmemi_launch_t *l)
{
    struct shmemi_team *t = l->team;
    pthread_mutex_unlock(&l->lock);
    int rc = shmemi_barrier(l->stream->inst, t);
    pthread_mutex_lock(&l->lock);
    l->barrier_rc = rc;
    l->arrived = 0;
    l->team = NULL;
    l->generation++;
    pthread_cond_broadcast(&l->cond);
    return rc;
}

int shmemi_cpu_kernel_barrier(shmemi_instance_t *inst, struct shmemi_team *t)
{
    (void)inst; /* a kernel acts on its stream's instance, which is inst */
    shmemi_launch_t *l = current->launch;
    pthread_mutex_lock(&l->lock);
    if (l->arrived && l->team != t) {
        pthread_mutex_unlock(&l->lock);
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "aclshmem_barrier in a kernel: block %u asked for another team than the blocks "
                           "already waiting; all blocks of a kernel must call the same barrier", current->idx);
    }
    l->team = t;
    int rc;
    if (++l->arrived == l->live) {
        rc = complete_barrier(l);
    } else {
        uint64_t generation = l->generation;
        while (l->generation == generation)
            pthread_cond_wait(&l->cond, &l->lock);
        rc = l->barrier_rc;
    }
    pthread_mutex_unlock(&l->lock);
    return rc;
}

/* Runs block b on the calling thread; a block that returns no longer counts for barriers
 * (so blocks that finish early cannot leave the others waiting for them). */
static void run_block(block_t *b)
{
    shmemi_launch_t *l = b->launch;
    current = b;
    shmemi_thread_enter_block(b->idx, l->task->block_dim);
    shmemi_set_fail_hook(record_failure, b);
    l->task->fn(b->idx, l->task->block_dim, l->task->arg);
    pthread_mutex_lock(&l->lock);
    l->live--;
    if (l->arrived && l->arrived == l->live)
        complete_barrier(l);
    pthread_mutex_unlock(&l->lock);
    shmemi_set_fail_hook(NULL, NULL);
    shmemi_thread_leave_block();
    current = NULL;
}

static void *block_main(void *arg)
{
    block_t *b = arg;
    shmemi_launch_t *l = b->launch;
    shmemi_thread_bind_instance(l->stream->inst);
    pthread_mutex_lock(&l->lock);
    while (l->gate == 0)
        pthread_cond_wait(&l->cond, &l->lock);
    int go = l->gate > 0;
    pthread_mutex_unlock(&l->lock);
    if (go)
        run_block(b);
    return NULL;
}

/* Opens the gate: 1 lets the blocks run, -1 sends them home. */
static void open_gate(shmemi_launch_t *l, int gate)
{
    pthread_mutex_lock(&l->lock);
    l->gate = gate;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

void shmemi_cpu_run_task(shmemi_stream_t *s, const shmemi_task_t *task)
{
    uint32_t n = task->block_dim;
    shmemi_launch_t l = {.stream = s, .task = task, .live = n};
    pthread_mutex_init(&l.lock, NULL);
    pthread_cond_init(&l.cond, NULL);
    block_t one, *blocks = n == 1 ? &one : calloc(n, sizeof(block_t));
    if (!blocks) {
        shmemi_cpu_stream_error(s, ACLSHMEM_MALLOC_FAILED, "out of memory for the blocks of a kernel");
        goto out;
    }
    /* Every block thread exists before any block runs: a launch that cannot start all its
     * blocks runs none of them, instead of leaving some waiting in a barrier for the rest. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, BLOCK_STACK_SIZE);
    uint32_t started = 1;
    int rc = 0;
    for (uint32_t i = 0; i < n; i++)
        blocks[i] = (block_t){.launch = &l, .idx = i};
    for (; started < n; started++)
        if ((rc = pthread_create(&blocks[started].thread, &attr, block_main, &blocks[started])) != 0)
            break;
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: cannot start block %u of a %u-block kernel: %s", task->api, started, n,
                 strerror(rc));
        shmemi_cpu_stream_error(s, ACLSHMEM_INNER_ERROR, msg);
        open_gate(&l, -1);
    } else {
        open_gate(&l, 1);
        run_block(&blocks[0]);
    }
    for (uint32_t i = 1; i < started; i++)
        pthread_join(blocks[i].thread, NULL);
    if (blocks != &one)
        free(blocks);
out:
    pthread_cond_destroy(&l.cond);
    pthread_mutex_destroy(&l.lock);
}
