"""Algorithms 8–10 in torch, batch-first, with the formal objects' options (``norm``, ``eps``,
``position``, ``activation``, ``bias``, ``tied``, ``norm_position``, and for Algorithm 9 ``token_types``,
``embedding_norm``, ``unembedding_bias``, ``inputs``, ``head``).

``params`` maps canonical names to tensors, per-layer ones stacked on a leading layer axis (``W_q`` is
L×H×d_attn×d_e), exactly as ``formal-transformers show dtransformer --params`` lists them.  Each function
returns logits; the spec's distributions are their softmax (:func:`probabilities`).
"""

from __future__ import annotations

from formal.algorithms.blocks import StackOptions
from formal.errors import ConfigError

from .. import require_torch
from .attention import QK_PARAMS, capped, causal_mask, mhattention, qk_of
from .convert import rows_to_columns, single
from .embedding import positional_embedding, token_embedding
from .feedforward import mlp
from .normalization import layer_norm
from .rotary import settings
from .runners import runs, stack_paths

__all__ = ["dtransformer", "etransformer", "edtransformer", "encode", "decode", "probabilities", "embed", "layer",
           "final_norm", "stack_options", "mlp_sublayer", "unembed", "layer_qk", "run_dtransformer", "run_etransformer",
           "run_edtransformer"]

torch = require_torch()
F = torch.nn.functional

_ATTENTION = ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")
_MLP = ("W_mlp1", "W_mlp2", "b_mlp1", "b_mlp2", "W_gate")


def stack_options(options, algorithm: str = "dtransformer") -> StackOptions:
    """The options a stack's layers read (:class:`formal.algorithms.blocks.StackOptions`) of ``algorithm``'s
    ``options``: those not given take the algorithm's declared defaults (a third-party reader names only what
    differs, ``from_gpt2``'s ``{"activation": "gelu-tanh", …}``), and each is checked against its domain."""
    from formal.algorithms import get
    declared = get(algorithm).option_specs
    values = {**declared.defaults(), **options}
    return StackOptions.of({k: declared[k].check(v) for k, v in values.items() if k in declared})


def probabilities(logits):
    """``softmax`` over the vocabulary (the last axis): the spec's ``P``, as rows."""
    return torch.softmax(logits, dim=-1)


def embed(p, x, opts: StackOptions, *, start=0, ell_max=None):
    """``W_e[:, x[t]] + W_p[:, t]`` for every token: x (B, ℓ) → (B, ℓ, d_e); positions start at ``start``.
    A sinusoidal table needs ``ell_max`` (the paper's encoding takes it as its base)."""
    X = token_embedding(x, p["W_e"])
    if opts.position == "none":
        return X
    if opts.position == "learned":
        ell_max = p["W_p"].shape[1]
    elif ell_max is None:
        raise ConfigError(f"the {opts.position} position table needs ell_max")
    if start + x.shape[-1] > ell_max:
        raise ConfigError(f"ell = {start + x.shape[-1]} exceeds ell_max = {ell_max} (the position table's length)")
    t = torch.arange(start, start + x.shape[-1], device=x.device)
    return X + positional_embedding(t, opts.position, W_p=p.get("W_p"), d_e=X.shape[-1], ell_max=ell_max,
                                    dtype=X.dtype, device=X.device)


def _norm(p, opts, name, X, l=None):
    pick = (lambda t: t) if l is None else (lambda t: t[l])
    beta = pick(p[f"beta{name}"]) if opts.norm == "layer" else None
    return layer_norm(X, pick(p[f"gamma{name}"]), beta, norm=opts.norm, eps=opts.eps)


def _attention(p, prefix, l, X, Z, mask, path, opts):
    weights = {n: p[prefix + n][l] for n in _ATTENTION if prefix + n in p}
    return mhattention(X, Z, mask, path=path, rope=settings(opts.rope_options), qk=layer_qk(p, prefix, l, opts),
                       cap=opts.score_cap, **weights)


def layer_qk(p, prefix, l, opts):
    """Layer l's QK-norm (:func:`reference.model.attention.qk_of`: the stack's norm ε, ``<prefix>gamma_q`` …)."""
    return qk_of(opts.qk_norm, opts.eps, {n: p[prefix + n][l] for n in QK_PARAMS if prefix + n in p})


def mlp_sublayer(p, prefix, l, X, opts):
    """Layer l's MLP (parameters ``<prefix>W_mlp1`` …, stacked on the layer axis) on X."""
    weights = {n: p[prefix + n][l] for n in _MLP if prefix + n in p}
    return mlp(X, kind=opts.activation, **weights)


def layer(X, steps, opts: StackOptions, p, l):
    """One layer: each step ``(norm name, f)``; pre-LN ``X ← X + f(LN(X))`` (X is never replaced by
    X̃), post-LN ``X ← LN(X + f(X))``."""
    for name, f in steps:
        if opts.norm_position == "pre":
            X = X + f(_norm(p, opts, name, X, l))
        else:
            X = _norm(p, opts, name, X + f(X), l)
    return X


def final_norm(p, opts, name, X):
    """The last norm of a pre-LN stack (``gamma<name>``, ``beta<name>``)."""
    return _norm(p, opts, name, X)


def unembed(p, X, opts, bias=None):
    """The logits ``W_u X (+ b_u)`` as rows, W_u tied to W_eᵀ under ``opts.tied``, soft-capped by ``opts.logit_cap``."""
    W_u = p["W_e"].t() if opts.tied else p["W_u"]
    return capped(F.linear(X, W_u, bias), opts.logit_cap)


def dtransformer(x, p, options, *, path="explicit", ell_max=None):
    """Algorithm 10 (GPT): x (B, ℓ) token ids → logits (B, ℓ, N_V); row t predicts token t + 1."""
    opts = stack_options(options)
    X = embed(p, x, opts, ell_max=ell_max)
    mask = causal_mask(x.shape[-1], x.shape[-1], device=x.device)
    for l in range(p["W_q"].shape[0]):
        X = layer(X, [("1", lambda h: _attention(p, "", l, h, h, mask, path, opts)),
                      ("2", lambda h: mlp_sublayer(p, "", l, h, opts))], opts, p, l)
    if opts.norm_position == "pre":
        X = final_norm(p, opts, "", X)
    return unembed(p, X, opts)


def image_patches(images, P: int, order: str):
    """Channel-last images (B, P·n_h, P·n_w, C) as their flattened P×P patches (B, n_h·n_w, P²·C), row-major,
    by ``torch.nn.functional.unfold`` (a patch's values in (c, i, j) order; ``channel-last`` reorders them
    to (i, j, c))."""
    B, _, _, C = images.shape
    X = F.unfold(images.permute(0, 3, 1, 2), kernel_size=P, stride=P)       # (B, C·P·P, N), (c, i, j)
    if order == "channel-last":
        X = X.reshape(B, C, P * P, -1).transpose(1, 2).reshape(B, P * P * C, -1)
    return X.transpose(1, 2)


def etransformer(p, options, *, x=None, s=None, X_p=None, X_img=None, P=None, path="explicit", ell_max=None):
    """Algorithm 9 (BERT; ViT with ``inputs="patches", head="classifier"``, or from ``X_img`` with patches
    of side ``P`` under ``inputs="image"``): logits (B, ℓ, N_V), or (B, N_C) class logits for ViT."""
    opts = stack_options(options, "etransformer")
    if options.get("inputs", "tokens") == "image":
        X_p = image_patches(X_img, P, options["patch_order"])
    if options.get("inputs", "tokens") in ("patches", "image"):
        patches = F.linear(X_p, p["W_patch"], p.get("b_patch"))                  # (B, ℓ, d_e)
        cls = p["x_class"].t().expand(X_p.shape[0], 1, -1)                          # (B, 1, d_e)
        X = torch.cat((cls, patches), dim=1) + p["W_p"].t()
    else:
        X = embed(p, x, opts, ell_max=ell_max)
        if options.get("token_types"):
            X = X + token_embedding(s, p["W_s"])
    if options.get("embedding_norm"):
        X = final_norm(p, opts, "_e", X)
    for l in range(p["W_q"].shape[0]):
        X = layer(X, [("1", lambda h: _attention(p, "", l, h, h, None, path, opts)),
                      ("2", lambda h: mlp_sublayer(p, "", l, h, opts))], opts, p, l)
    if options.get("head", "mlm") == "classifier":
        X = final_norm(p, opts, "", X)
        return capped(F.linear(X[:, 0], p["W_head"], p.get("b_head")), opts.logit_cap)
    if opts.norm_position == "pre":
        X = final_norm(p, opts, "", X)
    X = F.gelu(F.linear(X, p["W_f"], p.get("b_f")))
    X = final_norm(p, opts, "_f", X)
    return unembed(p, X, opts, p.get("b_u"))


def encode(z, p, opts: StackOptions, path="explicit", ell_max=None):
    """Algorithm 8's encoder: z (B, ℓ_z) → Z (B, ℓ_z, d_e), normalised by ``gamma_enc`` under pre-LN."""
    Z = embed(p, z, opts, ell_max=ell_max)
    for l in range(p["enc_W_q"].shape[0]):
        Z = layer(Z, [("1", lambda h: _attention(p, "enc_", l, h, h, None, path, opts)),
                      ("2", lambda h: mlp_sublayer(p, "enc_", l, h, opts))], opts, p, l)
    return final_norm(p, opts, "_enc", Z) if opts.norm_position == "pre" else Z


def decode(x, Z, p, opts: StackOptions, path="explicit", ell_max=None):
    """Algorithm 8's decoder over the encoded context Z: x (B, ℓ_x) → logits (B, ℓ_x, N_V)."""
    X = embed(p, x, opts, ell_max=ell_max)
    mask = causal_mask(x.shape[-1], x.shape[-1], device=x.device)
    for l in range(p["dec_W_q"].shape[0]):
        X = layer(X, [("3", lambda h: _attention(p, "dec_", l, h, h, mask, path, opts)),
                      ("4", lambda h: _attention(p, "cross_", l, h, Z, None, path, opts)),
                      ("5", lambda h: mlp_sublayer(p, "dec_", l, h, opts))], opts, p, l)
    if opts.norm_position == "pre":
        X = final_norm(p, opts, "_dec", X)
    return unembed(p, X, opts)


def edtransformer(z, x, p, options, *, path="explicit", ell_max=None):
    """Algorithm 8: context z (B, ℓ_z) and primary x (B, ℓ_x) → logits (B, ℓ_x, N_V); self- and
    cross-attention have their own weights (``dec_``, ``cross_``)."""
    opts = stack_options(options, "edtransformer")
    return decode(x, encode(z, p, opts, path, ell_max), p, opts, path, ell_max)


# ---------------------------------------------------------------------- runs of the spec's Algorithms 8–10
@runs("dtransformer", paths=stack_paths)
def run_dtransformer(c):
    return rows_to_columns(probabilities(dtransformer(c.tokens("x"), c.params, c.options, **c.kwargs())))


@runs("etransformer", paths=stack_paths)
def run_etransformer(c):
    if c.options["inputs"] == "patches":
        return single(probabilities(etransformer(c.params, c.options, X_p=c.rows("X_p"), **c.kwargs())))
    if c.options["inputs"] == "image":   # the patch side: W_patch is d_e×(P²·C), the image has C channels
        C = c["X_img"].shape[-1]
        P = c.get("patch") or round((c.params["W_patch"].shape[1] // C) ** 0.5)
        return single(probabilities(etransformer(c.params, c.options, X_img=c.grid("X_img"), P=P, **c.kwargs())))
    s = c.tokens("s") if c.options["token_types"] else None
    logits = etransformer(c.params, c.options, x=c.tokens("x"), s=s, **c.kwargs())
    if c.options["head"] == "classifier":   # the class distribution of the first token
        return single(probabilities(logits))
    return rows_to_columns(probabilities(logits))


@runs("edtransformer", paths=stack_paths)
def run_edtransformer(c):
    return rows_to_columns(probabilities(edtransformer(c.tokens("z"), c.tokens("x"), c.params, c.options,
                                                       **c.kwargs())))
