/* Initialisation with options that only the library's own front ends set (internal). */
#ifndef SHMEMI_INIT_H
#define SHMEMI_INIT_H

#include "aclshmem/init.h"

typedef struct {
    /* Make the program's global and static variables symmetric (mem/data_segment.h): the
     * OpenSHMEM shmem_init sets it; aclshmemx_init_attr (and so Python) never does.  Every
     * PE of the job must set it alike and run the same executable, or init fails on all. */
    int share_data_segment;
} shmemi_init_options_t;

/* aclshmemx_init_attr with options; opts NULL means all off (what aclshmemx_init_attr
 * does).  Same results and errors, plus those of the options. */
int shmemi_init_with_options(aclshmemx_bootstrap_t flags, aclshmemx_init_attr_t *attr,
                             const shmemi_init_options_t *opts);

#endif
