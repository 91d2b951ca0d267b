/* TCP and Unix-socket helpers with deadlines, for the control plane. */
#ifndef SHMEMI_NET_H
#define SHMEMI_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Monotonic milliseconds. */
int64_t shmemi_now_ms(void);

/* Opens a TCP socket bound to ss (port 0 picks one) with SO_REUSEADDR set, so the process
 * that made a UID (bound, not listening) and PE 0 may both hold the address; a port where
 * another socket listens fails with -EADDRINUSE.  -errno on failure. */
int shmemi_tcp_bind(const struct sockaddr_storage *ss, socklen_t len);

/* Connects to ss, retrying refused connections until deadline_ms.  Returns fd or
 * -ETIMEDOUT / -errno. */
int shmemi_tcp_connect(const struct sockaddr_storage *ss, socklen_t len, int64_t deadline_ms);

/* Disables Nagle: control messages are small and latency-bound. */
void shmemi_tcp_nodelay(int fd);

/* Full-length transfers that give up at deadline_ms (-1: no deadline).  0 on success,
 * -ETIMEDOUT, -EPIPE (peer closed) or -errno. */
int shmemi_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms);
int shmemi_recv_all(int fd, void *buf, size_t len, int64_t deadline_ms);

/* Fills ss from "ip:port", "[ipv6]:port" or "host:port". */
int shmemi_parse_host_port(const char *text, struct sockaddr_storage *ss, socklen_t *len);

/* Address of interface ifname (family AF_INET, AF_INET6 or AF_UNSPEC). */
int shmemi_interface_address(const char *ifname, int family, struct sockaddr_storage *ss,
                             socklen_t *len);

void shmemi_sockaddr_text(const struct sockaddr_storage *ss, char *out, size_t out_len);

#endif
