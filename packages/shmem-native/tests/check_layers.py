#!/usr/bin/env python3
"""Checks that libaclshmem's folders only depend downward (src/README.md, "Layers").

Every file of src/ belongs to one unit of the LAYERS table below, lowest first.  A file may
include the headers of its own unit and of units listed before it, and may call the public
functions (aclshmem_*, aclshmemx_*) defined in those units; an include of a later unit, a
call of a public function defined in a later unit, or a file whose folder is not in the
table is an error.  Public headers ("aclshmem/...") declare the API and may be included
anywhere.

    check_layers.py [SRC_DIR]     check the tree (default: ../src next to this script)
    check_layers.py --self-test   show that each kind of violation is caught
"""
import os
import re
import sys
import tempfile

# (unit, members): a member ending in "/" is a folder (everything below it), otherwise a file
# stem ("core/error" would be core/error.c and core/error.h; the most specific member wins).
# Every unit is a folder today, and folder_errors keeps it so: a file that belongs to another
# level than its folder moves to a folder of that level.  Lowest first.
LAYERS = [
    ("base", ["base/"]),
    ("bootstrap", ["bootstrap/"]),
    ("mem", ["mem/"]),
    ("core", ["core/"]),
    ("prof", ["prof/"]),
    ("team", ["team/"]),
    ("transport", ["transport/"]),
    ("rma", ["rma/"]),
    ("alloc", ["alloc/"]),
    ("sync", ["sync/"]),
    ("amo", ["amo/"]),
    ("coll", ["coll/"]),
    ("platform", ["platform/"]),
    ("init", ["init/"]),
    ("api", ["api/"]),
    ("openshmem", ["openshmem/"]),
]

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
PUBLIC_NAME = r"\b(aclshmemx?_\w+)\s*\("
# A definition starts at column 0 and its parameter list is followed by a body.
DEFINITION = re.compile(r"^[A-Za-z_][^;{}()]*?" + PUBLIC_NAME + r"[^;{}]*\)\s*\{", re.M)
CALL = re.compile(PUBLIC_NAME)
COMMENT_OR_LITERAL = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def unit_of(path):
    """(rank, unit name) of a path relative to src/, or None when no unit holds it."""
    stem = os.path.splitext(path)[0]
    best = None
    for rank, (name, members) in enumerate(LAYERS):
        for member in members:
            hit = path.startswith(member) if member.endswith("/") else stem == member
            if hit and (best is None or len(member) > best[0]):
                best = (len(member), rank, name)
    return best[1:] if best else None


def code_only(text):
    """text with comments and string/char literals blanked (line numbers kept)."""

    def blank(m):
        s = m.group(0)
        if s.startswith('"') or s.startswith("'"):
            return s[0] + s[0]
        return "\n" * s.count("\n") or " "

    return COMMENT_OR_LITERAL.sub(blank, text)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def sources(src):
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.relpath(os.path.join(root, f), src).replace(os.sep, "/")
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    yield path, fh.read()


def include_errors(path, text, unit):
    errors = []
    for m in INCLUDE.finditer(text):
        target = m.group(1)
        if target.startswith("aclshmem"):
            continue
        if "/" not in target:  # "x.h" next to the file
            target = os.path.join(os.path.dirname(path), target).replace(os.sep, "/")
        where = "%s:%d" % (path, line_of(text, m.start()))
        dest = unit_of(target)
        if dest is None:
            errors.append('%s: includes "%s", whose folder has no place in the layer table' % (where, m.group(1)))
        elif dest[0] > unit[0]:
            errors.append('%s: includes "%s": unit "%s" is above "%s"; include only downward' %
                          (where, m.group(1), dest[1], unit[1]))
    return errors


def call_errors(path, code, unit, defined_in):
    errors = []
    own = {m.group(1) for m in DEFINITION.finditer(code)}
    for m in CALL.finditer(code):
        name = m.group(1)
        home = defined_in.get(name)
        if name in own or home is None:
            continue
        dest = unit_of(home)
        if dest[0] > unit[0]:
            errors.append("%s:%d: calls %s, defined in %s: unit \"%s\" is above \"%s\"; call only downward" %
                          (path, line_of(code, m.start()), name, home, dest[1], unit[1]))
    return errors


def check(src):
    """The list of violations in the tree at src (empty: it is layered)."""
    files = list(sources(src))
    errors, defined_in, code = [], {}, {}
    for path, text in files:
        code[path] = code_only(text)
        for m in DEFINITION.finditer(code[path]):
            defined_in[m.group(1)] = path
    for path, text in files:
        unit = unit_of(path)
        if unit is None:
            errors.append("%s: its folder has no place in the layer table (tests/check_layers.py, src/README.md)"
                          % path)
            continue
        errors += include_errors(path, code_only_keep_includes(text), unit)
        errors += call_errors(path, code[path], unit, defined_in)
    return errors


def code_only_keep_includes(text):
    """Comments blanked, literals kept: an include's "path" is a string literal."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n") or " ", text, flags=re.S)


README_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|", re.M)


def readme_errors(src):
    """The layer table of src/README.md must list the units of LAYERS in the same order."""
    path = os.path.join(src, "README.md")
    if not os.path.exists(path):
        return ["README.md: missing; it documents the layers (see LAYERS in tests/check_layers.py)"]
    with open(path, encoding="utf-8") as fh:
        rows = sorted((int(n), name) for n, name in README_ROW.findall(fh.read()))
    documented = [name for _, name in rows]
    expected = [name for name, _ in LAYERS]
    if documented != expected:
        return ["README.md: its layer table lists %s (lowest first); tests/check_layers.py has %s" %
                (documented, expected)]
    return []


def folder_errors():
    """Members that are files, not folders: a folder holds one level only."""
    return ["check_layers.py: unit \"%s\" names the file %s; move it to a folder of its level instead" %
            (name, m) for name, members in LAYERS for m in members if not m.endswith("/")]


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)


def self_test():
    """Each kind of violation is reported, and a layered tree passes."""
    layered = {
        "base/error.h": "int shmemi_fail(int code);\n",
        "core/instance.h": '#include "base/error.h"\n#include "aclshmem/types.h"\n',
        "mem/heap.c": '#include "base/error.h"\n',
        "sync/barrier.c": '#include "core/instance.h"\n/* #include "platform/platform.h" */\n'
                          'void aclshmem_barrier_all(void)\n{\n    shmemi_fail(1);\n}\n',
        "platform/cpu/kernel.c": '#include "sync/barrier.h"\nuint32_t aclshmemx_block_idx(void)\n{\n'
                                 '    aclshmem_barrier_all();\n    return 0;\n}\n',
        "prof/prof.c": 'static const char *m = "aclshmemx_block_idx() names the row";\n',
    }
    cases = {
        "upward include": ({"sync/barrier.h": '#include "platform/platform.h"\n'}, "sync/barrier.h:1: includes"),
        "include of a unit above":
            ({"mem/heap.h": '#include "alloc/alloc.h"\n'}, 'unit "alloc" is above "mem"'),
        "upward public call": ({"prof/prof.c": "void f(void)\n{\n    aclshmemx_block_idx();\n}\n"},
                               "prof/prof.c:3: calls aclshmemx_block_idx"),
        "folder not in the table": ({"stuff/x.c": "int x;\n"}, "stuff/x.c: its folder has no place"),
        "include of a folder not in the table": ({"rma/rma.c": '#include "stuff/x.h"\n'}, "no place in the layer"),
    }
    table = "".join("| %d | `%s` | x | y |\n" % (i + 1, name) for i, (name, _) in enumerate(LAYERS))
    layered["README.md"] = table
    cases["README table out of date"] = ({"README.md": table.replace("`rma`", "`rdma`")}, "its layer table")
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, layered)
        errors = check(root) + readme_errors(root)
        if errors:
            failures += 1
            print("self-test: a layered tree was rejected:\n  " + "\n  ".join(errors))
    for name, (extra, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, dict(layered, **extra))
            errors = check(root) + readme_errors(root)
            if not any(expected in e for e in errors):
                failures += 1
                print("self-test: %s not caught (wanted %r, got %r)" % (name, expected, errors))
    print("self-test: %d of %d cases failed" % (failures, len(cases) + 1))
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    src = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    errors = check(src) + readme_errors(src) + folder_errors()
    for e in errors:
        print(e)
    print("%s: %s" % (os.path.normpath(src), "%d problems with the layering" % len(errors) if errors else "layered"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
