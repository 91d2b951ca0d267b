/* What each PE tells the others before they connect (see ucx.h): its card, exchanged over
 * the control plane, which authenticates it (and by default encrypts it).  A card is read
 * as untrusted input all the same: a job member must not be able to crash another PE with
 * it, so every field is checked before use. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transport/ucx/ucx.h"

/* Control-plane keys of the exchange. */
#define UCX_KEY_CARD_LEN 0x5543580000000001ull
#define UCX_KEY_CARD 0x5543580000000002ull
#define UCX_KEY_FENCED 0x5543580000000003ull

/* The largest card accepted from a peer: worker addresses and packed keys are a few hundred
 * bytes on TCP and a few KiB with many RDMA devices. */
#define UCX_CARD_MAX ((size_t)1 << 20)

/* A card: this header, then the worker's address (addr_len bytes), the packed remote key of
 * each segment (RMA plane: rkey_len[s] bytes each; AM plane: none), then n_host_addrs
 * ucx_host_addr_t: the addresses its node's packets come from. */
typedef struct {
    uint32_t plane; /* ucx_plane_t: every PE must use the same */
    uint32_t addr_len;
    uint32_t rkey_len[SHMEMI_SEG_COUNT];
    uint32_t n_host_addrs;
    uint64_t base[SHMEMI_SEG_COUNT]; /* RMA plane: where its segments are mapped */
    uint8_t cap[SHMEMI_AM_CAP_LEN];  /* AM plane: its capability */
} ucx_card_header_t;

#define UCX_FAIL(st, code, ...) ((st)->host->fail((code), __VA_ARGS__))

static const char *plane_name(uint32_t plane)
{
    return plane == UCX_PLANE_AM ? "am" : plane == UCX_PLANE_RMA ? "rma" : "unknown";
}

/* ---- this PE's card ------------------------------------------------------------------------ */

typedef struct {
    void *rkey[SHMEMI_SEG_COUNT];
    size_t rkey_len[SHMEMI_SEG_COUNT];
} packed_keys_t;

/* Segment s is present (size > 0).  Every PE has the same segments: heaps_share checked
 * the data segment and the heaps' sizes before any transport starts. */
static int segment_present(const ucx_state_t *st, int s)
{
    return st->inst->heaps.seg[s].size > 0;
}

static int pack_keys(ucx_state_t *st, packed_keys_t *keys, ucx_card_header_t *h)
{
    for (int s = 0; s < SHMEMI_SEG_COUNT && st->plane == UCX_PLANE_RMA; s++) {
        if (!segment_present(st, s))
            continue;
        ucs_status_t status = ucp_rkey_pack(st->context, st->memh[s], &keys->rkey[s], &keys->rkey_len[s]);
        if (status != UCS_OK)
            return shmemi_ucx_fail(st, status, "remote key packing");
        h->rkey_len[s] = (uint32_t)keys->rkey_len[s];
        h->base[s] = (uint64_t)(uintptr_t)st->inst->heaps.seg[s].base;
    }
    return ACLSHMEM_SUCCESS;
}

/* This PE's card in a malloc'd buffer. */
static int make_card(ucx_state_t *st, uint8_t **card, size_t *len)
{
    ucp_address_t *addr;
    size_t addr_len;
    ucs_status_t status = ucp_worker_get_address(st->main.worker, &addr, &addr_len);
    if (status != UCS_OK)
        return shmemi_ucx_fail(st, status, "worker address");
    ucx_host_addr_t hosts[UCX_GUARD_MAX_HOST_ADDRS];
    ucx_card_header_t h = {.plane = st->plane, .addr_len = (uint32_t)addr_len};
    h.n_host_addrs = (uint32_t)ucx_host_addresses(hosts, UCX_GUARD_MAX_HOST_ADDRS);
    memcpy(h.cap, st->main.target.cap, sizeof(h.cap));
    packed_keys_t keys = {{0}, {0}};
    int rc = pack_keys(st, &keys, &h);
    size_t total = sizeof(h) + addr_len + h.n_host_addrs * sizeof(ucx_host_addr_t);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        total += keys.rkey_len[s];
    uint8_t *out = rc == ACLSHMEM_SUCCESS ? malloc(total) : NULL;
    if (rc == ACLSHMEM_SUCCESS && !out)
        rc = UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    if (out) {
        uint8_t *p = out;
        memcpy(p, &h, sizeof(h));
        p += sizeof(h);
        memcpy(p, addr, addr_len);
        p += addr_len;
        for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
            if (keys.rkey_len[s])
                memcpy(p, keys.rkey[s], keys.rkey_len[s]);
            p += keys.rkey_len[s];
        }
        memcpy(p, hosts, h.n_host_addrs * sizeof(ucx_host_addr_t));
    }
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (keys.rkey[s])
            ucp_rkey_buffer_release(keys.rkey[s]);
    ucp_worker_release_address(st->main.worker, addr);
    *card = out;
    *len = total;
    return rc;
}

/* ---- a peer's card ---------------------------------------------------------------------------- */

/* The parts of a checked card. */
typedef struct {
    ucx_card_header_t h;
    const uint8_t *addr;
    const uint8_t *rkey[SHMEMI_SEG_COUNT];
    const ucx_host_addr_t *hosts; /* unaligned in the card: read with memcpy */
} card_view_t;

static int check_plane_fields(ucx_state_t *st, int pe, const ucx_card_header_t *h)
{
    if (h->plane != (uint32_t)st->plane)
        return UCX_FAIL(st, ACLSHMEM_INVALID_PARAM,
                        "PE %d uses the UCX data plane \"%s\" and PE %d \"%s\": every PE of a job must use "
                        "the same (SHMEM_UCX_DATA_PLANE, or the same UCX_TLS on every node)",
                        pe, plane_name(h->plane), st->inst->my_pe, plane_name((uint32_t)st->plane));
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        int keyed = st->plane == UCX_PLANE_RMA && segment_present(st, s);
        if (keyed ? (h->rkey_len[s] == 0 || h->base[s] == 0) : (h->rkey_len[s] != 0 || h->base[s] != 0))
            return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card whose segment %d does not "
                            "fit the data plane \"%s\"", pe, s, plane_name(h->plane));
    }
    static const uint8_t zero[SHMEMI_AM_CAP_LEN];
    if (st->plane == UCX_PLANE_AM && memcmp(h->cap, zero, sizeof(zero)) == 0)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card without a capability", pe);
    return ACLSHMEM_SUCCESS;
}

static int check_host_families(ucx_state_t *st, int pe, const card_view_t *v)
{
    for (uint32_t i = 0; i < v->h.n_host_addrs; i++) {
        ucx_host_addr_t a;
        memcpy(&a, &v->hosts[i], sizeof(a));
        if (a.family != 4 && a.family != 6)
            return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card with a node address of family %u",
                            pe, a.family);
    }
    return ACLSHMEM_SUCCESS;
}

/* Checks that a card of card_len bytes describes itself consistently; fills v. */
static int read_card(ucx_state_t *st, int pe, const uint8_t *card, uint64_t card_len, card_view_t *v)
{
    if (card_len < sizeof(v->h) || card_len > UCX_CARD_MAX)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card of %llu bytes", pe,
                        (unsigned long long)card_len);
    memcpy(&v->h, card, sizeof(v->h));
    SHMEMI_TRY(check_plane_fields(st, pe, &v->h));
    if (v->h.n_host_addrs > UCX_GUARD_MAX_HOST_ADDRS)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d sent a UCX card with %u node addresses (at most %d)",
                        pe, v->h.n_host_addrs, UCX_GUARD_MAX_HOST_ADDRS);
    uint64_t need = sizeof(v->h) + (uint64_t)v->h.addr_len + (uint64_t)v->h.n_host_addrs * sizeof(ucx_host_addr_t);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        need += v->h.rkey_len[s];
    if (v->h.addr_len == 0 || need > card_len)
        return UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR,
                        "PE %d sent a UCX card whose parts (%llu bytes) do not fit its %llu bytes", pe,
                        (unsigned long long)need, (unsigned long long)card_len);
    const uint8_t *p = card + sizeof(v->h);
    v->addr = p;
    p += v->h.addr_len;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        v->rkey[s] = p;
        p += v->h.rkey_len[s];
    }
    v->hosts = (const ucx_host_addr_t *)(const void *)p;
    return check_host_families(st, pe, v);
}

/* ---- what the card says of its PE -------------------------------------------------------- */

/* Keeps what this PE needs of pe's card (the card itself stays in st->cards until stop):
 * every channel connects to pe's main worker with it. */
static void learn_peer(ucx_state_t *st, int pe, const card_view_t *v)
{
    ucx_peer_t *peer = &st->peers[pe];
    peer->address = v->addr;
    memcpy(peer->cap, v->h.cap, sizeof(peer->cap));
    for (int s = 0; s < SHMEMI_SEG_COUNT && st->plane == UCX_PLANE_RMA; s++) {
        if (!segment_present(st, s))
            continue;
        peer->packed_rkey[s] = v->rkey[s];
        peer->base[s] = v->h.base[s];
    }
}

/* ---- the exchange ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t *lens;  /* [n_pes] */
    size_t longest;  /* every card is padded to this */
    uint8_t *all;    /* [n_pes * longest] */
    card_view_t *view; /* [n_pes], for PEs on other nodes */
} cards_t;

/* Every PE's card to every PE: the lengths, then the cards padded to the longest. */
static int gather_cards(ucx_state_t *st, cards_t *c)
{
    shmemi_instance_t *inst = st->inst;
    uint8_t *mine = NULL, *padded = NULL;
    size_t my_len = 0;
    c->lens = calloc((size_t)inst->n_pes, sizeof(*c->lens));
    c->view = calloc((size_t)inst->n_pes, sizeof(*c->view));
    int rc = c->lens && c->view ? make_card(st, &mine, &my_len) : UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    uint64_t len64 = my_len;
    if (rc == ACLSHMEM_SUCCESS)
        rc = st->host->allgather(inst, UCX_KEY_CARD_LEN, &len64, sizeof(len64), c->lens);
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++) {
        if (c->lens[pe] < sizeof(ucx_card_header_t) || c->lens[pe] > UCX_CARD_MAX)
            rc = UCX_FAIL(st, ACLSHMEM_BOOTSTRAP_ERROR, "PE %d announced a UCX card of %llu bytes", pe,
                          (unsigned long long)c->lens[pe]);
        c->longest = c->lens[pe] > c->longest ? c->lens[pe] : c->longest;
    }
    padded = rc == ACLSHMEM_SUCCESS ? calloc(1, c->longest) : NULL;
    c->all = padded ? malloc((size_t)inst->n_pes * c->longest) : NULL;
    if (rc == ACLSHMEM_SUCCESS && !c->all)
        rc = UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    if (rc == ACLSHMEM_SUCCESS) {
        memcpy(padded, mine, my_len);
        rc = st->host->allgather(inst, UCX_KEY_CARD, padded, c->longest, c->all);
    }
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++)
        if (!inst->heaps.same_node[pe])
            rc = read_card(st, pe, c->all + (size_t)pe * c->longest, c->lens[pe], &c->view[pe]);
    free(padded);
    free(mine);
    return rc;
}

/* Opens UCX's listening sockets to the addresses of the PEs on other nodes, then waits until
 * every PE has done so (a SYN sent to a PE still fenced would be retried only a second
 * later). */
static int open_fence(ucx_state_t *st, const cards_t *c)
{
    shmemi_instance_t *inst = st->inst;
    size_t cap = (size_t)inst->n_pes * UCX_GUARD_MAX_HOST_ADDRS;
    ucx_host_addr_t *allowed = malloc(cap * sizeof(*allowed));
    if (!allowed)
        return UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    int n = 0;
    for (int pe = 0; pe < inst->n_pes; pe++) {
        for (uint32_t i = 0; !inst->heaps.same_node[pe] && i < c->view[pe].h.n_host_addrs; i++) {
            ucx_host_addr_t a;
            memcpy(&a, &c->view[pe].hosts[i], sizeof(a));
            int known = 0;
            for (int k = 0; k < n && !known; k++)
                known = memcmp(&allowed[k], &a, sizeof(a)) == 0;
            if (!known)
                allowed[n++] = a;
        }
    }
    char why[256];
    int rc = ucx_guard_open_to(&st->main.guard, allowed, n, why, sizeof(why)) == 0
                 ? ACLSHMEM_SUCCESS
                 : UCX_FAIL(st, ACLSHMEM_INNER_ERROR, "PE %d: %s", inst->my_pe, why);
    st->allowed = allowed; /* the fence of every context channel's sockets lets in the same */
    st->n_allowed = n;
    int32_t ok = rc == ACLSHMEM_SUCCESS, *all = calloc((size_t)inst->n_pes, sizeof(*all));
    if (!all)
        return UCX_FAIL(st, ACLSHMEM_MALLOC_FAILED, "out of memory");
    int agreed = st->host->allgather(inst, UCX_KEY_FENCED, &ok, sizeof(ok), all);
    for (int pe = 0; agreed == ACLSHMEM_SUCCESS && rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++)
        if (!all[pe])
            rc = UCX_FAIL(st, ACLSHMEM_INNER_ERROR, "PE %d could not set up the filter of its UCX sockets", pe);
    free(all);
    return rc != ACLSHMEM_SUCCESS ? rc : agreed;
}

int shmemi_ucx_exchange_cards(ucx_state_t *st)
{
    shmemi_instance_t *inst = st->inst;
    cards_t c = {0};
    int rc = gather_cards(st, &c);
    st->cards = c.all; /* the peers' records point into it */
    if (rc == ACLSHMEM_SUCCESS)
        rc = open_fence(st, &c);
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++) {
        if (inst->heaps.same_node[pe])
            continue;
        learn_peer(st, pe, &c.view[pe]);
        rc = shmemi_ucx_connect(&st->main, pe);
    }
    free(c.lens);
    free(c.view);
    return rc;
}
