"""Algorithms 3–5 in torch, batch-first: a sequence is a (B, ℓ, d) tensor, one row per token — single-query attention,
attention (the explicit path, SDPA and FlexAttention) and multi-head attention with grouped-query heads.

Parameters keep the formal objects' canonical names and orientation (``W_q`` is H×d_attn×d_x and acts on
a token as ``W_q x``, i.e. on rows as ``X W_qᵀ``), so one set of parameters drives both implementations.
Masks are the spec's ``Mask ∈ {0,1}^{ℓ_z×ℓ_x}`` transposed to the rows' (ℓ_x, ℓ_z), True where a query
may see a key.
"""

from __future__ import annotations

import math
from functools import partial

from formal.algorithms.attention import SCORES
from formal.errors import ConfigError, shown
from formal.ops import check_empty_policy, empty_neighbourhood
from formal.ops.scores import check_score_activation

from .. import require_torch
from .convert import mask_to_rows, rows_to_columns, single
from .normalization import layer_norm
from .rotary import rotate, settings
from .runners import EXPLICIT, runs

__all__ = ["ATTENTION_PATHS", "QKV", "MHA", "causal_mask", "score_activation", "scores", "attend", "heads",
           "mhattention", "attend_heads", "attention", "single_query_attention", "attention_paths",
           "run_single_query_attention", "run_attention", "run_mhattention", "positions_of", "QK_PARAMS", "qk_of",
           "normed", "capped"]

torch = require_torch()
F = torch.nn.functional

ATTENTION_PATHS = ("explicit", "sdpa", "flex")


#: The parameters of Algorithm 4's projections, and of Algorithm 5's with W_o.
QKV = ("W_q", "W_k", "W_v", "b_q", "b_k", "b_v")


MHA = QKV + ("W_o", "b_o")


def causal_mask(ell_z: int, ell_x: int, *, align="top-left", device=None):
    """The unidirectional mask as rows (ℓ_x, ℓ_z): ``t_z ≤ t_x`` (top-left, the paper's) or
    ``t_z ≤ t_x + ℓ_z − ℓ_x`` (bottom-right, what a KV cache needs) — :ref:`decision-causal-alignment`."""
    offset = 0 if align == "top-left" else ell_z - ell_x
    return torch.ones(ell_x, ell_z, dtype=torch.bool, device=device).tril(offset)


def _check_score(score, v_a, activation, path):
    """The score options of :func:`attend`: a known score, ``v_a`` exactly when it is additive, and a path
    that computes it (the fused kernels know only dot products)."""
    if not isinstance(score, str) or score not in SCORES:
        raise ConfigError(f"unknown score {shown(score)}; known: {', '.join(SCORES)}")
    check_score_activation(activation)
    if score == "additive":
        if v_a is None:
            raise ConfigError("score = 'additive' needs the parameter v_a (d_attn), the additive score's weights")
        if path != "explicit":
            raise ConfigError(f"path = {shown(path)} cannot compute score = 'additive' (only dot products); "
                              "use path='explicit'")
    else:
        if v_a is not None:
            raise ConfigError(f"v_a is the additive score's parameter; score = {score!r} takes none")
        if activation != "tanh":
            raise ConfigError(f"activation = {shown(activation)} applies to score = 'additive' only, not {score!r}")


def score_activation(name: str):
    """The additive score's nonlinearity φ by the spec's option name (tanh, a leaky ReLU of slope 0.2, ReLU)."""
    return {"tanh": torch.tanh, "leaky_relu": lambda a: F.leaky_relu(a, 0.2), "relu": torch.relu}[name]


def scores(Q, K, *, score="scaled_dot", v_a=None, activation="tanh"):
    """Line 4 of Algorithm 4 per head, as rows: Q (…, ℓ_x, d_attn), K (…, ℓ_z, d_attn) → S (…, ℓ_x, ℓ_z):
    ``QKᵀ/√d_attn``, ``QKᵀ``, or ``v_aᵀ φ(q_{t_x} + k_{t_z})`` (φ :func:`score_activation`)."""
    if score == "additive":
        summed = Q[..., :, None, :] + K[..., None, :, :]                  # (…, ℓ_x, ℓ_z, d_attn)
        hidden = score_activation(activation)(summed)
        return (hidden @ v_a[:, None])[..., 0]                             # (…, ℓ_x, ℓ_z); a counted product
    S = Q @ K.transpose(-1, -2)                                            # (…, ℓ_x, ℓ_z)
    return S / math.sqrt(Q.shape[-1]) if score == "scaled_dot" else S


#: The QK-norm's parameters (the spec's ``qk_params``).
QK_PARAMS = ("gamma_q", "gamma_k", "beta_q", "beta_k")


def qk_of(kind, eps, params) -> tuple | None:
    """The QK-norm as :func:`normed` takes it — ``(kind, eps, its parameters)`` — or None without one."""
    return None if kind is None else (kind, eps, {n: params[n] for n in QK_PARAMS if n in params})


def normed(M, qk, which: str):
    """M (…, ℓ, d_attn) with every row normalised by the QK-norm ``qk`` (:func:`qk_of`): queries (``which="q"``,
    γ_q) or keys (γ_k); M itself without one."""
    if qk is None:
        return M
    kind, eps, p = qk
    return layer_norm(M, p[f"gamma_{which}"], p.get(f"beta_{which}"), norm=kind, eps=eps)


def capped(S, cap):
    """``cap·tanh(S/cap)`` (soft-capping, Gemma 2), or S without a cap."""
    return S if cap is None else cap * torch.tanh(S / cap)


def attend(Q, K, V, mask=None, *, empty="zero", path="explicit", score="scaled_dot", v_a=None,
           activation="tanh", bias=None, cap=None):
    """Lines 4–6 of Algorithm 4 per head: ``V·softmax(KᵀQ/√d_attn)`` with masked scores at −∞.

    Q (B, H, ℓ_x, d_attn), K (B, H, ℓ_z, d_attn), V (B, H, ℓ_z, d_mid); ``mask`` (ℓ_x, ℓ_z) or
    (B, ℓ_x, ℓ_z), True where admitted; ``cap`` soft-caps the scaled scores before the mask (the explicit and flex
    paths: SDPA's scores are not reachable).  A query with no admitted key gives zeros (with finite gradients),
    NaN, a DomainError, or the mean of every value (``uniform``: a fill of −10⁹ for −∞), by ``empty``
    (:ref:`decision-empty-neighbourhood`).  ``score`` (with ``v_a`` (d_attn,) and
    ``activation`` when additive) is the spec's option of that name (:func:`scores`); the sdpa and flex
    paths compute the dot scores only (``"dot"`` with scale 1).  ``bias`` (``score_bias``: (…, ℓ_x, ℓ_z),
    per head (H, ℓ_x, ℓ_z)) is added to the scaled scores before the mask.
    """
    check_empty_policy(empty)
    _check_score(score, v_a, activation, path)
    if cap is not None and path == "sdpa":
        raise ConfigError(f"path = 'sdpa' cannot soft-cap the scores (cap = {cap}); use path='explicit' or 'flex'")
    if mask is not None and mask.dim() == 3:
        mask = mask[:, None]                                                # (B, 1, ℓ_x, ℓ_z)
    empty_rows = None if mask is None else ~mask.any(-1, keepdim=True)     # (…, ℓ_x, 1)
    if empty_rows is not None and empty == "error" and bool(empty_rows.any()):
        rows = torch.nonzero(empty_rows.reshape(-1, empty_rows.shape[-2]).any(0)).flatten().tolist()
        raise empty_neighbourhood(rows)
    scale = 1.0 if score == "dot" else None                                # None: 1/√d_attn
    if path == "explicit":
        if score == "scaled_dot":
            S = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])           # (B, H, ℓ_x, ℓ_z)
        else:
            S = scores(Q, K, score=score, v_a=v_a, activation=activation)
        if bias is not None:
            S = S + bias
        S = capped(S, cap)
        if mask is not None:
            S = S.masked_fill(~mask, -math.inf).masked_fill(empty_rows, 0.0)  # 0: a finite softmax to discard
        A = torch.softmax(S, dim=-1)                                        # an empty row: uniform, 1/ℓ_z
        if mask is not None and empty != "uniform":
            A = A.masked_fill(empty_rows, 0.0)
        Y = A @ V                                                           # (B, H, ℓ_x, d_mid)
    elif path == "sdpa" and bias is not None:   # a float mask: the bias, −∞ where hidden (0 on an empty row)
        additive = bias.to(Q.dtype).expand(*Q.shape[:-1], K.shape[-2])
        if mask is not None:
            additive = additive.masked_fill(~mask, -math.inf).masked_fill(empty_rows, 0.0)
        Y = F.scaled_dot_product_attention(Q, K, V, attn_mask=additive, scale=scale)
        Y = Y if empty_rows is None else Y.masked_fill(empty_rows, 0.0)
    elif path == "sdpa":
        Y = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=scale)  # fully masked rows give 0
    elif path == "flex":
        Y = _flex(Q, K, V, mask, scale, bias, cap)
    else:
        raise ConfigError(f"unknown attention path {path!r}; known: {', '.join(ATTENTION_PATHS)}")
    if empty_rows is not None and empty == "nan":
        Y = Y.masked_fill(empty_rows, math.nan)
    if empty_rows is not None and empty == "uniform" and path != "explicit":   # the fused paths gave zeros there
        Y = torch.where(empty_rows, V.mean(-2, keepdim=True), Y)
    return Y


def _flex(Q, K, V, mask, scale=None, bias=None, cap=None):
    """FlexAttention (CUDA) with the mask as a mask function; a graph mask becomes block-sparse work; a score
    bias (…, ℓ_x, ℓ_z) and a soft cap as a score modification."""
    if Q.device.type != "cuda":
        raise ConfigError("the flex attention path needs a CUDA device; use path='explicit' or 'sdpa' on the CPU")
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    score_mod = None
    if bias is not None or cap is not None:
        table = None if bias is None else bias.to(Q.dtype).expand(*Q.shape[:-1], K.shape[-2])   # (B, H, ℓ_x, ℓ_z)

        def score_mod(score, b, h, q, kv):
            score = score if table is None else score + table[b, h, q, kv]
            return score if cap is None else cap * torch.tanh(score / cap)
    if mask is None:
        return flex_attention(Q, K, V, scale=scale, score_mod=score_mod)
    full = mask.expand(Q.shape[0], 1, Q.shape[-2], K.shape[-2])

    def admitted(b, h, q, kv):
        return full[b, 0, q, kv]

    block = create_block_mask(admitted, Q.shape[0], None, Q.shape[-2], K.shape[-2], device=Q.device)
    Y = flex_attention(Q, K, V, block_mask=block, scale=scale, score_mod=score_mod)
    return Y.masked_fill(~full.any(-1, keepdim=True), 0.0)


def heads(X, W, b=None):
    """``W^h X + b^h 1ᵀ`` for every head at once: X (B, ℓ, d), W (H, d_out, d) → (B, H, ℓ, d_out)."""
    Y = X[:, None] @ W.transpose(-1, -2)                                    # (B, 1, ℓ, d) @ (H, d, d_out)
    return Y if b is None else Y + b[:, None, :]


def positions_of(length: int, start: int = 0, device=None):
    """The positions ``start … start + length − 1`` of a block of tokens (what rotary embeddings read)."""
    return torch.arange(start, start + length, device=device)


def mhattention(X, Z=None, mask=None, *, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None,
                empty="zero", path="explicit", B=None, rope=None, qk=None, cap=None):
    """Algorithm 5 (grouped-query when W_k has H_kv < H heads; key/value head g serves the H/H_kv
    consecutive query heads g·H/H_kv …): X (B, ℓ_x, d_x), Z (B, ℓ_z, d_z) → (B, ℓ_x, d_out); ``B`` a score
    bias per head (H, ℓ_x, ℓ_z); ``rope`` the rotary settings (:func:`reference.model.rotary.settings`), queries
    and keys rotated for their positions 0, 1, …, after the QK-norm ``qk`` (:func:`qk_of`); ``cap`` soft-caps the
    scores."""
    Z = X if Z is None else Z
    K, V = heads(Z, W_k, b_k), heads(Z, W_v, b_v)                           # (B, H_kv, ℓ_z, ·)
    longest = max(X.shape[1], Z.shape[1])                                  # one dynamic table for queries and keys
    K = rotate(normed(K, qk, "k"), positions_of(Z.shape[1], device=Z.device), rope, longest)
    attend_fn = None if B is None and cap is None else partial(attend, bias=B, cap=cap)
    return attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, empty, path, attend_fn, rope=rope, qk=qk,
                        length=longest)


def attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, empty, path, attend_fn=None, *, rope=None, start=0, qk=None,
                 length=None):
    """Queries of every head against their group's keys and values, stacked and projected by W_o
    (``attend_fn`` replaces :func:`attend`, e.g. by attention along a graph's edges); the queries are normalised by
    the QK-norm ``qk`` and, with ``rope``, rotated for their positions from ``start`` (the keys come ready; ``length``
    the sequence length a dynamic rotation reads)."""
    H, n_kv = W_q.shape[0], K.shape[1]
    if H % n_kv:
        raise ConfigError(f"H = {H} is not divisible by n_kv_heads = {n_kv}")
    Q = heads(X, W_q, b_q)                                                  # (B, H, ℓ_x, d_attn)
    Q = rotate(normed(Q, qk, "q"), positions_of(X.shape[1], start, device=X.device), rope, length)
    K, V = K.repeat_interleave(H // n_kv, dim=1), V.repeat_interleave(H // n_kv, dim=1)
    Y = (attend_fn or attend)(Q, K, V, mask, empty=empty, path=path)        # (B, H, ℓ_x, d_mid)
    Y = Y.transpose(1, 2).reshape(X.shape[0], X.shape[1], -1)               # (B, ℓ_x, H·d_mid): [Y¹; …; Yᴴ]
    return F.linear(Y, W_o, b_o)


def attention(X, Z=None, mask=None, *, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, empty="zero",
              path="explicit", attend_fn=None, score="scaled_dot", v_a=None, activation="tanh", B=None, rope=None,
              qk=None, cap=None):
    """Algorithm 4 as one head: X (B, ℓ_x, d_x), Z (B, ℓ_z, d_z) → (B, ℓ_x, d_out) (``attend_fn`` replaces
    :func:`attend`, as in :func:`attend_heads`); ``score``, ``v_a`` and ``activation`` as in :func:`attend`,
    ``B`` a score bias (ℓ_x, ℓ_z), ``rope`` the rotary settings (queries and keys rotated for their positions)."""
    Z = X if Z is None else Z
    def one(t):
        return (None if t is None else t[None])
    Q, K, V = heads(X, one(W_q), one(b_q)), heads(Z, one(W_k), one(b_k)), heads(Z, one(W_v), one(b_v))
    longest = max(X.shape[1], Z.shape[1])                                  # one dynamic table for queries and keys
    Q = rotate(normed(Q, qk, "q"), positions_of(X.shape[1], device=X.device), rope, longest)
    K = rotate(normed(K, qk, "k"), positions_of(Z.shape[1], device=Z.device), rope, longest)
    chosen = {} if (score, v_a, activation) == ("scaled_dot", None, "tanh") else \
        {"score": score, "v_a": v_a, "activation": activation}         # an attend_fn may know no scores
    if B is not None:
        chosen["bias"] = B
    if cap is not None:
        chosen["cap"] = cap
    return (attend_fn or attend)(Q, K, V, mask, empty=empty, path=path, **chosen)[:, 0]


def single_query_attention(e, e_t, *, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, score="scaled_dot", v_a=None,
                           activation="tanh", path="explicit"):
    """Algorithm 3: e (B, d_in) attends over e_t (B, T, d_in) → (B, d_out); ``score``, ``v_a`` and
    ``activation`` as in :func:`attend`."""
    return attention(e[:, None], e_t, None, W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k, b_v=b_v, path=path,
                     score=score, v_a=v_a, activation=activation)[:, 0]


def attention_paths(options) -> tuple:
    """The paths of an attention variant: every one, but only the explicit one for the additive score (the
    fused kernels compute dot products only), and the explicit and flex ones for soft-capped scores (SDPA's
    scores cannot be reached)."""
    if options.get("score") == "additive":
        return EXPLICIT
    return ("explicit", "flex") if options.get("score_cap") is not None else ATTENTION_PATHS


def _score(c) -> dict:
    """Algorithms 3 and 4's score options, with v_a when additive (Algorithm 5 has none)."""
    if "score" not in c.options:
        return {}
    return {"score": c.options["score"], "activation": c.options["activation"], "v_a": c.params.get("v_a")}


def _attention(c, fn, names):
    X = c.rows("X")
    Z = X if c.get("Z") is None else c.rows("Z")
    mask = mask_to_rows(c.get("mask"), Z.shape[1], X.shape[1], device=c.device)
    bias = {"B": c.tensor("B").transpose(-1, -2)} if c.options["score_bias"] else {}   # the spec's ℓ_z×ℓ_x as rows
    return rows_to_columns(fn(X, Z, mask, empty=c.options["empty"], path=c.path, **_score(c), **bias,
                              rope=settings(c.options), qk=qk_of(c.options["qk_norm"], c.options["qk_eps"], c.params),
                              cap=c.options["score_cap"], **c.weights(*names)))


@runs("single_query_attention")
def run_single_query_attention(c):
    return single(single_query_attention(c.tensor("e")[None], c.rows("e_t"), **_score(c), **c.weights(*QKV)))


@runs("attention", paths=attention_paths)
def run_attention(c):
    return _attention(c, attention, QKV)


@runs("mhattention", paths=attention_paths)
def run_mhattention(c):
    return _attention(c, mhattention, MHA)
