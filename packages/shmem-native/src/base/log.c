#include "base/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR", "FATAL"};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int api_level = SHMEMI_LOG_ERROR; /* set by aclshmemx_set_log_level (api/log.c) */
static int env_level = -1;                      /* SHMEM_LOG_LEVEL, wins when set */
static void (*extern_logger)(int, const char *);
static FILE *log_file;
static int log_pe = -1;

static int parse_level(const char *text)
{
    if (!text || !*text)
        return -1;
    for (int i = 0; i < 5; i++)
        if (strcasecmp(text, level_names[i]) == 0)
            return i;
    if (strcasecmp(text, "WARNING") == 0)
        return SHMEMI_LOG_WARN;
    if (text[0] >= '0' && text[0] <= '4' && text[1] == '\0')
        return text[0] - '0';
    return -1;
}

static void init_env_level(void)
{
    env_level = parse_level(getenv("SHMEM_LOG_LEVEL"));
}

static void read_env_level(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_env_level);
}

int shmemi_log_enabled(int level)
{
    read_env_level();
    int threshold = env_level >= 0 ? env_level : atomic_load(&api_level);
    return level >= threshold;
}

void shmemi_log_configure(int my_pe)
{
    pthread_mutex_lock(&log_lock);
    log_pe = my_pe;
    pthread_mutex_unlock(&log_lock);
}

/* Opens SHMEM_LOG_PATH/shmem_<pid>.log (default $HOME/shmem/log) on first use. */
static FILE *open_log_file(void)
{
    if (log_file)
        return log_file;
    char dir[512];
    const char *path = getenv("SHMEM_LOG_PATH");
    const char *home = getenv("HOME");
    if (path && *path)
        snprintf(dir, sizeof(dir), "%s", path);
    else
        snprintf(dir, sizeof(dir), "%s/shmem/log", home && *home ? home : "/tmp");
    /* mkdir -p */
    for (char *p = dir + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0750);
            *p = '/';
        }
    }
    mkdir(dir, 0750);
    char file[600];
    snprintf(file, sizeof(file), "%s/shmem_%d.log", dir, (int)getpid());
    log_file = fopen(file, "a");
    return log_file;
}

static int log_to_stdout(void)
{
    const char *v = getenv("SHMEM_LOG_TO_STDOUT");
    return v && strcmp(v, "1") == 0;
}

void shmemi_log(int level, const char *fmt, ...)
{
    if (level < 0 || level > SHMEMI_LOG_FATAL || !shmemi_log_enabled(level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&log_lock);
    if (extern_logger) {
        void (*logger)(int, const char *) = extern_logger;
        pthread_mutex_unlock(&log_lock);
        logger(level, msg);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    FILE *out = log_to_stdout() ? stdout : open_log_file();
    if (out) {
        fprintf(out, "[%04d-%02d-%02d %02d:%02d:%02d.%06ld] %d:%ld [PE %d] ACLSHMEM %s: %s\n",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                ts.tv_nsec / 1000, (int)getpid(), (long)syscall(SYS_gettid), log_pe,
                level_names[level], msg);
        fflush(out);
    }
    pthread_mutex_unlock(&log_lock);
}

void shmemi_log_set_level(int level)
{
    atomic_store(&api_level, level);
}

void shmemi_log_set_extern_logger(void (*func)(int level, const char *msg))
{
    pthread_mutex_lock(&log_lock);
    extern_logger = func;
    pthread_mutex_unlock(&log_lock);
}
