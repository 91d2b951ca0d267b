/* The instance registry and the active-instance switch.
 *
 * The active instance is per process (as in the original): switching it from one thread
 * switches it for all.  Lookups are lock-free reads of an atomic pointer; the state changes
 * of init (claiming an id, publishing the instance), finalize and switching are serialised by
 * one mutex.  The long part of an init (waiting for the other PEs) runs without it. */
#include "core/instance.h"

#include <stdio.h>

#include "base/error.h"

static pthread_mutex_t instances_lock = PTHREAD_MUTEX_INITIALIZER;
static shmemi_instance_t *_Atomic registry[ACLSHMEM_MAX_INSTANCES];
static shmemi_instance_t *_Atomic active;
static _Bool claimed[ACLSHMEM_MAX_INSTANCES]; /* ids with an init in progress (under the lock) */
static _Thread_local shmemi_instance_t *thread_instance;
/* Set (for good) when a second instance registers, so also after a finalize and a new init.
 * Until then the one instance is every bound thread's instance too, so shmemi_active needs
 * no thread_instance: in a shared library a thread-local read is a call of __tls_get_addr,
 * which took 17% of a put of 8 bytes (perf, put_mr). */
static atomic_bool several_instances;
static unsigned registrations; /* (under instances_lock) */

void shmemi_instances_lock(void)
{
    pthread_mutex_lock(&instances_lock);
}

void shmemi_instances_unlock(void)
{
    pthread_mutex_unlock(&instances_lock);
}

shmemi_instance_t *shmemi_active(void)
{
    shmemi_instance_t *inst = atomic_load_explicit(&active, memory_order_acquire);
    /* Read after active: an active instance other than the first is stored after the flag, so
     * whoever sees one sees the flag set. */
    if (atomic_load_explicit(&several_instances, memory_order_relaxed) && thread_instance)
        return thread_instance;
    return inst;
}

void shmemi_thread_bind_instance(shmemi_instance_t *inst)
{
    thread_instance = inst;
}

shmemi_instance_t *shmemi_require(const char *api)
{
    shmemi_instance_t *inst = shmemi_active();
    if (!inst || atomic_load(&inst->status) != ACLSHMEM_STATUS_IS_INITIALIZED) {
        shmemi_fail(ACLSHMEM_NOT_INITED, "%s: the library is not initialized (call aclshmemx_init_attr first)",
                    api);
        return NULL;
    }
    return inst;
}

shmemi_instance_t *shmemi_instance_get(uint64_t id)
{
    return id < ACLSHMEM_MAX_INSTANCES ? atomic_load(&registry[id]) : NULL;
}

int shmemi_instance_claim(uint64_t id)
{
    if (shmemi_instance_get(id) || claimed[id])
        return -1;
    claimed[id] = 1;
    return 0;
}

void shmemi_instance_unclaim(uint64_t id)
{
    claimed[id] = 0;
}

void shmemi_instance_register(shmemi_instance_t *inst)
{
    if (++registrations > 1)
        atomic_store(&several_instances, 1);
    atomic_store(&registry[inst->id], inst);
}

void shmemi_instance_unregister(shmemi_instance_t *inst)
{
    atomic_store(&registry[inst->id], NULL);
    if (shmemi_active() == inst)
        atomic_store(&active, NULL);
}

void shmemi_instance_activate(shmemi_instance_t *inst)
{
    atomic_store_explicit(&active, inst, memory_order_release);
}

int shmemi_check_alive(shmemi_instance_t *inst)
{
    if (atomic_load(&inst->abandon_waits))
        return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR,
                           "the wait was ended: its instance is being finalized and the wait did not end "
                           "within the control timeout");
    char msg[256];
    int code = inst->boot ? shmemi_bootstrap_failure(inst->boot, msg, sizeof(msg)) : 0;
    return code ? shmemi_fail(code, "%s", msg) : ACLSHMEM_SUCCESS;
}
