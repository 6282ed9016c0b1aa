"""Planted bugs: the correct implementations of correct.py with one bug each, as public implementations of
the paper have had them (the issue's list first, then more).  `conform` must reject every one."""

import math

import numpy as np

import correct as c


# ---------------------------------------------------------------------------------- the list
def _overwriting_block(X, f, gamma, beta, *, _norm=c.layer_norm_columns):
    X = _norm(X, gamma, beta)                                           # the residual stream is replaced by X̃
    return X + f(X)


def dtransformer_pre_ln_overwrites_residual(x, params):
    return c.dtransformer(x, params, _block=_overwriting_block)


def edtransformer_shared_self_cross_weights(z, x, params):
    return c.edtransformer(z, x, params, _cross="dec_")                 # cross-attention reuses W^dec


def _einsum_without_weights(Q, K, V, mask):
    A = c.softmax(np.where(mask == 1, K.T @ Q / math.sqrt(Q.shape[0]), -np.inf))
    return np.einsum("dk,kq->dq", V, np.ones_like(A))                   # A is computed, then never used


def attention_einsum_ignores_weights(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, _attend=_einsum_without_weights)


def _whole_tensor_norm(X, gamma, beta, *, eps=0.0):
    return (X - X.mean()) / np.sqrt(X.var() + eps) * gamma[:, None] + beta[:, None]


def dtransformer_layer_norm_over_whole_tensor(x, params):
    return c.dtransformer(x, params, _norm=_whole_tensor_norm)


def dtransformer_softmax_over_positions(x, params):
    return c.dtransformer(x, params, _softmax_axis=1)


def _mask_right_only_at_ell_max(ell, ell_max):
    t = np.arange(ell)
    return (t[:, None] <= t[None, :] + (ell_max - ell)).astype(float)   # aligned for ℓ = ℓ_max only


def dtransformer_causal_mask_only_at_ell_max(x, params):
    return c.dtransformer(x, params, _mask=_mask_right_only_at_ell_max)


def attention_multiplicative_mask(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z,
                       _attend=lambda Q, K, V, m: c.attend(Q, K, V, m, _mask=lambda S, m: S * m))


def attention_divides_by_d(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z,
                       _attend=lambda Q, K, V, m: c.attend(Q, K, V, m, _scale=lambda d: d))


# ------------------------------------------------------------------------------------------ and more
def mhattention_heads_interleaved(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, Z=None):
    """[Y¹; …; Yᴴ] stacked head-minor: row i of head h lands at i·H + h."""
    def interleave(heads):
        return np.stack(heads, axis=1).reshape(-1, heads[0].shape[1])
    return c.mhattention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, Z, _stack=interleave)


def attention_scores_transposed(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """QᵀK for KᵀQ with the softmax still over axis 0: it then normalises over queries, not keys."""
    def attend(Q, K, V, m):
        S = np.where(m.T == 1, Q.T @ K, -np.inf) / math.sqrt(Q.shape[0])  # (ℓ_x, ℓ_z)
        return V @ np.nan_to_num(c.softmax(S, axis=0)).T
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, _attend=attend)


def attention_nan_for_empty_rows(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """A fully masked query gives NaN (softmax of all −∞), not the spec's zeros."""
    def attend(Q, K, V, m):
        S = np.where(m == 1, K.T @ Q / math.sqrt(Q.shape[0]), -np.inf)
        with np.errstate(invalid="ignore"):
            return V @ (np.exp(S - S.max(axis=0)) / np.exp(S - S.max(axis=0)).sum(axis=0))
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, _attend=attend)


def attention_ignores_mask(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return c.attention(X, np.ones_like(mask), W_q, W_k, W_v, b_q, b_k, b_v, Z)


def layer_norm_unbiased_variance(e, gamma, beta):
    return c.layer_norm_columns(e[:, None], gamma, beta, ddof=1)[:, 0]


def dtransformer_positions_off_by_one(x, params):
    return c.dtransformer(x, params, _positions=1) if params["W_p"].shape[1] > len(x) else c.dtransformer(x, params)


def unembedding_without_softmax(e, W_u):
    return W_u @ e


def attention_wrong_shape(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return c.attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z).T


def attention_raises(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    raise ValueError("not implemented yet")


def attention_wrong_signature(X, W_query, W_key, W_value):
    return X


def attention_returns_text(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return "attention"


NOT_A_FUNCTION = 3


# ---------------------------------------------------------------------------------- recurrent layers
# (`c` is the LSTM's memory cell here, so the module is `correct`)
import correct  # noqa: E402


def lstm_cell_gates_in_the_notes_order(x, h, c, W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xg, W_hg, b_g, W_xo, W_ho, b_o):
    """The lecture notes list the gates (i, f, o, g); reading packed weights in that order swaps g and o."""
    return correct.lstm_cell(x, h, c, W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xg, W_hg, b_g, W_xo, W_ho, b_o, _order="ifog")


def _no_forget(x, h, c_prev, **p):
    h_new, c_new = correct.lstm_cell(x, h, c_prev, **p)
    return h_new, c_new - correct.sigmoid(p["W_xf"] @ x + p["W_hf"] @ h + p["b_f"]) * c_prev + c_prev  # f ≡ 1: no forget gate


def lstm_layer_without_forget_gate(X, params):
    return correct.lstm_layer(X, params, _cell=_no_forget)


def lstm_layer_runs_backwards(X, params):
    """A "forward" layer that reads the sequence from its end: state t sees the future."""
    return correct.lstm_layer(X, params, _reverse=True)
