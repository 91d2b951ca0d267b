/*
 * osh_test.h - what the OpenSHMEM API tests share.  Each test program runs its cases on
 * real PEs through the harness (harness.h: one forked process per PE, with a timeout); a
 * case's body is an OpenSHMEM program: it calls osh_test_init(), which sets the launcher's
 * variables as oshrun does and calls shmem_init(), and ends with shmem_finalize().
 */
#ifndef OSH_TEST_H
#define OSH_TEST_H

#include <shmem.h>
#include <shmemx.h>

#include "harness.h"

/* SHMEM_RUN_UID (the harness's unique ID, hex), SHMEM_RUN_PE and SHMEM_RUN_NPES of this
 * child, as oshrun sets them, and a 32 MiB heap (SHMEM_SYMMETRIC_SIZE). */
void osh_test_set_launcher_env(void);
/* osh_test_set_launcher_env(), then shmem_init().  The case needs harness options
 * { .no_init = 1 } (OSH_OPTS). */
void osh_test_init(void);

/* The options and PE counts of a case that is an OpenSHMEM program. */
#define OSH_OPTS { .no_init = 1 }
#define OSH_PES { 2, 4 }

/* How a test round calls the API: through the context ctx (the shmem_ctx_ forms) or without
 * one; PE numbers are those of team (SHMEM_TEAM_WORLD but for a team's context). */
typedef struct {
    const char *name;
    int use_ctx;
    shmem_ctx_t ctx;
    shmem_team_t team;
} osh_way_t;

/* OSH_CALL(w, int_put, dest, src, n, pe) is shmem_ctx_int_put(w->ctx, ...) or shmem_int_put(...). */
#define OSH_CALL(w, OP, ...) ((w)->use_ctx ? shmem_ctx_##OP((w)->ctx, __VA_ARGS__) : shmem_##OP(__VA_ARGS__))
#define OSH_QUIET(w) ((w)->use_ctx ? shmem_ctx_quiet((w)->ctx) : shmem_quiet())

/* call must fail now, with a last error (shmemx_get_last_error) that mentions text. */
#define OSH_EXPECT_REJECTED(call, text)                                                          \
    do {                                                                                         \
        shmemx_clear_last_error();                                                               \
        call;                                                                                    \
        HARNESS_CHECK_(shmemx_get_last_error()[0] != '\0', 0, "%s should have failed", #call);   \
        HARNESS_CHECK_(harness_contains(shmemx_get_last_error(), (text)), 0,                     \
                       "the error of %s should mention \"%s\": \"%s\"", #call, (text),          \
                       shmemx_get_last_error());                                                 \
    } while (0)

/* call must succeed: no last error afterwards. */
#define OSH_EXPECT_OK(call)                                                                      \
    do {                                                                                         \
        shmemx_clear_last_error();                                                               \
        call;                                                                                    \
        HARNESS_CHECK_(shmemx_get_last_error()[0] == '\0', 0, "%s failed: %s", #call,            \
                       shmemx_get_last_error());                                                 \
    } while (0)

#endif
