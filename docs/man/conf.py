# Sphinx configuration of the manual pages (sphinx-build -b man); docs/man/build.py runs it
# (with -c docs/man) on the page sources it wrote into a build folder, never into docs/.
# The pages list (man_pages) comes from those sources: shmem_sphinx.manpages.
import os
import sys

MAN = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(MAN)
REPO = os.path.dirname(DOCS)
PACKAGES = os.path.join(REPO, "packages")
# The parsers of the launcher and of the tools are read from this checkout, as in the site.
SOURCES = [os.path.join(PACKAGES, name, "src") for name in ("shmem-core", "shmem-tools")]
sys.path[:0] = [os.path.join(DOCS, "_ext")] + SOURCES

with open(os.path.join(PACKAGES, "shmem-native", "VERSION"), encoding="utf-8") as _f:
    version = release = _f.read().strip()

project = "SHMEM"
author = "the SHMEM developers"
root_doc = "index"
extensions = ["shmem_sphinx.capi", "shmem_sphinx.manpages", "sphinxarg.ext"]
shmem_include_dir = os.path.join(PACKAGES, "shmem-native", "include")
shmem_docs_dir = DOCS
man_make_section_directory = True
man_show_urls = False
highlight_language = "none"
