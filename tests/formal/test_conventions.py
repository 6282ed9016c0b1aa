"""The ``kaplan`` and ``chinchilla`` conventions against the papers' own tables, written out here.

Kaplan et al. 2020, Table 1 (per token, "Total (Non-Embedding)"): C_forward = 2N + 2·n_layer·n_ctx·d_attn,
N the entries of the non-embedding weight matrices (QKV, project, feedforward), their d_attn our H·d_attn;
the embed and de-embed rows are left out.  Hoffmann et al. 2022, Appendix F (per sequence): embeddings
2·ℓ·N_V·d_e; per layer QKV 2·3·ℓ·d_e·(H·d_attn), logits 2·ℓ²·(H·d_attn), softmax 3·H·ℓ², value reduction
2·ℓ²·(H·d_attn), final linear 2·ℓ·(H·d_attn)·d_e, dense 2·ℓ·2·d_e·d_mlp; final logits 2·ℓ·d_e·N_V.
Both are generalised in the obvious way to d_mid ≠ d_attn, fewer key/value heads and a gated MLP.
"""

import pytest
import sympy as sp

from formal import algorithms
from formal.core.symbols import N_V, H, L, d_attn, d_e, d_mid, d_mlp, ell, ell_x, ell_z
from formal.costs.cost import BACKWARD
from formal.models.complexity import Model

VARIANTS = [
    {},
    {"position": "learned", "bias": False, "tied": False, "norm": "rms"},
    {"position": "sinusoidal-vaswani", "activation": "gelu", "norm_position": "post"},
    {"position": "none", "activation": "swiglu", "bias": False, "n_kv_heads": 2},
    {"activation": "gelu-tanh", "n_kv_heads": 1, "tied": False},
]


def _shape(options):
    """Key/value heads and the number of d_e×d_mlp matrices of the MLP."""
    return options.get("n_kv_heads") or H, 3 if options.get("activation") == "swiglu" else 2


def kaplan_oracle(options):
    kv, mlp_matrices = _shape(options)
    weights = L * (H * d_attn * d_e + kv * d_attn * d_e + kv * d_mid * d_e + d_e * H * d_mid
                   + mlp_matrices * d_e * d_mlp)
    per_token = 2 * weights + 2 * L * ell * (H * d_attn)
    return ell * per_token


def chinchilla_oracle(options):
    kv, mlp_matrices = _shape(options)
    embeddings = 2 * ell * N_V * d_e
    attention = (2 * ell * d_e * (H * d_attn + kv * d_attn + kv * d_mid)  # key, query and value projections
                 + 2 * ell * ell * (H * d_attn)                          # key @ query logits
                 + 3 * H * ell * ell                                     # softmax
                 + 2 * ell * ell * (H * d_mid)                           # softmax @ value reductions
                 + 2 * ell * (H * d_mid) * d_e)                          # final linear
    dense = 2 * ell * mlp_matrices * d_e * d_mlp
    logits = 2 * ell * d_e * N_V
    return embeddings + L * (attention + dense) + logits


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("convention, oracle", [("kaplan", kaplan_oracle), ("chinchilla", chinchilla_oracle)])
def test_decoder_forward_flops_equal_the_papers_table(convention, oracle, options):
    """Algorithm 10's derived forward FLOPs equal the paper's table exactly, whatever the norms, biases,
    positions, activation or tying: the conventions do not count those."""
    derived = algorithms.dtransformer.variant(**options).cost(convention).flops
    assert sp.expand(derived - oracle(options)) == 0


def test_kaplan_per_token_count_of_gpt3_175b():
    """Kaplan's C_forward = 2N + 2·n_layer·n_ctx·d_attn with N = 12·n_layer·d_model² (no biases counted),
    for GPT-3 175B at n_ctx = 2048 (Brown et al. 2020: n_layer 96, d_model 12288 = 96 heads × 128)."""
    n_layer, d_model, n_ctx = 96, 12288, 2048
    expected = 2 * 12 * n_layer * d_model ** 2 + 2 * n_layer * n_ctx * d_model
    model = Model("dtransformer", {"position": "learned", "activation": "gelu-tanh", "tied": True})
    sizes = {L: n_layer, H: 96, d_attn: 128, d_mid: 128, d_e: d_model, d_mlp: 4 * d_model, ell: n_ctx, N_V: 50257}
    assert model.forward("kaplan").flops.xreplace(sizes) == n_ctx * expected


@pytest.mark.parametrize("convention", ["kaplan", "chinchilla"])
def test_training_step_is_three_forward_passes(convention):
    """Kaplan §2.1 and Chinchilla App. F: backward = 2 × forward, so a training step is 3 × forward
    (≈ 6N per token under kaplan)."""
    assert BACKWARD[convention][0] == 2
    model = Model("dtransformer", {})
    assert sp.expand(model.training_step(convention) - 3 * model.forward(convention).flops) == 0


def test_chinchilla_counts_only_attention_softmax():
    """The output softmax over N_V is not in Appendix F; the attention softmax (3 per entry) is."""
    assert algorithms.unembedding.cost("chinchilla").flops == algorithms.unembedding.cost("matmul").flops
    attention = algorithms.attention
    extra = sp.expand(attention.cost("chinchilla").flops - attention.cost("matmul").flops)
    assert extra == 3 * ell_x * ell_z
