"""Manual pages from the sources of the reference (issue #28): ``docs/man/build.py`` runs this.

The pages are not written by hand and not kept in git: ``write_sources`` writes, into a
build folder, one small rST document per page that pulls its text from where the HTML
reference gets it, and Sphinx's man builder (``docs/man/conf.py``) turns them into roff:

* section 3, one page per public C function family: every entry of the headers that the
  C reference shows as functions (a run of declarations under one comment, as
  ``aclshmem_putmem`` / ``getmem`` / ``_nbi``), and every generated X-macro family (as
  ``aclshmem_<T>_put``), rendered by the same ``.. c-api-header::`` directive with
  ``:only:``.  The page is named after the entry's first function; every other name it
  declares gets a ``.so`` page that points to it, so ``man aclshmem_int32_put`` and
  ``man shmem_put`` (a C11 generic name: the page of the family it calls) work;
* section 1, the commands: ``aclshmemrun`` (``oshrun``, ``shmemrun``) and ``aclshmemcc``
  (``oshcc`` and the other wrapper names) from ``docs/reference/launcher.rst``, and
  ``shmem-config``, ``shmem-perf``, ``shmem-prof`` from their argument parsers, as
  ``docs/reference/tools.rst`` shows them;
* section 7, ``aclshmem``: the environment variables (``docs/reference/environment.rst``)
  and the types and constants of ``aclshmem/types.h``.

References of the included pages to other pages of the HTML site (``:ref:``, ``:doc:``)
become their titles (``missing_reference``).
"""

import json
import os
import re
import types

from . import cheaders

PAGES_FILE = "pages.json"
#: The OpenSHMEM names of the launcher and of the compiler wrappers (their own pages point
#: to aclshmemrun(1) and aclshmemcc(1); installed only with the programs of those names).
GENERIC_LAUNCHERS = ("oshrun", "shmemrun")
GENERIC_WRAPPERS = ("oshcc", "oshc++", "oshCC", "shmemcc", "shmemc++", "shmemCC")
TOOLS = (("shmem-config", "shmem_tools.config"), ("shmem-perf", "shmem_tools.perf"),
         ("shmem-prof", "shmem_tools.prof"))


class Page:
    """One manual page: its name and section, the NAME line's text, its rST, and the other
    names that point to it."""

    def __init__(self, name, section, description, rst, aliases=()):
        self.name, self.section, self.description = name, section, description
        self.rst, self.aliases = rst, list(aliases)

    @property
    def docname(self):
        return f"man{self.section}/{self.name}"


def _title(name):
    bar = "=" * len(name)
    return [bar, name, bar, ""]


def description(doc, fallback):
    """The first sentence of a comment, on one line, for the NAME section."""
    text = " ".join((doc or "").split())
    if not text:
        return fallback
    first = re.split(r"(?<=[a-z0-9)\]])\. ", text + " ", maxsplit=1)[0].strip().rstrip(".")
    if len(first) > 100:
        first = first[:100].rsplit(" ", 1)[0] + " ..."
    return first


# --- section 3: the C functions -----------------------------------------------------------

def _include_line(rel):
    return "aclshmem.h" if rel.startswith("aclshmem/") else rel


def _c_entries(include_dir):
    """[(header, entry, [names])] for every function entry and expanded family."""
    tables = cheaders.parse_tables(os.path.join(include_dir, "aclshmem", "types.h"))
    out = []
    for rel in cheaders.umbrella_order(include_dir) + list(cheaders.OPENSHMEM_HEADERS):
        header = cheaders.parse_header(os.path.join(include_dir, rel), tables)
        for e in header.entries:
            if e.kind == "function":
                out.append((rel, e, list(e.data.get("names", [e.name]))))
            elif e.kind == "family" and e.data["rows"]:
                out.append((rel, e, [n for _row, names in cheaders.expand_family(e) for n in names]))
    return out


def _c_page(rel, entry, names, see_also):
    if entry.kind == "family":
        family = re.sub(r"^(ACLSHMEMI|SHMEMI)_DECLARE_", "", entry.name)
        fallback = f"the generated family {family} of {rel}, one function per element type"
    else:
        fallback = f"a function of {rel}"
    rst = _title(names[0]) + [
        "Synopsis", "--------", "",
        f"``#include <{_include_line(rel)}>``; link with ``-laclshmem`` "
        "(``pkg-config --cflags --libs aclshmem``), or build with ``oshcc``.", "",
        "Description", "-----------", "",
        f".. c-api-header:: {rel}",
        f"   :only: {entry.name}", "",
    ]
    if entry.kind == "family":
        rst += [f"Every name in the table is a function of its own; ``man NAME`` shows this page.", ""]
    rst += ["See also", "--------", "", ", ".join(f"**{s}**\\ (3)" for s in see_also) + ", **aclshmem**\\ (7)", ""]
    return Page(names[0], 3, description(entry.doc, fallback), rst, names[1:])


def _generic_targets(include_dir, pages_by_name):
    """{C11 generic name: the page of the family it calls} (shmem_put -> the page with
    shmem_int_put, ...)."""
    out = {}
    for name in cheaders.generic_names(include_dir):
        op = name[len("shmem_"):]
        for page_name, page in pages_by_name.items():
            if any(re.fullmatch(rf"shmem_(?!ctx_)[a-z0-9]+_{re.escape(op)}", n) for n in [page_name] + page.aliases):
                out[name] = page
                break
    return out


def c_pages(include_dir):
    """The section-3 pages, every name the headers declare pointing to one of them."""
    entries = _c_entries(include_dir)
    pages, taken = [], set()
    by_header = {}
    for rel, _e, names in entries:
        by_header.setdefault(rel, []).append(names[0])
    for rel, entry, names in entries:
        names = [n for n in dict.fromkeys(names) if n not in taken]
        if not names:
            continue
        taken.update(names)
        # The neighbours in the header (shmem.h has some seventy pages): five on each side.
        siblings = by_header[rel]
        at = siblings.index(names[0]) if names[0] in siblings else 0
        see_also = [n for n in siblings[max(0, at - 5):at + 6] if n != names[0]]
        pages.append(_c_page(rel, entry, names, see_also))
    by_name = {p.name: p for p in pages}
    for generic, page in _generic_targets(include_dir, by_name).items():
        if generic not in taken:
            taken.add(generic)
            page.aliases.append(generic)
    return pages


# --- sections 1 and 7 ---------------------------------------------------------------------

def _included(rel, start=None, end=None):
    """An include of docs/REL (write_sources makes {DOCS} a path from the page's folder)."""
    lines = [f".. include:: {{DOCS}}/{rel}"]
    if start:
        lines.append(f"   :start-after: {start}")
    if end:
        lines.append(f"   :end-before: {end}")
    return lines + [""]


def launcher_pages(generic_names):
    launcher = "reference/launcher.rst"
    # The included section's own title ("oshrun: any program ...") is the first section.
    run = Page("aclshmemrun", 1, "start the PEs of a SHMEM or OpenSHMEM job", _title("aclshmemrun") + [
        ] + _included(launcher, ".. _oshrun:", ".. _oshcc:") + [
        "Options", "-------", "",
        ".. argparse::", "   :module: shmem_sphinx.cli", "   :func: launcher_parser", "   :prog: oshrun", "",
        "See also", "--------", "", "**aclshmemcc**\\ (1), **shmem_init**\\ (3), **aclshmem**\\ (7)", ""],
        GENERIC_LAUNCHERS if generic_names else ())
    cc = Page("aclshmemcc", 1, "compile and link a program with libaclshmem", _title("aclshmemcc") + [
        ] + _included(launcher, ".. _oshcc:", ".. _openshmem-names:") + [
        "See also", "--------", "", "**aclshmemrun**\\ (1), **aclshmem**\\ (7)", ""],
        ("aclshmemc++",) + (GENERIC_WRAPPERS if generic_names else ()))
    return [run, cc]


def tool_pages():
    """shmem-config, shmem-perf and shmem-prof, from their parsers (needs shmem_tools)."""
    import importlib

    pages = []
    for prog, module in TOOLS:
        parser = importlib.import_module(module)._parser()
        others = ", ".join(f"**{p}**\\ (1)" for p, _m in TOOLS if p != prog)
        pages.append(Page(prog, 1, description(parser.description, f"the {prog} command"), _title(prog) + [
            ".. argparse::", f"   :module: {module}", "   :func: _parser", f"   :prog: {prog}", "",
            "See also", "--------", "", others + ", **aclshmem**\\ (7)", ""]))
    return pages


def environment_page():
    # Sections underlined with "=", as the included page's title: they are its siblings.
    rst = _title("aclshmem") + [
        "Description", "===========", "",
        "``libaclshmem`` is a symmetric-memory communication library with the API of Ascend "
        "SHMEM (``#include <aclshmem.h>``, every function has a page in section 3, as "
        "**aclshmem_putmem**\\ (3)) and of OpenSHMEM 1.5 (``#include <shmem.h>``, as "
        "**shmem_put**\\ (3)). Programs are built with **aclshmemcc**\\ (1) and started with "
        "**aclshmemrun**\\ (1). This page lists the environment variables that the library "
        "and its launchers read, then the types and constants of ``aclshmem/types.h``.", ""]
    rst += _included("reference/environment.rst")
    rst += ["Types and constants", "===================", "", ".. c-api-header:: aclshmem/types.h", ""]
    return Page("aclshmem", 7, "environment variables, types and constants of libaclshmem", rst)


# --- writing ------------------------------------------------------------------------------

def all_pages(include_dir, generic_names, tools):
    pages = c_pages(include_dir) + launcher_pages(generic_names) + [environment_page()]
    return pages + (tool_pages() if tools else [])


def write_sources(srcdir, docs_dir, pages):
    """One rST document a page, and pages.json (read by setup() below)."""
    listing = []
    for page in pages:
        path = os.path.join(srcdir, page.docname + ".rst")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        docs = os.path.relpath(docs_dir, os.path.dirname(path))  # Sphinx reads "/x" as srcdir/x
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(page.rst).replace("{DOCS}", docs) + "\n")
        listing.append({"docname": page.docname, "name": page.name, "section": page.section,
                        "description": page.description, "aliases": page.aliases})
    with open(os.path.join(srcdir, PAGES_FILE), "w", encoding="utf-8") as f:
        json.dump(listing, f, indent=1)
    root = ["Manual pages", "============", "", ".. toctree::", "   :hidden:", ""]
    root += [f"   {p.docname}" for p in pages]
    with open(os.path.join(srcdir, "index.rst"), "w", encoding="utf-8") as f:
        f.write("\n".join(root) + "\n")


def write_aliases(mandir, listing):
    """A ``.so`` page for every alias, next to the page it names (as man-db resolves it)."""
    for entry in listing:
        section = entry["section"]
        for alias in entry["aliases"]:
            with open(os.path.join(mandir, f"man{section}", f"{alias}.{section}"), "w", encoding="utf-8") as f:
                f.write(f".so man{section}/{entry['name']}.{section}\n")


# --- the Sphinx side ----------------------------------------------------------------------

def _titles(docs_dir):
    """({label: section title}, {document path without .rst: title}) of the HTML site."""
    labels, docs = {}, {}
    heading = re.compile(r"^(?P<title>\S.*)\n(?P<bar>[=\-~^\"'#*+`])(?P=bar){2,}\s*$", re.M)
    for root, _dirs, files in os.walk(docs_dir):
        for name in files:
            if not name.endswith(".rst"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            first = heading.search(text)
            if first:
                docs[os.path.relpath(path, docs_dir)[:-4]] = first.group("title").strip("`")
            for m in re.finditer(r"^\.\. _([\w.-]+):\s*\n(?:\s*\n|\.\. _[\w.-]+:\s*\n)*", text, re.M):
                title = heading.match(text, m.end())
                if title:
                    labels[m.group(1)] = title.group("title").replace("``", "")
    return labels, docs


def _missing_reference(app, env, node, contnode):
    """A :ref: or :doc: to the HTML site: its title as plain text."""
    from docutils import nodes

    if node.get("refdomain") != "std" or node.get("reftype") not in ("ref", "doc"):
        return None
    if node.get("refexplicit"):
        return contnode
    labels, docs = app.shmem_titles
    target = node["reftarget"]
    if node["reftype"] == "doc":
        tail = os.path.normpath(target).lstrip("./")
        title = next((t for path, t in docs.items() if path.endswith(tail)), target)
    else:
        title = labels.get(target, target)
    return nodes.emphasis(title, title)


def _config_inited(app, config):
    with open(os.path.join(app.srcdir, PAGES_FILE), encoding="utf-8") as f:
        listing = json.load(f)
    config.man_pages = [(p["docname"], p["name"], p["description"], [], p["section"]) for p in listing]


def _visit_reference(translator, node):
    from docutils import nodes

    translator.body.append(r"\fB")
    translator.visit_Text(node)  # escapes the text as the writer does
    translator.body.append(r"\fP")
    raise nodes.SkipNode


def _translator():
    from sphinx.writers.manpage import ManualPageTranslator

    class RaggedRight(ManualPageTranslator):
        """Pages set ragged right (.na): the tables' narrow columns of code words cannot
        be justified, and troff would warn about every such line."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # docutils 0.22's man writer sets visit_reference on the instance, over Sphinx's
            # method, and prints every link's target ("<#c.aclshmem_quiet>"); a link to
            # another page or a site is its text here, in bold.
            self.visit_reference = types.MethodType(_visit_reference, self)

        def header(self):
            # Right after .TH, which sets the page up: the NAME line too.
            return re.sub(r"^(\.TH .*)$", r"\1\n.na", super().header(), count=1, flags=re.M)

    return RaggedRight


def setup(app):
    app.set_translator("man", _translator())
    app.add_config_value("shmem_docs_dir", "", "env")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", lambda app: setattr(app, "shmem_titles", _titles(app.config.shmem_docs_dir)))
    app.connect("missing-reference", _missing_reference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
