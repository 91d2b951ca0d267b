/* Setting up and tearing down the UCX transport (see ucx.h). */
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/log.h"
#include "transport/ucx/ucx.h"

/* Control-plane keys of the address exchange. */
#define UCX_KEY_CARD_LEN 0x5543580000000001ull
#define UCX_KEY_CARD 0x5543580000000002ull

/* The largest card accepted from a peer: worker addresses and packed keys are a few hundred
 * bytes on TCP and a few KiB with many RDMA devices. */
#define UCX_CARD_MAX ((size_t)1 << 20)

/* What a PE tells the others about itself: its worker's address, then a packed remote key
 * per segment, and where the segments are mapped in its process. */
typedef struct {
    uint32_t addr_len;
    uint32_t rkey_len[SHMEMI_SEG_COUNT];
    uint64_t base[SHMEMI_SEG_COUNT];
} ucx_card_header_t;

#define UCX_FAIL(st, code, ...) ((st)->host->fail((code), __VA_ARGS__))

static int ucs_fail(ucx_state_t *st, ucs_status_t status, const char *what)
{
    return UCX_FAIL(st, ACLSHMEM_INNER_ERROR, "PE %d: UCX %s failed: %s", st->inst->my_pe, what,
                    ucs_status_string(status));
}

/* ---- context, worker, registration ---------------------------------------------------- */

static int open_worker(ucx_state_t *st)
{
    ucp_config_t *config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &config); /* the UCX_* environment */
    if (status != UCS_OK)
        return ucs_fail(st, status, "reading its configuration (UCX_* variables)");
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP,
        .estimated_num_eps = (size_t)st->inst->n_pes,
    };
    status = ucp_init(&params, config, &st->context);
    ucp_config_release(config);
    if (status != UCS_OK)
        return ucs_fail(st, status, "initialisation");
    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    status = ucp_worker_create(st->context, &wparams, &st->worker);
    if (status != UCS_OK)
        return ucs_fail(st, status, "worker creation");
    status = ucp_worker_get_efd(st->worker, &st->worker_fd);
    if (status != UCS_OK)
        return ucs_fail(st, status, "worker event fd");
    return ACLSHMEM_SUCCESS;
}

/* Registers the segments as they are: sparse memfd mappings.  On TCP this pins nothing; an
 * RDMA device registers (and pins) the whole reservation, as every OpenSHMEM over RDMA does. */
static int map_segments(ucx_state_t *st)
{
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        const shmemi_segment_t *seg = &st->inst->heaps.seg[s];
        ucp_mem_map_params_t params = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            .address = seg->base,
            .length = seg->size,
        };
        ucs_status_t status = ucp_mem_map(st->context, &params, &st->memh[s]);
        if (status != UCS_OK)
            return ucs_fail(st, status, "registration of a symmetric segment");
    }
    return ACLSHMEM_SUCCESS;
}

/* ---- the exchange ---------------------------------------------------------------------- */

/* This PE's card in a malloc'd buffer. */
static int make_card(ucx_state_t *st, uint8_t **card, size_t *len)
{
    ucp_address_t *addr;
    size_t addr_len;
    ucs_status_t status = ucp_worker_get_address(st->worker, &addr, &addr_len);
    if (status != UCS_OK)
        return ucs_fail(st, status, "worker address");
    void *rkey[SHMEMI_SEG_COUNT] = {0};
    size_t rkey_len[SHMEMI_SEG_COUNT] = {0};
    ucx_card_header_t header = {.addr_len = (uint32_t)addr_len};
    size_t total = sizeof(header) + addr_len;
    int rc = ACLSHMEM_SUCCESS;
    for (int s = 0; s < SHMEMI_SEG_COUNT && rc == ACLSHMEM_SUCCESS; s++) {
        status = ucp_rkey_pack(st->context, st->memh[s], &rkey[s], &rkey_len[s]);
        if (status != UCS_OK) {
            rc = ucs_fail(st, status, "remote key packing");
            break;
        }
        header.rkey_len[s] = (uint32_t)rkey_len[s];
        header.base[s] = (uint64_t)(uintptr_t)st->inst->heaps.seg[s].base;
        total += rkey_len[s];
    }
    uint8_t *out = rc == ACLSHMEM_SUCCESS ? malloc(total) : NULL;
    if (rc == ACLSHMEM_SUCCESS && !out)
        rc = UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    if (out) {
        uint8_t *p = out;
        memcpy(p, &header, sizeof(header));
        p += sizeof(header);
        memcpy(p, addr, addr_len);
        p += addr_len;
        for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
            memcpy(p, rkey[s], rkey_len[s]);
            p += rkey_len[s];
        }
    }
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (rkey[s])
            ucp_rkey_buffer_release(rkey[s]);
    ucp_worker_release_address(st->worker, addr);
    *card = out;
    *len = total;
    return rc;
}

/* Checks that a card of card_len bytes (padded to len) describes itself consistently. */
static int check_card(ucx_state_t *st, int pe, const uint8_t *card, uint64_t card_len, ucx_card_header_t *h)
{
    if (card_len < sizeof(*h) || card_len > UCX_CARD_MAX)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card of %llu bytes", pe,
                        (unsigned long long)card_len);
    memcpy(h, card, sizeof(*h));
    uint64_t need = sizeof(*h) + (uint64_t)h->addr_len;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        need += h->rkey_len[s];
        if (h->rkey_len[s] == 0 || h->base[s] == 0)
            return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card without segment %d", pe, s);
    }
    if (h->addr_len == 0 || need > card_len)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR,
                        "PE %d sent a UCX card whose parts (%llu bytes) do not fit its %llu bytes", pe,
                        (unsigned long long)need, (unsigned long long)card_len);
    return ACLSHMEM_SUCCESS;
}

static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    ucx_peer_t *peer = arg;
    int expected = UCS_OK;
    atomic_compare_exchange_strong(&peer->failure, &expected, (int)status);
}

static int connect_peer(ucx_state_t *st, ucx_peer_t *peer, const uint8_t *card)
{
    ucx_card_header_t h;
    memcpy(&h, card, sizeof(h));
    const uint8_t *p = card + sizeof(h);
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)p,
        /* Operations to a PE that died complete with an error instead of hanging. */
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = on_peer_error, .arg = peer},
    };
    ucs_status_t status = ucp_ep_create(st->worker, &params, &peer->ep);
    if (status != UCS_OK)
        return ucs_fail(st, status, "connection to a PE on another node");
    p += h.addr_len;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        status = ucp_ep_rkey_unpack(peer->ep, p, &peer->rkey[s]);
        if (status != UCS_OK)
            return ucs_fail(st, status, "remote key unpacking");
        peer->base[s] = h.base[s];
        p += h.rkey_len[s];
    }
    return ACLSHMEM_SUCCESS;
}

/* Collective: every PE's card to every PE (two rounds: the lengths, then the cards padded
 * to the longest), then an endpoint and keys for each PE on another node. */
static int exchange_cards(ucx_state_t *st)
{
    shmemi_instance_t *inst = st->inst;
    uint8_t *mine = NULL, *all = NULL;
    uint64_t *lens = calloc((size_t)inst->n_pes, sizeof(*lens));
    size_t my_len = 0;
    int rc = lens ? make_card(st, &mine, &my_len) : UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    uint64_t len64 = my_len, longest = 0;
    if (rc == ACLSHMEM_SUCCESS)
        rc = st->host->allgather(inst, UCX_KEY_CARD_LEN, &len64, sizeof(len64), lens);
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++) {
        if (lens[pe] < sizeof(ucx_card_header_t) || lens[pe] > UCX_CARD_MAX)
            rc = UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d announced a UCX card of %llu bytes", pe,
                          (unsigned long long)lens[pe]);
        longest = lens[pe] > longest ? lens[pe] : longest;
    }
    uint8_t *padded = rc == ACLSHMEM_SUCCESS ? calloc(1, longest) : NULL;
    all = padded ? malloc((size_t)inst->n_pes * longest) : NULL;
    if (rc == ACLSHMEM_SUCCESS && !all)
        rc = UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    if (rc == ACLSHMEM_SUCCESS) {
        memcpy(padded, mine, my_len);
        rc = st->host->allgather(inst, UCX_KEY_CARD, padded, longest, all);
    }
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++) {
        if (inst->heaps.same_node[pe])
            continue;
        const uint8_t *card = all + (size_t)pe * longest;
        ucx_card_header_t h;
        rc = check_card(st, pe, card, lens[pe], &h);
        if (rc == ACLSHMEM_SUCCESS)
            rc = connect_peer(st, &st->peers[pe], card);
    }
    free(padded);
    free(all);
    free(mine);
    free(lens);
    return rc;
}

/* ---- progress ---------------------------------------------------------------------------- */

unsigned shmemi_ucx_progress_once(ucx_state_t *st)
{
    if (pthread_mutex_trylock(&st->lock) != 0)
        return 0; /* another thread is progressing the worker right now */
    unsigned events = 0;
    while (ucp_worker_progress(st->worker))
        events++;
    pthread_mutex_unlock(&st->lock);
    return events;
}

void shmemi_ucx_progress(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    atomic_fetch_add_explicit(&st->polls, 1, memory_order_relaxed);
    if (shmemi_ucx_progress_once(st))
        st->host->wake_local(inst); /* other threads of this PE may sleep on the doorbell */
}

/* Progresses, then arms the worker's event fd: UCS_OK (armed, nothing pending) or
 * UCS_ERR_BUSY (more to do). */
static ucs_status_t progress_and_arm(ucx_state_t *st, unsigned *events)
{
    pthread_mutex_lock(&st->lock);
    while (ucp_worker_progress(st->worker))
        (*events)++;
    ucs_status_t status = ucp_worker_arm(st->worker);
    pthread_mutex_unlock(&st->lock);
    return status;
}

static void wake_thread(ucx_state_t *st)
{
    atomic_fetch_add(&st->park, 1);
    syscall(SYS_futex, &st->park, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void shmemi_ucx_before_sleep(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    atomic_store(&st->needed, 1);
    wake_thread(st);
}

/* Parks the progress thread for PARK_MS while the PE's own threads poll: 1 when it parked
 * (polls moved since *seen), 0 when the thread must progress.  A park that outlives the
 * polling (a waiter went back to user code) ends by its timeout. */
#define PARK_MS 1
static int park_while_polled(ucx_state_t *st, unsigned *seen)
{
    unsigned polls = atomic_load(&st->polls);
    if (atomic_exchange(&st->needed, 0) || polls == *seen) {
        *seen = polls;
        return 0;
    }
    *seen = polls;
    unsigned word = atomic_load(&st->park);
    struct timespec timeout = {0, PARK_MS * 1000000L};
    syscall(SYS_futex, &st->park, FUTEX_WAIT_PRIVATE, word, &timeout, NULL, 0);
    return 1;
}

static void *progress_main(void *arg)
{
    ucx_state_t *st = arg;
    unsigned seen = atomic_load(&st->polls);
    while (!atomic_load(&st->stopping)) {
        if (park_while_polled(st, &seen))
            continue;
        unsigned events = 0;
        ucs_status_t status = progress_and_arm(st, &events);
        if (events)
            st->host->wake_local(st->inst);
        if (status == UCS_ERR_BUSY)
            continue;
        /* Armed: the fd turns readable when the network brings something.  The timeout
         * only matters for transports that write without an event (RDMA): their writes
         * are seen by polling waiters at once and by sleeping ones within the futex's
         * own timeout. */
        struct pollfd fds[2] = {{.fd = st->worker_fd, .events = POLLIN}, {.fd = st->stop_fd, .events = POLLIN}};
        (void)poll(fds, 2, status == UCS_OK ? 100 : 1);
    }
    return NULL;
}

static int start_thread(ucx_state_t *st)
{
    st->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (st->stop_fd < 0)
        return UCX_FAIL(st, ACLSHMEM_INNER_ERROR, "eventfd: %s", strerror(errno));
    int err = pthread_create(&st->thread, NULL, progress_main, st);
    if (err)
        return UCX_FAIL(st, ACLSHMEM_INNER_ERROR, "cannot start the UCX progress thread: %s", strerror(err));
    st->thread_started = 1;
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
    pthread_mutex_init(&st->lock, NULL);
    inst->remote = st;
    st->peers = calloc((size_t)inst->n_pes, sizeof(*st->peers));
    if (!st->peers)
        return host->fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    for (int pe = 0; pe < inst->n_pes; pe++)
        st->peers[pe].pe = pe;
    SHMEMI_TRY(open_worker(st));
    SHMEMI_TRY(map_segments(st));
    SHMEMI_TRY(exchange_cards(st));
    return start_thread(st);
}

/* Closes an endpoint without asking the peer (it may be gone), progressing a bounded time. */
static void close_endpoint(ucx_state_t *st, ucp_ep_h ep)
{
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &param);
    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    for (int i = 0; i < 100000 && ucp_request_check_status(req) == UCS_INPROGRESS; i++)
        ucp_worker_progress(st->worker);
    ucp_request_free(req);
}

void shmemi_ucx_stop(shmemi_instance_t *inst)
{
    ucx_state_t *st = ucx_state(inst);
    if (!st)
        return;
    if (st->thread_started) {
        atomic_store(&st->stopping, 1);
        wake_thread(st);
        uint64_t one = 1;
        ssize_t wrote = write(st->stop_fd, &one, sizeof(one));
        (void)wrote;
        pthread_join(st->thread, NULL);
    }
    if (st->stop_fd >= 0)
        close(st->stop_fd);
    pthread_mutex_lock(&st->lock);
    for (int pe = 0; st->peers && pe < inst->n_pes; pe++) {
        ucx_peer_t *peer = &st->peers[pe];
        for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
            if (peer->rkey[s])
                ucp_rkey_destroy(peer->rkey[s]);
        if (peer->ep)
            close_endpoint(st, peer->ep);
    }
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (st->memh[s])
            ucp_mem_unmap(st->context, st->memh[s]);
    if (st->worker)
        ucp_worker_destroy(st->worker);
    if (st->context)
        ucp_cleanup(st->context);
    pthread_mutex_unlock(&st->lock);
    pthread_mutex_destroy(&st->lock);
    free(st->peers);
    free(st);
    inst->remote = NULL;
}

/* ---- the plug-in's entry ------------------------------------------------------------------ */

static char plugin_name[64];

static const shmemi_plugin_t ucx_plugin = {
    .abi = SHMEMI_PLUGIN_ABI,
    .version = SHMEMI_BUILD_VERSION,
    .name = plugin_name,
    .ops = &shmemi_ucx_ops,
    .start = shmemi_ucx_start,
    .progress = shmemi_ucx_progress,
    .before_sleep = shmemi_ucx_before_sleep,
    .stop = shmemi_ucx_stop,
};

__attribute__((visibility("default"))) const shmemi_plugin_t *shmemi_transport_plugin(void)
{
    snprintf(plugin_name, sizeof(plugin_name), "UCX %s", ucp_get_version_string());
    return &ucx_plugin;
}
