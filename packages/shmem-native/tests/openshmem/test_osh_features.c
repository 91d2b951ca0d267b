/*
 * test_osh_features.c - shmem.h's feature tests (ACLSHMEM_HAVE_*) agree with the library, and
 * aclshmem/shmem4py.h gives shmem4py every setting it looks for.
 *
 * For each part of OpenSHMEM 1.4/1.5 the macro must be defined to 1 and every routine of the
 * part (the typed ones generated from shmem.h's own type tables) must be a symbol that
 * libaclshmem exports: a macro that promises a routine the library lacks would make a client
 * skip its stand-in and fail to load.  Then each PySHMEM_HAVE_<name> that shmem4py 1.0.0
 * tests must be defined by aclshmem/shmem4py.h, or its build would define its own copy of
 * routines that shmem.h declares.  No PEs: symbols and macros only.
 */
#define _GNU_SOURCE /* dladdr */
#include "aclshmem/shmem4py.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define STR(x) #x
/* "1" for a macro defined as 1, else its own name (an undefined macro is not expanded). */
#define VALUE_OF(macro) STR(macro)

static int failures;

static void expect_defined(const char *name, const char *value)
{
    if (strcmp(value, "1") != 0) {
        fprintf(stderr, "FAIL: %s is not defined as 1\n", name);
        failures++;
    }
}
#define EXPECT_DEFINED(macro) expect_defined(#macro, VALUE_OF(macro))

/* libaclshmem itself (found from one of its functions), so that every symbol is looked up in
 * it and nowhere else. */
static void *library;

static int open_library(void)
{
    Dl_info info;
    if (dladdr((void *)shmem_my_pe, &info) == 0 || info.dli_fname == NULL) {
        fprintf(stderr, "FAIL: dladdr finds no library for shmem_my_pe\n");
        return -1;
    }
    library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (library == NULL) {
        fprintf(stderr, "FAIL: dlopen(%s): %s\n", info.dli_fname, dlerror());
        return -1;
    }
    return 0;
}

static void expect_symbol(const char *part, const char *symbol)
{
    if (dlsym(library, symbol) == NULL) {
        fprintf(stderr, "FAIL: %s promises %s, which libaclshmem does not export\n", part, symbol);
        failures++;
    }
}

/* ---- the routines of each part ------------------------------------------------------ */
#define PART_MALLOC_WITH_HINTS(X) X("shmem_malloc_with_hints")

#define PART_TEAMS(X)                                                                          \
    X("shmem_team_my_pe") X("shmem_team_n_pes") X("shmem_team_get_config")                   \
    X("shmem_team_translate_pe") X("shmem_team_split_strided") X("shmem_team_split_2d")      \
    X("shmem_team_destroy") X("shmem_team_sync") X("shmem_team_ptr")

#define PART_TEAM_CONTEXTS(X) X("shmem_team_create_ctx") X("shmem_ctx_get_team")

/* Every AMO name with its shmem_ctx_ form. */
#define BOTH_FORMS(X, NAME, OP) X("shmem_" #NAME "_" #OP) X("shmem_ctx_" #NAME "_" #OP)
#define AMO_NBI_STANDARD(NAME, TYPE)                                                           \
    BOTH_FORMS(SYMBOL, NAME, atomic_compare_swap_nbi) BOTH_FORMS(SYMBOL, NAME, atomic_fetch_inc_nbi) \
    BOTH_FORMS(SYMBOL, NAME, atomic_fetch_add_nbi)
#define AMO_NBI_EXTENDED(NAME, TYPE)                                                           \
    BOTH_FORMS(SYMBOL, NAME, atomic_fetch_nbi) BOTH_FORMS(SYMBOL, NAME, atomic_swap_nbi)
#define AMO_NBI_BITWISE(NAME, TYPE)                                                            \
    BOTH_FORMS(SYMBOL, NAME, atomic_fetch_and_nbi) BOTH_FORMS(SYMBOL, NAME, atomic_fetch_or_nbi) \
    BOTH_FORMS(SYMBOL, NAME, atomic_fetch_xor_nbi)

#define PUT_SIGNAL_TYPED(NAME, TYPE)                                                           \
    BOTH_FORMS(SYMBOL, NAME, put_signal) BOTH_FORMS(SYMBOL, NAME, put_signal_nbi)
#define PUT_SIGNAL_SIZED(BITS)                                                                 \
    SYMBOL("shmem_put" #BITS "_signal") SYMBOL("shmem_ctx_put" #BITS "_signal")               \
    SYMBOL("shmem_put" #BITS "_signal_nbi") SYMBOL("shmem_ctx_put" #BITS "_signal_nbi")
#define PART_PUT_SIGNAL_MEM(X)                                                                 \
    X("shmem_putmem_signal") X("shmem_ctx_putmem_signal") X("shmem_putmem_signal_nbi")       \
    X("shmem_ctx_putmem_signal_nbi")

#define PART_COLLECTIVES_MEM(X)                                                                \
    X("shmem_broadcastmem") X("shmem_collectmem") X("shmem_fcollectmem") X("shmem_alltoallmem") \
    X("shmem_alltoallsmem")
#define COLLECTIVES_TYPED(NAME, TYPE)                                                          \
    SYMBOL("shmem_" #NAME "_broadcast") SYMBOL("shmem_" #NAME "_collect")                     \
    SYMBOL("shmem_" #NAME "_fcollect") SYMBOL("shmem_" #NAME "_alltoall")                     \
    SYMBOL("shmem_" #NAME "_alltoalls")

#define REDUCE(NAME, OP) SYMBOL("shmem_" #NAME "_" #OP "_reduce")
#define REDUCE_BITWISE(NAME, TYPE) REDUCE(NAME, and) REDUCE(NAME, or) REDUCE(NAME, xor)
#define REDUCE_MINMAX(NAME, TYPE) REDUCE(NAME, min) REDUCE(NAME, max)
#define REDUCE_ARITH(NAME, TYPE) REDUCE(NAME, sum) REDUCE(NAME, prod)

#define WAIT_TEST_MANY(NAME, TYPE)                                                             \
    SYMBOL("shmem_" #NAME "_wait_until_all") SYMBOL("shmem_" #NAME "_wait_until_any")         \
    SYMBOL("shmem_" #NAME "_wait_until_some") SYMBOL("shmem_" #NAME "_wait_until_all_vector") \
    SYMBOL("shmem_" #NAME "_wait_until_any_vector")                                           \
    SYMBOL("shmem_" #NAME "_wait_until_some_vector") SYMBOL("shmem_" #NAME "_test_all")       \
    SYMBOL("shmem_" #NAME "_test_any") SYMBOL("shmem_" #NAME "_test_some")                    \
    SYMBOL("shmem_" #NAME "_test_all_vector") SYMBOL("shmem_" #NAME "_test_any_vector")       \
    SYMBOL("shmem_" #NAME "_test_some_vector")

/* Checks the part's macro, then (with SYMBOL bound to the part) each of its routines. */
#define CHECK_PART(macro, routines)                                                            \
    do {                                                                                       \
        const char *part = #macro;                                                             \
        expect_defined(part, VALUE_OF(macro));                                                 \
        routines                                                                               \
    } while (0)
#define SYMBOL(name) expect_symbol(part, name);

static void check_parts(void)
{
    CHECK_PART(ACLSHMEM_HAVE_MALLOC_WITH_HINTS, PART_MALLOC_WITH_HINTS(SYMBOL));
    CHECK_PART(ACLSHMEM_HAVE_TEAMS, PART_TEAMS(SYMBOL));
    CHECK_PART(ACLSHMEM_HAVE_TEAM_CONTEXTS, PART_TEAM_CONTEXTS(SYMBOL));
    CHECK_PART(ACLSHMEM_HAVE_AMO_NBI, SHMEMI_TYPES_AMO(AMO_NBI_STANDARD) SHMEMI_TYPES_AMO(AMO_NBI_EXTENDED)
                                          SHMEMI_TYPES_AMO_FLOAT(AMO_NBI_EXTENDED)
                                              SHMEMI_TYPES_AMO_BITWISE(AMO_NBI_BITWISE));
    CHECK_PART(ACLSHMEM_HAVE_PUT_SIGNAL, SHMEMI_TYPES_RMA(PUT_SIGNAL_TYPED) SHMEMI_SIZES_RMA(PUT_SIGNAL_SIZED)
                                             PART_PUT_SIGNAL_MEM(SYMBOL));
    CHECK_PART(ACLSHMEM_HAVE_SIGNAL_FETCH, SYMBOL("shmem_signal_fetch"));
    CHECK_PART(ACLSHMEM_HAVE_SIGNAL_WAIT_UNTIL, SYMBOL("shmem_signal_wait_until"));
    CHECK_PART(ACLSHMEM_HAVE_TEAM_COLLECTIVES, PART_COLLECTIVES_MEM(SYMBOL) SHMEMI_TYPES_RMA(COLLECTIVES_TYPED));
    CHECK_PART(ACLSHMEM_HAVE_TEAM_REDUCTIONS,
               SHMEMI_TYPES_REDUCE_BITWISE(REDUCE_BITWISE) SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_MINMAX)
                   SHMEMI_TYPES_REDUCE_MINMAX(REDUCE_ARITH) SHMEMI_TYPES_REDUCE_COMPLEX(REDUCE_ARITH));
    CHECK_PART(ACLSHMEM_HAVE_WAIT_TEST_MANY, SHMEMI_TYPES_P2P(WAIT_TEST_MANY));
    CHECK_PART(ACLSHMEM_HAVE_PCONTROL, SYMBOL("shmem_pcontrol"));
}

/* The constants that come with the parts (a compile error if one is missing). */
static void check_constants(void)
{
    long hints = SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE;
    int signal_ops = SHMEM_SIGNAL_SET != SHMEM_SIGNAL_ADD;
    shmem_team_t teams[] = {SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, SHMEM_TEAM_INVALID};
    shmem_ctx_t invalid = SHMEM_CTX_INVALID;
    if (hints == 0 || !signal_ops || teams[0] == teams[2] || invalid == SHMEM_CTX_DEFAULT) {
        fprintf(stderr, "FAIL: the constants of the 1.5 parts are not distinct\n");
        failures++;
    }
}

/* The names shmem4py 1.0.0 tests to skip its stand-ins (src/libshmem/fallback.h). */
static void check_shmem4py_settings(void)
{
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_malloc_with_hints);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_team_t);
    EXPECT_DEFINED(PySHMEM_HAVE_SHMEM_CTX_INVALID);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_amo_nbi);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_put_signal);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_signal_fetch);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_signal_wait_until);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_broadcast);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_collect);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_fcollect);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_alltoall);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_alltoalls);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_broadcastmem);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_collectmem);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_fcollectmem);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_alltoallmem);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_alltoallsmem);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_reduce);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_wait_test_many);
    EXPECT_DEFINED(PySHMEM_HAVE_shmem_pcontrol);
}

int main(void)
{
    if (open_library() != 0)
        return 1;
    check_parts();
    check_constants();
    check_shmem4py_settings();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("feature tests: every part's macro is 1 and its routines are in libaclshmem; "
           "aclshmem/shmem4py.h defines all 20 settings\n");
    return 0;
}
