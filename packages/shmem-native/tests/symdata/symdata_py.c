/*
 * symdata_py.c - a Python C extension's view of shmem_init (issue #24): a shared module that
 * carries the library's objects and initialises a job of one PE with the program's data
 * shared, as an OpenSHMEM extension calling shmem_init would.  symdata_python.py loads it
 * with ctypes into the interpreter running the test.
 */
#include <stdbool.h>
#include <string.h>

#include "aclshmem.h"
#include "init/init.h"

#define EXPORT __attribute__((visibility("default")))

/* A global of a shared library: never symmetric, whatever init shares. */
int symdata_module_word;

EXPORT int symdata_py_init(void)
{
    aclshmemx_uniqueid_t uid;
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    aclshmemx_set_conf_store_tls(false, NULL, 0);
    int rc = aclshmemx_get_uniqueid(&uid);
    if (rc == 0)
        rc = aclshmemx_set_attr_uniqueid_args(0, 1, 16 << 20, &uid, &attr);
    shmemi_init_options_t opts = {.share_data_segment = 1};
    return rc ? rc : shmemi_init_with_options(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr, &opts);
}

/* Puts into the module's global; returns the last error it left ("" if none). */
EXPORT const char *symdata_py_put_module_word(void)
{
    int one = 1;
    aclshmemx_clear_last_error();
    aclshmem_putmem(&symdata_module_word, &one, sizeof one, 0);
    return aclshmemx_get_last_error();
}

EXPORT const char *symdata_py_last_error(void)
{
    return aclshmemx_get_last_error();
}

EXPORT int symdata_py_finalize(void)
{
    return aclshmem_finalize();
}
