"""Algorithm 7: unembedding, a vector ↦ a distribution over the vocabulary (Phuong & Hutter, §5)."""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, d_e
from ..engine.algorithm import Algorithm, Assign
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL
from ..ops import add, matmul, softmax

__all__ = ["ALGORITHMS", "unembedding", "build_unembedding", "LOGIT_BIAS"]

#: Algorithm 7's bias (BERT's output bias).
LOGIT_BIAS = Option("bias", False, BOOL, "whether the logits get a bias b_u (BERT's): softmax(W_u e + b_u)")


@Options(LOGIT_BIAS).builds
def build_unembedding(*, bias) -> Algorithm:
    """Algorithm 7: ``p = softmax(W_u e)``; with ``bias``, ``softmax(W_u e + b_u)`` (BERT's output bias)."""
    logits = matmul("W_u", "e", role="unembed")
    return Algorithm(
        number=7, name="unembedding", display="Unembedding",
        summary="Algorithm 7: a token's vector becomes a distribution over the vocabulary.",
        inputs=[TensorSpec("e", (d_e,), doc="a token encoding")],
        params=[TensorSpec("W_u", (N_V, d_e), doc="unembedding matrix")]
               + ([TensorSpec("b_u", (N_V,), doc="unembedding bias")] if bias else []),
        output=TensorSpec("p", (N_V,), doc="a probability distribution over the vocabulary"),
        lines=[Assign("p", softmax(add(logits, "b_u") if bias else logits, over="logits"), returns=True)],
        params_label="W_u" + (", b_u" if bias else ""),
    )


unembedding = build_unembedding()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (unembedding,)
