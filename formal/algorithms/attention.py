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
Masks and the empty-neighbourhood policy (:ref:`decision-empty-neighbourhood`) apply to every score alike.

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

from ..core.shapes import TensorSpec
from ..core.symbols import H, T, d_attn, d_in, d_mid, d_out, d_x, d_z, ell_x, ell_z, n_kv_heads
from ..engine.algorithm import Algorithm, Assign, Loop, call, call_columns, divides, even
from ..engine.declarations import Option, Options, Requires
from ..engine.domains import BOOL, AnyOf, Choice, Integer, Real
from ..ops import (
    EMPTY_POLICIES,
    KVGroup,
    LoopIndex,
    add,
    add_bias,
    concat,
    div_sqrt,
    mask_fill,
    matmul,
    matmul_t,
    pick,
    positions,
    softmax,
    stack_rows,
    weighted_sum,
)
from ..ops.rotary import ROTARY_SCALINGS, ROTARY_STYLES, Rotation, fraction_of, rotate
from ..ops.scores import SCORE_ACTIVATIONS, additive_score
from ..ops.softcap import soft_cap
from .normalization import NORMS, build_layer_norm

__all__ = ["ALGORITHMS", "single_query_attention", "attention", "mhattention", "SCORES", "BIAS", "EMPTY", "SCORE",
           "SCORE_ACTIVATION", "SCORE_BIAS", "N_KV_HEADS", "affine", "projection", "kv_heads", "grouping",
           "gqa_heads", "build_single_query_attention", "build_attention", "build_mhattention", "ROPE", "ROPE_OPTIONS",
           "ROPE_NAMES", "rope_options", "rotation_of", "rotary", "rotary_constraints", "SCORE_CAP", "QK_NORM",
           "QK_EPS", "qk_params", "qk_normed"]

#: The scores Algorithms 3 and 4 take (see the module docstring).
SCORES = ("scaled_dot", "dot", "additive")

#: Whether the projections of Algorithms 3–5 have biases.
BIAS = Option("bias", True, BOOL, "whether the query, key and value projections (and the output one, W_o) have biases")
#: :ref:`decision-empty-neighbourhood`: what a query with no admitted key gets.
EMPTY = Option(
    "empty", "zero", Choice(*EMPTY_POLICIES),
    "policy for a query with no admitted key: zero (its column is 0, the package's default), nan, error "
    "(a DomainError), or uniform (the mean of every value: what masking with a large negative fill, -1e9 for "
    "-∞, gives)",
    unexampled=(("error", "it raises by design on an example whose mask leaves a query no key: there is no "
                          "output to compare"),))
SCORE = Option("score", "scaled_dot", Choice(*SCORES),
               "how a query meets a key: scaled_dot (KᵀQ/√d_attn, the paper's), dot (KᵀQ; Luong's dot and "
               "general scores) or additive (v_aᵀ tanh(q + k), Bahdanau's; Luong's concat)")
SCORE_ACTIVATION = Option("activation", "tanh", Choice(*SCORE_ACTIVATIONS),
                          "the additive score's nonlinearity: tanh (Bahdanau's) or leaky_relu (GATv2's, slope 0.2)"
                          ).when("score", "additive")
SCORE_BIAS = Option("score_bias", False, BOOL,
                    "whether the scaled scores get an additive bias B before the mask and softmax (Swin's and T5's "
                    "relative-position bias): softmax(KᵀQ/√d_attn + B)")
#: Grouped-query attention (Ainslie et al. 2023); multi-query attention (Shazeer 2019) is 1.
N_KV_HEADS = Option(
    "n_kv_heads", None, AnyOf(Choice(None), Integer(1), Choice("symbolic")),
    "key/value heads: None (one per head, the paper's), an int H_kv (grouped-query; 1 = multi-query; that "
    "H_kv divides H is a size constraint) or symbolic (the size symbol H_kv)",
    examples=(None, 1, 2),
    unexampled=(("symbolic", "the int variant with H_kv a size symbol instead of a number: the same lines and "
                             "arrays, which the int values exercise"),))

#: Soft-capping of the scaled scores (:mod:`formal.ops.softcap`; Gemma 2's attn_logit_softcapping).
SCORE_CAP = Option("score_cap", None, AnyOf(Choice(None), Real(0, open_low=True)),
                   "soft-capping of the scaled scores before the mask, c·tanh(S/c) (Gemma 2: 50): None or the cap c",
                   examples=(None, 2.0), searched=(None, 50.0, 30.0, 2.0), group="score_cap")
#: A norm of every query and key column, per head, before the scores (QK-norm: Qwen3, Gemma 3, OLMo 2's per head).
QK_NORM = Option("qk_norm", None, Choice(None, *NORMS),
                 "a norm of every query and key, per head, before any rotation (QK-norm: Dehghani et al. 2023; Qwen3 "
                 "and Gemma 3 take rms): None, rms or layer, with its own γ_q, γ_k (d_attn) shared by the heads",
                 group="qk_norm")
QK_EPS = Option("qk_eps", 1e-6, Real(0), "the QK-norm's ε (a stack's norms' own)", examples=(1e-6,),
                group="qk_norm").when("qk_norm", *NORMS)


def qk_params(kind, heads=(), width=d_attn) -> list:
    """The QK-norm's parameters: ``gamma_q``, ``gamma_k`` (and ``beta_q``, ``beta_k`` for layer norm), each
    ``heads + (width,)`` — one scale per row of a head, shared by every head."""
    if kind is None:
        return []
    names = ("gamma_q", "gamma_k") + (("beta_q", "beta_k") if kind == "layer" else ())
    return [TensorSpec(n, heads + (width,), doc=f"QK-norm {'scale' if n.startswith('gamma') else 'offset'} of the "
                       f"{'queries' if n.endswith('q') else 'keys'}") for n in names]


def qk_normed(matrix, which, kind, eps, read=lambda name: name):
    """``∀t: norm(M[:, t] | γ_which, β_which)``: the columns of queries (``which="q"``) or keys normalised by the
    QK-norm, each parameter read by ``read(name)`` (a layer's slice in a stack); ``matrix`` itself without one."""
    if kind is None:
        return matrix
    from ..engine.names import symbol
    norm = build_layer_norm(norm=kind, eps=eps)
    names = [f"gamma_{which}"] + ([f"beta_{which}"] if kind == "layer" else [])
    label = tuple(", ".join(symbol(n, latex=latex) for n in names) for latex in (False, True))
    return call_columns(norm, label=label, e=matrix, **{arg: read(n) for arg, n in zip(("gamma", "beta"), names)})

#: Rotary position embeddings (:mod:`formal.ops.rotary`): queries and keys rotated by their positions.
ROPE = Option("rope", None, Choice(None, *ROTARY_STYLES),
              "rotary position embeddings on queries and keys (Su et al. 2021): None, half (rotate-half: rows i and "
              "i + d_rot/2 turn together; GPT-NeoX, HF's Llama, Mistral, Qwen, Gemma) or interleaved (rows 2i and "
              "2i + 1 turn together; GPT-J, Meta's complex form)")
_STYLES = ROTARY_STYLES
#: The rotary embedding's settings, each with an effect only with ``rope`` (and its scaling rule) set.
ROPE_OPTIONS = (
    ROPE,
    Option("rope_theta", 10000.0, Real(0, open_low=True), "the rotary base θ: pair i turns by t·θ^(−2i/d_rot)",
           examples=(10000.0, 10.0), searched=(10000.0, 500000.0, 1000000.0, 10.0)).when("rope", *_STYLES),
    Option("rope_fraction", 1.0, Real(0, 1, open_low=True),
           "the share of each head's rows that rotate, d_rot = fraction·d_attn (partial rotary: GPT-NeoX's "
           "rotary_pct, Phi's partial_rotary_factor); d_rot must be even", examples=(1.0, 0.5),
           searched=(1.0, 0.5, 0.25)).when("rope", *_STYLES),
    Option("rope_scaling", None, Choice(None, *ROTARY_SCALINGS),
           "the frequency scaling of a longer context: None, linear (every frequency divided by s), dynamic (NTK: "
           "the base grows with the length past N), yarn (a ramp between each frequency and it divided by s, the "
           "rotated rows times 0.1·ln s + 1) or llama3 (Llama 3.1's smooth band)").when("rope", *_STYLES),
    Option("rope_factor", 1.0, Real(1), "the scaling factor s", examples=(4.0,)).when("rope_scaling", *ROTARY_SCALINGS),
    Option("rope_original", 8192, Integer(1), "N: the context length the model was trained at (the scaling's "
           "reference)", examples=(8, 8192)).when("rope_scaling", "dynamic", "yarn", "llama3"),
    Option("rope_low", 1.0, Real(0, open_low=True), "llama3's low_freq_factor: wavelengths past N/low are divided "
           "by s", examples=(1.0,)).when("rope_scaling", "llama3"),
    Option("rope_high", 4.0, Real(0, open_low=True), "llama3's high_freq_factor: wavelengths under N/high are "
           "kept (rope_high > rope_low)", examples=(4.0,)).when("rope_scaling", "llama3"),
    Option("rope_beta_fast", 32.0, Real(0, open_low=True), "YaRN's β_fast: pairs turning more often than this over "
           "N keep their frequency", examples=(32.0,)).when("rope_scaling", "yarn"),
    Option("rope_beta_slow", 1.0, Real(0, open_low=True), "YaRN's β_slow: pairs turning less often than this over "
           "N are interpolated (rope_beta_slow < rope_beta_fast)", examples=(1.0,)).when("rope_scaling", "yarn"),
)
ROPE_OPTIONS = tuple(o.but(group="rope") for o in ROPE_OPTIONS)
#: The option names of :data:`ROPE_OPTIONS`.
ROPE_NAMES = tuple(o.name for o in ROPE_OPTIONS)


def rope_options(options: dict) -> dict:
    """The rotary options among ``options`` (every one of :data:`ROPE_NAMES` it has)."""
    return {k: options[k] for k in ROPE_NAMES if k in options}


def rotation_of(options: dict):
    """The :class:`~formal.ops.rotary.Rotation` that resolved ``options`` declare, or None without ``rope``."""
    return Rotation.of(options)


def rotary(matrix, count, rotation, start=0, length=None):
    """``RoPE(matrix, start + t)``: the columns of ``matrix`` (``count`` of them) rotated for their positions, or
    ``matrix`` itself without a rotation; ``length`` is the sequence length the dynamic rule reads (the longer of
    the queries' and the keys': one table for both, :class:`~formal.ops.rotary.Rotary`)."""
    return matrix if rotation is None else rotate(matrix, positions(count, start), rotation, length)


def _longest(rotation, keys=ell_z):
    """The sequence length a dynamic rotation reads in attention over ℓ_x queries and ``keys``: the longer (None
    for the other rules, which read none)."""
    if rotation is None or rotation.scaling != "dynamic":
        return None
    return ell_x if keys == ell_x else sp.Max(ell_x, keys)


def rotary_constraints(rotation, width=d_attn) -> list:
    """The condition a rotation puts on a head ``width`` wide: ``fraction·width`` is an even whole number —
    ``width`` even for a whole-head rotation, ``2q | p·width`` for a fraction p/q."""
    if rotation is None:
        return []
    f = fraction_of(rotation.fraction)
    why = "rotary embeddings turn the rotated rows in pairs"
    if f == 1:
        return [even(width, why)]
    return [divides(2 * f.denominator, f.numerator * width, f"{why}: rope_fraction·{width} rotated rows, an even "
                                                            "whole number")]


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


def affine(W, x, b, bias, *, ones=True, role="weight"):
    """``W x + b 1ᵀ`` (just ``W x`` without biases): a projection of every column (``ones=False``: of one
    vector, ``W x + b``)."""
    product = matmul(W, x, role=role)
    return add_bias(product, b, ones=ones) if bias else product


def projection(prefix, out, inp, bias, doc, heads=()):
    """The parameters of a projection: ``W_<prefix>`` of shape heads + (out, inp) and, with biases,
    ``b_<prefix>`` of heads + (out,)."""
    specs = [TensorSpec(f"W_{prefix}", heads + (out, inp), doc=f"{doc} weights")]
    if bias:
        specs.append(TensorSpec(f"b_{prefix}", heads + (out,), doc=f"{doc} bias"))
    return specs


def _attend(S, Q, K, V, out, empty, note="", score="scaled_dot", activation="tanh", score_bias=None, cap=None):
    """The lines shared by Algorithm 4 (4–6) and grouped-query attention: scores, mask, weighted values.  With
    a ``score_bias`` (the name of an ℓ_z×ℓ_x value), the scaled scores get it added before the mask:
    ``S ← S/√d_attn + B``; with a soft ``cap`` c, they are capped before the mask, ``S ← c·tanh(S/c)`` (after the
    bias); in either case the softmax takes S as it is."""
    lines = [Assign(S, _score(Q, K, score, activation), note="Score")]
    prepared = score_bias is not None or cap is not None
    if prepared:
        scaled = _scaled(S, score)
        if score_bias is not None:
            scaled = add(scaled, score_bias)
        lines.append(Assign(S, soft_cap(scaled, cap), note="Bias" if score_bias is not None else "Cap"))
    lines += [
        Assign(S, mask_fill(S, "mask")),
        Assign(out, matmul(V, softmax(S if prepared else _scaled(S, score), empty=empty), role="mix"),
               note=note, returns=not note),
    ]
    return lines


def _score_bias_input(heads=()):
    """The input ``B`` of an algorithm with ``score_bias=True``: heads + (ℓ_z, ℓ_x)."""
    return [TensorSpec("B", heads + (ell_z, ell_x), doc="an additive bias on the scores, B[t_z, t_x] added to "
                                                        "the scaled score of key t_z for query t_x (a relative-"
                                                        "position bias)" + (", per head" if heads else ""))]


@Options(BIAS, SCORE, SCORE_ACTIVATION).builds
def build_single_query_attention(*, bias, score, activation) -> Algorithm:
    """Algorithm 3: one query vector ``e`` attends over the context vectors ``e_t`` (the columns of e_t).

    ``score`` and ``activation`` as in Algorithm 4 (the module docstring): with ``score="additive"`` this is
    one decoder step of Bahdanau et al.'s attention, ``e`` the state s_{i−1} and ``e_t`` the annotations h_j
    (of one width d_in here; Algorithm 4 lets them differ).  Called once per step, its line 2 recomputes
    ``U_a h_j`` at every step — what Bahdanau et al.'s precomputation avoids.
    """
    lines = [
        Assign("q", add(matmul("W_q", "e"), "b_q") if bias else matmul("W_q", "e")),
        Assign("k", affine("W_k", "e_t", "b_k", bias, ones=False), forall="t"),
        Assign("v", affine("W_v", "e_t", "b_v", bias, ones=False), forall="t"),
        Assign("alpha", softmax(_scaled(_score("q", "k", score, activation, single=True), score))),
        Assign("v_tilde", weighted_sum("v", "alpha"), returns=True),
    ]
    return Algorithm(
        number=3, name="single_query_attention", display="SingleQueryAttention",
        summary="Algorithm 3: a single query token attends over the context tokens.",
        inputs=[TensorSpec("e", (d_in,), doc="vector representation of the current token"),
                TensorSpec("e_t", (d_in, T), doc="vector representations of the context tokens, as columns",
                           role="context")],
        params=(projection("q", d_attn, d_in, bias, "query") + projection("k", d_attn, d_in, bias, "key")
                + projection("v", d_out, d_in, bias, "value") + _score_params(score)),
        output=TensorSpec("v_tilde", (d_out,), doc="the token and context combined"),
        lines=lines, params_label="W_qkv",
        permutation={"e_t": "invariant"},
    )


@Options(BIAS, EMPTY, SCORE, SCORE_ACTIVATION, SCORE_BIAS, SCORE_CAP, QK_NORM, QK_EPS, *ROPE_OPTIONS,
         rules=(Requires("rope", _STYLES, "score", ("scaled_dot", "dot"),
                         "a rotation makes a dot product of query and key depend on their relative position"),)).builds
def build_attention(*, bias, empty, score, activation, score_bias, score_cap, qk_norm, qk_eps, **rope) -> Algorithm:
    """Algorithm 4: ``Ṽ = V·softmax(KᵀQ/√d_attn)`` with masked scores set to −∞.

    ``empty`` is the policy for a query column with no admitted key (:ref:`decision-empty-neighbourhood`). ``score``
    replaces ``KᵀQ/√d_attn`` by ``KᵀQ`` (``"dot"``) or Bahdanau's ``v_aᵀ tanh(q_{t_x} + k_{t_z})`` (``"additive"``,
    ``activation`` its nonlinearity); see the module docstring for Luong's scores and for why the keys (Bahdanau's
    ``U_a h_j``) are computed once.  ``score_bias`` adds an input B (ℓ_z×ℓ_x) to the scaled scores:
    ``softmax(KᵀQ/√d_attn + B)``.  ``rope`` rotates the queries and keys by their positions, 0 … ℓ_x − 1 and
    0 … ℓ_z − 1 (:mod:`formal.ops.rotary`; ``rope_theta`` … its settings), before they are compared.  ``qk_norm``
    normalises every query and key column first (with ``gamma_q``, ``gamma_k``; ε ``qk_eps``), and ``score_cap``
    soft-caps the scaled scores before the mask (:mod:`formal.ops.softcap`).
    """
    rotation = rotation_of(rope)
    lines = [
        Assign("Q", affine("W_q", "X", "b_q", bias), note="Query"),
        Assign("K", affine("W_k", "Z", "b_k", bias), note="Key"),
        Assign("V", affine("W_v", "Z", "b_v", bias), note="Value"),
        *([Assign("Q", qk_normed("Q", "q", qk_norm, qk_eps), forall="t", note="QK-norm"),
           Assign("K", qk_normed("K", "k", qk_norm, qk_eps), forall="t")] if qk_norm else []),
        *([Assign("Q", rotary("Q", ell_x, rotation, length=_longest(rotation)), note="Rotate"),
           Assign("K", rotary("K", ell_z, rotation, length=_longest(rotation)))] if rotation else []),
        *_attend("S", "Q", "K", "V", "V_tilde", empty, score=score, activation=activation,
                 score_bias="B" if score_bias else None, cap=score_cap),
    ]
    return Algorithm(
        number=4, name="attention", display="Attention",
        summary="Algorithm 4: each token of X attends to the tokens of Z that the mask admits.",
        inputs=[TensorSpec("X", (d_x, ell_x), doc="primary sequence, one column per token", role="tokens"),
                TensorSpec("Z", (d_z, ell_z), doc="context sequence (defaults to X)", role="context"),
                *(_score_bias_input() if score_bias else []),
                TensorSpec("mask", (ell_z, ell_x), "mask", "Mask[t_z, t_x] = 1 where t_x may see t_z")],
        params=(projection("q", d_attn, d_x, bias, "query") + projection("k", d_attn, d_z, bias, "key")
                + projection("v", d_out, d_z, bias, "value") + _score_params(score) + qk_params(qk_norm)),
        output=TensorSpec("V_tilde", (d_out, ell_x), doc="updated representations of the tokens of X"),
        lines=lines, params_label="W_qkv", defaults={"Z": "X"}, constraints=rotary_constraints(rotation),
        permutation=({} if score_bias or rotation       # a score bias and a rotation are positional
                     else {"X": "equivariant", "Z": "invariant"}),
    )


def kv_heads(n_kv_heads_option):
    """The number of key/value heads an ``n_kv_heads`` option (declared by :data:`N_KV_HEADS`) gives: None
    (one per head), the size symbol H_kv, or the integer."""
    if n_kv_heads_option is None:
        return None
    if n_kv_heads_option == "symbolic":
        return n_kv_heads
    return sp.Integer(N_KV_HEADS.check(n_kv_heads_option))


def grouping(kv) -> list:
    """The condition grouped-query attention with ``kv`` key/value heads states: ``kv`` divides H (none
    when ``kv`` is None or H, one key/value head per head)."""
    if kv is None or kv == H:
        return []
    return [divides(kv, H, "each key/value head serves H/n_kv_heads query heads")]


@Options(BIAS, EMPTY, N_KV_HEADS, SCORE_BIAS, SCORE_CAP, QK_NORM, QK_EPS, *ROPE_OPTIONS).builds
def build_mhattention(*, bias, empty, n_kv_heads, score_bias, score_cap, qk_norm, qk_eps, **rope) -> Algorithm:
    """Algorithm 5: H heads of Algorithm 4 stacked and projected by W_o.

    Per-head parameters are stacked on a leading head axis (``W_q`` is H×d_attn×d_x).  With
    ``n_kv_heads`` (an int, or ``"symbolic"`` for the symbol H_kv) it is grouped-query attention: H_kv
    key/value heads each serve H/H_kv consecutive query heads, and are computed once (multi-query
    attention is ``n_kv_heads=1``; ``n_kv_heads = H`` computes what Algorithm 5 does).  ``score_bias`` adds
    an input B (H×ℓ_z×ℓ_x), head h's bias on its scaled scores (Swin's relative-position bias).  ``rope``
    rotates every head's queries and keys by their positions; ``qk_norm`` and ``score_cap`` are Algorithm 4's (the
    QK-norm's γ_q, γ_k shared by the heads).
    """
    kv = kv_heads(n_kv_heads)
    rotation = rotation_of(rope)
    inputs = [TensorSpec("X", (d_x, ell_x), doc="primary sequence, one column per token", role="tokens"),
              TensorSpec("Z", (d_z, ell_z), doc="context sequence (defaults to X)", role="context"),
              *(_score_bias_input((H,)) if score_bias else []),
              TensorSpec("mask", (ell_z, ell_x), "mask", "Mask[t_z, t_x] = 1 where t_x may see t_z")]
    q_heads, kv_axis = (H,), (H,) if kv is None else (kv,)
    params = (projection("q", d_attn, d_x, bias, "query", q_heads)
              + projection("k", d_attn, d_z, bias, "key", kv_axis)
              + projection("v", d_mid, d_z, bias, "value", kv_axis)
              + projection("o", d_out, H * d_mid, bias, "output") + qk_params(qk_norm))
    h = LoopIndex("h")
    extra = dict(score_cap=score_cap, qk_norm=qk_norm, qk_eps=qk_eps)
    heads = ([_mha_heads(bias, empty, h, score_bias, {**rope, **extra})] if kv is None
             else gqa_heads(bias, empty, h, kv, score_bias=score_bias, rotation=rotation, cap=score_cap,
                            qk=(qk_norm, qk_eps)))
    lines = [*heads,
             Assign("Y", stack_rows("Y_h", H)),
             Assign("V_tilde", affine("W_o", "Y", "b_o", bias), returns=True)]
    grouped = kv is not None
    return Algorithm(
        number=5, name="mhattention", display="MHAttention" if not grouped else "GQAttention",
        summary=("Algorithm 5: H attention heads in parallel, concatenated and projected." if not grouped else
                 "Algorithm 5 with grouped-query attention: H_kv key/value heads shared by H query heads."),
        inputs=inputs, params=params,
        output=TensorSpec("V_tilde", (d_out, ell_x), doc="updated representations of the tokens of X"),
        lines=lines, params_label="W", defaults={"Z": "X"},
        constraints=grouping(kv) + rotary_constraints(rotation),
        permutation=({} if score_bias or rotation       # a score bias and a rotation are positional
                     else {"X": "equivariant", "Z": "invariant"}),
    )


def _mha_heads(bias, empty, h, score_bias=False, options=None):
    """Lines 1–2 of Algorithm 5: ``for h ∈ [H]: Y^h ← Attention(X, Z | W^h_qkv, Mask)`` (with B^h; with Algorithm 4's
    rotary, QK-norm and cap ``options``, each head rotates, normalises and caps its own; the QK-norm's parameters
    are every head's)."""
    inner = build_attention(bias=bias, empty=empty, score_bias=score_bias, **(options or {}))
    per_head = {name: pick(name, h) for name in ("W_q", "W_k", "W_v") + (("b_q", "b_k", "b_v") if bias else ())
                + (("B",) if score_bias else ())}
    shared = {p.name: p.name for p in qk_params(inner.options["qk_norm"])}
    head = call(inner, label=("W_qkv^h", r"W^{h}_{qkv}"), X="X", Z="Z", mask="mask", **per_head, **shared)
    return Loop("h", H, (Assign("Y_h", head),), stack=("Y_h",))


def gqa_heads(bias, empty, h, kv, *, context="Z", cached=False, score_bias=False, rotation=None, length=ell_z,
              start=0, cap=None, qk=(None, 0.0)):
    """Grouped-query attention's lines: keys and values once per key/value head (``kv`` of them), then every
    query head ``h`` attends with its group's.  With ``cached``, each key/value head's new columns are
    appended to its cache ``K_c^g``, ``V_c^g``.  With a ``rotation``, the queries (ℓ_x of them) and the new keys
    (``length``) are rotated for their positions, from ``start`` (a cache's keys were rotated when computed); ``qk``
    (kind, ε) normalises them first, and ``cap`` soft-caps the scaled scores."""
    g, group = LoopIndex("g"), KVGroup("h", H, kv)
    kind, eps = qk
    longest = None if cached else _longest(rotation, length)
    keys = rotary(qk_normed(affine(pick("W_k", g), context, pick("b_k", g) if bias else None, bias), "k", kind, eps),
                  length, rotation, start, longest)
    values = affine(pick("W_v", g), context, pick("b_v", g) if bias else None, bias)
    if cached:
        keys, values = concat(pick("K_c", g), keys), concat(pick("V_c", g), values)
    kv_loop = Loop("g", kv, (
        Assign("K_g", keys, note="Key"),
        Assign("V_g", values, note="Value"),
    ), stack=("K_g", "V_g"))
    q_loop = Loop("h", H, (
        Assign("Q", rotary(qk_normed(affine(pick("W_q", h), "X", pick("b_q", h) if bias else None, bias), "q", kind,
                                     eps), ell_x, rotation, start, longest), note="Query"),
        *_attend("S", "Q", pick("K_g", group), pick("V_g", group), "Y_h", empty, note="head h",
                 score_bias=pick("B", h) if score_bias else None, cap=cap),
    ), stack=("Y_h",))
    return [kv_loop, q_loop]


single_query_attention = build_single_query_attention()
attention = build_attention()
mhattention = build_mhattention()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (single_query_attention, attention, mhattention)
