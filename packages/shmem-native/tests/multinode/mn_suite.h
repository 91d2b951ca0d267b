/*
 * mn_suite.h - what the files of the multi-node suite share (mn_suite.c says which file holds
 * what): the job as this PE sees it, the reporting helpers, the byte patterns, the allocation
 * helpers (all in mn_common.c) and the cases that main runs.
 */
#ifndef MN_SUITE_H
#define MN_SUITE_H

#include <stddef.h>
#include <stdint.h>

#define MiB (1024UL * 1024)

/* Set by main before the case runs: my PE, the PEs, PEs per node, nodes, the PE I send to (on
 * the next node) and the PE I receive from (on the previous node). */
extern int me, n, ppn, nodes, peer, src;
extern const char *case_name;
extern int failures;

/* ---- reporting ----------------------------------------------------------------------- */
/* A FAIL line naming the file and line of the check; fail_at(__LINE__, ...) is the form the
 * cases use, so that the line goes with the file it is written in. */
void fail_in(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define fail_at(line, ...) fail_in(__FILE__, line, __VA_ARGS__)
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond))                                                                            \
            fail_at(__LINE__, __VA_ARGS__);                                                     \
    } while (0)

double now(void);
void sleep_ms(int ms);

/* ---- byte patterns: every byte depends on its offset, the sender and a salt ------------ */
static inline unsigned char pat(size_t i, int pe, int salt)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 11) * 40503u;
    return (unsigned char)((x >> 13) ^ (x >> 24) ^ (unsigned)(pe * 31 + salt * 7 + 1));
}

void fill(void *p, size_t len, int pe, int salt);
int expect_pat(const char *file, int line, const char *what, const void *p, size_t len, size_t off, int pe,
               int salt);
#define EXPECT_PAT(what, p, len, off, pe, salt) expect_pat(__FILE__, __LINE__, what, p, len, off, pe, salt)
int all_zero(const void *p, size_t len);

/* ---- allocation: a NULL ends the PE with a FAIL line ------------------------------------ */
void *xmalloc(size_t len);
void *sym_alloc(size_t len);

/* ---- the cases (main's table names them) ------------------------------------------------ */
/* mn_rma.c */
void case_putmem(void);
void case_typed(void);
void case_strided(void);
void case_nbi(void);
void case_signal(void);
/* mn_waits.c */
void case_wait(void);
/* mn_sync.c */
void case_amo(void);
void case_barrier(void);
void case_teams(void);
void case_killed(void);
/* mn_victim.c */
void case_victim(void);
/* mn_coll.c */
void case_coll(void);
void case_get_nbi(void);
void case_reduce_blocks(void);
void case_coll_mix(void);
#ifdef MN_SHARE_DATA
/* mn_globals.c */
void case_globals(void);
#endif

#endif
