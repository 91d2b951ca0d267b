/* Initialisation and finalisation of an instance, and the job-wide calls around them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/init.h"
#include "aclshmem/rma.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/channel.h"
#include "bootstrap/net.h"
#include "coll/coll.h"
#include "core/ctrl.h"
#include "base/error.h"
#include "core/instance.h"
#include "base/log.h"
#include "base/settings.h"
#include "core/wait.h"
#include "init/init.h"
#include "mem/data_segment.h"
#include "mem/heap.h"
#include "platform/platform.h"
#include "prof/prof.h"
#include "team/team.h"
#include "transport/transport.h"

/* Control-plane keys of the init-time collectives (team collectives use other keys). */
#define INIT_KEY_SHARE 0x494E495400000001ull
#define INIT_KEY_READY 0x494E495400000002ull
#define FINI_KEY 0x46494E4900000001ull

int shmemi_check_instance_id(uint64_t instance_id, const char *api)
{
    if (instance_id >= ACLSHMEM_MAX_INSTANCES)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: instance_id %llu is not in 0..%d", api,
                           (unsigned long long)instance_id, ACLSHMEM_MAX_INSTANCES - 1);
    return ACLSHMEM_SUCCESS;
}

static int check_attr(const aclshmemx_init_attr_t *attr)
{
    const aclshmem_init_optional_attr_t *opt = &attr->option_attr;
    if (attr->my_pe < 0)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "init: my_pe %d is negative", attr->my_pe);
    if (attr->n_pes <= 0 || attr->n_pes > ACLSHMEM_MAX_PES)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "init: n_pes %d is not in 1..%d", attr->n_pes,
                           ACLSHMEM_MAX_PES);
    if (attr->my_pe >= attr->n_pes)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "init: my_pe %d is not below n_pes %d", attr->my_pe,
                           attr->n_pes);
    if (opt->shm_init_timeout == 0 || opt->control_operation_timeout == 0)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "init: shm_init_timeout and control_operation_timeout must be > 0 seconds "
                           "(start from ACLSHMEMX_INIT_ATTR_INITIALIZER or aclshmemx_set_attr_uniqueid_args)");
    unsigned engines = (unsigned)opt->data_op_engine_type;
    if (engines == 0 || (engines & ~0x0Fu) != 0)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "init: data_op_engine_type 0x%x is not a nonzero mask of MTE|SDMA|ROCE|UDMA",
                           engines);
    /* The cpu platform moves data with the CPU through shared memory: its one engine is MTE. */
    if (!(engines & ACLSHMEM_DATA_OP_MTE))
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                           "init: data_op_engine_type 0x%x asks only for engines the %s platform lacks "
                           "(SDMA, ROCE, UDMA); it has MTE (0x1)", engines, shmemi_platform_name());
    if (engines != ACLSHMEM_DATA_OP_MTE)
        SHMEMI_WARN("init: data_op_engine_type 0x%x: the %s platform has only MTE; SDMA/ROCE/UDMA are ignored",
                    engines, shmemi_platform_name());
    if (attr->local_mem_size == 0 || attr->local_mem_size > ACLSHMEM_MAX_LOCAL_SIZE)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "init: local_mem_size %llu is not in 1..%llu bytes",
                           (unsigned long long)attr->local_mem_size,
                           (unsigned long long)ACLSHMEM_MAX_LOCAL_SIZE);
    return shmemi_check_instance_id(attr->instance_id, "init");
}

/* Where the control plane is and what secret it uses, from the flags and attributes. */
static int resolve_job(aclshmemx_bootstrap_t flags, const aclshmemx_init_attr_t *attr,
                       shmemi_uid_inner_t *inner)
{
    if (flags == ACLSHMEMX_INIT_WITH_MPI)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED,
                           "init: ACLSHMEMX_INIT_WITH_MPI is not available; use UNIQUEID (broadcast the "
                           "ID with MPI yourself) or DEFAULT");
    if (flags == ACLSHMEMX_INIT_WITH_DEFAULT) {
        char url[ACLSHMEM_MAX_IP_PORT_LEN + 1];
        memcpy(url, attr->ip_port, ACLSHMEM_MAX_IP_PORT_LEN);
        url[ACLSHMEM_MAX_IP_PORT_LEN] = '\0';
        int rc = shmemi_uid_from_url(url, attr->instance_id, inner);
        if (rc == ACLSHMEM_SUCCESS)
            return shmemi_uid_check_default_auth(url);
        /* An unusable URL falls back to a unique ID in comm_args, as in the original. */
        if (!attr->comm_args)
            return rc;
        return shmemi_uid_decode(attr->comm_args, inner);
    }
    if (flags == ACLSHMEMX_INIT_WITH_UNIQUEID) {
        if (!attr->comm_args)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "init: UNIQUEID mode needs attr.comm_args to point at the unique ID");
        return shmemi_uid_decode(attr->comm_args, inner);
    }
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "init: bootstrap flags 0x%x are not ACLSHMEMX_INIT_WITH_DEFAULT or _UNIQUEID",
                       (unsigned)flags);
}

static int start_server(shmemi_instance_t *inst, const shmemi_uid_inner_t *inner)
{
    int fd = shmemi_uid_take_reserved_socket(inner);
    if (fd < 0) {
        struct sockaddr_storage ss;
        socklen_t len = shmemi_uid_sockaddr(inner, &ss);
        fd = shmemi_tcp_bind(&ss, len);
        if (fd < 0) {
            char text[80];
            shmemi_sockaddr_text(&ss, text, sizeof(text));
            return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR,
                               "PE 0 cannot listen on %s: %s (is the port in use by another job?)", text,
                               strerror(-fd));
        }
    }
    return shmemi_store_server_start(fd, inner->secret, inst->n_pes, &inst->server);
}

static void wake_local_waiters(void *ctx)
{
    shmemi_instance_t *inst = ctx;
    if (inst->heaps.seg[SHMEMI_SEG_CTRL].peer_base)
        shmemi_doorbell_ring(shmemi_ctrl_of(inst, inst->my_pe));
}

/* Leaves the job: says goodbye on the control plane and, on PE 0, serves the others until
 * they have done the same (when clean). */
static void close_control_plane(shmemi_instance_t *inst, int clean)
{
    if (inst->boot)
        shmemi_bootstrap_set_failure_hook(inst->boot, NULL, NULL);
    shmemi_bootstrap_close(inst->boot, clean);
    inst->boot = NULL;
    shmemi_store_server_stop(inst->server, clean ? inst->control_timeout_ms : 0);
    inst->server = NULL;
}

static void teardown(shmemi_instance_t *inst, int clean)
{
    int abandoned = 0; /* streams were finished already, or never had work */
    (void)shmemi_platform_instance_fini(inst, inst->control_timeout_ms, &abandoned);
    shmemi_coll_fini(inst);
    shmemi_teams_fini(inst);
    if (inst->boot)
        shmemi_bootstrap_set_failure_hook(inst->boot, NULL, NULL);
    shmemi_transport_fini(inst); /* before the heaps: the plug-in registered them */
    shmemi_heaps_destroy(&inst->heaps);
    close_control_plane(inst, clean);
    free(inst->prof);
    inst->prof = NULL;
    /* Last: no thread of this instance runs any more (in a program linked with the
     * library's objects, the library's own globals are among the pages copied back). */
    if (inst->holds_data_segment)
        shmemi_data_segment_release();
    inst->holds_data_segment = 0;
}

/* Everything after the attributes are known good. */
static int build_instance(shmemi_instance_t *inst, const shmemi_uid_inner_t *inner,
                          const shmemi_init_options_t *opts)
{
    const aclshmem_init_optional_attr_t *opt = &inst->attr.option_attr;
    int64_t init_timeout_ms = (int64_t)opt->shm_init_timeout * 1000;
    inst->control_timeout_ms = (int64_t)opt->control_operation_timeout * 1000;
    /* First, before this instance starts a thread: the pages of the program's globals are
     * copied and swapped, and a write of another thread meanwhile would be lost. */
    shmemi_data_segment_t data = {.fd = -1};
    if (opts && opts->share_data_segment) {
        SHMEMI_TRY(shmemi_data_segment_acquire(&data));
        inst->holds_data_segment = 1;
    }
    shmemi_wait_register_process(); /* also before this instance's threads: see core/wait.h */
    shmemi_engine_defaults(inst);
    SHMEMI_TRY(shmemi_prof_init(inst));

    if (inst->my_pe == 0)
        SHMEMI_TRY(start_server(inst, inner));
    SHMEMI_TRY(shmemi_bootstrap_connect(inner, inst->my_pe, inst->n_pes, init_timeout_ms, &inst->boot));
    SHMEMI_TRY(shmemi_heaps_create(&inst->heaps, inst->my_pe, inst->n_pes, inst->attr.local_mem_size,
                                   sizeof(shmemi_ctrl_t), inst->holds_data_segment ? &data : NULL,
                                   inner->secret));
    shmemi_bootstrap_set_failure_hook(inst->boot, wake_local_waiters, inst);
    SHMEMI_TRY(shmemi_heaps_share(&inst->heaps, inst->boot, INIT_KEY_SHARE, inner->secret, init_timeout_ms));
    SHMEMI_TRY(shmemi_transport_select(inst));
    shmemi_wait_init(inst);
    SHMEMI_TRY(shmemi_teams_init(inst));
    SHMEMI_TRY(shmemi_coll_init(inst));
    SHMEMI_TRY(shmemi_platform_instance_init(inst));

    /* Everyone is mapped and agrees on the heap size before anyone touches a peer. */
    uint64_t mine = inst->attr.local_mem_size;
    uint64_t *sizes = calloc((size_t)inst->n_pes, sizeof(uint64_t));
    if (!sizes)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int rc = shmemi_bootstrap_collective(inst->boot, INIT_KEY_READY, inst->n_pes, inst->my_pe, &mine,
                                         sizeof(mine), sizes, init_timeout_ms);
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++)
        if (sizes[pe] != mine)
            rc = shmemi_fail(ACLSHMEM_INVALID_PARAM,
                             "init: local size diffs: PE %d asked for %llu bytes, PE %d for %llu; every "
                             "PE must use the same local_mem_size", pe, (unsigned long long)sizes[pe],
                             inst->my_pe, (unsigned long long)mine);
    free(sizes);
    /* Every PE has mapped its peers: the hand-off sockets close (their names are public). */
    if (rc == ACLSHMEM_SUCCESS)
        shmemi_heaps_share_end(&inst->heaps);
    return rc;
}

static shmemi_instance_t *new_instance(const aclshmemx_init_attr_t *attributes)
{
    shmemi_instance_t *inst = calloc(1, sizeof(*inst));
    if (!inst)
        return NULL;
    inst->id = attributes->instance_id;
    inst->attr = *attributes;
    inst->my_pe = attributes->my_pe;
    inst->n_pes = attributes->n_pes;
    inst->ctx.id = inst->id;
    inst->ctx.instance = inst;
    atomic_store(&inst->status, ACLSHMEM_STATUS_NOT_INITIALIZED);
    pthread_mutex_init(&inst->alloc_lock, NULL);
    return inst;
}

static void free_instance(shmemi_instance_t *inst)
{
    pthread_mutex_destroy(&inst->alloc_lock);
    free(inst);
}

/* Under the lock, briefly: the id is free and now ours (settings are frozen from here).
 * *out is NULL when a nonzero id is already initialised (a warning, not an error). */
static int claim_instance(const aclshmemx_init_attr_t *attributes, shmemi_instance_t **out)
{
    uint64_t id = attributes->instance_id;
    shmemi_instances_lock();
    int taken = shmemi_instance_claim(id) != 0;
    int live = taken && shmemi_instance_get(id) != NULL;
    shmemi_instance_t *inst = taken ? NULL : new_instance(attributes);
    if (inst) {
        shmemi_settings_instance_started();
        shmemi_log_configure(inst->my_pe);
    } else if (!taken) {
        shmemi_instance_unclaim(id);
    }
    shmemi_instances_unlock();
    *out = inst;
    if (live && id != 0) {
        SHMEMI_WARN("instance %llu is already initialized", (unsigned long long)id);
        return ACLSHMEM_SUCCESS; /* with *out NULL: nothing to do, as in the original */
    }
    if (live)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "init: instance 0 is already initialized; do not call init "
                           "interface repeatedly (finalize first)");
    if (taken)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "init: instance %llu is being initialized by another thread",
                           (unsigned long long)id);
    if (!inst)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    return ACLSHMEM_SUCCESS;
}

int shmemi_init_with_options(aclshmemx_bootstrap_t bootstrap_flags, aclshmemx_init_attr_t *attributes,
                             const shmemi_init_options_t *opts)
{
    SHMEMI_TRY(check_attr(attributes));
    shmemi_uid_inner_t inner;
    SHMEMI_TRY(resolve_job(bootstrap_flags, attributes, &inner));
    SHMEMI_TRY(shmemi_channel_check_settings());

    shmemi_instance_t *inst;
    SHMEMI_TRY(claim_instance(attributes, &inst));
    if (!inst)
        return ACLSHMEM_SUCCESS;
    /* The long part (waiting for every PE) runs unlocked: other threads' calls go on. */
    int rc = build_instance(inst, &inner, opts);
    if (rc != ACLSHMEM_SUCCESS)
        teardown(inst, 0);
    shmemi_instances_lock();
    shmemi_instance_unclaim(inst->id);
    if (rc == ACLSHMEM_SUCCESS) {
        atomic_store(&inst->status, ACLSHMEM_STATUS_IS_INITIALIZED);
        shmemi_instance_register(inst);
        if (inst->id == 0 || !shmemi_active())
            shmemi_instance_activate(inst);
    } else {
        shmemi_settings_instance_stopped();
    }
    shmemi_instances_unlock();
    if (rc != ACLSHMEM_SUCCESS) {
        free_instance(inst);
        return rc;
    }
    SHMEMI_INFO("PE %d of %d initialized instance %llu", attributes->my_pe, attributes->n_pes,
                (unsigned long long)attributes->instance_id);
    return ACLSHMEM_SUCCESS;
}

static int finalize_instance(shmemi_instance_t *inst)
{
    aclshmem_quiet();
    /* Bounded by the control timeout: a stream that never finishes cannot hold finalize. */
    int abandoned = 0;
    int streams_rc = shmemi_platform_instance_fini(inst, inst->control_timeout_ms, &abandoned);
    /* Nobody unmaps a heap while a peer may still be writing into it. */
    int rc = shmemi_bootstrap_collective(inst->boot, FINI_KEY, inst->n_pes, inst->my_pe, NULL, 0, NULL,
                                         inst->control_timeout_ms);
    shmemi_instance_unregister(inst);
    atomic_store(&inst->status, ACLSHMEM_STATUS_NOT_INITIALIZED);
    /* An abandoned kernel may still touch the heaps, teams and transports: keep them (a leak,
     * warned about) rather than let it write into freed or unmapped memory.  Its library
     * calls fail from now on (the instance is not initialized; its waits end at once). */
    if (abandoned) {
        close_control_plane(inst, rc == ACLSHMEM_SUCCESS);
    } else {
        teardown(inst, rc == ACLSHMEM_SUCCESS);
        free_instance(inst);
    }
    if (streams_rc != ACLSHMEM_SUCCESS && rc == ACLSHMEM_SUCCESS)
        rc = streams_rc;
    if (!shmemi_active())
        shmemi_instance_activate(shmemi_instance_get(0));
    shmemi_settings_instance_stopped();
    return rc;
}

int shmemi_finalize_active(void)
{
    shmemi_instances_lock();
    shmemi_instance_t *inst = shmemi_active();
    int rc = inst ? finalize_instance(inst)
                  : shmemi_fail(ACLSHMEM_NOT_INITED, "aclshmem_finalize: no instance is initialized");
    shmemi_instances_unlock();
    return rc;
}

int shmemi_finalize_id(uint64_t instance_id)
{
    shmemi_instances_lock();
    shmemi_instance_t *inst = shmemi_instance_get(instance_id);
    int rc;
    if (!inst) {
        rc = shmemi_fail(ACLSHMEM_INVALID_VALUE, "aclshmemx_finalize: instance %llu is not initialized",
                         (unsigned long long)instance_id);
    } else {
        shmemi_instance_t *previous = shmemi_active();
        shmemi_instance_activate(inst);
        rc = finalize_instance(inst);
        if (previous != inst)
            shmemi_instance_activate(previous);
    }
    shmemi_instances_unlock();
    return rc;
}

int shmemi_init_status(void)
{
    shmemi_instance_t *inst = shmemi_active();
    return inst ? atomic_load(&inst->status) : ACLSHMEM_STATUS_NOT_INITIALIZED;
}

void shmemi_attr_for_uniqueid(int my_pe, int n_pes, uint64_t local_mem_size, aclshmemx_uniqueid_t *uid,
                              aclshmemx_init_attr_t *attr)
{
    aclshmemx_init_attr_t defaults = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    defaults.instance_id = attr->instance_id < ACLSHMEM_MAX_INSTANCES ? attr->instance_id : 0;
    *attr = defaults;
    attr->my_pe = my_pe;
    attr->n_pes = n_pes;
    attr->local_mem_size = local_mem_size;
    attr->comm_args = uid;
    uid->my_pe = my_pe;
    uid->n_pes = n_pes;
}

_Noreturn void shmemi_global_exit(int status)
{
    shmemi_instance_t *inst = shmemi_active();
    if (inst && inst->boot)
        shmemi_bootstrap_global_exit(inst->boot, status); /* does not return */
    SHMEMI_WARN("aclshmem_global_exit(%d) before init: only this process exits", status);
    fflush(NULL);
    _exit(status);
}

aclshmem_instance_ctx *shmemi_active_ctx(void)
{
    shmemi_instance_t *inst = shmemi_active();
    return inst ? &inst->ctx : NULL;
}

int shmemi_activate_id(uint64_t instance_id)
{
    shmemi_instances_lock();
    shmemi_instance_t *inst = shmemi_instance_get(instance_id);
    if (inst)
        shmemi_instance_activate(inst);
    shmemi_instances_unlock();
    if (!inst)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "aclshmemx_instance_ctx_set: instance %llu is not initialized",
                           (unsigned long long)instance_id);
    return ACLSHMEM_SUCCESS;
}
