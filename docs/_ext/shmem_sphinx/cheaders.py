"""A small reader of the public C headers of libaclshmem, for the C API references (the
aclshmem headers and OpenSHMEM's ``shmem.h`` / ``shmemx.h``).

It does not preprocess: it walks a header's text and splits it into *items* (comments,
preprocessor lines, declarations, X-macro expansions), remembering where blank lines
separate them.  From those it builds *entries* that the Sphinx directive renders:

* a comment directly above a declaration (no blank line between) documents it.  A
  ``/** ... */`` comment documents the one declaration below it; a plain ``/* ... */``
  comment documents the whole run of function declarations below it (one entry with
  several signatures), as in ``/* On the DEVICE_SIDE heap. */`` above the four
  allocation functions;
* a comment on the same line, after a declaration, is a remark on that declaration;
* ``/* ---- title ---- */`` comments are section titles;
* ``#define ACLSHMEMI_DECLARE_X(NAME, TYPE) ...`` (``SHMEMI_DECLARE_X`` in shmem.h)
  together with a later ``ACLSHMEM_RMA_TYPES(ACLSHMEMI_DECLARE_X)`` line is a generated
  *family*: the templates and the element table they are expanded over (a table is a
  ``#define NAME(X)`` of types.h or of the header itself; its rows may include another
  table's, ``OTHER(X)``);
* a family defined as another one with arguments fixed
  (``#define ACLSHMEMI_DECLARE_REDUCE_SUM(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, sum)``)
  has that one's templates with the arguments put in;
* ``#define shmem_put(...) SHMEMI_C11_RMA(put, __VA_ARGS__)`` is a C11 *generic* name;
* names of the headers' own machinery (``SHMEMI_C11_*``, ``shmemi_*``) are not shown.

Everything here is plain Python so that the tests can use it without Sphinx.  Why the
reference does not use hawkmoth (libclang) instead: docs/README.md.
"""

import os
import re

#: Macros that only decorate declarations.
DECORATIONS = ("ACLSHMEM_HOST_API", "SHMEMI_API", "SHMEMI_DEPRECATED", "SHMEMI_NORETURN")
#: The prefixes of the macros that declare a generated family.
FAMILY_PREFIXES = ("ACLSHMEMI_DECLARE_", "SHMEMI_DECLARE_")
#: The prefix of the expansions of C11 generic names (shmem.h).
GENERIC_PREFIX = "SHMEMI_C11_"
#: The OpenSHMEM headers, in the order of their reference.
OPENSHMEM_HEADERS = ("shmem.h", "shmemx.h")


def is_internal(name):
    """A name of a header's own machinery, not of the API it declares."""
    return name.startswith(("shmemi_", GENERIC_PREFIX))

_WS = re.compile(r"\s+")
_SECTION = re.compile(r"^-{2,}\s*(.*?)\s*-*$")
_MACRO_CALL = re.compile(r"^([A-Z][A-Z0-9_]*)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$")
_DEFINE = re.compile(r"^#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?\s*(.*)$", re.S)


class Item:
    """One piece of a header: kind is comment, directive, decl or call."""

    def __init__(self, kind, text, line, end_line, blank_before):
        self.kind = kind
        self.text = text
        self.line = line
        self.end_line = end_line
        self.blank_before = blank_before
        self.trailing = None  # a comment on the same line, after the item

    def __repr__(self):
        return f"Item({self.kind}, {self.text[:40]!r}, line {self.line})"


def comment_text(raw):
    """The words of a comment, without the markers and the leading stars."""
    body = raw
    if body.startswith("//"):
        return body[2:].strip()
    body = body[2:-2]
    if body.startswith("*"):
        body = body[1:]
    lines = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line.rstrip())
    # Keep paragraph breaks (empty lines); drop the leading and trailing empty ones.
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def squash(text):
    """One line of C with single spaces."""
    return _WS.sub(" ", text).strip()


def strip_decorations(text):
    for word in DECORATIONS:
        text = re.sub(r"\b" + word + r"\b", "", text)
    return squash(text)


def scan(text):
    """Splits a header into Items."""
    items = []
    i, n, line = 0, len(text), 1
    newlines_since = 2  # the start of the file counts as after a blank line
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
            continue
        if c == "\n":
            line += 1
            newlines_since += 1
            i += 1
            continue
        start_line = line
        blank = newlines_since >= 2
        same_line = newlines_since == 0
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            kind = "comment"
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            kind = "comment"
        elif c == "#":
            j = i
            while True:
                e = text.find("\n", j)
                if e < 0:
                    j = n
                    break
                if text[e - 1] == "\\":
                    j = e + 1
                    continue
                j = e
                break
            kind = "directive"
        else:
            j, kind = _scan_code(text, i)
        raw = text[i:j]
        line += raw.count("\n")
        item = Item(kind, raw, start_line, line, blank)
        if kind == "comment" and same_line and items:
            items[-1].trailing = comment_text(raw)
        elif kind == "code-skip":
            pass
        else:
            items.append(item)
        newlines_since = 0
        i = j
    return items


def _scan_code(text, i):
    """The end of a declaration (after its ';'), of an X-macro expansion (after its ')'),
    or of a brace that only opens or closes an extern "C" block."""
    n = len(text)
    m = re.compile(r'extern\s+"C"\s*\{').match(text, i)
    if m:
        return m.end(), "code-skip"
    if text[i] == "}":
        return i + 1, "code-skip"
    depth = 0
    j = i
    while j < n:
        if text.startswith("/*", j):
            e = text.find("*/", j + 2)
            j = n if e < 0 else e + 2
            continue
        ch = text[j]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth == 0 and ch == ")":
                # NAME(ARG) at the top level with nothing before ';' is a macro expansion.
                k = j + 1
                while k < n and text[k] in " \t":
                    k += 1
                if (k >= n or text[k] == "\n") and _MACRO_CALL.match(squash(text[i:j + 1])):
                    return j + 1, "call"
        elif ch == ";" and depth == 0:
            return j + 1, "decl"
        j += 1
    return n, "decl"


# ---------------------------------------------------------------------------------------
# Entries
# ---------------------------------------------------------------------------------------


class Entry:
    """Something the reference shows.

    kind: section, function, macro, enum, struct, type, funcptr, family, table.
    """

    def __init__(self, kind, name, doc="", **data):
        self.kind = kind
        self.name = name
        self.doc = doc
        self.data = data

    def __repr__(self):
        return f"Entry({self.kind}, {self.name})"


class Header:
    def __init__(self, path, title, intro, entries):
        self.path = path
        self.title = title
        self.intro = intro
        self.entries = entries


def _parse_enum(body):
    """[(enumerator text, remark)] from the text between the braces."""
    out = []
    for raw_line in body.splitlines():
        remark = None
        m = re.search(r"/\*(.*?)\*/", raw_line)
        if m:
            remark = m.group(1).strip()
            raw_line = raw_line[:m.start()] + raw_line[m.end():]
        parts = [squash(p) for p in raw_line.split(",")]
        parts = [p for p in parts if p]
        for k, part in enumerate(parts):
            out.append((part, remark if k == len(parts) - 1 else None))
    return out


def _parse_struct(body):
    """[(member declaration, remark)] from the text between the braces."""
    out = []
    for raw_line in body.splitlines():
        remark = None
        m = re.search(r"/\*(.*?)\*/", raw_line)
        if m:
            remark = m.group(1).strip()
            raw_line = raw_line[:m.start()] + raw_line[m.end():]
        for part in raw_line.split(";"):
            part = squash(part)
            if part:
                out.append((part, remark))
    return out


def _decl_entry(text, doc, remark):
    """An Entry for one declaration ending in ';'."""
    decl = strip_decorations(re.sub(r"/\*.*?\*/", " ", text, flags=re.S)).rstrip(";").strip()
    m = re.match(r"typedef\s+(enum|struct)\s*([A-Za-z_][A-Za-z0-9_]*)?\s*\{(.*)\}\s*([A-Za-z_][A-Za-z0-9_]*)$",
                 squash(text.rstrip().rstrip(";")).replace("ACLSHMEM_HOST_API", ""), re.S)
    if m:
        what, _tag, _body, name = m.groups()
        # The body with its comments, from the original text.
        raw_body = text[text.index("{") + 1:text.rindex("}")]
        members = _parse_enum(raw_body) if what == "enum" else _parse_struct(raw_body)
        return Entry(what, name, doc, members=members, remark=remark)
    m = re.match(r"typedef\s+(.*?)\(\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*\((.*)\)$", decl, re.S)
    if m:
        return Entry("funcptr", m.group(2), doc, decl=decl[len("typedef "):], remark=remark)
    m = re.match(r"typedef\s+(.*?)\s*\b([A-Za-z_][A-Za-z0-9_]*)$", decl)
    if m:
        return Entry("type", m.group(2), doc, target=m.group(1), remark=remark)
    m = re.match(r"(.*?)\b([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)$", decl, re.S)
    if m:
        return Entry("function", m.group(2), doc, signatures=[decl], remark=remark)
    return Entry("other", decl, doc, remark=remark)


def _template_name(text):
    """``aclshmem_##NAME##_put`` -> ``aclshmem_<NAME>_put``."""
    text = re.sub(r"##\s*([A-Z]+)\s*##", r"<\1>", text)
    text = re.sub(r"##\s*([A-Z]+)\b", r"<\1>", text)
    text = re.sub(r"\b([A-Z]+)\s*##", r"<\1>", text)
    return text


def _derived_family(name, doc, params, value, families):
    """A family defined as a call of another one with some arguments fixed, as
    ``#define ACLSHMEMI_DECLARE_REDUCE_SUM(NAME, TYPE) ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, sum)``
    (aclshmem/coll.h: one family per reduction operation): the other's templates with the
    fixed arguments put in; None when value is not such a call."""
    m = re.match(r"^(\w+)\s*\((.*)\)$", value)
    base = families.get(m.group(1)) if m else None
    if base is None:
        return None
    args = [a.strip() for a in m.group(2).split(",")]
    templates = []
    for template in base.data["templates"]:
        for placeholder, arg in zip(base.data["params"], args):
            if arg not in params:
                template = template.replace(f"<{placeholder}>", arg)
        templates.append(template)
    base.data["derived"] = True  # documented through the families made from it
    fixed = ", ".join(f"{p} = {a}" for p, a in zip(base.data["params"], args) if a not in params)
    return Entry("family", name, doc, params=params, templates=templates, table=None, rows=[], base=base.name,
                 fixed=fixed)


def parse_header(path, tables=None):
    """Reads one header; tables maps X-macro table names to their rows (see
    parse_tables), for the family expansions of this header."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    items = scan(text)
    tables = dict(tables or {})
    tables.update(parse_tables(path))

    # The file comment: the first comment, "<file> - <what it is>".
    title, intro = os.path.basename(path), ""
    if items and items[0].kind == "comment":
        words = comment_text(items.pop(0).text)
        first, _, rest = words.partition("\n")
        m = re.match(r"^\s*(\S+\.h)\s+-\s+(.*)$", first)
        if m:
            title = m.group(2).strip().rstrip(".")
            words = rest.strip()
        intro = words

    entries = []
    families = {}  # macro name -> Entry (family), until its expansion is seen
    pending_doc = None  # (text, group entry or None)
    for k, item in enumerate(items):
        if item.blank_before:
            pending_doc = None
        if item.kind == "comment":
            words = comment_text(item.text)
            m = _SECTION.match(words)
            if m and words.startswith("--"):
                entries.append(Entry("section", m.group(1)))
                pending_doc = None
                continue
            # [text, documented entry, whether it may document a group]
            pending_doc = [words, None, not item.text.startswith("/**")]
            continue
        if item.kind == "directive":
            m = _DEFINE.match(item.text.replace("\\\n", " "))
            if not m:
                pending_doc = None
                continue
            name, params, value = m.group(1), m.group(2), m.group(3)
            remark = item.trailing
            rm = re.search(r"/\*(.*?)\*/", value, re.S)
            if rm:  # "#define X 120 /* seconds */": the comment is part of the line
                remark = squash(rm.group(1))
                value = value[:rm.start()] + value[rm.end():]
            value = squash(value)
            if name in DECORATIONS or not value and name.endswith("_H") or is_internal(name):
                pending_doc = None
                continue
            if params and any(e.kind == "function" and name in e.data.get("names", [e.name]) for e in entries):
                # A macro that picks between forms of a function declared above (shmem.h's
                # shmem_sync): the functions' entries document the name.
                pending_doc = None
                continue
            doc = pending_doc[0] if pending_doc and pending_doc[1] is None else ""
            if value.startswith(GENERIC_PREFIX) and params == "(...)":
                # A generic name: its family's table and the operation it picks.
                m = re.match(r"(\w+)\((\w+),", value)
                entries.append(Entry("generic", name, doc, selector=m.group(1), op=m.group(2)))
                pending_doc = None
                continue
            if name.startswith(FAMILY_PREFIXES):
                own = [p.strip() for p in params.strip("()").split(",")]
                fam = _derived_family(name, doc, own, value, families)
                if fam is None:
                    templates = []
                    for part in value.split(";"):
                        part = strip_decorations(part)
                        if part:
                            templates.append(_template_name(part))
                    fam = Entry("family", name, doc, params=own, templates=templates, table=None, rows=[])
                families[name] = fam
                entries.append(fam)
                pending_doc = None
                continue
            if params and name in tables:
                entry = Entry("table", name, doc, params=params, rows=tables[name], remark=remark)
            else:
                entry = Entry("macro", name + (params or ""), doc, value=value, remark=remark)
            entries.append(entry)
            # A comment above a run of #defines documents the first only.
            pending_doc = None
            continue
        if item.kind == "call":
            m = _MACRO_CALL.match(squash(item.text))
            table, macro = m.group(1), m.group(2)
            fam = families.get(macro)
            if fam is not None:
                # A family may be expanded over several tables (amo.h): their rows add up.
                fam.data["tables"] = fam.data.get("tables", []) + [table]
                fam.data["table"] = table
                fam.data["rows"] = fam.data["rows"] + tables.get(table, [])
            pending_doc = None
            continue
        # A declaration.
        doc = pending_doc[0] if pending_doc and (pending_doc[1] is None or pending_doc[2]) else ""
        entry = _decl_entry(item.text, doc, item.trailing)
        if is_internal(entry.name):
            pending_doc = None
            continue
        group = pending_doc[1] if pending_doc and pending_doc[2] else None
        if pending_doc and pending_doc[1] is not None and not pending_doc[2]:
            doc = ""  # a /** comment documents one declaration only
            entry.doc = ""
        if (entry.kind == "function" and group is not None and group.kind == "function"
                and not entry.data.get("remark") and not group.data.get("remark")):
            group.data["signatures"].extend(entry.data["signatures"])
            group.data.setdefault("names", [group.name]).append(entry.name)
            continue
        entries.append(entry)
        if pending_doc is not None and pending_doc[1] is None:
            pending_doc[1] = entry
    return Header(path, title, intro, entries)


def parse_tables(types_h):
    """The X-macro tables of a header (types.h, shmem.h): {name: [tuple of arguments, ...]}."""
    with open(types_h, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    tables = {}
    for m in re.finditer(r"#\s*define\s+([A-Z0-9_]+)\(X\)([^\n]*)", text):
        rows = []
        # a row X(...), or OTHER(X): the rows of a table defined before (types.h's
        # ACLSHMEM_REDUCE_ARITH_TYPES is min/max's table and two more rows)
        for args, other in re.findall(r"\bX\(([^)]*)\)|\b([A-Z][A-Z0-9_]*)\(X\)", m.group(2)):
            rows.extend(tables.get(other, []) if other else [tuple(a.strip() for a in args.split(","))])
        tables[m.group(1)] = rows
    return tables


def umbrella_order(include_dir):
    """The headers in the order aclshmem.h includes them."""
    with open(os.path.join(include_dir, "aclshmem.h"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r'#\s*include\s+"(aclshmem/[^"]+\.h)"', text)


def expand_family(entry):
    """The function names a family entry generates, row by row: [(row, [names])]."""
    params = entry.data["params"]
    out = []
    for row in entry.data["rows"]:
        subst = dict(zip(params, row))
        names = []
        for tpl in entry.data["templates"]:
            m = re.search(r"([A-Za-z0-9_<>]+)\s*\(", tpl)
            name = m.group(1)
            for key, val in subst.items():
                name = name.replace(f"<{key}>", val)
            names.append(name)
        out.append((row, names))
    return out


def functions_by_header(include_dir):
    """{"aclshmem/<file>.h": [every function it declares, families expanded]}, in the
    order aclshmem.h includes the headers."""
    tables = parse_tables(os.path.join(include_dir, "aclshmem", "types.h"))
    return {rel: header_function_names(os.path.join(include_dir, rel), tables) for rel in umbrella_order(include_dir)}


def all_function_names(include_dir):
    """Every function the headers declare (families expanded), in header order."""
    return [name for names in functions_by_header(include_dir).values() for name in names]


def header_function_names(path, tables=None):
    """Every function one header declares, families expanded."""
    names = []
    for e in parse_header(path, tables).entries:
        if e.kind == "function":
            names.extend(e.data.get("names", [e.name]))
        elif e.kind == "family":
            for _row, fnames in expand_family(e):
                names.extend(fnames)
    return names


def openshmem_functions_by_header(include_dir):
    """{"shmem.h": [...], "shmemx.h": [...]}: the functions of the OpenSHMEM headers."""
    return {rel: header_function_names(os.path.join(include_dir, rel)) for rel in OPENSHMEM_HEADERS}


def c11_type_tables(path):
    """The C11 generic names' type tables of shmem.h, ``#define SHMEMI_C11_TYPES_X(X, OP)``:
    {name: [C type, ...]}, a table that names another one included."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    raw = dict(re.findall(r"#\s*define\s+(SHMEMI_C11_TYPES_\w+)\(X, OP\)([^\n]*)", text))
    tables = {}

    def types_of(name):
        if name not in tables:
            body = raw[name]
            types = []
            for ref in re.findall(r"\b(SHMEMI_C11_TYPES_\w+)\(X, OP\)", body):
                types += types_of(ref)
            types += [t.strip() for t in re.findall(r"\bX\([^,]*,([^,]*), OP\)", body)]
            tables[name] = types
        return tables[name]

    for name in raw:
        types_of(name)
    return tables


def generic_types(selector, tables):
    """The C types a generic name's selector (SHMEMI_C11_RMA_CONST ...) takes, and whether
    it has context forms (all but the point-to-point ones, the collectives and the deprecated
    names)."""
    family = selector[len(GENERIC_PREFIX):]
    has_ctx = family != "P2P" and not family.endswith("_DEPRECATED") and not family.startswith(("COLL", "REDUCE"))
    family = family.replace("_DEPRECATED", "").replace("_CONST", "")
    return tables.get(GENERIC_PREFIX + "TYPES_" + family, []), has_ctx


def generic_names(include_dir):
    """The C11 generic names of shmem.h."""
    header = parse_header(os.path.join(include_dir, "shmem.h"))
    return [e.name for e in header.entries if e.kind == "generic"]
