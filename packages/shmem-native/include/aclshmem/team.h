/* aclshmem/team.h - teams: ordered subsets of the world's PEs. */
#ifndef ACLSHMEM_TEAM_H
#define ACLSHMEM_TEAM_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over parent: PEs start, start+stride, ... (size of them) form *new_team.
 *  A PE that is not a member gets ACLSHMEM_SUCCESS and ACLSHMEM_TEAM_INVALID. */
ACLSHMEM_HOST_API int aclshmem_team_split_strided(aclshmem_team_t parent_team, int pe_start,
                                                  int pe_stride, int pe_size,
                                                  aclshmem_team_t *new_team);

/** Collective over parent: rows of x_range PEs (*x_team) and columns (*y_team). */
ACLSHMEM_HOST_API int aclshmem_team_split_2d(aclshmem_team_t parent_team, int x_range,
                                             aclshmem_team_t *x_team, aclshmem_team_t *y_team);

/** src_pe of src_team as numbered in dest_team; -1 if it is not a member or on error. */
ACLSHMEM_HOST_API int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe,
                                                 aclshmem_team_t dest_team);

/** Releases team's id for reuse (the world team cannot be destroyed). */
ACLSHMEM_HOST_API void aclshmem_team_destroy(aclshmem_team_t team);

/** This PE's number in the world team. */
ACLSHMEM_HOST_API int aclshmem_my_pe(void);
/** The number of PEs in the world team. */
ACLSHMEM_HOST_API int aclshmem_n_pes(void);
/* -1 for a team that does not exist. */
ACLSHMEM_HOST_API int aclshmem_team_my_pe(aclshmem_team_t team);
ACLSHMEM_HOST_API int aclshmem_team_n_pes(aclshmem_team_t team);

ACLSHMEM_HOST_API int aclshmem_team_get_config(aclshmem_team_t team, aclshmem_team_config_t *config);

#ifdef __cplusplus
}
#endif
#endif
