"""Math in HTML as MathML, written when the docs build: no JavaScript renderer, no request for one — the
pages show their formulas offline, in any current browser (MathML Core: Chromium 109+, Firefox, Safari).

Registered as the HTML math renderer ``mathml``; LaTeX builders keep their math as LaTeX.  The conversion
is latex2mathml's (a PyPI package, pure Python).
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.util import logging

__all__ = ["mathml", "setup"]

logger = logging.getLogger(__name__)


def mathml(latex: str, *, block: bool = False) -> str:
    """``latex`` as a ``<math>`` element (``display="block"`` for a displayed formula)."""
    from latex2mathml.converter import convert
    return convert(latex.strip(), display="block" if block else "inline")


def _converted(latex: str, node, block: bool) -> str:
    """The MathML of ``latex``, or — for LaTeX the converter cannot read — a warning naming it and where it
    is (an error under ``sphinx-build -W``), and the source shown as code."""
    if not latex.strip():
        return ""
    try:
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
