/* What the control-plane tests' outsiders share: PE 0's address, as a port scan would find
 * it (here read from the unique ID's documented layout, src/bootstrap/uid.h), dialing it,
 * and telling which of their connections the server has closed. */
#ifndef ACLSHMEM_TEST_OUTSIDER_H
#define ACLSHMEM_TEST_OUTSIDER_H

#include <netinet/in.h>

#include "aclshmem.h"

struct sockaddr_in outsider_pe0_address(const aclshmemx_uniqueid_t *uid);

/* Connects to sa, retrying while nobody listens yet (PE 0 is still starting): the
 * connected fd, or -1 after timeout_s. */
int outsider_dial_when_listening(const struct sockaddr_in *sa, double timeout_s);

/* How many of fds[0..n) the server has closed (they read end-of-file or a reset). */
int outsider_count_closed(const int *fds, int n);

#endif
