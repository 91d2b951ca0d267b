/* The cpu platform's private structures: emulated streams and running kernels. */
#ifndef SHMEMI_PLATFORM_CPU_H
#define SHMEMI_PLATFORM_CPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "aclshmem/stream.h"
#include "core/instance.h"

struct shmemi_team;

/* One enqueued kernel. */
typedef struct shmemi_task {
    struct shmemi_task *next;
    const char *api; /* who enqueued it: names it in stream errors */
    aclshmemx_kernel_fn fn;
    uint32_t block_dim;
    void *arg;
    max_align_t copy[]; /* the private argument copy of a library operation */
} shmemi_task_t;

/* An emulated stream: a FIFO of tasks run one after another by its worker thread. */
typedef struct shmemi_stream {
    struct shmemi_stream *next; /* in the registry of live streams */
    shmemi_instance_t *inst;
    int is_default;
    int refs; /* callers using it right now (under the registry lock) */
    pthread_t worker;

    pthread_mutex_t lock;
    pthread_cond_t work; /* the worker waits for tasks or stopping */
    pthread_cond_t done; /* synchronizers wait for finished to move */
    shmemi_task_t *head, *tail;
    uint64_t enqueued, finished;
    int stopping;
    const char *running_api; /* who enqueued the task the worker runs now, or NULL */
    int exited;    /* the worker has left its loop (it only needs joining) */
    int abandoned; /* finalize gave up on the worker: it runs no more tasks, nobody waits */
    int error; /* the first error since the last synchronize, and its text */
    char error_msg[640];
} shmemi_stream_t;

/* One running kernel: what its blocks share. */
typedef struct shmemi_launch {
    shmemi_stream_t *stream;
    const shmemi_task_t *task;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int gate;      /* 0: blocks wait to start; 1: run; -1: the launch failed, do not run */
    uint32_t live; /* blocks that have not returned yet */
    /* The in-kernel barrier: blocks arrive; whoever completes the count does the PE barrier. */
    uint32_t arrived;
    uint64_t generation;
    struct shmemi_team *team;
    int barrier_rc;
} shmemi_launch_t;

/* Runs task on stream's worker thread (its block 0) and, for more blocks, on new threads. */
void shmemi_cpu_run_task(shmemi_stream_t *s, const shmemi_task_t *task);

/* Records a stream's first error (later ones are dropped). */
void shmemi_cpu_stream_error(shmemi_stream_t *s, int code, const char *msg);

/* The kernel the calling thread runs, or NULL. */
shmemi_launch_t *shmemi_cpu_current_launch(void);

/* aclshmem_barrier inside a kernel (see platform.h). */
int shmemi_cpu_kernel_barrier(shmemi_instance_t *inst, struct shmemi_team *t);

/* Completes the work enqueued so far on s (errors stay for synchronize to report). */
void shmemi_cpu_stream_drain(shmemi_stream_t *s);

#endif
