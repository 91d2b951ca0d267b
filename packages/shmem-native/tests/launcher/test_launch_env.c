/*
 * test_launch_env.c - where an OpenSHMEM program's shmem_init() finds its place in the job
 * (src/openshmem/launch.c, issue #24), linked in directly from the library's objects:
 *
 *  - the size parser (src/openshmem/sizes.c) reads what shmem/_sizes.py reads, and refuses
 *    what it refuses, for the same reasons;
 *  - with no launcher variable set, a process is a job of one PE whose unique ID really
 *    initialises the library;
 *  - the heap size comes from SHMEM_SYMMETRIC_SIZE, else SHMEM_RUN_MEM_SIZE, else 128 MiB;
 *  - every wrong variable gives an error that names it (and never repeats the unique ID,
 *    which holds the job's secret);
 *  - 2 and 4 PEs given a launcher's variables (a unique ID made by PE 0, hex) form a job
 *    that passes a ring of puts.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "openshmem/launch.h"
#include "openshmem/sizes.h"

static const char *const job_variables[] = {"SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES",
                                            "SHMEM_RUN_MEM_SIZE", "SHMEM_SYMMETRIC_SIZE"};

static void clear_job_variables(void)
{
    for (size_t i = 0; i < sizeof job_variables / sizeof job_variables[0]; i++)
        unsetenv(job_variables[i]);
}

static void to_hex(const uint8_t *bytes, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", bytes[i]);
}

/* ---- sizes ------------------------------------------------------------------------------- */

static const struct {
    const char *text;
    uint64_t bytes;
} good_sizes[] = {
    {"0", 0}, {"4096", 4096}, {" 8 ", 8}, {"8B", 8}, {"4K", 4 << 10}, {"4k", 4 << 10}, {"4KB", 4 << 10},
    {"4KiB", 4 << 10}, {"4 kib", 4 << 10}, {"64M", 64 << 20}, {"64 MiB", 64 << 20}, {"64mb", 64 << 20},
    {"1G", 1ull << 30}, {"2GiB", 2ull << 30}, {"1T", 1ull << 40}, {"1.5K", 1536}, {".5K", 512},
    {"0.5M", 512 << 10}, {"1.25G", (1ull << 30) + (1ull << 28)}, {"3.", 3},
    {"18446744073709551615", UINT64_MAX}, {"16777215.9990234375T", UINT64_MAX - (1ull << 30) + 1},
    {"1.000000000000000000000000000000000000000000000000K", 1024}, {"00000000000000000000000000007", 7},
    /* a fraction of 40 digits that is still whole in T: 5**40 / 10**40 * 2**40 = 1 */
    {"0.0000000000009094947017729282379150390625T", 1},
};

static const struct {
    const char *text;
    shmemi_size_status_t status;
} bad_sizes[] = {
    {"", SHMEMI_SIZE_NOT_A_SIZE}, {"  ", SHMEMI_SIZE_NOT_A_SIZE}, {"lots", SHMEMI_SIZE_NOT_A_SIZE},
    {"K", SHMEMI_SIZE_NOT_A_SIZE}, {"4X", SHMEMI_SIZE_NOT_A_SIZE}, {"4 KK", SHMEMI_SIZE_NOT_A_SIZE},
    {"4iB", SHMEMI_SIZE_NOT_A_SIZE}, {"4KiBB", SHMEMI_SIZE_NOT_A_SIZE}, {"1e6", SHMEMI_SIZE_NOT_A_SIZE},
    {"0x10", SHMEMI_SIZE_NOT_A_SIZE}, {"4-K", SHMEMI_SIZE_NOT_A_SIZE}, {"4K4", SHMEMI_SIZE_NOT_A_SIZE},
    {"--4", SHMEMI_SIZE_NOT_A_SIZE}, {"1,024", SHMEMI_SIZE_NOT_A_SIZE}, {"-1", SHMEMI_SIZE_NOT_A_SIZE},
    {".", SHMEMI_SIZE_NOT_A_SIZE}, {"4KI", SHMEMI_SIZE_NOT_A_SIZE}, {"1.5", SHMEMI_SIZE_NOT_WHOLE},
    {"0.3K", SHMEMI_SIZE_NOT_WHOLE}, {"1.1M", SHMEMI_SIZE_NOT_WHOLE}, {"0.1", SHMEMI_SIZE_NOT_WHOLE},
    {"0.00000000000000000000000000000000000000001K", SHMEMI_SIZE_NOT_WHOLE},
    {"1111111111111111111111111111111111111111", SHMEMI_SIZE_TOO_LARGE},
    {"18446744073709551616", SHMEMI_SIZE_TOO_LARGE}, {"16777216T", SHMEMI_SIZE_TOO_LARGE},
    {"16777215.9990234376T", SHMEMI_SIZE_NOT_WHOLE}, {"16777215.99999999999999T", SHMEMI_SIZE_NOT_WHOLE},
};

static int t_sizes_like_python(int my_pe, int n_pes)
{
    (void)my_pe, (void)n_pes;
    for (size_t i = 0; i < sizeof good_sizes / sizeof good_sizes[0]; i++) {
        uint64_t bytes = 12345;
        shmemi_size_status_t status = shmemi_parse_size(good_sizes[i].text, &bytes);
        HARNESS_CHECK_(status == SHMEMI_SIZE_OK && bytes == good_sizes[i].bytes, 0,
                       "\"%s\": status %d, %llu bytes, expected %llu", good_sizes[i].text, (int)status,
                       (unsigned long long)bytes, (unsigned long long)good_sizes[i].bytes);
    }
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        uint64_t bytes = 12345;
        shmemi_size_status_t status = shmemi_parse_size(bad_sizes[i].text, &bytes);
        HARNESS_CHECK_(status == bad_sizes[i].status && bytes == 12345, 0, "\"%s\": status %d, expected %d",
                       bad_sizes[i].text, (int)status, (int)bad_sizes[i].status);
    }
    uint64_t bytes = 0;
    EXPECT_EQ(shmemi_parse_size("16777215.9990234375T", &bytes), SHMEMI_SIZE_OK);
    EXPECT(bytes == (1ull << 40) * 16777215ull + (1ull << 40) - (1ull << 30));
    EXPECT(harness_contains(shmemi_size_status_text(SHMEMI_SIZE_NOT_A_SIZE), "64MiB"));
    return 0;
}

/* ---- one PE, no launcher ----------------------------------------------------------------- */

static int init_with(const shmemi_osh_job_t *job)
{
    aclshmemx_uniqueid_t uid;
    memcpy(&uid, job->uid, sizeof uid);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = aclshmemx_set_attr_uniqueid_args(job->pe, job->n_pes, (int64_t)job->heap_size, &uid, &attr);
    return rc ? rc : aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
}

static int t_no_launcher_is_one_pe(int my_pe, int n_pes)
{
    (void)my_pe, (void)n_pes;
    clear_job_variables();
    shmemi_osh_job_t job;
    memset(&job, 0xff, sizeof job);
    ASSERT_EQ(shmemi_osh_job_from_env(&job), ACLSHMEM_SUCCESS);
    EXPECT_EQ(job.pe, 0);
    EXPECT_EQ(job.n_pes, 1);
    EXPECT_EQ(job.heap_size, 128 << 20);
    int32_t version;
    memcpy(&version, job.uid, sizeof version);
    EXPECT_EQ(version, ACLSHMEM_UNIQUEID_VERSION);
    /* The unique ID made here starts a real job of one PE. */
    ASSERT_EQ(init_with(&job), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_my_pe(), 0);
    EXPECT_EQ(aclshmem_n_pes(), 1);
    int64_t *word = aclshmem_malloc(sizeof *word);
    ASSERT_NOT_NULL(word);
    aclshmem_int64_p(word, 42, 0);
    aclshmem_quiet();
    EXPECT_EQ(*word, 42);
    aclshmem_free(word);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- the heap size ----------------------------------------------------------------------- */

static size_t heap_size_with(const char *symmetric, const char *run_mem)
{
    clear_job_variables();
    if (symmetric)
        setenv("SHMEM_SYMMETRIC_SIZE", symmetric, 1);
    if (run_mem)
        setenv("SHMEM_RUN_MEM_SIZE", run_mem, 1);
    shmemi_osh_job_t job;
    return shmemi_osh_job_from_env(&job) == ACLSHMEM_SUCCESS ? job.heap_size : 0;
}

static int t_heap_size_variables(int my_pe, int n_pes)
{
    (void)my_pe, (void)n_pes;
    EXPECT_EQ(heap_size_with("64M", "32M"), 64 << 20); /* OpenSHMEM's variable wins */
    EXPECT_EQ(heap_size_with(NULL, "32M"), 32 << 20);
    EXPECT_EQ(heap_size_with("", "1.5G"), 3 << 29); /* empty is unset */
    EXPECT_EQ(heap_size_with(NULL, NULL), 128 << 20);
    static const struct {
        const char *symmetric, *run_mem, *named, *why;
    } wrong[] = {
        {"lots", NULL, "SHMEM_SYMMETRIC_SIZE=\"lots\"", "not a size"},
        {NULL, "1.1M", "SHMEM_RUN_MEM_SIZE=\"1.1M\"", "not a whole number"},
        {"0", "64M", "SHMEM_SYMMETRIC_SIZE=\"0\"", "1 byte"},
        {"41G", NULL, "SHMEM_SYMMETRIC_SIZE=\"41G\"", "40 GiB"},
        {"99999999999999999999999", NULL, "SHMEM_SYMMETRIC_SIZE", "too large"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        harness_mark_error();
        EXPECT_EQ(heap_size_with(wrong[i].symmetric, wrong[i].run_mem), 0);
        EXPECT_ERROR_CONTAINS(wrong[i].named);
        EXPECT_ERROR_CONTAINS(wrong[i].why);
    }
    clear_job_variables();
    return 0;
}

/* ---- wrong launcher variables ------------------------------------------------------------ */

/* A well-formed unique ID's hex, with a recognisable secret part. */
static void sample_uid_hex(char hex[2 * SHMEMI_OSH_UID_SIZE + 1])
{
    uint8_t bytes[SHMEMI_OSH_UID_SIZE];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(0xa0 + i % 16);
    to_hex(bytes, sizeof bytes, hex);
}

static void expect_refused(const char *uid, const char *pe, const char *npes, const char *named)
{
    clear_job_variables();
    if (uid)
        setenv("SHMEM_RUN_UID", uid, 1);
    if (pe)
        setenv("SHMEM_RUN_PE", pe, 1);
    if (npes)
        setenv("SHMEM_RUN_NPES", npes, 1);
    shmemi_osh_job_t job;
    harness_mark_error();
    int rc = shmemi_osh_job_from_env(&job);
    HARNESS_CHECK_(rc == ACLSHMEM_INVALID_VALUE, 0, "uid %.8s.. pe %s npes %s: rc %d, expected INVALID_VALUE",
                   uid ? uid : "-", pe ? pe : "-", npes ? npes : "-", rc);
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS(named);
    /* The unique ID holds the job's secret: no part of it in the message. */
    EXPECT(!uid || strlen(uid) < 16 || !strstr(aclshmemx_get_last_error(), "a0a1a2a3a4a5a6a7"));
}

static int t_wrong_launcher_variables(int my_pe, int n_pes)
{
    (void)my_pe, (void)n_pes;
    char hex[2 * SHMEMI_OSH_UID_SIZE + 1];
    sample_uid_hex(hex);
    expect_refused(hex, NULL, "4", "SHMEM_RUN_PE is not set");
    expect_refused(hex, "1", NULL, "SHMEM_RUN_NPES is not set");
    expect_refused(NULL, "1", "4", "SHMEM_RUN_UID is not set");
    expect_refused(NULL, NULL, "4", "SHMEM_RUN_UID is not set");
    expect_refused(hex, "4", "4", "SHMEM_RUN_PE=\"4\" is not an integer in 0..3");
    expect_refused(hex, "-1", "4", "SHMEM_RUN_PE");
    expect_refused(hex, "1x", "4", "SHMEM_RUN_PE=\"1x\"");
    expect_refused(hex, "0", "0", "SHMEM_RUN_NPES=\"0\" is not an integer in 1..16384");
    expect_refused(hex, "0", "99999999999999999999", "SHMEM_RUN_NPES");
    char shorter[sizeof hex];
    snprintf(shorter, sizeof shorter, "%.270s", hex);
    expect_refused(shorter, "0", "2", "SHMEM_RUN_UID holds 270 characters");
    char not_hex[sizeof hex];
    memcpy(not_hex, hex, sizeof hex);
    not_hex[101] = 'g';
    expect_refused(not_hex, "0", "2", "SHMEM_RUN_UID is not hex (character 102");
    /* Blanks around the hex are fine (as in Python's bytes.fromhex(text.strip())). */
    clear_job_variables();
    char padded[sizeof hex + 4];
    snprintf(padded, sizeof padded, " %s\n", hex);
    setenv("SHMEM_RUN_UID", padded, 1);
    setenv("SHMEM_RUN_PE", "3", 1);
    setenv("SHMEM_RUN_NPES", "4", 1);
    shmemi_osh_job_t job;
    EXPECT_EQ(shmemi_osh_job_from_env(&job), ACLSHMEM_SUCCESS);
    EXPECT_EQ(job.pe, 3);
    EXPECT_EQ(job.n_pes, 4);
    EXPECT_EQ(job.uid[135], 0xa0 + 135 % 16);
    EXPECT_EQ(shmemi_osh_job_from_env(NULL), ACLSHMEM_INVALID_PARAM);
    clear_job_variables();
    return 0;
}

/* ---- a job from a launcher's variables ---------------------------------------------------- */

static int t_job_from_launcher_variables(int my_pe, int n_pes)
{
    clear_job_variables();
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    ASSERT_EQ(harness_share_uid(&uid), ACLSHMEM_SUCCESS); /* PE 0 makes it, as a launcher would */
    char hex[2 * SHMEMI_OSH_UID_SIZE + 1], text[16];
    to_hex((const uint8_t *)&uid, sizeof uid, hex);
    setenv("SHMEM_RUN_UID", hex, 1);
    snprintf(text, sizeof text, "%d", my_pe);
    setenv("SHMEM_RUN_PE", text, 1);
    snprintf(text, sizeof text, "%d", n_pes);
    setenv("SHMEM_RUN_NPES", text, 1);
    setenv("SHMEM_RUN_MEM_SIZE", "16M", 1);
    shmemi_osh_job_t job;
    ASSERT_EQ(shmemi_osh_job_from_env(&job), ACLSHMEM_SUCCESS);
    EXPECT_EQ(job.pe, my_pe);
    EXPECT_EQ(job.n_pes, n_pes);
    EXPECT_EQ(job.heap_size, 16 << 20);
    EXPECT(memcmp(job.uid, &uid, sizeof uid) == 0);
    ASSERT_EQ(init_with(&job), ACLSHMEM_SUCCESS);
    harness_ring_check(my_pe, n_pes);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    clear_job_variables();
    return 0;
}

static const harness_case cases[] = {
    {"sizes_like_python", t_sizes_like_python, {.no_init = 1, .no_uid = 1}, {1}},
    {"no_launcher_is_one_pe", t_no_launcher_is_one_pe, {.no_init = 1, .no_uid = 1}, {1}},
    {"heap_size_variables", t_heap_size_variables, {.no_init = 1, .no_uid = 1}, {1}},
    {"wrong_launcher_variables", t_wrong_launcher_variables, {.no_init = 1, .no_uid = 1}, {1}},
    {"job_from_launcher_variables", t_job_from_launcher_variables, {.no_init = 1, .no_uid = 1}, {2, 4}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
