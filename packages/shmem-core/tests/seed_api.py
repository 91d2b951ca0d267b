"""The Python API that the seed (the user's API reference, ``shared/seeds/000_*.txt`` beside
the repository) promises, read from the seed's text, so that a name it lists cannot go
missing from the packages unnoticed.

The seed has three parts: ``shmem.core API``, ``shmem._pyshmem API`` and ``shmem API
(Python Top-Level Wrapper)``.  Each entry is a numbered heading (``12. signal_wait — ...``,
``3. SignalOp enumeration class — ...``) followed by its ``def`` or ``class`` lines and a
table of parameters, attributes or enumerated values.  Families are written with
``{TYPE}`` or ``{BITS}`` and the table names the supported values ("Supported type: float,
double, ..."), which expand them.

``extract(text)`` gives one line per promise (see ``Promise``); ``seed_names.txt`` next to
this file is the extraction of the seed at the time it was last updated, used where the
seed is not present (a test checks that the two agree when it is).
"""

import ast
import builtins
import glob
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SHIPPED = os.path.join(HERE, "seed_names.txt")

# The seed's part headings and the module each part describes.
PARTS = (
    ("shmem.core API", "shmem.core"),
    ("shmem._pyshmem API", "shmem._pyshmem"),
    ("shmem API (Python Top-Level Wrapper)", "shmem"),
)

# Headings of text that describes no API entry (it ends the entry before it).
_PROSE = ("Class", "External APIs", "Extended Host API Bindings", "Python API Constraints and Limitations",
          "Attributes", "Functionality and Constraints")

_HEADING = re.compile(r"^(\d+)\. ([A-Za-z_][\w{}]*)( enumeration class| class)?\s*(?:—|:)")
_SUPPORTED = re.compile(r"^\s*(TYPE|BITS)\t-\t.*Supported (?:type|option)s?: (.*?)\.?$")
_ENUM_VALUE = re.compile(r"^\s+([A-Z][A-Z0-9_]*)\t")
_ATTRIBUTE = re.compile(r"^\s+([A-Za-z_]\w*)(\(.*?\))?\t\[(?:in|out|in/out)\]")
_DEF = re.compile(r"^\s*def (\S+?)\((.*)\)\s*(?:->.*)?:?\s*$")
_CONSTANT = re.compile(r"\b(ACLSHMEM_[A-Z0-9_]+|Aclshmem[A-Z]\w*)\b")
# Names a signature may use that are not the package's: typing, builtins, torch.
_NOT_OURS = set(dir(builtins)) | {"Optional", "Union", "List", "Tuple", "Dict", "Any", "Callable", "Enum",
                                  "torch"}


def find_seed(repo=REPO):
    """The seed file beside the repository (``../shared/seeds/000_*.txt``), or None."""
    found = sorted(glob.glob(os.path.join(os.path.dirname(repo), "shared", "seeds", "000_*.txt")))
    return found[0] if found else None


def _parts(text):
    """[(module, [lines])] for the three parts of the seed."""
    lines = text.splitlines()
    starts = []
    for i, line in enumerate(lines):
        for heading, module in PARTS:
            if line.strip() == heading:
                starts.append((i, module))
    assert [m for _, m in starts] == [m for _, m in PARTS], f"the seed's parts are not where expected: {starts}"
    bounds = [i for i, _ in starts] + [len(lines)]
    return [(module, lines[bounds[k] + 1:bounds[k + 1]]) for k, (_, module) in enumerate(starts)]


def _entries(lines):
    """[(name, kind, [body lines])] of one part; kind is 'function', 'class' or 'enum'.
    The constraints at the end of a part are not an entry."""
    entries, current = [], None
    for line in lines:
        m = _HEADING.match(line)
        if m:
            kind = {" enumeration class": "enum", " class": "class"}.get(m.group(3), "function")
            current = (m.group(2), kind, [])
            entries.append(current)
        elif line.strip() in _PROSE:
            current = None
        elif current is not None:
            current[2].append(line)
    return entries


def _expansions(name, body):
    """The names a template entry stands for (the name itself when it has no template)."""
    names = [name]
    for line in body:
        m = _SUPPORTED.match(line)
        if m:
            placeholder = "{" + m.group(1) + "}"
            values = [v.strip() for v in re.split(r",|\bor\b", m.group(2)) if v.strip()]
            names = [n.replace(placeholder, v) for n in names for v in values]
    assert "{" not in "".join(names), f"{name}: a template without a 'Supported ...' list"
    return names


def _signature(body, name):
    """(parameter names, names the annotations and defaults use) of the entry's def line."""
    for line in body:
        m = _DEF.match(line)
        if m and m.group(1).replace("{TYPE}", "").replace("{BITS}", "") == name.replace("{TYPE}", "").replace(
                "{BITS}", ""):
            tree = ast.parse(f"def f({m.group(2)}): pass")
            args = tree.body[0].args
            params = [a.arg for a in args.posonlyargs + args.args]
            if args.vararg:
                params.append("*" + args.vararg.arg)
            params += [a.arg for a in args.kwonlyargs]
            used = {n.id for n in ast.walk(tree.body[0].args) if isinstance(n, ast.Name)}
            return params, sorted(used - _NOT_OURS - set(params))
    return None, []


def extract(text):
    """Every promise of the seed, one line each, sorted:

    * ``MODULE NAME(p1, p2, ...)``: a function and its parameter names, in order;
    * ``MODULE NAME``: a class, or a name that a signature or the text uses (a constant
      such as ``ACLSHMEM_TEAM_WORLD``, an exception such as ``AclshmemInvalid``);
    * ``MODULE CLASS.MEMBER``: an enumerated value, attribute or method of a class.
    """
    out = set()
    for module, lines in _parts(text):
        entries = _entries(lines)
        for name, kind, body in entries:
            if kind == "function":
                params, used = _signature(body, name)
                assert params is not None, f"{module}.{name}: no def line"
                for full in _expansions(name, body):
                    out.add(f"{module} {full}({', '.join(params)})")
                out.update(f"{module} {u}" for u in used)
                continue
            out.add(f"{module} {name}")
            member = _ENUM_VALUE if kind == "enum" else _ATTRIBUTE
            for line in body:
                m = member.match(line)
                if m:
                    out.add(f"{module} {name}.{m.group(1)}")
        # Constants and exceptions the entries' text names (the constraints are left out:
        # they speak of both APIs at once).
        for _name, _kind, body in entries:
            out.update(f"{module} {c}" for c in _CONSTANT.findall("\n".join(body)))
    return sorted(out)


def load():
    """(promises, where they come from): the seed's own text when it is beside the
    repository, else the shipped copy of its extraction."""
    seed = find_seed()
    if seed:
        with open(seed, encoding="utf-8") as f:
            return extract(f.read()), seed
    with open(SHIPPED, encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line and not line.startswith("#")], SHIPPED


def parse(promise):
    """(module, name, parameters or None) of one promise line."""
    module, rest = promise.split(" ", 1)
    m = re.match(r"^([\w.]+)\((.*)\)$", rest)
    if m:
        return module, m.group(1), [p for p in m.group(2).split(", ") if p]
    return module, rest, None


if __name__ == "__main__":
    # Regenerates the shipped copy: python seed_api.py > seed_names.txt
    path = find_seed()
    assert path, "the seed is not beside the repository"
    with open(path, encoding="utf-8") as f:
        print(f"# Extracted by seed_api.py from {os.path.basename(path)}; regenerate with "
              f"`python seed_api.py > seed_names.txt`.")
        print("\n".join(extract(f.read())))
