"""Sub- and superscripts written in plain text the TeX way — ``h_{t−1}``, ``p^{1/τ}``, ``Σ_{q<ℓ}`` in a docstring,
an option's meaning or a note, which the command line prints as they are — typeset on the page as sub- and
superscripts, so that no ``_{`` reaches a reader.  Code, literals and math are left alone."""

from __future__ import annotations

import re

from docutils import nodes

__all__ = ["SCRIPT", "typeset", "setup"]

#: ``_{…}`` or ``^{…}`` (one level of nested braces inside).
SCRIPT = re.compile(r"([_^])\{((?:[^{}]|\{[^{}]*\})*)\}")

#: Where text is shown as written: code, literals, math, raw HTML, the command line's own reference.
_VERBATIM = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.doctest_block)


def typeset(text: str) -> list:
    """``text`` as Text, subscript and superscript nodes (a list with one Text node when it has no script)."""
    out, at = [], 0
    for match in SCRIPT.finditer(text):
        if match.start() > at:
            out.append(nodes.Text(text[at:match.start()]))
        kind = nodes.subscript if match.group(1) == "_" else nodes.superscript
        inner = match.group(2)
        node = kind()
        node += typeset(inner) if SCRIPT.search(inner) else [nodes.Text(inner)]
        out.append(node)
        at = match.end()
    if at < len(text):
        out.append(nodes.Text(text[at:]))
    return out


def _verbatim(node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _VERBATIM) or "formal-math-source" in parent.get("classes", ()):
            return True
        parent = parent.parent
    return False


def _read(app, doctree) -> None:
    for text in list(doctree.findall(nodes.Text)):
        if ("_{" in text or "^{" in text) and text.parent is not None and not _verbatim(text):
            parts = typeset(str(text))
            if len(parts) > 1 or not isinstance(parts[0], nodes.Text):
                text.parent.replace(text, parts)


def setup(app) -> None:
    app.connect("doctree-read", _read)
