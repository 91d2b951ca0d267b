/*
 * mn_suite.c - the multi-node suite (issue #13): one process per PE, its PEs spread over
 * several nodes.  tests/multinode/test_multinode.py starts it inside network namespaces
 * (each namespace is a node: PEs of one node share memory, PEs of different nodes reach
 * each other through the inter-node transport, UCX) and runs every case on 2 nodes x 2 PEs
 * and on 3 nodes x 1 PE.
 *
 *   mn_suite CASE [rank=R] [n_pes=N] [ppn=K] [addr=A] [port=P]
 *   mn_suite --list
 *
 * Settings come from argv or else the environment: MN_RANK, MN_N_PES, MN_PPN (PEs per node;
 * the PEs of a node are consecutive, node = pe / ppn), MN_ADDR and MN_PORT (PE 0's
 * control-plane address: init is DEFAULT mode, ip_port "tcp://ADDR:PORT", so every PE needs
 * the same SHMEM_JOB_SECRET), MN_TIMEOUT (seconds for the case, default 150), MN_TLS=0
 * (turn the control plane's TLS off), MN_ONE_NODE=1 (a self-test of the suite: the PEs are
 * really all on one node, whatever ppn says, so the layout check expects that).  The case
 * "victim" also reads MN_VICTIM_FILE and MN_VICTIM_SECONDS (see case_victim in mn_victim.c).
 *
 * Built with -DMN_SHARE_DATA (mn_suite_data: the library's objects linked in, since its init
 * entry is internal) it initialises through shmemi_init_with_options with the program's
 * global and static data shared (issue #24, src/mem/data_segment.c), and has one case more,
 * "globals": the cases above keep working, and globals are targets across nodes.
 *
 * Every case checks real data.  Each PE sends to peer = (me + ppn) % n, which is on the next
 * node, and receives from src = (me - ppn) mod n, on the previous node.  Exit status: 0 when
 * every check passed; 1 a check failed ("FAIL ..." lines on stdout); 2 bad usage; 3 init
 * failed (its FAIL line has the library's error); 4 the case did not end in MN_TIMEOUT s.
 *
 * The suite's files, all in this folder (both programs are built from all of them):
 *   mn_suite.c    this comment, main, the table of cases, the layout check and the settings
 *   mn_suite.h    what the files share: the job as this PE sees it (me, n, ppn, nodes, peer,
 *                 src), CHECK and fail_at, now, sleep_ms, byte patterns, allocation, the cases
 *   mn_common.c   those helpers and that state
 *   mn_rma.c      putmem, typed, strided, nbi (every RMA family as one table) and signal
 *   mn_waits.c    wait (every wait and test family)
 *   mn_sync.c     amo, barrier, teams and killed (a PE that dies in a barrier)
 *   mn_victim.c   victim (attacked from outside by test_outsider.py)
 *   mn_coll.c     coll, get_nbi, reduce_blocks and coll_mix (with ../coll/coll_mix.c)
 *   mn_globals.c  globals (mn_suite_data only)
 * A FAIL line names the file and line of its check.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem.h"
#include "mn_suite.h"

/* Built with AddressSanitizer (gcc: __SANITIZE_ADDRESS__, clang: __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define MN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MN_ASAN 1
#endif
#endif
#ifdef MN_ASAN
#include <sanitizer/lsan_interface.h>
#endif

/* LeakSanitizer's check, made right after finalize rather than at exit, where every thread of
 * the library and of UCX is gone or idle.  __lsan_do_leak_check ends the process with
 * LeakSanitizer's status when it finds a leak, and makes the exit-time check a no-op.  (Its
 * tracer's crash here in CI, "Tracer caught signal 11: addr=<small>", is a bug of gcc 12's
 * runtime with dlopen'd libraries' TLS, such as libucs's, whatever the moment of the check:
 * ci/lib.sh sets intercept_tls_get_addr=0 against it and says why.) */
static void check_leaks(void)
{
#ifdef MN_ASAN
    __lsan_do_leak_check();
#endif
}
#ifdef MN_SHARE_DATA
#include "init/init.h"
#endif

#define HEAP_SIZE (64 * MiB)

static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int len = snprintf(msg, sizeof msg, "FAIL PE %d [%s]: the case did not end in time (hung)\n",
                       me, case_name);
    if (write(STDOUT_FILENO, msg, (size_t)len) < 0)
        _exit(4);
    _exit(4);
}

/* ---- main ------------------------------------------------------------------------------- */
static void case_init(void) { aclshmem_barrier_all(); }

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},       {"putmem", case_putmem}, {"typed", case_typed},
    {"strided", case_strided}, {"nbi", case_nbi},       {"signal", case_signal},
    {"wait", case_wait},       {"amo", case_amo},       {"barrier", case_barrier},
    {"teams", case_teams},     {"killed", case_killed}, {"victim", case_victim},
    {"coll", case_coll},       {"get_nbi", case_get_nbi}, {"reduce_blocks", case_reduce_blocks},
    {"coll_mix", case_coll_mix},
#ifdef MN_SHARE_DATA
    {"globals", case_globals},
#endif
};

/* Every PE of my node gives a pointer; the others are reached through the transport. */
static void check_layout(int one_node)
{
    CHECK(aclshmem_my_pe() == me && aclshmem_n_pes() == n, "my_pe %d n_pes %d", aclshmem_my_pe(),
          aclshmem_n_pes());
    void *p = sym_alloc(64);
    for (int q = 0; q < n; q++) {
        int same = one_node || q / ppn == me / ppn;
        CHECK(same == (aclshmem_ptr(p, q) != NULL), "aclshmem_ptr(p, %d) is %s: PE %d is %s node",
              q, same ? "NULL" : "not NULL", q, same ? "on my" : "on another");
    }
    aclshmem_free(p);
    /* The library's own account: UCX in use exactly when the job spans nodes. */
    aclshmemx_description_t d = ACLSHMEMX_DESCRIPTION_INITIALIZER;
    CHECK(aclshmemx_describe(&d, ACLSHMEMX_DESCRIBE_NO_LOAD) == ACLSHMEM_SUCCESS, "describe: %s",
          aclshmemx_get_last_error());
    uint32_t want = ACLSHMEMX_TRANSPORT_SHM | (one_node ? 0u : (uint32_t)ACLSHMEMX_TRANSPORT_UCX);
    CHECK(d.initialized && d.my_pe == me && d.n_pes == n && d.transports_in_use == want,
          "describe: initialized %d, PE %d of %d, transports in use 0x%x (expected 0x%x)", d.initialized,
          d.my_pe, d.n_pes, d.transports_in_use, want);
    CHECK(one_node || (d.ucx.status == ACLSHMEMX_PLUGIN_LOADED && d.ucx.name),
          "describe: the UCX plug-in's status is %d (%s)", (int)d.ucx.status, d.ucx.reason);
}

static const char *setting(int argc, char **argv, const char *key, const char *env)
{
    size_t len = strlen(key);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], key, len) == 0 && argv[i][len] == '=')
            return argv[i] + len + 1;
    return getenv(env);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    void (*fn)(void) = NULL;
    for (size_t i = 0; argc >= 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            fn = cases[i].fn, case_name = cases[i].name;
    const char *s_rank = setting(argc, argv, "rank", "MN_RANK");
    const char *s_n = setting(argc, argv, "n_pes", "MN_N_PES");
    const char *s_ppn = setting(argc, argv, "ppn", "MN_PPN");
    const char *addr = setting(argc, argv, "addr", "MN_ADDR");
    const char *s_port = setting(argc, argv, "port", "MN_PORT");
    const char *s_timeout = getenv("MN_TIMEOUT"), *tls = getenv("MN_TLS");
    const char *one_node = getenv("MN_ONE_NODE");
    if (!fn || !s_rank || !s_n || !addr || !s_port) {
        fprintf(stderr, "usage: %s CASE [rank=R] [n_pes=N] [ppn=K] [addr=A] [port=P] (or MN_RANK, "
                "MN_N_PES, MN_PPN, MN_ADDR, MN_PORT); %s --list names the cases\n", argv[0], argv[0]);
        return 2;
    }
    me = atoi(s_rank);
    n = atoi(s_n);
    ppn = s_ppn ? atoi(s_ppn) : 1;
    if (n < 2 || me < 0 || me >= n || ppn < 1 || n % ppn) {
        fprintf(stderr, "bad rank %d / n_pes %d / ppn %d\n", me, n, ppn);
        return 2;
    }
    nodes = n / ppn;
    peer = (me + ppn) % n;
    src = (me - ppn + n) % n;
    signal(SIGALRM, on_alarm);
    alarm(s_timeout ? (unsigned)atoi(s_timeout) : 150);

    if (tls && strcmp(tls, "0") == 0)
        aclshmemx_set_conf_store_tls(false, NULL, 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = me;
    attr.n_pes = n;
    attr.local_mem_size = HEAP_SIZE;
    attr.option_attr.shm_init_timeout = 60;
    attr.option_attr.shm_create_timeout = 60;
    attr.option_attr.control_operation_timeout = 60;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://%s:%s", addr, s_port);
    double t0 = now();
#ifdef MN_SHARE_DATA
    shmemi_init_options_t opts = {.share_data_segment = 1};
    int rc = shmemi_init_with_options(ACLSHMEMX_INIT_WITH_DEFAULT, &attr, &opts);
#else
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
#endif
    if (rc != ACLSHMEM_SUCCESS) {
        printf("FAIL PE %d [%s]: init (%s, %d PEs, %d per node) returned %d: %s\n", me, case_name,
               attr.ip_port, n, ppn, rc, aclshmemx_get_last_error());
        return 3;
    }
    printf("PE %d of %d (node %d of %d): init in %.2f s\n", me, n, me / ppn, nodes, now() - t0);
    check_layout(one_node && strcmp(one_node, "1") == 0);
    t0 = now();
    fn();
    if (fn == case_killed) { /* the job lost a PE: finalize must still return */
        double t1 = now();
        (void)aclshmem_finalize();
        CHECK(now() - t1 < 15.0, "finalize after the death took %.1f s", now() - t1);
    } else {
        aclshmem_barrier_all();
        CHECK(aclshmem_finalize() == ACLSHMEM_SUCCESS, "finalize failed");
    }
    check_leaks();
    if (failures)
        printf("FAIL PE %d [%s]: %d check(s) failed\n", me, case_name, failures);
    else
        printf("PASS PE %d [%s] in %.2f s\n", me, case_name, now() - t0);
    return failures ? 1 : 0;
}
