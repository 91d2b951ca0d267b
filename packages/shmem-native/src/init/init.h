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
 * does).  Same results and errors, plus those of the options.  attr is not NULL. */
int shmemi_init_with_options(aclshmemx_bootstrap_t flags, aclshmemx_init_attr_t *attr,
                             const shmemi_init_options_t *opts);

/* The work behind the other entry points of aclshmem/init.h (api/init.c checks their
 * arguments first). */
/* ACLSHMEM_SUCCESS when instance_id is in 0..254, else an error naming api. */
int shmemi_check_instance_id(uint64_t instance_id, const char *api);
/* Collective: finalizes the active instance / instance_id (made active meanwhile). */
int shmemi_finalize_active(void);
int shmemi_finalize_id(uint64_t instance_id);
/* The active instance's aclshmemx_init_status_t. */
int shmemi_init_status(void);
/* attr for an init with uid (its defaults, then PE, PE count and heap size); uid learns them too. */
void shmemi_attr_for_uniqueid(int my_pe, int n_pes, uint64_t local_mem_size, aclshmemx_uniqueid_t *uid,
                              aclshmemx_init_attr_t *attr);
/* Ends every PE of the job (only this process before init); does not return. */
_Noreturn void shmemi_global_exit(int status);
/* The active instance's context, or NULL; makes instance_id active (an error if it is not
 * initialized). */
aclshmem_instance_ctx *shmemi_active_ctx(void);
int shmemi_activate_id(uint64_t instance_id);
/* Fills d (all of this version's fields) for aclshmemx_describe; load: the UCX plug-in too. */
void shmemi_describe(aclshmemx_description_t *d, int load);

#endif
