/* Signals and local waits: the pieces that the host API and the on-stream operations share. */
#ifndef SHMEMI_SIGNAL_H
#define SHMEMI_SIGNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/instance.h"
#include "transport/transport.h"

/* Checks a signal update: sig_op SET or ADD (ACLSHMEM_SIGNAL_*, the same values as
 * SHMEM_SIGNAL_*), sig_addr a word of width bytes (4 or 8) of a symmetric object, aligned
 * to its width, pe a PE of the job.  Finds the word's segment and offset. */
int shmemi_signal_word_check(shmemi_instance_t *inst, const char *api, const void *sig_addr, size_t width,
                             int sig_op, int pe, int *seg, size_t *offset);
/* The same for the 32-bit signal word of the aclshmem API. */
int shmemi_signal_check(shmemi_instance_t *inst, const char *api, const void *sig_addr, int sig_op, int pe,
                        int *seg, size_t *offset);

/* Put-with-signal: nelems * elem_size bytes from src to dst on pe (none when 0), then the
 * atomic SET/ADD of signal on the sig_width-byte word sig_addr there (4: the aclshmem API,
 * 8: OpenSHMEM's uint64_t), then pe's waiters are woken.  Everything is checked before
 * anything is written. */
int shmemi_put_signal_word(const char *api, shmemi_channel_t *ch, void *dst, const void *src, size_t nelems,
                           size_t elem_size, void *sig_addr, uint64_t signal, size_t sig_width, int sig_op, int pe);
/* shmemi_put_signal_word on the aclshmem API's 32-bit signal word. */
int shmemi_put_signal(const char *api, void *dst, const void *src, size_t nelems, size_t elem_size,
                      void *sig_addr, int32_t signal, int sig_op, int pe);

/* Checks a comparison operator (aclshmem_cmp_op_type_t). */
int shmemi_cmp_check(const char *api, int cmp);

/* Checks a local wait on sig_addr (this PE's symmetric heap, 4-aligned) and cmp. */
int shmemi_signal_wait_check(shmemi_instance_t *inst, const char *api, const int32_t *sig_addr, int cmp);

/* Waits until *sig_addr cmp cmp_val; *value gets the value that met it. */
int shmemi_signal_wait(const char *api, int32_t *sig_addr, int cmp, int32_t cmp_val, int32_t *value);
/* The same on a 64-bit unsigned signal word (OpenSHMEM's), 8-aligned. */
int shmemi_signal_wait64(const char *api, uint64_t *sig_addr, int cmp, uint64_t cmp_val, uint64_t *value);

#endif
