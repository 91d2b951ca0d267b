/* The entry points of aclshmem/team.h: each looks up the active instance, then makes one
 * call into team/ (splits, translate, destroy, configs) or reads the instance's or the
 * team's own numbers. */
#include "aclshmem/team.h"

#include "base/error.h"
#include "core/instance.h"
#include "team/team.h"

int aclshmem_team_split_strided(aclshmem_team_t parent_team, int pe_start, int pe_stride, int pe_size,
                                aclshmem_team_t *new_team)
{
    return shmemi_team_split_strided("aclshmem_team_split_strided", parent_team, pe_start, pe_stride, pe_size,
                                     new_team);
}

int aclshmem_team_split_2d(aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team,
                           aclshmem_team_t *y_team)
{
    return shmemi_team_split_2d("aclshmem_team_split_2d", parent_team, x_range, x_team, y_team);
}

int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_translate_pe");
    return inst ? shmemi_team_translate(inst, src_team, src_pe, dest_team) : -1;
}

void aclshmem_team_destroy(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_destroy");
    if (inst)
        shmemi_team_destroy(inst, team, "aclshmem_team_destroy");
}

int aclshmem_my_pe(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_my_pe");
    return inst ? inst->my_pe : -1;
}

int aclshmem_n_pes(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_n_pes");
    return inst ? inst->n_pes : -1;
}

int aclshmem_team_my_pe(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_my_pe");
    shmemi_team_t *t = inst ? shmemi_team_get(inst, team) : NULL;
    return t ? t->my_idx : -1;
}

int aclshmem_team_n_pes(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_n_pes");
    shmemi_team_t *t = inst ? shmemi_team_get(inst, team) : NULL;
    return t ? t->size : -1;
}

int aclshmem_team_get_config(aclshmem_team_t team, aclshmem_team_config_t *config)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_get_config");
    return inst ? shmemi_team_config(inst, team, config) : ACLSHMEM_NOT_INITED;
}
