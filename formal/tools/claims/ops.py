"""The spec's primitives a claim can execute by name (``op = "softmax"``), each as a one-line algorithm
over a vector ``x`` of length ``n``, so that it runs through the same execution (shape checks, the op's
numpy semantics) as every algorithm.  A claim with ``algorithm`` and ``inputs`` runs that algorithm."""

from __future__ import annotations

from functools import lru_cache

from ...errors import shown
from .claim import ClaimError

__all__ = ["ops", "op_algorithm", "subject_algorithm"]


def ops() -> tuple:
    """The ops by name: ``softmax`` (over the vector, Algorithm 4's line 6) and the MLP activations of
    :data:`formal.ops.ACTIVATIONS`."""
    from ...ops import ACTIVATIONS
    return ("softmax", *ACTIVATIONS)


@lru_cache(maxsize=None)
def op_algorithm(name: str):
    """The one-line algorithm ``y ← name(x)``."""
    from ...core.shapes import TensorSpec
    from ...core.symbols import dim
    from ...engine.algorithm import Algorithm, Assign
    from ...ops import activation, softmax
    if name not in ops():
        raise ClaimError(f"op = {shown(name)} is not an op a claim can run; known: {', '.join(ops())}")
    n = dim("n")
    node = softmax("x", over="logits") if name == "softmax" else activation(name, "x")
    return Algorithm(number=0, name=name, display=name, summary=f"the spec's {name} of a vector",
                     inputs=[TensorSpec("x", (n,), doc="a vector")], params=[],
                     output=TensorSpec("y", (n,), doc=f"{name}(x)"), lines=[Assign("y", node, returns=True)])


def subject_algorithm(subject: dict):
    """The algorithm an executed claim runs: its ``op``, or its ``algorithm`` with ``options``."""
    if "op" in subject:
        if "options" in subject:
            raise ClaimError("options do not apply to an op")
        return op_algorithm(subject["op"])
    from ...algorithms import get
    return get(subject["algorithm"], **subject.get("options", {}))
