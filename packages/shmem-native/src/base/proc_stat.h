/* What the kernel says of this process in /proc/self/stat. */
#ifndef SHMEMI_PROC_STAT_H
#define SHMEMI_PROC_STAT_H

/* Field `field` (numbered from 1, as proc(5) does; a number, from field 3 on) of
 * /proc/self/stat into *value: 0, or -1 when it cannot be read. */
int shmemi_proc_stat_field(int field, unsigned long long *value);

#endif
