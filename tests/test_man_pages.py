"""The manual pages, as ``meson install`` puts them into a staging prefix (issue #28).

``meson setup -Dman=enabled -Dopenshmem_names=enabled``, the ``man-pages`` target and
``meson install --tags man`` into a temporary prefix; then, with ``MANPATH`` set to it:

* ``man -w`` finds a page for every function the public headers declare (``aclshmem.h``'s
  and ``shmem.h``/``shmemx.h``'s, families expanded), for every C11 generic name of
  ``shmem.h`` (``shmem_put``), for the commands (``aclshmemrun``, ``oshrun``, ``shmemrun``,
  ``aclshmemcc``, ``oshcc``, ... and ``shmem-config``, ``shmem-perf``, ``shmem-prof``) and
  for ``aclshmem(7)``;
* every page that is not a ``.so`` link has a NAME line that ``lexgrog`` reads, naming
  the page, and ``man --warnings`` (80 columns) prints no warning for it; every ``.so``
  link names a page that is there;
* the pages say what the reference says: aclshmem_putmem(3) has its prototype, the
  sized family's page says that the count is in elements, aclshmem(7) lists
  ``SHMEM_JOB_SECRET``, shmem-config(1) its ``--check`` option.

Needs meson, ninja, man-db (``man``, ``lexgrog``) and, in the Python that runs meson
(ci/test.sh: its venv, which runs this test too), Sphinx and sphinx-argparse.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from integration_helpers import PACKAGES, REPO, run

INCLUDE = os.path.join(PACKAGES, "shmem-native", "include")


def _missing_tools():
    missing = [t for t in ("meson", "ninja", "man", "lexgrog") if not shutil.which(t)]
    for module in ("sphinx", "sphinxarg"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"the Python module {module}")
    return missing


pytestmark = pytest.mark.skipif(bool(_missing_tools()), reason=f"needs {', '.join(_missing_tools())}")


@pytest.fixture(scope="module")
def mandir(tmp_path_factory):
    top = tmp_path_factory.mktemp("man")
    build, prefix = str(top / "build"), str(top / "usr")
    run(["meson", "setup", build, REPO, f"--prefix={prefix}", "-Dman=enabled", "-Dopenshmem_names=enabled",
         "-Dtests=false", "-Dexamples=false"], timeout=300)
    run(["meson", "compile", "-C", build, "man-pages"], timeout=600)
    run(["meson", "install", "-C", build, "--no-rebuild", "--tags", "man", "--quiet"], timeout=300)
    found = [os.path.join(root, d) for root, dirs, _f in os.walk(prefix) for d in dirs if d == "man"]
    assert found, f"nothing installed under {prefix}"
    return found[0]


def _man(mandir, *args):
    env = dict(os.environ, MANPATH=mandir, MANWIDTH="80", LC_ALL="C.UTF-8")
    return subprocess.run(["man", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=60)


def _pages(mandir):
    """[(path, is a .so link)] of every installed page."""
    out = []
    for section in sorted(os.listdir(mandir)):
        for name in sorted(os.listdir(os.path.join(mandir, section))):
            path = os.path.join(mandir, section, name)
            with open(path, encoding="utf-8") as f:
                first = f.readline()
            out.append((path, first.startswith(".so ")))
    return out


def _names_that_need_a_page():
    sys.path.insert(0, os.path.join(REPO, "docs", "_ext"))
    from shmem_sphinx import cheaders  # the header reader of the reference

    names = cheaders.all_function_names(INCLUDE)
    for functions in cheaders.openshmem_functions_by_header(INCLUDE).values():
        names += functions
    return sorted(set(names) | set(cheaders.generic_names(INCLUDE)))


def test_man_finds_a_page_for_every_function_command_and_the_environment(mandir):
    wanted = [(3, n) for n in _names_that_need_a_page()]
    wanted += [(1, n) for n in ("aclshmemrun", "oshrun", "shmemrun", "aclshmemcc", "aclshmemc++", "oshcc",
                                "oshc++", "oshCC", "shmemcc", "shmemc++", "shmemCC",
                                "shmem-config", "shmem-perf", "shmem-prof")]
    wanted += [(7, "aclshmem")]
    assert len(wanted) > 1000, len(wanted)
    missing = [f"{n}({s})" for s, n in wanted if not os.path.isfile(os.path.join(mandir, f"man{s}", f"{n}.{s}"))]
    assert not missing, f"{len(missing)} names without a page: {missing[:40]}"
    for section, name in [(3, "aclshmem_putmem"), (3, "aclshmem_int32_put"), (3, "shmem_put"), (3, "shmem_init"),
                          (1, "shmem-config"), (1, "oshrun"), (1, "oshcc"), (7, "aclshmem")]:
        where = _man(mandir, "-w", str(section), name)
        assert where.returncode == 0 and where.stdout.startswith(mandir), (name, where.stdout, where.stderr)


def test_every_page_has_a_name_line_and_formats_without_a_warning(mandir):
    problems = []
    pages = _pages(mandir)
    for path, is_link in pages:
        if is_link:
            with open(path, encoding="utf-8") as f:
                target = f.readline().split()[1]
            if not os.path.isfile(os.path.join(mandir, target)):
                problems.append(f"{path}: .so to {target}, which is not installed")
            continue
        name = os.path.basename(path).rsplit(".", 1)[0]
        lex = subprocess.run(["lexgrog", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if lex.returncode != 0 or not re.search(rf'"{re.escape(name)} - \S', lex.stdout):
            problems.append(f"lexgrog {path}: {lex.stdout.strip()}")
        shown = _man(mandir, "--warnings", "-l", path)
        if shown.returncode != 0 or shown.stderr.strip():
            problems.append(f"man --warnings {path}: {shown.stderr.strip()[:500]}")
    assert sum(1 for _p, link in pages if not link) > 150
    assert not problems, "\n".join(problems[:30])


def _text(mandir, section, name):
    """The page as man shows it, without hyphenation, on one line."""
    return " ".join(_man(mandir, "--nh", "--nj", section, name).stdout.split())


def test_the_pages_say_what_the_reference_says(mandir):
    putmem = _text(mandir, "3", "aclshmem_putmem")
    assert "void aclshmem_putmem(void *dst, const void *src, size_t elem_size, int32_t pe)" in putmem
    assert "#include <aclshmem.h>" in putmem
    sized = _text(mandir, "3", "aclshmem_put64")
    assert "is a number of elements, not bytes" in sized and "aclshmem_put64" in sized
    environment = _text(mandir, "7", "aclshmem")
    assert "SHMEM_JOB_SECRET" in environment and "ENVIRONMENT VARIABLES" in environment
    assert "--check" in _text(mandir, "1", "shmem-config")
    oshrun = _text(mandir, "1", "oshrun")
    assert "ACLSHMEMRUN(1)" in oshrun and "--nnodes" in oshrun
