"""Key/value caching: Algorithm 5 and Algorithm 10 over new tokens that attend to cached keys and values.

Decoding one token at a time, a decoder recomputes nothing for the earlier tokens: each layer keeps the
keys and values it computed (the cache) and the new tokens' queries attend over the cache and
themselves, with the bottom-right causal mask (:ref:`decision-causal-alignment`).  ``step="prefill"`` processes a
prompt and returns its cache; ``step="extend"`` processes new tokens against a cache of ℓ_c tokens and
returns the cache grown by them.  The outputs equal Algorithm 10's on the whole sequence.
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, H, L, d_attn, d_mid, d_out, d_x, ell, ell_c, ell_max, ell_x
from ..engine.algorithm import Algorithm, Assign, Loop, at_most, call
from ..engine.declarations import Option, Options
from ..engine.domains import Choice
from ..ops import LoopIndex, add, const_mask, pick, stack_rows
from ..ops.rotary import ROTARY_SCALINGS
from . import blocks
from .attention import (
    BIAS,
    EMPTY,
    N_KV_HEADS,
    QK_EPS,
    QK_NORM,
    ROPE_OPTIONS,
    SCORE_CAP,
    affine,
    gqa_heads,
    grouping,
    kv_heads,
    projection,
    qk_params,
    rotary_constraints,
    rotation_of,
)
from .blocks import StackOptions, mlp, norm_columns, stack_options, unembed

__all__ = ["ALGORITHMS", "cached_rope", "build_kv_mhattention", "build_kv_dtransformer", "kv_mhattention",
           "kv_dtransformer", "STEPS", "STEP"]

STEPS = ("prefill", "extend")

#: Which call of a cached decoder this is.
STEP = Option("step", "extend", Choice(*STEPS),
              "prefill (a prompt, no cache) or extend (new tokens after a cache of ℓ_c tokens)")


def cached_rope(options) -> tuple:
    """The rotary options a cached decoder takes: all but the dynamic rule, whose frequencies change with the
    length — the keys a cache holds were rotated at an earlier length, so a cached decoder would not compute
    what the whole sequence does."""
    why = ("dynamic NTK rescales every rotation with the sequence length, and a cache holds keys rotated at an "
           "earlier length")
    static = tuple(s for s in ROTARY_SCALINGS if s != "dynamic")

    def narrowed(option):
        if option.name == "rope_scaling":
            return option.only(None, *static, why=why).but(applies=option.applies)
        if option.applies and option.applies[0] == "rope_scaling":       # factor, N: their rules less dynamic
            return option.when("rope_scaling", *(v for v in option.applies[1] if v != "dynamic"))
        return option
    return tuple(narrowed(o) for o in options)


@Options(BIAS, EMPTY, N_KV_HEADS, STEP, SCORE_CAP, QK_NORM, QK_EPS, *cached_rope(ROPE_OPTIONS)).builds
def build_kv_mhattention(*, bias, empty, n_kv_heads, step, score_cap, qk_norm, qk_eps, **rope) -> Algorithm:
    """Algorithm 5 (self-attention) returning its keys and values: with ``step="extend"`` the new tokens'
    keys and values are appended to the cache ``K_c``, ``V_c`` (H_kv×d×ℓ_c) and the queries of the ℓ_x
    new tokens attend over all ℓ_c + ℓ_x columns.  With ``rope``, the new tokens sit at positions ℓ_c, …,
    ℓ_c + ℓ_x − 1: their queries and keys are rotated for them, and the cache holds rotated keys.  ``empty`` is the
    policy for a new token whose mask admits no key (Algorithm 4's: an SDPA-style cached attention with an additive
    −∞ mask gives ``nan`` there); ``score_cap`` and ``qk_norm`` are Algorithm 4's (a cache holds normalised keys)."""
    kv = H if n_kv_heads is None else kv_heads(n_kv_heads)
    rotation = rotation_of(rope)
    extend = step == "extend"
    total = ell_c + ell_x if extend else ell_x
    inputs = [TensorSpec("X", (d_x, ell_x), doc="the new tokens, one column each")]
    if extend:
        inputs += [TensorSpec("K_c", (kv, d_attn, ell_c), doc="cached keys, per key/value head"),
                   TensorSpec("V_c", (kv, d_mid, ell_c), doc="cached values, per key/value head")]
    inputs.append(TensorSpec("mask", (total, ell_x), "mask", "Mask[t_z, t_x] = 1 where new token t_x sees t_z"))
    params = (projection("q", d_attn, d_x, bias, "query", (H,)) + projection("k", d_attn, d_x, bias, "key", (kv,))
              + projection("v", d_mid, d_x, bias, "value", (kv,)) + projection("o", d_out, H * d_mid, bias, "output")
              + qk_params(qk_norm))
    lines = [*gqa_heads(bias, empty, LoopIndex("h"), kv, context="X", cached=extend, rotation=rotation,
                        length=ell_x, start=ell_c if extend else 0, cap=score_cap, qk=(qk_norm, qk_eps)),
             Assign("Y", stack_rows("Y_h", H)),
             Assign("V_tilde", affine("W_o", "Y", "b_o", bias), returns=True)]
    return Algorithm(
        number=5, name="kv_mhattention", display="MHAttentionKV",
        summary="Algorithm 5 with a key/value cache: new tokens attend over cached and new keys and values.",
        inputs=inputs, params=params,
        output=(TensorSpec("V_tilde", (d_out, ell_x), doc="updated representations of the new tokens"),
                TensorSpec("K_g", (kv, d_attn, total), doc="keys of every token so far (the new cache)"),
                TensorSpec("V_g", (kv, d_mid, total), doc="values of every token so far (the new cache)")),
        lines=lines, params_label="W", constraints=grouping(kv) + rotary_constraints(rotation),
    )


@Options(*cached_rope(stack_options()), STEP).builds
def build_kv_dtransformer(*, step, **stack) -> Algorithm:
    """Algorithm 10 with a key/value cache per layer: ``(P, K, V) ← DTransformerKV(x, K_c, V_c | θ)``.

    The ℓ_x new tokens sit at positions ℓ_c, …, ℓ_c + ℓ_x − 1; ``P`` holds their next-token distributions
    and ``K``, ``V`` (L×H_kv×d×(ℓ_c + ℓ_x)) the grown cache.  Parameters are Algorithm 10's.
    """
    opts = StackOptions.of(stack)
    bias, n_kv_heads = opts.bias, opts.n_kv_heads
    extend = step == "extend"
    kv = H if n_kv_heads is None else kv_heads(n_kv_heads)
    l = LoopIndex("l")
    start = ell_c if extend else 0
    length = ell_x if extend else ell
    total = ell_c + ell_x if extend else ell
    first, embedding_params, constraints = blocks.embedding_lines("X", "x", length, opts, start=start)
    if extend and opts.position != "none":
        constraints = [at_most(total, ell_max, "every cached and new position needs a column of the position table")]
    attention = build_kv_mhattention(bias=bias, n_kv_heads=n_kv_heads, step=step, score_cap=opts.score_cap,
                                     qk_norm=opts.qk_norm, **({"qk_eps": opts.eps} if opts.qk_norm else {}),
                                     **opts.rope_options)
    mask = const_mask("causal-bottom-right" if extend else "causal", total, length)

    def attend(x):
        names = (("W_q", "W_k", "W_v", "W_o") + (("b_q", "b_k", "b_v", "b_o") if bias else ())
                 + tuple(p.name for p in qk_params(opts.qk_norm)))
        args = {n: pick(n, l) for n in names}
        if extend:
            args.update(K_c=pick("K_c", l), V_c=pick("V_c", l))
        return call(attention, label=("W_l", "W_l"), X=x, mask=mask, **args)

    pre = opts.norm_position == "pre"
    body = []
    source = "X_tilde" if pre else "X"
    if pre:
        body.append(Assign("X_tilde", norm_columns("X", "1", opts, l), forall="t"))
    body += [Assign(("Y", "K_l", "V_l"), attend(source)), Assign("X", add("X", "Y"))]
    if not pre:
        body.append(Assign("X", norm_columns("X", "1", opts, l), forall="t"))
    body += blocks.sublayers("X", opts, l, [("2", lambda x: mlp("", opts, l, x))])
    final = [Assign("X", norm_columns("X", "", opts), forall="t")] if pre else []
    last, unembedding_params = unembed("X", opts)
    last = Assign(last.target, last.expr, forall="t")
    params = (blocks.token_params() + embedding_params + blocks.layer_params("", opts, (L,), ("1", "2"), ("",))
              + (blocks.norm_params("", opts, doc="final") if final else []) + unembedding_params)
    inputs = [TensorSpec("x", (length,), "index", "the new token ids, 0-based", bound=N_V)]
    if extend:
        inputs += [TensorSpec("K_c", (L, kv, d_attn, ell_c), doc="cached keys of every layer"),
                   TensorSpec("V_c", (L, kv, d_mid, ell_c), doc="cached values of every layer")]
    return Algorithm(
        number=10, name="kv_dtransformer", display="DTransformerKV",
        summary="Algorithm 10 with a key/value cache: the next-token distributions of new tokens, and the cache.",
        inputs=inputs, params=params,
        output=(TensorSpec("P", (N_V, length), doc="P[:, t] is the distribution of the token after new token t"),
                TensorSpec("K_l", (L, kv, d_attn, total), doc="the key cache of every layer"),
                TensorSpec("V_l", (L, kv, d_mid, total), doc="the value cache of every layer")),
        lines=[*first, Loop("l", L, tuple(body), stack=("K_l", "V_l"), sequential=True), *final, last],
        params_label="θ", constraints=constraints,
    )


kv_mhattention = build_kv_mhattention()
kv_dtransformer = build_kv_dtransformer()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (kv_mhattention, kv_dtransformer)
