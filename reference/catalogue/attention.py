"""Algorithms 3–5: single-query, masked and multi-head attention (grouped-query heads too), and their planted
bugs.  With a key/value cache, multi-head attention is :mod:`.kv_cache`'s.

Each factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.  Without biases (``bias=False``) every
bias is zero, whatever is passed.

Algorithms 4 and 5 take the spec's rotary options (``rope``, ``rope_theta`` …): queries and keys turned for their
positions 0, 1, … (:func:`turn`, written as the complex-number form of Meta's Llama code: each rotated pair of rows
one complex number, times ``e^{i·t·ω_k}``; the frequencies of every scaling rule by :func:`rope_frequencies`), the
values never.

Algorithms 3 and 4 take the spec's ``score``: ``scaled_dot`` (the paper's ``KᵀQ/√d_attn``, the code path
these functions always had), ``dot`` (``KᵀQ``) or ``additive`` (``v_aᵀ φ(q + k)``, Bahdanau's, with φ tanh or
a leaky ReLU of negative slope 0.2 under ``activation="leaky_relu"``); only the scaled dot product is scaled.

Algorithms 4 and 5 take ``qk_norm`` (``rms`` or ``layer``: every query and key column normalised, head by head,
with γ_q, γ_k (and β_q, β_k) of d_attn entries shared by the heads, ε ``qk_eps``, before any turning:
:func:`qk_normalise`) and ``score_cap`` (the scaled scores, a score bias added, soft-capped as c·tanh(S/c) before
the mask, so that a hidden key stays at −∞: :func:`soft_cap`).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .entry import Entry, Implementation, makers
from .numerics import softmax

__all__ = ["fill", "weights", "attend", "leaky_relu", "SCORE_ACTIVATIONS", "additive", "scorer", "bias_or_zeros",
           "single_query_attention", "attention", "chunked_attention", "unstable_softmax", "unstable_weights",
           "filled_attention", "filled", "group", "modulo_group", "GROUPED", "project", "attend_heads", "mhattention",
           "ROPE_DEFAULTS", "rope_settings", "rope_options", "rope_frequencies", "turn", "turn_real", "rotate_qk",
           "keys_only", "soft_cap", "qk_normalise", "qk_weights", "QK_NAMES", "IMPLEMENTATIONS", "MUTANTS",
           "CONTROLS", "EQUIVALENT"]


def fill(S, mask):
    """Algorithm 4, line 5: a score the mask hides becomes −∞."""
    return np.where(mask == 1, S, -np.inf)


def weights(S, empty="zero"):
    """Softmax of each column of scores; a column with no admitted key (all −∞) is zeros, NaN under
    ``empty="nan"``, or 1/ℓ_z everywhere under ``empty="uniform"`` (:ref:`decision-empty-neighbourhood`)."""
    blank = np.all(S == -np.inf, axis=0)                        # (ℓ_x,): queries with no admitted key
    A = softmax(np.where(blank, 0.0, S))                        # a blank column: softmax of zeros, uniform
    if empty != "uniform":
        A[:, blank] = np.nan if empty == "nan" else 0.0
    return A


def soft_cap(S, cap):
    """``cap·tanh(S/cap)`` entry by entry (Gemma 2's soft-capping); S as it is without a cap."""
    return S if cap is None else cap * np.tanh(np.asarray(S) / cap)


def attend(Q, K, V, mask, *, empty="zero", score=None, bias=None, cap=None, _scale=math.sqrt, _fill=fill,
           _weights=weights, _mix=np.matmul, _cap=soft_cap, _cap_first=True):
    """Algorithm 4, lines 4–6: ``Ṽ = V·softmax(mask(KᵀQ)/√d_attn)``; Q d_attn×ℓ_x, K d_attn×ℓ_z, V d×ℓ_z.
    ``score`` (Q, K ↦ ℓ_z×ℓ_x) replaces the scaled dot product by another score, which is not scaled; a score
    ``bias`` B (ℓ_z×ℓ_x) is added to the scaled scores before the mask; a ``cap`` c soft-caps them (the bias
    added) before the mask too: ``S ← c·tanh(S/c)`` (``_cap_first=False`` caps after the mask: a planted bug)."""
    if bias is not None or cap is not None:
        S = K.T @ Q / _scale(Q.shape[0]) if score is None else score(Q, K)
        if bias is not None:
            S = S + bias
        if not _cap_first:
            return _mix(V, _weights(_cap(_fill(S, mask), cap), empty))
        return _mix(V, _weights(_fill(_cap(S, cap), mask), empty))
    if score is None:
        S = _fill(K.T @ Q, mask) / _scale(Q.shape[0])           # ℓ_z×ℓ_x
    else:
        S = _fill(score(Q, K), mask)
    return _mix(V, _weights(S, empty))                          # d×ℓ_x


# ------------------------------------------------------------------------------------------- QK-norm
#: The QK-norm's parameters, as the spec names them.
QK_NAMES = ("gamma_q", "gamma_k", "beta_q", "beta_k")


def qk_normalise(M, gamma, beta=None, *, kind, eps, _axis=-2):
    """Every column of M (…×d×ℓ: a query or key per column, per head) normalised over its d rows: RMS, ``m /
    √(mean(m²) + ε) ⊙ γ``, or layer, ``(m − mean)/√(var + ε) ⊙ γ + β`` (the biased variance); γ and β (d) are
    shared by every head.  ``_axis`` is the axis normalised over (a planted bug passes another)."""
    M = np.asarray(M, dtype=np.float64)
    if kind == "layer":
        M = M - M.mean(axis=_axis, keepdims=True)
    out = M / np.sqrt((M * M).mean(axis=_axis, keepdims=True) + eps) * np.asarray(gamma)[:, None]
    return out + np.asarray(beta)[:, None] if kind == "layer" else out


def qk_weights(kind, gamma_q=None, gamma_k=None, beta_q=None, beta_k=None, *, eps, _normalise=qk_normalise,
               _keys=True):
    """``(norm_q, norm_k)``: the maps a query and a key tensor go through before any turning (the identity
    without ``kind``); ``_keys=False`` leaves the keys as they are (a planted bug)."""
    if kind is None:
        return (lambda M: M), (lambda M: M)
    q = partial(_normalise, gamma=gamma_q, beta=beta_q, kind=kind, eps=eps)
    k = partial(_normalise, gamma=gamma_k, beta=beta_k, kind=kind, eps=eps)
    return q, (k if _keys else (lambda M: M))


def leaky_relu(a, slope=0.2):
    """``max(a, slope·a)``: GAT's leaky ReLU (negative slope 0.2)."""
    return np.where(a > 0, a, slope * a)


#: The additive score's nonlinearity φ by the spec's option name.
SCORE_ACTIVATIONS = {"tanh": np.tanh, "leaky_relu": leaky_relu, "relu": lambda a: np.maximum(a, 0.0)}


def additive(Q, K, v_a, phi):
    """Bahdanau's score ``S[t_z, t_x] = v_aᵀ φ(Q[:, t_x] + K[:, t_z])`` (ℓ_z×ℓ_x); one query q (a vector):
    the ℓ_z-vector ``[v_aᵀ φ(q + K[:, t_z])]_{t_z}``."""
    if Q.ndim == 1:
        return v_a @ phi(Q[:, None] + K)                                       # ℓ_z
    return np.einsum("d,dzx->zx", v_a, phi(Q[:, None, :] + K[:, :, None]))     # ℓ_z×ℓ_x


def scorer(score, activation, *, _additive=additive, _slope=0.2):
    """``(Q, K, v_a) ↦`` the unscaled scores of ``score`` (``dot``, ``additive``); None for ``scaled_dot``,
    which the functions compute as they always did."""
    if score == "scaled_dot":
        return None
    if score == "dot":
        return lambda Q, K, v_a: K.T @ Q
    phi = partial(leaky_relu, slope=_slope) if activation == "leaky_relu" else SCORE_ACTIVATIONS[activation]
    return lambda Q, K, v_a: _additive(Q, K, v_a, phi)


def bias_or_zeros(b, rows, use: bool):
    """``b``, or zeros where the variant has none."""
    return b if use and b is not None else np.zeros(rows)


# ---------------------------------------------------------------------------------- rotary embeddings
#: The spec's rotary options and their defaults (``rope`` None: nothing turns).
ROPE_DEFAULTS = {"rope": None, "rope_theta": 10000.0, "rope_fraction": 1.0, "rope_scaling": None, "rope_factor": 1.0,
                 "rope_original": 8192, "rope_low": 1.0, "rope_high": 4.0, "rope_beta_fast": 32.0,
                 "rope_beta_slow": 1.0}


def rope_options(options: dict) -> dict:
    """The rotary options among a factory's ``options``, taken out of it (the rest are the caller's)."""
    return {k: options.pop(k) for k in list(options) if k in ROPE_DEFAULTS}


def rope_settings(rope: dict) -> dict | None:
    """Every rotary setting (those not given at their defaults), or None without ``rope``; a name that is none of
    them is a TypeError, as a factory's unknown keyword is."""
    unknown = sorted(set(rope) - set(ROPE_DEFAULTS))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    return None if rope.get("rope") is None else {**ROPE_DEFAULTS, **rope}


def rope_frequencies(r: dict, rows: int, length: int) -> np.ndarray:
    """ω_0 … ω_{rows/2 − 1} of ``rows`` turned rows, θ^(−2k/rows) as the scaling rule ``r["rope_scaling"]`` changes
    them; ``length`` (the last position turned, plus one) is read by the dynamic rule only."""
    theta, s, N, kind = r["rope_theta"], r["rope_factor"], r["rope_original"], r["rope_scaling"]
    k = np.arange(rows // 2, dtype=np.float64)
    if kind == "dynamic" and length > N and rows > 2:        # NTK: the base grows with the length past N
        theta = theta * (s * length / N - (s - 1)) ** (rows / (rows - 2))
    omega = theta ** (-2.0 * k / rows)
    if kind == "linear":
        return omega / s
    if kind == "llama3":
        wave = 2 * np.pi / omega
        smooth = (N / wave - r["rope_low"]) / (r["rope_high"] - r["rope_low"])
        banded = (1 - smooth) * omega / s + smooth * omega
        return np.where(wave < N / r["rope_high"], omega, np.where(wave > N / r["rope_low"], omega / s, banded))
    if kind == "yarn":
        def pair(turns):        # the pair index whose wavelength fits `turns` times into N
            return rows * math.log(N / (turns * 2 * math.pi)) / (2 * math.log(r["rope_theta"]))
        lo, hi = max(math.floor(pair(r["rope_beta_fast"])), 0), min(math.ceil(pair(r["rope_beta_slow"])), rows - 1)
        ramp = np.clip((k - lo) / ((hi + 0.001 if hi == lo else hi) - lo), 0.0, 1.0)   # 0: keep ω, 1: ω/s
        return omega * (1 - ramp) + omega / s * ramp
    return omega


def _rotated_rows(width: int, fraction: float) -> int:
    rows = fraction * width
    if abs(rows - round(rows)) > 1e-9 or round(rows) % 2:
        raise ValueError(f"rope_fraction {fraction} of {width} rows is no even number of rows")
    return int(round(rows))


def _pairs(rows: int, style: str) -> tuple:
    """The rows of every turned pair: (k, k + rows/2) (rotate-half) or (2k, 2k + 1) (interleaved)."""
    if style == "half":
        return np.arange(rows // 2), np.arange(rows // 2, rows)
    return np.arange(0, rows, 2), np.arange(1, rows, 2)


def _length(t, length):
    """The sequence length the dynamic rule reads: ``length`` given, else the last position + 1."""
    return length if length is not None else int(t.max()) + 1 if t.size else 0


def turn(M, positions, r: dict, length=None, *, _first=True):
    """M (…, d, ℓ: a column per token) with column j turned for position ``positions[j]``: the first
    ``fraction·d`` rows in pairs, each pair ``(a, b)`` the complex number ``a + i·b`` times ``e^{i·t·ω_k}`` (YaRN's
    factor 0.1·ln s + 1 on top), the other rows as they are; ``length`` is the sequence length the dynamic rule
    reads (default: the last position + 1).  ``_first=False`` turns the last rows instead (a planted bug)."""
    M = np.asarray(M, dtype=np.float64)
    t = np.asarray(positions, dtype=np.float64)
    rows = _rotated_rows(M.shape[-2], r["rope_fraction"])
    omega = rope_frequencies(r, rows, _length(t, length))
    gain = 0.1 * math.log(r["rope_factor"]) + 1 if r["rope_scaling"] == "yarn" and r["rope_factor"] > 1 else 1.0
    phase = gain * np.exp(1j * omega[:, None] * t[None, :])                   # rows/2 × ℓ
    a, b = _pairs(rows, r["rope"])
    if not _first:
        a, b = a + M.shape[-2] - rows, b + M.shape[-2] - rows
    z = (M[..., a, :] + 1j * M[..., b, :]) * phase
    out = M.copy()
    out[..., a, :], out[..., b, :] = z.real, z.imag
    return out


def _positions(M, start=0):
    return start + np.arange(M.shape[-1])


def rotate_qk(Q, K, V, r: dict, *, q_start=0, k_start=0, _turn=turn):
    """Queries and keys turned for their positions (from ``q_start`` and ``k_start``), a dynamic rule reading one
    length for both, the longer of ℓ_x and ℓ_z; the values as they are."""
    longest = max(Q.shape[-1], K.shape[-1])
    return _turn(Q, _positions(Q, q_start), r, longest), _turn(K, _positions(K, k_start), r, longest), V


def single_query_attention(*, bias=True, score="scaled_dot", activation="tanh", _scale=math.sqrt,
                           _additive=additive, _slope=0.2, _softmax=softmax):
    """Algorithm 3: one query ``e`` attends over the context columns ``e_t``."""
    scores = scorer(score, activation, _additive=_additive, _slope=_slope)

    def single_query_attention(e, e_t, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, v_a=None):
        q = W_q @ e + bias_or_zeros(b_q, len(W_q), bias)                       # d_attn
        K = W_k @ e_t + bias_or_zeros(b_k, len(W_k), bias)[:, None]            # d_attn×T
        V = W_v @ e_t + bias_or_zeros(b_v, len(W_v), bias)[:, None]            # d_out×T
        if scores is None:
            alpha = softmax(K.T @ q / _scale(len(q)))                          # T
        else:
            alpha = _softmax(scores(q, K, v_a))
        return V @ alpha
    return single_query_attention


def attention(*, bias=True, empty="zero", score="scaled_dot", activation="tanh", score_bias=False, score_cap=None,
              qk_norm=None, qk_eps=1e-6, _attend=attend, _additive=additive, _slope=0.2, _rotate=rotate_qk,
              _qk=qk_weights, **rope):
    """Algorithm 4: ``Attention(X, Z | W_qkv, Mask)``; Z defaults to X (:ref:`decision-self-attention`); with
    ``score_bias``, the input B (ℓ_z×ℓ_x) joins the scaled scores; with ``rope`` (the rotary options), queries and
    keys are turned for their positions 0 … ℓ_x − 1 and 0 … ℓ_z − 1 (``_rotate``: :func:`rotate_qk`); ``qk_norm``
    normalises them first (``_qk``: :func:`qk_weights`), and ``score_cap`` soft-caps the scaled scores."""
    scores = scorer(score, activation, _additive=_additive, _slope=_slope)
    rotation = rope_settings(rope)
    attend_ = _attend if score_cap is None else partial(_attend, cap=score_cap)

    def attention(X, mask, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, Z=None, v_a=None, B=None, gamma_q=None,
                  gamma_k=None, beta_q=None, beta_k=None):
        Z = X if Z is None else Z
        Q = W_q @ X + bias_or_zeros(b_q, len(W_q), bias)[:, None]              # d_attn×ℓ_x
        K = W_k @ Z + bias_or_zeros(b_k, len(W_k), bias)[:, None]              # d_attn×ℓ_z
        V = W_v @ Z + bias_or_zeros(b_v, len(W_v), bias)[:, None]              # d_out×ℓ_z
        norm_q, norm_k = _qk(qk_norm, gamma_q, gamma_k, beta_q, beta_k, eps=qk_eps)
        Q, K = norm_q(Q), norm_k(K)
        if rotation:
            Q, K, V = _rotate(Q, K, V, rotation)
        biased = {"bias": B} if score_bias else {}
        if scores is None:
            return attend_(Q, K, V, mask, empty=empty, **biased)
        return attend_(Q, K, V, mask, empty=empty, score=lambda Q, K: scores(Q, K, v_a), **biased)
    return attention


# ------------------------------------------------------------------------------------ Algorithm 5
def group(h: int, H: int, H_kv: int) -> int:
    """The key/value head query head h reads: H/H_kv consecutive query heads share one (GQA)."""
    return h // (H // H_kv)


def project(W, X, b, use):
    """``W[h] X + b[h] 1ᵀ`` for every head h: W is heads×d×d_in, the result heads×d×ℓ."""
    return np.einsum("hdi,it->hdt", W, X) + bias_or_zeros(b, W.shape[:2], use)[:, :, None]


def attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, *, bias, empty, attend, group, stack, B=None,
           head_bias=lambda B, h: B[h], rotate=None, norm_q=None):
    """Algorithm 5: query head h attends with its key/value head's K and V (and, given a score bias B
    (H×ℓ_z×ℓ_x), its own B^h); ``W_o [Y¹; …; Yᴴ] + b_o 1ᵀ``.  ``rotate`` ((Q, K, V) ↦ (Q, K, V)) turns the
    queries of every head, and the keys and values it is given, before they attend; ``norm_q`` (a map of
    H×d_attn×ℓ_x) normalises the queries before that (QK-norm)."""
    H, H_kv = len(W_q), len(K)
    Q = project(W_q, X, b_q, bias)                                            # H×d_attn×ℓ_x
    if norm_q is not None:
        Q = norm_q(Q)
    if rotate is not None:
        Q, K, V = rotate(Q, K, V)
    Y = [attend(Q[h], K[group(h, H, H_kv)], V[group(h, H, H_kv)], mask, empty=empty,
                **({} if B is None else {"bias": head_bias(B, h)})) for h in range(H)]
    return W_o @ stack(Y) + bias_or_zeros(b_o, len(W_o), bias)[:, None]        # d_out×ℓ_x


def mhattention(*, bias=True, empty="zero", n_kv_heads=None, score_bias=False, score_cap=None, qk_norm=None,
                qk_eps=1e-6, _attend=attend, _group=group, _stack=np.concatenate,
                _context=lambda X, Z: X if Z is None else Z, _head_bias=lambda B, h: B[h], _rotate=rotate_qk,
                _qk=qk_weights, **rope):
    """Algorithm 5 (``n_kv_heads``: grouped-query, W_k and W_v with H_kv heads; the count is read from W_k;
    ``score_bias``: head h adds B[h] to its scaled scores; ``rope``: every head's queries and keys turned for
    their positions, ``_rotate`` as in :func:`attention`; ``qk_norm``: every head's queries and keys normalised
    first, with γ_q, γ_k shared by the heads; ``score_cap``: every head's scaled scores soft-capped)."""
    rotation = rope_settings(rope)
    heads = partial(attend_heads, bias=bias, empty=empty,
                    attend=_attend if score_cap is None else partial(_attend, cap=score_cap), group=_group,
                    stack=_stack, head_bias=_head_bias, rotate=partial(_rotate, r=rotation) if rotation else None)

    def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, Z=None, B=None,
                    gamma_q=None, gamma_k=None, beta_q=None, beta_k=None):
        Z = _context(X, Z)
        norm_q, norm_k = _qk(qk_norm, gamma_q, gamma_k, beta_q, beta_k, eps=qk_eps)
        K, V = norm_k(project(W_k, Z, b_k, bias)), project(W_v, Z, b_v, bias)       # H_kv×d×ℓ_z
        return heads(X, K, V, mask, W_q, b_q, W_o, b_o, B=B if score_bias else None, norm_q=norm_q)
    return mhattention


def modulo_group(h: int, H: int, H_kv: int) -> int:
    """The key/value head as ``h % H_kv``: a GQA grouping bug, for ``h // (H/H_kv)``."""
    return h % H_kv


#: Grouped-query options a mutant is checked under: H ∈ {2, 4}, so h // (H/H_kv) and h % H_kv differ at H = 4.
GROUPED = {"n_kv_heads": 2}


# ------------------------------------------------------------------------------------- planted pieces
def einsum_ignoring_weights(Q, K, V, mask, *, empty="zero"):
    """The weights are computed, then the einsum sums the values with ones instead of them."""
    A = weights(fill(K.T @ Q, mask) / math.sqrt(len(Q)), empty)
    return np.einsum("dk,kq->dq", V, np.ones_like(A))


def transposed_scores(Q, K, V, mask, *, empty="zero"):
    """Scores as QᵀK (ℓ_x×ℓ_z) with the softmax still over axis 0: it normalises over queries, not keys."""
    S = fill(Q.T @ K, mask.T) / math.sqrt(len(Q))                              # ℓ_x×ℓ_z
    return V @ weights(S, empty).T


def _softmax_without_empty_rows(S, empty="zero"):
    """A plain softmax: a query with no admitted key gets exp(−∞)/0 = NaN."""
    return softmax(S)


def _large_negative_fill(S, mask):
    """Hidden scores become −10⁹, not −∞: a query with no admitted key averages every value."""
    return np.where(mask == 1, S, -1e9)


def _mask_after_softmax(Q, K, V, mask, *, empty="zero"):
    """The softmax runs over every key and hidden weights are zeroed afterwards, so columns no longer sum to 1."""
    return V @ (softmax(K.T @ Q / math.sqrt(len(Q))) * mask)


def chunked_attention(Q, K, V, mask, *, empty="zero", size=8):
    """Queries in chunks of 8, each attending only to the keys of its own chunk: earlier keys are forgotten."""
    chunks = [attend(Q[:, c:c + size], K[:, c:c + size], V[:, c:c + size], mask[c:c + size, c:c + size],
                     empty=empty) for c in range(0, Q.shape[1], size)]
    return np.concatenate(chunks, axis=1)


def _phi_after_contraction(Q, K, v_a, phi):
    """``φ(v_aᵀq + v_aᵀk)``: the nonlinearity after the product with v_a (the original GAT's order), not
    ``v_aᵀ φ(q + k)``."""
    if Q.ndim == 1:
        return phi(v_a @ Q + v_a @ K)
    return phi((v_a @ K)[:, None] + (v_a @ Q)[None, :])


def _additive_scaled(Q, K, v_a, phi):
    """The additive score divided by √d_attn, as the scaled dot product is."""
    return additive(Q, K, v_a, phi) / math.sqrt(len(K))


def _additive_without_v_a(Q, K, v_a, phi):
    """``1ᵀ φ(q + k)``: the entries of φ(q + k) summed, v_a never read."""
    return additive(Q, K, np.ones(len(K)), phi)


def _additive_transposed(Q, K, V, mask, *, empty="zero", score):
    """The additive scores laid out query × key (ℓ_x×ℓ_z), the softmax still over axis 0: over the queries."""
    S = fill(score(Q, K).T, mask.T)
    return V @ weights(S, empty).T


def _ignore_mask(S, mask):
    return S


def _z_required_attention(X, Z, mask, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None):
    """Algorithm 4 with the paper's signature ``Attention(X, Z | W_qkv, Mask)``: Z is required."""
    return attention()(X=X, Z=Z, mask=mask, W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k, b_v=b_v)


def unstable_softmax(S, axis=0):
    """``exp(S)/Σexp(S)`` without subtracting the maximum first: exp overflows to ∞ past 709 in float64
    (sooner in float16/bfloat16), and ∞/∞ is NaN."""
    E = np.exp(S)
    return E / E.sum(axis=axis, keepdims=True)


def unstable_weights(S, empty="zero"):
    """:func:`weights` with :func:`unstable_softmax`: right on small scores, NaN once one passes 709."""
    blank = np.all(S == -np.inf, axis=0)
    A = unstable_softmax(np.where(blank, 0.0, S))
    A[:, blank] = np.nan if empty == "nan" else 0.0
    return A


def _bias_before_scaling(Q, K, V, mask, *, empty="zero", bias=None):
    """The score bias added to KᵀQ before the 1/√d_attn scaling: ``softmax((KᵀQ + B)/√d_attn)``."""
    return V @ weights(fill((K.T @ Q + bias) / math.sqrt(Q.shape[0]), mask), empty)


def _keys_from_one(Q, K, V, r):
    """Keys turned for positions 1, 2, … and queries for 0, 1, …: every relative position one too far."""
    return rotate_qk(Q, K, V, r, k_start=1)


def keys_only(Q, K, V, r):
    """The keys turned, the queries not: a score reads the key's position alone."""
    return Q, turn(K, _positions(K), r, max(Q.shape[-1], K.shape[-1])), V


def _values_too(Q, K, V, r):
    """The values turned as the keys are (their first 2⌊d/2⌋ rows, every pair), as if they were keys."""
    Q, K, V = rotate_qk(Q, K, V, r)
    even = V.shape[-2] - V.shape[-2] % 2
    V = V.copy()
    V[..., :even, :] = turn(V[..., :even, :], _positions(V), {**r, "rope_fraction": 1.0},
                            max(Q.shape[-1], K.shape[-1]))
    return Q, K, V


def _across_heads(M, gamma, beta=None, *, kind, eps):
    """A planted bug: QK-norm over every head's rows of a column together (H·d entries, γ tiled per head), not
    over each head's d rows."""
    M = np.asarray(M, dtype=np.float64)
    if M.ndim < 3:
        return qk_normalise(M, gamma, beta, kind=kind, eps=eps)
    H, d, ell = M.shape
    tiled = [None if v is None else np.tile(v, H) for v in (gamma, beta)]
    return qk_normalise(M.reshape(H * d, ell), *tiled, kind=kind, eps=eps).reshape(H, d, ell)


def _gamma_by_head(M, gamma, beta=None, *, kind, eps):
    """A planted bug: every row of head h scaled by γ[h] (one γ entry per head index), not row i by γ[i]."""
    M = np.asarray(M, dtype=np.float64)
    if M.ndim < 3:
        return qk_normalise(M, gamma, beta, kind=kind, eps=eps)
    ones = np.ones(M.shape[1])
    out = qk_normalise(M, ones, None if beta is None else beta, kind=kind, eps=eps)
    return out * np.asarray(gamma)[np.arange(len(M)) % len(gamma)][:, None, None]


def turn_real(M, positions, r: dict, length=None):
    """:func:`turn` as widely copied code writes it, in real numbers: ``x·cos + rot(x)·sin`` with
    ``rot(x) = (−x_b, x_a)`` on every pair — HF's ``rotate_half`` for ``half``, GPT-J's ``rotate_every_two`` for
    ``interleaved`` — the cos and sin tables repeated over the pairs' rows."""
    M = np.asarray(M, dtype=np.float64)
    t = np.asarray(positions, dtype=np.float64)
    rows = _rotated_rows(M.shape[-2], r["rope_fraction"])
    angle = rope_frequencies(r, rows, _length(t, length))[:, None] * t[None, :]
    gain = 0.1 * math.log(r["rope_factor"]) + 1 if r["rope_scaling"] == "yarn" and r["rope_factor"] > 1 else 1.0
    x = M[..., :rows, :]
    if r["rope"] == "half":
        cos, sin = np.concatenate([np.cos(angle)] * 2), np.concatenate([np.sin(angle)] * 2)
        rot = np.concatenate([-x[..., rows // 2:, :], x[..., :rows // 2, :]], axis=-2)
    else:
        cos, sin = np.repeat(np.cos(angle), 2, axis=0), np.repeat(np.sin(angle), 2, axis=0)
        rot = np.stack([-x[..., 1::2, :], x[..., 0::2, :]], axis=-2).reshape(x.shape)     # (−x_1, x_0, −x_3, …)
    return np.concatenate([gain * (x * cos + rot * sin), M[..., rows:, :]], axis=-2)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("single_query_attention", single_query_attention,
                   seconds={"quick": (0.3, 0.04), "thorough": (0.7, 0.25)}),
    Implementation("attention", attention,
                   seconds={"quick": (0.4, 0.06), "thorough": (1.1, 0.31)}),
    Implementation("mhattention", mhattention,
                   seconds={"quick": (0.5, 0.1), "thorough": (1.4, 0.47)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_ADDITIVE = {"score": "additive"}
_LEAKY = {"score": "additive", "activation": "leaky_relu"}


def _attend(**seams):
    return partial(attend, **seams)


_SINGLE_QUERY = [
    _seam("single_query_attention_unscaled", "single_query_attention", {},
          "forgets the 1/√d_attn scaling of the scores", "review", _scale=lambda d: 1.0),
    _variant("single_query_attention_ignores_biases", "single_query_attention", {}, {"bias": False},
             "drops b_q and b_v under the default bias=true (b_k cannot matter)"),
    _variant("single_query_attention_dot_still_scaled", "single_query_attention", {"score": "dot"},
             {"score": "scaled_dot"}, "divides the dot score by √d_attn under score=dot"),
    _variant("single_query_attention_scaled_dot_under_additive", "single_query_attention", _ADDITIVE,
             {"score": "scaled_dot"}, "scores with KᵀQ/√d_attn and ignores v_a under score=additive"),
    _seam("single_query_attention_additive_phi_after_v_a", "single_query_attention", _ADDITIVE,
          "applies tanh after the product with v_a, tanh(v_aᵀq + v_aᵀk_t) (the original GAT's order)", "review",
          _additive=_phi_after_contraction),
    _seam("single_query_attention_additive_scaled", "single_query_attention", _ADDITIVE,
          "divides the additive score by √d_attn, as the scaled dot product is", "review",
          _additive=_additive_scaled),
    _seam("single_query_attention_additive_without_softmax", "single_query_attention", _ADDITIVE,
          "weighs the values by the raw additive scores: no softmax", "review", _softmax=lambda s: s),
    _seam("single_query_attention_leaky_relu_torch_slope", "single_query_attention", _LEAKY,
          "uses torch's default negative slope 0.01 instead of GAT's 0.2", "variant option activation",
          _slope=0.01),
    _variant("single_query_attention_tanh_under_leaky_relu", "single_query_attention", _LEAKY,
             {"activation": "tanh"}, "uses tanh under activation=leaky_relu"),
]

_ATTENTION = [
    _seam("attention_einsum_ignores_weights", "attention", {},
          "the einsum sums the values with ones: the attention weights are computed and never used", "README",
          _attend=einsum_ignoring_weights),
    _seam("attention_ignores_mask", "attention", {},
          "never applies the mask: every query attends to every key", "review",
          _attend=_attend(_fill=lambda S, mask: S)),
    _seam("attention_multiplicative_mask", "attention", {},
          "multiplies the scores by the mask instead of setting hidden ones to −∞", "README",
          _attend=_attend(_fill=lambda S, mask: S * mask)),
    _seam("attention_divides_by_d", "attention", {},
          "divides the scores by d_attn instead of √d_attn", "README", _attend=_attend(_scale=lambda d: d)),
    _seam("attention_scores_transposed", "attention", {},
          "computes QᵀK and normalises over the queries instead of the keys", "review",
          _attend=transposed_scores),
    _seam("attention_nan_for_empty_rows", "attention", {},
          "gives NaN (a plain softmax of −∞) for a query with no admitted key under the default empty=zero",
          "review", _attend=_attend(_weights=_softmax_without_empty_rows)),
    _seam("attention_softmax_without_max", "attention", {},
          "takes exp(S)/Σexp(S) without subtracting the maximum: NaN once a score passes 709", "review",
          _attend=_attend(_weights=unstable_weights)),
    _seam("attention_large_negative_fill", "attention", {},
          "fills hidden scores with −1e9: a query with no admitted key averages every value", "variant option empty",
          _attend=_attend(_fill=_large_negative_fill)),
    _seam("attention_mask_after_softmax", "attention", {},
          "zeroes hidden weights after the softmax, without renormalising", "review",
          _attend=_mask_after_softmax),
    _seam("attention_chunked_forgets_earlier_keys", "attention", {},
          "attends in chunks of 8 queries, each to its own chunk's keys only", "review",
          _attend=chunked_attention),
    _variant("attention_zeros_under_empty_nan", "attention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a query with no admitted key under empty=nan"),
    _variant("attention_ignores_biases", "attention", {}, {"bias": False},
             "drops the biases b_q, b_k, b_v under the default bias=true"),
    _seam("attention_score_bias_scaled", "attention", {"score_bias": True},
          "adds the score bias B before the 1/√d_attn scaling, so that B is scaled too", "variant option score_bias",
          _attend=_bias_before_scaling),
    _variant("attention_scaled_under_dot", "attention", {"score": "dot"}, {"score": "scaled_dot"},
             "divides the dot score by √d_attn under score=dot"),
    _variant("attention_dot_under_scaled_dot", "attention", {}, {"score": "dot"},
             "leaves out the 1/√d_attn of the default score=scaled_dot"),
    _seam("attention_additive_phi_after_v_a", "attention", _ADDITIVE,
          "applies tanh after the product with v_a, tanh(v_aᵀq + v_aᵀk) (the original GAT's order)", "review",
          _additive=_phi_after_contraction),
    _seam("attention_additive_scaled", "attention", _ADDITIVE,
          "divides the additive score by √d_attn, as the scaled dot product is", "review",
          _additive=_additive_scaled),
    _seam("attention_additive_without_v_a", "attention", _ADDITIVE,
          "sums the entries of tanh(q + k) instead of contracting them with v_a", "review",
          _additive=_additive_without_v_a),
    _seam("attention_additive_ignores_mask", "attention", _ADDITIVE,
          "leaves the additive scores unmasked: every query sees every key", "review",
          _attend=_attend(_fill=_ignore_mask)),
    _seam("attention_additive_softmax_over_queries", "attention", _ADDITIVE,
          "lays the additive scores out query × key and normalises over the queries", "review",
          _attend=_additive_transposed),
    _seam("attention_additive_nan_for_empty_rows", "attention", _ADDITIVE,
          "gives NaN (a plain softmax of −∞) for a query with no admitted key under score=additive", "review",
          _attend=_attend(_weights=lambda S, empty: softmax(S))),
    _seam("attention_leaky_relu_torch_slope", "attention", _LEAKY,
          "uses torch's default negative slope 0.01 instead of GAT's 0.2", "variant option activation",
          _slope=0.01),
    _variant("attention_tanh_under_leaky_relu", "attention", _LEAKY, {"activation": "tanh"},
             "uses tanh under activation=leaky_relu"),
    _seam("attention_leaky_relu_after_v_a", "attention", _LEAKY,
          "applies the leaky ReLU after the product with v_a (GAT's score, not GATv2's)", "review",
          _additive=_phi_after_contraction),
]

_MULTIHEAD = [
    _seam("mhattention_heads_interleaved", "mhattention", {},
          "stacks the heads interleaved (row i of head h at i·H + h) before W_o", "review",
          _stack=lambda Y: np.stack(Y, axis=1).reshape(-1, Y[0].shape[1])),
    _seam("mhattention_gqa_modulo", "mhattention", GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "review", _group=modulo_group),
    _seam("mhattention_gqa_first_kv_head", "mhattention", GROUPED,
          "every query head reads key/value head 0 (multi-query attention under n_kv_heads=2)",
          "variant option n_kv_heads", _group=lambda h, H, H_kv: 0),
    _seam("mhattention_ignores_context", "mhattention", {},
          "takes keys and values from X even when a context Z is given", "review", _context=lambda X, Z: X),
    _variant("mhattention_zeros_under_empty_nan", "mhattention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a query with no admitted key under empty=nan"),
    _variant("mhattention_ignores_biases", "mhattention", {}, {"bias": False},
             "drops the biases of the projections and of W_o under the default bias=true"),
    _seam("mhattention_score_bias_of_head_0", "mhattention", {"score_bias": True},
          "every head adds head 0's score bias B[0] (the bias table read without its head index)",
          "variant option score_bias", _head_bias=lambda B, h: B[0]),
]

_HALF, _INTERLEAVED = {"rope": "half"}, {"rope": "interleaved"}
_LLAMA3 = {"rope": "half", "rope_scaling": "llama3", "rope_factor": 4.0, "rope_original": 8}
_PARTIAL = {"rope": "half", "rope_fraction": 0.5}

_ROTARY = [
    _seam("attention_rope_keys_from_one", "attention", _HALF,
          "turns the keys for positions 1, 2, … and the queries for 0, 1, …: every relative position one too far",
          "review", _rotate=_keys_from_one),
    _seam("attention_rope_values_turned", "attention", _INTERLEAVED,
          "turns the values as well as the queries and keys", "review", _rotate=_values_too),
    _variant("attention_rope_half_under_interleaved", "attention", _INTERLEAVED, {"rope": "half"},
             "pairs row k with row k + d/2 (rotate-half) where rope=interleaved pairs 2k with 2k + 1"),
    _variant("attention_rope_ignored", "attention", _HALF, {"rope": None},
             "turns nothing under rope=half (the rotary option ignored)"),
    _seam("mhattention_rope_keys_only", "mhattention", _INTERLEAVED,
          "turns every head's keys but not its queries", "review", _rotate=keys_only),
    _variant("mhattention_rope_interleaved_under_half", "mhattention", _HALF, {"rope": "interleaved"},
             "pairs row 2k with row 2k + 1 (Meta's complex form) where rope=half pairs k with k + d/2"),
    _variant("mhattention_rope_theta_ignored", "mhattention", {"rope": "half", "rope_theta": 500000.0},
             {"rope_theta": 10000.0}, "keeps the base θ = 10000 under rope_theta=500000 (Llama 3's)"),
    _variant("mhattention_rope_fraction_ignored", "mhattention", _PARTIAL, {"rope_fraction": 1.0},
             "turns every row of a head under rope_fraction=0.5, not the first half"),
    _seam("mhattention_rope_partial_turns_last_rows", "mhattention", _PARTIAL,
          "under rope_fraction=0.5 turns the last half of each head's rows instead of the first", "review",
          _rotate=partial(rotate_qk, _turn=partial(turn, _first=False))),
    _variant("mhattention_rope_linear_scaling_ignored", "mhattention",
             {"rope": "half", "rope_scaling": "linear", "rope_factor": 4.0}, {"rope_scaling": None},
             "leaves the frequencies unscaled under rope_scaling=linear (ω, not ω/4)"),
    _variant("mhattention_rope_llama3_original_ignored", "mhattention", _LLAMA3, {"rope_original": 8192},
             "scales llama3's band for a context of 8192 where rope_original=8 (every wavelength then kept)"),
]

_CAP, _RMS, _LAYER = {"score_cap": 2.0}, {"qk_norm": "rms"}, {"qk_norm": "layer"}

_QK_AND_CAP = [
    _seam("attention_score_cap_after_mask", "attention", _CAP,
          "soft-caps the scores after the mask: a hidden key's −∞ becomes −c and it gets weight",
          "variant option score_cap", _attend=partial(attend, _cap_first=False)),
    _variant("attention_score_cap_ignored", "attention", _CAP, {"score_cap": None},
             "leaves the scaled scores uncapped under score_cap=2"),
    _seam("attention_qk_norm_queries_only", "attention", _RMS,
          "normalises the queries but not the keys under qk_norm=rms", "variant option qk_norm",
          _qk=partial(qk_weights, _keys=False)),
    _variant("attention_qk_rms_under_layer", "attention", _LAYER, {"qk_norm": "rms"},
             "takes RMS norm (no centring, no β) of the queries and keys under qk_norm=layer"),
    _variant("attention_qk_norm_ignored", "attention", _RMS, {"qk_norm": None},
             "leaves the queries and keys unnormalised under qk_norm=rms"),
    _seam("attention_qk_norm_over_tokens", "attention", _RMS,
          "normalises each row of Q and K over the tokens instead of each column over its rows", "review",
          _qk=partial(qk_weights, _normalise=lambda M, gamma, beta=None, *, kind, eps: qk_normalise(
              M.T, np.ones(M.shape[1]), kind=kind, eps=eps).T * np.asarray(gamma)[:, None])),
    _seam("mhattention_qk_norm_across_heads", "mhattention", _RMS,
          "normalises a column of queries and keys over every head's rows together, not head by head",
          "variant option qk_norm", _qk=partial(qk_weights, _normalise=_across_heads)),
    _seam("mhattention_qk_gamma_by_head", "mhattention", _LAYER,
          "scales every row of head h by γ[h] (γ indexed by head) instead of row i by γ[i]", "variant option qk_norm",
          _qk=partial(qk_weights, _normalise=_gamma_by_head)),
    _variant("mhattention_score_cap_ignored", "mhattention", _CAP, {"score_cap": None},
             "leaves every head's scaled scores uncapped under score_cap=2"),
    _seam("mhattention_score_cap_after_mask", "mhattention", {**_CAP, **GROUPED},
          "soft-caps every head's scores after the mask: hidden keys become −c", "variant option score_cap",
          _attend=partial(attend, _cap_first=False)),
]

MUTANTS = tuple(_SINGLE_QUERY + _ATTENTION + _MULTIHEAD + _ROTARY + _QK_AND_CAP)

#: Correct implementations beyond the factories': Algorithm 4 with Z required; rotary embeddings in the real form
#: (x·cos + rot(x)·sin) beside the factories' complex one.
CONTROLS = (Entry("attention_correct_z_required", "attention", {}, _z_required_attention, "", "correct"),
            Entry("attention_correct_rope_half_real_form", "attention", _HALF,
                  attention(rope="half", _rotate=partial(rotate_qk, _turn=turn_real)), "", "correct"),
            Entry("mhattention_correct_rope_interleaved_real_form", "mhattention", _INTERLEAVED,
                  mhattention(rope="interleaved", _rotate=partial(rotate_qk, _turn=turn_real)), "", "correct"),
            Entry("mhattention_correct_rope_partial_yarn_real_form", "mhattention",
                  {**_PARTIAL, "rope_scaling": "yarn", "rope_factor": 4.0, "rope_original": 8},
                  mhattention(**_PARTIAL, rope_scaling="yarn", rope_factor=4.0, rope_original=8,
                              _rotate=partial(rotate_qk, _turn=turn_real)), "", "correct"))

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "attention without the key bias b_k": "KᵀQ + 1·(b_kᵀQ) adds the same number to every score of a query, "
                                          "which the softmax over keys cancels",
    "the additive score's v_aᵀ φ(k + q) with query and key swapped in the sum": "addition commutes",
    "GQA grouping h % H_kv under n_kv_heads = 1, or at H = H_kv": "h % H_kv and h // (H/H_kv) then agree",
    "queries and keys both turned from position 1 (any common offset), without dynamic scaling": (
        "(R_{m+c} q)ᵀ(R_{n+c} k) = qᵀ R_{n−m} k: a score reads positions through n − m alone (dynamic NTK scaling "
        "past rope_original is the exception: its frequencies follow the last position)"),
    "rotate-half and interleaved pairing swapped on heads 2 rows wide": "both then pair row 0 with row 1",
}


# ------------------------------------------- masking by a large negative fill: empty="uniform", and its bugs
def filled_attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Algorithm 4 as widely copied transformer code writes it, tokens as rows: ``scores.masked_fill(mask == 0,
    -1e9)``, then a plain softmax over the keys.  An admitted key's weight is the spec's (exp(−10⁹ − max) is 0);
    a query with no admitted key averages every value: the spec's ``empty="uniform"``."""
    Z = X if Z is None else Z
    Q, K, V = X.T @ W_q.T + b_q, Z.T @ W_k.T + b_k, Z.T @ W_v.T + b_v          # ℓ×d: a token per row
    scores = Q @ K.T / math.sqrt(Q.shape[-1])                                  # ℓ_x×ℓ_z
    scores = np.where(mask.T == 0, -1e9, scores)                               # masked_fill(mask == 0, -1e9)
    return (softmax(scores, axis=-1) @ V).T                                    # back to the spec's columns


def filled(Q, K, V, mask, *, empty="uniform", fill=-1e9, additive=False, transposed=False, axis=0):
    """Lines 4–6 (one head) as widely copied code writes them, hidden scores set to ``fill`` and a plain softmax
    (columns: Q d×ℓ_x, K d×ℓ_z; a query with no admitted key averages every value: ``empty="uniform"``):
    ``additive`` adds (1 − mask)·``fill`` instead (BERT's, with −10⁴); ``transposed`` reads the mask key ×
    query; ``axis`` 1 normalises over the queries."""
    hidden = (mask.T if transposed else mask) == 0
    S = K.T @ Q / math.sqrt(len(Q))                                            # ℓ_z×ℓ_x
    S = S + hidden * fill if additive else np.where(hidden, fill, S)
    return V @ softmax(S, axis=axis)


_UNIFORM = {"empty": "uniform"}

MUTANTS += (
    _variant("attention_zeros_under_empty_uniform", "attention", _UNIFORM, {"empty": "zero"},
             "returns zeros, not the mean of every value, for a query with no admitted key under empty=uniform"),
    _seam("attention_additive_mask_under_uniform", "attention", _UNIFORM,
          "adds (1 − mask)·(−10⁴) to the scores (BERT's additive mask) instead of filling them: a query with no "
          "admitted key weighs every key by its own score, not uniformly", "README",
          _attend=partial(filled, fill=-1e4, additive=True)),
    _seam("attention_fill_mask_transposed", "attention", _UNIFORM,
          "fills by the mask read transposed (key × query), so the wrong queries lose the wrong keys", "review",
          _attend=partial(filled, transposed=True)),
    _seam("attention_fill_softmax_over_queries", "attention", _UNIFORM,
          "fills the scores with −10⁹ and normalises over the queries (the softmax over the wrong axis)", "review",
          _attend=partial(filled, axis=1)),
    _variant("mhattention_zeros_under_empty_uniform", "mhattention", _UNIFORM, {"empty": "zero"},
             "returns zeros, not the mean of every value, for a query with no admitted key under empty=uniform"),
    _seam("mhattention_additive_mask_under_uniform", "mhattention", _UNIFORM,
          "adds (1 − mask)·(−10⁴) to every head's scores (BERT's additive mask): a query with no admitted key "
          "weighs every key by its own score, not uniformly", "README",
          _attend=partial(filled, fill=-1e4, additive=True)),
    _seam("mhattention_fill_mask_transposed", "mhattention", _UNIFORM,
          "fills every head's scores by the mask read transposed (key × query)", "review",
          _attend=partial(filled, transposed=True)),
)

CONTROLS += (Entry("attention_correct_large_negative_fill", "attention", _UNIFORM, filled_attention, "", "correct"),
             Entry("mhattention_correct_large_negative_fill", "mhattention", _UNIFORM,
                   mhattention(empty="uniform", _attend=filled), "", "correct"))

EQUIVALENT["a fill of −1e4 instead of −1e9 under empty=uniform"] = (
    "exp(−10⁴ − max) underflows to 0 in float64 and float32 alike, so no admitted key leaks unless its score is "
    "itself near −10⁴; an empty query's scores are all equal either way")
