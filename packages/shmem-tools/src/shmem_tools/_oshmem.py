"""libaclshmem against Open MPI's OSHMEM, side by side in one run (``shmem-perf --oshmem``).

oshmem_bench.c (beside this file) is written against the OpenSHMEM API.  This module builds
it twice - with Open MPI's ``oshcc`` for OSHMEM, and with ``cc`` against libaclshmem's own
``shmem.h`` (its OpenSHMEM 1.5 API) - runs both with 2 PEs (``--npes``) in alternating rounds
(so that both see the same machine load), takes the median of the rounds and prints, for
every measure, both numbers, their ratio and the goal of issues #17 and #25:

* every latency of libaclshmem <= OSHMEM's (ratio <= 1.00), the collectives' (broadcast,
  collect, fcollect, reduce, alltoall, 8 B .. 1 MiB per PE) included,
* every bandwidth of libaclshmem >= 0.95 x OSHMEM's, 8 B .. 16 MiB,
* the message rate of small puts (``put_mr``, 1 B .. 32 KiB) >= OSHMEM's (ratio >= 1.00), and
  the atomics' latencies (``amo_*``) <= OSHMEM's, the PEs in pairs as in the OSU OpenSHMEM
  benchmarks,
* a put to a PE asleep in wait_until costs <= 1.5 x a put to a PE spinning in user code,
* the reduce (an all-reduce, ``shmem_long_sum_to_all``) of libaclshmem within 1.5 x the
  floor: the time every PE takes, all at once, to memcpy the 2 (PEs - 1) / PEs x size bytes
  an all-reduce must move and add per PE (oshmem_bench.c's ``floor``, measured in every round of
  both programs), in a second table, with OSHMEM's reduce against the floor beside it.

It is a benchmark, not a test: it never fails because of a number (``--check`` makes the
exit status 3 when a goal is missed, for whoever wants that).

    shmem-perf --oshmem                   # the libaclshmem this Python loads
    shmem-perf --oshmem bcast,reduce --pes 4 --rounds 5

and from a checkout of the repository, with Python's standard library alone (this module
imports nothing else at the top; ``shmem-perf --oshmem`` adds the library's discovery):

    python3 benchmarks/oshmem_compare.py --build-dir /tmp/bld
    python3 benchmarks/oshmem_compare.py --library /path/libaclshmem.so --include /path/include
    python3 benchmarks/oshmem_compare.py             # libaclshmem from pkg-config (aclshmem)
    python3 benchmarks/oshmem_compare.py --install   # apt-get Open MPI first (as root)
    python3 benchmarks/oshmem_compare.py --npes 4 --tests barrier,bcast,collect,fcollect,reduce,alltoall

Launching.  OSHMEM's PEs are started by ``oshrun -np 2`` (with ``--allow-run-as-root`` when
run as root, ``--oversubscribe`` so that a 1-core machine works, and the UCX spml, the only
one Open MPI 4.1 ships).  libaclshmem's PEs are started here the way ``python -m shmem.run``
starts them: this module makes the job's unique ID (aclshmemx_get_uniqueid, through ctypes,
so nothing beyond the Python standard library is needed) and starts the program twice with
SHMEM_RUN_UID / SHMEM_RUN_PE / SHMEM_RUN_NPES, which libaclshmem's shmem_init reads (as
``oshrun`` sets them).

Binding.  oshrun binds PE i to core i by default.  ``--bind core`` (the default) gives
libaclshmem's PEs the same: PE i on the i-th CPU this process may use.  ``--bind none``
runs both libraries unbound (oshrun ``--bind-to none``).
"""

import argparse
import ctypes
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("oshmem_bench.c")
UID_SIZE = 136
APT_PACKAGES = ("openmpi-bin", "libopenmpi-dev")

LATENCIES = ("put_lat_barrier", "put_lat_asleep", "put_lat_spin", "p_lat", "put_lat_static", "put_lat_ctx",
             "get_lat", "g_lat", "pingpong", "pingpong_ptr", "barrier",
             "amo_fetch_add", "amo_fetch_inc", "amo_add", "amo_inc", "amo_compare_swap", "amo_swap", "amo_fetch",
             "amo_set", "bcast", "collect", "fcollect", "reduce", "alltoall")
# Measures shown for reference, with no goal: what the hardware allows on each library's memory.
REFERENCES = ("pingpong_ptr",)
# bench's memcpy of what an all-reduce moves: no library call, so not compared; the floor of reduce.
FLOOR = "floor"
FLOOR_GOAL = 1.5      # reduce of libaclshmem / the floor, at most
BANDWIDTHS = ("put_bw", "put_nbi_bw", "get_bw")
RATES = ("put_mr",)   # messages per second: higher is better, as a bandwidth
# The table's order (bench's): point to point, then the pairs' rate and atomics, then the collectives.
_FIRST_AMO = LATENCIES.index("amo_fetch_add")
ORDER = LATENCIES[:_FIRST_AMO] + BANDWIDTHS + RATES + LATENCIES[_FIRST_AMO:]
LATENCY_GOAL = 1.00   # libaclshmem / OSHMEM, at most
BANDWIDTH_GOAL = 0.95  # libaclshmem / OSHMEM, at least
RATE_GOAL = 1.00      # libaclshmem / OSHMEM, at least
ASLEEP_GOAL = 1.5     # put_lat_asleep / put_lat_spin of libaclshmem, at most

DESCRIPTIONS = {
    "put_lat_barrier": "putmem 8 B + quiet, target in barrier",
    "put_lat_asleep": "putmem 8 B + quiet, target asleep in wait_until",
    "put_lat_spin": "putmem 8 B + quiet, target spinning in user code",
    "p_lat": "long_p + quiet",
    "put_lat_static": "putmem 8 B + quiet into a static array",
    "put_lat_ctx": "ctx_putmem 8 B + ctx_quiet, private context",
    "get_lat": "getmem 8 B",
    "g_lat": "long_g",
    "pingpong": "long_p / wait_until, half round trip",
    "pingpong_ptr": "the same through shmem_ptr, no library call (reference)",
    "barrier": "barrier_all",
    "put_bw": "putmem stream, quiet every 64",
    "put_nbi_bw": "putmem_nbi stream, quiet every 64",
    "get_bw": "getmem stream",
    "put_mr": "putmem stream of every pair, quiet every 64",
    "amo_fetch_add": "long_atomic_fetch_add on the partner",
    "amo_fetch_inc": "long_atomic_fetch_inc on the partner",
    "amo_add": "long_atomic_add on the partner",
    "amo_inc": "long_atomic_inc on the partner",
    "amo_compare_swap": "long_atomic_compare_swap on the partner",
    "amo_swap": "long_atomic_swap on the partner",
    "amo_fetch": "long_atomic_fetch on the partner",
    "amo_set": "long_atomic_set on the partner",
    "bcast": "broadcast64 from PE 0, per call",
    "collect": "collect64, per call",
    "fcollect": "fcollect64, per call",
    "reduce": "long_sum_to_all, per call",
    "alltoall": "alltoall64, per call",
}


class Failure(Exception):
    """Something that stops the comparison, with a message for the user."""


# ---- Open MPI ---------------------------------------------------------------------------

def says(cmd, words):
    """Whether cmd's output holds one of words (how a tool tells which implementation it is)."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return any(w in done.stdout + done.stderr for w in words)


def _openmpi_tool(name, identify, words):
    """The first `name` on PATH, or in /usr/bin, whose answer to `identify` holds one of
    words: Open MPI's, never another implementation's tool of that name (libaclshmem
    installs oshcc and oshrun too)."""
    for path in dict.fromkeys(p for p in (shutil.which(name), f"/usr/bin/{name}") if p and os.path.exists(p)):
        if says([path, identify], words):
            return path
    return None


def find_openmpi():
    """(oshcc, oshrun) paths of Open MPI's OSHMEM, or None when it is not installed (also
    what shmem-perf --scale runs beside libaclshmem)."""
    oshcc = _openmpi_tool("oshcc", "--showme:version", ("Open SHMEM", "Open MPI"))
    oshrun = _openmpi_tool("oshrun", "--version", ("Open MPI", "OpenRTE", "open-mpi.org"))
    return (oshcc, oshrun) if oshcc and oshrun else None


def install_hint(with_option=False):
    """How to install Open MPI; with_option: the --install option of this command too."""
    return ("Open MPI's OSHMEM (oshcc, oshrun) is not installed.  On Debian or Ubuntu:\n"
            f"    sudo apt-get update && sudo apt-get install -y {' '.join(APT_PACKAGES)}\n" +
            ("or run this command with --install as root." if with_option else "and run this command again."))


def install_openmpi():
    if os.geteuid() != 0:
        raise Failure("--install runs apt-get and needs root; run it as root, or install by hand:\n" + install_hint())
    if not shutil.which("apt-get"):
        raise Failure("--install knows only apt-get (Debian, Ubuntu); install Open MPI with its OSHMEM by hand")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", *APT_PACKAGES]):
        print("+", shlex.join(cmd), file=sys.stderr)
        if subprocess.run(cmd, env=env).returncode != 0:
            raise Failure(f"{shlex.join(cmd)} failed")


def openmpi_version(oshrun):
    try:
        out = subprocess.run([oshrun, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.splitlines()[0].strip() if out else "unknown"


# ---- libaclshmem ------------------------------------------------------------------------

class Aclshmem:
    """Where libaclshmem is: the shared library, and the compiler flags to build against it."""

    def __init__(self, library, cflags, ldflags, origin):
        self.library = Path(library)
        self.cflags = cflags
        self.ldflags = ldflags
        self.origin = origin


def _headers(library, include):
    """The folder of libaclshmem's shmem.h: include, else an include/ beside one of the
    library's parent folders (an installation: PREFIX/lib[/ARCH]/libaclshmem.so)."""
    if include:
        if not (Path(include) / "shmem.h").is_file():
            raise Failure(f"--include {include}: no shmem.h there")
        return Path(include)
    for parent in list(library.parents)[:3]:
        if (parent / "include" / "shmem.h").is_file():
            return parent / "include"
    raise Failure(f"no shmem.h of {library} in an include/ folder above it: pass --include DIR, the folder of "
                  "libaclshmem's shmem.h")


def _from_library(path, origin, include=None):
    path = Path(path).resolve()
    if not path.is_file():
        raise Failure(f"{origin}: {path} is not a file")
    cflags = [f"-I{_headers(path, include)}"]
    return Aclshmem(path, cflags, [str(path), f"-Wl,-rpath,{path.parent}"], f"{origin} ({path})")


def _from_build_dir(build_dir, include):
    build_dir = Path(build_dir).resolve()
    for candidate in (build_dir / "packages/shmem-native/src/libaclshmem.so", build_dir / "src/libaclshmem.so"):
        if candidate.is_file():
            return _from_library(candidate, "--build-dir", include)
    raise Failure(f"--build-dir {build_dir}: no libaclshmem.so in packages/shmem-native/src/ or src/ "
                  f"(build it: meson setup {build_dir} <repo> -Dbuildtype=release && ninja -C {build_dir})")


def _from_pkg_config():
    if not shutil.which("pkg-config"):
        return None
    probe = subprocess.run(["pkg-config", "--exists", "aclshmem"])
    if probe.returncode != 0:
        return None
    cflags = shlex.split(subprocess.run(["pkg-config", "--cflags", "aclshmem"], capture_output=True,
                                        text=True, check=True).stdout)
    libs = shlex.split(subprocess.run(["pkg-config", "--libs", "aclshmem"], capture_output=True,
                                      text=True, check=True).stdout)
    lib_dirs = [flag[2:] for flag in libs if flag.startswith("-L")]
    library = next((Path(d) / "libaclshmem.so" for d in lib_dirs if (Path(d) / "libaclshmem.so").is_file()), None)
    if library is None:
        raise Failure("pkg-config aclshmem names no directory holding libaclshmem.so (-L...)")
    rpaths = [f"-Wl,-rpath,{d}" for d in lib_dirs]
    return Aclshmem(library.resolve(), cflags, libs + rpaths, f"pkg-config aclshmem ({library.resolve()})")


def find_aclshmem(args):
    if args.library:
        return _from_library(args.library, "--library", args.include)
    if args.build_dir:
        return _from_build_dir(args.build_dir, args.include)
    if os.environ.get("ACLSHMEM_LIBRARY"):
        return _from_library(os.environ["ACLSHMEM_LIBRARY"], "ACLSHMEM_LIBRARY", args.include)
    found = _from_pkg_config()
    if found is None:
        raise Failure("libaclshmem not found: pass --build-dir DIR (a meson build of this repository) or "
                      "--library PATH, set ACLSHMEM_LIBRARY, or make pkg-config find aclshmem "
                      "(PKG_CONFIG_PATH=DIR/meson-uninstalled for a build directory)")
    return found


# ---- building ---------------------------------------------------------------------------

def compile_both(workdir, oshcc, acl, cc):
    source = SOURCE
    oshmem_bin = workdir / "bench_oshmem"
    acl_bin = workdir / "bench_aclshmem"
    commands = [
        [oshcc, "-O2", "-std=c11", str(source), "-o", str(oshmem_bin)],
        [cc, "-O2", "-std=c11", *acl.cflags, str(source), "-o", str(acl_bin), *acl.ldflags],
    ]
    for cmd in commands:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise Failure(f"building failed: {shlex.join(cmd)}\n{done.stdout}{done.stderr}")
    return oshmem_bin, acl_bin


# ---- running ----------------------------------------------------------------------------

def parse_output(text):
    """{(metric, size): value} from bench's stdout; None unless it reached "# end"."""
    values = {}
    ended = False
    for line in text.splitlines():
        if line.strip() == "# end":
            ended = True
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) == 4:
            try:
                values[(parts[0], int(parts[1]))] = float(parts[2])
            except ValueError:
                pass
    return values if ended else None


def heap_size(max_size):
    """The symmetric heap each PE needs: bench allocates two buffers of max_size and two reduce
    work arrays of max_size / 2, plus room."""
    return 3 * max_size + (64 << 20)


def run_oshmem(binary, oshrun, bench_args, args):
    cmd = [oshrun, "-np", str(args.npes), "--oversubscribe", "--bind-to", args.bind, "--mca", "spml", "ucx",
           "-x", f"SHMEM_SYMMETRIC_SIZE={heap_size(args.max_size)}"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [*args.oshrun_arg, str(binary), *bench_args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    values = parse_output(done.stdout)
    if values is None:
        raise Failure(f"OSHMEM run failed (status {done.returncode}): {shlex.join(cmd)}\n{done.stdout}{done.stderr}")
    # Open MPI 4.1.4/4.1.5 crash in their exit handler after shmem_finalize (open-mpi/ompi#11604,
    # fixed in 4.1.6): every number was printed by then ("# end"), so the run counts.
    return values, done.returncode != 0


def make_uid(library):
    lib = ctypes.CDLL(str(library))
    uid = ctypes.create_string_buffer(UID_SIZE)
    if lib.aclshmemx_get_uniqueid(uid) != 0:
        raise Failure("aclshmemx_get_uniqueid failed")
    return lib, uid.raw.hex()  # the library stays loaded: it holds the reserved port until PE 0 binds it


def cpus_for_pes(npes):
    cpus = sorted(os.sched_getaffinity(0))
    return [cpus[pe % len(cpus)] for pe in range(npes)]


def run_aclshmem(binary, acl, bench_args, args):
    _lib, uid = make_uid(acl.library)
    env = dict(os.environ, SHMEM_RUN_UID=uid, SHMEM_RUN_NPES=str(args.npes),
               SHMEM_RUN_MEM_SIZE=str(heap_size(args.max_size)))
    cpus = cpus_for_pes(args.npes)
    procs = []
    try:
        for pe in range(args.npes):
            pin = (lambda cpu=cpus[pe]: os.sched_setaffinity(0, {cpu})) if args.bind == "core" else None
            procs.append(subprocess.Popen([str(binary), *bench_args], env=dict(env, SHMEM_RUN_PE=str(pe)),
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          preexec_fn=pin))
        outputs = [p.communicate(timeout=args.timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    values = parse_output(outputs[0][0])
    statuses = [p.returncode for p in procs]
    if values is None or any(statuses):
        detail = "".join(f"[PE {pe}] {out}{err}" for pe, (out, err) in enumerate(outputs))
        raise Failure(f"libaclshmem run failed (statuses {statuses}): {binary} {shlex.join(bench_args)}\n{detail}")
    return values


# ---- the table --------------------------------------------------------------------------

def size_text(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def median_of(rounds, key):
    vals = [r[key] for r in rounds if key in r]
    return statistics.median(vals) if vals else None


def best_of(rounds, key):
    """The best round: the highest bandwidth, the lowest latency.  Interference from other
    work only ever slows a run down, so on a busy machine the best round tells what the
    library can do, where the median tells what it did."""
    vals = [r[key] for r in rounds if key in r]
    if not vals:
        return None
    return max(vals) if key[0] in BANDWIDTHS + RATES else min(vals)


def comparison_rows(acl_rounds, osh_rounds):
    """[(label, size_text, acl, osh, unit, ratio, best_ratio, goal_text, met)] for every measure both
    ran: medians of the rounds, their ratio, the ratio of the best rounds, and the goal on the
    medians' ratio."""
    rows = []
    keys = sorted({k for r in acl_rounds for k in r if k[0] != FLOOR} & {k for r in osh_rounds for k in r},
                  key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99,
                                 k[1]))
    for key in keys:
        metric, size = key
        acl, osh = median_of(acl_rounds, key), median_of(osh_rounds, key)
        ratio = acl / osh if osh else float("inf")
        best_osh = best_of(osh_rounds, key)
        best = best_of(acl_rounds, key) / best_osh if best_osh else float("inf")
        if metric in REFERENCES:
            rows.append((metric, size_text(size), acl, osh, "us", ratio, best, "-", None))
        elif metric in BANDWIDTHS:
            rows.append((metric, size_text(size), acl, osh, "GB/s", ratio, best, f">= {BANDWIDTH_GOAL:.2f}",
                         ratio >= BANDWIDTH_GOAL))
        elif metric in RATES:
            rows.append((metric, size_text(size), acl, osh, "Mmsg/s", ratio, best, f">= {RATE_GOAL:.2f}",
                         ratio >= RATE_GOAL))
        else:
            rows.append((metric, "" if metric == "barrier" else size_text(size), acl, osh, "us", ratio, best,
                         f"<= {LATENCY_GOAL:.2f}", ratio <= LATENCY_GOAL))
    return rows


def asleep_row(acl_rounds, osh_rounds):
    key_asleep, key_spin = ("put_lat_asleep", 8), ("put_lat_spin", 8)
    acl_a, acl_s = median_of(acl_rounds, key_asleep), median_of(acl_rounds, key_spin)
    osh_a, osh_s = median_of(osh_rounds, key_asleep), median_of(osh_rounds, key_spin)
    if None in (acl_a, acl_s):
        return None
    acl_ratio = acl_a / acl_s
    osh_ratio = osh_a / osh_s if None not in (osh_a, osh_s) else None
    return acl_ratio, osh_ratio, acl_ratio <= ASLEEP_GOAL


def floor_rows(acl_rounds, osh_rounds):
    """[(size_text, floor, acl, acl / floor, goal_text, met, osh / floor)] for every size of
    reduce with a floor: the floor is the median over the rounds of both programs (the same
    memcpy, with no library call), the reduces the medians of each library's rounds."""
    rows = []
    sizes = sorted({size for r in acl_rounds for metric, size in r if metric == FLOOR})
    for size in sizes:
        floor = median_of(acl_rounds + osh_rounds, (FLOOR, size))
        acl, osh = median_of(acl_rounds, ("reduce", size)), median_of(osh_rounds, ("reduce", size))
        if acl is None or not floor:
            continue
        ratio = acl / floor
        rows.append((size_text(size), floor, acl, ratio, f"<= {FLOOR_GOAL:.2f}", ratio <= FLOOR_GOAL,
                     None if osh is None else osh / floor))
    return rows


def number(value):
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def met_text(ok):
    return "-" if ok is None else "yes" if ok else "NO"


def render(rows, asleep):
    header = ("measure", "size", "libaclshmem", "OSHMEM", "unit", "ratio", "best", "goal", "met?")
    body = [(m, s, number(a), number(o), u, f"{r:.2f}", f"{b:.2f}", g, met_text(ok))
            for m, s, a, o, u, r, b, g, ok in rows]
    if asleep:
        acl_ratio, osh_ratio, ok = asleep
        body.append(("asleep / spin", "8 B", f"{acl_ratio:.2f}", "-" if osh_ratio is None else f"{osh_ratio:.2f}",
                     "x", f"{acl_ratio:.2f}", "", f"<= {ASLEEP_GOAL:.2f}", met_text(ok)))
    return aligned(header, body, right={2, 3, 5, 6})


def render_floor(rows):
    header = ("reduce", "size", "floor us", "libaclshmem us", "/ floor", "goal", "met?", "OSHMEM / floor")
    body = [("long_sum_to_all", s, number(f), number(a), f"{r:.2f}", g, met_text(ok),
             "-" if o is None else f"{o:.2f}")
            for s, f, a, r, g, ok, o in rows]
    return aligned(header, body, right={2, 3, 4, 7})


def aligned(header, body, right):
    """The rows as text columns, the ones in right aligned right, a rule under the header."""
    widths = [max(len(str(row[i])) for row in [header] + body) for i in range(len(header))]
    lines = []
    for n, row in enumerate([header] + body):
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ---- main -------------------------------------------------------------------------------

def parse_args(argv, prog=None):
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_argument_group("libaclshmem (default: ACLSHMEM_LIBRARY, else pkg-config aclshmem)")
    where.add_argument("--build-dir", help="a meson build directory of this repository")
    where.add_argument("--library", help="the libaclshmem.so to use")
    where.add_argument("--include", help="the folder of its shmem.h (default: an include/ folder above the library)")
    p.add_argument("--install", action="store_true", help=f"apt-get install {' '.join(APT_PACKAGES)} if missing (root)")
    p.add_argument("--npes", type=int, default=2, help="PEs of each run (default 2; the collectives use them all)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of both libraries (default 3)")
    p.add_argument("--reps", type=int, default=7, help="repetitions per point inside one run; bench's median (default 7)")
    p.add_argument("--ms", type=float, default=20, help="milliseconds per repetition (default 20)")
    p.add_argument("--max-size", type=int, default=16 << 20, help="largest message in bytes (default 16 MiB)")
    p.add_argument("--tests", help="only these tests, comma-separated (bench's names: " +
                   ", ".join(ORDER + (FLOOR,)) + "; reduce brings floor)")
    p.add_argument("--bind", choices=("core", "none"), default="core",
                   help="core: PE i on CPU i for both libraries (oshrun's default); none: unbound")
    p.add_argument("--oshrun-arg", action="append", default=[], help="an extra argument of oshrun (repeatable)")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"), help="the C compiler for the libaclshmem build")
    p.add_argument("--timeout", type=float, default=900, help="seconds one run may take (default 900)")
    p.add_argument("--json", help="write every round's numbers and the medians to this file")
    p.add_argument("--check", action="store_true", help="exit with status 3 when a goal is missed")
    args = p.parse_args(argv)
    args.offers_install = not (prog or "").startswith("shmem-perf")  # (shmem-perf has no --install)
    if args.rounds < 1 or args.reps < 1 or args.ms <= 0 or args.max_size < 8 or args.npes < 2:
        p.error("--rounds and --reps must be >= 1, --ms > 0, --max-size >= 8, --npes >= 2")
    return args


def bench_args(args):
    out = ["-r", str(args.reps), "-t", str(args.ms), "-m", str(args.max_size)]
    if args.tests:
        tests = args.tests.split(",")
        if "reduce" in tests and FLOOR not in tests:
            tests.append(FLOOR)  # reduce's goal is against the floor
        out += ["-T", ",".join(tests)]
    return out


def load_text():
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def compare(args):
    acl = find_aclshmem(args)  # first: a wrong --library or --include is said before anything is installed
    tools = find_openmpi()
    if tools is None and args.install:
        install_openmpi()
        tools = find_openmpi()
    if tools is None:
        raise Failure(install_hint(with_option=args.offers_install))
    oshcc, oshrun = tools
    print(f"# OSHMEM: {openmpi_version(oshrun)}; libaclshmem: {acl.origin}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="oshmem-compare-") as tmp:
        oshmem_bin, acl_bin = compile_both(Path(tmp), oshcc, acl, args.cc)
        acl_rounds, osh_rounds, osh_crashed = [], [], 0
        loads = [load_text()]
        for r in range(args.rounds):
            order = ("oshmem", "aclshmem") if r % 2 == 0 else ("aclshmem", "oshmem")
            for which in order:
                started = time.monotonic()
                if which == "oshmem":
                    values, crashed = run_oshmem(oshmem_bin, oshrun, bench_args(args), args)
                    osh_rounds.append(values)
                    osh_crashed += crashed
                else:
                    acl_rounds.append(run_aclshmem(acl_bin, acl, bench_args(args), args))
                print(f"# round {r + 1}/{args.rounds}: {which} {time.monotonic() - started:.0f} s, {load_text()}",
                      file=sys.stderr)
            loads.append(load_text())
    rows = comparison_rows(acl_rounds, osh_rounds)
    asleep = asleep_row(acl_rounds, osh_rounds)
    print(f"# {args.rounds} alternating rounds, {args.npes} PEs, bind {args.bind}; libaclshmem and OSHMEM: medians of the "
          f"rounds (each round: bench's median of {args.reps} x {args.ms:g} ms); ratio: libaclshmem / OSHMEM of "
          "those medians, best: of the best rounds; met?: the goal on ratio")
    print(f"# before: {loads[0]}; after: {loads[-1]}")
    if osh_crashed:
        print(f"# OSHMEM crashed after shmem_finalize in {osh_crashed} of {args.rounds} runs, after printing every "
              "number (Open MPI bug open-mpi/ompi#11604, fixed in 4.1.6); the numbers are used")
    print(render(rows, asleep), flush=True)
    goals = [r for r in rows if r[8] is not None]
    missed = [r for r in goals if not r[8]] + ([] if asleep is None or asleep[2] else [("asleep / spin",)])
    print(f"# goals met: {len(goals) + (asleep is not None) - len(missed)} of {len(goals) + (asleep is not None)}")
    floors = floor_rows(acl_rounds, osh_rounds)
    if floors:
        print("# the floor: every PE at once memcpy's 2 (PEs - 1) / PEs x size bytes, what an all-reduce of size "
              "bytes must move and add per PE (the median of every round of both programs); goal: libaclshmem's "
              f"reduce within {FLOOR_GOAL:g} x the floor")
        print(render_floor(floors), flush=True)
        print(f"# floor goals met: {sum(r[5] for r in floors)} of {len(floors)}")
        missed += [r for r in floors if not r[5]]
    if args.json:
        record = {
            "bind": args.bind, "npes": args.npes, "rounds": args.rounds, "reps": args.reps, "ms": args.ms, "loads": loads,
            "aclshmem": [{f"{m} {s}": v for (m, s), v in r.items()} for r in acl_rounds],
            "oshmem": [{f"{m} {s}": v for (m, s), v in r.items()} for r in osh_rounds],
            "table": [dict(zip(("measure", "size", "aclshmem", "oshmem", "unit", "ratio", "best_ratio", "goal",
                                "met"), row))
                      for row in rows],
            "asleep_over_spin": None if asleep is None else {"aclshmem": asleep[0], "oshmem": asleep[1],
                                                             "met": asleep[2]},
            "floor": [dict(zip(("size", "floor", "aclshmem", "ratio", "goal", "met", "oshmem_ratio"), row))
                      for row in floors],
        }
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 3 if (args.check and missed) else 0


def main(argv=None, prog=None):
    args = parse_args(sys.argv[1:] if argv is None else argv, prog)
    name = prog or os.path.basename(sys.argv[0])
    try:
        return compare(args)
    except Failure as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"{name}: a run took longer than --timeout {args.timeout:g} s: {e.cmd}", file=sys.stderr)
        return 1


def main_perf(ns, parser):
    """``shmem-perf --oshmem [TESTS]``: the comparison with the libaclshmem this Python loads
    and the headers of its installation (or of the meson build it comes from)."""
    from . import _install
    from ._internode import InternodeError, find_headers

    given = [flag for flag, value in (("--tests", ns.tests), ("--min-size", ns.min_size),
                                      ("--max-latency-size", ns.max_latency_size),
                                      ("--time-per-point", ns.time_per_point), ("--nodes", ns.nodes),
                                      ("--csv", ns.csv), ("--plot", ns.plot), ("--scale", ns.scale),
                                      ("--dist", ns.dist or None), ("--python", ns.python or None))
             if value is not None]
    if given:
        parser.error(f"--oshmem is a mode of its own (its tests go as its value: --oshmem bcast,reduce): "
                     f"{', '.join(given)} do{'es' if len(given) == 1 else ''} not apply")
    if ns.json == "-":
        parser.error("--oshmem writes its JSON to a file (--json FILE), the tables go to stdout")
    try:
        library, _ = _install.loaded_library()
        include = find_headers(library)
    except (RuntimeError, InternodeError) as exc:
        sys.stderr.write(f"shmem-perf: error: {exc}\n")
        return 1
    argv = ["--library", library, "--include", include, "--npes", str(ns.pes or 2), "--timeout", str(ns.timeout)]
    if ns.quick:
        argv += ["--rounds", "1", "--reps", "3", "--ms", "5", "--max-size", str(1 << 20)]
    if ns.rounds is not None:
        argv += ["--rounds", str(ns.rounds)]
    if ns.max_size is not None:
        argv += ["--max-size", str(ns.max_size)]
    if ns.oshmem:
        argv += ["--tests", ns.oshmem]
    if ns.json:
        argv += ["--json", ns.json]
    if ns.no_pin:
        argv += ["--bind", "none"]
    return main(argv, prog="shmem-perf --oshmem")


if __name__ == "__main__":
    sys.exit(main())
