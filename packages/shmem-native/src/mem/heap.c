#include "mem/heap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/net.h"
#include "base/error.h"
#include "base/log.h"
#include "mem/handoff.h"


static const char *const segment_names[SHMEMI_SEG_COUNT] = {"host heap", "device heap", "control segment",
                                                            "data segment"};
static const char *const file_names[SHMEMI_FILE_COUNT] = {"aclshmem-segments", "aclshmem-data"};

/* What a PE tells the others so they can tell whether it shares their node and CPUs, which
 * data segment it shares (every PE must share the same one, or none), and where its memfds
 * are (see open_from_proc). */
typedef struct {
    char boot_id[40];
    uint64_t netns;
    int32_t pid;
    int32_t shares_data; /* init was asked to share the program's data */
    uint64_t data_size;
    uint64_t data_link; /* its link-time address: with the size, tells executables apart */
    uint64_t pidns;     /* its PID namespace: /proc names its pid only in the same one */
    uint64_t file_dev;  /* the file system of its memfds */
    int32_t file_fd[SHMEMI_FILE_COUNT];   /* its memfds' numbers in its process (-1: absent) */
    uint64_t file_ino[SHMEMI_FILE_COUNT]; /* and their inodes, so that no other file passes for them */
    cpu_set_t cpus;                       /* the CPUs it may run on (its affinity at init) */
} node_info_t;

const char *shmemi_segment_name(int s)
{
    return segment_names[s];
}

const char *shmemi_file_name(int f)
{
    return file_names[f];
}

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t page_round(size_t size)
{
    size_t page = page_size();
    return (size + page - 1) / page * page;
}

void shmemi_segments_layout(const size_t size[SHMEMI_SEG_COUNT], size_t offset[SHMEMI_SEG_COUNT],
                            size_t file_size[SHMEMI_FILE_COUNT])
{
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        file_size[f] = 0;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        int f = shmemi_segment_file(s);
        offset[s] = file_size[f];
        file_size[f] += page_round(size[s]);
    }
}

static int segment_present(const shmemi_heap_set_t *h, int s)
{
    return h->seg[s].size > 0;
}

/* Maps fd (this PE's own segment) at an address aligned to SHMEMI_HEAP_ALIGN, so that an
 * alignment asked of the allocator (which works in offsets) holds for the address on every
 * PE. */
static void *map_own_segment(int fd, size_t size, size_t offset)
{
    size_t align = SHMEMI_HEAP_ALIGN;
    size_t span = size + align;
    uint8_t *reserve = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserve == MAP_FAILED)
        return NULL;
    uint8_t *start = (uint8_t *)(((uintptr_t)reserve + align - 1) & ~(uintptr_t)(align - 1));
    void *p = mmap(start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, (off_t)offset);
    if (p == MAP_FAILED) {
        munmap(reserve, span);
        return NULL;
    }
    if (start > reserve)
        munmap(reserve, (size_t)(start - reserve));
    size_t tail = (size_t)(reserve + span - (start + size));
    if (tail)
        munmap(start + size, tail);
    return start;
}

/* ---- the peers' region --------------------------------------------------------------------
 * Every same-node peer's files are mapped into one reservation of address space, one after
 * the other with a page between them (so that an overrun faults rather than lands in the
 * next): one mmap per peer for its three segments (its data segment, when shared, is one
 * more), and one munmap for them all at the end.
 *
 * A peer's segment never sits where this PE's own segment of the same kind does, modulo
 * REGION_APART: it is a whole number of pages away, but not a multiple of REGION_APART.  A
 * store to a peer's word followed by a load of the own word at the same offset (a put,
 * then a wait on the answer; a barrier's flags) has its two addresses equal in their low
 * bits when both mappings are aligned alike, and the CPU's memory disambiguation then
 * holds the load back behind the store as if they overlapped (measured on AMD EPYC: a bare
 * store/poll ping-pong on the heaps took 65-72 ns a hop with equal low 30 bits, 38-57 ns
 * with them a line or a page apart).  Each of a file's segments rules out one page offset
 * in REGION_APART, so one of the first SHMEMI_SEG_COUNT pages of a slot is a place for it.
 * Peers' pointers (aclshmem_ptr) therefore keep the alignment of their offset up to the
 * page, not beyond. */
#define REGION_APART ((size_t)1 << 20)

static size_t region_slot(size_t size)
{
    /* the file, the pages it may move by (see above), the gap */
    return page_round(size) + (SHMEMI_SEG_COUNT + 1) * page_size();
}

static int reserve_peer_region(shmemi_heap_set_t *h)
{
    size_t total = 0;
    for (int pe = 0; pe < h->n_pes; pe++)
        for (int f = 0; pe != h->my_pe && h->same_node[pe] && f < SHMEMI_FILE_COUNT; f++)
            total += h->file_size[f] > 0 ? region_slot(h->file_size[f]) : 0;
    if (total == 0)
        return ACLSHMEM_SUCCESS;
    void *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot reserve %zu bytes of address space for the "
                           "segments of the PEs on its node: %s", h->my_pe, total, strerror(errno));
    h->region = h->region_next = p;
    h->region_size = total;
    return ACLSHMEM_SUCCESS;
}

/* Whether file f mapped at `at` puts none of its segments where this PE's own is, modulo
 * REGION_APART. */
static int apart_from_own(const shmemi_heap_set_t *h, const uint8_t *at, int f)
{
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (shmemi_segment_file(s) == f && segment_present(h, s) &&
            ((uintptr_t)(at + h->seg[s].offset) - (uintptr_t)h->seg[s].base) % REGION_APART == 0)
            return 0;
    return 1;
}

/* Maps fd, PE pe's file f, at the next place of the region, and points the peer bases of
 * its segments into it. */
static int map_in_region(shmemi_heap_set_t *h, int fd, int f, int pe)
{
    uint8_t *at = h->region_next;
    for (int k = 0; k < SHMEMI_SEG_COUNT && !apart_from_own(h, at, f); k++)
        at += page_size();
    if (mmap(at, h->file_size[f], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0) ==
        MAP_FAILED)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot map PE %d's %s: %s", h->my_pe, pe, file_names[f],
                           strerror(errno));
    h->region_next += region_slot(h->file_size[f]);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (shmemi_segment_file(s) == f && segment_present(h, s))
            h->seg[s].peer_base[pe] = at + h->seg[s].offset;
    return ACLSHMEM_SUCCESS;
}

/* A memfd of size bytes that nobody, holder of a copy of the fd or not, can shrink (which
 * would kill every process mapping it with SIGBUS) or grow. */
int shmemi_sealed_memfd(const char *name, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, SHMEMI_HEAP_SEALS) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* The program's data placement as segment SHMEMI_SEG_DATA: already mapped (at the
 * program's own address), with a memfd of its own to hand to peers; no allocator. */
static int adopt_data_segment(shmemi_heap_set_t *h, const shmemi_data_segment_t *data)
{
    shmemi_segment_t *seg = &h->seg[SHMEMI_SEG_DATA];
    if (!data || data->size == 0)
        return ACLSHMEM_SUCCESS;
    h->file_fd[SHMEMI_FILE_DATA] = fcntl(data->fd, F_DUPFD_CLOEXEC, 0);
    if (h->file_fd[SHMEMI_FILE_DATA] < 0)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot keep the program's data segment: %s", strerror(errno));
    seg->size = data->size;
    seg->base = data->base;
    seg->peer_base[h->my_pe] = seg->base;
    return ACLSHMEM_SUCCESS;
}

/* The memfd of the host heap, the device heap and the control segment, each mapped on its
 * own here (the heaps aligned to SHMEMI_HEAP_ALIGN). */
static int create_segments(shmemi_heap_set_t *h)
{
    int fd = shmemi_sealed_memfd(file_names[SHMEMI_FILE_SEGMENTS], h->file_size[SHMEMI_FILE_SEGMENTS]);
    if (fd < 0)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot create the %zu-byte memfd of the heaps: %s",
                           h->file_size[SHMEMI_FILE_SEGMENTS], strerror(errno));
    h->file_fd[SHMEMI_FILE_SEGMENTS] = fd;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        shmemi_segment_t *seg = &h->seg[s];
        if (shmemi_segment_file(s) != SHMEMI_FILE_SEGMENTS)
            continue;
        if (!(seg->base = map_own_segment(fd, seg->size, seg->offset)))
            return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot map the %zu-byte %s: %s", seg->size, segment_names[s],
                               strerror(errno));
        seg->peer_base[h->my_pe] = seg->base;
        if (s != SHMEMI_SEG_CTRL && shmemi_alloc_init(&seg->alloc, seg->size) != 0)
            return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    return ACLSHMEM_SUCCESS;
}

int shmemi_heaps_create(shmemi_heap_set_t *h, int my_pe, int n_pes, size_t heap_size,
                        size_t ctrl_size, const shmemi_data_segment_t *data, const uint8_t secret[32])
{
    memset(h, 0, sizeof(*h));
    h->my_pe = my_pe;
    h->n_pes = n_pes;
    h->listen_fd = -1;
    h->shares_data = data != NULL;
    if (data)
        h->data_link = data->link_addr;
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        h->file_fd[f] = -1;
    h->same_node = calloc((size_t)n_pes, 1);
    h->node_first = calloc((size_t)n_pes, sizeof(int));
    if (!h->same_node || !h->node_first)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for %d PEs", n_pes);
    size_t size[SHMEMI_SEG_COUNT] = {heap_size, heap_size, ctrl_size, data ? data->size : 0}, offset[SHMEMI_SEG_COUNT];
    shmemi_segments_layout(size, offset, h->file_size);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        h->seg[s].offset = offset[s];
        h->seg[s].size = s == SHMEMI_SEG_DATA ? 0 : size[s]; /* the data segment's: adopted below */
        h->seg[s].peer_base = calloc((size_t)n_pes, sizeof(uint8_t *));
        if (!h->seg[s].peer_base)
            return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for %d PEs", n_pes);
    }
    SHMEMI_TRY(create_segments(h));
    SHMEMI_TRY(adopt_data_segment(h, data));
    h->same_node[my_pe] = 1;
    h->cpu_sharers = 1;
    h->shared_cpus = 1;
    for (int pe = 0; pe < n_pes; pe++)
        h->node_first[pe] = pe; /* until shmemi_heaps_share hears where the others run */
    return shmemi_handoff_listen(h, secret);
}

static uint64_t inode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The CPUs this thread may run on; the CPUs online when the kernel will not say (a machine
 * of more than CPU_SETSIZE CPUs). */
static void read_cpus(cpu_set_t *cpus)
{
    CPU_ZERO(cpus);
    if (sched_getaffinity(0, sizeof(*cpus), cpus) == 0 && CPU_COUNT(cpus) > 0)
        return;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < (online > 1 ? online : 1) && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, cpus);
}

static void read_node_info(const shmemi_heap_set_t *h, node_info_t *info)
{
    memset(info, 0, sizeof(*info));
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(info->boot_id, sizeof(info->boot_id), f))
            info->boot_id[0] = '\0';
        fclose(f);
    }
    info->netns = inode_of("/proc/self/ns/net");
    info->pidns = inode_of("/proc/self/ns/pid");
    info->pid = (int32_t)getpid();
    read_cpus(&info->cpus);
    info->shares_data = h->shares_data;
    info->data_size = h->seg[SHMEMI_SEG_DATA].size;
    info->data_link = h->data_link;
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++) {
        struct stat st;
        info->file_fd[f] = h->file_fd[f];
        if (info->file_fd[f] >= 0 && fstat(info->file_fd[f], &st) == 0) {
            info->file_dev = (uint64_t)st.st_dev;
            info->file_ino[f] = (uint64_t)st.st_ino;
        }
    }
}

static int describe_data(const node_info_t *info, char *out, size_t len)
{
    if (!info->shares_data)
        return snprintf(out, len, "does not share its globals");
    return snprintf(out, len, "shares %llu bytes of globals linked at %#llx", (unsigned long long)info->data_size,
                    (unsigned long long)info->data_link);
}

/* Every PE shares the same data segment, or none does: a PE whose globals sit elsewhere, or
 * that has none to share, would turn a put to a global into a write to other variables.
 * Every PE checks the same gathered table, so all fail alike, naming PE 0 and the first PE
 * that differs from it. */
static int check_data_segments(const node_info_t *all, int n_pes)
{
    for (int pe = 1; pe < n_pes; pe++) {
        if (all[pe].shares_data == all[0].shares_data && all[pe].data_size == all[0].data_size &&
            all[pe].data_link == all[0].data_link)
            continue;
        char first[96], other[96];
        describe_data(&all[0], first, sizeof(first));
        describe_data(&all[pe], other, sizeof(other));
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "init: the PEs' global and static data differ: PE 0 %s, PE %d %s; every PE must "
                           "run the same executable and initialise the same way (shmem_init) for its globals "
                           "to be symmetric", first, pe, other);
    }
    return ACLSHMEM_SUCCESS;
}

/* ---- mapping the peers' segments --------------------------------------------------------
 * A process may open a file that another one holds through /proc/<pid>/fd/<n> when the
 * kernel lets it read that process (same user and dumpable: the ptrace read check), that
 * is, exactly when it could read and write that process's memory anyway (docs/security.rst).
 * So a PE opens its same-node peers' memfds there, without their help: no connection and
 * no thread of theirs to wait for, where the socket hand-off costs a connection, a proof and
 * the peer's turn on a CPU for every pair of PEs (on 2 CPUs, 64 PEs spent 250 ms of their
 * init in it).  Where to look comes through the authenticated control plane; what opens
 * must be that very file (the announced file system and inode, owned by our user), and is
 * checked as a handed-off one is (sealed, of the right size).  When any of it is not so
 * (another PID namespace, a process that is not dumpable, a /proc that refuses), the peer
 * is asked over its socket instead (handoff.c), which every PE serves until the end of
 * init. */

static void close_file_fds(int fds[SHMEMI_FILE_COUNT])
{
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++) {
        if (fds[f] >= 0)
            close(fds[f]);
        fds[f] = -1;
    }
}

/* The announced file behind PE pe's fd for file f, or -1. */
static int open_peer_file(const node_info_t *peer, int f)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)peer->pid, (int)peer->file_fd[f]);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != peer->file_dev ||
                    (uint64_t)st.st_ino != peer->file_ino[f] || st.st_uid != geteuid() || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Opens every present file of PE pe through /proc into fds[] (-1 for absent ones): 1 when
 * all opened, 0 when /proc would not give them (fds[] closed). */
static int open_from_proc(const shmemi_heap_set_t *h, const node_info_t *peer, const node_info_t *mine,
                          int fds[SHMEMI_FILE_COUNT])
{
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        fds[f] = -1;
    if (peer->pidns == 0 || peer->pidns != mine->pidns)
        return 0;
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++) {
        if (h->file_size[f] == 0)
            continue;
        if (peer->file_fd[f] < 0 || (fds[f] = open_peer_file(peer, f)) < 0) {
            close_file_fds(fds);
            return 0;
        }
    }
    return 1;
}

/* Maps PE pe's files from fds[] (checked first when they came from /proc) and closes the
 * fds. */
static int map_peer(shmemi_heap_set_t *h, int pe, int fds[SHMEMI_FILE_COUNT], int check)
{
    int rc = ACLSHMEM_SUCCESS;
    for (int f = 0; rc == ACLSHMEM_SUCCESS && f < SHMEMI_FILE_COUNT; f++) {
        if (fds[f] < 0)
            continue;
        if (check)
            rc = shmemi_file_fd_check(fds[f], h->file_size[f], f, pe);
        if (rc == ACLSHMEM_SUCCESS)
            rc = map_in_region(h, fds[f], f, pe);
    }
    close_file_fds(fds);
    return rc;
}

/* Maps the segments of every same-node peer; *fallbacks counts those asked over their
 * socket. */
static int map_peers(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, const node_info_t *all,
                     const uint8_t secret[32], int64_t deadline, int *fallbacks)
{
    int rc = ACLSHMEM_SUCCESS;
    for (int i = 1; rc == ACLSHMEM_SUCCESS && i < h->n_pes; i++) {
        int pe = (h->my_pe + i) % h->n_pes; /* staggered, so PEs do not all queue on one */
        if (!h->same_node[pe])
            continue;
        int fds[SHMEMI_FILE_COUNT];
        int from_proc = open_from_proc(h, &all[pe], &all[h->my_pe], fds);
        if (!from_proc) {
            ++*fallbacks;
            rc = shmemi_handoff_fetch(h, boot, pe, secret, deadline, fds);
        }
        if (rc == ACLSHMEM_SUCCESS)
            rc = map_peer(h, pe, fds, from_proc);
    }
    return rc;
}

/* One kernel (boot): the PEs share its CPUs, whatever network namespace they are in. */
static int on_same_machine(const node_info_t *a, const node_info_t *b)
{
    return strncmp(a->boot_id, b->boot_id, sizeof(a->boot_id)) == 0;
}

static int on_same_node(const node_info_t *a, const node_info_t *b)
{
    return on_same_machine(a, b) && a->netns == b->netns;
}

static int cpus_overlap(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t both;
    CPU_AND(&both, a, b);
    return CPU_COUNT(&both) > 0;
}

/* Which PEs of this machine may compete with this one for a CPU, and for how many CPUs:
 * the PEs whose CPUs overlap its own, those whose CPUs overlap theirs, and so on, and the
 * CPUs of all of them together.  Two PEs bound to CPUs 0 and 1 have a CPU each (they may
 * spin); two unbound PEs on a 2-CPU machine share 2 CPUs (spin), four share 2 (a waiter
 * must hand its CPU over: core/wait.c).  The CPUs grow until no further PE overlaps them,
 * at most once per CPU. */
static void count_cpu_sharers(shmemi_heap_set_t *h, const node_info_t *all, const node_info_t *mine)
{
    cpu_set_t together = mine->cpus;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int pe = 0; pe < h->n_pes; pe++) {
            if (!on_same_machine(&all[pe], mine) || !cpus_overlap(&all[pe].cpus, &together))
                continue;
            cpu_set_t wider;
            CPU_OR(&wider, &together, &all[pe].cpus);
            grew |= !CPU_EQUAL(&wider, &together);
            together = wider;
        }
    }
    h->cpu_sharers = 0;
    for (int pe = 0; pe < h->n_pes; pe++)
        h->cpu_sharers += on_same_machine(&all[pe], mine) && cpus_overlap(&all[pe].cpus, &together);
    h->shared_cpus = CPU_COUNT(&together);
}

/* Names every PE's node by the lowest world PE on it, comparing each PE with the first PE
 * of each node seen so far (PEs x nodes comparisons). */
static void name_nodes(shmemi_heap_set_t *h, const node_info_t *all)
{
    for (int pe = 0; pe < h->n_pes; pe++) {
        int first = pe;
        for (int q = 0; q < pe && first == pe; q++)
            if (h->node_first[q] == q && on_same_node(&all[q], &all[pe]))
                first = q;
        h->node_first[pe] = first;
    }
}

int shmemi_heaps_share(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, uint64_t key,
                       const uint8_t secret[32], int64_t timeout_ms)
{
    int64_t deadline = shmemi_now_ms() + timeout_ms;
    node_info_t mine, *all = calloc((size_t)h->n_pes, sizeof(node_info_t));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    read_node_info(h, &mine);
    int rc = shmemi_bootstrap_collective(boot, key, h->n_pes, h->my_pe, &mine, sizeof(mine), all, timeout_ms);
    if (rc == ACLSHMEM_SUCCESS)
        rc = check_data_segments(all, h->n_pes);
    int peers = 0, fallbacks = 0;
    if (rc == ACLSHMEM_SUCCESS)
        name_nodes(h, all);
    if (rc == ACLSHMEM_SUCCESS)
        count_cpu_sharers(h, all, &mine);
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < h->n_pes; pe++) {
        h->same_node[pe] = h->node_first[pe] == h->node_first[h->my_pe];
        peers += h->same_node[pe] && pe != h->my_pe;
    }
    if (rc == ACLSHMEM_SUCCESS && peers > 0)
        rc = reserve_peer_region(h);
    if (rc == ACLSHMEM_SUCCESS && peers > 0)
        rc = shmemi_handoff_start(h, boot, secret, deadline, &h->handoff);
    if (rc == ACLSHMEM_SUCCESS)
        rc = map_peers(h, boot, all, secret, deadline, &fallbacks);
    free(all);
    if (rc == ACLSHMEM_SUCCESS)
        SHMEMI_INFO("PE %d shares memory with %d other PE(s) on this node (%d over the hand-off socket)",
                    h->my_pe, peers, fallbacks);
    return rc;
}

void shmemi_heaps_share_end(shmemi_heap_set_t *h)
{
    shmemi_handoff_stop(h->handoff);
    h->handoff = NULL;
    /* The name is public and no longer needed: nobody may queue on it for the job's life. */
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    h->listen_fd = -1;
}

void shmemi_heaps_destroy(shmemi_heap_set_t *h)
{
    if (h->n_pes == 0)
        return; /* never created (init failed before): every field is still zero, fds too */
    shmemi_heaps_share_end(h);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        shmemi_segment_t *seg = &h->seg[s];
        /* The own data segment is the program's globals: data_segment.c gives them back.
         * The peers' segments go with the region, below. */
        if (seg->base && s != SHMEMI_SEG_DATA)
            munmap(seg->base, seg->size);
        free(seg->peer_base);
        seg->peer_base = NULL;
        seg->base = NULL;
        shmemi_alloc_destroy(&seg->alloc);
    }
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++) {
        if (h->file_fd[f] >= 0)
            close(h->file_fd[f]);
        h->file_fd[f] = -1;
    }
    if (h->region)
        munmap(h->region, h->region_size);
    h->region = h->region_next = NULL;
    free(h->same_node);
    h->same_node = NULL;
    free(h->node_first);
    h->node_first = NULL;
}

int shmemi_heap_locate(const shmemi_heap_set_t *h, const void *addr, size_t len, size_t *offset)
{
    uintptr_t a = (uintptr_t)addr;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (s == SHMEMI_SEG_CTRL) /* the library's own: no user address lies there */
            continue;
        uintptr_t base = (uintptr_t)h->seg[s].base;
        if (base && a >= base && a - base <= h->seg[s].size && len <= h->seg[s].size - (a - base) &&
            (len > 0 || a - base < h->seg[s].size)) {
            *offset = a - base;
            return s;
        }
    }
    return -1;
}
