"""Rendering of every algorithm and variant: the paper's line numbering, and views that do not fail."""

import json
import subprocess
import sys

import pytest

import formal
from formal.engine import render
from tests.tiers import fast_few, in_fast_tier, slow

VARIANTS = [
    ("token_embedding", {}), ("positional_embedding", {"encoding": "sinusoidal-paper"}),
    ("positional_embedding", {"encoding": "sinusoidal-vaswani"}), ("single_query_attention", {"bias": False}),
    ("attention", {"bias": False, "empty": "error"}), ("mhattention", {}), ("mhattention", {"n_kv_heads": 1}),
    ("mhattention", {"n_kv_heads": "symbolic", "bias": False}), ("layer_norm", {"norm": "rms", "eps": 1e-6}),
    ("layer_norm", {}), ("unembedding", {}),
]


@pytest.mark.parametrize("name, options", fast_few(VARIANTS, keep=lambda v: in_fast_tier(v[0]), unpack=True))
def test_every_view_renders(name, options):
    algorithm = formal.get(name, **options)
    for convention in formal.CONVENTIONS:
        text = render.to_text(algorithm, convention)
        assert text.startswith(f"Algorithm {algorithm.number}:")
        data = render.to_json(algorithm, convention)
        json.dumps(data)
        assert [line["number"] for line in data["lines"]] == list(range(1, len(data["lines"]) + 1))
    latex = render.to_latex(algorithm)  # one numbered \State per line of the view
    assert latex.count(r"\State ") == len(data["lines"]) and r"\For{" not in latex


@pytest.mark.parametrize("name, lines", [("token_embedding", 1), ("positional_embedding", 1),
                                         ("single_query_attention", 5), ("attention", 6),
                                         ("mhattention", 4), ("layer_norm", 3), ("unembedding", 1)])
def test_line_count_is_the_papers(name, lines):
    """Lines keep the paper's numbering, so "Algorithm 4, line 5" is the masking line."""
    assert len(formal.ALGORITHMS[name].derivation.records) == lines


def test_masking_is_line_5_of_algorithm_4():
    record = formal.attention.derivation.record(5)
    assert "−∞" in render.line_text(record.line)


def test_formal_imports_none_of_the_other_packages():
    """The arrows point one way: formal imports nothing of reference or proofs, and needs only numpy, sympy
    and networkx."""
    code = "import sys, formal; print(sorted(m for m in ('torch', 'reference', 'proofs') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@slow
def test_latex_is_ascii_for_every_algorithm():
    """``show --latex`` writes LaTeX macros, never a raw glyph (ℓ, −, ←) that pdflatex rejects: every
    algorithm, every line (the LaTeX test compiles them where a LaTeX is installed)."""
    from formal import algorithms
    from formal.engine.render import to_latex
    for name, algorithm in algorithms.ALGORITHMS.items():
        tex = to_latex(algorithm)
        assert tex.isascii(), (name, sorted({c for c in tex if not c.isascii()}))
