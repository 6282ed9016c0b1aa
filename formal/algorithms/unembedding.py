"""Algorithm 7: unembedding, a vector ↦ a distribution over the vocabulary (Phuong & Hutter, §5)."""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, d_e
from ..engine.algorithm import Algorithm, Assign
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL, AnyOf, Choice, Real
from ..ops import add, matmul, softmax
from ..ops.softcap import soft_cap

__all__ = ["ALGORITHMS", "unembedding", "build_unembedding", "LOGIT_BIAS", "LOGIT_CAP"]

#: Algorithm 7's bias (BERT's output bias).
LOGIT_BIAS = Option("bias", False, BOOL, "whether the logits get a bias b_u (BERT's): softmax(W_u e + b_u)")


#: Soft-capping of the logits (:mod:`formal.ops.softcap`; Gemma 2's final_logit_softcapping).
LOGIT_CAP = Option("cap", None, AnyOf(Choice(None), Real(0, open_low=True)),
                   "soft-capping of the logits before the softmax, c·tanh(z/c) (Gemma 2: 30): None or the cap c",
                   examples=(None, 2.0), searched=(None, 30.0, 2.0), group="logit_cap")


@Options(LOGIT_BIAS, LOGIT_CAP).builds
def build_unembedding(*, bias, cap) -> Algorithm:
    """Algorithm 7: ``p = softmax(W_u e)``; with ``bias``, ``softmax(W_u e + b_u)`` (BERT's output bias); with a
    ``cap`` c, the logits are soft-capped first, ``softmax(c·tanh(W_u e/c))`` (Gemma 2)."""
    logits = matmul("W_u", "e", role="unembed")
    return Algorithm(
        number=7, name="unembedding", display="Unembedding",
        summary="Algorithm 7: a token's vector becomes a distribution over the vocabulary.",
        inputs=[TensorSpec("e", (d_e,), doc="a token encoding")],
        params=[TensorSpec("W_u", (N_V, d_e), doc="unembedding matrix")]
               + ([TensorSpec("b_u", (N_V,), doc="unembedding bias")] if bias else []),
        output=TensorSpec("p", (N_V,), doc="a probability distribution over the vocabulary"),
        lines=[Assign("p", softmax(soft_cap(add(logits, "b_u") if bias else logits, cap), over="logits"),
                      returns=True)],
        params_label="W_u" + (", b_u" if bias else ""),
    )


unembedding = build_unembedding()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (unembedding,)
