"""Show, Attend and Tell (the spec's ``show_attend_tell``) and its loss in torch, batch-first, with the spec's
parameter names and orientation."""

from __future__ import annotations

import re

from .. import require_torch
from . import recurrent
from .attention import score_activation
from .convert import rows_to_columns, to_numpy
from .runners import runs

__all__ = ["grid_rows", "show_attend_tell", "doubly_stochastic", "run_show_attend_tell",
           "run_show_attend_tell_loss"]

torch = require_torch()

#: The LSTM's parameters among the model's: W_xg, W_hg and b_g, b_xg, b_hg for the gates g = i, f, g, o.
_LSTM_PARAM = re.compile(r"W_[xh][ifgo]|b_[xh]?[ifgo]")
_LSTM = {"cell": "lstm", "direction": "forward", "nonlinearity": "tanh", "reset": "before", "update": "cho"}


def grid_rows(F):
    """A batch of feature grids F (B, n_h, n_w, D) as the annotations (B, L = n_h·n_w, D), row-major:
    location (r, c) is row r·n_w + c (0-based)."""
    B, n_h, n_w, D = F.shape
    return F.reshape(B, n_h * n_w, D)


def _initial(a_bar, p, name, init):
    """f_init of the state ``name`` from the mean annotations ā (B, D): tanh of the affine map, or the map."""
    affine = a_bar @ p[f"W_init_{name}"].T + p[f"b_init_{name}"]
    return torch.tanh(affine) if init == "tanh" else affine


def _gated(z, h, p, gate):
    """The context z (B, D) under the gate: ``σ(w_βᵀ h + b_β) z``, ``σ(W_β h + b_β) ⊙ z`` or z."""
    if gate == "vector":
        return torch.sigmoid(h @ p["W_beta"].T + p["b_beta"]) * z
    if gate:
        return torch.sigmoid((h @ p["w_beta"][:, None])[..., 0] + p["b_beta"])[:, None] * z
    return z


def _words(x_t, h, z, p, output):
    """The word distribution (B, N_V): the deep output or ``softmax(W_out h + b_out)``."""
    if output == "state":
        return torch.softmax(h @ p["W_out"].T + p["b_out"], dim=-1)
    return torch.softmax((x_t + h @ p["L_h"].T + z @ p["L_z"].T) @ p["L_o"].T, dim=-1)


def show_attend_tell(A, x, p, options):
    """Annotations A (B, L, D) and words x (B, ℓ) ↦ (P (B, ℓ, N_V), α (B, ℓ, L))."""
    cell_options = {**_LSTM, "bias": options["bias"]}
    phi = score_activation(options["activation"])
    X = p["E"].T[x]                                                     # (B, ℓ, d_e)
    a_bar = A.mean(dim=1)                                               # (B, D)
    h, c = (_initial(a_bar, p, name, options["init"]) for name in ("h", "c"))
    K = A @ p["U_a"].T                                                  # (B, L, d_a), computed once
    if options["score_bias"]:
        K = K + p["b_k"]
    lstm = {k: v for k, v in p.items() if _LSTM_PARAM.fullmatch(k)}
    P, alphas = [], []
    for t in range(X.shape[1]):
        query = h @ p["W_a"].T + (p["b_a"] if options["score_bias"] else 0)
        e = (phi(query[:, None, :] + K) @ p["v_a"][:, None])[..., 0]    # (B, L)
        alpha = torch.softmax(e, dim=-1)
        z = _gated((alpha[:, None, :] @ A)[:, 0], h, p, options["gate"])   # β Σ_i α_i a_i, (B, D)
        h, c = recurrent.cell(torch.cat([X[:, t], z], dim=-1), h, c, lstm, cell_options)
        P.append(_words(X[:, t], h, z, p, options["output"]))
        alphas.append(alpha)
    return torch.stack(P, dim=1), torch.stack(alphas, dim=1)


def doubly_stochastic(alpha, weight: float):
    """``λ Σ_i (1 − Σ_t α_ti)²`` for α (B, ℓ, L): one value per caption."""
    return weight * ((1 - alpha.sum(dim=1)) ** 2).sum(dim=-1)


# -------------------------------------------------------------------------------------- runs of the spec
def _annotations(c):
    """Show-Attend-Tell's annotations as (1, L, D) rows: A's columns, or the grid F (n_h, n_w, D) read
    row-major by torch's reshape."""
    if c.options["inputs"] == "grid":
        return grid_rows(c.grid("F"))
    return c.rows("A")


@runs("show_attend_tell")
def run_show_attend_tell(c):
    return tuple(rows_to_columns(v) for v in show_attend_tell(_annotations(c), c.tokens("x"), c.params, c.options))


@runs("show_attend_tell_loss")
def run_show_attend_tell_loss(c):
    x = c.tokens("x")
    P, alpha = show_attend_tell(_annotations(c), x, c.params, c.options)
    nll = -torch.log(P[0, torch.arange(x.shape[1] - 1), x[0, 1:]]).sum()
    return to_numpy(nll + doubly_stochastic(alpha, c.options["penalty"])[0])


