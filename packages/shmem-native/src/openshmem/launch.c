/* Where an OpenSHMEM program's shmem_init() finds its place in the job: see launch.h. */
#include "openshmem/launch.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/init.h"
#include "base/error.h"
#include "openshmem/sizes.h"

#define ENV_UID "SHMEM_RUN_UID"
#define ENV_PE "SHMEM_RUN_PE"
#define ENV_NPES "SHMEM_RUN_NPES"
#define ENV_MEM_SIZE "SHMEM_RUN_MEM_SIZE"
#define ENV_SYMMETRIC_SIZE "SHMEM_SYMMETRIC_SIZE"

/* Where the messages send someone whose variables are wrong. */
#define LAUNCHER_HINT "start the PEs with oshrun / shmemrun (or python -m shmem.run), which set it"

_Static_assert(sizeof(aclshmemx_uniqueid_t) == SHMEMI_OSH_UID_SIZE, "the unique ID is 136 bytes");

/* A variable's value, or NULL when it is unset or empty (as the Python side reads them). */
static const char *env_value(const char *name)
{
    const char *text = getenv(name);
    return text && *text ? text : NULL;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The unique ID from its hex text (blanks around it allowed).  The messages never repeat
 * the text: the unique ID holds the job's secret. */
static int uid_from_hex(const char *text, uint8_t uid[SHMEMI_OSH_UID_SIZE])
{
    while (isspace((unsigned char)*text))
        text++;
    size_t len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    if (len != 2 * SHMEMI_OSH_UID_SIZE)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           ENV_UID " holds %zu characters, but a unique ID is %d hex digits (%d bytes): "
                           LAUNCHER_HINT, len, 2 * SHMEMI_OSH_UID_SIZE, SHMEMI_OSH_UID_SIZE);
    for (size_t i = 0; i < SHMEMI_OSH_UID_SIZE; i++) {
        int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
        if (high < 0 || low < 0)
            return shmemi_fail(ACLSHMEM_INVALID_VALUE, ENV_UID " is not hex (character %zu is not 0-9 or a-f): "
                               LAUNCHER_HINT, 2 * i + (high < 0 ? 1 : 2));
        uid[i] = (uint8_t)(high << 4 | low);
    }
    return ACLSHMEM_SUCCESS;
}

/* The decimal integer in name's text, within lo..hi; else an error naming name. */
static int int_from_env(const char *name, const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    while (end && isspace((unsigned char)*end))
        end++;
    if (end == text || !end || *end || errno || value < lo || value > hi)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s=\"%.32s\" is not an integer in %ld..%ld", name, text, lo,
                           hi);
    *out = (int)value;
    return ACLSHMEM_SUCCESS;
}

/* The heap size in name's text (1 byte .. ACLSHMEM_MAX_LOCAL_SIZE). */
static int heap_size_from(const char *name, const char *text, size_t *out)
{
    uint64_t bytes = 0;
    shmemi_size_status_t status = shmemi_parse_size(text, &bytes);
    if (status != SHMEMI_SIZE_OK)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s=\"%.64s\" is %s", name, text, shmemi_size_status_text(status));
    if (bytes == 0 || bytes > ACLSHMEM_MAX_LOCAL_SIZE)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "%s=\"%.64s\": the symmetric heap size must be 1 byte .. %llu bytes (40 GiB)", name, text,
                           (unsigned long long)ACLSHMEM_MAX_LOCAL_SIZE);
    *out = (size_t)bytes;
    return ACLSHMEM_SUCCESS;
}

/* SHMEM_SYMMETRIC_SIZE, else SHMEM_RUN_MEM_SIZE, else the default. */
static int heap_size_from_env(size_t *out)
{
    static const char *const names[] = {ENV_SYMMETRIC_SIZE, ENV_MEM_SIZE};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *text = env_value(names[i]);
        if (text)
            return heap_size_from(names[i], text, out);
    }
    *out = SHMEMI_OSH_DEFAULT_HEAP_SIZE;
    return ACLSHMEM_SUCCESS;
}

/* The launcher's three variables: all set, or (no launcher) none of them. */
static int job_from_launcher(const char *uid_text, const char *pe_text, const char *npes_text,
                             shmemi_osh_job_t *job)
{
    if (!uid_text || !pe_text || !npes_text) {
        const char *missing = !uid_text ? ENV_UID : !pe_text ? ENV_PE : ENV_NPES;
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "%s is not set, but %s is: a launcher sets " ENV_UID ", " ENV_PE " and " ENV_NPES
                           " together (" LAUNCHER_HINT ")",
                           missing, uid_text ? ENV_UID : pe_text ? ENV_PE : ENV_NPES);
    }
    SHMEMI_TRY(int_from_env(ENV_NPES, npes_text, 1, ACLSHMEM_MAX_PES, &job->n_pes));
    SHMEMI_TRY(int_from_env(ENV_PE, pe_text, 0, job->n_pes - 1, &job->pe));
    return uid_from_hex(uid_text, job->uid);
}

/* No launcher: this process alone, with a unique ID of its own. */
static int job_of_one(shmemi_osh_job_t *job)
{
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    SHMEMI_TRY(aclshmemx_get_uniqueid(&uid));
    job->pe = 0;
    job->n_pes = 1;
    memcpy(job->uid, &uid, sizeof(uid));
    return ACLSHMEM_SUCCESS;
}

int shmemi_osh_job_from_env(shmemi_osh_job_t *job)
{
    if (!job)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "shmemi_osh_job_from_env: job is NULL");
    shmemi_osh_job_t found;
    memset(&found, 0, sizeof(found));
    SHMEMI_TRY(heap_size_from_env(&found.heap_size));
    const char *uid_text = env_value(ENV_UID), *pe_text = env_value(ENV_PE), *npes_text = env_value(ENV_NPES);
    if (uid_text || pe_text || npes_text)
        SHMEMI_TRY(job_from_launcher(uid_text, pe_text, npes_text, &found));
    else
        SHMEMI_TRY(job_of_one(&found));
    *job = found;
    return ACLSHMEM_SUCCESS;
}
