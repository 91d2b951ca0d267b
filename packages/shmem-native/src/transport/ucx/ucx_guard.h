/* The fence around UCX's TCP listening sockets.
 *
 * UCX's TCP transport accepts a connection from anyone who reaches its port and then acts
 * on what arrives: its own frames include a write of any length to any address the sender
 * names (UCT's PUT_REQ), below every check the plug-in can make.  So the plug-in finds
 * the listening sockets UCX opened (those that appeared while the worker was created),
 * closes them at once with a socket filter that drops every packet, and, once the job's
 * cards are exchanged over the authenticated control plane, replaces it with a filter that
 * lets in only packets from the addresses of the job's other nodes.  The kernel then drops
 * an outsider's SYN before UCX sees a byte.  Accepted connections inherit the filter;
 * anything accepted from elsewhere before the filter was in place is shut down.
 *
 * Classic BPF socket filters (SO_ATTACH_FILTER) need no privilege.  No UCX in this file,
 * so a test can check the filter on sockets of its own (tests/security/test_guard.c). */
#ifndef SHMEMI_UCX_GUARD_H
#define SHMEMI_UCX_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define UCX_GUARD_MAX_LISTENERS 16
/* The addresses one PE publishes for its host (a card carries this many at most). */
#define UCX_GUARD_MAX_HOST_ADDRS 32

/* An IPv4 (family 4, the first 4 bytes) or IPv6 (family 6) address. */
typedef struct {
    uint8_t family;
    uint8_t reserved[3];
    uint8_t addr[16];
} ucx_host_addr_t;

typedef struct {
    int count;
    int fd[UCX_GUARD_MAX_LISTENERS];
    unsigned long inode[UCX_GUARD_MAX_LISTENERS];
    uint16_t port[UCX_GUARD_MAX_LISTENERS];
} ucx_listeners_t;

typedef struct {
    ucx_listeners_t before; /* listening TCP sockets of the process before UCX started */
    ucx_listeners_t fenced; /* those UCX opened, which carry our filter */
    unsigned long swept;    /* connections from elsewhere shut down */
} ucx_guard_t;

/* Lists the process's listening TCP sockets; call before UCX creates its worker. */
void ucx_guard_before(ucx_guard_t *g);
/* Finds the listening TCP sockets opened since ucx_guard_before and drops every packet to
 * them.  0, or -1 with the reason in why. */
int ucx_guard_close(ucx_guard_t *g, char *why, size_t why_len);
/* Lets in only packets from allowed[0..n) and shuts down connections accepted from other
 * addresses.  0, or -1 with the reason in why. */
int ucx_guard_open_to(ucx_guard_t *g, const ucx_host_addr_t *allowed, int n, char *why, size_t why_len);

/* This host's addresses (every IPv4 and IPv6 address of an interface that is up, except
 * loopback), at most max; returns how many. */
int ucx_host_addresses(ucx_host_addr_t *out, int max);

/* Attaches to fd a filter that accepts only packets from allowed[0..n) (n may be 0: drop
 * everything).  0, or -1 with errno set. */
int ucx_guard_attach(int fd, const ucx_host_addr_t *allowed, int n);

#endif
