r"""Prose as ASCII LaTeX: an option's meaning (``softmax(KᵀQ/√d_attn + B)``, ``[H⃗; H⃖]``) written in text
mode, LaTeX's special characters escaped and every glyph as a macro in math mode, so that ``show --latex``
stays ASCII, which pdflatex takes without a Unicode package.

>>> print(latex_text("W_u = W_eᵀ, τ ∈ (0, 1)"))
W\_u = W\_e$^{\top}$, $\tau$ $\in$ (0, 1)
>>> print(latex_text("[H⃗; H⃖], Â"))
[$\vec{H}$; $\overleftarrow{H}$], $\hat{A}$
"""

from __future__ import annotations

import unicodedata

__all__ = ["latex_text", "code", "GLYPHS"]

#: A glyph → its LaTeX in math mode.
GLYPHS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon", "η": r"\eta",
    "θ": r"\theta", "λ": r"\lambda", "μ": r"\mu", "π": r"\pi", "σ": r"\sigma", "τ": r"\tau", "φ": r"\varphi",
    "Σ": r"\Sigma", "Δ": r"\Delta", "ℓ": r"\ell", "ℝ": r"\mathbb{R}", "ᵀ": r"^{\top}", "²": "^{2}", "¹": "^{1}",
    "·": r"\cdot", "×": r"\times", "←": r"\leftarrow", "→": r"\rightarrow", "↦": r"\mapsto", "∈": r"\in",
    "√": r"\surd", "∝": r"\propto", "≥": r"\geq", "≤": r"\leq", "≠": r"\neq", "⊙": r"\odot", "⌊": r"\lfloor",
    "⌋": r"\rfloor", "∞": r"\infty", "∑": r"\sum", "±": r"\pm", "≈": r"\approx", "∘": r"\circ",
}
#: A combining mark → the accent it puts on the glyph before it.
_ACCENTS = {"\u0303": r"\tilde", "\u0302": r"\hat", "\u0304": r"\bar", "\u20d7": r"\vec", "\u20d6": r"\overleftarrow"}
#: Text-mode characters: LaTeX's specials escaped, and typography.
_TEXT = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
         "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "−": "-", "–": "--", "—": "---",
         "…": r"\dots{}", "§": r"\S{}", "’": "'", "“": "``", "”": "''"}


def latex_text(text: str) -> str:
    """``text`` as ASCII LaTeX (text mode); a glyph without a rendering here becomes ``?``."""
    tokens = []                                                   # (math?, LaTeX)
    for c in unicodedata.normalize("NFD", text):
        if c in _ACCENTS and tokens:
            math, last = tokens.pop()
            base = last                                           # a letter, or a glyph's macro
            tokens.append((True, f"{_ACCENTS[c]}{{{base}}}"))
        elif c in GLYPHS:
            tokens.append((True, GLYPHS[c]))
        else:
            tokens.append((False, _TEXT.get(c, c if c.isascii() else "?")))
    out, math = [], False
    for is_math, piece in tokens:
        if is_math != math:
            out.append("$")
            math = is_math
        out.append(piece)
    return "".join(out) + ("$" if math else "")


def code(text: str) -> str:
    """``text`` in a typewriter face (an option's name or value), escaped: ``\\texttt{n\\_kv\\_heads}``."""
    return rf"\texttt{{{latex_text(text)}}}"
