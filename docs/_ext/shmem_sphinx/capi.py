"""``.. c-api-header:: aclshmem/rma.h`` (or ``shmem.h``): the reference of one public header.

The header's own comments are the text (see cheaders.py for which comment documents
what).  Declarations become Sphinx C-domain objects (``c:function``, ``c:enum``,
``c:struct``, ``c:macro``, ``c:type``), so ``:c:func:`aclshmem_putmem``` links work;
each X-macro family becomes one table: its templates, then one row per element type
with every generated name (each with an anchor and an index entry); a run of C11
generic names (shmem.h) becomes one table too.
"""

import os
import re

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from . import cheaders
from .tables import new_table

_ESCAPE = re.compile(r"([\\*`_|\[\]<>])")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[^A-Za-z_]+")


def _known_names(include_dir):
    """{identifier: role} for every documented C name (for links in the prose)."""
    tables = cheaders.parse_tables(os.path.join(include_dir, "aclshmem", "types.h"))
    known = {}
    for rel in cheaders.umbrella_order(include_dir) + list(cheaders.OPENSHMEM_HEADERS):
        header = cheaders.parse_header(os.path.join(include_dir, rel), tables)
        for e in header.entries:
            if e.kind == "function":
                for name in e.data.get("names", [e.name]):
                    known[name] = "c:func"
            elif e.kind in ("struct", "type", "funcptr"):
                known[e.name] = "c:type"
            elif e.kind == "enum":
                known[e.name] = "c:enum"
                for text, _ in e.data["members"]:
                    known[text.split("=")[0].strip()] = "c:enumerator"
            elif e.kind == "table" or (e.kind == "macro" and not is_plain_macro(e)):
                known[e.name.split("(")[0]] = "c:macro"
            elif e.kind in ("macro", "generic"):
                known[e.name.split("(")[0]] = "literal"
    return known


def is_plain_macro(e):
    """A constant with nothing to say but its value: shown as a table row."""
    return e.kind == "macro" and not e.doc and "(" not in e.name


def prose(text, known, skip=()):
    """rST for a comment: special characters escaped, known C names linked."""
    paragraphs = []
    for para in re.split(r"\n\s*\n", text):
        words = []
        for line in para.splitlines():
            line = line.strip()
            out = []
            tokens = _WORD.findall(line)
            for k, tok in enumerate(tokens):
                if k and tokens[k - 1] and known.get(tokens[k - 1]) == "c:func" and tok.startswith("()"):
                    tok = tok[2:]  # the role shows the parentheses itself
                    if not tok:
                        continue
                role = known.get(tok)
                if role == "literal":
                    out.append(f"\\ ``{tok}``\\ ")
                elif role and tok not in skip:
                    # Escaped spaces around the role: markup is recognised next to any
                    # character, and the spaces do not show.
                    out.append(f"\\ :{role}:`{tok}`\\ ")
                else:
                    out.append(_ESCAPE.sub(r"\\\1", tok))
            words.append("".join(out))
        paragraphs.append(" ".join(w for w in words if w))
    return [p for p in paragraphs if p]


def _indent(lines, n=3):
    pad = " " * n
    return [pad + line if line else "" for line in lines]


class CApiHeader(SphinxDirective):
    """Renders one public header of libaclshmem."""

    required_arguments = 1
    # only: the names of the entries to show (functions by their first name, families by
    # their macro), the rest of the header left out: one manual page each (manpages.py).
    option_spec = {"no-intro": directives.flag, "only": directives.unchanged}

    def run(self):
        include_dir = self.config.shmem_include_dir
        rel = self.arguments[0]
        path = os.path.join(include_dir, rel)
        self.env.note_dependency(path)
        tables = cheaders.parse_tables(os.path.join(include_dir, "aclshmem", "types.h"))
        header = cheaders.parse_header(path, tables)
        known = getattr(self.env, "_shmem_c_known", None)
        if known is None:
            known = self.env._shmem_c_known = _known_names(include_dir)

        c11_tables = cheaders.c11_type_tables(path)
        result = []
        only = set(self.options.get("only", "").split())
        if "no-intro" not in self.options and header.intro:
            result.extend(self._parse(self._paragraphs(header.intro, known)))
        plain, generic = [], []
        for entry in header.entries + [None]:
            if only and entry is not None and entry.name not in only:
                continue
            if entry is not None and is_plain_macro(entry):
                plain.append(entry)
                continue
            if entry is not None and entry.kind == "generic":
                generic.append(entry)
                continue
            if plain:
                result.extend(self._macro_table(plain, known))
                plain = []
            if generic:
                result.extend(self._generic_table(generic, known, c11_tables))
                generic = []
            if entry is None:
                break
            if entry.kind == "family":
                result.extend(self._family(entry, known))
            else:
                result.extend(self._parse(self._entry_rst(entry, known)))
        return result

    def _macro_table(self, entries, known):
        """Constants that have only a value (and maybe a remark): one table."""
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 35 30 35", "",
                 "   * - constant", "     - value", "     - note"]
        for e in entries:
            remark = " ".join(prose(e.data["remark"], known, {e.name})) if e.data.get("remark") else ""
            value = e.data["value"].replace("``", "` `")
            lines += [f"   * - ``{e.name}``", f"     - ``{value}``", f"     - {remark}"]
        lines.append("")
        nodes_ = self._parse(lines)
        # Anchors c.NAME on the name cells, and index entries, as the C domain would give.
        index_entries = []
        for table in nodes_:
            for lit in table.findall(nodes.literal):
                if lit.astext() in {e.name for e in entries} and not lit["ids"]:
                    lit["ids"].append(f"c.{lit.astext()}")
                    index_entries.append(("single", f"{lit.astext()} (C macro)", f"c.{lit.astext()}", "", None))
        return [addnodes.index(entries=index_entries)] + list(nodes_)

    def _generic_table(self, entries, known, c11_tables):
        """A run of C11 generic names: the comment above the first, then one row a name with
        the typed functions it picks and the C types it takes."""
        lines = self._paragraphs(entries[0].doc, known) if entries[0].doc else []
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 25 40 35", "",
                  "   * - generic name", "     - calls", "     - for a first pointer to"]
        for e in entries:
            types, has_ctx = cheaders.generic_types(e.data["selector"], c11_tables)
            calls = f"``shmem_<TYPE>_{e.data['op']}``"
            if has_ctx:
                calls += f", with a context first ``shmem_ctx_<TYPE>_{e.data['op']}``"
            lines += [f"   * - ``{e.name}``", f"     - {calls}", "     - " + ", ".join(f"``{t}``" for t in types)]
        lines.append("")
        nodes_ = self._parse(lines)
        index_entries = []
        names = {e.name for e in entries}
        for table in nodes_:
            for lit in table.findall(nodes.literal):
                if lit.astext() in names and not lit["ids"]:
                    lit["ids"].append(f"c.{lit.astext()}")
                    index_entries.append(("single", f"{lit.astext()} (C11 generic)", f"c.{lit.astext()}", "", None))
        return [addnodes.index(entries=index_entries)] + list(nodes_)

    @staticmethod
    def _family_list(rows):
        """The generated names as a definition list: the element type, then its functions."""
        dl = nodes.definition_list()
        for row, names in rows:
            term = nodes.term("", "", nodes.strong(text=" ".join(dict.fromkeys(row))))
            para = nodes.paragraph()
            for k, name in enumerate(names):
                para += nodes.Text(", " if k else "")
                para += nodes.literal(text=name)
            dl += nodes.definition_list_item("", term, nodes.definition("", para))
        return dl

    # -- helpers ------------------------------------------------------------------------

    def _parse(self, lines):
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.arguments[0]), self.content_offset, node)
        return node.children

    @staticmethod
    def _paragraphs(text, known, skip=()):
        lines = []
        for para in prose(text, known, skip):
            lines.extend([para, ""])
        return lines

    def _entry_rst(self, e, known):
        k = e.kind
        own = {e.name.split("(")[0]}
        body = self._paragraphs(e.doc, known, own) if e.doc else []
        if e.data.get("remark"):
            body += self._paragraphs(e.data["remark"][0].upper() + e.data["remark"][1:], known, own)
        if k == "section":
            return [f".. rubric:: {e.name[0].upper() + e.name[1:]}", ""]
        if k == "macro":
            value = e.data["value"]
            if value:
                body = body + ["Value: ``" + value.replace("``", "` `") + "``", ""]
            return [f".. c:macro:: {e.name}", ""] + _indent(body) + [""]
        if k == "table":
            rows = ", ".join("(" + ", ".join(r) + ")" for r in e.data["rows"])
            body = body + [f"Rows: ``{rows}``", ""]
            return [f".. c:macro:: {e.name}{e.data['params']}", ""] + _indent(body) + [""]
        if k == "function":
            sigs = e.data["signatures"]
            head = [f".. c:function:: {sigs[0]}"] + [" " * 14 + s for s in sigs[1:]]
            return head + [""] + _indent(body) + [""]
        if k in ("type", "funcptr"):
            decl = e.data["decl"] if k == "funcptr" else f"{e.data['target']} {e.name}"
            return [f".. c:type:: {decl}", ""] + _indent(body) + [""]
        if k == "enum":
            out = [f".. c:enum:: {e.name}", ""] + _indent(body)
            for text, remark in e.data["members"]:
                out += _indent([f".. c:enumerator:: {text}", ""])
                if remark:
                    out += _indent(self._paragraphs(remark, known), 6)
            return out + [""]
        if k == "struct":
            out = [f".. c:struct:: {e.name}", ""] + _indent(body)
            for text, remark in e.data["members"]:
                out += _indent([f".. c:member:: {text}", ""])
                if remark:
                    out += _indent(self._paragraphs(remark, known), 6)
            return out + [""]
        return ["::", "", "   " + e.name, ""]

    def _family(self, e, known):
        """A rubric, the comment, the templates, and the table of generated names."""
        out = []
        params = e.data["params"]
        title = "Generated family " + re.sub(r"^(ACLSHMEMI|SHMEMI)_DECLARE_", "", e.name)
        intro = [f".. rubric:: {title}", ""]
        intro += self._paragraphs(e.doc, known) if e.doc else []
        tables = " and ".join(f":c:macro:`{t}`" for t in e.data.get("tables") or ["?"])
        placeholders = ", ".join(f"``<{p}>``" for p in params)
        if e.data.get("derived") and not e.data["rows"]:
            # Only the families made from it are expanded: its templates, then theirs.
            intro += [f"Templates over {placeholders}, expanded by the families below.", "",
                      ".. code-block:: c", ""]
            intro += ["   " + t + ";" for t in e.data["templates"]] + [""]
            return self._parse(intro)
        if e.data.get("base"):
            base = re.sub(r"^(ACLSHMEMI|SHMEMI)_DECLARE_", "", e.data["base"])
            intro += [f"The family {base} with {e.data['fixed']}.", ""]
        intro += [f"Declared once as templates over {placeholders} and expanded over "
                  f"{tables}: every row of the table below is one element "
                  f"{'type' if len(params) > 1 else 'width'}, and each template gives one "
                  "function for it.", "", ".. code-block:: c", ""]
        intro += ["   " + t + ";" for t in e.data["templates"]] + [""]
        out.extend(self._parse(intro))

        rows = cheaders.expand_family(e)
        if self.env.app.builder.name == "man":
            # A manual page has 80 columns: a table of long names cannot be set in them.
            out.append(self._family_list(rows))
            return out
        tbl, tbody = new_table(params + ["functions"], [12] * len(params) + [76], ["shmem-family"])
        index_entries = []
        for row, names in rows:
            r = nodes.row()
            for cell in row:
                r += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=cell)))
            para = nodes.paragraph()
            for k, name in enumerate(names):
                node_id = f"c.{name}"
                if k:
                    para += nodes.Text(" ")
                para += nodes.literal(text=name, ids=[node_id])
                index_entries.append(("single", f"{name} (C function)", node_id, "", None))
            r += nodes.entry("", para)
            tbody += r
        out.append(addnodes.index(entries=index_entries))
        out.append(tbl)
        return out


def setup(app):
    app.add_config_value("shmem_include_dir", "", "env")
    app.add_directive("c-api-header", CApiHeader)
