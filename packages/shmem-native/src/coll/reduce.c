/* Reductions: reduce (every PE gets the result) and reduce-scatter (PE i gets block i).
 *
 * Each element of a result is computed from the same inputs in the same order wherever it
 * is computed, so every PE ends up with the same bits whatever the arithmetic (floating-point
 * sums depend on the order).  The work goes in pieces that fit the L1 cache: the
 * accumulators of a piece, then each input's piece combined into them, read through its
 * mapping when it shares this node.  Inputs on other nodes are fetched a block of up to
 * FETCH_BYTES at a time, one get each (a get is a network round trip: in 8 KiB pieces a
 * 4 MiB input took 21.8 ms to fetch over TCP between two namespaces, in one get 2.6 ms),
 * in two buffers: the gets of the next block travel while the current one is reduced.
 * Blocks of 256 KiB rather than 1 MiB (likely: both buffers stay in the L2 cache between
 * the reply's copy and the reduction): a 2x1 all-reduce of 8 MiB took 4.2 ms at best against
 * 6.5 ms with 1 MiB (alternating runs over TCP between two namespaces; 4 MiB: 2.0 against
 * 3.0 ms).  On that 2-core machine, where the "network" is the same CPUs copying, fetching
 * the next block during the reduction measured no faster than fetching it after; it is
 * there for links that move data without this PE's CPU.
 *
 * reduce, large: the result is cut into one chunk per member; PE i reduces chunk i (over the
 * members in team order) and writes it into its own dest and every other member's (through
 * the mapping or with a put).  Two barriers in all: the exchange's (every source ready) and
 * the end (every chunk written).  In place (dest == source) is safe: chunk i of any PE's
 * source is read by PE i only, which overwrites it after reading it.
 * reduce, small (or fewer elements than members): every PE reduces the whole array itself
 * (no writes to other PEs; into a private buffer when in place, copied after the end barrier,
 * since the others still read this PE's source until then).
 * reduce, node by node (a team on several nodes with as many members on each, large data,
 * types reduced in their own arithmetic): the q members of a node cut the result into q
 * parts; member l reduces part l over its node's sources into its dest (the node's partial
 * result), the team meets, member l of each node reduces part l over the nodes' partials
 * (in node order) into a private buffer, the team meets again (nobody reads a partial any
 * more), and member l writes part l into its dest and its neighbours'; a barrier of the node
 * ends it.  Each byte crosses the network once per node and part, not once per PE.
 * reduce_local (dest and source local, work symmetric), large, on one node: before the
 * exchange each PE copies into its work the chunks that the others reduce (nobody reads a
 * work between collectives, and the exchange's barrier orders the copies before any read);
 * PE i reduces chunk i, its own part read from its source and the others' from their work,
 * stores the result in its dest and in chunk i of its own work (which nobody wrote), the
 * team meets, and each PE copies the other chunks' results from their owners' work into its
 * dest; a last barrier frees every work for reuse.  Per PE that moves (n - 1) / n of the
 * data in, the data once through the reduction and (n - 1) / n out, where copying it all
 * into a symmetric buffer, reducing there and copying it all out moves it about three
 * times.  Up to LOCAL_IN_WORK_BYTES: the whole source is copied into work before the
 * exchange, the reduce above runs in place there, and work goes to dest (one barrier fewer,
 * which small data cares about more).
 * reduce_local across nodes, node by node where it applies: after the exchange each PE copies
 * into its work the parts its node's other members reduce, the node meets, member l reduces
 * part l over its node (its own input read from its source) into part l of its work, the
 * team meets, member l reduces part l over the nodes' partials, the team meets, member l
 * stores part l's result in its dest and its work, the node meets, each copies the other
 * parts' results from its neighbours' work into its dest, and the node meets once more (its
 * work is free).  Half the copying of the whole source into work and of the whole result
 * out of it on two PEs a node.  Where node by node does not apply, the source goes into work
 * after the exchange, the team meets, and on as in work.
 * A team may mix the two calls (the exchange counts them as one): when any member reduces
 * local memory, all go reduce_local's way, and a member without work is read and written
 * through its symmetric source and dest instead. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"

#define PIECE_BYTES 8192         /* of accumulators: a piece stays in L1 */
#define FETCH_BYTES (256 << 10)  /* of an input on another node, fetched with one get */
#define SMALL_REDUCE_BYTES 4096  /* up to this, every PE reduces the whole array */
#define CHUNK_ALIGN 64           /* chunk boundaries fall on cache lines (of dest) */
#define LOCAL_IN_WORK_BYTES (256 << 10) /* reduce_local up to this: in work, one barrier fewer */

typedef struct {
    const shmemi_reducer_t *red;
    size_t piece;        /* elements per piece */
    uint8_t *acc;        /* piece accumulators */
    uint8_t *fetch;      /* two halves, each a block of each input on another node */
    size_t fetch_bytes;  /* its size */
} pieces_t;

/* What a reduction reads: members (NULL: the whole team in team order), their side, and
 * where element 0 is in it; own: this PE's input in its local memory instead (reduce_local). */
typedef struct {
    const int *members;
    int count;
    shmemi_coll_side_t side;
    size_t base;
    const uint8_t *own;
} inputs_t;

/* The elements [first, first + count) whose remote inputs are in buf, each input's block
 * stride elements after the previous one's. */
typedef struct {
    size_t first, count, stride;
    uint8_t *buf;
} block_t;

static int pieces_init(const shmemi_coll_run_t *r, pieces_t *p)
{
    p->red = shmemi_reducer(r->c->dtype, r->c->op);
    p->piece = PIECE_BYTES / p->red->acc_size;
    p->acc = malloc(PIECE_BYTES);
    p->fetch = NULL;
    p->fetch_bytes = 0;
    if (!p->acc)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    return ACLSHMEM_SUCCESS;
}

static void pieces_fini(pieces_t *p)
{
    free(p->acc);
    free(p->fetch);
}

/* Input k's member and its data at element at, or NULL when it is on another node. */
static const void *local_input(const shmemi_coll_run_t *r, const inputs_t *in, int k, size_t at)
{
    int i = in->members ? in->members[k] : k;
    if (i == r->me && in->own)
        return in->own + at * r->esize;
    return shmemi_coll_peer(r, i, in->side, in->base + at * r->esize);
}

static int remote_inputs(const shmemi_coll_run_t *r, const inputs_t *in)
{
    int remote = 0;
    for (int k = 0; k < in->count; k++)
        remote += local_input(r, in, k, 0) == NULL;
    return remote;
}

/* Starts fetching block b of every input on another node into b->buf: one get each, in
 * batch gets. */
static int fetch_start(const shmemi_coll_run_t *r, const inputs_t *in, const block_t *b, shmemi_gets_t *gets)
{
    size_t es = r->esize;
    for (int k = 0, j = 0; k < in->count; k++) {
        if (local_input(r, in, k, b->first))
            continue;
        int i = in->members ? in->members[k] : k;
        SHMEMI_TRY(shmemi_coll_pull_start(r, i, in->side, in->base + b->first * es,
                                          b->buf + (size_t)j++ * b->stride * es, b->count * es, gets));
    }
    return ACLSHMEM_SUCCESS;
}

/* p->acc = the reduction over the inputs of count elements from element at (inside block
 * b, whose remote inputs were fetched). */
static void reduce_piece(const shmemi_coll_run_t *r, const pieces_t *p, const inputs_t *in, const block_t *b,
                         size_t at, size_t count)
{
    for (int k = 0, j = 0; k < in->count; k++) {
        const void *data = local_input(r, in, k, at);
        if (!data)
            data = b->buf + ((size_t)j++ * b->stride + (at - b->first)) * r->esize;
        if (k == 0)
            p->red->load(p->acc, data, count);
        else
            p->red->combine(p->acc, data, count);
    }
}

/* Where a reduced range goes: out (its element first) and copy (unless NULL); share: also
 * every other member's dest at the same place. */
typedef struct {
    size_t first;
    uint8_t *out, *copy;
    int share;
} results_t;

/* Block b of the result (its remote inputs fetched), piece by piece into res.  Members on
 * this node get each piece while it is in the cache, those on other nodes the block in one
 * put. */
static int reduce_block(const shmemi_coll_run_t *r, pieces_t *p, const inputs_t *in, const block_t *b,
                        const results_t *res)
{
    size_t es = r->esize, n = (size_t)r->t->size;
    for (size_t at = b->first; at < b->first + b->count; at += p->piece) {
        size_t count = b->first + b->count - at < p->piece ? b->first + b->count - at : p->piece;
        uint8_t *to = res->out + (at - res->first) * es;
        reduce_piece(r, p, in, b, at, count);
        p->red->store(to, p->acc, count);
        if (res->copy)
            memcpy(res->copy + (at - res->first) * es, to, count * es);
        for (size_t k = 1; res->share && k < n; k++) {
            int i = (int)((r->me + k) % n);
            if (shmemi_coll_peer(r, i, SHMEMI_COLL_DST, at * es))
                SHMEMI_TRY(shmemi_coll_push(r, i, SHMEMI_COLL_DST, at * es, to, count * es));
        }
    }
    for (size_t k = 1; res->share && k < n; k++) {
        int i = (int)((r->me + k) % n);
        if (!shmemi_coll_peer(r, i, SHMEMI_COLL_DST, b->first * es))
            SHMEMI_TRY(shmemi_coll_push(r, i, SHMEMI_COLL_DST, b->first * es,
                                        res->out + (b->first - res->first) * es, b->count * es));
    }
    return ACLSHMEM_SUCCESS;
}

/* The fetch buffer: two halves of half bytes each. */
static int fetch_room(const shmemi_coll_run_t *r, pieces_t *p, size_t half)
{
    if (2 * half <= p->fetch_bytes)
        return ACLSHMEM_SUCCESS;
    uint8_t *room = realloc(p->fetch, 2 * half);
    if (!room)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    p->fetch = room;
    p->fetch_bytes = 2 * half;
    return ACLSHMEM_SUCCESS;
}

/* Half k % 2 of the fetch buffer (NULL when nothing is fetched). */
static uint8_t *fetch_half(const pieces_t *p, unsigned k, size_t half)
{
    return half ? p->fetch + (k % 2) * half : NULL;
}

/* Elements [first, last) of the result, reduced over the inputs, stored from out (element
 * first) on, and from copy on too unless it is NULL; share: also written to every other
 * member's dest at the same place.  Inputs on other nodes come a block at a time, one get
 * of up to FETCH_BYTES each (a whole number of pieces), block k into half k % 2 of
 * p->fetch: block k + 1's gets are started before block k is reduced, so the network moves
 * one while the CPU reduces the other. */
static int reduce_range(const shmemi_coll_run_t *r, pieces_t *p, const inputs_t *in, size_t first, size_t last,
                        uint8_t *out, uint8_t *copy, int share)
{
    const results_t res = {first, out, copy, share};
    size_t es = r->esize;
    int remote = remote_inputs(r, in);
    size_t stride = remote ? (FETCH_BYTES / es + p->piece - 1) / p->piece * p->piece : last - first;
    if (stride > last - first)
        stride = last - first;
    size_t half = (size_t)remote * stride * es;
    SHMEMI_TRY(fetch_room(r, p, half));
    shmemi_gets_t gets[2] = {{0}};
    block_t next = {first, stride, stride, fetch_half(p, 0, half)};
    int rc = remote && next.count ? fetch_start(r, in, &next, &gets[0]) : ACLSHMEM_SUCCESS;
    for (unsigned k = 0; rc == ACLSHMEM_SUCCESS && next.count; k++) {
        block_t b = next;
        size_t after = b.first + b.count;
        next = (block_t){after, last - after < stride ? last - after : stride, stride, fetch_half(p, k + 1, half)};
        if (remote && next.count)
            rc = fetch_start(r, in, &next, &gets[(k + 1) % 2]);
        if (rc == ACLSHMEM_SUCCESS && remote)
            rc = shmemi_coll_pulls_wait(r, &gets[k % 2]);
        if (rc == ACLSHMEM_SUCCESS)
            rc = reduce_block(r, p, in, &b, &res);
    }
    /* After a failure: nothing may still be on its way into p->fetch when it is freed. */
    int wait_rc = shmemi_coll_pulls_wait(r, &gets[0]);
    int wait2_rc = shmemi_coll_pulls_wait(r, &gets[1]);
    return rc != ACLSHMEM_SUCCESS ? rc : wait_rc != ACLSHMEM_SUCCESS ? wait_rc : wait2_rc;
}

static size_t chunk_unit_of(size_t esize)
{
    return esize >= CHUNK_ALIGN ? 1 : CHUNK_ALIGN / esize;
}

static size_t chunk_unit(const shmemi_coll_run_t *r)
{
    return chunk_unit_of(r->esize);
}

static int reduce_small(const shmemi_coll_run_t *r, pieces_t *p, size_t n)
{
    size_t bytes = n * r->esize;
    uint8_t *dst = r->c->dst;
    int in_place = (const void *)dst == r->c->src;
    uint8_t *out = in_place ? malloc(bytes) : dst;
    inputs_t all = {NULL, r->t->size, SHMEMI_COLL_SRC, 0, NULL};
    int rc = out ? reduce_range(r, p, &all, 0, n, out, NULL, 0) : shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int sync_rc = shmemi_coll_sync(r);
    if (in_place && out) {
        if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS)
            memcpy(dst, out, bytes);
        free(out);
    }
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

static int reduce_chunks(const shmemi_coll_run_t *r, pieces_t *p, size_t n, int rc)
{
    size_t first, last;
    shmemi_coll_part(n, r->t->size, r->me, chunk_unit(r), &first, &last);
    inputs_t all = {NULL, r->t->size, SHMEMI_COLL_SRC, 0, NULL};
    if (rc == ACLSHMEM_SUCCESS)
        rc = reduce_range(r, p, &all, first, last, (uint8_t *)r->c->dst + first * r->esize, NULL, 1);
    int sync_rc = shmemi_coll_sync(r); /* (also when this PE failed: the others wait for it) */
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

/* Node by node applies: several nodes, as many members on each, and an arithmetic in the
 * type itself (half and bfloat16 accumulate in float and must round once). */
static int by_node_applies(const shmemi_coll_run_t *r, size_t n)
{
    const shmemi_coll_topo_t *topo = r->topo;
    const shmemi_reducer_t *red = shmemi_reducer(r->c->dtype, r->c->op);
    if (!red || red->acc_size != r->esize || !shmemi_coll_hierarchical(r, n * r->esize))
        return 0;
    for (int g = 1; g < topo->nodes; g++)
        if (shmemi_coll_group_size(topo, g) != shmemi_coll_group_size(topo, 0))
            return 0;
    return 1;
}

/* Member l of a node's share of a reduction node by node: its part [first, last) of the
 * result, a private buffer for that part's result, and member l of every node (whose
 * partials of the part it reduces). */
typedef struct {
    size_t first, last;
    uint8_t *part;
    int *peers;
} node_part_t;

/* Makes np for this PE; rc: its state so far, which an allocation that failed turns into an
 * error (the PE still takes part). */
static int node_part_init(const shmemi_coll_run_t *r, size_t n, node_part_t *np, int rc)
{
    const shmemi_coll_topo_t *topo = r->topo;
    int g = topo->group[r->me], l = topo->local[r->me];
    shmemi_coll_part(n, shmemi_coll_group_size(topo, g), l, chunk_unit(r), &np->first, &np->last);
    np->part = malloc((np->last - np->first) * r->esize + 1);
    np->peers = malloc(sizeof(int) * (size_t)topo->nodes);
    if (rc == ACLSHMEM_SUCCESS && (!np->part || !np->peers))
        rc = shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    for (int h = 0; np->peers && h < topo->nodes; h++)
        np->peers[h] = shmemi_coll_group_member(topo, h, l);
    return rc;
}

static void node_part_fini(node_part_t *np)
{
    free(np->part);
    free(np->peers);
}

/* The node-by-node reduction, after pieces_init succeeded on this PE (rc: its result). */
static int reduce_by_node(const shmemi_coll_run_t *r, pieces_t *p, size_t n, int rc)
{
    const shmemi_coll_topo_t *topo = r->topo;
    int g = topo->group[r->me], q = shmemi_coll_group_size(topo, g);
    size_t es = r->esize;
    uint8_t *dst = r->c->dst;
    node_part_t np;
    rc = node_part_init(r, n, &np, rc);
    size_t first = np.first, last = np.last;
    inputs_t node = {topo->member + topo->start[g], q, SHMEMI_COLL_SRC, 0, NULL};
    inputs_t partials = {np.peers, topo->nodes, SHMEMI_COLL_DST, 0, NULL};
    if (rc == ACLSHMEM_SUCCESS) /* the node's partial result of part l, in dest */
        rc = reduce_range(r, p, &node, first, last, dst + first * es, NULL, 0);
    int sync_rc = shmemi_coll_sync(r);
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS) /* over the nodes' partials */
        rc = reduce_range(r, p, &partials, first, last, np.part, NULL, 0);
    int sync2_rc = shmemi_coll_sync(r); /* nobody reads a partial any more */
    for (int k = 0; rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS && sync2_rc == ACLSHMEM_SUCCESS && k < q;
         k++)
        rc = shmemi_coll_push(r, shmemi_coll_group_member(topo, g, k), SHMEMI_COLL_DST, first * es, np.part,
                              (last - first) * es);
    int node_rc = shmemi_coll_node_sync(r);
    node_part_fini(&np);
    int results[] = {rc, sync_rc, sync2_rc, node_rc};
    for (size_t k = 0; k < sizeof results / sizeof results[0]; k++)
        if (results[k] != ACLSHMEM_SUCCESS)
            return results[k];
    return ACLSHMEM_SUCCESS;
}

static int reduce_symmetric(const shmemi_coll_run_t *r)
{
    size_t n = r->c->nelems;
    pieces_t p = {0};
    int rc = pieces_init(r, &p);
    if (by_node_applies(r, n))
        rc = reduce_by_node(r, &p, n, rc);
    else if (rc == ACLSHMEM_SUCCESS && (n * r->esize <= SMALL_REDUCE_BYTES || n < (size_t)r->t->size))
        rc = reduce_small(r, &p, n);
    else
        rc = reduce_chunks(r, &p, n, rc);
    pieces_fini(&p);
    return rc;
}

int shmemi_coll_reducescatter(const shmemi_coll_run_t *r)
{
    size_t n = r->c->nelems;
    if (n == 0)
        return ACLSHMEM_SUCCESS;
    pieces_t p = {0};
    int rc = pieces_init(r, &p);
    inputs_t block = {NULL, r->t->size, SHMEMI_COLL_SRC, (size_t)r->me * n * r->esize, NULL};
    if (rc == ACLSHMEM_SUCCESS)
        rc = reduce_range(r, &p, &block, 0, n, r->c->dst, NULL, 0);
    int sync_rc = shmemi_coll_sync(r);
    pieces_fini(&p);
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

/* ---- reduce_local ---------------------------------------------------------------------- */

typedef enum { LOCAL_SMALL, LOCAL_IN_WORK, LOCAL_CHUNKS, LOCAL_ACROSS_NODES } local_way_t;

/* How a reduce_local of c goes, the same answer on every member of a matching call: in the
 * records (small), in place in work between copies (small enough), by chunks on one node, or
 * across nodes (node by node where that applies, decided after the exchange). */
static local_way_t local_way(const shmemi_team_t *t, const shmemi_coll_t *c)
{
    if (shmemi_coll_small(c, t))
        return LOCAL_SMALL;
    if (c->nelems * shmemi_dtype_size(c->dtype) <= LOCAL_IN_WORK_BYTES || c->nelems < (size_t)t->size)
        return LOCAL_IN_WORK;
    return t->on_one_node ? LOCAL_CHUNKS : LOCAL_ACROSS_NODES;
}

/* Copies into work the parts of src (n elements in parts parts) other than part mine. */
static void copy_other_parts(uint8_t *work, const uint8_t *src, size_t n, size_t es, int parts, int mine)
{
    size_t first, last;
    for (int k = 0; k < parts; k++) {
        shmemi_coll_part(n, parts, k, chunk_unit_of(es), &first, &last);
        if (k != mine && last > first)
            memcpy(work + first * es, src + first * es, (last - first) * es);
    }
}

void shmemi_coll_reduce_local_stage(const shmemi_team_t *t, const shmemi_coll_t *c)
{
    size_t es = shmemi_dtype_size(c->dtype);
    const uint8_t *src = c->src;
    uint8_t *work = c->work;
    switch (local_way(t, c)) {
    case LOCAL_IN_WORK:
        memcpy(work, src, c->nelems * es);
        break;
    case LOCAL_CHUNKS: /* the chunks the others reduce */
        copy_other_parts(work, src, c->nelems, es, t->size, t->my_idx);
        break;
    default: /* small: in the records; across nodes: after the exchange */
        break;
    }
}

/* reduce_local by chunks on one node (see the top of the file), after pieces_init (rc: its
 * result).  A PE without work (a reduce of symmetric memory in the same call) copied nothing
 * in: the others read its source and its dest as they read a work. */
static int reduce_local_chunks(const shmemi_coll_run_t *r, pieces_t *p, size_t n, int rc)
{
    size_t es = r->esize, first, last;
    uint8_t *dst = r->c->dst, *work = r->c->work;
    int size = r->t->size;
    shmemi_coll_part(n, size, r->me, chunk_unit(r), &first, &last);
    inputs_t all = {NULL, size, SHMEMI_COLL_SRC, 0, r->c->src};
    if (rc == ACLSHMEM_SUCCESS)
        rc = reduce_range(r, p, &all, first, last, dst + first * es, work ? work + first * es : NULL, 0);
    int out_rc = shmemi_coll_sync(r); /* every chunk's result is in its owner's dest (or work) */
    for (int k = 0; rc == ACLSHMEM_SUCCESS && out_rc == ACLSHMEM_SUCCESS && k < size; k++) {
        shmemi_coll_part(n, size, k, chunk_unit(r), &first, &last);
        if (k != r->me && last > first)
            rc = shmemi_coll_pull(r, k, SHMEMI_COLL_DST, first * es, dst + first * es, (last - first) * es);
    }
    int end_rc = shmemi_coll_sync(r); /* nobody reads another's memory any more */
    return rc != ACLSHMEM_SUCCESS ? rc : out_rc != ACLSHMEM_SUCCESS ? out_rc : end_rc;
}

/* reduce_local in work: the reduce of symmetric memory, in place in work on the PEs that
 * have one (their source is there already), then copied into dest. */
static int reduce_local_in_work(const shmemi_coll_run_t *r, size_t n)
{
    shmemi_coll_t in_work = *r->c;
    if (in_work.work) {
        in_work.dst = in_work.work;
        in_work.src = in_work.work;
    }
    shmemi_coll_run_t inner = *r;
    inner.c = &in_work;
    int rc = reduce_symmetric(&inner);
    if (rc == ACLSHMEM_SUCCESS && r->c->work)
        memcpy(r->c->dst, r->c->work, n * r->esize);
    return rc;
}

/* a, unless it is a success: then b. */
static int first_failure(int a, int b)
{
    return a != ACLSHMEM_SUCCESS ? a : b;
}

/* reduce_local node by node (see the top of the file), after pieces_init (rc: its result).
 * mine: where this PE's node partial and result of its part are read by the others (its
 * work; a member without work, its dest). */
static int reduce_local_by_node(const shmemi_coll_run_t *r, pieces_t *p, size_t n, int rc)
{
    const shmemi_coll_topo_t *topo = r->topo;
    int g = topo->group[r->me], l = topo->local[r->me], q = shmemi_coll_group_size(topo, g);
    size_t es = r->esize;
    uint8_t *dst = r->c->dst, *work = r->c->work, *mine = work ? work : dst;
    if (work)
        copy_other_parts(work, r->c->src, n, es, q, l);
    node_part_t np;
    rc = node_part_init(r, n, &np, rc);
    size_t first = np.first, last = np.last;
    inputs_t node = {topo->member + topo->start[g], q, SHMEMI_COLL_SRC, 0, work ? r->c->src : NULL};
    inputs_t partials = {np.peers, topo->nodes, SHMEMI_COLL_DST, 0, NULL};
    /* rc: this PE's own work, sync_rc: the first meeting that failed (every meeting is still
     * kept, so that the others are not left waiting); each step runs while both hold. */
    int sync_rc = shmemi_coll_node_sync(r); /* the neighbours' parts are in their work */
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS) /* the node's partial of part l */
        rc = reduce_range(r, p, &node, first, last, mine + first * es, NULL, 0);
    sync_rc = first_failure(sync_rc, shmemi_coll_sync(r));
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS) /* over the nodes' partials */
        rc = reduce_range(r, p, &partials, first, last, np.part, NULL, 0);
    sync_rc = first_failure(sync_rc, shmemi_coll_sync(r)); /* nobody reads a partial any more */
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS) {
        memcpy(dst + first * es, np.part, (last - first) * es);
        if (work)
            memcpy(work + first * es, np.part, (last - first) * es);
    }
    /* every part's result is where the neighbours read it */
    sync_rc = first_failure(sync_rc, shmemi_coll_node_sync(r));
    for (int k = 0; rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS && k < q; k++) {
        shmemi_coll_part(n, q, k, chunk_unit(r), &first, &last);
        if (k != l)
            rc = shmemi_coll_pull(r, shmemi_coll_group_member(topo, g, k), SHMEMI_COLL_DST, first * es,
                                  dst + first * es, (last - first) * es);
    }
    sync_rc = first_failure(sync_rc, shmemi_coll_node_sync(r)); /* nobody reads this PE's work any more */
    node_part_fini(&np);
    return first_failure(rc, sync_rc);
}

/* reduce_local across nodes where node by node does not apply: the source into work now
 * (the team then meets, since the others read it), and on as reduce_local in work. */
static int reduce_local_late_in_work(const shmemi_coll_run_t *r, size_t n)
{
    if (r->c->work)
        memcpy(r->c->work, r->c->src, n * r->esize);
    int sync_rc = shmemi_coll_sync(r);
    int rc = reduce_local_in_work(r, n);
    return sync_rc != ACLSHMEM_SUCCESS ? sync_rc : rc;
}

/* Whether some member reduces local memory (the whole team then takes reduce_local's way). */
static int any_local(const shmemi_coll_run_t *r)
{
    for (int i = 0; i < r->t->size; i++)
        if (r->all[i].kind == SHMEMI_COLL_REDUCE_LOCAL)
            return 1;
    return 0;
}

int shmemi_coll_reduce(const shmemi_coll_run_t *r)
{
    size_t n = r->c->nelems;
    if (n == 0)
        return ACLSHMEM_SUCCESS;
    if (!any_local(r))
        return reduce_symmetric(r);
    local_way_t way = local_way(r->t, r->c);
    if (way == LOCAL_SMALL || way == LOCAL_IN_WORK)
        return reduce_local_in_work(r, n);
    if (way == LOCAL_ACROSS_NODES && !by_node_applies(r, n))
        return reduce_local_late_in_work(r, n);
    pieces_t p = {0};
    int rc = pieces_init(r, &p);
    rc = way == LOCAL_CHUNKS ? reduce_local_chunks(r, &p, n, rc) : reduce_local_by_node(r, &p, n, rc);
    pieces_fini(&p);
    return rc;
}
