/*
 * shmem_compat.h - the OpenSHMEM names that bench.c uses, mapped onto libaclshmem.
 *
 * bench.c is written against the standard OpenSHMEM API.  Built with Open MPI's oshcc it
 * uses OSHMEM; built with
 *
 *     cc -O2 -include shmem_compat.h bench.c $(pkg-config --cflags --libs aclshmem)
 *
 * it uses libaclshmem, through the mapping below.  Only what bench.c calls is here: this
 * is not a full OpenSHMEM layer.
 *
 * shmem_init() joins the job that the launcher described in the environment, as
 * `python -m shmem.run` (and run.py beside this file) set it:
 *
 *     SHMEM_RUN_UID       the job's 136-byte unique ID, hex (aclshmemx_get_uniqueid on one side)
 *     SHMEM_RUN_PE        this PE's number
 *     SHMEM_RUN_NPES      the number of PEs
 *     SHMEM_RUN_MEM_SIZE  optional: the symmetric heap size per PE, bytes or with K/M/G;
 *                         else SHMEM_SYMMETRIC_SIZE (OpenSHMEM's variable), else 128 MiB
 *
 * and initialises with aclshmemx_set_attr_uniqueid_args + aclshmemx_init_attr
 * (ACLSHMEMX_INIT_WITH_UNIQUEID).  Like OpenSHMEM's shmem_init it has no result: on failure
 * it prints why and exits with status 1.
 */
#ifndef SHMEM_COMPAT_H
#define SHMEM_COMPAT_H

/* Included before the program's first line: ask for POSIX (clock_gettime, nanosleep) as
 * bench.c does, with the same value, so that its own #define is no redefinition. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <aclshmem.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenSHMEM's "long" routines are aclshmem's int64 ones: the same type on LP64 Linux. */
_Static_assert(sizeof(long) == sizeof(int64_t), "shmem_compat.h maps long onto int64_t (LP64 only)");

/* ---- constants ------------------------------------------------------------------------ */
#define SHMEM_CMP_EQ ACLSHMEM_CMP_EQ
#define SHMEM_CMP_NE ACLSHMEM_CMP_NE
#define SHMEM_CMP_GT ACLSHMEM_CMP_GT
#define SHMEM_CMP_GE ACLSHMEM_CMP_GE
#define SHMEM_CMP_LT ACLSHMEM_CMP_LT
#define SHMEM_CMP_LE ACLSHMEM_CMP_LE
#define SHMEM_MAX_NAME_LEN ACLSHMEM_MAX_NAME_LEN

/* ---- setup and queries ---------------------------------------------------------------- */
static inline void shmemc_die(const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "shmem_compat: %s%s%s\n", what, (why && why[0]) ? ": " : "", (why && why[0]) ? why : "");
    exit(1);
}

/* Bytes from "134217728", "128M", "1G", "512k" (binary units); 0 when not a size. */
static inline int64_t shmemc_parse_size(const char *text)
{
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (end == text || v <= 0)
        return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    return *end ? 0 : (int64_t)v;
}

static inline int shmemc_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static inline void shmem_init(void)
{
    const char *hex = getenv("SHMEM_RUN_UID");
    const char *pe = getenv("SHMEM_RUN_PE");
    const char *npes = getenv("SHMEM_RUN_NPES");
    if (!hex || !pe || !npes) {
        fprintf(stderr, "shmem_compat: SHMEM_RUN_UID, SHMEM_RUN_PE and SHMEM_RUN_NPES are not set: start the "
                        "PEs with a launcher that sets them (run.py beside bench.c, or python -m shmem.run)\n");
        exit(1);
    }
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    unsigned char *bytes = (unsigned char *)&uid;
    if (strlen(hex) != 2 * sizeof uid) {
        fprintf(stderr, "shmem_compat: SHMEM_RUN_UID holds %zu hex digits, a unique ID has %zu\n", strlen(hex),
                2 * sizeof uid);
        exit(1);
    }
    for (size_t i = 0; i < sizeof uid; i++) {
        int hi = shmemc_hex(hex[2 * i]), lo = shmemc_hex(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "shmem_compat: SHMEM_RUN_UID is not hex\n");
            exit(1);
        }
        bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    int64_t mem = 128LL << 20;
    const char *size_text = getenv("SHMEM_RUN_MEM_SIZE");
    if (!size_text || !size_text[0])
        size_text = getenv("SHMEM_SYMMETRIC_SIZE");
    if (size_text && size_text[0] && (mem = shmemc_parse_size(size_text)) == 0) {
        fprintf(stderr, "shmem_compat: not a heap size: %s\n", size_text);
        exit(1);
    }
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(atoi(pe), atoi(npes), mem, &uid, &attr) != ACLSHMEM_SUCCESS)
        shmemc_die("aclshmemx_set_attr_uniqueid_args");
    if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS)
        shmemc_die("aclshmemx_init_attr");
}

/* OpenSHMEM's void calls report no failure, and neither do these mappings on the hot path;
 * but a failing aclshmem call leaves its message as this thread's last error (successful
 * calls leave it alone), so one look here tells whether any call of the run failed. */
static inline void shmem_finalize(void)
{
    const char *why = aclshmemx_get_last_error();
    if (why && why[0]) {
        fprintf(stderr, "shmem_compat: PE %d: a libaclshmem call failed during the run: %s\n", aclshmem_my_pe(),
                why);
        exit(1);
    }
    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        shmemc_die("aclshmem_finalize");
}
static inline int shmem_my_pe(void) { return aclshmem_my_pe(); }
static inline int shmem_n_pes(void) { return aclshmem_n_pes(); }
static inline void shmem_info_get_name(char *name) { aclshmem_info_get_name(name); }
static inline void shmem_global_exit(int status) { aclshmem_global_exit(status); }

/* ---- symmetric memory ----------------------------------------------------------------- */
static inline void *shmem_malloc(size_t size) { return aclshmem_malloc(size); }
static inline void *shmem_calloc(size_t count, size_t size) { return aclshmem_calloc(count, size); }
static inline void *shmem_align(size_t alignment, size_t size) { return aclshmem_align(alignment, size); }
static inline void shmem_free(void *ptr) { aclshmem_free(ptr); }

/* ---- RMA ------------------------------------------------------------------------------ */
static inline void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    aclshmem_putmem(dest, source, nelems, pe);
}
static inline void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    aclshmem_getmem(dest, source, nelems, pe);
}
static inline void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    aclshmem_putmem_nbi(dest, source, nelems, pe);
}
static inline void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    aclshmem_getmem_nbi(dest, source, nelems, pe);
}
static inline void shmem_long_p(long *dest, long value, int pe) { aclshmem_int64_p((int64_t *)dest, value, pe); }
static inline long shmem_long_g(const long *source, int pe) { return aclshmem_int64_g((const int64_t *)source, pe); }

/* ---- ordering and synchronisation ------------------------------------------------------ */
static inline void shmem_quiet(void) { aclshmem_quiet(); }
static inline void shmem_fence(void) { aclshmem_fence(); }
static inline void shmem_barrier_all(void) { aclshmem_barrier_all(); }
static inline void shmem_sync_all(void) { aclshmem_sync_all(); }
static inline void shmem_long_wait_until(long *ivar, int cmp, long cmp_value)
{
    aclshmem_int64_wait_until((int64_t *)ivar, cmp, cmp_value);
}

static inline void *shmem_ptr(const void *dest, int pe) { return aclshmem_ptr((void *)dest, pe); }

#endif /* SHMEM_COMPAT_H */
