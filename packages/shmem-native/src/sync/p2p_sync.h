/* The one query behind every wait/test family of every API (aclshmem/p2p_sync.h and the
 * OpenSHMEM wait_until/test families): a set of this PE's symmetric variables compared with
 * one value or a value each, evaluated once (test) or until it holds (wait). */
#ifndef SHMEMI_P2P_SYNC_H
#define SHMEMI_P2P_SYNC_H

#include <stddef.h>

/* How a type's variables are loaded and compared (opaque). */
typedef struct shmemi_p2p_type shmemi_p2p_type_t;

/* The integers of width bytes (1, 2, 4 or 8), signed or not; NULL for another width. */
const shmemi_p2p_type_t *shmemi_p2p_int_type(size_t width, int is_signed);

/* ALL: every included variable must hold; ANY: one (its index); SOME: as many as hold. */
typedef enum { SHMEMI_P2P_ALL, SHMEMI_P2P_ANY, SHMEMI_P2P_SOME } shmemi_p2p_kind_t;

/* The query over nelems variables at ivars (status[i] != 0 leaves variable i out; NULL: all
 * in), each compared by cmp (ACLSHMEM_CMP_*, the same values as SHMEM_CMP_*) with
 * values[0] or, when vector, values[i].  wait: until it holds, else one look.  res_out (ANY:
 * index or SIZE_MAX, SOME: count, indices[] filled) and test_out (ALL: 1 or 0) get
 * SIZE_MAX / 0 / 0 when the call fails; errors name api. */
void shmemi_p2p(const char *api, const shmemi_p2p_type_t *type, int wait, shmemi_p2p_kind_t kind, void *ivars,
                size_t nelems, size_t *indices, const int *status, int cmp, const void *values, int vector,
                size_t *res_out, int *test_out);

#endif
