"""The named FLOP-counting conventions and how each counts a backward pass: plain data, no sympy.

:mod:`formal.costs.cost` counts with them; the command line offers them as choices without importing sympy.
"""

from __future__ import annotations

from ..errors import ConfigError, shown

__all__ = ["CONVENTIONS", "BACKWARD", "check_convention"]

#: The FLOP conventions of this level, with what each counts.
CONVENTIONS = {
    "matmul": "2 FLOPs per multiply-add of every matrix product (m×k)·(k×n) = 2mkn, attention over the "
              "full ℓ_z×ℓ_x score matrix, nothing else: the convention of "
              "torch.utils.flop_counter.FlopCounterMode.",
    "kaplan": "Kaplan et al. 2020, Table 1: 2 FLOPs per multiply-add of every product with a non-embedding "
              "weight matrix, plus the attention score product KᵀQ (2·ℓ_z·d_attn per query and head); "
              "embeddings, the unembedding, the value-weighting product, softmax, norms, biases and "
              "activations are not counted. Hence C_forward = 2N + 2·L·ℓ·H·d_attn per token, N the entries "
              "of the non-embedding weight matrices.",
    "chinchilla": "Hoffmann et al. 2022, Appendix F: 2 FLOPs per multiply-add of every matrix product (weights, "
                  "scores, value weighting, unembedding), the token embedding counted as a one-hot product "
                  "(2·d_e·N_V per token), 3 FLOPs per entry of the attention softmax; the output softmax, "
                  "norms, biases and activations are not counted.",
    "full": "every floating-point operation the numpy semantics perform: 2mkn per matrix product, one per "
            "element of each elementwise operation, n−1 per reduction of n elements; table lookups, masks, "
            "views and constants computed from sizes alone are free. Each op's docstring gives its count.",
}


#: How each convention counts the backward pass of a gradient step, as a multiple of the forward FLOPs.
BACKWARD = {
    "matmul": (2, "each product (m×k)·(k×n) needs two products of the same size in the backward pass, one "
                  "per operand gradient (what FlopCounterMode counts when every operand requires grad)"),
    "kaplan": (2, "backward ≈ 2 × forward, so a training step is ≈ 6N FLOPs per token (Kaplan et al. 2020, §2.1)"),
    "chinchilla": (2, "backward = 2 × forward (Hoffmann et al. 2022, Appendix F)"),
    "full": (2, "backward taken as 2 × forward, an estimate: the numpy specification executes no backward "
                "pass; the SGD update adds 2 FLOPs per parameter (a multiplication by η and a subtraction)"),
}


def check_convention(convention: str) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS`, else a ConfigError naming the known ones."""
    if convention not in CONVENTIONS:
        raise ConfigError(f"unknown FLOP convention {shown(convention)}; known: {', '.join(CONVENTIONS)}")
    return convention
