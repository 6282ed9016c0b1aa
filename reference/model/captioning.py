"""Show, Attend and Tell (the spec's ``show_attend_tell``) and the hierarchical attention network (``han``) in
torch, batch-first, with the spec's parameter names and orientation."""

from __future__ import annotations

from .. import require_torch
from . import recurrent
from .convert import rows_to_columns, single, to_numpy
from .pooling import attention_pooling
from .runners import runs

__all__ = ["grid_rows", "show_attend_tell", "doubly_stochastic", "han", "run_show_attend_tell",
           "run_show_attend_tell_loss", "run_han"]

torch = require_torch()

_LSTM = {"cell": "lstm", "direction": "forward", "nonlinearity": "tanh", "reset": "before", "update": "cho"}


def grid_rows(F):
    """A batch of feature grids F (B, n_h, n_w, D) as the annotations (B, L = n_h·n_w, D), row-major:
    location (r, c) is row r·n_w + c (0-based)."""
    B, n_h, n_w, D = F.shape
    return F.reshape(B, n_h * n_w, D)


def show_attend_tell(A, x, p, options):
    """Annotations A (B, L, D) and words x (B, ℓ) ↦ (P (B, ℓ, N_V), α (B, ℓ, L))."""
    cell_options = {**_LSTM, "bias": options["bias"]}
    X = p["E"].T[x]                                                     # (B, ℓ, d_e)
    a_bar = A.mean(dim=1)                                               # (B, D)
    h = torch.tanh(a_bar @ p["W_init_h"].T + p["b_init_h"])
    c = torch.tanh(a_bar @ p["W_init_c"].T + p["b_init_c"])
    K = A @ p["U_a"].T                                                  # (B, L, d_a), computed once
    lstm = {k: v for k, v in p.items() if k[:3] in ("W_x", "W_h", "b_i", "b_f", "b_g", "b_o", "b_x", "b_h")
            and not k.startswith("b_init") and not k.startswith("b_beta")}
    P, alphas = [], []
    for t in range(X.shape[1]):
        e = (torch.tanh((h @ p["W_a"].T)[:, None, :] + K) @ p["v_a"][:, None])[..., 0]   # (B, L)
        alpha = torch.softmax(e, dim=-1)
        z = (alpha[:, None, :] @ A)[:, 0]                               # Σ_i α_i a_i, (B, D)
        if options["gate"]:
            z = torch.sigmoid((h @ p["w_beta"][:, None])[..., 0] + p["b_beta"])[:, None] * z
        h, c = recurrent.cell(torch.cat([X[:, t], z], dim=-1), h, c, lstm, cell_options)
        o = X[:, t] + h @ p["L_h"].T + z @ p["L_z"].T
        P.append(torch.softmax(o @ p["L_o"].T, dim=-1))
        alphas.append(alpha)
    return torch.stack(P, dim=1), torch.stack(alphas, dim=1)


def doubly_stochastic(alpha, weight: float):
    """``λ Σ_i (1 − Σ_t α_ti)²`` for α (B, ℓ, L): one value per caption."""
    return weight * ((1 - alpha.sum(dim=1)) ** 2).sum(dim=-1)


def _strip(p, prefix):
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def han(x, p, options):
    """A document x (B, ℓ, n_s) of token ids ↦ class probabilities (B, N_C)."""
    layer = {"cell": options["cell"], "direction": "bidirectional", "bias": options["bias"], "nonlinearity": "tanh",
             "reset": options["reset"], "update": options["update"]}
    B, ell, n_s = x.shape
    E = p["W_e"].T[x.permute(0, 2, 1).reshape(B * n_s, ell)]              # every sentence at once: (B·n_s, ℓ, d_e)
    H = recurrent.layer(E, _strip(p, "w_"), layer)                      # (B·n_s, ℓ, 2d_h)
    s = attention_pooling(H, score="mlp", W=p["W_w"], b=p["b_w"], u_w=p["u_w"]).reshape(B, n_s, -1)
    H_s = recurrent.layer(s, _strip(p, "s_"), layer)                    # (B, n_s, 2d_h)
    v = attention_pooling(H_s, score="mlp", W=p["W_s"], b=p["b_s"], u_w=p["u_s"])
    return torch.softmax(v @ p["W_c"].T + p["b_c"], dim=-1)


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


@runs("han")
def run_han(c):
    return single(han(c.tokens("x"), c.params, c.options))
