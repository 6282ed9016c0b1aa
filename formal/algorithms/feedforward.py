"""The position-wise feed-forward network: the MLP every layer of Algorithms 8–10 applies to each token
(Vaswani et al. 2017, eq. 2), as an algorithm of its own, so that an implementation of it can be checked alone.

``Y = W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ`` on the columns of X ∈ ℝ^{d_e×ℓ}: Vaswani et al.'s
``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2`` with φ = ReLU (the default, as in their eq. 2), the exact GELU of
BERT and the paper's Algorithms 9 and 10, GPT-2's tanh GELU, or SwiGLU, ``W_mlp2 (SiLU(W_gate X) ⊙ (W_mlp1 X +
b_mlp1 1ᵀ)) + b_mlp2 1ᵀ`` (Shazeer 2020).  Its line is the one the stacks' MLP sublayer reads
(:func:`formal.algorithms.blocks.mlp_expression`), its parameters are named as the stacks name a layer's.

References
----------
- A. Vaswani et al., "Attention is all you need", NeurIPS 2017, §3.3, eq. (2).
- N. Shazeer, "GLU variants improve transformer", arXiv 2002.05202, 2020 (SwiGLU).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import d_e, ell
from ..engine.algorithm import Algorithm, Assign
from ..engine.declarations import Options
from .blocks import MLP_ACTIVATION, STACK_BIAS, mlp_expression, mlp_params

__all__ = ["ALGORITHMS", "MLP_OPTIONS", "build_mlp", "mlp"]

#: The MLP's options: its activation (ReLU, Vaswani et al.'s eq. 2, by default) and its biases.
MLP_OPTIONS = Options(MLP_ACTIVATION.but(default="relu"),
                      STACK_BIAS.but(doc="whether the two projections have biases b_mlp1, b_mlp2"))


@MLP_OPTIONS.builds
def build_mlp(*, activation, bias) -> Algorithm:
    """The position-wise feed-forward network: ``Y ← W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ``, the same
    MLP on every token (column) of X; ``activation="swiglu"`` gates ``W_mlp1 X`` by ``SiLU(W_gate X)``."""
    return Algorithm(
        number=None, source="Vaswani et al. 2017, eq. (2)", name="mlp", display="MLP",
        summary="The position-wise feed-forward network of Algorithms 8–10: the same MLP on every token.",
        inputs=[TensorSpec("X", (d_e, ell), doc="token representations, one column per token", role="tokens")],
        params=mlp_params("", activation, bias, doc=""),
        output=TensorSpec("Y", (d_e, ell), doc="each token's representation, transformed on its own"),
        lines=[Assign("Y", mlp_expression("X", activation, bias), returns=True)],
        params_label="W_mlp",
        permutation={"X": "equivariant"},   # position-wise: permuting the tokens permutes the outputs alike
    )


mlp = build_mlp()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (mlp,)
