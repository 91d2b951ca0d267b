/* Logging: level from SHMEM_LOG_LEVEL or aclshmemx_set_log_level, lines to an external
 * logger, stdout (SHMEM_LOG_TO_STDOUT=1) or a file under SHMEM_LOG_PATH. */
#ifndef SHMEMI_LOG_H
#define SHMEMI_LOG_H

enum {
    SHMEMI_LOG_DEBUG = 0,
    SHMEMI_LOG_INFO = 1,
    SHMEMI_LOG_WARN = 2,
    SHMEMI_LOG_ERROR = 3,
    SHMEMI_LOG_FATAL = 4
};

void shmemi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int shmemi_log_enabled(int level);
/* Called by init: applies the environment and names lines with the PE. */
void shmemi_log_configure(int my_pe);
/* The level aclshmemx_set_log_level sets (SHMEM_LOG_LEVEL wins over it); the caller checked it. */
void shmemi_log_set_level(int level);
/* Log lines go to func instead of the file / stdout; NULL restores the default. */
void shmemi_log_set_extern_logger(void (*func)(int level, const char *msg));

#define SHMEMI_DEBUG(...) shmemi_log(SHMEMI_LOG_DEBUG, __VA_ARGS__)
#define SHMEMI_INFO(...) shmemi_log(SHMEMI_LOG_INFO, __VA_ARGS__)
#define SHMEMI_WARN(...) shmemi_log(SHMEMI_LOG_WARN, __VA_ARGS__)

#endif
