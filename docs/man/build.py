#!/usr/bin/env python3
"""Builds the manual pages of libaclshmem (meson's man target; see packages/shmem-native/man).

    build.py --check                          what is missing to build them (exit 1), or "ok"
    build.py MAN1 MAN3 MAN7 [--generic-names] [--no-tools]

writes the page sources into a folder beside MAN1 (shmem_sphinx.manpages), runs Sphinx's
man builder on them with this folder's conf.py (warnings are errors), and leaves the
pages of each section in MAN1, MAN3 and MAN7 with a ``.so`` page for every other name a
page documents.  --generic-names: also the pages oshrun, oshcc, ... (only when meson
installs the programs under those names); --no-tools: without shmem-config, shmem-perf
and shmem-prof (their parsers need shmem-tools' dependencies).  Run it with a Python that
has Sphinx and sphinx-argparse.
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys

MAN = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(MAN)
PACKAGES = os.path.join(os.path.dirname(DOCS), "packages")
SOURCES = [os.path.join(PACKAGES, name, "src") for name in ("shmem-core", "shmem-tools")]
sys.path[:0] = [os.path.join(DOCS, "_ext")] + SOURCES


def missing(modules):
    """The modules of the list that cannot be imported, with the reason."""
    out = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as e:  # an ImportError, or a module that fails at import
            out.append(f"{name} ({e})")
    return out


def check():
    needed = missing(["sphinx", "sphinxarg.ext"])
    tools = missing(["shmem_tools.config", "shmem_tools.perf", "shmem_tools.prof"])
    if needed:
        print("missing: " + "; ".join(needed))
        return 1
    print("ok" if not tools else "ok without the shmem-tools pages: " + "; ".join(tools))
    return 0


def _inputs():
    """Every file the pages are made from (for meson's depfile)."""
    folders = [os.path.join(PACKAGES, "shmem-native", "include"), os.path.join(DOCS, "_ext"), MAN,
               os.path.join(DOCS, "reference"), os.path.join(PACKAGES, "shmem-tools", "src", "shmem_tools")]
    files = [os.path.join(PACKAGES, "shmem-core", "src", "shmem", "run.py")]
    for folder in folders:
        for root, _dirs, names in os.walk(folder):
            files += [os.path.join(root, n) for n in names if n.endswith((".h", ".py", ".rst"))]
    # Titles of the whole site name the references of the included pages.
    for root, _dirs, names in os.walk(DOCS):
        files += [os.path.join(root, n) for n in names if n.endswith(".rst") and "_build" not in root]
    return sorted(set(files))


def write_depfile(path, target):
    escaped = [f.replace(" ", "\\ ") for f in _inputs()]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{target}: " + " \\\n  ".join(escaped) + "\n")


def build(man_dirs, generic_names, tools):
    from shmem_sphinx import manpages

    top = os.path.dirname(os.path.abspath(man_dirs[0]))
    src, out = os.path.join(top, "man-src"), os.path.join(top, "man-sphinx")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    include_dir = os.path.join(PACKAGES, "shmem-native", "include")
    pages = manpages.all_pages(include_dir, generic_names, tools)
    manpages.write_sources(src, DOCS, pages)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(DOCS, "_ext")] + SOURCES))
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "man", "-W", "--keep-going", "-q", "-E",
                    "-c", MAN, "-d", os.path.join(top, "man-doctrees"), src, out], check=True, env=env)
    for target in man_dirs:
        section = os.path.basename(os.path.normpath(target))  # man1, man3, man7
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(out, section), target)
    with open(os.path.join(src, manpages.PAGES_FILE), encoding="utf-8") as f:
        manpages.write_aliases(top, json.load(f))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--generic-names", action="store_true")
    ap.add_argument("--no-tools", action="store_true")
    ap.add_argument("--depfile", help="write the files the pages are made from, for meson")
    ap.add_argument("man_dirs", nargs="*", metavar="MANn")
    args = ap.parse_args(argv)
    if args.check:
        return check()
    if len(args.man_dirs) != 3:
        ap.error("give the three output folders man1, man3 and man7")
    build(args.man_dirs, args.generic_names, not args.no_tools)
    if args.depfile:
        write_depfile(args.depfile, args.man_dirs[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
