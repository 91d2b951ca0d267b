/* Unique IDs: PE 0's control-plane address plus a random job secret. */
#include "bootstrap/uid.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/init.h"
#include "bootstrap/channel.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"

/* Sockets bound by aclshmemx_get_uniqueid, kept so the port stays ours until PE 0 (in this
 * process or another) listens on it. */
#define MAX_RESERVED 64
static pthread_mutex_t reserved_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int fd;
    uint8_t secret[SHMEMI_SECRET_LEN];
} reserved[MAX_RESERVED];
static int reserved_count;

static void remember_socket(int fd, const uint8_t *secret)
{
    pthread_mutex_lock(&reserved_lock);
    if (reserved_count == MAX_RESERVED) { /* forget the oldest */
        close(reserved[0].fd);
        memmove(&reserved[0], &reserved[1], sizeof(reserved[0]) * (MAX_RESERVED - 1));
        reserved_count--;
    }
    reserved[reserved_count].fd = fd;
    memcpy(reserved[reserved_count].secret, secret, SHMEMI_SECRET_LEN);
    reserved_count++;
    pthread_mutex_unlock(&reserved_lock);
}

int shmemi_uid_take_reserved_socket(const shmemi_uid_inner_t *inner)
{
    int fd = -1;
    pthread_mutex_lock(&reserved_lock);
    for (int i = 0; i < reserved_count; i++) {
        if (memcmp(reserved[i].secret, inner->secret, SHMEMI_SECRET_LEN) == 0) {
            fd = reserved[i].fd;
            memmove(&reserved[i], &reserved[i + 1], sizeof(reserved[0]) * (size_t)(reserved_count - i - 1));
            reserved_count--;
            break;
        }
    }
    pthread_mutex_unlock(&reserved_lock);
    return fd;
}

static void inner_set_address(shmemi_uid_inner_t *inner, const struct sockaddr_storage *ss)
{
    memset(inner->addr, 0, sizeof(inner->addr));
    inner->family = ss->ss_family;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        memcpy(inner->addr, &in->sin_addr, 4);
        inner->port_be = in->sin_port;
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        memcpy(inner->addr, &in6->sin6_addr, 16);
        inner->port_be = in6->sin6_port;
    }
}

socklen_t shmemi_uid_sockaddr(const shmemi_uid_inner_t *inner, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (inner->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = inner->port_be;
        memcpy(&in->sin_addr, inner->addr, 4);
        return sizeof(*in);
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = inner->port_be;
    memcpy(&in6->sin6_addr, inner->addr, 16);
    return sizeof(*in6);
}

void shmemi_uid_encode(aclshmemx_uniqueid_t *uid, const shmemi_uid_inner_t *inner)
{
    memset(uid, 0, sizeof(*uid));
    uid->version = ACLSHMEM_UNIQUEID_VERSION;
    memcpy(uid->internal, inner, sizeof(*inner));
}

int shmemi_uid_decode(const aclshmemx_uniqueid_t *uid, shmemi_uid_inner_t *inner)
{
    if (!uid)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "the unique ID is NULL");
    if (uid->version != ACLSHMEM_UNIQUEID_VERSION)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "the unique ID has version %d, expected %d: it was not made by "
                           "aclshmemx_get_uniqueid or was damaged in transit",
                           uid->version, ACLSHMEM_UNIQUEID_VERSION);
    memcpy(inner, uid->internal, sizeof(*inner));
    if (inner->magic != SHMEMI_UID_MAGIC || (inner->family != AF_INET && inner->family != AF_INET6))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "the unique ID's internal bytes are not a valid address record");
    return ACLSHMEM_SUCCESS;
}

/* SHMEM_UID_SESSION_ID=ip:port wins, then SHMEM_UID_SOCK_IFNAME=name[:inet4|inet6],
 * then loopback, so one machine needs no configuration. */
static int choose_address(struct sockaddr_storage *ss, socklen_t *len)
{
    const char *session = getenv("SHMEM_UID_SESSION_ID");
    if (session && *session) {
        if (shmemi_parse_host_port(session, ss, len) != 0)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "SHMEM_UID_SESSION_ID=\"%s\" is not ip:port, [ipv6]:port or host:port",
                               session);
        return ACLSHMEM_SUCCESS;
    }
    const char *ifname = getenv("SHMEM_UID_SOCK_IFNAME");
    if (ifname && *ifname) {
        char name[64];
        snprintf(name, sizeof(name), "%s", ifname);
        int family = AF_UNSPEC;
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            if (strcmp(colon + 1, "inet4") == 0)
                family = AF_INET;
            else if (strcmp(colon + 1, "inet6") == 0)
                family = AF_INET6;
            else
                return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                                   "SHMEM_UID_SOCK_IFNAME=\"%s\": the suffix must be :inet4 or :inet6",
                                   ifname);
        }
        if (shmemi_interface_address(name, family, ss, len) != 0)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "SHMEM_UID_SOCK_IFNAME=\"%s\": no such interface with an address", ifname);
        ((struct sockaddr_in *)ss)->sin_port = 0; /* same offset for IPv6 */
        return ACLSHMEM_SUCCESS;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    memset(ss, 0, sizeof(*ss));
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *len = sizeof(*in);
    return ACLSHMEM_SUCCESS;
}

int shmemi_uid_create(aclshmemx_uniqueid_t *uid)
{
    struct sockaddr_storage ss;
    socklen_t len;
    SHMEMI_TRY(choose_address(&ss, &len));
    int fd = shmemi_tcp_bind(&ss, len);
    if (fd < 0) {
        char text[80];
        shmemi_sockaddr_text(&ss, text, sizeof(text));
        return shmemi_fail(ACLSHMEM_BOOTSTRAP_ERROR, "aclshmemx_get_uniqueid: cannot bind %s: %s",
                           text, strerror(-fd));
    }
    len = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &len);

    shmemi_uid_inner_t inner = {.magic = SHMEMI_UID_MAGIC};
    inner_set_address(&inner, &ss);
    if (shmemi_random_bytes(inner.secret, sizeof(inner.secret)) != 0) {
        close(fd);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "aclshmemx_get_uniqueid: no random bytes available");
    }
    remember_socket(fd, inner.secret);
    shmemi_uid_encode(uid, &inner);
    return ACLSHMEM_SUCCESS;
}

/* The port of instance_id from SHMEM_INSTANCE_PORT_RANGE=start:end. */
static int instance_port(uint64_t instance_id, uint16_t *port)
{
    const char *range = getenv("SHMEM_INSTANCE_PORT_RANGE");
    unsigned start, end;
    char tail;
    if (!range || sscanf(range, "%u:%u%c", &start, &end, &tail) != 2 || start <= 1024 || end > 65535 ||
        start > end)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "init: instance %llu in DEFAULT mode takes its port from "
                           "SHMEM_INSTANCE_PORT_RANGE=start:end (1024 < start <= end <= 65535), which is %s%s%s",
                           (unsigned long long)instance_id, range ? "\"" : "not set", range ? range : "",
                           range ? "\"" : "");
    if (instance_id > end - start)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE,
                           "init: instance %llu is beyond SHMEM_INSTANCE_PORT_RANGE=%s (%u ports)",
                           (unsigned long long)instance_id, range, end - start + 1);
    *port = (uint16_t)(start + instance_id);
    return ACLSHMEM_SUCCESS;
}

/* DEFAULT mode has no exchanged secret: it is derived from the URL and SHMEM_JOB_SECRET,
 * which every PE of a job sets to the same private value. */
int shmemi_uid_from_url(const char *url, uint64_t instance_id, shmemi_uid_inner_t *inner)
{
    const char *rest = NULL;
    if (strncmp(url, "tcp://", 6) == 0)
        rest = url + 6;
    else if (strncmp(url, "tcp6://", 7) == 0)
        rest = url + 7;
    struct sockaddr_storage ss;
    socklen_t len;
    if (!rest || shmemi_parse_host_port(rest, &ss, &len) != 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "init: ip_port \"%s\" is not tcp://host:port or "
                           "tcp6://[host]:port", url);
    memset(inner, 0, sizeof(*inner));
    inner->magic = SHMEMI_UID_MAGIC;
    inner_set_address(inner, &ss);
    if (instance_id != 0 && inner->port_be == 0) {
        uint16_t port;
        SHMEMI_TRY(instance_port(instance_id, &port));
        inner->port_be = htons(port);
    }
    if (ntohs(inner->port_be) <= 1024)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "init: ip_port \"%s\" needs a port above 1024", url);
    /* Hashed piece by piece: SHMEM_JOB_SECRET may be of any length, and all of it counts. */
    char port[8];
    snprintf(port, sizeof(port), "%u", (unsigned)ntohs(inner->port_be));
    const char *job_secret = getenv("SHMEM_JOB_SECRET");
    if (shmemi_sha256_strings(inner->secret, "aclshmem-default", url, port, job_secret ? job_secret : "",
                              (const char *)NULL) != 0)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "init: cannot hash the DEFAULT-mode job secret (OpenSSL failed)");
    return ACLSHMEM_SUCCESS;
}

/* Who may join a DEFAULT-mode job: whoever holds SHMEM_JOB_SECRET, or a certificate the
 * CA signed.  Without either, anyone who can reach the address could join and map every
 * heap, so that runs only when the user chose it by turning TLS off. */
int shmemi_uid_check_default_auth(const char *url)
{
    const char *job_secret = getenv("SHMEM_JOB_SECRET");
    if (job_secret && *job_secret)
        return ACLSHMEM_SUCCESS;
    if (shmemi_channel_uses_certificates())
        return ACLSHMEM_SUCCESS;
    shmemi_tls_settings_t tls;
    shmemi_settings_tls(&tls);
    if (!tls.tls_enabled) {
        SHMEMI_WARN("init: DEFAULT mode at %s runs UNAUTHENTICATED (TLS turned off and no "
                    "SHMEM_JOB_SECRET): anyone who can reach the address can join the job and map its "
                    "memory", url);
        return ACLSHMEM_SUCCESS;
    }
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "init: DEFAULT mode (ip_port \"%s\") has no secret, so anyone who can reach the "
                       "address could join the job. Set SHMEM_JOB_SECRET to the same private value on "
                       "every PE, or configure TLS certificates (aclshmemx_set_conf_store_tls(true, "
                       "\"tlsCert: ...; tlsPk: ...; tlsCaFile: ...\")), or run unauthenticated by turning "
                       "TLS off with aclshmemx_set_conf_store_tls(false, ...)", url);
}
