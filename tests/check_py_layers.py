#!/usr/bin/env python3
"""Checks that the modules of each Python package only import downward (docs/README.md,
"Layers of the Python packages"), the Python counterpart of
packages/shmem-native/tests/check_layers.py.

Every module of a package belongs to one layer of its table in PACKAGES, lowest first.  A
module may import modules of its own layer and of layers listed before it.  It is an error
when a module imports a module of a later layer, when the modules' imports form a cycle
(inside one layer too), or when a module is in no layer.  Every import statement counts,
also one inside a function or under ``if TYPE_CHECKING:``: a deferred import still makes
the importer depend on the imported module.  Imports of other packages (the standard
library, numpy, torch, shmem from shmem_torch) are not this table's business, and neither
are imports of modules that are not files of the tree (the cffi module ``_aclshmem_cffi`` a
build generates) or of names of a package's ``__init__`` (``from . import __version__``).

    check_py_layers.py [REPO_ROOT]   check the tree (default: the folder above this script)
    check_py_layers.py --graph PKG   print the imports between PKG's modules (e.g. shmem_tools)
    check_py_layers.py --self-test   show that each kind of violation is caught

Standard library only (ast), so it runs before anything is built or installed.
"""
import ast
import os
import pathlib
import sys
import tempfile

# package -> (its src folder relative to the repository root, layers lowest first).  A layer
# is (name, module names relative to the package); "" is the package's __init__.
PACKAGES = {
    "shmem": ("packages/shmem-core/src", [
        ("errors and sizes", ["_errors", "_sizes"]),
        ("the ABI from the headers, and its build", ["_abi", "_ffi_build", "_abi_build"]),
        ("the cffi library (_aclshmem_cffi: made by a build, from decl/)", ["_aclshmem_cffi", "_native"]),
        ("runtime state", ["_state"]),
        ("argument conversions, constants and classes", ["_pyshmem_args", "_pyshmem_types"]),
        ("the generated functions", ["_pyshmem_families", "_pyshmem_coll_families"]),
        ("the one way into C", ["_pyshmem"]),
        ("bootstrap", ["_uid_exchange", "_bootstrap"]),
        ("core state and checks", ["core._state", "core.utils", "core._export", "core._logbridge"]),
        ("core types", ["core.buffer", "core.stream"]),
        ("core memory", ["core.memory"]),
        ("core init and finalize", ["core.init_final"]),
        ("core API", ["core.amo", "core.coll", "core.config", "core.direct", "core.multi_instance",
                      "core.profiling", "core.rma", "core.sync"]),
        ("core package", ["core"]),
        ("tools over the API", ["run", "testing"]),
        ("package", [""]),
    ]),
    "shmem_torch": ("packages/shmem-torch/src", [
        ("tensors", ["tensor", "_engine"]),
        ("staging", ["staging"]),
        ("tensor API", ["rma", "amo", "collectives"]),
        ("backend runtime", ["_backend_runtime"]),
        ("backend parts", ["_backend_group", "_backend_p2p", "_backend_coll"]),
        ("backend", ["backend", "_ops", "distributed"]),
        ("package", [""]),
    ]),
    "shmem_tools": ("packages/shmem-tools/src", [
        ("helpers", ["_table", "_timing", "_progress", "_baselines", "_plot", "_bench_common"]),
        ("installation", ["_install.installation", "_install.compat", "_install.runtime"]),
        ("the plug-in as the library describes it", ["_install.plugin"]),
        ("installation facts, and launching", ["_install", "_launch", "_netns"]),
        ("benchmark parts", ["_perf_pe", "_py_bench", "_dist_bench", "_dist_nodes", "_internode", "_scale",
                             "_oshmem"]),
        ("commands", ["config", "checks", "diagnose", "prof", "_selftest", "perf"]),
        ("package", [""]),
    ]),
}

# (package, importer, imported): known imports that break the order, each naming the issue
# that removes it.  They are excused from both rules; a new one is still an error.  An entry
# whose import is gone is reported (not an error) so that it gets deleted.
KNOWN_EXCEPTIONS = {}


def module_files(src, package):
    """{module name relative to the package: path} of every .py file of the package."""
    found = {}
    root = os.path.join(src, package)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), root)[:-3].replace(os.sep, ".")
                name = rel[: -len("__init__")].rstrip(".") if rel.endswith("__init__") else rel
                found[name] = os.path.join(folder, f)
    return found


def absolute(package, module, is_init, node):
    """The dotted name an ImportFrom's module part means, relative to nothing."""
    if not node.level:
        return node.module or ""
    parts = [package] + (module.split(".") if module else [])
    base = parts if is_init else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(package, module, path, modules):
    """[(line, imported module)] of the package's own modules that ``path`` imports."""

    def own(dotted):
        if dotted == package:
            return ""
        if dotted.startswith(package + "."):
            rel = dotted[len(package) + 1:]
            return rel if rel in modules else None
        return None

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_init = os.path.basename(path) == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [own(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(package, module, is_init, node)
            # "from pkg import name": name is a submodule when a file of that name exists.
            # "from . import name" takes only submodules (an attribute of the package's
            # __init__, such as __version__, was loaded before any module of the package).
            subs = [own(base + "." + alias.name) for alias in node.names if alias.name != "*"]
            targets = [s for s in subs if s is not None] or ([own(base)] if node.module else [])
        else:
            continue
        found += [(node.lineno, t) for t in targets if t is not None and t != module]
    return found


def find_cycles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def display(package, module):
    return package + ("." + module if module else "")


def check_package(root, package, src, layers, exceptions):
    """(errors, used exceptions) of one package."""
    modules = module_files(os.path.join(root, src), package)
    rank = {m: r for r, (_, members) in enumerate(layers) for m in members}
    errors, used, edges = [], set(), {}
    for module, path in sorted(modules.items()):
        where = os.path.relpath(path, root)
        if module not in rank:
            errors.append(f"{where}: {display(package, module)} is in no layer of {package}'s table")
            continue
        edges.setdefault(module, set())
        for line, target in imports_of(package, module, path, modules):
            key = (package, module, target)
            if key in exceptions:
                used.add(key)
                continue
            edges[module].add(target)
            if rank.get(target, -1) > rank[module]:
                errors.append(f"{where}:{line}: {display(package, module)} ({layers[rank[module]][0]}) imports "
                              f"{display(package, target)} of a higher layer ({layers[rank[target]][0]})")
    for cycle in find_cycles(edges):
        errors.append(f"{package}: import cycle among " + ", ".join(display(package, m) for m in cycle))
    return errors, used


def check(root, packages=None, exceptions=None):
    """(errors, notes) of the whole tree."""
    packages = PACKAGES if packages is None else packages
    exceptions = KNOWN_EXCEPTIONS if exceptions is None else exceptions
    errors, used = [], set()
    for package, (src, layers) in packages.items():
        more, hits = check_package(root, package, src, layers, exceptions)
        errors += more
        used |= hits
    notes = [f"known exception {k[1]} -> {k[2]} of {k[0]} ({v}) is no longer needed: delete it"
             for k, v in exceptions.items() if k[0] in packages and k not in used]
    return errors, notes


def print_graph(root, package):
    src, _ = PACKAGES[package]
    modules = module_files(os.path.join(root, src), package)
    for module, path in sorted(modules.items()):
        targets = sorted({t for _, t in imports_of(package, module, path, modules)})
        print(display(package, module), "->", ", ".join(display(package, t) for t in targets) or "-")


def write_tree(root, files):
    for rel, text in files.items():
        (pathlib.Path(root) / rel).parent.mkdir(parents=True, exist_ok=True)
        (pathlib.Path(root) / rel).write_text(text, encoding="utf-8")


def self_test():
    """Each kind of violation in a small package of its own must be caught."""
    layers = [("base", ["errors", "state"]), ("api", ["api", "sub.mod"]), ("package", ["", "sub"])]
    packages = {"pkg": ("src", layers)}
    good = {"src/pkg/__init__.py": "from . import api\nfrom .sub import mod\n",
            "src/pkg/errors.py": "import os\n", "src/pkg/state.py": "from .errors import E\n",
            "src/pkg/api.py": "from . import state\nfrom pkg.errors import E\n",
            "src/pkg/sub/__init__.py": "", "src/pkg/sub/mod.py": "from ..api import f\n"}
    cases = [
        ("upward import", {"src/pkg/errors.py": "from .api import f\n"}, "of a higher layer"),
        ("deferred upward import", {"src/pkg/state.py": "def f():\n    from . import api\n"}, "of a higher layer"),
        ("absolute upward import", {"src/pkg/errors.py": "import pkg.sub.mod\n"}, "of a higher layer"),
        ("cycle inside a layer", {"src/pkg/errors.py": "from . import state\n"}, "import cycle among"),
        ("module in no layer", {"src/pkg/extra.py": ""}, "in no layer"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, good)
        errors, _ = check(root, packages, {})
        if errors:
            failures += 1
            print("self-test: a layered tree was rejected:\n  " + "\n  ".join(errors))
    for name, change, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, dict(good, **change))
            errors, _ = check(root, packages, {})
            if not any(expected in e for e in errors):
                failures += 1
                print(f"self-test: {name} not caught (wanted {expected!r}, got {errors!r})")
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, dict(good, **{"src/pkg/errors.py": "from .api import f\n"}))
        errors, notes = check(root, packages, {("pkg", "errors", "api"): "test", ("pkg", "state", "api"): "test"})
        if errors or len(notes) != 1:
            failures += 1
            print(f"self-test: a known exception was not excused, or a stale one not noted ({errors!r}, {notes!r})")
    print(f"self-test: {failures} of {len(cases) + 2} cases failed")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root_default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if argv[1:2] == ["--graph"] and len(argv) == 3:
        print_graph(root_default, argv[2])
        return 0
    root = argv[1] if len(argv) > 1 else root_default
    errors, notes = check(root)
    for line in notes:
        print("note: " + line)
    for line in errors:
        print(line)
    if errors:
        print(f"{len(errors)} layer error(s); the tables are in {os.path.basename(__file__)}")
        return 1
    print("python layers: " + ", ".join(PACKAGES) + " import downward only, no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
