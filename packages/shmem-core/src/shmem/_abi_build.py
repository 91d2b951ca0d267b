"""Makes shmem-core's description of the C ABI from the public headers of libaclshmem
(``packages/shmem-native/include``), the one place the ABI is written by hand.

``python -m shmem._abi_build [--check] [INCLUDE_DIR]`` runs the C preprocessor over
``aclshmem.h`` (the X-macro tables expanded, as a C compiler sees them), parses the result
with pycparser and writes these committed files of the package:

* ``decl/aclshmem.h`` and ``decl/aclshmem_coll.h``: every type and function of the headers
  as real C declarations, which cffi reads (``shmem._native``; the second holds the
  collectives' typed families, declared to cffi at their first use);
* ``_abi.py``: the headers' X-macro type tables and what the Python layers derive from
  the declarations (which atomic operation takes which type, which reduction which type);
* ``_pyshmem_families.py`` and ``_pyshmem_coll_families.py``: the typed Python functions
  of ``shmem._pyshmem`` made from the declarations (``shmem._ffi_build``).

So nothing of the ABI is typed twice: a header change is followed by this command, and
``tests/test_abi.py`` fails while a committed file differs from what it would write
(``--check`` does the same comparison here).  Needs a C compiler (``cc``, or ``CC``) and
pycparser (which comes with cffi); the package at run time needs neither.

Like ``shmem._ffi_build`` this module imports nothing of the package at its top.
"""

import os
import re
import subprocess
import sys
import tempfile



def _load_ffi_build():
    """shmem._ffi_build, loaded by path: this module runs as a script too
    (``python src/shmem/_abi_build.py``), without importing the package, which may be the
    thing being repaired."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_shmem_ffi_build", os.path.join(HERE, "_ffi_build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HERE = os.path.dirname(os.path.abspath(__file__))
DECL_DIR = os.path.join(HERE, "decl")
DECL_FILE = "aclshmem.h"
COLL_DECL_FILE = "aclshmem_coll.h"
ABI_MODULE_FILE = "_abi.py"

# The standard headers the public headers include, reduced to what they declare: cffi knows
# these types itself, and pycparser cannot read a C library's own headers.
FAKE_HEADERS = {
    "stdbool.h": "#define bool _Bool\n#define true 1\n#define false 0\n",
    "stddef.h": "typedef unsigned long size_t;\ntypedef long ptrdiff_t;\n#define NULL ((void *)0)\n",
    "stdint.h": ("typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;\n"
                 "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;\n"
                 "typedef unsigned long uint64_t; typedef unsigned long uintptr_t; typedef long intptr_t;\n"),
}

#: What a parser must be told before it reads the declaration files (cffi knows it).
PRELUDE = (FAKE_HEADERS["stddef.h"].replace("#define NULL ((void *)0)\n", "") + FAKE_HEADERS["stdint.h"]
           + "typedef _Bool bool;\n")

_ffi_build = _load_ffi_build()

_GENERATED_NOTE = ("Generated from the public headers (packages/shmem-native/include) by "
                   "`python -m shmem._abi_build`: do not edit.")


def find_include_dir():
    """The folder holding aclshmem.h: ACLSHMEM_INCLUDE_DIR, this repository's, or the
    shmem_native package's; None when there is none."""
    candidates = [os.environ.get("ACLSHMEM_INCLUDE_DIR"),
                  os.path.normpath(os.path.join(HERE, "..", "..", "..", "shmem-native", "include"))]
    try:
        import shmem_native

        candidates.append(shmem_native.include_dir())
    except Exception:  # not installed, or an installation without headers
        pass
    for folder in candidates:
        if folder and os.path.isfile(os.path.join(folder, "aclshmem.h")):
            return folder
    return None


def compiler():
    import shutil

    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    raise RuntimeError("no C compiler (cc, gcc or clang) found: the headers are read through its preprocessor")


def preprocess(include_dir, text):
    """``text`` (C that includes public headers) through the C preprocessor, with line
    markers (pycparser keeps them as each declaration's file)."""
    with tempfile.TemporaryDirectory() as fake:
        for name, body in FAKE_HEADERS.items():
            with open(os.path.join(fake, name), "w", encoding="utf-8") as f:
                f.write(body)
        cmd = [compiler(), "-E", "-nostdinc", "-D__attribute__(x)=", "-I", fake, "-I", include_dir, "-x", "c", "-"]
        proc = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


# ---------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------


def _render(node):
    """A declaration as C text: a type as pycparser's block, anything else on one line."""
    from pycparser import c_ast, c_generator

    text = c_generator.CGenerator().visit(node)
    if isinstance(node, c_ast.Typedef):
        return "\n".join(line.rstrip() for line in text.splitlines())
    return " ".join(text.split())


def parse_headers(include_dir):
    """pycparser's AST of aclshmem.h, preprocessed."""
    from pycparser import c_parser

    return c_parser.CParser().parse(preprocess(include_dir, '#include "aclshmem.h"\n'), "aclshmem.h")


def declarations(include_dir, ast=None):
    """[(header, text)] of every top-level declaration of aclshmem.h in order, rendered by
    pycparser (functions on one line, types as blocks); header is the file's name under
    the include folder (``aclshmem/rma.h``)."""
    from pycparser import c_ast

    ast = ast or parse_headers(include_dir)
    root = os.path.realpath(include_dir)
    out = []
    for node in ast.ext:
        path = os.path.realpath(node.coord.file) if node.coord and node.coord.file else ""
        if not path.startswith(root + os.sep):
            continue  # the fake standard headers
        if not isinstance(node, (c_ast.Decl, c_ast.Typedef)):
            raise ValueError(f"unexpected declaration at {node.coord}")
        out.append((os.path.relpath(path, root), _render(node) + ";"))
    return out


def enums(ast):
    """{typedef name: ((enumerator, value), ...)} of every enum typedef, values evaluated."""
    from pycparser import c_ast

    out = {}
    for node in ast.ext:
        inner = node.type.type if isinstance(node, c_ast.Typedef) and isinstance(node.type, c_ast.TypeDecl) else None
        if isinstance(inner, c_ast.Enum) and inner.values is not None:
            known, value, members = {}, -1, []
            for e in inner.values.enumerators:
                value = _evaluate(e.value, known) if e.value is not None else value + 1
                known[e.name] = value
                members.append((e.name, value))
            out[node.name] = tuple(members)
    return out


def _evaluate(expr, known):
    """The value of an enumerator's constant expression (literals, earlier enumerators,
    unary and binary integer operators)."""
    from pycparser import c_ast

    if isinstance(expr, c_ast.Constant):
        return int(expr.value.rstrip("uUlL"), 0)
    if isinstance(expr, c_ast.ID):
        return known[expr.name]
    if isinstance(expr, c_ast.UnaryOp):
        v = _evaluate(expr.expr, known)
        return {"-": -v, "+": v, "~": ~v}[expr.op]
    if isinstance(expr, c_ast.BinaryOp):
        a, b = _evaluate(expr.left, known), _evaluate(expr.right, known)
        return {"<<": a << b, ">>": a >> b, "|": a | b, "&": a & b, "+": a + b, "-": a - b, "*": a * b}[expr.op]
    if isinstance(expr, c_ast.Cast):
        return _evaluate(expr.expr, known)
    raise ValueError(f"cannot evaluate the enumerator value at {expr.coord}")


def is_coll_family(header, text):
    """Whether a declaration is one of the collectives' typed families (declared to cffi at
    their first use, as two thirds of all functions): a function of coll.h with an element
    type."""
    if header != "aclshmem/coll.h" or text.startswith("typedef") or "(" not in text:
        return False
    params = _ffi_build.split_function(text)[2]
    return params is not None and _ffi_build.element_type(params) is not None


def decl_texts(decls):
    """The texts of decl/aclshmem.h and decl/aclshmem_coll.h."""
    parts = {False: [], True: []}
    last = {False: None, True: None}
    for header, text in decls:
        coll = is_coll_family(header, text)
        if header != last[coll]:
            parts[coll].append(f"\n/* {header} */")
            last[coll] = header
        parts[coll].append(text)
    head = f"/* The C declarations of libaclshmem that shmem-core binds (cffi's cdef). {_GENERATED_NOTE} */"
    coll_head = (f"/* The collectives' typed families (aclshmem/coll.h), declared to cffi at their first use. "
                 f"{_GENERATED_NOTE} */")
    return (head + "\n".join(parts[False]) + "\n", coll_head + "\n".join(parts[True]) + "\n")


# ---------------------------------------------------------------------------
# The X-macro type tables and the derived indexes (_abi.py)
# ---------------------------------------------------------------------------


def type_tables(include_dir):
    """{table name: rows} of the X-macro tables of aclshmem/types.h, expanded by the
    preprocessor: rows are (NAME, C type) pairs, or widths in bits for ACLSHMEM_RMA_SIZES."""
    with open(os.path.join(include_dir, "aclshmem", "types.h"), encoding="utf-8") as f:
        names = re.findall(r"^#define ACLSHMEM_(\w+_(?:TYPES|SIZES))\(X\)", f.read(), re.M)
    probe = ['#include "aclshmem/types.h"', "#define ACLSHMEMI_ROW(...) [__VA_ARGS__]"]
    probe += [f"@{name}@ ACLSHMEM_{name}(ACLSHMEMI_ROW)" for name in names]
    text = preprocess(include_dir, "\n".join(probe) + "\n")
    tables = {}
    for name in names:
        line = next(ln for ln in text.splitlines() if ln.startswith(f"@{name}@"))
        rows = [tuple(" ".join(cell.split()) for cell in row.split(",")) for row in re.findall(r"\[([^\]]*)\]", line)]
        tables[name] = tuple(int(r[0]) if len(r) == 1 else r for r in rows)
    return tables


def _family_invocations(include_dir):
    """[(table, macro)] of the lines ``ACLSHMEM_<TABLE>(ACLSHMEMI_DECLARE_<...>)`` that make
    the typed families, in the order aclshmem.h includes the headers; the invocations of one
    macro over several tables (the atomics over integers, floats and 16-bit floats) are one
    family over their tables."""
    with open(os.path.join(include_dir, "aclshmem.h"), encoding="utf-8") as f:
        headers = re.findall(r'^#include "(aclshmem/\w+\.h)"', f.read(), re.M)
    found = []
    for header in headers:
        with open(os.path.join(include_dir, header), encoding="utf-8") as f:
            found += re.findall(r"^ACLSHMEM_(\w+)\((ACLSHMEMI_DECLARE_\w+)\)\s*$", f.read(), re.M)
    merged = {}
    for table, macro in found:
        merged.setdefault(macro, []).append(table)
    return [(tables, macro) for macro, tables in merged.items()]


def family_templates(include_dir, tables):
    """[(templates, table names, kind)]: each family's declarations with the element type's
    NAME as ``{N}`` and its C type as ``{T}`` (kind "type"), or the width as ``{B}`` (kind
    "size"), read from the declaring macro itself (expanded with placeholders); a template is
    (name, return type, ((C type, Python name), ...))."""
    invocations = _family_invocations(include_dir)
    kinds = {name: ("size" if all(isinstance(r, int) for r in rows) else "type") for name, rows in tables.items()}
    probe = ['#include "aclshmem.h"']
    for table_names, macro in invocations:
        args = "__B__" if kinds[table_names[0]] == "size" else "__N__, __T__"
        probe.append(f"@{macro}@ {macro}({args})")
    text = preprocess(include_dir, "\n".join(probe) + "\n")
    out = []
    for table_names, macro in invocations:
        line = next(ln for ln in text.splitlines() if ln.startswith(f"@{macro}@"))[len(macro) + 2:]
        kind = kinds[table_names[0]]
        first = tables[table_names[0]][0]
        templates = []
        for decl in line.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            name, ret, params = _ffi_build.split_function(decl + ";")
            sample = name.replace("__B__", str(first)) if kind == "size" else name.replace("__N__", first[0])
            c_names = [p for _, p in params]
            params = tuple((_placeholders(t), _ffi_build.python_name(sample, p, c_names)) for t, p in params)
            templates.append((_placeholders(name), _placeholders(ret), params))
        out.append((tuple(templates), tuple(table_names), kind))
    return out


def _placeholders(text):
    return text.replace("__N__", "{N}").replace("__T__", "{T}").replace("__B__", "{B}")


def _typed_name(name, type_names):
    """(type NAME, rest) of ``aclshmem_<NAME>_<rest>``, or None."""
    m = re.match(r"^aclshmem_([a-z0-9]+)_(\w+)$", name)
    if m and m.group(1) in type_names:
        return m.group(1), m.group(2)
    return None


def abi_source(tables, functions, families, enum_values):
    """The text of _abi.py."""
    type_names = {row[0] for rows in tables.values() for row in rows if isinstance(row, tuple)}
    ctype_of = {row[0]: row[1] for rows in tables.values() for row in rows if isinstance(row, tuple)}
    atomics, reductions = {}, {}
    for name, ret, _params in functions:
        typed = _typed_name(name, type_names)
        if typed is None:
            continue
        tname, rest = typed
        if rest.startswith("atomic_"):
            atomics[(rest[len("atomic_"):], tname)] = ret != "void"
        elif rest.endswith("_reduce"):
            reductions.setdefault(rest[:-len("_reduce")], []).append((tname, ctype_of[tname]))
    lines = [f"# {_GENERATED_NOTE}", '"""The type tables of aclshmem/types.h (its X-macros, expanded) and indexes of the',
             'functions the headers declare (shmem.core\'s atomics and reductions check their types here)."""',
             ""]
    for name, rows in tables.items():
        lines.append(f"{name} = {rows!r}")
    lines += ["", "#: (operation, type NAME) -> whether aclshmem_<NAME>_atomic_<operation> returns the old value.",
              f"ATOMICS = {atomics!r}", "",
              "#: Each reduction operation and the (NAME, C type) of the types aclshmem_<NAME>_<op>_reduce takes.",
              f"REDUCE_OPS = {tuple((op, tuple(rows)) for op, rows in reductions.items())!r}", "",
              "#: Every enum of the headers: {typedef name: ((enumerator, value), ...)}.",
              "ENUMS = {"]
    for name, members in enum_values.items():
        lines.append(f"    {name!r}: {members!r},")
    lines += ["}", "",
              "#: The typed families as their declaring macros make them: (templates, names of the tables",
              "#: above, kind).  A template is (name, return type, ((C type, Python name), ...)) with the",
              "#: type's NAME as {N} and its C type as {T} (kind \"type\") or the width as {B} (kind \"size\").",
              "FAMILIES = ("]
    for templates, table_names, kind in families:
        lines.append("    ((")
        for template in templates:
            lines.append(f"        {template!r},")
        lines.append(f"    ), {table_names!r}, {kind!r}),")
    lines += [")", ""]
    return "\n".join(_wrap(line) for line in lines)


def _wrap(line, width=115):
    """A long ``NAME = (...)`` line broken after commas (for readers and diffs)."""
    if len(line) <= width:
        return line
    out, current = [], ""
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    for piece in re.split(r"(?<=\), )|(?<=, )(?=\()", line):
        if current and len(current) + len(piece) > width:
            out.append(current.rstrip())
            current = indent
        current += piece
    out.append(current.rstrip())
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Writing and checking
# ---------------------------------------------------------------------------


def generated_files(include_dir):
    """{path relative to the package: text} of every file this module makes."""
    ast = parse_headers(include_dir)
    decls = declarations(include_dir, ast)
    base, coll = decl_texts(decls)
    functions = _ffi_build.functions_of(base) + _ffi_build.functions_of(coll)
    tables = type_tables(include_dir)
    return {
        f"decl/{DECL_FILE}": base,
        f"decl/{COLL_DECL_FILE}": coll,
        ABI_MODULE_FILE: abi_source(tables, functions, family_templates(include_dir, tables), enums(ast)),
        _ffi_build.FAMILIES_MODULE_FILE: _ffi_build.families_source(_ffi_build.functions_of(base), "base"),
        _ffi_build.COLL_FAMILIES_MODULE_FILE: _ffi_build.families_source(_ffi_build.functions_of(coll), "coll"),
    }


def stale_files(include_dir, package_dir=HERE):
    """The generated files that differ from what the headers give (missing ones too)."""
    stale = []
    for rel, text in generated_files(include_dir).items():
        path = os.path.join(package_dir, rel)
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            stale.append(rel)
    return stale


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    include_dir = rest[0] if rest else find_include_dir()
    if include_dir is None:
        print("aclshmem.h not found: pass the include folder or set ACLSHMEM_INCLUDE_DIR", file=sys.stderr)
        return 2
    if check:
        stale = stale_files(include_dir)
        for rel in stale:
            print(f"stale: {rel} (run python -m shmem._abi_build)", file=sys.stderr)
        return 1 if stale else 0
    for rel, text in generated_files(include_dir).items():
        path = os.path.join(HERE, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
