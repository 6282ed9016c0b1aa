"""The docutils nodes the ``formal`` directives are built from: math, paragraphs, tables (with the classes a
cell needs), field lists and links to other entries; and the ``KEY=VALUE, …`` lists directives take."""

from __future__ import annotations

from dataclasses import dataclass

from docutils import nodes
from sphinx import addnodes

__all__ = ["parse_options", "items", "math", "para", "joined", "table", "Cell", "row", "field_list", "xref",
           "resolved_link"]


def parse_options(text: str, what: str) -> dict:
    """``KEY=VALUE, …`` as a dict of words: an int, ``true``/``false`` as a bool, otherwise the text.  Parsed,
    never evaluated.  A key given twice, an item that is not ``KEY=VALUE`` (items are separated by commas) or a
    value holding another ``=`` or a ``;`` is a ValueError naming it.  (An algorithm's options are typed by
    :func:`formal.engine.options.parse_options` instead.)"""
    out = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.isidentifier() or "=" in value or ";" in value:
            raise ValueError(f"{what}: {item!r} is not KEY=VALUE (separate the items with commas)")
        if key in out:
            raise ValueError(f"{what}: {key!r} is given twice ({key}={out[key]!r} and {key}={value})")
        out[key] = (int(value) if value.lstrip("+-").isdigit() else
                    {"true": True, "false": False}.get(value.lower(), value))
    return out


def items(text: str) -> list:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def math(latex: str) -> nodes.math:
    return nodes.math(latex, latex)


def para(*children) -> nodes.paragraph:
    p = nodes.paragraph()
    for child in children:
        p += nodes.Text(child) if isinstance(child, str) else child
    return p


def joined(items, separator=", ") -> list:
    out = []
    for i, item in enumerate(items):
        if i:
            out.append(nodes.Text(separator))
        out.append(item)
    return out


def table(header, rows, classes=(), widths=None) -> nodes.table:
    """A table whose cells are node lists (or strings)."""
    out = nodes.table(classes=list(classes))
    group = nodes.tgroup(cols=len(header))
    out += group
    for width in widths or [1] * len(header):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    head += row(header)
    body = nodes.tbody()
    group += body
    for cells in rows:
        body += row(cells)
    return out


@dataclass(frozen=True)
class Cell:
    """A table cell with CSS classes of its own (a plain cell is a string or a list of nodes)."""

    content: object
    classes: tuple = ()
    blocks: bool = False   # content is a list of block nodes (paragraphs), not of inline ones


def row(cells) -> nodes.row:
    """A table row: each cell a string, a list of nodes, or a :class:`Cell`."""
    out = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        if isinstance(cell, Cell):
            entry["classes"] += list(cell.classes)
            if cell.blocks:
                entry += cell.content
                out += entry
                continue
            cell = cell.content
        para = nodes.paragraph()
        for child in (cell if isinstance(cell, list) else [cell]):
            para += nodes.Text(child) if isinstance(child, str) else child
        entry += para
        out += entry
    return out


def field_list(fields) -> nodes.field_list:
    """``name: body`` pairs, a body being a block node, a list of inline nodes or a string."""
    out = nodes.field_list()
    for name, body in fields:
        field = nodes.field()
        field += nodes.field_name(name, name)
        content = nodes.field_body()
        content += body if isinstance(body, nodes.Element) and not isinstance(body, nodes.Inline) else para(
            *(body if isinstance(body, list) else [body]))
        field += content
        out += field
    return out


def xref(kind: str, target: str, text: str | None = None) -> addnodes.pending_xref:
    """A link to another entry; plain text (no warning) where the project does not document that one."""
    ref = addnodes.pending_xref("", refdomain="formal", reftype=kind, reftarget=target, refexplicit=text is not None,
                                refwarn=False)
    ref += nodes.literal(text or target, text or target, classes=["xref", "formal"])
    return ref


def resolved_link(app, fromdocname: str, kind: str, target: str, text: str | None = None) -> nodes.Node:
    """A link to another entry made after the references were resolved (a node filled in when its page is
    written); plain text where the project does not document that one."""
    label = nodes.literal(text or target, text or target, classes=["xref", "formal"])
    found = app.env.get_domain("formal").data["objects"].get((kind, target))
    if found is None or not hasattr(app.builder, "get_relative_uri"):
        return label
    docname, anchor = found
    uri = app.builder.get_relative_uri(fromdocname, docname) + "#" + anchor
    ref = nodes.reference("", "", internal=True, refuri=uri)
    ref += label
    return ref
