"""Algorithms 3–5: single-query, masked and multi-head attention, and grouped-query attention
(Phuong & Hutter, §5; Shazeer 2019; Ainslie et al. 2023); Algorithms 3 and 4 with the scores of the
attention papers before the transformer (Bahdanau et al. 2015; Luong et al. 2015).

The ``score`` option of Algorithms 3 and 4 chooses how a query is compared with a key:

- ``"scaled_dot"`` (the default, the paper's): ``KᵀQ/√d_attn``;
- ``"dot"``: ``KᵀQ``, unscaled.  With ``W_q = W_k = I`` (and no biases) it is Luong et al.'s *dot* score
  ``h_tᵀ h̄_s``; with ``W_q = I`` and ``W_k = W_a`` it is their *general* score ``h_tᵀ W_a h̄_s`` — the
  product ``(W_a h̄_s)ᵀ h_t`` — so neither needs an option of its own;
- ``"additive"``: ``S[t_z, t_x] = v_aᵀ tanh(q_{t_x} + k_{t_z})`` with a new parameter ``v_a ∈ ℝ^{d_attn}``
  and no scaling: Bahdanau et al.'s alignment model ``e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j)`` with
  ``W_q = W_a`` (queries: decoder states), ``W_k = U_a`` (keys: annotations), and Luong et al.'s *concat*
  score ``v_aᵀ tanh(W_a [h_t; h̄_s])`` with ``W_a = [W_q, W_k]``.  Bahdanau et al. note that ``U_a h_j``
  does not depend on i and can be precomputed: here the key line (Algorithm 4, line 2) stands outside any
  per-query loop, so the keys are computed once for every query, and its cost is counted once.
  ``activation="leaky_relu"`` puts a leaky ReLU (negative slope 0.2, Veličković et al.'s) where tanh is:
  ``v_aᵀ LeakyReLU(q + k)`` is GATv2's score ``aᵀ LeakyReLU(W_1 h_i + W_2 h_j)`` (Brody et al. 2022).  The
  original GAT score ``LeakyReLU(aᵀ[W h_i ‖ W h_j])`` applies the nonlinearity after the contraction
  with ``a``, to a sum of a query term and a key term; it is not of this form.

The parameter is named ``v_a`` (Bahdanau's symbol): ``v`` already names Algorithm 3's value vectors.
Masks and the empty-neighbourhood policy (design decision 7) apply to every score alike.

References
----------
- M. Phuong, M. Hutter, "Formal algorithms for transformers", arXiv 2207.09238, 2022, Algorithms 3–5.
- D. Bahdanau, K. Cho, Y. Bengio, "Neural machine translation by jointly learning to align and
  translate", ICLR 2015, §3.1 and Appendix A.2.2.
- M.-T. Luong, H. Pham, C. D. Manning, "Effective approaches to attention-based neural machine
  translation", EMNLP 2015, §3.1 (the dot, general and concat scores).
- P. Veličković et al., "Graph attention networks", ICLR 2018; S. Brody, U. Alon, E. Yahav, "How
  attentive are graph attention networks?", ICLR 2022.
"""

from __future__ import annotations

import sympy as sp

from ..engine.algorithm import Algorithm, Assign, Loop, call, divides
from ..errors import ConfigError, one_of, shown
from ..ops import (EMPTY_POLICIES, KVGroup, check_empty_policy, LoopIndex, add, add_bias, concat, div_sqrt, mask_fill, matmul, matmul_t,
                   pick, softmax, stack_rows, weighted_sum)
from ..ops.scores import SCORE_ACTIVATIONS, additive_score, check_score_activation
from ..core.shapes import TensorSpec
from ..core.symbols import H, T, d_attn, d_in, d_mid, d_out, d_x, d_z, ell_x, ell_z, n_kv_heads

__all__ = ["single_query_attention", "attention", "mhattention", "SCORES",
           "build_single_query_attention", "build_attention", "build_mhattention"]

#: The scores Algorithms 3 and 4 take (see the module docstring).
SCORES = ("scaled_dot", "dot", "additive")

_SCORE_DOCS = {
    "score": "how a query meets a key: scaled_dot (KᵀQ/√d_attn, the paper's), dot (KᵀQ; Luong's dot and "
             "general scores) or additive (v_aᵀ tanh(q + k), Bahdanau's; Luong's concat)",
    "activation": f"the additive score's nonlinearity: {', '.join(SCORE_ACTIVATIONS)} (GAT's, slope 0.2); "
                  "only with score = additive",
}


def _check_flag(name, value):
    if not isinstance(value, bool):
        raise ConfigError(f"{name} = {shown(value)} must be True or False")


def _check(bias, empty):
    if not isinstance(bias, bool):
        raise ConfigError(f"bias = {shown(bias)} must be True or False")
    check_empty_policy(empty)


def _check_score(score, activation):
    """A known ``score``, and an ``activation`` that is the default unless the score is additive (it would
    change nothing)."""
    one_of("score", score, SCORES)
    check_score_activation(activation)
    if score != "additive" and activation != "tanh":
        raise ConfigError(f"activation = {shown(activation)} applies to score = 'additive' only, not {score!r}")


def _score_options(score, activation) -> dict:
    """The options the score adds to an algorithm's (the default object has them too, so that
    ``attention.variant(score="dot")`` is a variant of it)."""
    return {"score": score, "activation": activation}


def _score_params(score) -> list:
    """``v_a`` (d_attn) for the additive score; nothing else needs a parameter."""
    if score != "additive":
        return []
    return [TensorSpec("v_a", (d_attn,), doc="the additive score's output weights (Bahdanau's v_a)")]


def _score(Q, K, score, activation, *, single=False):
    """The scores: ``KᵀQ``, or ``[v_aᵀ φ(Q[:, t_x] + K[:, t_z])]_{t_z, t_x}`` (``single``: one query q)."""
    if score == "additive":
        return additive_score(Q, K, "v_a", activation, single=single)
    return matmul_t(K, Q)


def _scaled(S, score):
    """What the softmax normalises: ``S/√d_attn`` under the paper's score, ``S`` under the others."""
    return div_sqrt(S, d_attn) if score == "scaled_dot" else S


def _affine(W, x, b, bias, *, ones=True, role="weight"):
    """``W x + b 1ᵀ`` (just ``W x`` without biases)."""
    product = matmul(W, x, role=role)
    return add_bias(product, b, ones=ones) if bias else product


def _projection(prefix, out, inp, bias, doc, heads=()):
    """A weight ``W_<prefix>`` of shape heads + (out, inp) and, with biases, ``b_<prefix>`` of heads + (out,)."""
    specs = [TensorSpec(f"W_{prefix}", heads + (out, inp), doc=f"{doc} weights")]
    if bias:
        specs.append(TensorSpec(f"b_{prefix}", heads + (out,), doc=f"{doc} bias"))
    return specs


def _attend(S, Q, K, V, out, empty, note="", score="scaled_dot", activation="tanh", score_bias=None):
    """The lines shared by Algorithm 4 (4–6) and grouped-query attention: scores, mask, weighted values.  With
    a ``score_bias`` (the name of an ℓ_z×ℓ_x value), the scaled scores get it added before the mask:
    ``S ← S/√d_attn + B``, and the softmax takes S as it is."""
    lines = [Assign(S, _score(Q, K, score, activation), note="Score")]
    if score_bias is not None:
        lines.append(Assign(S, add(_scaled(S, score), score_bias), note="Bias"))
    lines += [
        Assign(S, mask_fill(S, "mask")),
        Assign(out, matmul(V, softmax(S if score_bias is not None else _scaled(S, score), empty=empty), role="mix"),
               note=note, returns=not note),
    ]
    return lines


def _score_bias_input(heads=()):
    """The input ``B`` of an algorithm with ``score_bias=True``: heads + (ℓ_z, ℓ_x)."""
    return [TensorSpec("B", heads + (ell_z, ell_x), doc="an additive bias on the scores, B[t_z, t_x] added to "
                                                        "the scaled score of key t_z for query t_x (a relative-"
                                                        "position bias)" + (", per head" if heads else ""))]


_SCORE_BIAS_DOC = ("whether the scaled scores get an additive bias B before the mask and softmax (Swin's and "
                   "T5's relative-position bias): softmax(KᵀQ/√d_attn + B)")


def build_single_query_attention(*, bias: bool = True, score: str = "scaled_dot",
                                 activation: str = "tanh") -> Algorithm:
    """Algorithm 3: one query vector ``e`` attends over the context vectors ``e_t`` (the columns of e_t).

    ``score`` and ``activation`` as in Algorithm 4 (the module docstring): with ``score="additive"`` this is
    one decoder step of Bahdanau et al.'s attention, ``e`` the state s_{i−1} and ``e_t`` the annotations h_j
    (of one width d_in here; Algorithm 4 lets them differ).  Called once per step, its line 2 recomputes
    ``U_a h_j`` at every step — what Bahdanau et al.'s precomputation avoids.
    """
    _check(bias, "zero")
    _check_score(score, activation)
    lines = [
        Assign("q", add(matmul("W_q", "e"), "b_q") if bias else matmul("W_q", "e")),
        Assign("k", _affine("W_k", "e_t", "b_k", bias, ones=False), forall="t"),
        Assign("v", _affine("W_v", "e_t", "b_v", bias, ones=False), forall="t"),
        Assign("alpha", softmax(_scaled(_score("q", "k", score, activation, single=True), score))),
        Assign("v_tilde", weighted_sum("v", "alpha"), returns=True),
    ]
    return Algorithm(
        number=3, name="single_query_attention", display="SingleQueryAttention",
        summary="Algorithm 3: a single query token attends over the context tokens.",
        inputs=[TensorSpec("e", (d_in,), doc="vector representation of the current token"),
                TensorSpec("e_t", (d_in, T), doc="vector representations of the context tokens, as columns",
                           role="context")],
        params=(_projection("q", d_attn, d_in, bias, "query") + _projection("k", d_attn, d_in, bias, "key")
                + _projection("v", d_out, d_in, bias, "value") + _score_params(score)),
        output=TensorSpec("v_tilde", (d_out,), doc="the token and context combined"),
        lines=lines, params_label="W_qkv",
        options={"bias": bias, **_score_options(score, activation)}, builder=build_single_query_attention,
        option_docs={"bias": "whether the projections have biases", **_SCORE_DOCS},
        permutation={"e_t": "invariant"},
    )


def build_attention(*, bias: bool = True, empty: str = "zero", score: str = "scaled_dot",
                    activation: str = "tanh", score_bias: bool = False) -> Algorithm:
    """Algorithm 4: ``Ṽ = V·softmax(KᵀQ/√d_attn)`` with masked scores set to −∞.

    ``empty`` is the policy for a query column with no admitted key (design decision 7).  ``score`` replaces
    ``KᵀQ/√d_attn`` by ``KᵀQ`` (``"dot"``) or Bahdanau's ``v_aᵀ tanh(q_{t_x} + k_{t_z})`` (``"additive"``,
    ``activation`` its nonlinearity); see the module docstring for Luong's scores and for why the keys
    (Bahdanau's ``U_a h_j``) are computed once.  ``score_bias`` adds an input B (ℓ_z×ℓ_x) to the scaled
    scores: ``softmax(KᵀQ/√d_attn + B)``.
    """
    _check(bias, empty)
    _check_score(score, activation)
    _check_flag("score_bias", score_bias)
    lines = [
        Assign("Q", _affine("W_q", "X", "b_q", bias), note="Query"),
        Assign("K", _affine("W_k", "Z", "b_k", bias), note="Key"),
        Assign("V", _affine("W_v", "Z", "b_v", bias), note="Value"),
        *_attend("S", "Q", "K", "V", "V_tilde", empty, score=score, activation=activation,
                 score_bias="B" if score_bias else None),
    ]
    return Algorithm(
        number=4, name="attention", display="Attention",
        summary="Algorithm 4: each token of X attends to the tokens of Z that the mask admits.",
        inputs=[TensorSpec("X", (d_x, ell_x), doc="primary sequence, one column per token", role="tokens"),
                TensorSpec("Z", (d_z, ell_z), doc="context sequence (defaults to X)", role="context"),
                *(_score_bias_input() if score_bias else []),
                TensorSpec("mask", (ell_z, ell_x), "mask", "Mask[t_z, t_x] = 1 where t_x may see t_z")],
        params=(_projection("q", d_attn, d_x, bias, "query") + _projection("k", d_attn, d_z, bias, "key")
                + _projection("v", d_out, d_z, bias, "value") + _score_params(score)),
        output=TensorSpec("V_tilde", (d_out, ell_x), doc="updated representations of the tokens of X"),
        lines=lines, params_label="W_qkv", defaults={"Z": "X"},
        options={"bias": bias, "empty": empty, **_score_options(score, activation), "score_bias": score_bias},
        builder=build_attention,
        option_docs={"bias": "whether the projections have biases",
                     "empty": f"policy for a query with no admitted key: {', '.join(EMPTY_POLICIES)}",
                     **_SCORE_DOCS, "score_bias": _SCORE_BIAS_DOC},
        permutation={"X": "equivariant", "Z": "invariant"},
    )


def _kv_heads(n_kv_heads_option):
    if n_kv_heads_option is None:
        return None
    if n_kv_heads_option == "symbolic":
        return n_kv_heads
    if isinstance(n_kv_heads_option, bool) or not isinstance(n_kv_heads_option, int) or n_kv_heads_option <= 0:
        raise ConfigError(f"n_kv_heads = {shown(n_kv_heads_option)} must be None, a positive integer or 'symbolic'")
    return sp.Integer(n_kv_heads_option)


def _grouping(kv) -> list:
    """The condition grouped-query attention with ``kv`` key/value heads states: ``kv`` divides H (none
    when ``kv`` is None or H, one key/value head per head)."""
    if kv is None or kv == H:
        return []
    return [divides(kv, H, "each key/value head serves H/n_kv_heads query heads")]


def build_mhattention(*, bias: bool = True, empty: str = "zero", n_kv_heads=None,
                      score_bias: bool = False) -> Algorithm:
    """Algorithm 5: H heads of Algorithm 4 stacked and projected by W_o.

    Per-head parameters are stacked on a leading head axis (``W_q`` is H×d_attn×d_x).  With
    ``n_kv_heads`` (an int, or ``"symbolic"`` for the symbol H_kv) it is grouped-query attention: H_kv
    key/value heads each serve H/H_kv consecutive query heads, and are computed once (multi-query
    attention is ``n_kv_heads=1``; ``n_kv_heads = H`` computes what Algorithm 5 does).  ``score_bias`` adds
    an input B (H×ℓ_z×ℓ_x), head h's bias on its scaled scores (Swin's relative-position bias).
    """
    _check(bias, empty)
    _check_flag("score_bias", score_bias)
    kv = _kv_heads(n_kv_heads)
    inputs = [TensorSpec("X", (d_x, ell_x), doc="primary sequence, one column per token", role="tokens"),
              TensorSpec("Z", (d_z, ell_z), doc="context sequence (defaults to X)", role="context"),
              *(_score_bias_input((H,)) if score_bias else []),
              TensorSpec("mask", (ell_z, ell_x), "mask", "Mask[t_z, t_x] = 1 where t_x may see t_z")]
    q_heads, kv_heads = (H,), (H,) if kv is None else (kv,)
    params = (_projection("q", d_attn, d_x, bias, "query", q_heads)
              + _projection("k", d_attn, d_z, bias, "key", kv_heads)
              + _projection("v", d_mid, d_z, bias, "value", kv_heads)
              + _projection("o", d_out, H * d_mid, bias, "output"))
    h = LoopIndex("h")
    heads = ([_mha_heads(bias, empty, h, score_bias)] if kv is None
             else _gqa_heads(bias, empty, h, kv, score_bias=score_bias))
    lines = [*heads,
             Assign("Y", stack_rows("Y_h", H)),
             Assign("V_tilde", _affine("W_o", "Y", "b_o", bias), returns=True)]
    grouped = kv is not None
    return Algorithm(
        number=5, name="mhattention", display="MHAttention" if not grouped else "GQAttention",
        summary=("Algorithm 5: H attention heads in parallel, concatenated and projected." if not grouped else
                 "Algorithm 5 with grouped-query attention: H_kv key/value heads shared by H query heads."),
        inputs=inputs, params=params,
        output=TensorSpec("V_tilde", (d_out, ell_x), doc="updated representations of the tokens of X"),
        lines=lines, params_label="W", defaults={"Z": "X"},
        constraints=_grouping(kv),
        options={"bias": bias, "empty": empty, "n_kv_heads": n_kv_heads, "score_bias": score_bias},
        builder=build_mhattention,
        option_docs={"bias": "whether the projections have biases",
                     "empty": f"policy for a query with no admitted key: {', '.join(EMPTY_POLICIES)}",
                     "n_kv_heads": "None (one key/value head per head, the paper's), an int, or 'symbolic'",
                     "score_bias": _SCORE_BIAS_DOC},
        permutation={"X": "equivariant", "Z": "invariant"},
    )


def _mha_heads(bias, empty, h, score_bias=False):
    """Lines 1–2 of Algorithm 5: ``for h ∈ [H]: Y^h ← Attention(X, Z | W^h_qkv, Mask)`` (with B^h)."""
    inner = build_attention(bias=bias, empty=empty, score_bias=score_bias)
    per_head = {name: pick(name, h) for name in ("W_q", "W_k", "W_v") + (("b_q", "b_k", "b_v") if bias else ())
                + (("B",) if score_bias else ())}
    head = call(inner, label=("W_qkv^h", r"W^{h}_{qkv}"), X="X", Z="Z", mask="mask", **per_head)
    return Loop("h", H, (Assign("Y_h", head),), stack=("Y_h",))


def _gqa_heads(bias, empty, h, kv, *, context="Z", cached=False, score_bias=False):
    """Keys and values once per key/value head, then every query head attends with its group's.  With
    ``cached``, each key/value head's new columns are appended to its cache ``K_c^g``, ``V_c^g``."""
    g, group = LoopIndex("g"), KVGroup("h", H, kv)
    keys = _affine(pick("W_k", g), context, pick("b_k", g) if bias else None, bias)
    values = _affine(pick("W_v", g), context, pick("b_v", g) if bias else None, bias)
    if cached:
        keys, values = concat(pick("K_c", g), keys), concat(pick("V_c", g), values)
    kv_loop = Loop("g", kv, (
        Assign("K_g", keys, note="Key"),
        Assign("V_g", values, note="Value"),
    ), stack=("K_g", "V_g"))
    q_loop = Loop("h", H, (
        Assign("Q", _affine(pick("W_q", h), "X", pick("b_q", h) if bias else None, bias), note="Query"),
        *_attend("S", "Q", pick("K_g", group), pick("V_g", group), "Y_h", empty, note="head h",
                 score_bias=pick("B", h) if score_bias else None),
    ), stack=("Y_h",))
    return [kv_loop, q_loop]


single_query_attention = build_single_query_attention()
attention = build_attention()
mhattention = build_mhattention()
