"""The position-wise feed-forward network (Vaswani et al. 2017, eq. 2) and its planted bugs.

numpy only, the paper's column layout: ``Y = W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ`` on every column of
X, φ one of the spec's activations, or SwiGLU, ``W_mlp2 (SiLU(W_gate X) ⊙ (W_mlp1 X + b_mlp1 1ᵀ)) + b_mlp2 1ᵀ``.
"""

from __future__ import annotations

import numpy as np

from .entry import Implementation, makers
from .numerics import ACTIVATIONS, affine, gelu_tanh, silu

__all__ = ["mlp", "IMPLEMENTATIONS", "MUTANTS"]


def _hidden(up, gate, activation, *, _activations=ACTIVATIONS, _swiglu=lambda gate, up: silu(gate) * up):
    """φ(up), or SwiGLU's ``SiLU(gate) ⊙ up``."""
    return _swiglu(gate, up) if activation == "swiglu" else _activations[activation](up)


def mlp(*, activation="relu", bias=True, _hidden=_hidden, _first_bias_after=False, _second_activation=False):
    """The MLP as conform calls it: ``mlp(X, W_mlp1, W_mlp2, b_mlp1, b_mlp2, W_gate)``; without biases
    (``bias=False``) both biases are zero, whatever is passed."""
    def mlp(X, W_mlp1, W_mlp2, b_mlp1=None, b_mlp2=None, W_gate=None):
        b1 = b_mlp1 if bias and b_mlp1 is not None else np.zeros(len(W_mlp1))
        b2 = b_mlp2 if bias and b_mlp2 is not None else np.zeros(len(W_mlp2))
        gate = None if W_gate is None else W_gate @ X                                  # d_mlp×ℓ
        if _first_bias_after:                                                          # φ(W_1 X) + b_1
            hidden = _hidden(W_mlp1 @ X, gate, activation) + b1[:, None]
        else:
            hidden = _hidden(affine(W_mlp1, X, b1), gate, activation)                  # d_mlp×ℓ
        Y = affine(W_mlp2, hidden, b2)                                                 # d_e×ℓ
        return _hidden(Y, None, activation) if _second_activation else Y
    return mlp


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("mlp", mlp,
                   seconds={"quick": (0.1, 0.02), "thorough": (0.5, 0.13)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_GELU, _SWIGLU = {"activation": "gelu"}, {"activation": "swiglu"}

MUTANTS = (
    _seam("mlp_first_bias_after_activation", "mlp", {},
          "adds b_mlp1 after the activation, φ(W_mlp1 X) + b_mlp1, instead of inside it", "review",
          _first_bias_after=True),
    _seam("mlp_activation_after_second_projection", "mlp", {},
          "applies the activation to the output as well, φ(W_mlp2 φ(W_mlp1 X + b_mlp1) + b_mlp2)", "review",
          _second_activation=True),
    _variant("mlp_gelu_tanh_under_gelu", "mlp", _GELU, {"activation": "gelu-tanh"},
             "uses GPT-2's tanh approximation of GELU under activation=gelu (the exact one)"),
    _variant("mlp_relu_under_gelu", "mlp", _GELU, {"activation": "relu"}, "uses ReLU under activation=gelu"),
    _seam("mlp_swiglu_gate_swapped", "mlp", _SWIGLU,
          "applies SiLU to W_mlp1 X and gates it with W_gate X (the two projections swapped)",
          "variant option activation", _hidden=lambda up, gate, activation: silu(up) * gate),
    _seam("mlp_swiglu_tanh_gate", "mlp", _SWIGLU,
          "gates with GELU-tanh instead of SiLU (GEGLU's approximation for SwiGLU)", "variant option activation",
          _hidden=lambda up, gate, activation: gelu_tanh(gate) * up),
    _variant("mlp_ignores_biases", "mlp", {}, {"bias": False},
             "drops b_mlp1 and b_mlp2 under the default bias=true"),
)
