"""The position-wise feed-forward network (Vaswani et al. 2017, eq. 2) in torch, and its activations."""

from __future__ import annotations

from formal.errors import ConfigError

from .. import require_torch
from .convert import rows_to_columns
from .runners import runs

__all__ = ["activation", "mlp", "run_mlp"]

torch = require_torch()
F = torch.nn.functional

def activation(name, a):
    """The MLP nonlinearities: ReLU, exact GELU ``x·Φ(x)``, GPT-2's tanh GELU, SiLU."""
    if name == "relu":
        return F.relu(a)
    if name == "gelu":
        return F.gelu(a)
    if name == "gelu-tanh":
        return F.gelu(a, approximate="tanh")
    if name == "silu":
        return F.silu(a)
    raise ConfigError(f"unknown activation {name!r}; known: relu, gelu, gelu-tanh, silu")


def mlp(X, *, W_mlp1, W_mlp2, b_mlp1=None, b_mlp2=None, W_gate=None, kind="gelu"):
    """``W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ``; SwiGLU: ``W_mlp2 (SiLU(W_gate X) ⊙ (W_mlp1 X + b_mlp1))``."""
    up = F.linear(X, W_mlp1, b_mlp1)
    hidden = activation("silu", F.linear(X, W_gate)) * up if kind == "swiglu" else activation(kind, up)
    return F.linear(hidden, W_mlp2, b_mlp2)


@runs("mlp")
def run_mlp(c):
    """The position-wise feed-forward network on the tokens of X (the rows here)."""
    return rows_to_columns(mlp(c.rows("X"), kind=c.options["activation"],
                               **c.weights("W_mlp1", "W_mlp2", "b_mlp1", "b_mlp2", "W_gate")))
