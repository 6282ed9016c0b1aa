"""Recurrent encoder–decoders in torch (the spec's ``seq2seq``): a fixed context, Bahdanau's and Luong's
attention, batch-first — tokens (B, ℓ), annotations H (B, ℓ_z, D), logits (B, ℓ_x, N_V).

Parameters keep the spec's names and orientation (``W_a`` is d_a×d_h and acts on a state as ``W_a s``); the
encoder's carry the prefix ``enc_`` and the decoder cell's ``dec_``, as :mod:`formal.algorithms.seq2seq`
names them.
"""

from __future__ import annotations

from .. import require_torch
from . import recurrent
from .convert import rows_to_columns
from .runners import runs

__all__ = ["seq2seq", "logits", "run_seq2seq"]

torch = require_torch()


def _strip(p: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def _final(H, d_h: int, encoder: str, which: str):
    """The encoder's final state: h_ℓ forwards; [h⃗_ℓ; h⃖_1] both ways, or h⃖_1 alone."""
    if encoder == "forward":
        return H[:, -1]
    if which == "backward":
        return H[:, 0, d_h:]
    return torch.cat([H[:, -1, :d_h], H[:, 0, d_h:]], dim=-1)


def _scores(p, options, s, H, K):
    """(B, ℓ_z): one score per source position for the query states s (B, d_h)."""
    if options["score"] == "additive":
        q = s @ p["W_a"].T + p["b_a"] if options["align_bias"] else s @ p["W_a"].T   # (B, d_a); b_a in the tanh
        return (torch.tanh(q[:, None, :] + K) @ p["v_a"][:, None])[..., 0]  # (B, ℓ_z); a product FlopCounterMode counts
    query = s if options["score"] == "dot" else s @ p["W_a"].T
    return (H @ query[..., None])[..., 0]                                 # (B, ℓ_z, D)(B, D, 1): a counted bmm


def _readout(output, s, c, e):
    """What the output layer reads: ``[s; c]``, ``[s; c; E x_t]`` or ``[E x_t; s; c]`` (the spec's ``output``)."""
    return {"state_context": (s, c), "state_context_embedding": (s, c, e),
            "embedding_state_context": (e, s, c)}[output]


def logits(z, x, p, options):
    """The decoder's output logits (B, ℓ_x, N_V) for source z and target x (teacher forcing)."""
    kind, attention = options["cell"], options["attention"]
    layer_options = {"cell": kind, "direction": options["encoder"], "bias": options["bias"],
                     "nonlinearity": "tanh", "reset": options["reset"], "update": options["update"]}
    cell_options = {**layer_options, "direction": "forward"}
    H = recurrent.layer(p["W_src"].T[z], _strip(p, "enc_"), layer_options)  # (B, ℓ_z, D)
    d_h = p["W_init"].shape[0]
    X = p["W_e"].T[x]                                                    # (B, ℓ_x, d_e)
    start = _final(H, d_h, options["encoder"], options["init"]) @ p["W_init"].T
    s = torch.tanh(start + p["b_init"] if "b_init" in p else start)
    m = torch.zeros_like(s) if kind == "lstm" else None
    c = _final(H, d_h, options["encoder"], "final") if attention == "none" else None
    K = H @ p["U_a"].T if attention != "none" and options["score"] == "additive" else None   # computed once
    dec = _strip(p, "dec_")

    def attend(query):
        alpha = torch.softmax(_scores(p, options, query, H, K), dim=-1)  # (B, ℓ_z)
        return (alpha[:, None, :] @ H)[:, 0]                             # Σ_t α_t h_t, (B, D)

    out = []
    for t in range(X.shape[1]):
        if attention == "luong":
            s, m = recurrent.cell(X[:, t], s, m, dec, cell_options)
            c = attend(s)
            feature = torch.tanh(torch.cat([c, s], dim=-1) @ p["W_c"].T)
        else:
            if attention == "bahdanau":
                c = attend(s)
            s, m = recurrent.cell(torch.cat([X[:, t], c], dim=-1), s, m, dec, cell_options)
            feature = torch.cat(_readout(options["output"], s, c, X[:, t]), dim=-1)
        y = feature @ p["W_u"].T
        out.append(y + p["b_u"] if "b_u" in p else y)
    return torch.stack(out, dim=1)


def seq2seq(z, x, p, options):
    """P as probabilities, (B, ℓ_x, N_V)."""
    return torch.softmax(logits(z, x, p, options), dim=-1)


@runs("seq2seq")
def run_seq2seq(c):
    return rows_to_columns(seq2seq(c.tokens("z"), c.tokens("x"), c.params, c.options))
