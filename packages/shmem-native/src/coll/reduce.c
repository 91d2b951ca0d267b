/* Reductions: reduce (every PE gets the result) and reduce-scatter (PE i gets block i).
 *
 * Each element of a result is computed by one PE, from the members' sources in team order,
 * so every PE ends up with the same bits whatever the arithmetic (floating-point sums
 * depend on the order).  The work goes in pieces that fit the L1 cache: the accumulators of
 * a piece, then each member's piece of source combined into them, read through its mapping
 * when it shares this node, else fetched with a get into a buffer of the same size.
 *
 * reduce, large: the result is cut into one chunk per member; PE i reduces chunk i and
 * writes it into its own dest and every other member's (through the mapping or with a put).
 * Two barriers in all: the exchange's (every source ready) and the end (every chunk
 * written).  In place (dest == source) is safe: chunk i of any PE's source is read by PE i
 * only, which overwrites it after reading it.
 * reduce, small (or fewer elements than members): every PE reduces the whole array itself
 * (no writes to other PEs; into a private buffer when in place, copied after the end barrier,
 * since the others still read this PE's source until then). */
#include <stdlib.h>
#include <string.h>

#include "coll/run.h"
#include "core/error.h"

#define PIECE_BYTES 8192         /* of accumulators: a piece stays in L1 */
#define SMALL_REDUCE_BYTES 4096  /* up to this, every PE reduces the whole array */
#define CHUNK_ALIGN 64           /* chunk boundaries fall on cache lines (of dest) */

typedef struct {
    const shmemi_reducer_t *red;
    size_t piece;   /* elements per piece */
    uint8_t *acc;   /* piece accumulators */
    uint8_t *fetch; /* piece of a member on another node */
} pieces_t;

static int pieces_init(const shmemi_coll_run_t *r, pieces_t *p)
{
    p->red = shmemi_reducer(r->c->dtype, r->c->op);
    p->piece = PIECE_BYTES / p->red->acc_size;
    p->acc = malloc(PIECE_BYTES);
    p->fetch = malloc(p->piece * r->esize);
    if (!p->acc || !p->fetch)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    return ACLSHMEM_SUCCESS;
}

static void pieces_fini(pieces_t *p)
{
    free(p->acc);
    free(p->fetch);
}

/* p->acc = the reduction, over the members, of count elements of source at byte offset off. */
static int reduce_piece(const shmemi_coll_run_t *r, const pieces_t *p, size_t off, size_t count)
{
    for (int i = 0; i < r->t->size; i++) {
        const void *in = shmemi_coll_peer(r, i, SHMEMI_COLL_SRC, off);
        if (!in) {
            SHMEMI_TRY(shmemi_coll_pull(r, i, SHMEMI_COLL_SRC, off, p->fetch, count * r->esize));
            in = p->fetch;
        }
        if (i == 0)
            p->red->load(p->acc, in, count);
        else
            p->red->combine(p->acc, in, count);
    }
    return ACLSHMEM_SUCCESS;
}

/* Elements [first, last) of the result: reduced from source at src_base + element offset,
 * stored at out (local) + element offset, then, when share, written to every other member's
 * dest at the same offset. */
static int reduce_range(const shmemi_coll_run_t *r, const pieces_t *p, size_t src_base, size_t first, size_t last,
                        uint8_t *out, int share)
{
    size_t es = r->esize;
    for (size_t at = first; at < last; at += p->piece) {
        size_t count = last - at < p->piece ? last - at : p->piece, off = at * es;
        SHMEMI_TRY(reduce_piece(r, p, src_base + off, count));
        p->red->store(out + off, p->acc, count);
        for (int k = 1; share && k < r->t->size; k++)
            SHMEMI_TRY(shmemi_coll_push(r, (r->me + k) % r->t->size, SHMEMI_COLL_DST, off, out + off, count * es));
    }
    return ACLSHMEM_SUCCESS;
}

/* The first element of member i's chunk of n elements (i == team size: the end), on a
 * cache-line boundary of dest: floor(n * i / size), computed without overflow. */
static size_t chunk_start(const shmemi_coll_run_t *r, int i, size_t n)
{
    size_t size = (size_t)r->t->size;
    if ((size_t)i == size)
        return n;
    size_t unit = r->esize >= CHUNK_ALIGN ? 1 : CHUNK_ALIGN / r->esize;
    size_t start = n / size * (size_t)i + n % size * (size_t)i / size;
    return start - start % unit;
}

static int reduce_small(const shmemi_coll_run_t *r, const pieces_t *p, size_t n)
{
    size_t bytes = n * r->esize;
    uint8_t *dst = r->c->dst;
    int in_place = (const void *)dst == r->c->src;
    uint8_t *out = in_place ? malloc(bytes) : dst;
    int rc = out ? reduce_range(r, p, 0, 0, n, out, 0) : shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int sync_rc = shmemi_coll_sync(r);
    if (in_place && out) {
        if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS)
            memcpy(dst, out, bytes);
        free(out);
    }
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

int shmemi_coll_reduce(const shmemi_coll_run_t *r)
{
    size_t n = r->c->nelems;
    if (n == 0)
        return ACLSHMEM_SUCCESS;
    pieces_t p = {0};
    int rc = pieces_init(r, &p);
    int small = n * r->esize <= SMALL_REDUCE_BYTES || n < (size_t)r->t->size;
    if (rc == ACLSHMEM_SUCCESS && small) {
        rc = reduce_small(r, &p, n);
    } else {
        /* (also when this PE cannot take part: it still meets the others at the end) */
        if (rc == ACLSHMEM_SUCCESS)
            rc = reduce_range(r, &p, 0, chunk_start(r, r->me, n), chunk_start(r, r->me + 1, n), r->c->dst, 1);
        int sync_rc = shmemi_coll_sync(r);
        rc = rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
    }
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
    if (rc == ACLSHMEM_SUCCESS)
        rc = reduce_range(r, &p, (size_t)r->me * n * r->esize, 0, n, r->c->dst, 0);
    int sync_rc = shmemi_coll_sync(r);
    pieces_fini(&p);
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}
