/*
 * test_log.c - logging: aclshmemx_set_log_level, aclshmemx_set_extern_logger, and the
 * environment variables SHMEM_LOG_LEVEL, SHMEM_LOG_TO_STDOUT and SHMEM_LOG_PATH.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* ---- a logger that remembers what it got ------------------------------------------------ */
static int g_count[8];
static int g_total;
static char g_last[1024];
static int g_last_level = -1;

static void logger(int level, const char *msg)
{
    if (level >= 0 && level < 8)
        g_count[level]++;
    g_total++;
    g_last_level = level;
    snprintf(g_last, sizeof g_last, "%s", msg ? msg : "(null)");
}

static void reset_logger(void)
{
    memset(g_count, 0, sizeof g_count);
    g_total = 0;
    g_last[0] = '\0';
    g_last_level = -1;
}

/* A call that fails after init: malloc(0).  Its message is kept in g_failed_msg. */
static char g_failed_msg[512];
static void fail_once(void)
{
    void *p = aclshmem_malloc(0);
    EXPECT_NULL(p);
    const char *le = aclshmemx_get_last_error();
    snprintf(g_failed_msg, sizeof g_failed_msg, "%s", le ? le : "");
}

/* ---- set_log_level ------------------------------------------------------------------------ */
static void check_levels(void)
{
    for (int l = 0; l <= 4; l++)
        EXPECT_EQ(aclshmemx_set_log_level(l), ACLSHMEM_SUCCESS);
    static const int bad[] = { -1, 5, 100, -100000 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness_mark_error();
        int rc = aclshmemx_set_log_level(bad[i]);
        if (rc >= 0)
            harness_report(__FILE__, __LINE__, "set_log_level(%d) returned %d", bad[i], rc);
        EXPECT_ERROR_SET();
    }
    EXPECT_EQ(aclshmemx_set_log_level(3), ACLSHMEM_SUCCESS);
}

static int t_levels(int me, int n)
{
    check_levels();
    ASSERT_EQ(harness_init(), 0);
    check_levels();
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- the external logger ------------------------------------------------------------------- */
static int t_extern_logger(int me, int n)
{
    EXPECT_EQ(aclshmemx_set_extern_logger(logger), ACLSHMEM_SUCCESS);

    /* Before init: a failing call reaches the logger, at ERROR level. */
    reset_logger();
    aclshmemx_init_attr_t bad = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    bad.my_pe = -1;
    EXPECT_NE(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &bad), ACLSHMEM_SUCCESS);
    EXPECT_GE(g_count[3], 1);
    EXPECT(g_last[0] != '\0');

    ASSERT_EQ(harness_init(), 0);
    EXPECT_EQ(aclshmemx_set_log_level(3), ACLSHMEM_SUCCESS);
    reset_logger();
    fail_once();
    EXPECT_GE(g_count[3], 1);
    EXPECT_EQ(g_last_level, 3);
    const char *le = aclshmemx_get_last_error();
    if (!le || !le[0] || !strstr(g_last, le))
        harness_report(__FILE__, __LINE__, "the logged line \"%s\" should carry the error \"%s\"",
                       g_last, le ? le : "");

    aclshmem_team_t t = 5;
    reset_logger();
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 0, 1, &t), ACLSHMEM_INVALID_PARAM);
    EXPECT_GE(g_total, 1);

    /* Above the level: nothing. */
    EXPECT_EQ(aclshmemx_set_log_level(4), ACLSHMEM_SUCCESS);
    reset_logger();
    fail_once();
    EXPECT_EQ(g_count[3], 0);
    EXPECT_EQ(g_count[0] + g_count[1] + g_count[2], 0);
    EXPECT_EQ(aclshmemx_set_log_level(3), ACLSHMEM_SUCCESS);
    reset_logger();
    fail_once();
    EXPECT_GE(g_count[3], 1);

    /* Detached: nothing reaches it any more. */
    EXPECT_EQ(aclshmemx_set_extern_logger(NULL), ACLSHMEM_SUCCESS);
    reset_logger();
    fail_once();
    EXPECT_EQ(g_total, 0);

    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- SHMEM_LOG_LEVEL -------------------------------------------------------------------- */
static int t_env_debug(int me, int n)
{
    setenv("SHMEM_LOG_LEVEL", "DEBUG", 1);
    EXPECT_EQ(aclshmemx_set_extern_logger(logger), ACLSHMEM_SUCCESS);
    reset_logger();
    ASSERT_EQ(harness_init(), 0);
    harness_ring_check(me, n);
    if (g_count[0] + g_count[1] == 0)
        harness_report(__FILE__, __LINE__,
                       "SHMEM_LOG_LEVEL=DEBUG: init and a put/barrier logged no DEBUG/INFO line");
    EXPECT_EQ(aclshmem_finalize(), 0);
    aclshmemx_set_extern_logger(NULL);
    unsetenv("SHMEM_LOG_LEVEL");
    return 0;
}

/* The environment wins over aclshmemx_set_log_level. */
static int t_env_fatal(int me, int n)
{
    setenv("SHMEM_LOG_LEVEL", "FATAL", 1);
    EXPECT_EQ(aclshmemx_set_extern_logger(logger), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_init(), 0);
    (void)aclshmemx_set_log_level(0);
    reset_logger();
    fail_once();
    EXPECT_EQ(g_count[0] + g_count[1] + g_count[2] + g_count[3], 0);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    aclshmemx_set_extern_logger(NULL);
    unsetenv("SHMEM_LOG_LEVEL");
    return 0;
}

/* ---- SHMEM_LOG_TO_STDOUT ------------------------------------------------------------------ */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static int t_to_stdout(int me, int n)
{
    char path[] = "/tmp/aclshmem-log-stdout-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    ASSERT(saved >= 0);
    dup2(fd, 1);
    close(fd);
    setenv("SHMEM_LOG_TO_STDOUT", "1", 1);
    char dir[] = "/tmp/aclshmem-log-unused-XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(dir));
    setenv("SHMEM_LOG_PATH", dir, 1); /* must stay empty: lines go to stdout */

    int rc = harness_init();
    if (rc == 0) {
        fail_once();
        harness_ring_check(me, n);
        aclshmem_finalize();
    }
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    ASSERT_EQ(rc, 0);
    unsetenv("SHMEM_LOG_TO_STDOUT");
    unsetenv("SHMEM_LOG_PATH");

    size_t len = 0;
    char *text = slurp(path, &len);
    ASSERT_NOT_NULL(text);
    if (len == 0)
        harness_report(__FILE__, __LINE__, "SHMEM_LOG_TO_STDOUT=1: nothing was printed on stdout");
    else if (!g_failed_msg[0] || !strstr(text, g_failed_msg))
        harness_report(__FILE__, __LINE__, "stdout has no line with the malloc(0) error \"%s\": \"%.300s\"",
                       g_failed_msg, text);
    free(text);
    unlink(path);
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            files++;
    if (d)
        closedir(d);
    EXPECT_EQ(files, 0);
    rmdir(dir);
    return 0;
}

/* ---- SHMEM_LOG_PATH ---------------------------------------------------------------------- */
static size_t dir_bytes(const char *dir, int *files, char **content)
{
    size_t total = 0;
    *files = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            (*files)++;
            total += (size_t)st.st_size;
            char *more = st.st_size > 0 && content ? slurp(p, NULL) : NULL;
            if (more) {
                size_t had = *content ? strlen(*content) : 0;
                char *joined = realloc(*content, had + strlen(more) + 2);
                if (joined) {
                    memcpy(joined + had, more, strlen(more) + 1);
                    *content = joined;
                }
                free(more);
            }
        }
    }
    closedir(d);
    return total;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int t_log_path(int me, int n)
{
    /* PE 0 makes the directory (and names a not-yet-existing subdirectory). */
    char dir[200] = "";
    if (me == 0) {
        char tmpl[] = "/tmp/aclshmem-log-path-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(tmpl));
        snprintf(dir, sizeof dir, "%s", tmpl);
    }
    harness_bcast(dir, sizeof dir);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/nested/logs", dir);
    unsetenv("SHMEM_LOG_TO_STDOUT");
    setenv("SHMEM_LOG_PATH", sub, 1);

    ASSERT_EQ(harness_init(), 0);
    fail_once();
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    unsetenv("SHMEM_LOG_PATH");
    harness_sync();

    if (me == 0) {
        int files = 0;
        char *content = NULL;
        size_t bytes = dir_bytes(sub, &files, &content);
        if (files == 0)
            harness_report(__FILE__, __LINE__, "SHMEM_LOG_PATH=%s: no log file appeared", sub);
        else if (bytes == 0)
            harness_report(__FILE__, __LINE__, "SHMEM_LOG_PATH: %d empty log file(s)", files);
        else if (content && (!g_failed_msg[0] || !strstr(content, g_failed_msg)))
            harness_report(__FILE__, __LINE__, "the log has no line with the malloc(0) error \"%s\"",
                           g_failed_msg);
        free(content);
    }
    harness_sync();
    if (me == 0)
        rm_tree(dir);
    return 0;
}

static const harness_case cases[] = {
    { "levels", t_levels, { .no_init = 1, .no_uid = 1 }, { 1, 2 } },
    { "extern_logger", t_extern_logger, { .no_init = 1, .no_uid = 1 }, { 1, 2 } },
    { "env_debug", t_env_debug, { .no_init = 1, .no_uid = 1 }, { 2 } },
    { "env_fatal", t_env_fatal, { .no_init = 1, .no_uid = 1 }, { 2 } },
    { "to_stdout", t_to_stdout, { .no_init = 1, .no_uid = 1 }, { 1, 2 } },
    { "log_path", t_log_path, { .no_init = 1, .no_uid = 1 }, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
