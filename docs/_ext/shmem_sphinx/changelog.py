"""``.. changelog:: ../packages/<name>/CHANGELOG.md``: a package's changelog on the site.

The changelogs are Markdown files next to each package (they ship with it).  They use a
small subset that this directive turns into reStructuredText: ``##`` version headings,
``###`` group headings, paragraphs, ``-`` lists and `code`.  The file's ``#`` title is
left out (the page has its own).
"""

import os
import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")


def to_rst(markdown):
    lines = []
    for line in markdown.splitlines():
        if line.startswith("# "):
            continue
        if line.startswith("### "):
            lines += [f"**{line[4:].strip()}**", ""]
            continue
        if line.startswith("## "):
            lines += [f".. rubric:: {line[3:].strip()}", ""]
            continue
        lines.append(_CODE.sub(r"``\1``", line))
    return lines


class Changelog(SphinxDirective):
    required_arguments = 1

    def run(self):
        path = os.path.normpath(os.path.join(os.path.dirname(self.env.doc2path(self.env.docname)),
                                             self.arguments[0]))
        self.env.note_dependency(path)
        with open(path, encoding="utf-8") as f:
            lines = to_rst(f.read())
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source=path), self.content_offset, node)
        return node.children


def setup(app):
    app.add_directive("changelog", Changelog)
