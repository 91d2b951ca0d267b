/* Point-to-point synchronization: every wait_until / test family of OpenSHMEM 1.5 over
 * SHMEMI_TYPES_P2P, each one query of sync/p2p_sync.c on the integer type of the same width
 * and signedness.  SHMEM_CMP_* have the values of the engine's comparisons. */
#include "openshmem/osh.h"
#include "sync/p2p_sync.h"

_Static_assert(SHMEM_CMP_EQ == ACLSHMEM_CMP_EQ && SHMEM_CMP_NE == ACLSHMEM_CMP_NE &&
                   SHMEM_CMP_GT == ACLSHMEM_CMP_GT && SHMEM_CMP_GE == ACLSHMEM_CMP_GE &&
                   SHMEM_CMP_LT == ACLSHMEM_CMP_LT && SHMEM_CMP_LE == ACLSHMEM_CMP_LE,
               "the OpenSHMEM comparisons are the engine's");

/* The engine's type of an integer TYPE (signed when -1 is below 1 in it). */
#define P2P_TYPE(TYPE) shmemi_p2p_int_type(sizeof(TYPE), (TYPE)-1 < (TYPE)1)

/* One wait or test: W = 1 waits.  Returns what the family returns (an index, a count or 1/0)
 * in res (size_t) or ok (int). */
#define QUERY(NAME, TYPE, W, KIND, OP, IVARS, N, INDICES, STATUS, VALUES, VECTOR, RES, OK)            \
    shmemi_p2p("shmem_" #NAME "_" #OP, P2P_TYPE(TYPE), W, KIND, IVARS, N, INDICES, STATUS, cmp, VALUES, \
               VECTOR, RES, OK)

#define DEFINE_WAITS(NAME, TYPE)                                                                      \
    void shmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value)                              \
    {                                                                                                \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ALL, wait_until, ivar, 1, NULL, NULL, &cmp_value, 0, NULL,   \
              NULL);                                                                                 \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until)                                                       \
    void shmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp,       \
                                       TYPE cmp_value)                                               \
    {                                                                                                \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ALL, wait_until_all, ivars, nelems, NULL, status, &cmp_value, \
              0, NULL, NULL);                                                                        \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_all)                                                   \
    size_t shmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp,     \
                                         TYPE cmp_value)                                             \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ANY, wait_until_any, ivars, nelems, NULL, status, &cmp_value, \
              0, &res, NULL);                                                                        \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_any)                                                   \
    size_t shmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems, size_t *indices,               \
                                          const int *status, int cmp, TYPE cmp_value)                \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_SOME, wait_until_some, ivars, nelems, indices, status,       \
              &cmp_value, 0, &res, NULL);                                                            \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_some)                                                  \
    void shmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status,         \
                                              int cmp, TYPE *cmp_values)                             \
    {                                                                                                \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ALL, wait_until_all_vector, ivars, nelems, NULL, status,     \
              cmp_values, 1, NULL, NULL);                                                            \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_all_vector)                                            \
    size_t shmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status,       \
                                                int cmp, TYPE *cmp_values)                           \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ANY, wait_until_any_vector, ivars, nelems, NULL, status,     \
              cmp_values, 1, &res, NULL);                                                            \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_any_vector)                                            \
    size_t shmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices,        \
                                                 const int *status, int cmp, TYPE *cmp_values)       \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_SOME, wait_until_some_vector, ivars, nelems, indices, status, \
              cmp_values, 1, &res, NULL);                                                            \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait_until_some_vector)

#define DEFINE_TESTS(NAME, TYPE)                                                                      \
    int shmem_##NAME##_test(TYPE *ivar, int cmp, TYPE cmp_value)                                     \
    {                                                                                                \
        int ok;                                                                                      \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_ALL, test, ivar, 1, NULL, NULL, &cmp_value, 0, NULL, &ok);   \
        return ok;                                                                                   \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test)                                                             \
    int shmem_##NAME##_test_all(TYPE *ivars, size_t nelems, const int *status, int cmp,              \
                                TYPE cmp_value)                                                      \
    {                                                                                                \
        int ok;                                                                                      \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_ALL, test_all, ivars, nelems, NULL, status, &cmp_value, 0,   \
              NULL, &ok);                                                                            \
        return ok;                                                                                   \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_all)                                                         \
    size_t shmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp,           \
                                   TYPE cmp_value)                                                   \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_ANY, test_any, ivars, nelems, NULL, status, &cmp_value, 0,   \
              &res, NULL);                                                                           \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_any)                                                         \
    size_t shmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices, const int *status,  \
                                    int cmp, TYPE cmp_value)                                         \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_SOME, test_some, ivars, nelems, indices, status, &cmp_value, \
              0, &res, NULL);                                                                        \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_some)                                                        \
    int shmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,       \
                                       TYPE *cmp_values)                                             \
    {                                                                                                \
        int ok;                                                                                      \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_ALL, test_all_vector, ivars, nelems, NULL, status,           \
              cmp_values, 1, NULL, &ok);                                                             \
        return ok;                                                                                   \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_all_vector)                                                  \
    size_t shmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,    \
                                          TYPE *cmp_values)                                          \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_ANY, test_any_vector, ivars, nelems, NULL, status,           \
              cmp_values, 1, &res, NULL);                                                            \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_any_vector)                                                  \
    size_t shmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,              \
                                           const int *status, int cmp, TYPE *cmp_values)             \
    {                                                                                                \
        size_t res;                                                                                  \
        QUERY(NAME, TYPE, 0, SHMEMI_P2P_SOME, test_some_vector, ivars, nelems, indices, status,      \
              cmp_values, 1, &res, NULL);                                                            \
        return res;                                                                                  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_test_some_vector)

SHMEMI_TYPES_P2P(DEFINE_WAITS)
SHMEMI_TYPES_P2P(DEFINE_TESTS)

/* wait, deprecated in 1.4: until *ivar is no longer cmp_value.  (Its profiling alias refers
 * to it, which the deprecation would warn about.) */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define DEFINE_OLD_WAIT(NAME, TYPE)                                                                   \
    void shmem_##NAME##_wait(TYPE *ivar, TYPE cmp_value)                                             \
    {                                                                                                \
        int cmp = SHMEM_CMP_NE;                                                                      \
        QUERY(NAME, TYPE, 1, SHMEMI_P2P_ALL, wait, ivar, 1, NULL, NULL, &cmp_value, 0, NULL, NULL);  \
    }                                                                                                \
    SHMEMI_PROFILED(shmem_##NAME##_wait)
SHMEMI_TYPES_P2P(DEFINE_OLD_WAIT)
