/* generic_refuses_double.c - must NOT compile: shmem_atomic_add has no double form (the
 * standard AMO types are integers), so its generic name refuses a double * instead of
 * picking some other type's function.  meson test osh_generic_refuses expects the compiler
 * to fail on this file; osh_generic_accepts compiles it with -DELEMENT=long, which must work
 * (so that the failure is the type's, not the command's).  With -DCOLLECTIVE the file calls
 * shmem_and_reduce instead, which has no double form either (and, or and xor take unsigned
 * and fixed-width integers): osh_generic_reduce_refuses and osh_generic_reduce_accepts
 * (-DELEMENT="unsigned long"). */
#include <shmem.h>

#ifndef ELEMENT
#define ELEMENT double
#endif

#ifndef COLLECTIVE
void add_to(ELEMENT *word)
{
    shmem_atomic_add(word, 1, 0);
}
#else
int and_of(ELEMENT *dest, const ELEMENT *source)
{
    return shmem_and_reduce(SHMEM_TEAM_WORLD, dest, source, 1);
}
#endif
