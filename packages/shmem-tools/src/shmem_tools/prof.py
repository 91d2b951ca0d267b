"""Cycle profiles: save a ``get_prof()`` snapshot, and ``shmem-prof`` to read it.

In the program (the profiled PE is the one named by ``SHMEM_CYCLE_PROF_PE``)::

    from shmem import core
    from shmem_tools import prof

    ...                                    # the work to profile
    prof.capture("profile.json")           # = prof.save(core.get_prof(), "profile.json")

then::

    shmem-prof profile.json                        # the hottest frames
    shmem-prof profile.json --heatmap heat.png     # blocks x frames picture

A snapshot is JSON: ``{"format": "shmem-prof", "version": 1, "pe_id": 0, "ccount":
[64 x 1024], "cycles": [64 x 1024], "frame_names": {...}, "meta": {...}}``.  Frames
0..999 are the program's own (``aclshmemx_prof_start/end``); the library records its
operations in frames 1000.. (put, get, put_signal, signal_op, wait, barrier, quiet,
alloc).  Rows are blocks: the host is block 0, kernel block i is row i.  Cycles are the
CPU's time-stamp counter (x86 TSC, aarch64 virtual counter).
"""

import argparse
import json
import os
import platform
import socket
import sys
import time

from . import __version__
from ._table import render

FORMAT = "shmem-prof"
FORMAT_VERSION = 1
MAX_BLOCKS = 64
FRAME_COUNT = 1024
FIRST_LIBRARY_FRAME = 1000
LIBRARY_FRAMES = {
    1000: "put",
    1001: "get",
    1002: "put_signal",
    1003: "signal_op",
    1004: "wait",
    1005: "barrier",
    1006: "quiet",
    1007: "alloc",
}


def frame_name(frame, names=None):
    """The display name of a frame: the program's own name for it if given, the
    library's name for frames 1000.., else "user N"."""
    if names and frame in names:
        return names[frame]
    if frame in LIBRARY_FRAMES:
        return LIBRARY_FRAMES[frame]
    if frame >= FIRST_LIBRARY_FRAME:
        return f"library {frame}"
    return f"user {frame}"


def _cpu_mhz():
    """The CPU clock from /proc/cpuinfo: an approximation of the time-stamp counter's rate."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("cpu mhz"):
                    return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def _matrix(value, what):
    rows = [list(map(int, row)) for row in value]
    if len(rows) != MAX_BLOCKS or any(len(r) != FRAME_COUNT for r in rows):
        raise ValueError(f"{what} must be {MAX_BLOCKS} x {FRAME_COUNT}, not {len(rows)} x "
                         f"{len(rows[0]) if rows else 0}")
    return rows


def to_dict(prof, frame_names=None, meta=None):
    """A ProfData (or an object/dict with pe_id, ccount, cycles) as the snapshot dict."""
    if prof is None:
        raise ValueError("no profile: this PE is not the one named by SHMEM_CYCLE_PROF_PE "
                         "(get_prof() returned None there)")
    get = prof.get if isinstance(prof, dict) else (lambda k: getattr(prof, k))
    info = {"host": socket.gethostname(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": platform.machine(), "cpu_mhz": _cpu_mhz(), "tools_version": __version__,
            "profiled_pe_env": os.environ.get("SHMEM_CYCLE_PROF_PE")}
    try:
        from shmem import core

        info["library"] = core.get_version()
    except Exception:
        pass
    info.update(meta or {})
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "pe_id": int(get("pe_id")),
        "ccount": _matrix(get("ccount"), "ccount"),
        "cycles": _matrix(get("cycles"), "cycles"),
        "frame_names": {str(int(k)): str(v) for k, v in (frame_names or {}).items()},
        "meta": info,
    }


def save(prof, path, frame_names=None, meta=None):
    """Writes a ``get_prof()`` result to ``path`` as JSON; returns the path.

    ``frame_names`` ({frame: name}) names the program's own frames in the viewer.
    Raises ValueError for ``None`` (a PE that is not profiled)."""
    data = to_dict(prof, frame_names, meta)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, path)
    return path


def capture(path, frame_names=None, meta=None):
    """Takes this PE's profile with ``shmem.core.get_prof()`` and saves it; returns the
    path, or None on PEs that are not profiled."""
    from shmem import core

    p = core.get_prof()
    if p is None:
        return None
    return save(p, path, frame_names, meta)


class FrameStat:
    __slots__ = ("frame", "name", "calls", "cycles", "blocks")

    def __init__(self, frame, name, calls, cycles, blocks):
        self.frame, self.name, self.calls, self.cycles, self.blocks = frame, name, calls, cycles, blocks

    @property
    def per_call(self):
        return self.cycles / self.calls if self.calls else 0.0

    def as_dict(self):
        return {"frame": self.frame, "name": self.name, "calls": self.calls, "cycles": self.cycles,
                "cycles_per_call": self.per_call, "blocks": self.blocks}


class Snapshot:
    """A loaded profile."""

    def __init__(self, data):
        if not isinstance(data, dict):
            raise ValueError("a profile snapshot is a JSON object")
        missing = [k for k in ("pe_id", "ccount", "cycles") if k not in data]
        if missing:
            raise ValueError(f"not a profile snapshot: missing {', '.join(missing)}")
        if data.get("format", FORMAT) != FORMAT:
            raise ValueError(f"not a profile snapshot (format {data.get('format')!r})")
        self.pe_id = int(data["pe_id"])
        self.ccount = _matrix(data["ccount"], "ccount")
        self.cycles = _matrix(data["cycles"], "cycles")
        self.frame_names = {int(k): v for k, v in (data.get("frame_names") or {}).items()}
        self.meta = data.get("meta") or {}

    def name(self, frame):
        return frame_name(frame, self.frame_names)

    def frames(self):
        """Every frame with samples, hottest (most cycles) first."""
        out = []
        for f in range(FRAME_COUNT):
            calls = sum(self.ccount[b][f] for b in range(MAX_BLOCKS))
            if not calls:
                continue
            cycles = sum(self.cycles[b][f] for b in range(MAX_BLOCKS))
            blocks = sum(1 for b in range(MAX_BLOCKS) if self.ccount[b][f])
            out.append(FrameStat(f, self.name(f), calls, cycles, blocks))
        out.sort(key=lambda s: (-s.cycles, s.frame))
        return out

    def blocks(self):
        """[(block, calls, cycles)] of the blocks with samples, busiest first."""
        out = []
        for b in range(MAX_BLOCKS):
            calls = sum(self.ccount[b])
            if calls:
                out.append((b, calls, sum(self.cycles[b])))
        out.sort(key=lambda t: (-t[2], t[0]))
        return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return Snapshot(json.load(f))


# ---------------------------------------------------------------------------
# shmem-prof
# ---------------------------------------------------------------------------


def _num(v):
    return f"{v:,.0f}" if isinstance(v, (int, float)) else str(v)


def render_table(snap, top, cycles_per_us=None):
    stats = snap.frames()
    total = sum(s.cycles for s in stats) or 1
    lines = []
    lib = snap.meta.get("library", "")
    lines.append(f"# profile of PE {snap.pe_id}{' (' + lib + ')' if lib else ''}: {len(stats)} frames with samples, "
                 f"{_num(sum(s.calls for s in stats))} calls, {_num(total if stats else 0)} cycles")
    if cycles_per_us:
        lines.append(f"# time assumes {cycles_per_us:.0f} cycles per microsecond (approximate)")
    header = ["rank", "frame", "name", "calls", "cycles", "cycles/call", "share", "blocks"]
    if cycles_per_us:
        header.insert(6, "~us/call")
    rows = []
    for i, s in enumerate(stats[:top], 1):
        row = [str(i), str(s.frame), s.name, _num(s.calls), _num(s.cycles), _num(s.per_call),
               f"{100.0 * s.cycles / total:.1f}%", str(s.blocks)]
        if cycles_per_us:
            row.insert(6, f"{s.per_call / cycles_per_us:.2f}")
        rows.append(row)
    if not rows:
        lines.append("(no samples: the profiled PE recorded nothing, or this is not the profiled PE's snapshot)")
        return "\n".join(lines)
    lines.append(render(header, rows, left={2}))  # names are left-aligned
    if len(stats) > top:
        lines.append(f"... {len(stats) - top} more frames (--top {len(stats)} shows all)")
    blocks = snap.blocks()
    if blocks:
        lines.append("")
        lines.append("# busiest blocks (block 0 is the host; kernel block i is row i)")
        shown = ", ".join(f"block {b}: {_num(c)} cycles / {_num(n)} calls" for b, n, c in blocks[:8])
        lines.append(shown + (f", ... ({len(blocks)} blocks)" if len(blocks) > 8 else ""))
    return "\n".join(lines)


def render_heatmap(snap, path, metric="cycles", all_blocks=False, max_frames=60):
    """Writes the blocks x frames heatmap PNG of the frames with samples."""
    from ._plot import plot_heatmap

    stats = snap.frames()
    if not stats:
        raise RuntimeError("the profile has no samples to draw")
    chosen = sorted(s.frame for s in stats[:max_frames])  # the hottest, in frame order
    used_blocks = [b for b, _, _ in snap.blocks()]
    blocks = list(range(MAX_BLOCKS)) if all_blocks else list(range(max(used_blocks) + 1))
    matrix = snap.cycles if metric == "cycles" else snap.ccount
    labels = [f"{f} {snap.name(f)}" for f in chosen]
    title = f"PE {snap.pe_id}: {metric} per block and frame"
    if len(stats) > max_frames:
        title += f" (hottest {max_frames} of {len(stats)} frames)"
    plot_heatmap(matrix, blocks, chosen, labels, path, title, metric)


def _parser():
    p = argparse.ArgumentParser(
        prog="shmem-prof",
        description="Show a saved SHMEM cycle profile (shmem_tools.prof.save / capture): the hottest frames "
                    "and, with --heatmap, a blocks x frames picture.",
    )
    p.add_argument("snapshot", help="the JSON file written by shmem_tools.prof.save()")
    p.add_argument("--top", type=int, default=20, help="how many frames the table shows (default 20)")
    p.add_argument("--heatmap", metavar="FILE.png", help="write a blocks x frames heatmap (needs matplotlib)")
    p.add_argument("--metric", choices=("cycles", "calls"), default="cycles", help="what the heatmap colours")
    p.add_argument("--all-blocks", action="store_true", help="all 64 block rows in the heatmap, not just the used ones")
    p.add_argument("--json", action="store_true", help="print the frame statistics as JSON")
    p.add_argument("--cycles-per-us", type=float, default=None,
                   help="convert cycles to time (default: the CPU MHz recorded in the snapshot, if any)")
    p.add_argument("--version", action="version", version=f"shmem-prof (shmem-tools {__version__})")
    return p


def main(argv=None):
    ns = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if ns.top < 1:
        sys.stderr.write("shmem-prof: --top must be at least 1\n")
        return 2
    try:
        snap = load(ns.snapshot)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"shmem-prof: cannot read {ns.snapshot}: {exc}\n")
        return 1
    rate = ns.cycles_per_us or snap.meta.get("cpu_mhz")
    if ns.json:
        out = {"pe_id": snap.pe_id, "meta": snap.meta, "frames": [s.as_dict() for s in snap.frames()],
               "blocks": [{"block": b, "calls": n, "cycles": c} for b, n, c in snap.blocks()]}
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_table(snap, ns.top, rate))
    if ns.heatmap:
        try:
            render_heatmap(snap, ns.heatmap, "cycles" if ns.metric == "cycles" else "calls", ns.all_blocks)
        except Exception as exc:
            sys.stderr.write(f"shmem-prof: cannot draw the heatmap: {exc}\n")
            return 1
        sys.stderr.write(f"shmem-prof: heatmap written to {ns.heatmap}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
