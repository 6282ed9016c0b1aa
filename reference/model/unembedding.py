"""Algorithm 7 in torch: the unembedding, a distribution over the vocabulary per token."""

from __future__ import annotations

from .. import require_torch
from .convert import to_numpy
from .runners import runs

__all__ = ["unembedding", "run_unembedding"]

torch = require_torch()
F = torch.nn.functional

def unembedding(e, W_u, b_u=None, cap=None):
    """Algorithm 7: ``softmax(W_u e + b_u)`` over the vocabulary (the last axis), the logits soft-capped,
    ``cap·tanh(z/cap)``, with a ``cap``."""
    logits = F.linear(e, W_u, b_u)
    return torch.softmax(logits if cap is None else cap * torch.tanh(logits / cap), dim=-1)


@runs("unembedding")
def run_unembedding(c):
    return to_numpy(unembedding(c.tensor("e"), c.params["W_u"], c.params.get("b_u"), c.options["cap"]))
