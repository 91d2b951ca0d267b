"""The documentation covers the code: every public name, C function, environment
variable and command-line option has its entry in the built HTML reference.

The HTML comes from ``SHMEM_DOCS_HTML`` (ci/test.sh builds the site with
``sphinx-build -W`` first and passes its folder), or is built here into a temporary
folder.  The doctests of the pages (the runnable examples) are run by ci/test.sh with
``sphinx-build -b doctest``.
"""

import ast
import glob
import importlib
import os
import re
import sys
import types

import pytest

from integration_helpers import DOCS, PACKAGES, REPO, run

MODULES = ["shmem.core", "shmem._pyshmem", "shmem_torch"]


@pytest.fixture(scope="session")
def html(tmp_path_factory):
    """{page name: HTML text} of the built site."""
    out = os.environ.get("SHMEM_DOCS_HTML")
    if not (out and os.path.isfile(os.path.join(out, "index.html"))):
        pytest.importorskip("sphinx")
        pytest.importorskip("sphinxarg")
        out = str(tmp_path_factory.mktemp("docs-html"))
        run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", DOCS, out], timeout=600)
    pages = {}
    for path in glob.glob(os.path.join(out, "**", "*.html"), recursive=True):
        with open(path, encoding="utf-8") as f:
            pages[os.path.relpath(path, out)] = f.read()
    return pages


def _reference(html):
    return "".join(text for page, text in html.items() if page.startswith("reference" + os.sep))


def _all_from_source(path):
    """__all__ of a module file, read without importing it (for shmem_torch without torch)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no __all__")


def public_names(modname):
    """__all__, or dir() without underscores and without submodules."""
    try:
        module = importlib.import_module(modname)
    except ImportError:
        if modname != "shmem_torch":
            raise
        return _all_from_source(os.path.join(PACKAGES, "shmem-torch", "src", "shmem_torch", "__init__.py"))
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return [n for n in names if not isinstance(getattr(module, n, None), types.ModuleType)]


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_name_has_an_entry(html, modname):
    reference = _reference(html)
    names = public_names(modname)
    assert names, f"{modname} has no public names"
    missing = [n for n in names if f'id="{modname}.{n}"' not in reference]
    assert not missing, (f"{len(missing)} public names of {modname} have no entry in the API reference "
                         f"(docs/reference): {missing}")


def test_the_families_are_tables_not_stubs(html):
    """The generated families of shmem._pyshmem are rows of tables, not autodoc entries."""
    pyshmem = importlib.import_module("shmem._pyshmem")
    native = importlib.import_module("shmem._native")
    page = html[os.path.join("reference", "pyshmem.html")]
    assert sorted(pyshmem.GENERATED) == sorted(f[0] for f in native.family_functions())
    stubs = [n for n in pyshmem.GENERATED if f'<dt class="sig sig-object py" id="shmem._pyshmem.{n}"' in page]
    assert not stubs, f"generated functions documented one by one: {stubs[:5]}"
    assert page.count('class="shmem-family') == len(native.FAMILIES)


def test_every_c_function_has_an_entry(html):
    from shmem import _native
    from shmem_sphinx import cheaders

    page = html[os.path.join("reference", "c-api.html")]
    include = os.path.join(PACKAGES, "shmem-native", "include")
    declared = cheaders.all_function_names(include)
    bound = {name for name, _ret, _params, _c, _t in _native.family_functions()}
    bound |= set(re.findall(r"^\S.*?\b(\w+)\(", _native.cdef_source(), re.M))
    bound -= {"typedef"}
    assert set(declared) >= {n for n in bound if n.startswith(("aclshmem", "util_"))}, \
        "the header reader misses functions that shmem-core binds"
    missing = [n for n in declared if f'id="c.{n}"' not in page]
    assert not missing, f"C functions without an entry in docs/reference/c-api: {missing}"


def _functions_the_compiler_declares(include, tmp_path, headers=("aclshmem.h",)):
    """{"<header>": {names}} of every function GCC sees declared once it has preprocessed
    the headers (X-macro families expanded): -aux-info writes one prototype per declared
    function, after a comment naming the file and line it comes from."""
    source, aux = tmp_path / "includes_all.c", tmp_path / "includes_all.aux"
    source.write_text("".join(f"#include <{h}>\n" for h in headers))
    run(["gcc", "-std=gnu11", "-fsyntax-only", f"-I{include}", "-aux-info", str(aux), str(source)])
    found = {}
    for path, name in re.findall(r"^/\* (\S+?):\d+:\w+ \*/ extern .*?\b(\w+) \(", aux.read_text(), re.M):
        rel = os.path.relpath(path, include)
        if not rel.startswith(".."):
            found.setdefault(rel.replace(os.sep, "/"), set()).add(name)
    return found


def _assert_same_functions(read, compiled):
    """read (the header reader's) and compiled (gcc's) list the same functions per header."""
    for rel in sorted(set(compiled) | set(read)):
        assert read.get(rel, set()) == compiled.get(rel, set()), (
            f"{rel}: the header reader and gcc disagree; only gcc: "
            f"{sorted(compiled.get(rel, set()) - read.get(rel, set()))}, only the reader: "
            f"{sorted(read.get(rel, set()) - compiled.get(rel, set()))}")


def test_the_header_reader_finds_what_the_compiler_declares(tmp_path):
    """docs/_ext reads the headers without preprocessing them (see docs/README.md for
    why): it must still find, header by header, exactly the functions the C compiler
    declares, the generated families included."""
    from shmem_sphinx import cheaders

    include = os.path.join(PACKAGES, "shmem-native", "include")
    compiled = _functions_the_compiler_declares(include, tmp_path)
    read = {rel: set(names) for rel, names in cheaders.functions_by_header(include).items() if names}
    assert sum(len(names) for names in compiled.values()) > 500, "gcc -aux-info listed too few functions"
    _assert_same_functions(read, compiled)


def test_every_openshmem_function_has_an_entry(html):
    """Every function of shmem.h and shmemx.h (families expanded) and every C11 generic name
    has an entry in docs/reference/openshmem."""
    from shmem_sphinx import cheaders

    page = html[os.path.join("reference", "openshmem.html")]
    include = os.path.join(PACKAGES, "shmem-native", "include")
    declared = [n for names in cheaders.openshmem_functions_by_header(include).values() for n in names]
    declared += cheaders.generic_names(include)
    assert len(declared) > 1000, "the header reader found too few OpenSHMEM functions"
    missing = [n for n in declared if f'id="c.{n}"' not in page]
    assert not missing, f"OpenSHMEM functions without an entry in docs/reference/openshmem: {missing}"


def test_the_header_reader_finds_what_the_compiler_declares_in_shmem_h(tmp_path):
    """The same check as for aclshmem.h, on the OpenSHMEM headers (the compiler's view
    includes the C11 part; names of the header's own machinery, shmemi_*, are left out)."""
    from shmem_sphinx import cheaders

    include = os.path.join(PACKAGES, "shmem-native", "include")
    declared = _functions_the_compiler_declares(include, tmp_path, cheaders.OPENSHMEM_HEADERS)
    compiled = {rel: {n for n in names if not cheaders.is_internal(n)} for rel, names in declared.items()}
    read = {rel: set(names) for rel, names in cheaders.openshmem_functions_by_header(include).items()}
    assert sum(len(names) for names in compiled.values()) > 1000, "gcc -aux-info listed too few functions"
    _assert_same_functions(read, compiled)


def _environment_variables():
    names = set()
    for path in glob.glob(os.path.join(PACKAGES, "shmem-native", "src", "**", "*.c"), recursive=True):
        with open(path, encoding="utf-8") as f:
            names |= set(re.findall(r'getenv\("([A-Z0-9_]+)"\)', f.read()))
    for path in glob.glob(os.path.join(PACKAGES, "shmem-core", "src", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        names |= set(re.findall(r'ENV_[A-Z_]+ = "([A-Z0-9_]+)"', text))
        names |= set(re.findall(r'environ(?:\.get)?[\[(]"([A-Z0-9_]+)"', text))
    return names


def test_every_environment_variable_has_an_entry(html):
    page = html[os.path.join("reference", "environment.html")]
    names = _environment_variables()
    assert {"SHMEM_LOG_LEVEL", "ACLSHMEM_LIBRARY", "SHMEM_RUN_UID"} <= names
    missing = sorted(n for n in names if n not in page)
    assert not missing, f"environment variables missing from docs/reference/environment.rst: {missing}"


def _options(parser):
    return {s for action in parser._actions for s in action.option_strings
            if s.startswith("--") and s != "--help"}


def test_every_command_line_option_has_an_entry(html):
    from shmem_sphinx.cli import launcher_parser
    from shmem_tools import config, perf, prof

    tools = html[os.path.join("reference", "tools.html")]
    launcher = html[os.path.join("reference", "launcher.html")]
    for parser, page in ((config._parser(), tools), (perf._parser(), tools), (prof._parser(), tools),
                         (launcher_parser(), launcher)):
        missing = sorted(o for o in _options(parser) if o not in page)
        assert not missing, f"{parser.prog}: options missing from the reference: {missing}"


def test_every_page_is_reachable(html):
    index = html["index.html"]
    for page in ("install", "quickstart", "concepts", "guides/torch", "guides/atomics", "guides/diagnostics",
                 "guides/openshmem",
                 "guides/benchmarking", "guides/profiling", "migration", "troubleshooting",
                 "reference/index", "changelog"):
        assert f'href="{page}.html"' in index, f"{page} is not linked from the front page"


def test_examples_shown_are_examples_run():
    """Every program in docs/examples is shown on a page, and every page that shows one
    also runs it (a testcode block that names it)."""
    examples = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DOCS, "examples", "*"))
                      if p.endswith((".py", ".c")))
    sources = {}
    for path in glob.glob(os.path.join(DOCS, "**", "*.rst"), recursive=True):
        with open(path, encoding="utf-8") as f:
            sources[os.path.relpath(path, DOCS)] = f.read()
    for name in examples:
        shown = [p for p, text in sources.items() if f"examples/{name}" in text]
        assert shown, f"docs/examples/{name} is not shown on any page"
        for page in shown:
            text = sources[page]
            runs = (f'"{name}"' in text) or (name == "jobs.py" and "import jobs" in text)
            assert runs, f"{page} shows examples/{name} but does not run it"
    assert os.path.isdir(os.path.join(REPO, "docs", "_ext", "shmem_sphinx"))


def _first_code_line(path):
    """1-based number of the first line after the file's docstring or header comment."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    i = 0
    if lines[0].startswith('"""'):
        i = 1 if lines[0].count('"""') == 2 else next(k for k in range(1, len(lines)) if '"""' in lines[k]) + 1
    elif lines[0].startswith("/*"):
        i = next(k for k in range(len(lines)) if "*/" in lines[k]) + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i + 1


def test_examples_are_shown_from_their_first_line_of_code():
    """A page that shows an example without its docstring (``:lines: N-``) starts at the
    example's first line of code, so no import or statement is cut off."""
    for rst in glob.glob(os.path.join(DOCS, "**", "*.rst"), recursive=True):
        with open(rst, encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"\.\. literalinclude:: (\S+)\n((?:   :\S+:.*\n)*)", text):
            lines = re.search(r":lines: (\d+)-\n", m.group(2))
            if not lines:
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(rst), m.group(1)))
            assert int(lines.group(1)) == _first_code_line(path), (
                f"{os.path.relpath(rst, DOCS)} shows {m.group(1)} from line {lines.group(1)}, "
                f"but its code starts at line {_first_code_line(path)}")
