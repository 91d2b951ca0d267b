"""``shmem-config``: install paths, compiler flags, diagnosis and environment checks.

    shmem-config --version        the native library's version
    shmem-config --backend        the platform: cpu
    shmem-config --root           the installation's top folder
    shmem-config --include        the folder holding aclshmem.h
    shmem-config --lib            the folder holding libaclshmem.so
    shmem-config --ldflags        -I... -L... -Wl,-rpath,... -laclshmem
    shmem-config --rpath          -Wl,-rpath,<lib folder>
    shmem-config --runtime-root   the top folder of the library Python actually loads
    shmem-config --diagnose       JSON: versions, what loaded, compatibility, next steps
    shmem-config --check [--json] [--timeout S] [--no-selftest]
                                  PASS / WARN / FAIL checks; exit status 1 on any FAIL

As in the original tool, when several of these flags are given the first one wins.
``cc prog.c $(shmem-config --ldflags)`` builds and links a program that runs without
LD_LIBRARY_PATH (the rpath is part of --ldflags, except for the system's own library
folders).
"""

import argparse
import json
import sys

from . import __version__, _install, checks
from ._table import render

class _Query(argparse.Action):
    """Records the query flags in the order they were given."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        order = getattr(namespace, "queries", None) or []
        order.append(self.dest)
        namespace.queries = order


def _parser():
    p = argparse.ArgumentParser(
        prog="shmem-config",
        description="Paths, compiler flags and environment checks of SHMEM (libaclshmem). "
                    "When several query flags are given, the first one wins.",
    )
    q = p.add_argument_group("queries")
    q.add_argument("--version", dest="version", action=_Query, help="the native library's version")
    q.add_argument("--backend", dest="backend", action=_Query, help="the platform (cpu)")
    q.add_argument("--include", dest="include", action=_Query, help="the header folder (aclshmem.h)")
    q.add_argument("--lib", dest="lib", action=_Query, help="the library folder (libaclshmem.so)")
    q.add_argument("--ldflags", dest="ldflags", action=_Query,
                   help="flags to compile and link a C program: -I -L -Wl,-rpath -laclshmem")
    q.add_argument("--rpath", dest="rpath", action=_Query, help="the linker's rpath flag for the library folder")
    q.add_argument("--root", dest="root", action=_Query, help="the installation's top folder")
    q.add_argument("--runtime-root", dest="runtime_root", action=_Query,
                   help="the top folder of the libaclshmem that Python loads (as /proc/self/maps shows)")
    q.add_argument("--diagnose", dest="diagnose", action=_Query,
                   help="JSON report: versions, loaded library, compatibility, next steps")
    q.add_argument("--check", dest="check", action=_Query,
                   help="environment checks (PASS/WARN/FAIL) and a live 2-PE self-test; exit 1 on FAIL")
    o = p.add_argument_group("options of --check")
    o.add_argument("--json", action="store_true", help="print the checks as JSON")
    o.add_argument("--timeout", type=float, default=checks.SELFTEST_TIMEOUT,
                   help=f"time limit of the self-test in seconds (default {checks.SELFTEST_TIMEOUT:g})")
    o.add_argument("--no-selftest", action="store_true", help="skip the live self-test")
    p.add_argument("--tools-version", action="version", version=f"shmem-tools {__version__}",
                   help="show the version of shmem-tools and exit")
    p.set_defaults(queries=None)
    return p


def _fail(text):
    sys.stderr.write(f"shmem-config: {text}\n")
    return 1


def _need_installation():
    inst, reasons = _install.find_installation()
    if inst is None:
        raise LookupError("no SHMEM installation found: " + "; ".join(reasons)
                          + ". Install shmem-native (pip install shmem-native) or the C library with "
                            "its pkg-config file aclshmem.pc")
    return inst


def _answer(query):
    if query == "backend":
        return _install.BACKEND
    if query == "runtime_root":
        rt = _install.runtime_library()
        if not rt["ok"]:
            raise LookupError(f"the native library does not load: {rt['error']}")
        mapped = rt["mapped"]
        if not mapped:
            raise LookupError("libaclshmem loaded but is not in /proc/self/maps")
        return _install.root_of_library(mapped[0])
    if query == "version":
        inst, _ = _install.find_installation()
        if inst is not None and inst.version:
            return inst.version
        rt = _install.runtime_library()
        if rt["ok"] and rt["name"]:
            return rt["name"].split()[-1].lstrip("v")
        raise LookupError("no SHMEM installation found (pip install shmem-native)")
    inst = _need_installation()
    if query == "root":
        return inst.root
    if query == "lib":
        return inst.lib_dir
    if query == "rpath":
        return inst.rpath()
    if query == "include":
        if not inst.include_dir:
            raise LookupError(f"the headers (aclshmem.h) are not part of the installation at {inst.root} "
                              f"({inst.kind})")
        return inst.include_dir
    if query == "ldflags":
        if not inst.include_dir:
            sys.stderr.write(f"shmem-config: warning: no headers found for {inst.root}; --ldflags has no -I\n")
        return inst.ldflags()
    raise AssertionError(query)


def print_table(results, out=sys.stdout):
    """The checks as an aligned table: CHECK, STATUS, REASON (and a 'fix:' line)."""
    rows = []
    for c in results:
        rows.append([c.name, c.status, c.reason])
        if c.fix:
            rows.append(["", "", f"fix: {c.fix}"])
    out.write(render(["CHECK", "STATUS", "REASON"], rows, left={0, 1, 2}) + "\n")
    counts = {s: sum(1 for c in results if c.status == s) for s in (checks.PASS, checks.WARN, checks.FAIL)}
    verdict = "FAILED" if counts[checks.FAIL] else "OK"
    out.write(f"\n{counts['PASS']} passed, {counts['WARN']} warnings, {counts['FAIL']} failed: {verdict}\n")


def run_check(ns):
    results = checks.run_all(selftest=not ns.no_selftest, timeout=ns.timeout)
    failed = any(c.status == checks.FAIL for c in results)
    if ns.json:
        payload = {
            "ok": not failed,
            "summary": {s: sum(1 for c in results if c.status == s) for s in (checks.PASS, checks.WARN, checks.FAIL)},
            "checks": [c.as_dict() for c in results],
        }
        json.dump(payload, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        inst, _ = _install.find_installation()
        version = inst.version if inst is not None and inst.version else "?"
        sys.stdout.write(f"shmem-config --check: SHMEM {version}, backend {_install.BACKEND}\n\n")
        print_table(results)
    sys.stdout.flush()
    return 1 if failed else 0


def main(argv=None):
    parser = _parser()
    ns = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not ns.queries:
        if ns.json:
            parser.error("--json goes with --check")
        parser.print_help()
        return 0
    query = ns.queries[0]
    if query == "check":
        return run_check(ns)
    if query == "diagnose":
        from .diagnose import diagnose

        json.dump(diagnose(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    try:
        print(_answer(query))
    except LookupError as exc:
        return _fail(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
