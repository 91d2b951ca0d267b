#include "base/proc_stat.h"

#include <stdio.h>
#include <string.h>

int shmemi_proc_stat_field(int field, unsigned long long *value)
{
    char buf[2048];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    for (int at = 2; p && at < field; at++) /* p is at the end of field `at` */
        p = strchr(p + 1, ' ');
    return field >= 3 && p && sscanf(p + 1, "%llu", value) == 1 ? 0 : -1;
}
