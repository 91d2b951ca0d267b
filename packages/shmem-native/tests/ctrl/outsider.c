#define _GNU_SOURCE
#include "outsider.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

struct sockaddr_in outsider_pe0_address(const aclshmemx_uniqueid_t *uid)
{
    const unsigned char *in = (const unsigned char *)uid->internal;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_port, in + 6, 2);
    memcpy(&sa.sin_addr, in + 8, 4);
    return sa;
}

int outsider_dial_when_listening(const struct sockaddr_in *sa, double timeout_s)
{
    double deadline = harness_now() + timeout_s;
    while (harness_now() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
            return fd;
        close(fd);
        harness_sleep_ms(5);
    }
    return -1;
}

int outsider_count_closed(const int *fds, int n)
{
    int closed = 0;
    for (int i = 0; i < n; i++) {
        char c;
        ssize_t r = recv(fds[i], &c, 1, MSG_DONTWAIT);
        closed += r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    }
    return closed;
}
