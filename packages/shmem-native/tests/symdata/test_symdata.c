/*
 * test_symdata.c - symmetric static and global data (issue #24, mem/data_segment.c): the
 * program's own global and static variables, initialised (.data) and zero (.bss), as
 * targets of put, get, p/g, AMOs, put-with-signal, wait_until and aclshmem_ptr on 2 and 4
 * PEs, once init was asked to share them (shmemi_init_with_options, the internal entry the
 * OpenSHMEM shmem_init uses).  Also: the data keeps its contents through init, a large
 * untouched .bss costs no memory, the pages become private again at finalize (and a second
 * job places them again; two instances share one placement until the last finalizes), a
 * fork()ed child gets its own copy, init without the option
 * leaves globals alone (a put to one fails as "not symmetric"), and PEs whose data segments
 * differ (another executable, or no sharing) fail init on every PE naming them.  The brk
 * heap, which starts right after .bss when address-space randomisation is off (the
 * sanitizer runs of CI; `test_symdata --no-aslr CASE` re-executes itself so), stays out.
 *
 * Built with the library's objects rather than libaclshmem.so (the internal entry is not
 * exported), so the library's own globals are in this program's data segment as well: the
 * placement must carry them too.
 *
 * The same source built with -DSYMDATA_VARIANT is test_symdata_variant: 4 pages more of
 * .bss, a PE of another executable.  The case "mismatch" execs it (path in
 * $SYMDATA_VARIANT) as the last PE of a job.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "init/init.h"

#define INBOX_LEN 64
#define BIG_LEN (1u << 20) /* words: 8 MiB of .bss nobody touches before the case does */

/* .data: initialised globals and statics. */
int64_t data_table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
double data_real = 2.5;
char data_text[32] = "symmetric data";
static int32_t static_data[4] = {7, 70, 700, 7000};
static int64_t fork_probe = 5;

/* .bss: zero-initialised. */
int64_t bss_inbox[INBOX_LEN];
static int32_t static_inbox[16];
static int64_t amo_counter;
static int64_t cswap_word;
static int32_t sig_word;
static int32_t ready_flag;
static int64_t pre_init_value;
int64_t bss_big[BIG_LEN];
#ifdef SYMDATA_VARIANT
char variant_extra[4 * 4096]; /* another executable: its data segment is bigger */
#endif

extern char _end[]; /* the linker's end of .bss */
static int expect_adjacent_brk; /* run with --no-aslr: the brk heap starts at .bss's last page */

/* ---- helpers ----------------------------------------------------------------------------- */

/* Inits this PE with the harness's unique ID, sharing the program's data when share. */
static int init_job(int share)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = harness_make_attr(harness_my_pe, harness_n_pes, &uid, &attr);
    shmemi_init_options_t opts = {.share_data_segment = share};
    return rc ? rc : shmemi_init_with_options(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr, &opts);
}

/* Inits instance id with a fresh unique ID (PE 0 makes it), sharing the program's data. */
static int init_instance(uint64_t id)
{
    aclshmemx_uniqueid_t uid;
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = harness_share_uid(&uid);
    if (rc == 0)
        rc = harness_make_attr(harness_my_pe, harness_n_pes, &uid, &attr);
    attr.instance_id = id;
    shmemi_init_options_t opts = {.share_data_segment = 1};
    return rc ? rc : shmemi_init_with_options(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr, &opts);
}

/* The /proc/self/maps line of the mapping holding addr, in line (empty if none). */
static void mapping_of(const void *addr, char *line, size_t len)
{
    line[0] = '\0';
    FILE *f = fopen("/proc/self/maps", "r");
    char buf[512];
    while (f && fgets(buf, sizeof buf, f)) {
        unsigned long lo, hi;
        if (sscanf(buf, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
            snprintf(line, len, "%s", buf);
            break;
        }
    }
    if (f)
        fclose(f);
}

static int in_data_memfd(const void *addr)
{
    char line[512];
    mapping_of(addr, line, sizeof line);
    return strstr(line, "/memfd:aclshmem-data") != NULL;
}

/* Bytes of memory the data segment's memfd holds (found among this process's fds). */
static long long data_memfd_bytes(void)
{
    for (int fd = 3; fd < 1024; fd++) {
        char path[64], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        struct stat st;
        if (strstr(target, "/memfd:aclshmem-data") && fstat(fd, &st) == 0)
            return (long long)st.st_blocks * 512;
    }
    return -1;
}

/* Where the kernel started the brk heap: field 47 of /proc/self/stat. */
static uintptr_t stat_start_brk(void)
{
    char buf[2048] = "";
    FILE *f = fopen("/proc/self/stat", "r");
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 47; field++)
        p = strchr(p + 1, ' ');
    return p ? (uintptr_t)strtoull(p + 1, NULL, 10) : 0;
}

/* The end of a case's job: a barrier, so that no peer still writes here, and finalize. */
static int end_job(void)
{
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* What a PE sends: element i is base + i (base differs on every PE). */
static void fill_words(int64_t *words, size_t len, int64_t base)
{
    for (size_t i = 0; i < len; i++)
        words[i] = base + (int64_t)i;
}

static void expect_initial_data(void)
{
    static const int64_t table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(data_table[i], table[i]);
    EXPECT(data_real == 2.5);
    EXPECT(strcmp(data_text, "symmetric data") == 0);
    EXPECT_EQ(static_data[0], 7);
    EXPECT_EQ(static_data[3], 7000);
    for (int i = 0; i < INBOX_LEN; i++)
        EXPECT_EQ(bss_inbox[i], 0);
    EXPECT_EQ(amo_counter, 0);
    EXPECT_EQ(sig_word, 0);
}

/* ---- cases ------------------------------------------------------------------------------- */

/* Init keeps every value (initialised, zero, and one written just before init), backs the
 * globals with the shared memfd, and leaves the untouched 8 MiB of .bss unallocated. */
static int t_contents_kept(int me, int n)
{
    (void)n;
    pre_init_value = 1000 + me;
    EXPECT(!in_data_memfd(data_table));
    ASSERT_EQ(init_job(1), 0);
    expect_initial_data();
    EXPECT_EQ(pre_init_value, 1000 + me);
    EXPECT(in_data_memfd(data_table));
    EXPECT(in_data_memfd(&bss_big[BIG_LEN - 1]));
    long long held = data_memfd_bytes();
    EXPECT(held >= 0 && held < (long long)sizeof(bss_big) / 2);
    return end_job();
}

/* put/get (untyped, typed, sized), p/g and strided puts between PEs' globals and statics. */
static int t_rma(int me, int n)
{
    ASSERT_EQ(init_job(1), 0);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int64_t mine[INBOX_LEN];
    fill_words(mine, INBOX_LEN, me * 1000);
    static_data[1] = 100 + me;
    aclshmem_barrier_all();
    aclshmem_int64_put(bss_inbox, mine, INBOX_LEN, next);
    int32_t me32[3] = {me, me, me};
    aclshmem_putmem(&static_inbox[me % 8], &me32[0], sizeof(int32_t), next);
    aclshmem_double_p(&data_real, 10.0 + me, next);
    aclshmem_iput32(&static_inbox[8], me32, 2, 1, 3, next); /* at stride 2 */
    aclshmem_barrier_all();
    for (int i = 0; i < INBOX_LEN; i++)
        EXPECT_EQ(bss_inbox[i], prev * 1000 + i);
    EXPECT_EQ(static_inbox[prev % 8], prev);
    EXPECT(data_real == 10.0 + prev);
    EXPECT(static_inbox[8] == prev && static_inbox[10] == prev && static_inbox[12] == prev);
    int32_t got[4] = {0};
    aclshmem_int32_get(got, static_data, 4, next);
    EXPECT(got[0] == 7 && got[1] == 100 + next && got[2] == 700 && got[3] == 7000);
    EXPECT_EQ(aclshmem_int64_g(&data_table[7], next), 34);
    char text[32];
    aclshmem_getmem(text, data_text, sizeof text, prev);
    EXPECT(strcmp(text, "symmetric data") == 0);
    /* The far end of the large .bss. */
    aclshmem_int64_p(&bss_big[BIG_LEN - 1], -me - 1, next);
    aclshmem_barrier_all();
    EXPECT_EQ(bss_big[BIG_LEN - 1], -prev - 1);
    return end_job();
}

/* AMOs on static words: every PE adds to PE 0's counter; compare_swap elects one winner. */
static int t_amo(int me, int n)
{
    ASSERT_EQ(init_job(1), 0);
    aclshmem_barrier_all();
    for (int i = 0; i < 10; i++)
        aclshmem_int64_atomic_add(&amo_counter, me + 1, 0);
    int64_t old = aclshmem_int64_atomic_compare_swap(&cswap_word, 0, 100 + me, n - 1);
    aclshmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(amo_counter, (int64_t)10 * n * (n + 1) / 2);
    int64_t winner = aclshmem_int64_atomic_fetch(&cswap_word, n - 1);
    EXPECT(winner >= 100 && winner < 100 + n);
    EXPECT_EQ(old == 0, winner == 100 + me);
    EXPECT_EQ(aclshmem_int64_atomic_fetch_add(&amo_counter, 0, 0), (int64_t)10 * n * (n + 1) / 2);
    return end_job();
}

/* put-with-signal into a global and signal_wait_until on a static word; wait_until on a
 * static flag set by PE 0's p. */
static int t_signal_wait(int me, int n)
{
    ASSERT_EQ(init_job(1), 0);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int64_t mine[INBOX_LEN];
    fill_words(mine, INBOX_LEN, me * 7);
    aclshmem_barrier_all();
    aclshmemx_putmem_signal(bss_inbox, mine, sizeof mine, &sig_word, me + 1, ACLSHMEM_SIGNAL_SET, next);
    EXPECT_EQ(aclshmem_signal_wait_until(&sig_word, ACLSHMEM_CMP_EQ, prev + 1), prev + 1);
    for (int i = 0; i < INBOX_LEN; i++)
        EXPECT_EQ(bss_inbox[i], prev * 7 + i);
    if (me == 0)
        for (int pe = 0; pe < n; pe++)
            aclshmem_int32_p(&ready_flag, 1, pe);
    aclshmem_int32_wait_until(&ready_flag, ACLSHMEM_CMP_EQ, 1);
    EXPECT_EQ(ready_flag, 1);
    return end_job();
}

/* A same-node peer's globals are reachable by load and store (aclshmem_ptr), at a mapping
 * of its own (not this PE's variable). */
static int t_ptr(int me, int n)
{
    ASSERT_EQ(init_job(1), 0);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int64_t *peer = aclshmem_ptr(data_table, next);
    ASSERT_NOT_NULL(peer);
    EXPECT(peer != data_table);
    EXPECT_EQ(aclshmem_ptr(data_table, me), data_table);
    /* The peer's mapping keeps offsets within the page, and sits a few pages off the own
     * one modulo 1 GiB (the heaps' rule, heap.c peer_placement). */
    uintptr_t apart = (uintptr_t)peer - (uintptr_t)data_table, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    EXPECT(apart % page == 0 && apart % ((uintptr_t)1 << 30) != 0);
    EXPECT_EQ(peer[5], 13);
    aclshmem_barrier_all();
    __atomic_store_n(&peer[0], 500 + me, __ATOMIC_RELEASE);
    aclshmem_barrier_all();
    EXPECT_EQ(data_table[0], 500 + prev);
    return end_job();
}

/* finalize puts private pages back holding what the job wrote; the program keeps using its
 * globals; a second job places them again, contents kept, and works. */
static int t_after_finalize(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    ASSERT_EQ(init_job(1), 0);
    aclshmem_barrier_all();
    aclshmem_int64_p(&bss_inbox[3], 40 + me, next);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_finalize(), 0);
    EXPECT(!in_data_memfd(data_table));
    EXPECT(!in_data_memfd(bss_inbox));
    EXPECT_EQ(bss_inbox[3], 40 + prev);
    EXPECT_EQ(data_table[7], 34);
    bss_inbox[4] = 77; /* plain variables again */
    EXPECT_EQ(bss_inbox[4], 77);

    ASSERT_EQ(harness_share_uid((aclshmemx_uniqueid_t *)harness_uid()), 0);
    ASSERT_EQ(init_job(1), 0);
    EXPECT(in_data_memfd(bss_inbox));
    EXPECT(bss_inbox[3] == 40 + prev && bss_inbox[4] == 77);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_int64_g(&bss_inbox[4], next), 77);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_finalize(), 0);
    EXPECT(!in_data_memfd(bss_inbox));
    return 0;
}

/* The segment ends with .bss's last page; the brk heap (which starts there when ASLR is off)
 * is not in it, and grows as before. */
static int t_brk_heap(int me, int n)
{
    (void)me, (void)n;
    ASSERT_EQ(init_job(1), 0);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t data_end = ((uintptr_t)_end + page - 1) & ~(page - 1), brk_start = stat_start_brk();
    EXPECT(in_data_memfd((const void *)((uintptr_t)_end - 1)));
    EXPECT(brk_start >= data_end);
    if (expect_adjacent_brk)
        EXPECT_EQ(brk_start, data_end);
    char *grown = sbrk((intptr_t)(4 * page));
    ASSERT(grown != (char *)-1);
    memset(grown, 0x5a, 4 * page);
    EXPECT(!in_data_memfd(grown) && !in_data_memfd(grown + 4 * page - 1));
    EXPECT((uintptr_t)grown >= data_end);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_finalize(), 0);
    EXPECT(grown[0] == 0x5a && grown[4 * page - 1] == 0x5a);
    return 0;
}

/* Two instances share one placement: each reaches the globals; the first to finalize leaves
 * them shared for the other, the last gives the pages back. */
static int t_two_instances(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    ASSERT_EQ(init_job(1), 0);
    ASSERT_EQ(init_instance(3), 0);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), 0);
    aclshmem_barrier_all();
    aclshmem_int64_p(&bss_inbox[0], 300 + me, next);
    aclshmem_barrier_all();
    EXPECT_EQ(bss_inbox[0], 300 + prev);
    EXPECT_EQ(aclshmemx_finalize(3), 0);
    EXPECT(in_data_memfd(bss_inbox));
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), 0);
    aclshmem_int64_p(&bss_inbox[1], 400 + me, next);
    aclshmem_barrier_all();
    EXPECT(bss_inbox[0] == 300 + prev && bss_inbox[1] == 400 + prev);
    end_job();
    EXPECT(!in_data_memfd(bss_inbox));
    return 0;
}

/* A child of fork() writes its globals without touching its parent's (or the peers'). */
static int t_fork_child(int me, int n)
{
    ASSERT_EQ(init_job(1), 0);
    pid_t child = fork();
    if (child == 0) {
        int saw = fork_probe == 5 && !in_data_memfd(&fork_probe);
        fork_probe = 99;
        _exit(saw ? 0 : 3);
    }
    int status = -1;
    ASSERT(child > 0 && waitpid(child, &status, 0) == child);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(fork_probe, 5);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_int64_g(&fork_probe, (me + 1) % n), 5);
    return end_job();
}

/* Without the option (aclshmemx_init_attr, Python) globals stay private: not a target. */
static int t_not_shared_without_option(int me, int n)
{
    ASSERT_EQ(init_job(0), 0);
    EXPECT(!in_data_memfd(data_table));
    int64_t v = me;
    EXPECT_REJECTED(aclshmem_int64_put(bss_inbox, &v, 1, (me + 1) % n), "not inside a symmetric");
    EXPECT_NULL(aclshmem_ptr(data_table, (me + 1) % n));
    return end_job();
}

/* One PE does not ask to share its data: every PE fails init, naming PE 0 and that PE. */
static int t_option_mismatch(int me, int n)
{
    int rc = init_job(me != n - 1);
    EXPECT_NE(rc, 0);
    const char *err = aclshmemx_get_last_error();
    char expected[64];
    snprintf(expected, sizeof expected, "PE %d does not share its globals", n - 1);
    EXPECT(strstr(err, expected) && strstr(err, "PE 0 shares") && strstr(err, "same executable"));
    if (rc == 0)
        aclshmem_finalize();
    EXPECT(!in_data_memfd(data_table)); /* a failed init gives the pages back */
    return 0;
}

/* The unique ID as hex, for the command line of the exec'd PE. */
static void uid_to_hex(const aclshmemx_uniqueid_t *uid, char *out)
{
    const unsigned char *b = (const unsigned char *)uid;
    for (size_t i = 0; i < sizeof(*uid); i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* The variant's PE, started by exec from the case "mismatch": joins and must fail. */
static int check_mismatch_error(int rc, int me, int n)
{
    const char *err = aclshmemx_get_last_error();
    char other[32];
    snprintf(other, sizeof other, "PE %d shares ", n - 1);
    int ok = rc != 0 && strstr(err, "differ") && strstr(err, "PE 0 shares ") && strstr(err, other) &&
             strstr(err, "same executable");
    if (!ok)
        printf("PE %d: init returned %d, last error \"%s\"\n", me, rc, err);
    return ok;
}

/* The last PE runs another executable (4 pages more of .bss): every PE's init fails and
 * says which PEs differ and how. */
static int t_mismatch(int me, int n)
{
    const char *variant = getenv("SYMDATA_VARIANT");
    ASSERT_NOT_NULL(variant);
    if (me == n - 1) {
        char hex[2 * sizeof(aclshmemx_uniqueid_t) + 1], pe[16], npes[16];
        uid_to_hex(harness_uid(), hex);
        snprintf(pe, sizeof pe, "%d", me);
        snprintf(npes, sizeof npes, "%d", n);
        fflush(stdout);
        execl(variant, variant, "join", pe, npes, hex, (char *)NULL);
        ASSERT(!"exec of the variant failed");
    }
    EXPECT(check_mismatch_error(init_job(1), me, n));
    EXPECT(!in_data_memfd(data_table));
    return 0;
}

static const harness_case cases[] = {
    {"contents_kept", t_contents_kept, {.no_init = 1}, {2, 0}},
    {"rma", t_rma, {.no_init = 1}, {2, 4, 0}},
    {"amo", t_amo, {.no_init = 1}, {2, 4, 0}},
    {"signal_wait", t_signal_wait, {.no_init = 1}, {2, 4, 0}},
    {"ptr", t_ptr, {.no_init = 1}, {2, 0}},
    {"after_finalize", t_after_finalize, {.no_init = 1}, {2, 0}},
    {"fork_child", t_fork_child, {.no_init = 1}, {2, 0}},
    {"brk_heap", t_brk_heap, {.no_init = 1}, {2, 0}},
    {"two_instances", t_two_instances, {.no_init = 1}, {2, 0}},
    {"not_shared_without_option", t_not_shared_without_option, {.no_init = 1}, {2, 0}},
    {"option_mismatch", t_option_mismatch, {.no_init = 1}, {2, 0}},
    {"mismatch", t_mismatch, {.no_init = 1}, {2, 4, 0}},
};

#ifdef SYMDATA_VARIANT
static int hex_digit(int c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* test_symdata_variant join PE N_PES UID_HEX: one PE of a job whose others run test_symdata. */
int main(int argc, char **argv)
{
    if (argc != 5 || strcmp(argv[1], "join") != 0 || strlen(argv[4]) != 2 * sizeof(aclshmemx_uniqueid_t)) {
        fprintf(stderr, "usage: %s join PE N_PES UID_HEX\n", argv[0]);
        return 2;
    }
    (void)cases; /* this executable is only ever one PE of the case "mismatch" */
    variant_extra[0] = 1;
    harness_my_pe = atoi(argv[2]);
    harness_n_pes = atoi(argv[3]);
    unsigned char *uid = (unsigned char *)harness_uid();
    for (size_t i = 0; i < sizeof(aclshmemx_uniqueid_t); i++)
        uid[i] = (unsigned char)(hex_digit(argv[4][2 * i]) * 16 + hex_digit(argv[4][2 * i + 1]));
    aclshmemx_set_conf_store_tls(false, NULL, 0);
    int ok = check_mismatch_error(init_job(1), harness_my_pe, harness_n_pes) && !in_data_memfd(data_table);
    return ok ? 0 : 1;
}
#else
/* test_symdata [CASE]: the cases (those whose name holds CASE).
 * test_symdata --no-aslr [CASE]: the same in a process without address-space randomisation
 * (re-executed so), where the brk heap must start right after .bss; exit 77 (skipped) when
 * the system does not allow it. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--no-aslr") == 0) {
        int persona = personality(0xffffffff);
        if (persona < 0)
            return 77;
        if (!(persona & ADDR_NO_RANDOMIZE)) {
            if (personality((unsigned long)persona | ADDR_NO_RANDOMIZE) < 0)
                return 77;
            execv("/proc/self/exe", argv);
            return 77;
        }
        expect_adjacent_brk = 1;
        argv[1] = argv[0];
        return harness_main(argc - 1, argv + 1, cases, sizeof cases / sizeof cases[0]);
    }
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
#endif
