// header_cxx.cpp - shmem.h and shmemx.h in a C++ program: the headers compile as C++ (with
// -Wall -Wextra -pedantic -Werror) and the program links and runs, as a job of one PE (no
// launcher): init, allocation, RMA, an AMO through a context, shmem_sync(team), a reduction (of
// complex numbers too, which GNU C++ has as double _Complex), finalize.
#include <shmem.h>
#include <shmemx.h>

#include <cstdio>
#include <cstdlib>

int main()
{
    unsetenv("SHMEM_RUN_UID");
    unsetenv("SHMEM_RUN_PE");
    unsetenv("SHMEM_RUN_NPES");
    shmem_init();
    long *x = static_cast<long *>(shmem_malloc(sizeof(long)));
    shmem_long_p(x, 42, 0);
    long seen = shmem_long_g(x, 0);
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        return 1;
    shmem_ctx_long_atomic_add(ctx, x, 1, 0);
    shmem_ctx_destroy(ctx);
    int synced = shmem_sync(SHMEM_TEAM_WORLD); // the team form of the name shmem_sync
    double _Complex *z = static_cast<double _Complex *>(shmem_malloc(2 * sizeof(double _Complex)));
    z[0] = 3.0;
    int reduced = shmem_long_max_reduce(SHMEM_TEAM_WORLD, x + 0, x + 0, 1) == 0 &&
                  shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, z + 1, z, 1) == 0 && __real__ z[1] == 3.0;
    bool ok = seen == 42 && *x == 43 && shmem_n_pes() == 1 && shmem_team_my_pe(SHMEM_TEAM_WORLD) == 0 &&
              synced == 0 && reduced && shmemx_get_last_error()[0] == '\0';
    shmem_free(z);
    shmem_free(x);
    shmem_finalize();
    std::printf("%s\n", ok ? "ok" : "wrong results");
    return ok ? 0 : 1;
}
