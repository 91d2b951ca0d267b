/*
 * oshrun / shmemrun - runs N PEs of any program on this machine:
 *
 *     oshrun -np 4 ./prog args...           a C (or any) executable
 *     oshrun -np 4 python3 script.py        a Python script
 *
 * The C twin of shmem-core's launcher (python -m shmem.run, and the console scripts oshrun
 * and shmemrun of pip install shmem-core), with the same options and behaviour, for
 * machines without Python: it makes the job's unique ID with libaclshmem's own
 * aclshmemx_get_uniqueid and starts every PE with the environment shmem_init() reads
 * (SHMEM_RUN_UID hex, SHMEM_RUN_PE, SHMEM_RUN_NPES, SHMEM_RUN_MEM_SIZE; see
 * src/openshmem/launch.h), plus what python -m shmem.run also sets: SHMEM_JOB_SECRET (a
 * fresh random one unless set), PYTHONUNBUFFERED=1, and torchrun's RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT unless RANK is set.  Output
 * prefixes, signals, fail-fast and exit statuses: oshrun_pes.c.
 *
 * Jobs on several nodes (--nnodes > 1) need the authenticated unique-ID exchange between
 * the nodes' launchers, which is Python's (shmem._bootstrap): oshrun hands them to
 * shmem-core's launcher, run by $SHMEM_PYTHON or python3, and says so when it is missing.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aclshmem.h"
#include "oshrun.h"
#include "openshmem/sizes.h"

#define EXIT_USAGE 2
#define NPES_UNSET INT_MIN /* -n was not given (parse_int never returns it) */

/* What the command line says, beyond oshrun_job_t. */
typedef struct {
    oshrun_job_t job;
    const char *mem_size;     /* --mem-size as given, or NULL */
    const char *module;       /* -m module, or NULL */
    int nnodes, node_rank;    /* the other options of several nodes are shmem-core's to read */
} options_t;

enum {
    OPT_MEM_SIZE = 256,
    OPT_TIMEOUT,
    OPT_KILL_GRACE,
    OPT_NO_PREFIX,
    OPT_BIND_TO,
    OPT_NNODES,
    OPT_NODE_RANK,
    OPT_MASTER_ADDR,
    OPT_MASTER_PORT,
    OPT_JOIN_TIMEOUT,
    OPT_VERSION,
};

/* Single-dash long options too (getopt_long_only), for Open MPI's "-np 4". */
static const struct option long_options[] = {
    {"np", required_argument, NULL, 'n'},
    {"npes", required_argument, NULL, 'n'},
    {"nproc", required_argument, NULL, 'n'},
    {"nproc-per-node", required_argument, NULL, 'n'},
    {"mem-size", required_argument, NULL, OPT_MEM_SIZE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"kill-grace", required_argument, NULL, OPT_KILL_GRACE},
    {"no-prefix", no_argument, NULL, OPT_NO_PREFIX},
    {"bind-to", required_argument, NULL, OPT_BIND_TO},
    {"nnodes", required_argument, NULL, OPT_NNODES},
    {"node-rank", required_argument, NULL, OPT_NODE_RANK},
    {"node_rank", required_argument, NULL, OPT_NODE_RANK},
    {"master-addr", required_argument, NULL, OPT_MASTER_ADDR},
    {"master_addr", required_argument, NULL, OPT_MASTER_ADDR},
    {"master-port", required_argument, NULL, OPT_MASTER_PORT},
    {"master_port", required_argument, NULL, OPT_MASTER_PORT},
    {"join-timeout", required_argument, NULL, OPT_JOIN_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void usage(const char *name)
{
    printf("usage: %s -n N [options] program [args...]\n"
           "       %s -n N [options] -m module [args...]\n\n"
           "Run N processing elements (PEs) of a SHMEM program on this machine, or N on each of several\n"
           "nodes (--nnodes, one launcher per node).  The program is any executable: a C OpenSHMEM\n"
           "program, or python3 script.py.\n\n"
           "options:\n"
           "  -n N, -np N, --npes N, --nproc N, --nproc-per-node N\n"
           "                        number of PEs to start (on this node)\n"
           "  --mem-size SIZE       default symmetric heap size when the program gives none (bytes, or\n"
           "                        with a K/M/G suffix); SHMEM_SYMMETRIC_SIZE, if set, wins for\n"
           "                        OpenSHMEM programs\n"
           "  --timeout SECONDS     stop the job after this many seconds (exit status 124)\n"
           "  --kill-grace SECONDS  seconds between SIGTERM and SIGKILL when stopping PEs (default 3)\n"
           "  --no-prefix           do not prefix output lines with [PE i]\n"
           "  --bind-to none|core   core: PE i of this node on the (i mod k)-th of the k CPUs the\n"
           "                        launcher may use; none: unbound (default)\n"
           "  -m MODULE             run a Python module (python3 -m MODULE; $SHMEM_PYTHON chooses the\n"
           "                        Python)\n"
           "  -h, --help            show this help and exit\n"
           "  --version             show the library's version and exit\n\n"
           "several nodes (handed to shmem-core's Python launcher, pip install shmem-core):\n"
           "  --nnodes N            number of nodes (default 1)\n"
           "  --node-rank R         this node's number, 0..nnodes-1 (default 0)\n"
           "  --master-addr HOST    node 0's address, reachable from every node\n"
           "  --master-port PORT    the port on the master address where node 0's launcher serves\n"
           "                        the unique ID\n"
           "  --join-timeout S      seconds the nodes have to join (default SHMEM_UID_EXCHANGE_TIMEOUT,\n"
           "                        or 120)\n\n"
           "The exit status is that of the first PE that failed (128 + S for a PE killed by signal S),\n"
           "124 after --timeout, else 0.  SIGINT and SIGTERM are passed on to every PE.\n",
           name, name);
}

static _Noreturn __attribute__((format(printf, 2, 3))) void usage_error(const char *name, const char *fmt, ...)
{
    fprintf(stderr, "%s: error: ", name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(%s --help lists the options)\n", name);
    exit(EXIT_USAGE);
}

static int parse_int(const char *name, const char *option, const char *text)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (end == text || *end || errno || value < -1000000000L || value > 1000000000L)
        usage_error(name, "%s needs an integer, not \"%.32s\"", option, text);
    return (int)value;
}

static double parse_seconds(const char *name, const char *option, const char *text)
{
    char *end = NULL;
    double value = strtod(text, &end);
    if (end == text || *end || !isfinite(value) || value < 0)
        usage_error(name, "%s needs a number of seconds (0 or more), not \"%.32s\"", option, text);
    return value;
}

/* --bind-to: 1 for core, 0 for none (Open MPI's names; its other levels are not ours). */
static int parse_binding(const char *name, const char *text)
{
    if (strcmp(text, "core") == 0 || strcmp(text, "none") == 0)
        return text[0] == 'c';
    usage_error(name, "--bind-to must be none or core, not \"%.32s\"", text);
}

static void read_option(options_t *o, int c, const char *arg)
{
    const char *name = o->job.name;
    switch (c) {
    case 'n': o->job.npes = parse_int(name, "-n", arg); break;
    case 'm': o->module = arg; break;
    case OPT_MEM_SIZE: o->mem_size = arg; break;
    case OPT_TIMEOUT: o->job.timeout = parse_seconds(name, "--timeout", arg); break;
    case OPT_KILL_GRACE: o->job.kill_grace = parse_seconds(name, "--kill-grace", arg); break;
    case OPT_NO_PREFIX: o->job.prefix = 0; break;
    case OPT_BIND_TO: o->job.bind_core = parse_binding(name, arg); break;
    case OPT_NNODES: o->nnodes = parse_int(name, "--nnodes", arg); break;
    case OPT_NODE_RANK: o->node_rank = parse_int(name, "--node-rank", arg); break;
    case OPT_MASTER_ADDR:
    case OPT_MASTER_PORT:
    case OPT_JOIN_TIMEOUT: break; /* shmem-core's launcher reads them (several nodes only) */
    case 'h': usage(name); exit(0);
    case OPT_VERSION: {
        char version[ACLSHMEM_MAX_NAME_LEN];
        aclshmem_info_get_name(version);
        printf("%s (%s)\n", name, version);
        exit(0);
    }
    default: usage_error(name, "a wrong option (see above)"); /* getopt said which */
    }
}

static void check_options(options_t *o)
{
    const char *name = o->job.name;
    if (o->job.npes == NPES_UNSET)
        usage_error(name, "-n N is required: the number of PEs");
    if (o->job.npes < 1)
        usage_error(name, "-n must be at least 1");
    if (o->nnodes < 1)
        usage_error(name, "--nnodes must be at least 1");
    if (o->node_rank < 0 || o->node_rank >= o->nnodes)
        usage_error(name, "--node-rank must be in 0..%d (--nnodes %d), not %d", o->nnodes - 1, o->nnodes,
                    o->node_rank);
    if (!o->module && !o->job.command[0])
        usage_error(name, "name a program (prog) or a module (-m module)");
    if (o->mem_size) {
        uint64_t bytes;
        shmemi_size_status_t status = shmemi_parse_size(o->mem_size, &bytes);
        if (status != SHMEMI_SIZE_OK)
            usage_error(name, "--mem-size \"%.64s\" is %s", o->mem_size, shmemi_size_status_text(status));
    }
}

static void parse_command_line(options_t *o, int argc, char **argv)
{
    int c;
    argv[0] = (char *)o->job.name; /* getopt's messages name the launcher as it was called */
    opterr = 1;
    while ((c = getopt_long_only(argc, argv, "+n:m:h", long_options, NULL)) != -1)
        read_option(o, c, optarg);
    o->job.command = argv + optind;
    check_options(o);
}

/* ---- the job's environment --------------------------------------------------------------- */

static void to_hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static void set_default(const char *variable, const char *value)
{
    setenv(variable, value, 0);
}

/* A TCP port on loopback that was free a moment ago (torch's MASTER_PORT); 0 if none. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* SHMEM_JOB_SECRET for programs that initialise in DEFAULT mode (tcp://), unless set. */
static int set_job_secret(void)
{
    const char *own = getenv("SHMEM_JOB_SECRET");
    if (own && *own)
        return 0;
    unsigned char bytes[32];
    char hex[2 * sizeof bytes + 1];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes)
        return -1;
    to_hex(bytes, sizeof bytes, hex);
    return setenv("SHMEM_JOB_SECRET", hex, 1);
}

/* The variables every PE of this one-node job shares; 0, or 1 after saying why not. */
static int set_job_variables(const options_t *o)
{
    const oshrun_job_t *job = &o->job;
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    if (aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS) {
        oshrun_note(job, "cannot make the job's unique ID: %s", aclshmemx_get_last_error());
        return 1;
    }
    char hex[2 * sizeof uid + 1], text[32];
    to_hex((const unsigned char *)&uid, sizeof uid, hex);
    setenv("SHMEM_RUN_UID", hex, 1);
    snprintf(text, sizeof text, "%d", job->total_pes);
    setenv("SHMEM_RUN_NPES", text, 1);
    set_default("PYTHONUNBUFFERED", "1");
    if (set_job_secret() != 0) {
        oshrun_note(job, "cannot make a job secret: %s", strerror(errno));
        return 1;
    }
    if (o->mem_size) {
        uint64_t bytes = 0;
        shmemi_parse_size(o->mem_size, &bytes); /* checked with the command line */
        snprintf(text, sizeof text, "%llu", (unsigned long long)bytes);
        setenv("SHMEM_RUN_MEM_SIZE", text, 1);
    }
    if (!getenv("RANK")) { /* torch.distributed's env:// rendezvous, as torchrun sets it */
        set_default("MASTER_ADDR", "127.0.0.1");
        snprintf(text, sizeof text, "%d", free_port());
        set_default("MASTER_PORT", text);
    }
    return 0;
}

/* ---- several nodes: shmem-core's launcher -------------------------------------------------- */

/* Runs in the Python of $SHMEM_PYTHON (or python3) with our arguments (sys.argv[1:]). */
static const char python_launcher[] =
    "import sys\n"
    "try:\n"
    "    from shmem.run import oshrun_main\n"
    "except ImportError as exc:\n"
    "    sys.stderr.write(f'%s: --nnodes > 1: jobs on several nodes are started by shmem-core\\'s launcher, "
    "which {sys.executable} cannot import ({exc}): pip install shmem-core, or set SHMEM_PYTHON to a Python "
    "that has it\\n')\n"
    "    sys.exit(1)\n"
    "sys.exit(oshrun_main(prog='%s'))\n";

static int run_on_several_nodes(const options_t *o, int argc, char **argv)
{
    const char *python = getenv("SHMEM_PYTHON");
    if (!python || !*python)
        python = "python3";
    char code[sizeof python_launcher + 128];
    snprintf(code, sizeof code, python_launcher, o->job.name, o->job.name);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return 1;
    args[0] = (char *)python;
    args[1] = "-c";
    args[2] = code;
    memcpy(args + 3, argv + 1, sizeof *args * (size_t)(argc - 1));
    execvp(python, args);
    oshrun_note(&o->job,
                "--nnodes %d: jobs on several nodes are started by shmem-core's Python launcher, and %s "
                "cannot be run (%s): pip install shmem-core, or set SHMEM_PYTHON to a Python that has it",
                o->nnodes, python, strerror(errno));
    free(args);
    return 1;
}

/* ---- main -------------------------------------------------------------------------------- */

/* -m module: python3 -m module args... */
static char **module_command(const options_t *o)
{
    size_t n = 0;
    while (o->job.command[n])
        n++;
    char **command = calloc(n + 4, sizeof *command);
    if (!command)
        return NULL;
    const char *python = getenv("SHMEM_PYTHON");
    command[0] = (char *)(python && *python ? python : "python3");
    command[1] = "-m";
    command[2] = (char *)o->module;
    memcpy(command + 3, o->job.command, sizeof *command * n);
    return command;
}

int main(int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    options_t o = {
        .job = {.name = slash ? slash + 1 : argv[0], .npes = NPES_UNSET, .timeout = -1, .kill_grace = 3.0,
                .prefix = 1},
        .nnodes = 1,
    };
    parse_command_line(&o, argc, argv);
    if (o.nnodes > 1)
        return run_on_several_nodes(&o, argc, argv);
    o.job.total_pes = o.job.npes;
    char **owned = NULL;
    if (o.module && !(o.job.command = owned = module_command(&o)))
        return 1;
    int status = set_job_variables(&o) != 0 ? 1 : oshrun_run_pes(&o.job);
    free(owned);
    return status;
}
