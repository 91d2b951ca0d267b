/* Signals and local waits: the pieces that the host API and the on-stream operations share. */
#ifndef SHMEMI_SIGNAL_H
#define SHMEMI_SIGNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/instance.h"

/* Checks a signal update: sig_op SET or ADD, sig_addr a 4-aligned word of a symmetric heap,
 * pe a PE of the job.  Finds the word's segment and offset. */
int shmemi_signal_check(shmemi_instance_t *inst, const char *api, const void *sig_addr, int sig_op, int pe,
                        int *seg, size_t *offset);

/* Put-with-signal: nelems * elem_size bytes from src to dst on pe (none when 0), then the
 * atomic SET/ADD of signal on sig_addr there, then pe's waiters are woken.  Everything is
 * checked before anything is written. */
int shmemi_put_signal(const char *api, void *dst, const void *src, size_t nelems, size_t elem_size,
                      void *sig_addr, int32_t signal, int sig_op, int pe);

/* Checks a comparison operator (aclshmem_cmp_op_type_t). */
int shmemi_cmp_check(const char *api, int cmp);

/* Checks a local wait on sig_addr (this PE's symmetric heap, 4-aligned) and cmp. */
int shmemi_signal_wait_check(shmemi_instance_t *inst, const char *api, const int32_t *sig_addr, int cmp);

/* Waits until *sig_addr cmp cmp_val; *value gets the value that met it. */
int shmemi_signal_wait(const char *api, int32_t *sig_addr, int cmp, int32_t cmp_val, int32_t *value);

#endif
