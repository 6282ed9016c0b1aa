"""Algorithm 7: unembedding, a vector ↦ a distribution over the vocabulary (Phuong & Hutter, §5)."""

from __future__ import annotations

from ..algorithm import Algorithm, Assign
from ..ops import matmul, softmax
from ..shapes import TensorSpec
from ..symbols import N_V, d_e

__all__ = ["unembedding", "build_unembedding"]


def build_unembedding() -> Algorithm:
    """Algorithm 7: ``p = softmax(W_u e)``."""
    return Algorithm(
        number=7, name="unembedding", display="Unembedding",
        summary="Algorithm 7: a token's vector becomes a distribution over the vocabulary.",
        inputs=[TensorSpec("e", (d_e,), doc="a token encoding")],
        params=[TensorSpec("W_u", (N_V, d_e), doc="unembedding matrix")],
        output=TensorSpec("p", (N_V,), doc="a probability distribution over the vocabulary"),
        lines=[Assign("p", softmax(matmul("W_u", "e")), returns=True)],
        params_label="W_u", builder=build_unembedding,
    )


unembedding = build_unembedding()
