/* The program's own global and static variables as a symmetric segment (SHMEMI_SEG_DATA).
 *
 * OpenSHMEM makes every global and static variable of a program a valid RMA, AMO, signal and
 * wait target on every PE.  When init asks for it (shmemi_init_options_t, src/init/init.h:
 * only the OpenSHMEM shmem_init does), the writable part of the main executable's data
 * (.data and .bss, not the brk heap, not the pages RELRO made read-only) is moved, contents
 * and addresses kept, into a sealed memfd mapped MAP_SHARED over the same pages.  From then
 * on it is one more segment of the heap set (mem/heap.h): handed to same-node PEs like a
 * heap, so puts to a global are a memcpy into a peer's mapping, and registered with the UCX
 * plug-in for PEs on other nodes.  finalize puts private pages back, with the current
 * contents, so the program goes on using its globals as plain variables.
 *
 * The placement is process-wide and counted: instances that ask share one placement, and
 * the last one to finalize restores the private pages.
 *
 * The threads rule (docs/concepts.rst, "Symmetric data"): the contents are copied and then
 * the pages are swapped, so a write that another thread makes to the program's globals
 * between the two is lost.  While shmem_init and shmem_finalize run, no other thread of the
 * process may write to the program's globals (reading them is safe: a read sees the old
 * page or the new one, with the same contents). */
#ifndef SHMEMI_DATA_SEGMENT_H
#define SHMEMI_DATA_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *base;      /* the first page, at the program's own address; NULL when size is 0 */
    size_t size;        /* a multiple of the page size; 0 when the program has no writable data */
    uint64_t link_addr; /* base minus the load bias: the same on every PE of one executable */
    int fd;             /* the sealed memfd behind it (owned by this module; dup it to keep it) */
} shmemi_data_segment_t;

/* Places the program's writable data in a sealed memfd, or, if an instance did so already,
 * takes another reference to that placement; *out describes it.  An aclshmem error code
 * (recorded) when it cannot: then nothing changed. */
int shmemi_data_segment_acquire(shmemi_data_segment_t *out);

/* Drops a reference; the last one puts private pages back, holding the current contents.
 * Call only when no peer can write into the segment any more (after finalize's barrier and
 * after the transports stopped). */
void shmemi_data_segment_release(void);

#endif
