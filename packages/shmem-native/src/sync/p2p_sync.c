/* Point-to-point synchronisation: waiting on and testing local symmetric variables, for every
 * type of ACLSHMEM_P2P_SYNC_TYPES.  All thirteen families of a type reduce to one query over
 * a set of variables (ALL must match, ANY one, SOME as many as match), evaluated once for
 * test_* or by shmemi_wait for wait_*, so the only per-type code is the comparison.
 * Variables are read with atomic loads: other PEs write them while we look. */
#include <stdint.h>
#include <string.h>

#include "sync/p2p_sync.h"

#include "aclshmem/p2p_sync.h"
#include "base/error.h"
#include "core/wait.h"
#include "prof/prof.h"
#include "rma/rma.h"
#include "sync/signal.h"

struct shmemi_p2p_type {
    size_t size;
    /* Loads *ivar atomically and compares it with *value. */
    int (*match)(const void *ivar, int cmp, const void *value);
    /* The ready function of a wait on one variable with no status (wait, wait_until and
     * the one-element sets): the load and the comparison in one call instead of evaluate's
     * loop and a second indirect call (measured: a wait_until whose variable already holds
     * went from 19.5-25.5 ns to 15.4-15.9 ns). */
    int (*one)(void *ctx);
};

/* The query kinds of sync/p2p_sync.h, by their short names. */
static const shmemi_p2p_kind_t P2P_ALL = SHMEMI_P2P_ALL, P2P_ANY = SHMEMI_P2P_ANY, P2P_SOME = SHMEMI_P2P_SOME;

typedef struct p2p_query p2p_query_t;

#define COMPARE(cmp, a, b)                                                                         \
    ((cmp) == ACLSHMEM_CMP_EQ ? (a) == (b) : (cmp) == ACLSHMEM_CMP_NE ? (a) != (b)                 \
     : (cmp) == ACLSHMEM_CMP_GT ? (a) > (b) : (cmp) == ACLSHMEM_CMP_GE ? (a) >= (b)                \
     : (cmp) == ACLSHMEM_CMP_LT ? (a) < (b) : (a) <= (b))

struct p2p_query {
    const shmemi_p2p_type_t *type;
    const uint8_t *ivars;
    size_t nelems;
    const int *status;
    int cmp;
    const uint8_t *values; /* one per variable (vector forms) or one for all */
    size_t value_step;     /* bytes from one value to the next: type size or 0 */
    shmemi_p2p_kind_t kind;
    size_t *indices; /* SOME: the matching indices */
    size_t result;   /* ALL: 1 or 0; ANY: an index or SIZE_MAX; SOME: a count */
    size_t start;    /* ANY: the index the scan begins at (see any_cursor) */
};

#define DEFINE_P2P_TYPE(NAME, TYPE)                                                                \
    static int match_##NAME(const void *ivar, int cmp, const void *value)                          \
    {                                                                                              \
        TYPE now, want;                                                                            \
        __atomic_load((const TYPE *)ivar, &now, __ATOMIC_ACQUIRE);                                 \
        memcpy(&want, value, sizeof(want));                                                        \
        return COMPARE(cmp, now, want);                                                            \
    }                                                                                              \
    static int one_##NAME(void *ctx)                                                               \
    {                                                                                              \
        p2p_query_t *q = ctx;                                                                      \
        q->result = (size_t)match_##NAME(q->ivars, q->cmp, q->values);                             \
        return (int)q->result;                                                                     \
    }                                                                                              \
    static const shmemi_p2p_type_t type_##NAME = {sizeof(TYPE), match_##NAME, one_##NAME};
ACLSHMEM_P2P_SYNC_TYPES(DEFINE_P2P_TYPE)

const shmemi_p2p_type_t *shmemi_p2p_int_type(size_t width, int is_signed)
{
    switch (width) {
    case 1:
        return is_signed ? &type_int8 : &type_uint8;
    case 2:
        return is_signed ? &type_int16 : &type_uint16;
    case 4:
        return is_signed ? &type_int32 : &type_uint32;
    case 8:
        return is_signed ? &type_int64 : &type_uint64;
    default:
        return NULL;
    }
}

/* One look at the variables (ALL or SOME, in index order); nonzero when a wait on them is
 * over.  A set with no included variable is over at once: ALL holds (1), SOME found none (0). */
static int evaluate(void *ctx)
{
    p2p_query_t *q = ctx;
    size_t included = 0, matched = 0;
    for (size_t i = 0; i < q->nelems; i++) {
        if (q->status && q->status[i])
            continue;
        included++;
        if (!q->type->match(q->ivars + i * q->type->size, q->cmp, q->values + i * q->value_step)) {
            if (q->kind == P2P_ALL) {
                q->result = 0;
                return 0;
            }
            continue;
        }
        if (q->kind == P2P_SOME)
            q->indices[matched] = i;
        matched++;
    }
    q->result = q->kind == P2P_ALL ? 1 : matched;
    return q->kind == P2P_ALL || matched > 0 || included == 0;
}

/* One look for ANY: the first included variable that holds, scanning from q->start round to
 * q->start - 1; SIZE_MAX if none.  A set with no included variable is over at once. */
static int evaluate_any(void *ctx)
{
    p2p_query_t *q = ctx;
    size_t included = 0;
    for (size_t k = 0, i = q->start; k < q->nelems; k++, i = i + 1 == q->nelems ? 0 : i + 1) {
        if (q->status && q->status[i])
            continue;
        included++;
        if (q->type->match(q->ivars + i * q->type->size, q->cmp, q->values + i * q->value_step)) {
            q->result = i;
            return 1;
        }
    }
    q->result = SIZE_MAX;
    return included == 0;
}

/* ---- where the next ANY scan of an array begins --------------------------------------------
 * OpenSHMEM (test_any, wait_until_any): if entry i satisfies the condition, a series of calls
 * must eventually return i.  A scan that always began at 0 would return the lowest entry that
 * holds for ever.  So each scan begins just after the index the previous scan of the same
 * array returned and wraps around: on an array whose entries all hold, calls return 0, 1, 2,
 * ... in turn, and an entry that holds is returned within nelems calls.
 *
 * The positions are kept per thread, for the last ANY_CURSORS arrays the thread scanned (by
 * address; the least recently used is forgotten, and its next scan begins at 0).
 * - Per thread rather than one atomic cursor per instance: the hot path takes no lock and
 *   shares no cache line between threads that poll, and each thread's own series of calls is
 *   fair by itself (stream workers and kernel blocks are threads of their own).  A per-
 *   instance cursor would let one thread's calls move another's start and gains nothing.
 * - Per array rather than one cursor for all: with a single cursor, a loop polling two arrays
 *   in turn starts each scan where the other array's ended, and can return the same entry of
 *   each for ever (4 entries each: 0, 2, 0, 2, ...). */
#define ANY_CURSORS 8

typedef struct {
    const void *ivars;
    size_t next;       /* where the next scan of ivars begins (taken modulo nelems) */
    uint64_t last_use; /* this thread's call count at the last scan; 0: never used */
} any_cursor_t;

static _Thread_local any_cursor_t any_cursors[ANY_CURSORS];
static _Thread_local uint64_t any_calls;

static any_cursor_t *any_cursor(const void *ivars)
{
    any_cursor_t *oldest = &any_cursors[0];
    any_calls++;
    for (int i = 0; i < ANY_CURSORS; i++) {
        any_cursor_t *c = &any_cursors[i];
        if (c->ivars == ivars && c->last_use) {
            c->last_use = any_calls;
            return c;
        }
        if (c->last_use < oldest->last_use)
            oldest = c;
    }
    *oldest = (any_cursor_t){ivars, 0, any_calls};
    return oldest;
}

int shmemi_cmp_check(const char *api, int cmp)
{
    if (cmp < ACLSHMEM_CMP_EQ || cmp > ACLSHMEM_CMP_LE)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: cmp %d is not a comparison (ACLSHMEM_CMP_EQ..ACLSHMEM_CMP_LE, 0..5)", api, cmp);
    return ACLSHMEM_SUCCESS;
}

/* Variables must be aligned (atomic loads) and in this PE's symmetric heaps (where remote
 * writes ring the doorbell that wakes the wait). */
static int check_local(shmemi_instance_t *inst, const char *api, const void *addr, size_t nelems, size_t size)
{
    if (nelems > SIZE_MAX / size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %zu variables overflow size_t", api, nelems);
    if (!addr)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the variable address is NULL", api);
    if ((uintptr_t)addr % size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the variable address %p is not %zu-byte aligned", api,
                           addr, size);
    int seg;
    size_t offset;
    return shmemi_rma_resolve(inst, addr, nelems * size, inst->my_pe, api, &seg, &offset);
}

void shmemi_p2p(const char *api, const shmemi_p2p_type_t *type, int wait, shmemi_p2p_kind_t kind, void *ivars,
                size_t nelems, size_t *indices, const int *status, int cmp, const void *values, int vector,
                size_t *res_out, int *test_out)
{
    if (res_out)
        *res_out = kind == P2P_ANY ? SIZE_MAX : 0;
    if (test_out)
        *test_out = 0;
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || shmemi_cmp_check(api, cmp) != ACLSHMEM_SUCCESS)
        return;
    if (kind != P2P_ALL && !res_out) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: res_out is NULL", api);
        return;
    }
    if (kind == P2P_ALL && !wait && !test_out) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: res_out is NULL", api);
        return;
    }
    if (nelems > 0) {
        if (check_local(inst, api, ivars, nelems, type->size) != ACLSHMEM_SUCCESS)
            return;
        if (kind == P2P_SOME && !indices) {
            shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: indices is NULL", api);
            return;
        }
        if (vector && !values) {
            shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: cmp_values is NULL", api);
            return;
        }
    }
    p2p_query_t q = {type, ivars, nelems, status, cmp, values, vector ? type->size : 0, kind, indices, 0, 0};
    any_cursor_t *cursor = kind == P2P_ANY && nelems > 0 ? any_cursor(ivars) : NULL;
    if (cursor)
        q.start = cursor->next % nelems;
    int (*ready)(void *) = kind == P2P_ANY ? evaluate_any : evaluate;
    if (wait) {
        uint64_t start = shmemi_prof_begin(inst);
        int one = kind == P2P_ALL && nelems == 1 && !status;
        if (shmemi_wait(inst, one ? type->one : ready, &q) != ACLSHMEM_SUCCESS)
            return;
        shmemi_prof_end_frame(inst, SHMEMI_FRAME_WAIT, start);
    } else {
        ready(&q);
    }
    if (cursor && q.result != SIZE_MAX)
        cursor->next = q.result + 1;
    if (res_out)
        *res_out = q.result;
    if (test_out)
        *test_out = (int)q.result;
}

#define DEFINE_P2P_API(NAME, TYPE)                                                                             \
    void aclshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value)                                     \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until", &type_##NAME, 1, P2P_ALL, ivar, 1, NULL, NULL, cmp,        \
            &cmp_value, 0, NULL, NULL);                                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_wait(TYPE *ivar, TYPE cmp_value)                                                    \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait", &type_##NAME, 1, P2P_ALL, ivar, 1, NULL, NULL, ACLSHMEM_CMP_NE,  \
            &cmp_value, 0, NULL, NULL);                                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp,              \
                                          TYPE cmp_value)                                                      \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_all", &type_##NAME, 1, P2P_ALL, ivars, nelems, NULL, status, \
            cmp, &cmp_value, 0, NULL, NULL);                                                                   \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp,              \
                                          TYPE cmp_value, size_t *res_out)                                     \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_any", &type_##NAME, 1, P2P_ANY, ivars, nelems, NULL, status, \
            cmp, &cmp_value, 0, res_out, NULL);                                                                \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems, size_t *indices,                        \
                                           const int *status, int cmp, TYPE cmp_value, size_t *res_out)        \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_some", &type_##NAME, 1, P2P_SOME, ivars, nelems, indices,    \
            status, cmp, &cmp_value, 0, res_out, NULL);                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status,                \
                                                 int cmp, TYPE *cmp_values)                                    \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_all_vector", &type_##NAME, 1, P2P_ALL, ivars, nelems, NULL,  \
            status, cmp, cmp_values, 1, NULL, NULL);                                                           \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status,                \
                                                 int cmp, TYPE *cmp_values, size_t *res_out)                   \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_any_vector", &type_##NAME, 1, P2P_ANY, ivars, nelems, NULL,  \
            status, cmp, cmp_values, 1, res_out, NULL);                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices,                 \
                                                  const int *status, int cmp, TYPE *cmp_values,                \
                                                  size_t *res_out)                                             \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_wait_until_some_vector", &type_##NAME, 1, P2P_SOME, ivars, nelems,      \
            indices, status, cmp, cmp_values, 1, res_out, NULL);                                               \
    }                                                                                                          \
    void aclshmem_##NAME##_test(TYPE *ivars, int cmp, TYPE cmp_value, int *res_out)                            \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test", &type_##NAME, 0, P2P_ALL, ivars, 1, NULL, NULL, cmp, &cmp_value, \
            0, NULL, res_out);                                                                                 \
    }                                                                                                          \
    void aclshmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp,                    \
                                    TYPE cmp_value, size_t *res_out)                                           \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test_any", &type_##NAME, 0, P2P_ANY, ivars, nelems, NULL, status, cmp,  \
            &cmp_value, 0, res_out, NULL);                                                                     \
    }                                                                                                          \
    void aclshmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices, const int *status,           \
                                     int cmp, TYPE cmp_value, size_t *res_out)                                 \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test_some", &type_##NAME, 0, P2P_SOME, ivars, nelems, indices, status,  \
            cmp, &cmp_value, 0, res_out, NULL);                                                                \
    }                                                                                                          \
    void aclshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,             \
                                           TYPE *cmp_values, int *res_out)                                     \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test_all_vector", &type_##NAME, 0, P2P_ALL, ivars, nelems, NULL,        \
            status, cmp, cmp_values, 1, NULL, res_out);                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,             \
                                           TYPE *cmp_values, size_t *res_out)                                  \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test_any_vector", &type_##NAME, 0, P2P_ANY, ivars, nelems, NULL,        \
            status, cmp, cmp_values, 1, res_out, NULL);                                                        \
    }                                                                                                          \
    void aclshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,                       \
                                            const int *status, int cmp, TYPE *cmp_values,                      \
                                            size_t *res_out)                                                   \
    {                                                                                                          \
        shmemi_p2p("aclshmem_" #NAME "_test_some_vector", &type_##NAME, 0, P2P_SOME, ivars, nelems, indices,   \
            status, cmp, cmp_values, 1, res_out, NULL);                                                        \
    }
ACLSHMEM_P2P_SYNC_TYPES(DEFINE_P2P_API)

/* ---- signals ------------------------------------------------------------ */

int shmemi_signal_wait_check(shmemi_instance_t *inst, const char *api, const int32_t *sig_addr, int cmp)
{
    SHMEMI_TRY(shmemi_cmp_check(api, cmp));
    return check_local(inst, api, sig_addr, 1, sizeof(int32_t));
}

/* A wait on a signal word of TYPE (int32_t: the aclshmem API's; uint64_t: OpenSHMEM's): the
 * value that met the condition is the one the wait saw, not a later one. */
#define DEFINE_SIGNAL_WAIT(SUFFIX, TYPE)                                                             \
    typedef struct {                                                                                 \
        const TYPE *sig;                                                                             \
        int cmp;                                                                                     \
        TYPE want, seen;                                                                             \
    } signal_wait##SUFFIX##_t;                                                                       \
    static int signal_met##SUFFIX(void *ctx)                                                         \
    {                                                                                                \
        signal_wait##SUFFIX##_t *w = ctx;                                                            \
        w->seen = __atomic_load_n(w->sig, __ATOMIC_ACQUIRE);                                         \
        return COMPARE(w->cmp, w->seen, w->want);                                                    \
    }                                                                                                \
    int shmemi_signal_wait##SUFFIX(const char *api, TYPE *sig_addr, int cmp, TYPE cmp_val, TYPE *value) \
    {                                                                                                \
        *value = 0;                                                                                  \
        shmemi_instance_t *inst = shmemi_require(api);                                               \
        if (!inst)                                                                                   \
            return ACLSHMEM_NOT_INITED;                                                              \
        SHMEMI_TRY(shmemi_cmp_check(api, cmp));                                                      \
        SHMEMI_TRY(check_local(inst, api, sig_addr, 1, sizeof(TYPE)));                               \
        signal_wait##SUFFIX##_t w = {sig_addr, cmp, cmp_val, 0};                                     \
        uint64_t start = shmemi_prof_begin(inst);                                                    \
        int rc = shmemi_wait(inst, signal_met##SUFFIX, &w);                                          \
        shmemi_prof_end_frame(inst, SHMEMI_FRAME_WAIT, start);                                       \
        *value = w.seen;                                                                             \
        return rc;                                                                                   \
    }
DEFINE_SIGNAL_WAIT(, int32_t)
DEFINE_SIGNAL_WAIT(64, uint64_t)

int32_t aclshmem_signal_wait_until(int32_t *sig_addr, int cmp, int32_t cmp_val)
{
    int32_t value;
    shmemi_signal_wait("aclshmem_signal_wait_until", sig_addr, cmp, cmp_val, &value);
    return value;
}

uint64_t util_get_ffts_config(void)
{
    return 0; /* the cpu platform has no FFTS hardware to configure */
}
