/*
 * aclshmem/shmem4py.h - what shmem4py needs to know to build against libaclshmem.
 *
 * shmem4py (PyPI "shmem4py", the Python bindings for OpenSHMEM) compiles its C part with
 * the oshcc it is given ($OSHCC) and recognises five implementations by macros of their
 * shmem.h.  For any other it compiles stand-ins of its own for the routines that OpenSHMEM
 * 1.4 and 1.5 added, skipping each one whose PySHMEM_HAVE_<name> macro is defined.  Our
 * shmem.h declares all those routines already, so the stand-ins would clash with them and
 * the build would fail.  This header, given to the compiler with -include, defines
 * PySHMEM_HAVE_<name> for every part that shmem.h's feature tests (ACLSHMEM_HAVE_*) say
 * libaclshmem has; it defines nothing else, and names no vendor:
 *
 *     OSHCC=aclshmemcc CPPFLAGS="-include aclshmem/shmem4py.h" \
 *         pip install --no-binary shmem4py --no-cache-dir shmem4py
 *
 * The names are those shmem4py 1.0.0 tests (its src/libshmem/fallback.h).
 * tests/openshmem/test_osh_features.c checks that each is defined here; ci/shmem4py.sh
 * builds shmem4py this way and runs its own tests at 1, 2 and 4 PEs.
 */
#ifndef ACLSHMEM_SHMEM4PY_H
#define ACLSHMEM_SHMEM4PY_H

#include "../shmem.h"

#if ACLSHMEM_HAVE_MALLOC_WITH_HINTS
#define PySHMEM_HAVE_shmem_malloc_with_hints 1
#endif
#if ACLSHMEM_HAVE_TEAMS
#define PySHMEM_HAVE_shmem_team_t 1
#endif
#if ACLSHMEM_HAVE_TEAM_CONTEXTS
#define PySHMEM_HAVE_SHMEM_CTX_INVALID 1
#endif
#if ACLSHMEM_HAVE_AMO_NBI
#define PySHMEM_HAVE_shmem_amo_nbi 1
#endif
#if ACLSHMEM_HAVE_PUT_SIGNAL
#define PySHMEM_HAVE_shmem_put_signal 1
#endif
#if ACLSHMEM_HAVE_SIGNAL_FETCH
#define PySHMEM_HAVE_shmem_signal_fetch 1
#endif
#if ACLSHMEM_HAVE_SIGNAL_WAIT_UNTIL
#define PySHMEM_HAVE_shmem_signal_wait_until 1
#endif
/* The collectives on teams: shmem4py's "shmem_broadcast" ... "shmem_alltoalls" are the
 * typed forms (shmem_<T>_broadcast(team, ...)), the *mem names the byte forms. */
#if ACLSHMEM_HAVE_TEAM_COLLECTIVES
#define PySHMEM_HAVE_shmem_broadcast 1
#define PySHMEM_HAVE_shmem_collect 1
#define PySHMEM_HAVE_shmem_fcollect 1
#define PySHMEM_HAVE_shmem_alltoall 1
#define PySHMEM_HAVE_shmem_alltoalls 1
#define PySHMEM_HAVE_shmem_broadcastmem 1
#define PySHMEM_HAVE_shmem_collectmem 1
#define PySHMEM_HAVE_shmem_fcollectmem 1
#define PySHMEM_HAVE_shmem_alltoallmem 1
#define PySHMEM_HAVE_shmem_alltoallsmem 1
#endif
#if ACLSHMEM_HAVE_TEAM_REDUCTIONS
#define PySHMEM_HAVE_shmem_reduce 1
#endif
#if ACLSHMEM_HAVE_WAIT_TEST_MANY
#define PySHMEM_HAVE_shmem_wait_test_many 1
#endif
#if ACLSHMEM_HAVE_PCONTROL
#define PySHMEM_HAVE_shmem_pcontrol 1
#endif

#endif /* ACLSHMEM_SHMEM4PY_H */
