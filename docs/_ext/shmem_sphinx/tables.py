"""The docutils table that every directive of this extension builds."""

from docutils import nodes


def new_table(heads, widths, classes=()):
    """A table with a header row of ``heads`` and relative column ``widths``; returns
    ``(table, tbody)``, the caller appends rows to ``tbody``."""
    tbl = nodes.table(classes=list(classes))
    tgroup = nodes.tgroup(cols=len(heads))
    tbl += tgroup
    for width in widths:
        tgroup += nodes.colspec(colwidth=width)
    thead = nodes.thead()
    tgroup += thead
    hrow = nodes.row()
    for head in heads:
        hrow += nodes.entry("", nodes.paragraph(text=head))
    thead += hrow
    tbody = nodes.tbody()
    tgroup += tbody
    return tbl, tbody
