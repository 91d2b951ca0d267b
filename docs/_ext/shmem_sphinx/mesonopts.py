"""``.. meson-options:: path/to/meson.options``: the build options as a table.

Read from the file itself, so the installation page lists exactly the options the build
has (name, type, default, description).
"""

import ast
import os
import re

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from .tables import new_table

_OPTION = re.compile(r"option\((.*?)\)\s*$", re.S | re.M)


def _value(text):
    text = text.strip()
    if text in ("true", "false"):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_options(path):
    """[(name, type, default, description)] in file order."""
    with open(path, encoding="utf-8") as f:
        text = "\n".join(line for line in f.read().splitlines() if not line.lstrip().startswith("#"))
    out = []
    for m in re.finditer(r"option\(\s*'([^']+)'(.*?)\)\s*(?=\noption\(|\Z)", text, re.S):
        name, rest = m.group(1), m.group(2)
        fields = dict((k, v) for k, v in re.findall(r"(\w+)\s*:\s*('(?:[^'\\]|\\.)*'|[^,]+)", rest))
        out.append((name, _value(fields.get("type", "")), _value(fields.get("value", "")),
                    _value(fields.get("description", ""))))
    return out


class MesonOptions(SphinxDirective):
    required_arguments = 1

    def run(self):
        path = os.path.normpath(os.path.join(os.path.dirname(self.env.doc2path(self.env.docname)),
                                             self.arguments[0]))
        self.env.note_dependency(path)
        rows = parse_options(path)
        tbl, tbody = new_table(("option", "type", "default", "what it does"), (12, 10, 10, 68))
        for name, typ, default, desc in rows:
            row = nodes.row()
            row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=f"-D{name}")))
            row += nodes.entry("", nodes.paragraph(text=str(typ)))
            row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=str(default))))
            row += nodes.entry("", nodes.paragraph(text=str(desc)))
            tbody += row
        return [tbl]


def setup(app):
    app.add_directive("meson-options", MesonOptions)
