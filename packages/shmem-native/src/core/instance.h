/* An instance: one initialised job membership with its own control plane, heaps, world
 * team and default stream.  The active instance is what the public API acts on. */
#ifndef SHMEMI_INSTANCE_H
#define SHMEMI_INSTANCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "aclshmem/types.h"
#include "bootstrap/bootstrap.h"
#include "mem/heap.h"

struct shmemi_team_pool;
struct shmemi_transport_ops;
struct shmemi_stream;
struct shmemi_plugin;
struct shmemi_coll_state;

typedef struct shmemi_instance {
    uint64_t id;
    atomic_int status; /* aclshmemx_init_status_t */
    int my_pe;
    int n_pes;
    aclshmemx_init_attr_t attr;
    int64_t control_timeout_ms;

    shmemi_bootstrap_t *boot;
    shmemi_store_server_t *server; /* PE 0 only */

    shmemi_heap_set_t heaps;                      /* device, host and control segments */
    int holds_data_segment; /* took a reference to the program's data placement (init.h) */
    const struct shmemi_transport_ops **transport; /* [n_pes]: how to reach each PE */
    /* The plug-in that reaches PEs on other nodes (NULL on a single-node job), its state,
     * and its progress function, which waits call while they poll (NULL: nothing to do). */
    const struct shmemi_plugin *plugin;
    void *remote;
    void (*progress)(struct shmemi_instance *inst);
    void (*before_sleep)(struct shmemi_instance *inst); /* the plug-in's, NULL without one */

    struct shmemi_team_pool *teams;
    struct shmemi_coll_state *coll; /* the collectives engine's (coll/) */
    struct shmemi_stream *default_stream;
    /* Tasks enqueued on the default stream and not finished (platform/cpu/stream.c): while it
     * is 0, a host call has nothing on the default stream to wait for, and asks no lock. */
    _Atomic uint64_t default_unfinished;

    aclshmem_ub_config_t engine_config[4]; /* mte, sdma, rdma, udma */
    aclshmem_prof_pe_t *prof;

    aclshmem_instance_ctx ctx; /* what aclshmemx_instance_ctx_get hands out */

    /* Held by a collective allocation call from its local reservation to the end of its
     * collective: one call per PE at a time (see alloc/alloc.c). */
    pthread_mutex_t alloc_lock;
    /* Set by finalize when streams did not finish in time: waits end with an error. */
    atomic_int abandon_waits;
    /* This machine runs more PEs of the job than this process has CPUs: a wait that spins
     * holds a CPU that the PE it waits for needs, so waits yield from the start. */
    int oversubscribed;
    /* How many more node barriers sleep soon (sync/barrier.c): set when one took long. */
    atomic_int short_poll_barriers;
} shmemi_instance_t;

/* The active instance, or NULL.  On a thread bound to an instance (a kernel block or a
 * stream worker) it is that instance, whatever the process's active one is. */
shmemi_instance_t *shmemi_active(void);
/* Binds the calling thread to inst (NULL: unbind); used by the cpu platform. */
void shmemi_thread_bind_instance(shmemi_instance_t *inst);

/* The active, initialised instance; otherwise NULL with a NOT_INITED last error naming api. */
shmemi_instance_t *shmemi_require(const char *api);

/* Registry of instances by id (0..254). */
shmemi_instance_t *shmemi_instance_get(uint64_t id);
/* Under the instances lock: reserves id for an init in progress (0), or -1 when id is
 * initialised or being initialised.  Unclaim when that init ends, either way. */
int shmemi_instance_claim(uint64_t id);
void shmemi_instance_unclaim(uint64_t id);
void shmemi_instance_register(shmemi_instance_t *inst);
void shmemi_instance_unregister(shmemi_instance_t *inst);
void shmemi_instance_activate(shmemi_instance_t *inst);
/* Serialises the state changes of init, finalize and switching (not init's waits). */
void shmemi_instances_lock(void);
void shmemi_instances_unlock(void);

/* The original's engine workspace defaults. */
void shmemi_engine_defaults(shmemi_instance_t *inst);

/* Checks that the job is healthy (no PE died); an error with a message otherwise. */
int shmemi_check_alive(shmemi_instance_t *inst);

#endif
