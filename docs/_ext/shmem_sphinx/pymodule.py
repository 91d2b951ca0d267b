"""``.. module-extras:: MODULE``: the public names of a module that autodoc leaves out.

autodoc documents a module's functions and classes well, but not its plain constants
(undocumented module data is dropped by some Sphinx versions, and imported data by
others), and a name that a module re-exports from another package would be documented
twice.  For every module named in ``shmem_extra_modules`` this extension:

* skips, in ``automodule``, the constants and the re-exports of that module
  (``autodoc-skip-member``), so what autodoc shows does not depend on the Sphinx version;
* renders them here instead: one table of constants (name, value, the ``#:`` comment if
  the source has one) and one table of re-exported names, each pointing at the module
  that documents the object.

Every row gets the anchor ``MODULE.NAME`` and a Python-domain entry, like an autodoc
entry would.  The public names of a module are its ``__all__``, or else every name of
``dir(module)`` without a leading underscore; submodules are not names.
"""

import enum
import importlib
import inspect
import re
import types

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

from .tables import new_table


def public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return [n for n in names if not isinstance(getattr(module, n, None), types.ModuleType)]


def _top(name):
    return (name or "").split(".")[0]


def classify(modname, name, obj, generated=()):
    """'autodoc', 'constant', 'reexport' or 'family' for a public name of modname."""
    if name in generated:
        return "family"
    if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
        origin = getattr(obj, "__module__", "") or ""
        if origin and _top(origin) != _top(modname) and not origin.startswith("unittest.mock"):
            return "reexport"
        return "autodoc"
    if isinstance(obj, enum.Enum) or not callable(obj):
        return "constant"
    return "autodoc"


def _escape(text):
    """Plain text for nested_parse (comments are not reStructuredText)."""
    return re.sub(r"([\\*`_|])", r"\\\1", text)


def _short_repr(value):
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name} ({value.value!r})"
    if isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > 6:
        return f"{type(value).__name__} of {len(value)} items"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _attr_docs(modname, names):
    """{name: text} from ``#:`` comments, or else from the plain ``#`` comment lines right
    above ``NAME = ...`` in the module that defines it."""
    docs = {}
    try:
        analyzer = ModuleAnalyzer.for_module(modname)
        analyzer.analyze()
        docs = {key[1]: " ".join(lines).strip() for key, lines in analyzer.attr_docs.items() if key[0] == ""}
    except Exception:
        pass
    module = importlib.import_module(modname)
    sources = [module]
    # A constant imported from a submodule (shmem_torch.DEFAULT_MEM_SIZE) is commented there.
    for sub in list(vars(module).values()):
        if isinstance(sub, types.ModuleType) and sub.__name__.startswith(modname + "."):
            sources.append(sub)
    for name in names:
        if docs.get(name):
            continue
        for src_mod in sources:
            try:
                lines = inspect.getsource(src_mod).splitlines()
            except (OSError, TypeError):
                continue
            for k, line in enumerate(lines):
                if line.startswith(f"{name} =") or line.startswith(f"{name}="):
                    comment = []
                    j = k - 1
                    while j >= 0 and lines[j].lstrip().startswith("#"):
                        comment.insert(0, lines[j].lstrip().lstrip("#:").strip())
                        j -= 1
                    if comment:
                        docs[name] = " ".join(comment)
                    break
            if docs.get(name):
                break
    return docs


class ModuleExtras(SphinxDirective):
    required_arguments = 1
    option_spec = {}

    def run(self):
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        generated = set(getattr(module, "GENERATED", ())) if modname == "shmem._pyshmem" else set()
        py = self.env.get_domain("py")
        names = public_names(module)
        docs = _attr_docs(modname, names)
        constants, reexports = [], []
        for name in names:
            obj = getattr(module, name)
            kind = classify(modname, name, obj, generated)
            if kind == "constant":
                constants.append((name, _short_repr(obj), _escape(docs.get(name, ""))))
            elif kind == "reexport":
                reexports.append((name, f"{obj.__module__}.{obj.__qualname__}"))
        result = []
        if constants:
            result.extend(self._table(modname, "data", ["name", "value", "meaning"], constants, py))
        if reexports:
            rows = []
            for name, origin in reexports:
                rows.append((name, origin, ""))
            result.extend(self._table(modname, "class", ["name", "the same object as", ""], rows, py,
                                      link_second=True))
        return result

    def _table(self, modname, objtype, heads, rows, py, link_second=False):
        heads = [h for h in heads if h]
        tbl, tbody = new_table(heads, [10] * len(heads), ["shmem-module-extras"])
        index_entries = []
        for name, second, meaning in rows:
            fullname = f"{modname}.{name}"
            row = nodes.row()
            row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=name, ids=[fullname])))
            if link_second:
                para = nodes.paragraph()
                self._inline(f":py:obj:`{self._documented_as(second, name)}`", para)
                row += nodes.entry("", para)
            else:
                row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=second)))
            if len(heads) > 2:
                para = nodes.paragraph()
                if meaning:
                    self._inline(meaning, para)
                row += nodes.entry("", para)
            tbody += row
            py.note_object(fullname, objtype, fullname, location=self.get_location())
            index_entries.append(("single", f"{name} (in module {modname})", fullname, "", None))
        return [addnodes.index(entries=index_entries), tbl]

    @staticmethod
    def _documented_as(origin, name):
        """Where the reference documents a re-exported object: shmem.core for what the
        high-level API exports, else where it is defined."""
        if _top(origin) == "shmem":
            core = importlib.import_module("shmem.core")
            if name in getattr(core, "__all__", ()):
                return f"shmem.core.{name}"
        return origin

    def _inline(self, text, para):
        node = nodes.container()
        self.state.nested_parse(StringList([text], source="module-extras"), self.content_offset, node)
        for child in node.children:
            if isinstance(child, nodes.paragraph):
                para.extend(child.children)


def _skip(app, what, name, obj, skip, options):
    modname = app.env.temp_data.get("autodoc:module")
    if what != "module" or modname not in app.config.shmem_extra_modules:
        return None
    generated = ()
    if modname == "shmem._pyshmem":
        generated = set(getattr(importlib.import_module(modname), "GENERATED", ()))
    kind = classify(modname, name, obj, generated)
    return True if kind in ("constant", "reexport", "family") else None


def setup(app):
    app.add_config_value("shmem_extra_modules", [], "env")
    app.add_directive("module-extras", ModuleExtras)
    app.connect("autodoc-skip-member", _skip)
