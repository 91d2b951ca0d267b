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
 * child, then shmem_init().  The case needs harness options { .no_init = 1 }. */
void osh_test_init(void);

/* The options and PE counts of a case that is an OpenSHMEM program. */
#define OSH_OPTS { .no_init = 1 }
#define OSH_PES { 2, 4 }

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
