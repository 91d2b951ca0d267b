/* Error codes and the thread-local "last error" message behind aclshmemx_get_last_error(). */
#ifndef SHMEMI_ERROR_H
#define SHMEMI_ERROR_H

#include "aclshmem/types.h"

/* Records "fmt ..." as this thread's last error, logs it, and returns code. */
int shmemi_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forgets the last error (each public entry point that succeeds leaves it alone,
 * so the message always describes the last *failing* call). */
void shmemi_clear_error(void);
/* This thread's last error ("" if none): its own buffer, the same for the thread's life. */
const char *shmemi_last_error(void);

const char *shmemi_error_name(int code);

/* A per-thread observer of failures (msg without the code name): the cpu platform sets one on
 * kernel threads, so that the first error inside a kernel becomes its stream's error. */
typedef void (*shmemi_fail_hook_fn)(void *ctx, int code, const char *msg);
void shmemi_set_fail_hook(shmemi_fail_hook_fn hook, void *ctx);

/* Propagate a non-zero result. */
#define SHMEMI_TRY(expr)                                                                       \
    do {                                                                                       \
        int shmemi_try_rc_ = (expr);                                                           \
        if (shmemi_try_rc_ != ACLSHMEM_SUCCESS)                                                \
            return shmemi_try_rc_;                                                             \
    } while (0)

#endif
