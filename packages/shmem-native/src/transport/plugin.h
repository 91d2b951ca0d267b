/* Transport plug-ins: transports that live in a separate shared module, which libaclshmem
 * loads (dlopen) only when a job needs them.  Today there is one: the UCX transport to PEs
 * on other nodes (transport/ucx/, built as libaclshmem_ucx.so when UCX is found), so that
 * single-node users never need UCX installed.
 *
 * A plug-in is built from this source tree together with libaclshmem and reads the
 * instance record directly (core/instance.h, mem/heap.h); libaclshmem's own functions are
 * hidden, so it reaches them through the host table below.  The loader refuses a plug-in
 * of another ABI or another libaclshmem version. */
#ifndef SHMEMI_TRANSPORT_PLUGIN_H
#define SHMEMI_TRANSPORT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "aclshmem/types.h"
#include "core/instance.h"
#include "transport/transport.h"

/* Bump when this header, transport.h or a struct a plug-in reads changes shape. */
#define SHMEMI_PLUGIN_ABI 5

/* The file name of the UCX plug-in, looked for beside libaclshmem unless SHMEM_UCX_PLUGIN
 * names another path. */
#define SHMEMI_UCX_PLUGIN_FILE "libaclshmem_ucx.so"
#define SHMEMI_UCX_PLUGIN_ENV "SHMEM_UCX_PLUGIN"
/* SHMEM_UCX_PLUGIN=none: never load it (a job with PEs on other nodes then fails at init). */
#define SHMEMI_UCX_PLUGIN_DISABLED "none"

/* What libaclshmem lends a plug-in. */
typedef struct {
    /* shmemi_fail and shmemi_log: the last error and the library's log. */
    int (*fail)(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void (*log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    /* Gathers len bytes from every PE of inst (out[n_pes * len], PE order) over the control
     * plane, which authenticates (and by default encrypts) them.  key: as for
     * shmemi_bootstrap_collective. */
    int (*allgather)(shmemi_instance_t *inst, uint64_t key, const void *in, size_t len, void *out);
    /* ACLSHMEM_SUCCESS while every PE lives; otherwise an error naming the dead PE. */
    int (*check_alive)(shmemi_instance_t *inst);
    /* Wakes this PE's own waiters: the plug-in applied writes of other PEs to our memory. */
    void (*wake_local)(shmemi_instance_t *inst);
    /* shmemi_amo_result: the arithmetic of every AMO, for AMOs done as compare-and-swap. */
    uint64_t (*amo_result)(const shmemi_amo_t *a, uint64_t old);
    /* Writes into this PE's own segment seg at offset, as a same-node put would (a word in
     * one access, so that a waiter never sees half of it); the caller has checked the range. */
    void (*put_local)(shmemi_instance_t *inst, int seg, size_t offset, const void *src, size_t len);
    /* Applies a on this PE's own word at (seg, offset) as a same-node AMO would (atomic with
     * every other AMO on it, waiters woken); returns the word's old value. */
    uint64_t (*amo_local)(shmemi_instance_t *inst, int seg, size_t offset, const shmemi_amo_t *a);
    /* len random bytes from the kernel: ACLSHMEM_SUCCESS, or an error (recorded). */
    int (*random)(void *out, size_t len);
} shmemi_plugin_host_t;

typedef struct shmemi_plugin {
    int abi;             /* SHMEMI_PLUGIN_ABI of the plug-in's build */
    const char *version; /* the libaclshmem version it was built with */
    const char *name;    /* for messages: "UCX 1.13.1" */
    /* The ops table for inst's PEs on other nodes, which start chose. */
    const shmemi_transport_ops_t *(*ops)(shmemi_instance_t *inst);
    /* Collective over every PE of inst (each one has peers on other nodes): connects to the
     * PEs whose heaps.same_node[] is 0 and sets inst->remote to its state. */
    int (*start)(shmemi_instance_t *inst, const shmemi_plugin_host_t *host);
    /* Moves pending operations on without blocking (waits call it while they poll). */
    void (*progress)(shmemi_instance_t *inst);
    /* A waiter of this PE stops polling and goes to sleep: from now on the plug-in must
     * progress by itself (and ring the doorbell) until a thread polls again. */
    void (*before_sleep)(shmemi_instance_t *inst);
    /* A channel of its own for a new context (see shmemi_channel_t), in *ch: not collective,
     * peers take part only as targets. */
    int (*channel_open)(shmemi_instance_t *inst, shmemi_channel_t **ch);
    /* Completes ch's operations and ends it.  Channels still open at stop end there. */
    void (*channel_close)(shmemi_instance_t *inst, shmemi_channel_t *ch);
    /* Ends everything start made (no collective: peers may be gone). */
    void (*stop)(shmemi_instance_t *inst);
} shmemi_plugin_t;

/* The symbol every plug-in exports: returns its description. */
#define SHMEMI_PLUGIN_ENTRY "shmemi_transport_plugin"
typedef const shmemi_plugin_t *(*shmemi_plugin_entry_fn)(void);
/* The UCX plug-in also exports, for diagnostics only (aclshmemx_describe reports it, which
 * shmem-config shows): int shmemi_ucx_data_plane(char *out, size_t len), the data plane this
 * process's environment selects, as one line (0), or why the environment is invalid (-1). */
#define SHMEMI_UCX_DATA_PLANE_FN "shmemi_ucx_data_plane"
typedef int (*shmemi_ucx_data_plane_fn)(char *out, size_t len);

/* libaclshmem's services, handed to start. */
extern const shmemi_plugin_host_t shmemi_plugin_host;

/* Loads the UCX plug-in once per process: the plug-in, or NULL with the reason in why. */
const shmemi_plugin_t *shmemi_plugin_load_ucx(char *why, size_t why_len);

/* The UCX plug-in for aclshmemx_describe: what the one load found (load: doing it now if
 * no job has yet), else that it is not loaded yet. */
void shmemi_plugin_describe_ucx(aclshmemx_plugin_info_t *out, int load);

/* libaclshmem's own file, as the dynamic loader names it (plug-ins are looked for beside it). */
const char *shmemi_plugin_library_path(void);

#endif
