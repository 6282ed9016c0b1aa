"""Algorithms 8–10: the encoder–decoder, encoder-only and decoder-only transformers (Phuong & Hutter, §6),
and their real-world variants as options.

Each stack is composed of calls of Algorithms 1–7; its layer loop ``for l ∈ [L]`` is symbolic, so its
cost is the body's times L.  The decisions where the paper is loose hold: W_u of Algorithm 9 is N_V×d_f
(:ref:`decision-unembedding-width`), the decoder loop variable is l (:ref:`decision-decoder-loop-variable`),
``MHAttention(X | W, Mask)`` means ``MHAttention(X, X | W, Mask)`` (:ref:`decision-self-attention`), d_attn and
d_mid are hyperparameters (:ref:`decision-head-widths`), and under pre-LN the residual stream X is never replaced
by X̃.
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import (
    N_V,
    L,
    L_dec,
    L_enc,
    by_name,
    channels,
    d_e,
    d_f,
    d_patch,
    ell,
    ell_x,
    ell_z,
    n_classes,
    n_types,
    patch,
)
from ..engine.algorithm import Algorithm, Assign, call, call_columns
from ..engine.declarations import Option, Options, Requires
from ..engine.domains import BOOL, Choice
from ..ops import (
    PATCH_ORDERS,
    LoopIndex,
    activation as nonlinearity,
    add,
    concat,
    const_mask,
    first_column,
    patchify,
    positions,
)
from . import blocks
from .attention import affine
from .blocks import (
    StackOptions,
    embedding_lines,
    layer_loop,
    mlp,
    norm_columns,
    stack_options,
    sublayers,
    unembed,
)
from .embedding import build_positional_embedding, build_token_embedding
from .unembedding import build_unembedding

__all__ = ["ALGORITHMS", "edtransformer", "etransformer", "dtransformer", "build_edtransformer", "build_etransformer",
           "build_dtransformer", "ETRANSFORMER_INPUTS", "ETRANSFORMER_HEADS", "DTRANSFORMER_OPTIONS",
           "EDTRANSFORMER_OPTIONS", "ETRANSFORMER_OPTIONS", "INPUTS", "HEAD", "PATCH_ORDER"]

ETRANSFORMER_INPUTS = ("tokens", "patches", "image")
ETRANSFORMER_HEADS = ("mlm", "classifier")
_VIT = ("patches", "image")

#: Algorithm 10's options: the stacks' (pre-LN, GELU: GPT).
DTRANSFORMER_OPTIONS = Options(*stack_options())
#: Algorithm 8's: the stacks' with the original transformer's ReLU and post-LN.
EDTRANSFORMER_OPTIONS = Options(*stack_options(activation="relu", norm_position="post"))

INPUTS = Option("inputs", "tokens", Choice(*ETRANSFORMER_INPUTS),
                "tokens, patches (ViT: X_p ∈ ℝ^(d_patch×ℓ) with a class token), or image (ViT from the pixels: "
                "X_img ∈ ℝ^((P·n_h)×(P·n_w)×C), cut into P×P patches)")
HEAD = Option("head", "mlm", Choice(*ETRANSFORMER_HEADS),
              "mlm (Algorithm 9's W_f, LN, W_u: every token's distribution) or classifier (ViT's: W_head on the "
              "first token, the class token)")
PATCH_ORDER = Option("patch_order", None, Choice(None, *PATCH_ORDERS),
                     "a patch's values as channel-first (c, i, j), HF's and timm's Conv2d order (None: the same), "
                     "or channel-last (i, j, c)", stands_for=(None, "channel-first")).when("inputs", "image")
#: Algorithm 9's: the stacks' (post-LN, GELU: BERT), BERT's extras and ViT's inputs and head.
ETRANSFORMER_OPTIONS = Options(
    *stack_options(norm_position="post"),
    Option("token_types", False, BOOL, "BERT's token-type (segment) embeddings W_s"),
    Option("embedding_norm", False, BOOL, "a layer norm after the embedding (BERT)"),
    Option("unembedding_bias", False, BOOL, "a bias b_u on the logits (BERT)"),
    INPUTS, HEAD, PATCH_ORDER,
    rules=(Requires("inputs", _VIT, "head", ("classifier",), "ViT classifies its class token"),
           Requires("inputs", _VIT, "position", ("learned",), "ViT learns its positions"),
           Requires("inputs", _VIT, "token_types", (False,), "ViT has no token types"),
           Requires("head", ("classifier",), "tied", (False,), "the classifier has its own W_head"),
           Requires("head", ("classifier",), "unembedding_bias", (False,), "the classifier has its own b_head")))

_TOKENS = "sequence of token ids, 0-based"


@DTRANSFORMER_OPTIONS.builds
def build_dtransformer(**options) -> Algorithm:
    """Algorithm 10 (GPT): a decoder-only transformer, pre-LN, GELU, causal self-attention.

    ``P[:, t]`` is the predicted distribution of token t + 1.  Per layer, with X̃ never written back:
    ``X̃ ← LN(X | γ¹_l, β¹_l); X ← X + MHAttention(X̃ | W_l, causal); X̃ ← LN(X | γ²_l, β²_l);
    X ← X + MLP(X̃)``; then a final LN and ``P ← softmax(W_u X)``.
    """
    opts = StackOptions.of(options)
    l = LoopIndex("l")
    first, embedding_params, constraints = embedding_lines("X", "x", ell, opts)
    causal = const_mask("causal", ell, ell)
    body = sublayers("X", opts, l, [
        ("1", lambda x: blocks.attention_call("", opts, l, x, causal)),
        ("2", lambda x: mlp("", opts, l, x)),
    ])
    final = [Assign("X", norm_columns("X", "", opts), forall="t")] if opts.norm_position == "pre" else []
    last, unembedding_params = unembed("X", opts)
    params = (blocks.token_params() + embedding_params
              + blocks.layer_params("", opts, (L,), ("1", "2"), ("",))
              + (blocks.norm_params("", opts, doc="final") if final else []) + unembedding_params)
    return Algorithm(
        number=10, name="dtransformer", display="DTransformer",
        summary="Algorithm 10: a decoder-only transformer (GPT): each token predicts the next.",
        inputs=[TensorSpec("x", (ell,), "index", _TOKENS, bound=N_V, role="tokens")],
        params=params, output=TensorSpec("P", (N_V, ell), doc="P[:, t] is the distribution of token t + 1"),
        lines=[*first, layer_loop("l", L, body), *final, last], params_label="θ", constraints=constraints,
        causal="forward",
    )


@ETRANSFORMER_OPTIONS.builds
def build_etransformer(*, token_types, embedding_norm, unembedding_bias, inputs, head, patch_order,
                       **stack) -> Algorithm:
    """Algorithm 9 (BERT): an encoder-only transformer, post-LN, GELU, Mask ≡ 1.

    After the layers, ``X ← GELU(W_f X + b_f 1ᵀ)``, ``X ← LN(X | γ, β)`` and ``P ← softmax(W_u X)`` with
    ``W_u ∈ ℝ^{N_V×d_f}`` (:ref:`decision-unembedding-width`).  Options beyond the paper: BERT's token-type embeddings
    (``token_types``) and embedding layer norm (``embedding_norm``), an unembedding bias, and ViT
    (``inputs="patches", head="classifier"``): the token lines become ``X ← [x_class, W_patch X_p +
    b_patch 1ᵀ] + W_p`` and the output is ``softmax(W_head LN(X)[:, 1] + b_head)`` over the classes.  With
    ``inputs="image"`` ViT takes the image itself, (P·n_h)×(P·n_w)×C channel-last, and cuts it into its
    n_h·n_w patches first (``X_p ← patches_P(X_img)``, the values of a patch in ``patch_order``:
    ``channel-first``, HF's and timm's Conv2d order, or ``channel-last``).
    """
    opts = StackOptions.of(stack)
    l = LoopIndex("l")
    tokens = by_name("height") * by_name("width") if inputs == "image" else ell
    length = tokens + 1 if inputs in ("patches", "image") else ell
    if inputs == "tokens":
        lines, params, constraints, data = _token_inputs(opts, token_types)
    else:
        lines, params, constraints, data = _patch_inputs(opts, length, patch_order)
    if embedding_norm:
        lines.append(Assign("X", norm_columns("X", "_e", opts), forall="t"))
        params += blocks.norm_params("_e", opts, doc="embedding norm")
    mask = const_mask("ones", length, length)
    body = sublayers("X", opts, l, [
        ("1", lambda x: blocks.attention_call("", opts, l, x, mask)),
        ("2", lambda x: mlp("", opts, l, x)),
    ])
    lines.append(layer_loop("l", L, body))
    params += blocks.layer_params("", opts, (L,), ("1", "2"), ("",))
    head_lines, head_params, output = (_mlm_head(opts, unembedding_bias) if head == "mlm"
                                       else _classifier_head(opts))
    lines += head_lines
    params += head_params
    return Algorithm(
        number=9, name="etransformer", display="ETransformer",
        summary=("Algorithm 9: an encoder-only transformer (BERT): each token's distribution, given all tokens."
                 if head == "mlm" else "Algorithm 9 as ViT: an encoder over image patches with a class token."),
        inputs=data, params=params, output=output, lines=lines, params_label="θ", constraints=constraints,
        permutation={"x": "equivariant"} if (opts.position, inputs, head) == ("none", "tokens", "mlm") else {},
    )


def _token_inputs(opts, token_types):
    """Algorithm 9's embedding line, with BERT's token types added: lines, params, constraints, inputs."""
    lines, embedding_params, constraints = embedding_lines("X", "x", ell, opts)
    params = blocks.token_params() + embedding_params
    data = [TensorSpec("x", (ell,), "index", _TOKENS, bound=N_V, role="tokens")]
    if token_types:
        lines[1] = Assign("X", add(lines[1].expr, call_columns(build_token_embedding(), label=("W_s", "W_s"),
                                                               v="s", W_e="W_s")), forall="t", shown="e")
        params.append(TensorSpec("W_s", (d_e, n_types), doc="token-type (segment) embedding matrix", embedding=True))
        data.append(TensorSpec("s", (ell,), "index", "token types (segment ids), 0-based", bound=n_types))
    return lines, params, constraints, data


def _patch_inputs(opts, length, order=None):
    """ViT's embedding line ``X ← [x_class, W_patch X_p + b_patch 1ᵀ] + W_p``: lines, params, constraints,
    inputs.  With a patch ``order`` the input is the image and a first line cuts it into patches."""
    width, lines = d_patch, []
    data = [TensorSpec("X_p", (d_patch, ell), doc="image patches, flattened, one column per patch")]
    if order is not None:
        rows, columns = by_name("height"), by_name("width")
        width = patch ** 2 * channels
        data = [TensorSpec("X_img", (patch * rows, patch * columns, channels), grid=True,
                           doc="the image, channel-last: P·n_h rows and P·n_w columns of pixels, C channels")]
        lines.append(Assign("X_p", patchify("X_img", patch, rows, columns, order),
                            note=f"P×P patches, {'(c, i, j)' if order == 'channel-first' else '(i, j, c)'}"))
    patches = affine("W_patch", "X_p", "b_patch", opts.bias, role="embed")
    positional = build_positional_embedding(encoding="learned")
    line = Assign("X", add(concat("x_class", patches),
                           call_columns(positional, label=("W_p", "W_p"), t=positions(length), W_p="W_p")),
                  forall="t")
    params = [TensorSpec("W_patch", (d_e, width), doc="patch projection", embedding=True)]
    params += [TensorSpec("b_patch", (d_e,), doc="patch projection bias", embedding=True)] if opts.bias else []
    params += [TensorSpec("x_class", (d_e, 1), doc="class token", embedding=True),
               TensorSpec("W_p", (d_e, length), doc="positional embedding matrix", embedding=True)]
    return lines + [line], params, [], data


def _mlm_head(opts, unembedding_bias):
    """Algorithm 9, lines 10–12: ``GELU(W_f X + b_f 1ᵀ)``, LN, ``softmax(W_u X)``: lines, params, output."""
    width = d_e if opts.tied else d_f  # tying W_u = W_eᵀ makes d_f = d_e
    lines, params = [], []
    if opts.norm_position == "pre":
        lines.append(Assign("X", norm_columns("X", "", opts), forall="t"))
        params += blocks.norm_params("", opts, doc="final")
    lines += [Assign("X", nonlinearity("gelu", affine("W_f", "X", "b_f", opts.bias))),
              Assign("X", norm_columns("X", "_f", opts), forall="t")]
    params += [TensorSpec("W_f", (width, d_e), doc="final projection")]
    params += [TensorSpec("b_f", (width,), doc="final projection bias")] if opts.bias else []
    params += blocks.norm_params("_f", opts, width=width, doc="final")
    last, unembedding_params = unembed("X", opts, width=width, bias=unembedding_bias)
    output = TensorSpec("P", (N_V, ell), doc="P[:, t] is the distribution of the token at t")
    return lines + [last], params + unembedding_params, output


def _classifier_head(opts):
    """ViT's head ``softmax(W_head LN(X)[:, 1] + b_head)``, Algorithm 7 on the class token."""
    classify = build_unembedding(bias=opts.bias, cap=opts.logit_cap)
    args = {"W_u": "W_head", **({"b_u": "b_head"} if opts.bias else {})}
    label = "W_head" + (", b_head" if opts.bias else "")
    lines = [Assign("X", norm_columns("X", "", opts), forall="t"),
             Assign("p", call(classify, label=(label, label), e=first_column("X"), **args), returns=True)]
    params = blocks.norm_params("", opts, doc="final") + [TensorSpec("W_head", (n_classes, d_e), doc="classifier")]
    params += [TensorSpec("b_head", (n_classes,), doc="classifier bias")] if opts.bias else []
    return lines, params, TensorSpec("p", (n_classes,), doc="distribution over the classes")


@EDTRANSFORMER_OPTIONS.builds
def build_edtransformer(**options) -> Algorithm:
    """Algorithm 8 (Vaswani et al.): an encoder–decoder transformer, post-LN, ReLU.

    Encoder layer: ``Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)``, LN, ``Z ← Z + MLP(Z)``, LN.  Decoder
    layer: causal self-attention (W^dec_l), LN, cross-attention ``MHAttention(X, Z | W^e/d_l, Mask ≡ 1)``
    with its own weights, LN, MLP, LN.  W_e and W_p are shared by both stacks.
    """
    opts = StackOptions.of(options)
    l = LoopIndex("l")
    enc_first, embedding_params, constraints = embedding_lines("Z", "z", ell_z, opts)
    dec_first, _, dec_constraints = embedding_lines("X", "x", ell_x, opts)
    ones_z = const_mask("ones", ell_z, ell_z)
    encoder = sublayers("Z", opts, l, [
        ("1", lambda z: blocks.attention_call("enc_", opts, l, z, ones_z, glyph=("W^enc_l", r"W^{\mathrm{enc}}_l"))),
        ("2", lambda z: mlp("enc_", opts, l, z)),
    ])
    causal, cross = const_mask("causal", ell_x, ell_x), const_mask("ones", ell_z, ell_x)
    pre = opts.norm_position == "pre"
    encoded = "Z_final" if pre else "Z"  # pre-LN: the decoder reads the normalised encoder output
    decoder = sublayers("X", opts, l, [
        ("3", lambda x: blocks.attention_call("dec_", opts, l, x, causal, glyph=("W^dec_l", r"W^{\mathrm{dec}}_l"))),
        ("4", lambda x: blocks.attention_call("cross_", opts, l, x, cross, z=encoded,
                                              glyph=("W^e/d_l", r"W^{\mathrm{e/d}}_l"))),
        ("5", lambda x: mlp("dec_", opts, l, x)),
    ])
    final = [Assign("Z_final", norm_columns("Z", "_enc", opts), forall="t")] if pre else []
    last, unembedding_params = unembed("X", opts)
    dec_final = [Assign("X", norm_columns("X", "_dec", opts), forall="t")] if pre else []
    params = (blocks.token_params() + embedding_params
              + blocks.layer_params("enc_", opts, (L_enc,), ("1", "2"), ("enc_",))
              + blocks.layer_params("dec_", opts, (L_dec,), ("3", "4", "5"), ("dec_", "cross_"))
              + (blocks.norm_params("_enc", opts, doc="final encoder")
                 + blocks.norm_params("_dec", opts, doc="final decoder") if final else [])
              + unembedding_params)
    return Algorithm(
        number=8, name="edtransformer", display="EDTransformer",
        summary="Algorithm 8: an encoder–decoder transformer (sequence-to-sequence), e.g. for translation.",
        inputs=[TensorSpec("z", (ell_z,), "index", "context sequence of token ids, 0-based", bound=N_V,
                           role="context"),
                TensorSpec("x", (ell_x,), "index", "primary sequence of token ids, 0-based", bound=N_V,
                           role="tokens")],
        params=params, output=TensorSpec("P", (N_V, ell_x), doc="P[:, t] is the distribution of token t + 1"),
        lines=[*enc_first, layer_loop("l", L_enc, encoder), *final, *dec_first, layer_loop("l", L_dec, decoder),
               *dec_final, last],
        params_label="θ", constraints=constraints + dec_constraints,
        causal="forward", permutation={"z": "invariant"} if opts.position == "none" else {},
    )


edtransformer = build_edtransformer()
etransformer = build_etransformer()
dtransformer = build_dtransformer()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (edtransformer, etransformer, dtransformer)
