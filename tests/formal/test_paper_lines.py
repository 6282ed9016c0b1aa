"""The paper's algorithms render with the paper's lines and numbering (Phuong & Hutter, arXiv 2207.09238 v1).

The oracle below is written from the paper's pseudocode boxes: for each of Algorithms 1–15, at the default
options, the number of lines and, for each line number, a fragment the line must render.  Lines that compute
nothing (``ℓ ← length(x)``, ``X ← [e_1, …, e_ℓ]``, ``end for``, ``return θ``) are numbered lines with zero cost.
Errors and costs report by these numbers, so "Algorithm 10, line 6" is the MHAttention line the paper's §6 cites.
"""

from __future__ import annotations

import numpy as np
import pytest

import formal
from formal.engine import render
from formal.errors import FormalError

#: Algorithm number → (registry name, {line number: a fragment of that line}, number of lines), from the paper.
#: Algorithm 9's final γ, β are written γ_f, β_f: they are d_f wide, the package's decision W_u ∈ ℝ^(N_V×d_f).
PAPER = {
    1: ("token_embedding", {1: "return e = W_e[:, v]"}, 1),
    2: ("positional_embedding", {1: "return e_p = W_p[:, t]"}, 1),
    3: ("single_query_attention", {1: "q ← W_q e + b_q", 2: "k_t ← W_k e_t + b_k", 3: "v_t ← W_v e_t + b_v",
                                   4: "softmax(kᵀ q/√d_attn)", 5: "return ṽ = Σ_t α_t v_t"}, 5),
    4: ("attention", {1: "Q ←", 2: "K ←", 3: "V ←", 4: "S ← Kᵀ Q", 5: "S[t_z, t_x] ← −∞",
                      6: "return Ṽ = V softmax(S/√d_attn)"}, 6),
    5: ("mhattention", {1: "for h ∈ [H]", 2: "Y^h ← Attention(X, Z", 3: "Y ← [Y^1;", 4: "return Ṽ = W_o Y"}, 4),
    6: ("layer_norm", {1: "m ←", 2: "v ←", 3: "return ê"}, 3),
    7: ("unembedding", {1: "return p = softmax(W_u e)"}, 1),
    8: ("edtransformer", {1: "ℓ_z ← length(z)", 2: "e_t ← TokenEmbedding(z[t]", 3: "Z ← [e_1, …, e_ℓ_z]",
                          4: "for l ∈ [L_enc]", 5: "Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)", 6: "γ^1_l, β^1_l",
                          7: "Z ← Z + (", 8: "γ^2_l, β^2_l", 9: "end for", 10: "ℓ_x ← length(x)",
                          11: "e_t ← TokenEmbedding(x[t]", 12: "X ← [e_1, …, e_ℓ_x]", 13: "for l ∈ [L_dec]",
                          14: "X ← X + MHAttention(X | W^dec_l", 15: "γ^3_l", 16: "MHAttention(X, Z | W^e/d_l",
                          17: "γ^4_l", 18: "X ← X + (", 19: "γ^5_l", 20: "end for",
                          21: "return P[:, t] = Unembedding"}, 21),
    9: ("etransformer", {1: "ℓ ← length(x)", 2: "e_t ← TokenEmbedding(x[t]", 3: "X ← [e_1, …, e_ℓ]",
                         4: "for l ∈ [L]", 5: "X ← X + MHAttention(X | W_l, Mask ≡ 1)", 6: "γ^1_l, β^1_l",
                         7: "GELU(", 8: "γ^2_l, β^2_l", 9: "end for", 10: "X ← GELU(W_f X + b_f",
                         11: "layer_norm(X[:, t] | γ_f, β_f)", 12: "return P[:, t] = Unembedding"}, 12),
    10: ("dtransformer", {1: "ℓ ← length(x)", 2: "e_t ← TokenEmbedding(x[t]", 3: "X ← [e_1, …, e_ℓ]",
                          4: "for l ∈ [L]", 5: "X̃[:, t] ← layer_norm(X[:, t] | γ^1_l, β^1_l)",
                          6: "X ← X + MHAttention(X̃ | W_l, Mask[t_z, t_x] = [[t_z ≤ t_x]])",
                          7: "X̃[:, t] ← layer_norm(X[:, t] | γ^2_l, β^2_l)", 8: "GELU(", 9: "end for",
                          10: "X[:, t] ← layer_norm(X[:, t] | γ, β)", 11: "return P[:, t] = Unembedding"}, 11),
    11: ("edtraining", {1: "for i ∈ [N_epochs]", 2: "for n ∈ [N_data]", 3: "← length(",
                        4: "P ← EDTransformer(", 5: "loss ← −Σ_(t=1)^(ℓ−1) log P[", 6: "θ ← θ − η·∇loss(θ)",
                        7: "end for", 8: "end for", 9: "return θ"}, 9),
    12: ("etraining", {1: "for i ∈ [N_epochs]", 2: "for n ∈ [N_data]", 3: "ℓ ← length(", 4: "for t ∈ [ℓ]",
                       5: "x̃[t] ← mask_token or", 6: "end for", 7: "T̃ ← {t ∈ [ℓ] : x̃[t] = mask_token}",
                       8: "P ← ETransformer(x̃", 9: "loss ← −Σ_(t∈T̃) log P[", 10: "θ ← θ − η·∇loss(θ)",
                       11: "end for", 12: "end for", 13: "return θ"}, 13),
    13: ("dtraining", {1: "for i ∈ [N_epochs]", 2: "for n ∈ [N_data]", 3: "ℓ ← length(", 4: "P ← DTransformer(",
                       5: "loss ← −Σ_(t=1)^(ℓ−1) log P[", 6: "θ ← θ − η·∇loss(θ)", 7: "end for", 8: "end for",
                       9: "return θ"}, 9),
    14: ("dinference", {1: "ℓ ← length(x)", 2: "for i ∈ [ℓ_gen]", 3: "P ← DTransformer(", 4: "p ← P[:, ℓ+i−1]",
                        5: "y ← sample from p^(1/τ)", 6: "x ← [x, y]", 7: "end for", 8: "return y_gen = x[ℓ+1:]"}, 8),
    15: ("edinference", {1: "x̂ ← [bos_token]", 2: "y ← 0", 3: "until y = eos_token", 4: "P ← EDTransformer(z, x̂",
                         5: "p ← P[:, length(x̂)]", 6: "y ← sample from p^(1/τ)", 7: "x̂ ← [x̂, y]",
                         8: "end while", 9: "return y_gen = x̂"}, 9),
}


def _lines(algorithm) -> list:
    return [render.line_text(record.line) for record in algorithm.derivation.records]


@pytest.mark.parametrize("number", sorted(PAPER))
def test_lines_are_the_papers(number):
    name, fragments, count = PAPER[number]
    algorithm = formal.ALGORITHMS[name]
    assert algorithm.number == number and algorithm.options == algorithm.option_specs.defaults()
    lines = _lines(algorithm)
    assert len(lines) == count, "\n".join(lines)
    for line, fragment in fragments.items():
        assert fragment in lines[line - 1], f"Algorithm {number}, line {line}: {lines[line - 1]!r}"
    assert [r.number for r in algorithm.derivation.records] == list(range(1, count + 1))


@pytest.mark.parametrize("number", sorted(PAPER))
def test_every_rendering_numbers_as_the_paper(number):
    """show (text), --json, --latex and the docs' View carry the paper's count of numbered lines."""
    name, _, count = PAPER[number]
    algorithm = formal.ALGORITHMS[name]
    view = render.view(algorithm)
    assert [line.number for line in view.lines] == list(range(1, count + 1))
    assert [line["number"] for line in render.to_json(algorithm)["lines"]] == list(range(1, count + 1))
    assert render.to_latex(algorithm).count(r"\State ") == count
    numbered = [row.split()[0] for row in render.to_text(algorithm).splitlines() if row[:3].strip().isdigit()]
    assert numbered == [str(n) for n in range(1, count + 1)]


@pytest.mark.parametrize("number, line", [(8, 9), (8, 20), (9, 1), (9, 3), (10, 1), (10, 3), (10, 9), (11, 9),
                                          (12, 6), (14, 7), (15, 2), (15, 8)])
def test_lines_that_compute_nothing_cost_nothing(number, line):
    record = formal.ALGORITHMS[PAPER[number][0]].derivation.record(line)
    assert all(flops == 0 for flops in record.work.flops.values()) and record.work.memory == 0


def test_the_costs_sit_on_the_papers_lines():
    """Algorithm 10's attention FLOPs are on line 6 (the paper's), its loop's on line 4."""
    d = formal.ALGORITHMS["dtransformer"].derivation
    assert "d_attn" in str(d.record(6).work.flops["matmul"]) and d.record(5).work.flops["matmul"] == 0
    assert "L" in str(d.record(4).work.flops["matmul"])
    assert d.record(3).shape == d.record(2).shape  # X ← [e_1, …, e_ℓ] has X's shape


def _arguments(algorithm, sizes: dict) -> dict:
    """Random arguments of ``algorithm`` at ``sizes`` (symbol name → int): ids below their bound, the rest normal."""
    rng = np.random.default_rng(0)

    def size(dim):
        return int(dim.subs({s: sizes[s.name] for s in dim.free_symbols}))

    out = {}
    for spec in algorithm.signature:
        shape = tuple(size(d) for d in spec.shape)
        out[spec.name] = (rng.integers(0, size(spec.bound), shape) if spec.kind == "index"
                          else rng.standard_normal(shape))
    return out


def test_an_execution_error_names_the_papers_line():
    """A key weight of the wrong width fails in Algorithm 10's MHAttention call: line 6, as the paper numbers
    it (it was line 4 before the paper's numbering)."""
    sizes = {"N_V": 7, "d_e": 4, "ell": 3, "ell_max": 5, "L": 2, "H": 2, "d_attn": 2, "d_mid": 2, "d_mlp": 6}
    arguments = _arguments(formal.ALGORITHMS["dtransformer"], sizes)
    assert formal.ALGORITHMS["dtransformer"].run(**arguments).output.shape == (7, 3)
    arguments["W_k"] = np.zeros(arguments["W_k"].shape[:-2] + (3, 4))  # d_attn 3 against W_q's 2
    with pytest.raises(FormalError, match=r"line 6\b"):
        formal.ALGORITHMS["dtransformer"].run(**arguments)


#: Each algorithm's hyperparameters as the paper lists them, and (second) what the package's documented decisions
#: add: d_attn and d_mid are hyperparameters of Algorithms 8–10, Algorithm 8's learned W_p has ℓ_max columns as
#: Algorithm 9's and 10's do, and EDInference caps its output at ℓ_gen tokens.
HYPERPARAMETERS = {
    5: ({"H"}, set()),
    8: ({"L_enc", "L_dec", "H", "d_e", "d_mlp"}, {"d_attn", "d_mid", "ℓ_max"}),
    9: ({"ℓ_max", "L", "H", "d_e", "d_mlp", "d_f"}, {"d_attn", "d_mid"}),
    10: ({"ℓ_max", "L", "H", "d_e", "d_mlp"}, {"d_attn", "d_mid"}),
    11: ({"N_epochs", "η"}, set()), 12: ({"N_epochs", "η", "p_mask"}, set()), 13: ({"N_epochs", "η"}, set()),
    14: ({"τ", "ℓ_gen"}, set()), 15: ({"τ"}, {"ℓ_gen"}),
}


@pytest.mark.parametrize("number", sorted(PAPER))
def test_hyperparameters_are_the_papers(number):
    from formal.engine.hyper import hyperparameters
    algorithm = formal.ALGORITHMS[PAPER[number][0]]
    paper, added = HYPERPARAMETERS.get(number, (set(), set()))
    assert set(hyperparameters(algorithm).text()) == paper | added
    shown = render.to_text(algorithm)
    assert all(name in shown.split("Output:")[0] for name in paper | added)  # on the Hyperparams line
    data = render.to_json(algorithm)["hyperparameters"]
    assert len(data["sizes"]) + len(data["scalars"]) == len(paper | added)
