/* The cpu platform's streams: an emulated ACL stream is a FIFO of kernels served by one
 * worker thread, so work on one stream runs in order and work on different streams overlaps.
 *
 * A handle is the stream's address, but it is never dereferenced before it is found in the
 * registry of live streams: a stale or made-up handle is an error, not a crash.  Callers
 * that use a stream (enqueue, synchronize) hold a reference so that destroy can wait them
 * out before freeing it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aclshmem/stream.h"
#include "base/error.h"
#include "base/log.h"
#include "core/wait.h"
#include "platform/cpu/cpu.h"
#include "platform/platform.h"
#include "sync/barrier.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_idle = PTHREAD_COND_INITIALIZER; /* some stream's refs hit 0 */
static shmemi_stream_t *registry;

static shmemi_stream_t *find_locked(const void *handle)
{
    for (shmemi_stream_t *s = registry; s; s = s->next)
        if (s == handle)
            return s;
    return NULL;
}

static void unlink_locked(shmemi_stream_t *s)
{
    for (shmemi_stream_t **p = &registry; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            return;
        }
}

/* Looks handle up (NULL: the active instance's default stream) and takes a reference. */
static int acquire(const char *api, aclrtStream handle, shmemi_stream_t **out)
{
    const void *want = handle;
    if (!want) {
        shmemi_instance_t *inst = shmemi_require(api);
        if (!inst)
            return ACLSHMEM_NOT_INITED;
        want = inst->default_stream;
    }
    pthread_mutex_lock(&registry_lock);
    shmemi_stream_t *s = want ? find_locked(want) : NULL;
    if (s)
        s->refs++;
    pthread_mutex_unlock(&registry_lock);
    if (s) {
        *out = s;
        return ACLSHMEM_SUCCESS;
    }
    if (!handle)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the instance has no default stream (it is finalizing)",
                           api);
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "%s: stream %p is not a live stream (not made by aclshmemx_stream_create, or "
                       "already destroyed)", api, handle);
}

static void release(shmemi_stream_t *s)
{
    pthread_mutex_lock(&registry_lock);
    if (--s->refs == 0)
        pthread_cond_broadcast(&registry_idle);
    pthread_mutex_unlock(&registry_lock);
}

shmemi_instance_t *shmemi_platform_stream_instance(const char *api, aclrtStream stream)
{
    shmemi_stream_t *s;
    if (acquire(api, stream, &s) != ACLSHMEM_SUCCESS)
        return NULL;
    shmemi_instance_t *inst = s->inst;
    release(s);
    if (atomic_load(&inst->status) != ACLSHMEM_STATUS_IS_INITIALIZED) {
        shmemi_fail(ACLSHMEM_NOT_INITED, "%s: the stream's instance %llu is not initialized", api,
                    (unsigned long long)inst->id);
        return NULL;
    }
    return inst;
}

void shmemi_cpu_stream_error(shmemi_stream_t *s, int code, const char *msg)
{
    pthread_mutex_lock(&s->lock);
    if (s->error == ACLSHMEM_SUCCESS) {
        s->error = code;
        snprintf(s->error_msg, sizeof(s->error_msg), "%s", msg);
    }
    pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
    shmemi_stream_t *s = arg;
    shmemi_thread_bind_instance(s->inst); /* kernels act on the stream's instance */
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->work, &s->lock);
        shmemi_task_t *task = s->abandoned ? NULL : s->head;
        if (!task)
            break; /* stopping, and everything enqueued has run (or finalize gave up on us) */
        s->head = task->next;
        if (!s->head)
            s->tail = NULL;
        s->running_api = task->api;
        pthread_mutex_unlock(&s->lock);
        shmemi_cpu_run_task(s, task);
        free(task);
        pthread_mutex_lock(&s->lock);
        s->running_api = NULL;
        s->finished++;
        if (s->is_default)
            atomic_fetch_sub(&s->inst->default_unfinished, 1); /* after the task's effects */
        pthread_cond_broadcast(&s->done);
    }
    s->exited = 1;
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int stream_new(shmemi_instance_t *inst, int is_default, const char *api, shmemi_stream_t **out)
{
    shmemi_stream_t *s = calloc(1, sizeof(*s));
    if (!s)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", api);
    s->inst = inst;
    s->is_default = is_default;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    /* finalize waits on done with a deadline on the monotonic clock */
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&s->done, &monotonic);
    pthread_condattr_destroy(&monotonic);
    int rc = pthread_create(&s->worker, NULL, worker_main, s);
    if (rc != 0) {
        free(s);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "%s: cannot start the stream's worker thread: %s", api,
                           strerror(rc));
    }
    pthread_mutex_lock(&registry_lock);
    s->next = registry;
    registry = s;
    pthread_mutex_unlock(&registry_lock);
    *out = s;
    return ACLSHMEM_SUCCESS;
}

void shmemi_cpu_stream_drain(shmemi_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t ticket = s->enqueued;
    while (s->finished < ticket && !s->abandoned)
        pthread_cond_wait(&s->done, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

/* No new work from now on; the worker leaves once its queue is empty. */
static void stop_worker(shmemi_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
}

/* s's worker has been joined: waits out the callers still holding s, then frees it. */
static void free_stream(shmemi_stream_t *s)
{
    pthread_mutex_lock(&registry_lock);
    while (s->refs > 0)
        pthread_cond_wait(&registry_idle, &registry_lock);
    pthread_mutex_unlock(&registry_lock);
    if (s->error != ACLSHMEM_SUCCESS)
        SHMEMI_WARN("stream %p destroyed with an error no synchronize reported: %s", (void *)s, s->error_msg);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* s is out of the registry: lets its worker finish what was enqueued, then frees it. */
static void stream_shutdown(shmemi_stream_t *s)
{
    stop_worker(s);
    pthread_join(s->worker, NULL);
    free_stream(s);
}

/* ---- the platform interface ------------------------------------------------ */

int shmemi_platform_instance_init(shmemi_instance_t *inst)
{
    return stream_new(inst, 1, "init", &inst->default_stream);
}

/* How long finalize lets kernels return once their waits were ended. */
#define ABANDON_GRACE_MS 1000

static struct timespec deadline_after(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* 1 when s's worker has left its loop by deadline. */
static int wait_exit(shmemi_stream_t *s, const struct timespec *deadline)
{
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    while (!s->exited && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->done, &s->lock, deadline);
    int exited = s->exited;
    pthread_mutex_unlock(&s->lock);
    return exited;
}

/* s missed finalize's deadline: from now on every wait of the instance ends with an error,
 * so kernels blocked in the library return.  The error names s and what it was running. */
static int report_late(shmemi_instance_t *inst, shmemi_stream_t *s, int64_t timeout_ms)
{
    if (atomic_exchange(&inst->abandon_waits, 1))
        return ACLSHMEM_TIMEOUT_ERROR; /* an earlier stream was late: that is the error to report */
    shmemi_doorbell_ring(shmemi_ctrl_of(inst, inst->my_pe)); /* waiters asleep look again */
    pthread_mutex_lock(&s->lock);
    const char *api = s->running_api;
    pthread_mutex_unlock(&s->lock);
    return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                       "finalize: stream %p did not finish its work within the control timeout (%lld s): it "
                       "was running a kernel of %s; the instance's waits were ended with an error",
                       (void *)s, (long long)(timeout_ms / 1000), api ? api : "(none)");
}

/* The worker did not return even then: it keeps s (and whatever it uses) forever. */
static void abandon(shmemi_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    s->abandoned = 1;
    const char *api = s->running_api;
    pthread_cond_broadcast(&s->done); /* synchronizers stop waiting for it */
    pthread_mutex_unlock(&s->lock);
    pthread_detach(s->worker);
    SHMEMI_WARN("finalize: stream %p: its kernel of %s did not return; it is abandoned, and the instance's "
                "memory stays allocated for it", (void *)s, api ? api : "(none)");
}

/* Unlinks the instance's streams of one kind (default or the user's) into a list of their own. */
static shmemi_stream_t *take_streams(shmemi_instance_t *inst, int is_default)
{
    shmemi_stream_t *taken = NULL;
    pthread_mutex_lock(&registry_lock);
    for (shmemi_stream_t **p = &registry; *p;) {
        shmemi_stream_t *s = *p;
        if (s->inst == inst && s->is_default == is_default) {
            *p = s->next;
            s->next = taken;
            taken = s;
        } else {
            p = &s->next;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return taken;
}

/* Stops a group of streams together, so that one deadline bounds them all. */
static int finish_streams(shmemi_instance_t *inst, int is_default, const struct timespec *deadline,
                          int64_t timeout_ms, int *abandoned)
{
    shmemi_stream_t *group = take_streams(inst, is_default);
    for (shmemi_stream_t *s = group; s; s = s->next)
        stop_worker(s);
    int rc = ACLSHMEM_SUCCESS;
    for (shmemi_stream_t *s = group; s; s = s->next)
        if (!wait_exit(s, deadline) && rc == ACLSHMEM_SUCCESS)
            rc = report_late(inst, s, timeout_ms);
    struct timespec grace = rc == ACLSHMEM_SUCCESS ? *deadline : deadline_after(ABANDON_GRACE_MS);
    for (shmemi_stream_t *s = group, *next; s; s = next) {
        next = s->next;
        if (wait_exit(s, &grace)) {
            pthread_join(s->worker, NULL);
            free_stream(s);
        } else {
            abandon(s);
            *abandoned = 1;
        }
    }
    return rc;
}

int shmemi_platform_instance_fini(shmemi_instance_t *inst, int64_t timeout_ms, int *abandoned)
{
    struct timespec deadline = deadline_after(timeout_ms);
    /* The user's streams first (their kernels may still use the default one), then it. */
    int rc = finish_streams(inst, 0, &deadline, timeout_ms, abandoned);
    if (rc != ACLSHMEM_SUCCESS)
        deadline = deadline_after(ABANDON_GRACE_MS); /* its waits are being ended already */
    int rc_default = finish_streams(inst, 1, &deadline, timeout_ms, abandoned);
    inst->default_stream = NULL;
    return rc != ACLSHMEM_SUCCESS ? rc : rc_default;
}

const char *shmemi_platform_name(void)
{
    return "cpu";
}

int shmemi_platform_launch(const char *api, aclrtStream stream, aclshmemx_kernel_fn fn, uint32_t block_dim,
                           const void *arg, size_t arg_size)
{
    if (!fn)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the kernel function is NULL", api);
    if (block_dim == 0 || block_dim > ACLSHMEMX_MAX_BLOCK_DIM)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: block_dim %u is not in 1..%d", api, block_dim,
                           ACLSHMEMX_MAX_BLOCK_DIM);
    shmemi_stream_t *s;
    SHMEMI_TRY(acquire(api, stream, &s));
    shmemi_task_t *task = malloc(sizeof(*task) + arg_size);
    if (!task) {
        release(s);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", api);
    }
    *task = (shmemi_task_t){.api = api, .fn = fn, .block_dim = block_dim, .arg = (void *)arg};
    if (arg_size) {
        memcpy(task->copy, arg, arg_size);
        task->arg = task->copy;
    }
    pthread_mutex_lock(&s->lock);
    int stopping = s->stopping;
    if (!stopping) {
        if (s->tail)
            s->tail->next = task;
        else
            s->head = task;
        s->tail = task;
        s->enqueued++;
        if (s->is_default)
            atomic_fetch_add(&s->inst->default_unfinished, 1);
        pthread_cond_signal(&s->work);
    }
    pthread_mutex_unlock(&s->lock);
    release(s);
    if (stopping) {
        free(task);
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: stream %p is being destroyed", api, (void *)s);
    }
    return ACLSHMEM_SUCCESS;
}

void shmemi_platform_order_host(shmemi_instance_t *inst)
{
    /* Nothing unfinished on the default stream (the usual case, and the one a loop of small
     * collectives pays for on every call): no registry lock, no stream lock.  A task this
     * thread enqueued counts until the worker finished it, after its effects. */
    if (atomic_load(&inst->default_unfinished) == 0 || shmemi_platform_in_kernel())
        return;
    shmemi_stream_t *s;
    pthread_mutex_lock(&registry_lock);
    if ((s = find_locked(inst->default_stream)) != NULL)
        s->refs++;
    pthread_mutex_unlock(&registry_lock);
    if (s) {
        shmemi_cpu_stream_drain(s);
        release(s);
    }
}

int shmemi_platform_barrier(shmemi_instance_t *inst, struct shmemi_team *t)
{
    if (shmemi_platform_in_kernel())
        return shmemi_cpu_kernel_barrier(inst, t);
    shmemi_platform_order_host(inst);
    return shmemi_barrier(inst, t);
}

/* ---- public API --------------------------------------------------------------- */

int aclshmemx_stream_create(aclrtStream *stream)
{
    static const char api[] = "aclshmemx_stream_create";
    if (!stream)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: stream (the output pointer) is NULL", api);
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    shmemi_stream_t *s;
    SHMEMI_TRY(stream_new(inst, 0, api, &s));
    *stream = s;
    return ACLSHMEM_SUCCESS;
}

/* A kernel waiting for its own stream would wait for itself. */
static int check_not_own(const char *api, shmemi_stream_t *s)
{
    shmemi_launch_t *l = shmemi_cpu_current_launch();
    if (l && l->stream == s)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: called inside a kernel on stream %p itself (it would wait for itself)", api,
                           (void *)s);
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_stream_synchronize(aclrtStream stream)
{
    static const char api[] = "aclshmemx_stream_synchronize";
    shmemi_stream_t *s;
    SHMEMI_TRY(acquire(api, stream, &s));
    int rc = check_not_own(api, s);
    if (rc != ACLSHMEM_SUCCESS) {
        release(s);
        return rc;
    }
    shmemi_cpu_stream_drain(s);
    /* Report the first error once, then start clean: the stream stays usable. */
    char msg[sizeof(s->error_msg)];
    pthread_mutex_lock(&s->lock);
    rc = s->error;
    snprintf(msg, sizeof(msg), "%s", s->error_msg);
    s->error = ACLSHMEM_SUCCESS;
    s->error_msg[0] = '\0';
    pthread_mutex_unlock(&s->lock);
    release(s);
    if (rc != ACLSHMEM_SUCCESS)
        return shmemi_fail(rc, "%s: stream %p: %s", api, (void *)s, msg);
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_stream_destroy(aclrtStream stream)
{
    static const char api[] = "aclshmemx_stream_destroy";
    if (!stream)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: NULL is the default stream; it belongs to the instance "
                           "and goes away with aclshmem_finalize", api);
    shmemi_stream_t *s;
    SHMEMI_TRY(acquire(api, stream, &s));
    int rc = check_not_own(api, s);
    if (rc == ACLSHMEM_SUCCESS && s->is_default)
        rc = shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: stream %p is an instance's default stream; it goes away "
                         "with aclshmem_finalize", api, (void *)s);
    pthread_mutex_lock(&registry_lock);
    if (--s->refs == 0)
        pthread_cond_broadcast(&registry_idle);
    int mine = rc == ACLSHMEM_SUCCESS && find_locked(s) == s;
    if (mine)
        unlink_locked(s); /* from now on nobody can look it up */
    pthread_mutex_unlock(&registry_lock);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    if (!mine) /* a concurrent destroy won */
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: stream %p is already being destroyed", api, stream);
    stream_shutdown(s);
    return ACLSHMEM_SUCCESS;
}

int aclshmemx_kernel_launch(aclrtStream stream, aclshmemx_kernel_fn fn, uint32_t block_dim, void *arg)
{
    return shmemi_platform_launch("aclshmemx_kernel_launch", stream, fn, block_dim, arg, 0);
}
