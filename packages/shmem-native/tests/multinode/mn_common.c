/*
 * mn_common.c - the multi-node suite's shared state and helpers (declared in mn_suite.h): the
 * job as this PE sees it, FAIL lines, time, byte patterns and allocation.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aclshmem.h"
#include "mn_suite.h"

int me, n, ppn, nodes, peer, src;
const char *case_name = "?";
int failures;

/* ---- reporting ----------------------------------------------------------------------- */
void fail_in(const char *file, int line, const char *fmt, ...)
{
    if (++failures > 12) { /* the first ones say what broke; the rest is its echo */
        if (failures == 13)
            printf("FAIL PE %d [%s]: (further failures not shown)\n", me, case_name);
        return;
    }
    const char *base = strrchr(file, '/'); /* __FILE__ is the path the build gave the compiler */
    base = base ? base + 1 : file;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *err = aclshmemx_get_last_error();
    if (err && *err)
        printf("FAIL PE %d [%s] %s:%d: %s  (last error: %s)\n", me, case_name, base, line, msg, err);
    else
        printf("FAIL PE %d [%s] %s:%d: %s\n", me, case_name, base, line, msg);
    aclshmemx_clear_last_error(); /* the next FAIL line shows only a newer error */
}

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- byte patterns (pat itself is in mn_suite.h) ---------------------------------------- */
void fill(void *p, size_t len, int pe, int salt)
{
    unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        b[i] = pat(i, pe, salt);
}

/* Checks that p[0, len) holds the pattern of (pe, salt) shifted by off bytes. */
int expect_pat(const char *file, int line, const char *what, const void *p, size_t len, size_t off, int pe,
               int salt)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        if (b[i] != pat(i + off, pe, salt)) {
            size_t bad = 0;
            for (size_t j = i; j < len; j++)
                bad += b[j] != pat(j + off, pe, salt);
            fail_in(file, line, "%s: %zu of %zu bytes wrong, first at byte %zu (0x%02x, want 0x%02x "
                    "from PE %d)", what, bad, len, i, b[i], pat(i + off, pe, salt), pe);
            return 0;
        }
    }
    return 1;
}

int all_zero(const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            return 0;
    return 1;
}

/* ---- allocation ------------------------------------------------------------------------- */
void *xmalloc(size_t len)
{
    void *p = malloc(len);
    if (!p) {
        fail_at(__LINE__, "malloc(%zu) returned NULL", len);
        exit(1);
    }
    return p;
}

void *sym_alloc(size_t len)
{
    void *p = aclshmem_malloc(len);
    if (!p) {
        fail_at(__LINE__, "aclshmem_malloc(%zu) returned NULL", len);
        exit(1);
    }
    return p;
}
