# Sphinx configuration of the SHMEM documentation.
#
#   python -m pip install -r docs/requirements.txt
#   python -m sphinx -W -b html docs docs/_build/html       # the site
#   python -m sphinx -W -b doctest docs docs/_build/doctest # run the examples
#
# The pure-Python packages are documented from this checkout (their src/ folders go
# first on sys.path and PYTHONPATH), so the reference always matches the code next to
# it.  The HTML build needs no native library; the doctest build runs real PEs and so
# needs libaclshmem: the shmem-native package installed, or ACLSHMEM_LIBRARY.
import ast
import os
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(DOCS)
PACKAGES = os.path.join(REPO, "packages")
SOURCES = [os.path.join(PACKAGES, name, "src") for name in ("shmem-core", "shmem-torch", "shmem-tools")]

sys.path[:0] = [os.path.join(DOCS, "_ext")] + SOURCES
# The PEs that the examples start import the same code.
os.environ["PYTHONPATH"] = os.pathsep.join(
    SOURCES + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


def _python_version(path):
    """__version__ of a module file, read without importing it."""
    with open(path, encoding="utf-8") as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
                return ast.literal_eval(node.value)
    return "?"


def _native_version():
    with open(os.path.join(PACKAGES, "shmem-native", "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


VERSIONS = {
    "native": _native_version(),
    "core": _python_version(os.path.join(PACKAGES, "shmem-core", "src", "shmem", "__init__.py")),
    "torch": _python_version(os.path.join(PACKAGES, "shmem-torch", "src", "shmem_torch", "__init__.py")),
    "tools": _python_version(os.path.join(PACKAGES, "shmem-tools", "src", "shmem_tools", "__init__.py")),
}

project = "SHMEM"
author = "SHMEM developers"
copyright = "the SHMEM developers"
release = VERSIONS["native"]
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinxarg.ext",
    "shmem_sphinx",
]

templates_path = []
exclude_patterns = ["_build", "_ext", "examples", "requirements.txt"]

rst_epilog = "\n".join(
    f".. |{name}_version| replace:: ``{value}``" for name, value in VERSIONS.items()
)

# --- HTML -------------------------------------------------------------------------------
try:
    import furo  # noqa: F401

    html_theme = "furo"
except ImportError:  # the default theme, when furo is not installed
    html_theme = "alabaster"
html_title = "SHMEM for every Linux machine"
html_static_path = []
html_show_sourcelink = False

# --- autodoc ----------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_mock_imports = []
try:
    import torch  # noqa: F401
except ImportError:  # the shmem_torch reference is then built against a stand-in
    autodoc_mock_imports.append("torch")

# Modules whose constants and re-exports are shown by ``.. module-extras::``.
shmem_extra_modules = ["shmem.core", "shmem._pyshmem", "shmem_torch"]

# --- the C API reference (shmem_sphinx.capi) ------------------------------------------
shmem_include_dir = os.path.join(PACKAGES, "shmem-native", "include")

# --- doctest: the runnable examples -----------------------------------------------------
doctest_global_setup = """
from shmem_sphinx.doctest_helpers import HAVE_TORCH, build_c, example, launch, remove, run, show, torchrun
"""
