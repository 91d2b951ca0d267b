/* Setting up and tearing down the UCX transport (see ucx.h): the data plane, UCX's
 * context, the main channel and the cards; the plug-in's entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/log.h"
#include "transport/ucx/ucx.h"

/* Which data plane to use: am, rma or auto (the default). */
#define UCX_PLANE_ENV "SHMEM_UCX_DATA_PLANE"
/* 0 turns off the fence around UCX's listening sockets (for networks where a node's
 * packets leave from addresses it does not own, e.g. behind NAT). */
#define UCX_FILTER_ENV "SHMEM_UCX_FILTER"

/* ---- the data plane ------------------------------------------------------------------------ */

/* UCX_TLS names only transports that do RMA in hardware (InfiniBand/RoCE: rc, dc, ud and
 * their variants) or that stay inside a node: then the rkey is a capability and UCX's own
 * RMA is safe to use.  Anything else (tcp, "all", an exclusion list, unset) may put UCX's
 * software RMA on a socket, so it gets the AM plane. */
static int tls_all_hardware(const char *tls)
{
    static const char *const safe[] = {"rc", "rc_v", "rc_x", "rc_verbs", "rc_mlx5", "dc", "dc_x", "dc_mlx5",
                                       "ud", "ud_v", "ud_x", "ud_verbs", "ud_mlx5", "ib", "sm", "shm",
                                       "self", "posix", "sysv", "xpmem", "cma", "knem"};
    if (!tls || !*tls || tls[0] == '^')
        return 0;
    char list[512];
    snprintf(list, sizeof(list), "%s", tls);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int known = 0;
        for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
            known |= strcasecmp(name, safe[i]) == 0;
        if (!known)
            return 0;
    }
    return 1;
}

/* The plane this process's environment asks for: 0, or -1 with the reason in why.  why also
 * says, on success, what decided. */
static int plane_from_env(ucx_plane_t *plane, char *why, size_t why_len)
{
    const char *asked = getenv(UCX_PLANE_ENV), *tls = getenv("UCX_TLS");
    if (!asked || !*asked || strcasecmp(asked, "auto") == 0) {
        *plane = tls_all_hardware(tls) ? UCX_PLANE_RMA : UCX_PLANE_AM;
        snprintf(why, why_len, "UCX_TLS=%.200s %s", tls && *tls ? tls : "(unset)",
                 *plane == UCX_PLANE_RMA ? "lists only hardware-RMA and same-node transports"
                                         : "may run RMA in software over sockets");
    } else if (strcasecmp(asked, "am") == 0 || strcasecmp(asked, "rma") == 0) {
        *plane = strcasecmp(asked, "am") == 0 ? UCX_PLANE_AM : UCX_PLANE_RMA;
        snprintf(why, why_len, "%s=%s", UCX_PLANE_ENV, asked);
    } else {
        snprintf(why, why_len, "%s=%.64s: expected am, rma or auto", UCX_PLANE_ENV, asked);
        return -1;
    }
    return 0;
}

static int choose_plane(ucx_state_t *st)
{
    char why[320];
    if (plane_from_env(&st->plane, why, sizeof(why)) != 0)
        return st->host->fail(ACLSHMEM_INVALID_PARAM, "%s", why);
    st->ops = st->plane == UCX_PLANE_AM ? &shmemi_ucx_am_ops : &shmemi_ucx_rma_ops;
    return ACLSHMEM_SUCCESS;
}

static int filter_wanted(void)
{
    const char *v = getenv(UCX_FILTER_ENV);
    return !(v && strcmp(v, "0") == 0);
}

/* ---- context, worker, registration ---------------------------------------------------- */

/* The AM plane asks UCX for active messages only: its software RMA and AMO handlers are
 * then never installed, so no message can make UCX write our memory by itself. */
static uint64_t plane_features(ucx_plane_t plane)
{
    if (plane == UCX_PLANE_AM)
        return UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    return UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
}

static int open_context(ucx_state_t *st)
{
    ucp_config_t *config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &config); /* the UCX_* environment */
    if (status != UCS_OK)
        return shmemi_ucx_fail(st, status, "reading its configuration (UCX_* variables)");
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = plane_features(st->plane),
        .estimated_num_eps = (size_t)st->inst->n_pes,
    };
    status = ucp_init(&params, config, &st->context);
    ucp_config_release(config);
    if (status != UCS_OK)
        return shmemi_ucx_fail(st, status, "initialisation");
    return ACLSHMEM_SUCCESS;
}

/* RMA plane: registers the segments as they are, sparse memfd mappings.  On TCP this pins
 * nothing; an RDMA device registers (and pins) the whole reservation, as every OpenSHMEM
 * over RDMA does.  An absent segment (the program's data when it is not shared) has no
 * registration, no key and no base on any PE. */
static int map_segments(ucx_state_t *st)
{
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        const shmemi_segment_t *seg = &st->inst->heaps.seg[s];
        if (seg->size == 0)
            continue;
        ucp_mem_map_params_t params = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            .address = seg->base,
            .length = seg->size,
        };
        ucs_status_t status = ucp_mem_map(st->context, &params, &st->memh[s]);
        if (status != UCS_OK)
            return shmemi_ucx_fail(st, status, "registration of a symmetric segment");
    }
    return ACLSHMEM_SUCCESS;
}

/* ---- start / stop ------------------------------------------------------------------------ */

int shmemi_ucx_start(shmemi_instance_t *inst, const shmemi_plugin_host_t *host)
{
    ucx_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    st->host = host;
    st->inst = inst;
    st->stop_fd = -1;
    st->filter = filter_wanted();
    pthread_mutex_init(&st->channels_lock, NULL);
    inst->remote = st;
    st->peers = calloc((size_t)inst->n_pes, sizeof(*st->peers));
    if (!st->peers)
        return host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    for (int pe = 0; pe < inst->n_pes; pe++)
        st->peers[pe].pe = pe;
    SHMEMI_TRY(choose_plane(st));
    SHMEMI_TRY(open_context(st));
    SHMEMI_TRY(shmemi_ucx_channel_alloc(st, &st->main));
    SHMEMI_TRY(shmemi_ucx_channel_worker(&st->main));
    SHMEMI_TRY(st->plane == UCX_PLANE_AM ? shmemi_ucx_am_listen(&st->main) : map_segments(st));
    SHMEMI_TRY(shmemi_ucx_exchange_cards(st));
    return shmemi_ucx_start_thread(st);
}

void shmemi_ucx_stop(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    if (!st)
        return;
    shmemi_ucx_stop_thread(st);
    while (st->channels) /* contexts the program did not destroy */
        shmemi_ucx_channel_close(inst, st->channels);
    if (st->plane == UCX_PLANE_AM && st->main.worker)
        shmemi_ucx_am_report(st);
    /* Forced: peers may be gone (finalize, or a job that failed), and every PE closes. */
    shmemi_ucx_channel_free(&st->main, 1);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (st->memh[s])
            ucp_mem_unmap(st->context, st->memh[s]);
    if (st->context)
        ucp_cleanup(st->context);
    pthread_mutex_destroy(&st->channels_lock);
    free(st->allowed);
    free(st->cards);
    free(st->peers);
    free(st);
    inst->remote = NULL;
}

/* ---- context channels ------------------------------------------------------------------------ */

/* Makes c's fenced worker and lets in the job's other nodes at once (the cards are known).
 * Under st->channels_lock: the sockets that appear meanwhile must be c's own. */
static int open_worker(ucx_channel_t *c)
{
    ucx_state_t *st = c->st;
    SHMEMI_TRY(shmemi_ucx_channel_worker(c));
    char why[256];
    if (ucx_guard_open_to(&c->guard, st->allowed, st->n_allowed, why, sizeof(why)) != 0)
        return st->host->fail(ACLSHMEM_INNER_ERROR, "PE %d: %s", st->inst->my_pe, why);
    return ACLSHMEM_SUCCESS;
}

int shmemi_ucx_channel_open(shmemi_instance_t *inst, shmemi_channel_t **out)
{
    ucx_state_t *st = ucx_state(inst);
    ucx_channel_t *c = calloc(1, sizeof(*c));
    if (!c)
        return st->host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int rc = shmemi_ucx_channel_alloc(st, c);
    pthread_mutex_lock(&st->channels_lock);
    if (rc == ACLSHMEM_SUCCESS)
        rc = open_worker(c);
    if (rc == ACLSHMEM_SUCCESS && st->plane == UCX_PLANE_AM)
        rc = shmemi_ucx_am_listen(c);
    if (rc == ACLSHMEM_SUCCESS) {
        c->next = st->channels;
        st->channels = c;
    }
    pthread_mutex_unlock(&st->channels_lock);
    if (rc != ACLSHMEM_SUCCESS) {
        shmemi_ucx_channel_free(c, 1);
        free(c);
        return rc;
    }
    *out = c;
    return ACLSHMEM_SUCCESS;
}

/* Takes c out of the list and its receiving side's counts into the main channel's, which
 * the report at stop logs. */
static void forget(ucx_state_t *st, ucx_channel_t *c)
{
    pthread_mutex_lock(&st->channels_lock);
    for (ucx_channel_t **link = &st->channels; *link; link = &(*link)->next) {
        if (*link == c) {
            *link = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&st->channels_lock);
    pthread_mutex_lock(&st->main.lock);
    st->main.target.accepted += c->target.accepted;
    for (int r = 0; r < SHMEMI_AM_DROP_REASONS; r++)
        st->main.target.dropped[r] += c->target.dropped[r];
    st->main.guard.swept += c->guard.swept;
    pthread_mutex_unlock(&st->main.lock);
}

void shmemi_ucx_channel_close(shmemi_instance_t *inst, shmemi_channel_t *ch)
{
    ucx_state_t *st = ucx_state(inst);
    forget(st, ch);
    /* Forced once the progress thread is gone (stop): peers may be gone too. */
    shmemi_ucx_channel_free(ch, !st->thread_started);
    free(ch);
}

/* ---- the plug-in's entry ------------------------------------------------------------------ */

static const shmemi_transport_ops_t *plane_ops(shmemi_instance_t *inst)
{
    return ucx_state(inst)->ops;
}

static char plugin_name[64];

static const shmemi_plugin_t ucx_plugin = {
    .abi = SHMEMI_PLUGIN_ABI,
    .version = SHMEMI_BUILD_VERSION,
    .name = plugin_name,
    .ops = plane_ops,
    .start = shmemi_ucx_start,
    .progress = shmemi_ucx_progress,
    .channel_open = shmemi_ucx_channel_open,
    .channel_close = shmemi_ucx_channel_close,
    .before_sleep = shmemi_ucx_before_sleep,
    .stop = shmemi_ucx_stop,
};

/* For diagnostics (shmem-config): the data plane this process's environment selects and
 * whether UCX's sockets would be filtered, as one line in out: 0, or -1 when the
 * environment is invalid (out says why).  Exported beside the entry; libaclshmem does not
 * use it. */
__attribute__((visibility("default"))) int shmemi_ucx_data_plane(char *out, size_t out_len)
{
    ucx_plane_t plane;
    char why[320];
    if (plane_from_env(&plane, why, sizeof(why)) != 0) {
        snprintf(out, out_len, "%s", why);
        return -1;
    }
    snprintf(out, out_len, "%s (%s); socket filter %s", plane == UCX_PLANE_AM ? "am" : "rma", why,
             filter_wanted() ? "on" : "off (" UCX_FILTER_ENV "=0)");
    return 0;
}

__attribute__((visibility("default"))) const shmemi_plugin_t *shmemi_transport_plugin(void)
{
    snprintf(plugin_name, sizeof(plugin_name), "UCX %s", ucp_get_version_string());
    return &ucx_plugin;
}
