/* The program's writable data as a symmetric segment: finding it, moving it into a sealed
 * memfd, and back (data_segment.h says what and why).
 *
 * Which pages.  dl_iterate_phdr visits the main program first.  Its writable PT_LOAD
 * segments hold .data and .bss (and, first, what RELRO covers: .init_array, .dynamic, .got,
 * which the loader makes read-only once relocated).  The symmetric range is those segments
 * minus the RELRO pages, rounded out to whole pages:
 *  - the start: the loader protects [page_down(relro start), page_down(relro end)), so the
 *    writable part begins at page_down(relro end) (ld aligns that end to a page; when it does
 *    not, the page holding it stays writable and is part of the range, .got tail and all);
 *  - the end: p_vaddr + p_memsz is the end of .bss (the linker's `_end`); its page is the
 *    segment's own (the loader maps each PT_LOAD by whole pages and two never share one), and
 *    the kernel starts the brk heap at the next page boundary or later (ASLR moves it
 *    further), so page_up(end) never takes in malloc's brk memory.  /proc/self/stat's
 *    start_brk is checked all the same: a range that reached into the brk heap would share
 *    malloc's memory with the peers, and init fails instead.
 * Linkers put .data and .bss in one writable segment after RELRO (GNU ld, gold), or in a
 * segment of their own after a RELRO-only one (lld); adjacent ranges are merged.  Should a
 * linker script leave two separate writable ranges, the one holding .bss (the last) is
 * shared and the others are named in the log: a put to them fails as "not symmetric".
 *
 * Not in a Python process.  There the main program's globals are the interpreter's (a
 * python3 linked with a static libpython holds its whole runtime state in .data/.bss), which
 * every Python thread writes at any time; ctypes even lets them run during the call that
 * reaches shmem_init.  Sharing them would lose their writes, and would make no Python
 * variable symmetric anyway.  So where an initialised interpreter runs (python itself, or a
 * program that embeds one), the data segment stays absent: shmem.core never asks for it,
 * and a C extension that calls shmem_init gets the heaps only.
 *
 * Why raw system calls for the pages of the range.  Sanitizer runtimes intercept mmap,
 * pwrite and pread: ASan checks that the buffer of a pwrite is addressable (the redzones
 * between globals are not, so copying the segment would be reported as an overflow) and
 * clears the shadow of what mmap maps (the globals' redzones would be forgotten); TSan
 * records an mmap as a write by this thread to the whole range.  The globals keep their
 * addresses and contents, so the sanitizers' view of them must not change: the pages are
 * moved with syscall(2), and the only loads of the range (the zero-page test) are in a
 * function built without instrumentation. */
#include "mem/data_segment.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "base/error.h"
#include "base/log.h"
#include "base/proc_stat.h"
#include "mem/heap.h"

#define DATA_MEMFD_NAME "aclshmem-data"

static pthread_mutex_t data_lock = PTHREAD_MUTEX_INITIALIZER;
static shmemi_data_segment_t placed = {.fd = -1};
static int placed_refs;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uintptr_t page_size(void)
{
    return (uintptr_t)sysconf(_SC_PAGESIZE);
}

static uintptr_t page_down(uintptr_t a)
{
    return a & ~(page_size() - 1);
}

static uintptr_t page_up(uintptr_t a)
{
    return page_down(a + page_size() - 1);
}

/* ---- finding the range --------------------------------------------------------------------- */

typedef struct {
    uintptr_t start, end; /* page-aligned; end == 0: none found yet */
    uintptr_t bias;       /* the load bias (0 for a non-PIE executable) */
    int left_out;         /* separate writable ranges below the one kept */
    uintptr_t left_out_start, left_out_end; /* the last of them, for the log */
} writable_range_t;

/* [lo, hi) (page-aligned, nonempty) joins the range when adjacent; otherwise it replaces it,
 * since segments come in address order and .bss is in the last. */
static void add_piece(writable_range_t *r, uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi)
        return;
    if (r->end != 0 && lo <= r->end) {
        r->end = hi > r->end ? hi : r->end;
        return;
    }
    if (r->end != 0) {
        r->left_out++;
        r->left_out_start = r->start;
        r->left_out_end = r->end;
    }
    r->start = lo;
    r->end = hi;
}

/* The part of one writable PT_LOAD [lo, hi) that stays writable after RELRO, whose
 * read-only pages are [relro_lo, relro_hi) (both page-aligned; equal when there are none). */
static void add_writable_load(writable_range_t *r, uintptr_t lo, uintptr_t hi, uintptr_t relro_lo, uintptr_t relro_hi)
{
    lo = page_down(lo);
    hi = page_up(hi);
    if (relro_lo >= relro_hi || relro_hi <= lo || relro_lo >= hi) {
        add_piece(r, lo, hi);
        return;
    }
    add_piece(r, lo, relro_lo > lo ? relro_lo : lo);
    add_piece(r, relro_hi < hi ? relro_hi : hi, hi);
}

/* dl_iterate_phdr's first object is the main program: read it, then stop. */
static int read_main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    writable_range_t *r = arg;
    r->bias = (uintptr_t)info->dlpi_addr;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            relro_lo = page_down(r->bias + ph->p_vaddr);
            relro_hi = page_down(r->bias + ph->p_vaddr + ph->p_memsz);
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && ph->p_memsz > 0)
            add_writable_load(r, r->bias + ph->p_vaddr, r->bias + ph->p_vaddr + ph->p_memsz, relro_lo, relro_hi);
    }
    return 1;
}

/* Where the kernel started the brk heap (field 47 of /proc/self/stat), or 0 if unknown. */
static uintptr_t brk_heap_start(void)
{
    unsigned long long value = 0;
    return shmemi_proc_stat_field(47, &value) == 0 ? (uintptr_t)value : 0;
}

static int find_writable_range(writable_range_t *r)
{
    memset(r, 0, sizeof(*r));
    dl_iterate_phdr(read_main_program, r);
    if (r->left_out)
        SHMEMI_INFO("the program has %d writable data range(s) apart from its .data/.bss (the last at "
                    "%#lx-%#lx): they are not symmetric", r->left_out, (unsigned long)r->left_out_start,
                    (unsigned long)r->left_out_end);
    uintptr_t brk = brk_heap_start();
    if (r->end != 0 && brk > r->start && brk < r->end)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR,
                           "init: the program's data segment %#lx-%#lx reaches into its brk heap (from %#lx): "
                           "its globals cannot be made symmetric", (unsigned long)r->start,
                           (unsigned long)r->end, (unsigned long)brk);
    return ACLSHMEM_SUCCESS;
}

/* ---- moving the pages ------------------------------------------------------------------------ */

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd)
{
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, (off_t)0);
}

/* Moves fresh's pages onto base (replacing what was there, in one step). */
static int raw_move(void *fresh, size_t len, void *base)
{
    void *p = (void *)syscall(SYS_mremap, fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, base);
    return p == base ? 0 : -1;
}

/* 1 when the page at p holds only zeros.  Reads the program's globals, redzones included,
 * so it is built without sanitizer instrumentation (see the top of the file). */
typedef uint64_t __attribute__((may_alias)) any_word_t;
__attribute__((no_sanitize("address", "thread", "undefined"))) static int page_is_zero(const uint8_t *p, size_t len)
{
    const any_word_t *w = (const any_word_t *)(const void *)p;
    any_word_t seen = 0;
    for (size_t i = 0; i < len / sizeof(*w); i++)
        seen |= w[i];
    return seen == 0;
}

/* Writes (is_write) or reads len bytes between buf and fd at offset, all of them. */
static int raw_transfer(int fd, int is_write, uint8_t *buf, size_t len, size_t offset)
{
    while (len > 0) {
        long n = syscall(is_write ? SYS_pwrite64 : SYS_pread64, fd, buf, len, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        offset += (size_t)n;
        len -= (size_t)n;
    }
    return 0;
}

/* Copies the pages of [base, base + size) that hold anything but zeros into fd at the same
 * offsets.  All-zero pages (.bss never written: the shared zero page) stay holes of the
 * memfd, so a large .bss costs no memory until it is used. */
static int copy_pages_into(int fd, uint8_t *base, size_t size)
{
    size_t page = page_size(), run = 0;
    int in_run = 0;
    for (size_t off = 0; off <= size; off += page) {
        int data = off < size && !page_is_zero(base + off, page);
        if (data && !in_run)
            run = off;
        if (!data && in_run && raw_transfer(fd, 1, base + run, off - run, run) != 0)
            return -1;
        in_run = data;
    }
    return 0;
}

/* Copies what fd holds (its data extents; holes read as zeros anyway) into fresh. */
static int copy_extents_out(int fd, uint8_t *fresh, size_t size)
{
    off_t off = lseek(fd, 0, SEEK_DATA);
    while (off >= 0 && (size_t)off < size) {
        off_t hole = lseek(fd, off, SEEK_HOLE);
        if (hole < 0 || (size_t)hole > size)
            hole = (off_t)size;
        if (raw_transfer(fd, 0, fresh + off, (size_t)(hole - off), (size_t)off) != 0)
            return -1;
        off = lseek(fd, hole, SEEK_DATA);
    }
    return off < 0 && errno != ENXIO ? -1 : 0;
}

/* The memfd holding the range's current contents, mapped over it.  The pages are copied
 * first and swapped after: a write of another thread in between is lost (the threads rule,
 * data_segment.h).  The swap is one mmap: a read in another thread sees old or new pages. */
static int place_in_memfd(shmemi_data_segment_t *d)
{
    d->fd = shmemi_sealed_memfd(DATA_MEMFD_NAME, d->size);
    int ok = d->fd >= 0 && copy_pages_into(d->fd, d->base, d->size) == 0 &&
             raw_mmap(d->base, d->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, d->fd) == d->base;
    if (ok)
        return ACLSHMEM_SUCCESS;
    int saved = errno;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    return shmemi_fail(ACLSHMEM_SMEM_ERROR, "init: cannot place the program's %zu bytes of global and static "
                       "data (%p) in shared memory: %s", d->size, (void *)d->base, strerror(saved));
}

/* Private anonymous pages with the current contents, swapped in for the memfd's.  On
 * failure the shared mapping stays: the globals keep working, only in a memfd. */
static int put_private_pages_back(const shmemi_data_segment_t *d)
{
    uint8_t *fresh = raw_mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    if (fresh == MAP_FAILED)
        return -1;
    if (copy_extents_out(d->fd, fresh, d->size) != 0 || raw_move(fresh, d->size, d->base) != 0) {
        int saved = errno;
        syscall(SYS_munmap, fresh, d->size);
        errno = saved;
        return -1;
    }
    return 0;
}

static void forget_placement(void)
{
    if (placed.fd >= 0)
        close(placed.fd);
    placed = (shmemi_data_segment_t){.fd = -1};
    placed_refs = 0;
}

/* A child of fork() gets its own copy of the globals: without this it would share them
 * with its parent (and its parent's peers) through the memfd.  Runs in the child only, where
 * the forking thread is the only one. */
static void privatise_in_child(void)
{
    if (placed_refs > 0 && placed.size > 0 && put_private_pages_back(&placed) != 0)
        SHMEMI_WARN("a child of fork() still shares its parent's globals: %s", strerror(errno));
    forget_placement();
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, privatise_in_child);
}

/* ---- the counted placement ---------------------------------------------------------------- */

/* 1 when this process runs an initialised Python interpreter (see the top of the file). */
static int runs_python(void)
{
    int (*initialized)(void);
    *(void **)&initialized = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    return initialized && initialized();
}

/* The placement (size 0: none, in a Python process or a program without writable data). */
static int place(void)
{
    shmemi_data_segment_t d = {.fd = -1};
    if (runs_python()) {
        SHMEMI_INFO("this process runs a Python interpreter: its globals are the interpreter's and stay "
                    "private (not symmetric)");
    } else {
        writable_range_t r;
        SHMEMI_TRY(find_writable_range(&r));
        d.base = r.end ? (uint8_t *)r.start : NULL;
        d.size = r.end - r.start;
        d.link_addr = r.end ? (uint64_t)(r.start - r.bias) : 0;
    }
    if (d.size > 0) {
        SHMEMI_TRY(place_in_memfd(&d));
        SHMEMI_INFO("the program's global and static data (%zu bytes at %p, link address %#llx) is symmetric",
                    d.size, (void *)d.base, (unsigned long long)d.link_addr);
    }
    pthread_once(&atfork_once, register_atfork);
    placed = d;
    return ACLSHMEM_SUCCESS;
}

int shmemi_data_segment_acquire(shmemi_data_segment_t *out)
{
    pthread_mutex_lock(&data_lock);
    int rc = placed_refs > 0 ? ACLSHMEM_SUCCESS : place();
    if (rc == ACLSHMEM_SUCCESS) {
        placed_refs++;
        *out = placed;
    }
    pthread_mutex_unlock(&data_lock);
    return rc;
}

void shmemi_data_segment_release(void)
{
    pthread_mutex_lock(&data_lock);
    if (placed_refs > 0 && --placed_refs == 0) {
        if (placed.size > 0 && put_private_pages_back(&placed) != 0)
            SHMEMI_WARN("finalize: the program's globals stay in shared memory (cannot copy them back to "
                        "private pages: %s); they keep working", strerror(errno));
        forget_placement();
    }
    pthread_mutex_unlock(&data_lock);
}
