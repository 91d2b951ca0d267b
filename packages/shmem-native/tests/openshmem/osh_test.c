/* osh_test.c - see osh_test.h. */
#define _GNU_SOURCE
#include "osh_test.h"

#include <stdio.h>
#include <stdlib.h>

void osh_test_set_launcher_env(void)
{
    const unsigned char *uid = (const unsigned char *)harness_uid();
    char hex[2 * sizeof(aclshmemx_uniqueid_t) + 1];
    for (size_t i = 0; i < sizeof(aclshmemx_uniqueid_t); i++)
        snprintf(hex + 2 * i, 3, "%02x", uid[i]);
    char pe[16], npes[16];
    snprintf(pe, sizeof pe, "%d", harness_my_pe);
    snprintf(npes, sizeof npes, "%d", harness_n_pes);
    setenv("SHMEM_RUN_UID", hex, 1);
    setenv("SHMEM_RUN_PE", pe, 1);
    setenv("SHMEM_RUN_NPES", npes, 1);
    setenv("SHMEM_SYMMETRIC_SIZE", "32M", 1);
}

void osh_test_init(void)
{
    osh_test_set_launcher_env();
    shmem_init();
}
