"""``shmem-perf --scale``: how a job's start, end and synchronisation grow with its PE
count on this machine, libaclshmem beside Open MPI's OSHMEM in the same run.

One OpenSHMEM program (SCALE_SOURCE, written and built here) is built twice: with ``cc``
against the shmem.h of the libaclshmem this Python loads (linked as its ``oshcc`` links,
full RELRO), and with Open MPI's ``oshcc`` when Open MPI is installed (found by what
``oshcc --showme:version`` and ``oshrun --version`` say, shmem_tools._oshmem.find_openmpi:
libaclshmem installs an ``oshcc`` and an ``oshrun`` of its own).  For every PE count (2 to 64 by default) each library runs
one job per round, the two taking turns, so that both see the same machine load; the
tables give the median of the rounds.  Each job's PE 0 measures:

* ``init``: its time in ``shmem_init``;
* ``barrier_all``: the mean of ITERS ``shmem_barrier_all`` after a warm-up;
* ``put 8 B``: ``shmem_putmem`` of 8 bytes to PE N-1 + ``shmem_quiet``, while the other
  PEs wait in a barrier;
* ``all-reduce``: ``shmem_long_sum_reduce`` (OpenSHMEM 1.5) or ``shmem_long_sum_to_all``
  (1.4, Open MPI 4.1) of 8 longs over all PEs, when the library has reductions;
* ``finalize``: its time in ``shmem_finalize``.  PE 0 prints everything else before it:
  Open MPI 4.1.4's OSHMEM crashes after ``shmem_finalize`` (open-mpi/ompi#11604), and a
  job that ends so still counts.

libaclshmem's PEs are started by its C launcher ``aclshmemrun`` (the build tree's or the
installation's, beside the library) or, without one, by shmem-core's Python launcher;
OSHMEM's by ``oshrun --oversubscribe --mca spml ucx`` (``--allow-run-as-root`` as root).
Both are unbound (oshrun binds nothing when oversubscribed) and both get
SHMEM_SYMMETRIC_SIZE.  libaclshmem's control plane runs with TLS, its default;
``--no-tls`` turns the encryption off (aclshmemx_set_conf_store_tls(false); every
connection is still authenticated), which shows what TLS costs a job's start.
"""

import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

from . import _install, _oshmem
from ._internode import find_headers

DEFAULT_PES = (2, 4, 8, 16, 32, 64)
HEAP = "32M"
MEASURES = ("init", "finalize", "barrier", "put", "reduce")
# measure -> (title, unit, scale from seconds)
UNITS = {"init": ("init: PE 0's time in shmem_init", "ms", 1e3),
         "finalize": ("finalize: PE 0's time in shmem_finalize", "ms", 1e3),
         "barrier": ("barrier_all", "us", 1e6),
         "put": ("put: shmem_putmem of 8 bytes + shmem_quiet, PE 0 -> PE N-1", "us", 1e6),
         "reduce": ("all-reduce: sum of 8 longs over all PEs", "us", 1e6)}
# The goals of issue #26 on a 2-CPU machine: measure -> [(PE counts, text, met(ours, OSHMEM's))];
# a goal against OSHMEM has no verdict without it.
GOALS = {
    "init": [((8,), "<= 15 ms", lambda a, o: a <= 15.0), ((64,), "<= 200 ms", lambda a, o: a <= 200.0)],
    "finalize": [((64,), "<= 20 ms", lambda a, o: a <= 20.0)],
    "barrier": [((2, 4, 8, 16), "speed >= 1.0x OSHMEM", lambda a, o: None if o is None else a <= o)],
}

SCALE_SOURCE = r"""
/* The program of shmem-perf --scale (written and built by shmem-perf), one OpenSHMEM source
 * for every library.  usage: scale BARRIER_ITERS PUT_ITERS REDUCE_ITERS
 * PE 0 prints "@scale NAME SECONDS" lines and "@scale end" before shmem_finalize, then
 * "@scale finalize SECONDS". */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#ifdef SCALE_ACLSHMEM
#include <aclshmem.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NREDUCE 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long target[NREDUCE], source[NREDUCE], word;
#if defined(SCALE_REDUCE) && SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION < 105
static long work[NREDUCE + SHMEM_REDUCE_MIN_WRKDATA_SIZE], sync_a[SHMEM_REDUCE_SYNC_SIZE],
    sync_b[SHMEM_REDUCE_SYNC_SIZE];
#endif

static void reduce(long i, int n)
{
#if !defined(SCALE_REDUCE)
    (void)i, (void)n;
#elif SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
    (void)i, (void)n;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, target, source, NREDUCE);
#else
    /* Two pSync arrays used in turn: one may be reused only after a barrier. */
    shmem_long_sum_to_all(target, source, NREDUCE, 0, 0, n, work, i % 2 ? sync_b : sync_a);
#endif
}

int main(int argc, char **argv)
{
    long barrier_iters = argc > 1 ? atol(argv[1]) : 100, put_iters = argc > 2 ? atol(argv[2]) : 100,
         reduce_iters = argc > 3 ? atol(argv[3]) : 20;
#ifdef SCALE_ACLSHMEM
    if (getenv("SHMEM_PERF_SCALE_NO_TLS")) /* --no-tls: encryption off, authentication still on */
        aclshmemx_set_conf_store_tls(false, "", 0);
#endif
    double t = now();
    shmem_init();
    double init = now() - t;
    int me = shmem_my_pe(), n = shmem_n_pes();
#if defined(SCALE_REDUCE) && SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION < 105
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        sync_a[i] = sync_b[i] = SHMEM_SYNC_VALUE;
#endif
    for (int i = 0; i < NREDUCE; i++)
        source[i] = me + i;
    for (int i = 0; i < 10; i++)
        shmem_barrier_all();
    t = now();
    for (long i = 0; i < barrier_iters; i++)
        shmem_barrier_all();
    double barrier = (now() - t) / (double)barrier_iters;

    double put = 0;
    long value = 1;
    if (me == 0) {
        for (int i = 0; i < 10; i++) {
            shmem_putmem(&word, &value, sizeof value, n - 1);
            shmem_quiet();
        }
        t = now();
        for (long i = 0; i < put_iters; i++) {
            shmem_putmem(&word, &value, sizeof value, n - 1);
            shmem_quiet();
        }
        put = (now() - t) / (double)put_iters;
    }
    shmem_barrier_all();

    double reduced = 0;
#ifdef SCALE_REDUCE
    reduce(0, n);
    shmem_barrier_all();
    t = now();
    for (long i = 1; i <= reduce_iters; i++) {
        reduce(i, n);
        shmem_barrier_all(); /* the 1.4 form may reuse a pSync only after one; both pay it */
    }
    reduced = (now() - t) / (double)reduce_iters;
    long expect = (long)n * (n - 1) / 2;
    if (target[0] != expect) {
        printf("@scale error PE %d: the all-reduce gave %ld, not %ld\n", me, target[0], expect);
        fflush(stdout);
        return 1;
    }
#endif
    if (me == 0) {
        printf("@scale init %.9f\n@scale barrier %.9f\n@scale put %.9f\n", init, barrier, put);
#ifdef SCALE_REDUCE
        printf("@scale reduce %.9f\n", reduced);
#endif
        printf("@scale end\n");
        fflush(stdout);
    }
    t = now();
    shmem_finalize();
    if (me == 0) {
        printf("@scale finalize %.9f\n", now() - t);
        fflush(stdout);
    }
    return 0;
}
"""


class ScaleError(RuntimeError):
    pass


# ---------------------------------------------------------------------------
# The two libraries
# ---------------------------------------------------------------------------


def find_openmpi():
    """(oshcc, oshrun, version text) of Open MPI's OSHMEM, or None when it is not installed."""
    tools = _oshmem.find_openmpi()
    if tools is None:
        return None
    oshcc, oshrun = tools
    try:
        said = subprocess.run([oshcc, "--showme:version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        said = ""
    version = re.search(r"\d+\.\d+(\.\d+)?", said)
    return oshcc, oshrun, f"Open MPI {version.group(0)}" if version else "Open MPI"


def find_library():
    """(the libaclshmem file this Python loads, its name and version text)."""
    try:
        lib, runtime = _install.loaded_library()
    except RuntimeError as exc:
        raise ScaleError(str(exc)) from None
    return lib, runtime.get("name") or "libaclshmem"


def find_launcher(lib_file):
    """The command that starts libaclshmem's PEs: its C launcher beside the library (a build
    tree's programs/ folder, an installation's bin/), else shmem-core's Python launcher."""
    folder = os.path.dirname(os.path.realpath(lib_file))
    for candidate in (os.path.join(os.path.dirname(folder), "programs", "aclshmemrun"),
                      os.path.join(_install.root_of_library(lib_file), "bin", "aclshmemrun")):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and _oshmem.says([candidate, "--version"],
                                                                                          ("ACLSHMEM",)):
            return [candidate]
    return [sys.executable, "-c", "import sys; from shmem.run import oshrun_main; "
                                  "sys.exit(oshrun_main(sys.argv[1:], 'aclshmemrun'))"]


def _compile(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _build(commands_of, workdir, name):
    """Builds SCALE_SOURCE with the reductions, or without them when the library has none;
    returns (executable, has_reduce)."""
    src = os.path.join(workdir, "scale.c")
    with open(src, "w", encoding="utf-8") as f:
        f.write(SCALE_SOURCE)
    exe = os.path.join(workdir, f"scale_{name}")
    done = _compile(commands_of(src, exe, ["-DSCALE_REDUCE"]))
    if done.returncode == 0:
        return exe, True
    cmd = commands_of(src, exe, [])
    again = _compile(cmd)
    if again.returncode != 0:
        raise ScaleError(f"cannot build the {name} program ({shlex.join(cmd)}):\n{again.stdout}")
    return exe, False


def build_aclshmem(lib_file, workdir):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise ScaleError("no C compiler (cc): the benchmark is a C program built on the fly")
    include = find_headers(lib_file)
    libdir = os.path.dirname(lib_file)

    def commands(src, exe, extra):
        return [cc, "-std=c11", "-O2", "-DSCALE_ACLSHMEM", *extra, src, "-o", exe, f"-I{include}", f"-L{libdir}",
                f"-l:{os.path.basename(lib_file)}", f"-Wl,-rpath,{libdir}", "-Wl,-z,relro", "-Wl,-z,now"]

    return _build(commands, workdir, "aclshmem")


def build_oshmem(oshcc, workdir):
    return _build(lambda src, exe, extra: [oshcc, "-std=c11", "-O2", *extra, src, "-o", exe], workdir, "oshmem")


# ---------------------------------------------------------------------------
# Running one job
# ---------------------------------------------------------------------------


def parse(text):
    """{measure: seconds} of what PE 0 printed, and whether it got to "@scale end"."""
    values, ended = {}, False
    for line in text.splitlines():
        at = line.find("@scale ")
        if at < 0:
            continue
        parts = line[at:].split()
        if parts[1:2] == ["end"]:
            ended = True
        elif parts[1:2] == ["error"]:
            raise ScaleError(" ".join(parts[2:]))
        elif len(parts) == 3 and parts[1] in MEASURES:
            try:
                values[parts[1]] = float(parts[2])
            except ValueError:
                pass
    return values, ended


def iterations(n, quick):
    """(barrier, put, reduce) iterations for n PEs: fewer as the PEs share fewer CPUs."""
    if quick:
        return 20, 20, 5
    return max(50, 4000 // n), 1000, max(10, 400 // n)


def run_job(cmd, timeout, env, what):
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ScaleError(f"{what} did not finish within {timeout:g} s: {shlex.join(cmd)}") from None
    values, ended = parse(done.stdout)
    if not ended:
        tail = "\n".join(done.stdout.splitlines()[-15:])
        raise ScaleError(f"{what} failed (exit status {done.returncode}): {shlex.join(cmd)}\n{tail}")
    return values


def run_aclshmem(launcher, exe, n, args, timeout, tls=True):
    env = dict(os.environ, SHMEM_SYMMETRIC_SIZE=HEAP)
    env.pop("SHMEM_PERF_SCALE_NO_TLS", None)
    if not tls:
        env["SHMEM_PERF_SCALE_NO_TLS"] = "1"
    for key in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "RANK", "WORLD_SIZE"):
        env.pop(key, None)
    return run_job([*launcher, "-np", str(n), exe, *args], timeout, env, f"libaclshmem on {n} PEs")


def run_oshmem(oshrun, exe, n, args, timeout):
    cmd = [oshrun, "-np", str(n), "--oversubscribe", "--mca", "spml", "ucx", "-x", f"SHMEM_SYMMETRIC_SIZE={HEAP}"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return run_job([*cmd, exe, *args], timeout, dict(os.environ), f"OSHMEM on {n} PEs")


# ---------------------------------------------------------------------------
# The run and its tables
# ---------------------------------------------------------------------------


def run(pes, rounds, quick, timeout, progress=None, oshmem=True, tls=True):
    """Runs every PE count with both libraries, alternating, rounds times; returns a dict."""
    lib, name = find_library()
    openmpi = find_openmpi() if oshmem else None
    launcher = find_launcher(lib)
    jobs = {"libaclshmem": {}, "OSHMEM": {}}
    with tempfile.TemporaryDirectory(prefix="shmem-perf-scale-") as workdir:
        ours, ours_reduce = build_aclshmem(lib, workdir)
        theirs, theirs_reduce = build_oshmem(openmpi[0], workdir) if openmpi else (None, False)
        for rnd in range(rounds):
            for n in pes:
                args = [str(i) for i in iterations(n, quick)]
                if progress:
                    progress.advance(f"round {rnd + 1}: libaclshmem on {n} PEs")
                jobs["libaclshmem"].setdefault(n, []).append(run_aclshmem(launcher, ours, n, args, timeout, tls))
                if theirs:
                    if progress:
                        progress.advance(f"round {rnd + 1}: OSHMEM on {n} PEs")
                    jobs["OSHMEM"].setdefault(n, []).append(run_oshmem(openmpi[1], theirs, n, args, timeout))
    notes = []
    if not ours_reduce:
        notes.append("all-reduce: the shmem.h of this libaclshmem has no reductions (shmem_long_sum_reduce)")
    if theirs and not theirs_reduce:
        notes.append("all-reduce: Open MPI's shmem.h has no shmem_long_sum_to_all")
    if theirs and not any(job.get("finalize") for by_n in jobs["OSHMEM"].values() for job in by_n):
        notes.append("OSHMEM's finalize is not measured: its PE 0 never returned from shmem_finalize (Open MPI "
                     "4.1.4 crashes there, open-mpi/ompi#11604; its other numbers were printed before)")
    if oshmem and not openmpi:
        notes.append("Open MPI's OSHMEM is not installed (oshcc, oshrun): libaclshmem alone; on Debian or "
                     "Ubuntu: apt-get install openmpi-bin libopenmpi-dev")
    return {"library": name, "library_file": lib, "launcher": launcher[0] if len(launcher) == 1 else "shmem.run",
            "oshmem": openmpi[2] if openmpi else None, "pes": list(pes), "rounds": rounds, "jobs": jobs,
            "notes": notes, "cpus": os.cpu_count(), "tls": tls}


def median(result, library, n, measure):
    """The median over the rounds of one measure, in its display unit; None if never measured."""
    values = [job[measure] for job in result["jobs"][library].get(n, []) if job.get(measure) is not None]
    return statistics.median(values) * UNITS[measure][2] if values else None


def goal_of(measure, n):
    for counts, text, met in GOALS.get(measure, []):
        if n in counts:
            return text, met
    return None, None


def rows(result, measure):
    """[(PEs, ours, OSHMEM, ratio ours/OSHMEM, goal text, met)] of one measure."""
    out = []
    for n in result["pes"]:
        ours = median(result, "libaclshmem", n, measure)
        theirs = median(result, "OSHMEM", n, measure)
        ratio = ours / theirs if ours is not None and theirs else None
        text, met = goal_of(measure, n)
        verdict = None if text is None or ours is None else met(ours, theirs)
        out.append((n, ours, theirs, ratio, text, verdict))
    return out


def steps(pes, rounds, oshmem):
    return len(pes) * rounds * (2 if oshmem else 1)


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def _cell(value, unit):
    if value is None:
        return "-"
    return f"{value:.1f}" if unit == "ms" or value >= 100 else f"{value:.2f}"


def render_tables(result):
    """The tables as text: one per measure, a row per PE count."""
    from ._table import render

    out = []
    for measure in MEASURES:
        title, unit, _ = UNITS[measure]
        table = rows(result, measure)
        if all(r[1] is None for r in table):
            continue
        cells = [[str(n), _cell(ours, unit), _cell(theirs, unit), f"{ratio:.2f}x" if ratio else "-", text or "",
                  "" if met is None else ("yes" if met else "NO")]
                 for n, ours, theirs, ratio, text, met in table]
        out.append(f"# {title} ({unit}, median of {result['rounds']} round(s))\n"
                   + render(["PEs", "libaclshmem", "OSHMEM", "ours/OSHMEM", "goal", "met"], cells))
    return "\n\n".join(out)


def to_records(result):
    """Every row of every table as a dict (for CSV and JSON)."""
    records = []
    for measure in MEASURES:
        _, unit, _ = UNITS[measure]
        for n, ours, theirs, ratio, text, met in rows(result, measure):
            records.append({"table": measure, "pes": n, "library": ours, "oshmem": theirs, "ratio": ratio,
                            "unit": unit, "goal": text, "met": met})
    return records


def to_csv(records):
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["table", "pes", "libaclshmem", "oshmem", "ratio", "unit", "goal", "met"])
    for r in records:
        number = (lambda v, digits: "" if v is None else f"{v:.{digits}g}")
        w.writerow([r["table"], r["pes"], number(r["library"], 6), number(r["oshmem"], 6), number(r["ratio"], 4),
                    r["unit"], r["goal"] or "", "" if r["met"] is None else int(r["met"])])
    return buf.getvalue()


def parse_pes(text):
    """"2,4,8" -> [2, 4, 8]: PE counts of at least 2, each once, in order; "" -> DEFAULT_PES."""
    if not text:
        return list(DEFAULT_PES)
    try:
        pes = sorted({int(t) for t in text.split(",") if t.strip()})
    except ValueError:
        raise ValueError(f"--scale takes PE counts separated by commas, such as 2,4,8: {text!r}") from None
    if not pes or pes[0] < 2:
        raise ValueError(f"--scale: every PE count must be at least 2 (the put goes to another PE): {text!r}")
    return pes


def main_scale(ns, parser, version):
    """``shmem-perf --scale [PES]``."""
    import json
    import platform
    import time

    from ._progress import Progress
    from ._table import write as _write

    try:
        pes = parse_pes(ns.scale)
    except ValueError as exc:
        parser.error(str(exc))
    given = [flag for flag, value in (("--pes", ns.pes), ("--tests", ns.tests), ("--min-size", ns.min_size),
                                      ("--max-size", ns.max_size), ("--max-latency-size", ns.max_latency_size),
                                      ("--time-per-point", ns.time_per_point), ("--ucx-perftest", ns.ucx_perftest))
             if value is not None]
    if given:
        parser.error(f"--scale measures init, finalize, barrier_all, an 8-byte put and a small all-reduce at each "
                     f"PE count: {', '.join(given)} do{'es' if len(given) == 1 else ''} not apply")
    if ns.rounds is not None and ns.rounds < 1:
        parser.error("--rounds must be at least 1")
    if ns.csv == "-" and ns.json == "-":
        parser.error("--csv and --json cannot both go to stdout")
    if ns.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib: pip install 'shmem-tools[plot]' (or pip install matplotlib)")
    rounds = ns.rounds or (1 if ns.quick else 3)
    oshmem = not ns.no_oshmem
    progress = Progress(steps(pes, rounds, oshmem and find_openmpi() is not None), enabled=not ns.no_progress)
    started = time.monotonic()
    try:
        result = run(pes, rounds, ns.quick, ns.timeout, progress, oshmem=oshmem, tls=not ns.no_tls)
    except ScaleError as exc:
        progress.close()
        sys.stderr.write(f"shmem-perf: error: {exc}\n")
        return 1
    progress.close()
    seconds = round(time.monotonic() - started, 2)
    records = to_records(result)
    if ns.csv:
        _write(ns.csv, to_csv(records))
    if ns.json:
        meta = {k: result[k] for k in ("library", "library_file", "launcher", "oshmem", "pes", "rounds", "tls")}
        meta.update(quick=ns.quick, tools_version=version, cpus=os.cpu_count(), machine=platform.machine(),
                    seconds=seconds, date=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        doc = {"meta": meta, "ratio": "ours / OSHMEM: below 1 libaclshmem takes less time", "tables": records,
               "jobs": {lib: {str(n): jobs for n, jobs in by_n.items()} for lib, by_n in result["jobs"].items()},
               "notes": result["notes"]}
        _write(ns.json, json.dumps(doc, indent=2) + "\n")
    if "-" not in (ns.csv, ns.json):
        against = f"against {result['oshmem']}'s OSHMEM" if result["oshmem"] else "alone"
        tls = "control plane with TLS" if result["tls"] else "control plane unencrypted: --no-tls"
        sys.stdout.write(f"shmem-perf --scale: {result['library']} ({tls}) {against}, {os.cpu_count()} CPUs, "
                         "PEs unbound, "
                         f"{HEAP} heaps; median of {rounds} alternating round(s){', quick run' if ns.quick else ''}; "
                         "ours/OSHMEM below 1.00x: libaclshmem takes less time\n\n")
        sys.stdout.write(render_tables(result) + "\n\n")
        for note in result["notes"]:
            sys.stdout.write(f"note: {note}\n")
        sys.stdout.write(f"total time {seconds:.1f} s\n")
        sys.stdout.flush()
    if ns.plot:
        from ._plot import plot_scale

        try:
            plot_scale(result, ns.plot, MEASURES, UNITS, median)
            sys.stderr.write(f"shmem-perf: plot written to {ns.plot}\n")
        except Exception as exc:
            sys.stderr.write(f"shmem-perf: cannot draw the plot: {exc}\n")
            return 1
    return 0
