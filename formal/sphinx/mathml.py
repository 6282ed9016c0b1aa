"""Math in HTML as MathML, written when the docs build: no JavaScript renderer, no request for one — the
pages show their formulas offline, in any current browser (MathML Core: Chromium 109+, Firefox, Safari).

Registered as the HTML math renderer ``mathml``; LaTeX builders keep their math as LaTeX.  The conversion
is latex2mathml's (a PyPI package, pure Python).
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.util import logging

__all__ = ["mathml", "terms", "setup"]

#: A formula longer than this (characters of LaTeX) is written as one ``<math>`` per term, so that it wraps
#: between terms where its box is narrow (MathML Core has no line breaking inside a formula).
LONG = 60

logger = logging.getLogger(__name__)


def mathml(latex: str, *, block: bool = False) -> str:
    """``latex`` as a ``<math>`` element (``display="block"`` for a displayed formula)."""
    from latex2mathml.converter import convert
    return convert(latex.strip(), display="block" if block else "inline")


def terms(latex: str) -> list[str]:
    """``latex`` cut before each ``+`` or ``-`` that joins top-level terms (outside braces and brackets, and not
    a sign after an operator, ``^``, ``_`` or a relation), each cut beginning with its operator; ``[latex]``
    when it has one term."""
    out, depth, start, previous = [], 0, 0, ""
    i = 0
    while i < len(latex):
        c = latex[i]
        if latex.startswith(("\\left", "\\right"), i):   # \left( … \right): a bracket pair
            word = "\\left" if latex.startswith("\\left", i) else "\\right"
            depth += 1 if word == "\\left" else -1
            i += len(word) + 1
            previous = "(" if word == "\\left" else ")"
            continue
        if c == "\\":                                    # a command: skip its name
            j = i + 1
            while j < len(latex) and latex[j].isalpha():
                j += 1
            previous = latex[i:max(j, i + 2)]
            i = max(j, i + 2)
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c in "+-" and depth == 0 and i > start and previous not in ("", "+", "-", "=", "^", "_", "(",
                                                                           "\\cdot", "\\times", "\\le", "\\ge"):
            out.append(latex[start:i].strip())
            start = i
        if not c.isspace():
            previous = c
        i += 1
    out.append(latex[start:].strip())
    return [t for t in out if t]


def _converted(latex: str, node, block: bool) -> str:
    """The MathML of ``latex``, or — for LaTeX the converter cannot read — a warning naming it and where it
    is (an error under ``sphinx-build -W``), and the source shown as code."""
    if not latex.strip():
        return ""
    parts = terms(latex) if len(latex) > LONG else [latex]
    try:
        if len(parts) > 1:   # one formula per term, each a break opportunity; displayed ones keep display style
            style = "\\displaystyle " if block else ""
            maths = " ".join(mathml(style + part) for part in parts)
            return f'<span class="formal-math-terms">{maths}</span>'
        return mathml(latex, block=block)
    except Exception as error:   # latex2mathml raises its own exception types, and IndexError on some input
        logger.warning(f"formal.sphinx cannot write {latex!r} as MathML ({type(error).__name__}: {error})",
                       location=node)
        return f'<code class="formal-math-source">{html.escape(latex)}</code>'


def _visit_math(self, node):
    self.body.append(f'<span class="math formal-math">{_converted(node.astext(), node, False)}</span>')
    raise nodes.SkipNode


def _visit_math_block(self, node):
    if node.get("label"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    for part in filter(str.strip, node.astext().split("\n\n")):   # blank lines separate equations
        self.body.append(f'<div class="math formal-math">{_converted(part, node, True)}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (_visit_math, None), (_visit_math_block, None))
