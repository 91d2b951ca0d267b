/*
 * coll_mix.h - seeded mixes of collectives on teams that come and go (coll_mix.c), shared by
 * the one-node test (test_coll_mix.c) and the multi-node suite (multinode/mn_coll.c).
 */
#ifndef COLL_MIX_H
#define COLL_MIX_H

#include <stdint.h>

#define COLL_MIX_MAX_PES 8 /* the world it runs on, at most */

/* Reports one failed check: the line of coll_mix.c, and what was wrong. */
typedef void (*coll_mix_report_fn)(int line, const char *message);

/* Collective over the world of n_world PEs (at most COLL_MIX_MAX_PES): `steps` steps drawn
 * from seed, every failed check told to report; returns 0 (-1 when the buffers could not be
 * allocated).  Every PE must pass the same seed and steps. */
int coll_mix_run(int n_world, uint64_t seed, int steps, coll_mix_report_fn report);

#endif
