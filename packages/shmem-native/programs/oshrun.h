/* oshrun / shmemrun, the C launcher of OpenSHMEM (and any other) programs: what its two
 * files share.  oshrun.c reads the command line and sets up the job's environment;
 * oshrun_pes.c starts the PEs, copies their output with prefixes, passes signals on and
 * stops the job when one fails. */
#ifndef OSHRUN_H
#define OSHRUN_H

#include <stddef.h>

typedef struct {
    const char *name;   /* how the launcher was called (oshrun, shmemrun): its messages' prefix */
    int npes;           /* PEs on this node */
    int first_pe;       /* the global number of this node's first PE (0 on one node) */
    int total_pes;      /* PEs of the whole job */
    double timeout;     /* seconds until the job is stopped (status 124); < 0: none */
    double kill_grace;  /* seconds between SIGTERM and SIGKILL when stopping PEs */
    int prefix;         /* prefix every output line with "[PE i] " */
    int bind_core;      /* --bind-to core: PE i of this node on the (i mod k)-th of the k CPUs
                         * the launcher may use */
    char **command;     /* what every PE runs, NULL-terminated (argv of execvp) */
} oshrun_job_t;

/* Starts job->npes PEs of job->command, with the environment the launcher has set up plus
 * SHMEM_RUN_PE (and, unless RANK was set, torchrun's per-rank variables), and watches them
 * until they have all ended.  Returns the job's exit status: that of the first PE that
 * failed (128 + S for a PE killed by signal S), 124 after job->timeout, 128 + S when the
 * launcher received signal S (SIGINT or SIGTERM, passed on to every PE), else 0; 1 when a
 * PE could not be started (said on standard error). */
int oshrun_run_pes(const oshrun_job_t *job);

/* Writes all of text to fd (standard output or error), giving up quietly on a closed pipe. */
void oshrun_write_all(int fd, const char *text, size_t len);

/* "<name>: <message>\n" on standard error. */
void oshrun_note(const oshrun_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
