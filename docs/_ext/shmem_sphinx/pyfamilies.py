"""``.. pyshmem-families::``: the generated typed and sized families of ``shmem._pyshmem``.

``shmem._pyshmem``'s ``aclshmem_int32_put``, ``aclshmem_put64_nbi``,
``aclshmem_float_wait_until_any``, ... are generated from the public headers into the
committed modules ``_pyshmem_families`` and ``_pyshmem_coll_families`` (``shmem._abi_build``),
by the templates and type tables of ``shmem._abi`` that ``shmem._native`` gathers
(``FAMILIES``, ``family_functions()``).  This directive reads those tables and shows one
table per family: the templates with their Python parameters and C prototypes, and one row
per element type or width naming every generated function.  Each name gets an anchor
``shmem._pyshmem.<name>``, an index entry and a Python-domain entry, so
``:py:func:`shmem._pyshmem.aclshmem_int32_put``` links to its row.

``automodule`` skips those functions (see pymodule.py), so the module's page is not
hundreds of one-line stubs.
"""

import importlib

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from .tables import new_table

MODULE = "shmem._pyshmem"

# Titles of the families, by their first template; a family that is not listed here is
# still shown, under a title made from its templates.
_TITLES = {
    "aclshmem_{N}_put": "Typed RMA: put, get, scalar p/g and strided iput/iget",
    "aclshmem_put{B}": "Sized RMA: put/get by element width",
    "aclshmem_{N}_put_signal": "Typed put with signal",
    "aclshmem_put{B}_signal": "Sized put with signal",
    "aclshmem_{N}_wait_until": "Point-to-point waits and tests",
    "aclshmem_{N}_atomic_add": "Atomic memory operations: add, fetch_add, set, fetch, swap",
    "aclshmem_{N}_atomic_compare_swap": "Atomic compare-and-swap",
    "aclshmem_{N}_atomic_inc": "Atomic increment and bitwise operations (integers)",
    "aclshmem_{N}_broadcast": "Collectives that move data: broadcast, collect, fcollect, alltoall(s), on streams too",
}
_TITLES.update({f"aclshmem_{{N}}_{op}_reduce": f"Reductions with {op}: reduce and reducescatter, on streams too"
                for op in ("and", "or", "xor", "min", "max", "sum", "prod")})


def _display(template):
    return template.replace("{N}", "<TYPE>").replace("{T}", "<ctype>").replace("{B}", "<BITS>")


def families():
    """[(title, kind, templates, [(tag, C type, [names])])] from shmem._native."""
    native = importlib.import_module("shmem._native")
    generated = native.family_functions()
    out = []
    for templates, table, kind in native.FAMILIES:
        first = templates[0][0]
        title = _TITLES.get(first) or ("Family " + ", ".join(_display(t[0]) for t in templates))
        rows = []
        for entry in table:
            tag = entry[0] if kind == "type" else entry
            ctype = entry[1] if kind == "type" else None
            names = []
            for name_t, _ret, _params in templates:
                subst = {"N": entry[0], "T": entry[1]} if kind == "type" else {"B": str(entry)}
                names.append(name_t.format(**subst))
            rows.append((tag, ctype, names))
        out.append((title, kind, templates, rows))
    # Cross-check: every generated function is in exactly one row.
    listed = [n for _t, _k, _tp, rows in out for _tag, _c, names in rows for n in names]
    assert sorted(listed) == sorted(g[0] for g in generated), "family tables disagree with family_functions()"
    return out


class PyshmemFamilies(SphinxDirective):
    has_content = False

    def run(self):
        py = self.env.get_domain("py")
        result = []
        for title, kind, templates, rows in families():
            lines = [f".. rubric:: {title}", "", ".. code-block:: python", ""]
            for name_t, _ret, params in templates:
                lines.append(f"   {_display(name_t)}({', '.join(p for _, p in params)})")
            lines += ["", "C prototypes (see :doc:`c-api` for what they do):", "", ".. code-block:: c", ""]
            for name_t, ret, params in templates:
                args = ", ".join(f"{_display(t)} {p}" for t, p in params) or "void"
                lines.append(f"   {_display(ret)} {_display(name_t)}({args});")
            lines.append("")
            node = nodes.container()
            self.state.nested_parse(StringList(lines, source="pyshmem-families"), self.content_offset, node)
            result.extend(node.children)
            result.extend(self._table(kind, rows, py))
        return result

    def _table(self, kind, rows, py):
        heads = ["TYPE", "ctype", "functions"] if kind == "type" else ["BITS", "functions"]
        tbl, tbody = new_table(heads, [10, 10, 80] if kind == "type" else [10, 90], ["shmem-family"])
        index_entries = []
        for tag, ctype, names in rows:
            row = nodes.row()
            row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=str(tag))))
            if kind == "type":
                row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=ctype)))
            para = nodes.paragraph()
            for k, name in enumerate(names):
                fullname = f"{MODULE}.{name}"
                if k:
                    para += nodes.Text(" ")
                para += nodes.literal(text=name, ids=[fullname])
                py.note_object(fullname, "function", fullname, location=self.get_location())
                index_entries.append(("single", f"{name}() (in module {MODULE})", fullname, "", None))
            row += nodes.entry("", para)
            tbody += row
        return [addnodes.index(entries=index_entries), tbl]


def setup(app):
    app.add_directive("pyshmem-families", PyshmemFamilies)
