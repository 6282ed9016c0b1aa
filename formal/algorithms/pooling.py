"""Attention pooling: one learned query attends over the columns of Z, which it summarises in one vector —
a single-query attention (Algorithm 3) whose query is a parameter, not a token.

Three scores:

- ``"dot"``: ``α = softmax(Zᵀq)``, ``s = Σ_t α_t z_t`` with a learned ``q ∈ ℝ^{d_z}`` (the lecture notes'
  ``Attn(q; z_1..z_n)`` with "q … a static learned parameter": ``s = Z @ q; alpha = softmax(s); z = alpha @ Z``);
- ``"mlp"``: Yang et al.'s hierarchical attention, eqs. (5)–(7): ``u_t = tanh(W z_t + b)``,
  ``α_t = exp(u_tᵀ u_w) / Σ_t' exp(u_t'ᵀ u_w)``, ``s = Σ_t α_t z_t``, with ``W ∈ ℝ^{d_a×d_z}``, ``b, u_w ∈ ℝ^{d_a}``
  (the word-level ``W_w, b_w, u_w``; the sentence level is the same layer with its own parameters);
- ``"mean"``: every weight ``α_t = 1/ℓ``, ``s = (1/ℓ) Σ_t z_t`` — average pooling, the baseline attention pooling
  is measured against, with no parameters.

The output is invariant under permutations of the columns of Z (a pooling); self-attention, which returns one
column per column, is equivariant instead.  It is Algorithm 3 with the query a parameter (``W_q e`` replaced
by ``u_w``), ``W_v = I``, no scaling, and under ``"mlp"`` a tanh layer for keys — Bahdanau's additive score
with the query term constant.

Examples
--------
>>> from formal.algorithms.pooling import attention_pooling
>>> # one HAN word-level layer (Yang et al.: GRU states 2×50 wide, u_w ∈ ℝ^100) over a 30-word sentence
>>> attention_pooling.variant(score="mlp").cost("matmul").evaluate({"d_z": 100, "d_a": 100, "ell": 30})
{'params': 10200, 'flops': 612000, 'memory': 9160, 'depth': 4}

References
----------
- D. Bahdanau, K. Cho, Y. Bengio, "Neural machine translation by jointly learning to align and
  translate", ICLR 2015, §3.1 (the context vector c_i = Σ_j α_ij h_j).
- Z. Yang, D. Yang, C. Dyer, X. He, A. Smola, E. Hovy, "Hierarchical attention networks for document
  classification", NAACL 2016, §2.2, eqs. (5)–(7) (and (8)–(10) at the sentence level).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import d_a, d_z, ell
from ..engine.algorithm import Algorithm, Assign
from ..engine.declarations import Option, Options
from ..engine.domains import Choice
from ..ops import ColumnMean, activation, add_bias, matmul, matmul_t, softmax, weighted_sum

__all__ = ["ALGORITHMS", "POOLING_SCORES", "build_attention_pooling", "attention_pooling"]

#: The scores attention pooling takes.
POOLING_SCORES = ("dot", "mlp", "mean")


@Options(Option("score", "dot", Choice(*POOLING_SCORES),
                "dot (softmax(Zᵀq), q learned), mlp (softmax(tanh(W Z + b1ᵀ)ᵀ u_w), Yang et al.) or mean "
                "(every weight 1/ℓ: average pooling, no parameters)")).builds
def build_attention_pooling(*, score) -> Algorithm:
    """Attention pooling: ``s = Σ_t α_t z_t`` with ``α = softmax(Zᵀq)`` (``"dot"``),
    ``α = softmax(tanh(W Z + b1ᵀ)ᵀ u_w)`` (``"mlp"``, Yang et al. 2016, eqs. 5–7), or ``α_t = 1/ℓ``
    (``"mean"``: average pooling)."""
    if score == "mean":
        return _pooling([], [Assign("s", ColumnMean(ell)("Z"), returns=True, note="Every weight 1/ℓ")])
    if score == "dot":
        params = [TensorSpec("q", (d_z,), doc="the learned query")]
        scores = [Assign("e", matmul_t("Z", "q"), note="Score")]
    else:
        params = [TensorSpec("W", (d_a, d_z), doc="weights of the hidden layer (Yang et al.'s W_w)"),
                  TensorSpec("b", (d_a,), doc="bias of the hidden layer (b_w)"),
                  TensorSpec("u_w", (d_a,), doc="the learned context vector (u_w)")]
        scores = [Assign("U", activation("tanh", add_bias(matmul("W", "Z"), "b")), note="Hidden, eq. (5)"),
                  Assign("e", matmul_t("U", "u_w"), note="Score, eq. (6)")]
    return _pooling(params, [*scores, Assign("alpha", softmax("e")), Assign("s", weighted_sum("Z", "alpha"),
                                                                            returns=True)])


def _pooling(params, lines) -> Algorithm:
    return Algorithm(
        number=None, source="Bahdanau et al. 2015; Yang et al. 2016", name="attention_pooling",
        display="AttentionPool",
        summary="Attention pooling: a learned query weighs the columns of Z and returns their weighted sum.",
        inputs=[TensorSpec("Z", (d_z, ell), doc="the vectors pooled, one column each", role="tokens")],
        params=params, output=TensorSpec("s", (d_z,), doc="their attention-weighted sum"),
        lines=lines, params_label="θ" if params else "",
    )


attention_pooling = build_attention_pooling()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (attention_pooling,)
