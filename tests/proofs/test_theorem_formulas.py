"""A theorem's formula reads as the paper writes: a name (d_attn, ℓ_gen) is never set as a product of italic letters."""

import re

from proofs.registry import theorems


def italic_words(tex: str) -> list:
    """Runs of three or more letters a LaTeX formula sets in italic: a name read as a product of variables."""
    t = re.sub(r"\\(?:mathrm|text|operatorname|textbf|mathbf|mathbb|begin|end)\{(?:[^{}]|\{[^{}]*\})*\}", " ", tex)
    t = re.sub(r"\\[A-Za-z]+", " ", t)
    return re.findall(r"[A-Za-z]{3,}", t)


def test_no_theorem_formula_sets_a_name_in_italic_letters():
    found = {t.name: italic_words(t.latex) for t in theorems() if italic_words(t.latex)}
    assert not found, found
