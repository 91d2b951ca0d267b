/*
 * test_secret_unit.c - the hashing and heap hand-off internals, linked in directly (the
 * library's own objects, not the shared library), for what no job can show reliably:
 *
 *  - shmemi_proof over inputs longer than 256 bytes is the real HMAC-SHA256 (it used to be
 *    all zeros, so any two long inputs had the same "MAC");
 *  - the DEFAULT-mode secret counts every byte of a long SHMEM_JOB_SECRET (it used to hash
 *    a 512-byte buffer with the untruncated length, reading past it);
 *  - a heap offer is accepted only with exactly one sealed memfd of the size its segments
 *    make per file (the heaps and control segment in one, the data segment alone), and
 *    every fd received with a rejected offer is closed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aclshmem.h"
#include "bootstrap/crypto.h"
#include "bootstrap/uid.h"
#include "mem/heap.h"

static int failures;

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "  FAIL %s:%d: %s | last error: %s\n", __FILE__, __LINE__, #c,         \
                    aclshmemx_get_last_error());                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* ---- proofs ---------------------------------------------------------------------------- */

static void reference_hmac(const uint8_t key[32], const char *label, const uint8_t *data, size_t len,
                           uint8_t out[32])
{
    size_t label_len = strlen(label);
    uint8_t *whole = malloc(label_len + len);
    memcpy(whole, label, label_len);
    memcpy(whole + label_len, data, len);
    unsigned int out_len = 32;
    HMAC(EVP_sha256(), key, 32, whole, label_len + len, out, &out_len);
    free(whole);
}

static void t_proof_long_input(void)
{
    uint8_t key[32], zero[32] = {0};
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(i * 7 + 1);
    static const size_t lengths[] = {0, 1, 36, 255, 256, 300, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
        size_t len = lengths[k];
        uint8_t *a = malloc(len + 1), *b = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            a[i] = b[i] = (uint8_t)(i * 31 + 5);
        if (len)
            b[len - 1] ^= 1; /* differs only in the last byte */
        uint8_t mac_a[32], mac_b[32], expected[32];
        CHECK(shmemi_proof(key, "aclshmem-test", a, len, mac_a) == 0);
        CHECK(shmemi_proof(key, "aclshmem-test", b, len, mac_b) == 0);
        reference_hmac(key, "aclshmem-test", a, len, expected);
        CHECK(memcmp(mac_a, expected, 32) == 0);
        CHECK(memcmp(mac_a, zero, 32) != 0);
        if (len)
            CHECK(!shmemi_proof_equal(mac_a, mac_b));
        free(a);
        free(b);
    }
}

/* ---- the DEFAULT-mode secret ------------------------------------------------------------- */

static void default_secret(const char *job_secret, uint8_t out[SHMEMI_SECRET_LEN])
{
    setenv("SHMEM_JOB_SECRET", job_secret, 1);
    shmemi_uid_inner_t inner;
    CHECK(shmemi_uid_from_url("tcp://127.0.0.1:45678", 0, &inner) == ACLSHMEM_SUCCESS);
    memcpy(out, inner.secret, SHMEMI_SECRET_LEN);
}

static void t_long_job_secret(void)
{
    size_t len = 4096;
    char *secret = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        secret[i] = (char)('a' + i % 26);
    secret[len] = '\0';
    uint8_t first[32], again[32], last_changed[32], short_one[32];
    default_secret(secret, first);
    default_secret(secret, again);
    secret[len - 1] = secret[len - 1] == 'z' ? 'y' : 'z';
    default_secret(secret, last_changed);
    secret[600] = '\0';
    default_secret(secret, short_one);
    CHECK(memcmp(first, again, 32) == 0);
    CHECK(memcmp(first, last_changed, 32) != 0); /* the tail of a long secret counts */
    CHECK(memcmp(first, short_one, 32) != 0);
    unsetenv("SHMEM_JOB_SECRET");
    free(secret);
}

/* ---- heap offers ------------------------------------------------------------------------- */

static int open_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory itself */
}

static int memfd(size_t size, int seals)
{
    int fd = memfd_create("aclshmem-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0 || (seals && fcntl(fd, F_ADD_SEALS, seals) != 0))
        fprintf(stderr, "  cannot make a test memfd\n"), exit(2);
    return fd;
}

/* Sends an offer from "pe" with n_fds memfds (fd i of real_size[i] bytes, sealed with
 * seals), announcing announced[] segment sizes; the sender's copies are closed. */
typedef struct {
    int pe;
    int n_fds;
    int seals;
    size_t announced[SHMEMI_SEG_COUNT];
    size_t real_size[SHMEMI_FILE_COUNT + 1];
} offer_spec_t;

static void send_offer(int sock, const offer_spec_t *spec)
{
    shmemi_fd_offer_t offer = {.pe = spec->pe};
    int fds[SHMEMI_FILE_COUNT + 1];
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        offer.size[s] = spec->announced[s];
    for (int i = 0; i < spec->n_fds; i++)
        fds[i] = memfd(spec->real_size[i], spec->seals);
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    union {
        char buf[CMSG_SPACE(sizeof(fds))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (spec->n_fds) {
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)spec->n_fds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)spec->n_fds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)spec->n_fds);
    }
    if (sendmsg(sock, &msg, 0) != (ssize_t)sizeof(offer))
        fprintf(stderr, "  cannot send a test offer\n"), exit(2);
    for (int i = 0; i < spec->n_fds; i++)
        close(fds[i]);
}

/* The receiver's own segment sizes: both heaps and the control segment; the program's data
 * segment absent (0, no fd) unless a case shares it.  Their files: the three first segments
 * one after another, each from a page, in one; the data segment alone. */
static size_t expected[SHMEMI_SEG_COUNT] = {1 << 20, 2 << 20, 100, 0};
#define SEGMENTS_FILE ((1 << 20) + (2 << 20) + 4096)
static size_t expected_file[SHMEMI_FILE_COUNT] = {SEGMENTS_FILE, 0};

/* Runs one offer through shmemi_heap_receive_offer; returns its result.  Checks that no fd
 * stays open in this process unless the offer was accepted (and then that there is one fd
 * for each present file, -1 for an absent one, and closes them). */
static int receive(const offer_spec_t *spec)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        exit(2);
    int before = open_fd_count();
    send_offer(sv[1], spec);
    int fds[SHMEMI_FILE_COUNT];
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        fds[f] = -2;
    int rc = shmemi_heap_receive_offer(sv[0], 5, expected, fds);
    int after = open_fd_count();
    if (rc == ACLSHMEM_SUCCESS) {
        int present = 0;
        for (int f = 0; f < SHMEMI_FILE_COUNT; f++) {
            present += expected_file[f] > 0;
            CHECK(expected_file[f] > 0 ? fds[f] >= 0 : fds[f] == -1);
            if (fds[f] < 0)
                continue;
            CHECK((fcntl(fds[f], F_GET_SEALS) & SHMEMI_HEAP_SEALS) == SHMEMI_HEAP_SEALS);
            struct stat st;
            CHECK(fstat(fds[f], &st) == 0 && (size_t)st.st_size == expected_file[f]);
            close(fds[f]);
        }
        CHECK(after == before + present);
    } else {
        CHECK(after == before); /* every fd that came with a rejected offer is closed */
    }
    close(sv[0]);
    close(sv[1]);
    return rc;
}

static void t_heap_offer(void)
{
    size_t offset[SHMEMI_SEG_COUNT], file_size[SHMEMI_FILE_COUNT];
    shmemi_segments_layout(expected, offset, file_size);
    CHECK(file_size[SHMEMI_FILE_SEGMENTS] == SEGMENTS_FILE && file_size[SHMEMI_FILE_DATA] == 0);
    CHECK(offset[SHMEMI_SEG_HOST] == 0 && offset[SHMEMI_SEG_DEVICE] == 1 << 20 &&
          offset[SHMEMI_SEG_CTRL] == 3 << 20);

    const offer_spec_t good = {.pe = 5, .n_fds = 1, .seals = SHMEMI_HEAP_SEALS,
                               .announced = {1 << 20, 2 << 20, 100},
                               .real_size = {SEGMENTS_FILE}};
    CHECK(receive(&good) == ACLSHMEM_SUCCESS);

    offer_spec_t bad = good;
    bad.seals = 0; /* a peer could ftruncate it under our mapping */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    CHECK(strstr(aclshmemx_get_last_error(), "sealed") != NULL);
    bad.seals = F_SEAL_SHRINK | F_SEAL_GROW; /* open to more seals: F_SEAL_FUTURE_WRITE would stop mappings */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    bad.seals = F_SEAL_GROW | F_SEAL_SEAL;
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);

    bad = good;
    bad.real_size[0] = 3 << 20; /* smaller than its segments: mapping the control segment would SIGBUS */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    CHECK(strstr(aclshmemx_get_last_error(), "bytes") != NULL);

    bad = good;
    bad.announced[1] = 8 << 20; /* a different local_mem_size */
    bad.real_size[0] = (1 << 20) + (8 << 20) + 4096;
    CHECK(receive(&bad) == ACLSHMEM_INVALID_PARAM);

    bad = good;
    bad.pe = 6; /* answered as another PE */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);

    bad = good;
    bad.n_fds = 2; /* one fd too many */
    bad.real_size[1] = 4096;
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    bad.n_fds = 0; /* none */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
}

/* With the program's data shared (SHMEMI_SEG_DATA present) its memfd is the second fd, held
 * to the same rules; a peer whose data segment differs is refused naming the executable. */
static void t_heap_offer_with_data(void)
{
    expected[SHMEMI_SEG_DATA] = 12288;
    expected_file[SHMEMI_FILE_DATA] = 12288;
    const offer_spec_t good = {.pe = 5, .n_fds = 2, .seals = SHMEMI_HEAP_SEALS,
                               .announced = {1 << 20, 2 << 20, 100, 12288},
                               .real_size = {SEGMENTS_FILE, 12288}};
    CHECK(receive(&good) == ACLSHMEM_SUCCESS);

    offer_spec_t bad = good;
    bad.n_fds = 1; /* the data segment's memfd is missing */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    bad = good;
    bad.real_size[1] = 4096; /* smaller than announced */
    CHECK(receive(&bad) == ACLSHMEM_SMEM_ERROR);
    bad = good;
    bad.announced[3] = bad.real_size[1] = 16384; /* another executable */
    CHECK(receive(&bad) == ACLSHMEM_INVALID_PARAM);
    CHECK(strstr(aclshmemx_get_last_error(), "same executable") != NULL);
    bad = good;
    bad.announced[3] = 0; /* a PE that does not share its data */
    bad.n_fds = 1;
    CHECK(receive(&bad) == ACLSHMEM_INVALID_PARAM);
    expected[SHMEMI_SEG_DATA] = 0;
    expected_file[SHMEMI_FILE_DATA] = 0;
}

int main(void)
{
    /* Log lines to stdout: a log file opened at the first error would count as a leaked fd. */
    setenv("SHMEM_LOG_TO_STDOUT", "1", 1);
    struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"proof_long_input", t_proof_long_input},
                 {"long_job_secret", t_long_job_secret},
                 {"heap_offer", t_heap_offer},
                 {"heap_offer_with_data", t_heap_offer_with_data}};
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int before = failures;
        cases[i].fn();
        printf("[ %s ] %s\n", failures == before ? " OK " : "FAIL", cases[i].name);
        failed += failures != before;
    }
    return failed ? 1 : 0;
}
