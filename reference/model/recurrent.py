"""Recurrent cells, layers and stacks in torch, batch-first: a sequence is (B, ℓ, d_x), a state (B, d_h).

Parameters keep the formal objects' canonical names and orientation (``W_xi`` is d_h×d_x and acts on a
token as ``W_xi x``, on rows as ``X W_xiᵀ``; :mod:`formal.algorithms.recurrent` names them), so one set of
parameters drives both implementations.  The input products of every position are one matrix product
before the loop — only the recurrent product is sequential — which is how cuDNN and ``torch.nn.LSTM`` run;
the sums are the spec's, in another order.
"""

from __future__ import annotations

from formal.algorithms.recurrent import GATES

from .. import require_torch
from .convert import rows_to_columns, to_numpy
from .runners import runs

__all__ = ["cell", "cell_step", "layer", "stack", "run_rnn_cell", "run_gru_cell", "run_lstm_cell", "run_rnn_layer",
           "run_rnn"]

torch = require_torch()


def _bias(p, gate, suffix, options):
    """The bias vectors of one gate: (input side, recurrent side), each possibly None."""
    if options["bias"] == "double":
        return p[f"b_x{gate}{suffix}"], p[f"b_h{gate}{suffix}"]
    if options["bias"] == "single":
        return p[f"b_{gate}{suffix}"], None
    return None, None


def _linear(x, W, b=None):
    """``W x + b`` on rows: x (…, d_in) ↦ (…, d_out)."""
    y = x @ W.transpose(-1, -2)
    return y if b is None else y + b


def _inputs(X, p, kind, suffix, options) -> dict:
    """``W_xg x_t (+ b_xg or b_g)`` for every gate and every position at once: gate → (B, ℓ, d_h)."""
    return {g: _linear(X, p[f"W_x{g}{suffix}"], _bias(p, g, suffix, options)[0]) for g in GATES[kind]}


def cell_step(kind, pre: dict, h, c, p, suffix, options):
    """One step of the cell from the input parts ``pre`` (gate → (B, d_h)): the new (h, c) (c is None but
    for the LSTM)."""
    def recurrent(g, state=h):
        return _linear(state, p[f"W_h{g}{suffix}"], _bias(p, g, suffix, options)[1])

    if kind == "rnn":
        a = pre["h"] + recurrent("h")
        return (torch.tanh(a) if options["nonlinearity"] == "tanh" else torch.relu(a)), None
    if kind == "lstm":
        i, f, g, o = (pre[k] + recurrent(k) for k in "ifgo")
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        return o * torch.tanh(c), c
    r = torch.sigmoid(pre["r"] + recurrent("r"))
    z = torch.sigmoid(pre["z"] + recurrent("z"))
    n = torch.tanh(pre["n"] + (recurrent("n", r * h) if options["reset"] == "before" else r * recurrent("n")))
    return (z * h + (1 - z) * n if options["update"] == "cho" else (1 - z) * h + z * n), None


def cell(x, h, c, p, options):
    """One step of ``options["cell"]`` (a cell algorithm's options, with ``cell``): x (B, d_x), h and c (B, d_h)
    ↦ the new (h, c)."""
    kind = options["cell"]
    return cell_step(kind, _inputs(x, p, kind, "", options), h, c, p, "", options)


def _direction(X, p, suffix, options, reverse):
    kind = options["cell"]
    pre = _inputs(X, p, kind, suffix, options)
    B, ell = X.shape[0], X.shape[1]
    d_h = p[f"W_h{GATES[kind][0]}{suffix}"].shape[-1]
    h = X.new_zeros(B, d_h)
    c = X.new_zeros(B, d_h) if kind == "lstm" else None
    out = [None] * ell
    for step in range(ell):
        t = ell - 1 - step if reverse else step
        h, c = cell_step(kind, {g: v[:, t] for g, v in pre.items()}, h, c, p, suffix, options)
        out[t] = h
    return torch.stack(out, dim=1)                                        # (B, ℓ, d_h)


def layer(X, p, options, tail=""):
    """One recurrent layer (``rnn_layer``): X (B, ℓ, d_x) ↦ H (B, ℓ, d_h), or (B, ℓ, 2d_h) both ways
    (forward states first, as ``torch.nn.LSTM(bidirectional=True)`` and the spec's ``[H⃗; H⃖]``)."""
    direction = options["direction"]
    parts = []
    if direction in ("forward", "bidirectional"):
        parts.append(_direction(X, p, tail, options, reverse=False))
    if direction in ("backward", "bidirectional"):
        parts.append(_direction(X, p, "_back" + tail, options, reverse=True))
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)


def stack(X, p, options):
    """L layers (``rnn``): layer 1 reads ``*_1`` parameters, layer l + 1 the l-th slice of ``*_l``."""
    H = layer(X, p, options, "_1")
    upper = [name for name in p if name.endswith("_l")]
    for l in range(p[upper[0]].shape[0] if upper else 0):
        H = layer(H, {name[:-2] + "_u": p[name][l] for name in upper}, options, "_u")
    return H


# ------------------------------------------------------------------ runs of the cells, layers and stacks
def _cell(kind):
    """The run of the ``kind`` cell's algorithm: one step from the state h (and memory c)."""
    def run(c):
        options = {"cell": kind, "nonlinearity": "tanh", "reset": "before", "update": "cho", **c.options}
        state = c.tensor("h")[None]
        memory = c.tensor("c")[None] if kind == "lstm" else None
        h, cell_state = cell(c.tensor("x")[None], state, memory, c.params, options)
        return (to_numpy(h[0]), to_numpy(cell_state[0])) if kind == "lstm" else to_numpy(h[0])
    return run


run_rnn_cell = runs("rnn_cell")(_cell("rnn"))
run_gru_cell = runs("gru_cell")(_cell("gru"))
run_lstm_cell = runs("lstm_cell")(_cell("lstm"))


@runs("rnn_layer")
def run_rnn_layer(c):
    return rows_to_columns(layer(c.rows("X"), c.params, c.options))


@runs("rnn")
def run_rnn(c):
    return rows_to_columns(stack(c.rows("X"), c.params, c.options))
