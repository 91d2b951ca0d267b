/*
 * aclshmemx_describe: the library's account of its transports and of the UCX plug-in,
 * before init, after init, with the plug-in present, absent, of no use and disabled, and
 * its answers to bad arguments.
 *
 * The plug-in is looked for once per process, so every case runs in PEs of its own (the
 * harness forks fresh ones) and sets SHMEM_UCX_PLUGIN before its first call.  HAVE_UCX_PLUGIN
 * is 1 when this build made libaclshmem_ucx.so beside the library.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#ifndef HAVE_UCX_PLUGIN
#define HAVE_UCX_PLUGIN 0
#endif

static aclshmemx_description_t describe(uint32_t flags)
{
    aclshmemx_description_t d = ACLSHMEMX_DESCRIPTION_INITIALIZER;
    ASSERT(aclshmemx_describe(&d, flags) == ACLSHMEM_SUCCESS);
    EXPECT_EQ(d.size, sizeof(d));
    return d;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static void expect_library(const aclshmemx_description_t *d)
{
    char name[ACLSHMEM_MAX_NAME_LEN];
    aclshmem_info_get_name(name);
    EXPECT(d->version && ends_with(name, d->version)); /* "ACLSHMEM v1.1.1" and "1.1.1" */
    EXPECT(d->library_path && strstr(d->library_path, "/libaclshmem.so"));
}

/* Before init, without loading: nothing is in use, and the plug-in has not been looked for. */
static int t_before_init_no_load(int me, int n)
{
    (void)me, (void)n;
    unsetenv("SHMEM_UCX_PLUGIN");
    aclshmemx_description_t d = describe(ACLSHMEMX_DESCRIBE_NO_LOAD);
    expect_library(&d);
    EXPECT_EQ(d.initialized, 0);
    EXPECT_EQ(d.my_pe, -1);
    EXPECT_EQ(d.n_pes, -1);
    EXPECT_EQ(d.transports_in_use, 0);
    EXPECT_EQ(d.transports_available, ACLSHMEMX_TRANSPORT_SHM);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_NOT_LOADED_YET);
    EXPECT_EQ(d.ucx.from_env, 0);
    EXPECT(ends_with(d.ucx.path, "/libaclshmem_ucx.so"));
    /* The plug-in is looked for beside the library. */
    const char *slash = strrchr(d.library_path, '/');
    EXPECT(slash && strncmp(d.ucx.path, d.library_path, (size_t)(slash - d.library_path + 1)) == 0);
    EXPECT(d.ucx.name == NULL && d.ucx.version == NULL && d.ucx.abi == 0);
    EXPECT(d.ucx.expected_abi > 0);
    EXPECT(harness_contains(d.ucx.reason, "not loaded yet"));
    return 0;
}

/* Before init, loading: what a multi-node job would use. */
static int t_before_init_load(int me, int n)
{
    (void)me, (void)n;
    unsetenv("SHMEM_UCX_PLUGIN");
    aclshmemx_description_t d = describe(0);
    EXPECT_EQ(d.initialized, 0);
    if (!HAVE_UCX_PLUGIN) {
        EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_NOT_FOUND);
        EXPECT_EQ(d.transports_available, ACLSHMEMX_TRANSPORT_SHM);
        return 0;
    }
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_LOADED);
    EXPECT_EQ(d.transports_available, ACLSHMEMX_TRANSPORT_SHM | ACLSHMEMX_TRANSPORT_UCX);
    EXPECT_EQ(d.transports_in_use, 0);
    EXPECT_EQ(d.ucx.abi, d.ucx.expected_abi);
    EXPECT(d.ucx.version && strcmp(d.ucx.version, d.version) == 0);
    EXPECT(d.ucx.name && strncmp(d.ucx.name, "UCX ", 4) == 0);
    EXPECT_EQ(d.ucx.reason[0], '\0');
    EXPECT_EQ(d.ucx.data_plane_error, 0);
    EXPECT(strncmp(d.ucx.data_plane, "am", 2) == 0 || strncmp(d.ucx.data_plane, "rma", 3) == 0);
    /* The plug-in's reading of the environment is made at each call. */
    setenv("SHMEM_UCX_DATA_PLANE", "fast", 1);
    d = describe(0);
    EXPECT_EQ(d.ucx.data_plane_error, 1);
    EXPECT(strstr(d.ucx.data_plane, "SHMEM_UCX_DATA_PLANE=fast"));
    unsetenv("SHMEM_UCX_DATA_PLANE");
    return 0;
}

/* After init of a job on one node: shm is in use and the plug-in was never needed. */
static int t_after_init(int me, int n)
{
    aclshmemx_description_t d = describe(ACLSHMEMX_DESCRIBE_NO_LOAD);
    EXPECT_EQ(d.initialized, 1);
    EXPECT_EQ(d.my_pe, me);
    EXPECT_EQ(d.n_pes, n);
    EXPECT_EQ(d.transports_in_use, ACLSHMEMX_TRANSPORT_SHM);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_NOT_LOADED_YET);
    harness_sync();
    return 0;
}

/* After finalize the description says so again. */
static int t_after_finalize(int me, int n)
{
    ASSERT(harness_init() == ACLSHMEM_SUCCESS);
    aclshmemx_description_t d = describe(ACLSHMEMX_DESCRIBE_NO_LOAD);
    EXPECT_EQ(d.initialized, 1);
    EXPECT_EQ(d.n_pes, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    d = describe(ACLSHMEMX_DESCRIBE_NO_LOAD);
    EXPECT_EQ(d.initialized, 0);
    EXPECT_EQ(d.my_pe, -1);
    EXPECT_EQ(d.transports_in_use, 0);
    (void)me;
    return 0;
}

static int t_disabled(int me, int n)
{
    (void)me, (void)n;
    setenv("SHMEM_UCX_PLUGIN", "none", 1);
    /* Known without loading anything. */
    aclshmemx_description_t d = describe(ACLSHMEMX_DESCRIBE_NO_LOAD);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_DISABLED);
    d = describe(0);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_DISABLED);
    EXPECT_EQ(d.ucx.from_env, 1);
    EXPECT_EQ(d.ucx.path[0], '\0');
    EXPECT(strstr(d.ucx.reason, "SHMEM_UCX_PLUGIN=none"));
    EXPECT_EQ(d.transports_available, ACLSHMEMX_TRANSPORT_SHM);
    /* A job on one node does not need it. */
    ASSERT(harness_init() == ACLSHMEM_SUCCESS);
    d = describe(0);
    EXPECT_EQ(d.transports_in_use, ACLSHMEMX_TRANSPORT_SHM);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

static int t_absent(int me, int n)
{
    (void)me, (void)n;
    const char *path = "/nonexistent-aclshmem-test/libaclshmem_ucx.so";
    setenv("SHMEM_UCX_PLUGIN", path, 1);
    aclshmemx_description_t d = describe(0);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_NOT_FOUND);
    EXPECT_EQ(d.ucx.from_env, 1);
    EXPECT(strcmp(d.ucx.path, path) == 0);
    EXPECT(strstr(d.ucx.reason, path));
    EXPECT(d.ucx.name == NULL && d.ucx.version == NULL);
    EXPECT_EQ(d.transports_available, ACLSHMEMX_TRANSPORT_SHM);
    return 0;
}

/* A shared object that loads but is no plug-in (libc, by its soname: the loader finds it). */
static int t_not_a_plugin(int me, int n)
{
    (void)me, (void)n;
    setenv("SHMEM_UCX_PLUGIN", "libc.so.6", 1);
    aclshmemx_description_t d = describe(0);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_NOT_A_PLUGIN);
    EXPECT(strstr(d.ucx.reason, "is not a libaclshmem transport plug-in (no shmemi_transport_plugin)"));
    return 0;
}

/* A file the loader refuses (text, not a shared object): its error is the reason. */
static int t_load_failed(int me, int n)
{
    (void)me, (void)n;
    char path[] = "/tmp/aclshmem-describe-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    static const char text[] = "not a shared object\n";
    ASSERT(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1));
    close(fd);
    setenv("SHMEM_UCX_PLUGIN", path, 1);
    aclshmemx_description_t d = describe(0);
    unlink(path);
    EXPECT_EQ(d.ucx.status, ACLSHMEMX_PLUGIN_LOAD_FAILED);
    EXPECT(strstr(d.ucx.reason, path)); /* the loader's error names the file */
    return 0;
}

static int t_bad_arguments(int me, int n)
{
    (void)me, (void)n;
    aclshmemx_clear_last_error();
    EXPECT_EQ(aclshmemx_describe(NULL, 0), ACLSHMEM_INVALID_PARAM);
    EXPECT(strstr(aclshmemx_get_last_error(), "desc is NULL"));

    aclshmemx_description_t d;
    memset(&d, 0x5a, sizeof(d));
    d.size = sizeof(size_t); /* a caller that forgot to set the size properly */
    EXPECT_EQ(aclshmemx_describe(&d, 0), ACLSHMEM_INVALID_PARAM);
    EXPECT(strstr(aclshmemx_get_last_error(), "sizeof(aclshmemx_description_t)"));
    EXPECT_EQ(d.size, sizeof(size_t)); /* nothing written */
    d.size = 0;
    EXPECT_EQ(aclshmemx_describe(&d, 0), ACLSHMEM_INVALID_PARAM);

    d.size = sizeof(d);
    EXPECT_EQ(aclshmemx_describe(&d, 0x80), ACLSHMEM_INVALID_PARAM);
    EXPECT(strstr(aclshmemx_get_last_error(), "unknown flags 0x80"));

    /* A caller built against a later header: its extra fields stay as they were, and the
     * size written back says how much this library filled. */
    struct {
        aclshmemx_description_t known;
        unsigned char later[64];
    } bigger;
    memset(&bigger, 0x5a, sizeof(bigger));
    bigger.known.size = sizeof(bigger);
    EXPECT_EQ(aclshmemx_describe(&bigger.known, ACLSHMEMX_DESCRIBE_NO_LOAD), ACLSHMEM_SUCCESS);
    EXPECT_EQ(bigger.known.size, sizeof(aclshmemx_description_t));
    for (size_t i = 0; i < sizeof(bigger.later); i++)
        EXPECT_EQ(bigger.later[i], 0x5a);
    return 0;
}

static const harness_case cases[] = {
    { "before_init_no_load", t_before_init_no_load, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "before_init_load", t_before_init_load, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "after_init", t_after_init, { 0 }, { 2, 3 } },
    { "after_finalize", t_after_finalize, { .no_init = 1, .no_uid = 1 }, { 2 } },
    { "disabled", t_disabled, { .no_init = 1, .no_uid = 1 }, { 2 } },
    { "absent", t_absent, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "not_a_plugin", t_not_a_plugin, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "load_failed", t_load_failed, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "bad_arguments", t_bad_arguments, { .no_init = 1, .no_uid = 1 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
