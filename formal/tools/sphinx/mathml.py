"""Math in HTML as MathML, written when the docs build: no JavaScript renderer, no request for one — the
pages show their formulas offline, in any current browser (MathML Core: Chromium 109+, Firefox, Safari).

Registered as the HTML math renderer ``mathml``; LaTeX builders keep their math as LaTeX.  The conversion
is latex2mathml's (a PyPI package, pure Python).
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.util import logging

__all__ = ["mathml", "written", "terms", "factors", "arguments", "setup"]

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
        bracket = re.match(r"\\(left|right)(?![a-zA-Z])", latex[i:])
        if bracket:                                      # \left( … \right): a bracket pair (not \leftarrow)
            depth += 1 if bracket.group(1) == "left" else -1
            i += bracket.end() + 1
            previous = "(" if bracket.group(1) == "left" else ")"
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


def factors(term: str) -> list[str]:
    """A long product cut before each top-level ``\\cdot`` into pieces of about :data:`LONG` characters (each
    after the first beginning with its ``\\cdot``), so that even one term of a sum can wrap."""
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(term):
        c = term[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif depth == 0 and term.startswith("\\cdot", i) and i - start >= LONG // 2:
            pieces.append(term[start:i].strip())
            start = i
        i += 1
    pieces.append(term[start:].strip())
    return [p for p in pieces if p]


def arguments(text: str) -> list[str]:
    """A long call — ``MHAttentionKV(X̃, K_c, V_c | W_l, Mask…)`` — cut after the commas between its arguments
    (and before its ``\\mid``), pieces of about :data:`LONG` characters, so that a long line can wrap."""
    pieces, braces, parens, start = [], 0, 0, 0
    for i, c in enumerate(text):
        if c == "{":
            braces += 1
        elif c == "}":
            braces -= 1
        elif c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif braces == 0 and parens <= 1 and i - start >= LONG // 2 and (
                c == "," or text.startswith("\\mid", i)):
            cut = i + 1 if c == "," else i
            pieces.append(text[start:cut].strip())
            start = cut
    pieces.append(text[start:].strip())
    return [text] if re.search(r"\\(?:left|right)(?![a-z])", text) else [p for p in pieces if p]


def written(latex: str, *, block: bool = False) -> str:
    """The HTML a formula is written as on a page: one ``<math>``, or several (a long one, to wrap)."""
    return _converted(latex, None, block)


def _converted(latex: str, node, block: bool) -> str:
    """The MathML of ``latex``, or — for LaTeX the converter cannot read — a warning naming it and where it
    is (an error under ``sphinx-build -W``), and the source shown as code."""
    if not latex.strip():
        return ""
    parts = [piece for term in (terms(latex) if len(latex) > LONG else [latex])
             for product in (factors(term) if len(term) > LONG else [term])
             for piece in (arguments(product) if len(product) > LONG else [product])]
    try:
        if len(parts) > 1:   # one formula per term, each a break opportunity; displayed ones keep display style
            style = "\\displaystyle " if block else ""
            maths = " ".join(mathml(style + part) for part in parts)
            return f'<span class="formal-math-terms">{maths}</span>'
        return mathml(latex, block=block)
    except Exception as error:   # latex2mathml raises its own exception types, and IndexError on some input
        logger.warning(f"formal.tools.sphinx cannot write {latex!r} as MathML ({type(error).__name__}: {error})",
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
