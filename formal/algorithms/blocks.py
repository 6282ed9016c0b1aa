"""The parts the model stacks (Algorithms 8–10) are built from.

The embedding line, the attention and MLP sublayers in pre- or post-LN arrangement, and their parameters
— every per-layer parameter stacked on a leading layer axis, named after the paper (``W_q`` is
L×H×d_attn×d_e, ``gamma1`` is L×d_e).  Attention, layer norm, the embeddings and the unembedding are
*calls* of Algorithms 1–7, never re-derived here; the MLP is the paper's one line.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, H, d_attn, d_e, d_mid, d_mlp, ell_max, latex as sym_latex, text as sym_text
from ..engine.algorithm import Assign, Loop, Step, at_most, call, call_columns
from ..engine.declarations import Option
from ..engine.domains import BOOL, Choice
from ..ops import activation, add, matmul, mul, pick, positions, transpose
from .attention import (
    N_KV_HEADS,
    QK_NORM,
    ROPE_NAMES,
    ROPE_OPTIONS,
    SCORE_CAP,
    affine,
    build_mhattention,
    kv_heads,
    qk_params,
    rotation_of,
)
from .embedding import ENCODINGS, build_positional_embedding, token_embedding
from .normalization import EPS, NORM, build_layer_norm
from .unembedding import LOGIT_CAP, build_unembedding

__all__ = ["StackOptions", "POSITIONS", "MLP_ACTIVATIONS", "NORM_POSITIONS", "STACK_NORM", "STACK_EPS", "POSITION",
           "MLP_ACTIVATION", "STACK_BIAS", "TIED", "NORM_POSITION", "STACK_ROPE", "STACK_QK_NORM", "STACK_SCORE_CAP",
           "STACK_LOGIT_CAP", "stack_options", "embed",
           "embedding_lines", "length_line", "sublayers",
           "layer_loop", "layer_params", "unembed", "norm_columns", "norm_params", "attention_call", "mlp",
           "mlp_expression", "mlp_params", "token_params"]

POSITIONS = ENCODINGS + ("none",)
MLP_ACTIVATIONS = ("relu", "gelu", "gelu-tanh", "swiglu")
NORM_POSITIONS = ("pre", "post")


#: The stacks' norm and ε: Algorithm 6's options, in every norm of the stack.
STACK_NORM = NORM.but(doc="every norm's kind: " + NORM.doc)
STACK_EPS = EPS.but(doc="added to the variance under the root in every norm (0: the paper's)", examples=(1e-5, 0.1))
POSITION = Option("position", "learned", Choice(*POSITIONS),
                  "positional encoding: Algorithm 2's learned W_p or a fixed table (sinusoidal-paper, "
                  "sinusoidal-vaswani), or none")
MLP_ACTIVATION = Option("activation", "gelu", Choice(*MLP_ACTIVATIONS),
                        "MLP activation: relu, gelu (exact), gelu-tanh (GPT-2's) or swiglu "
                        "(W_mlp2 (SiLU(W_gate X) ⊙ W_mlp1 X), Shazeer 2020)")
STACK_BIAS = Option("bias", True, BOOL, "whether the attention projections and the MLP have biases")
TIED = Option("tied", False, BOOL, "whether the unembedding is the token embedding transposed, W_u = W_eᵀ")
NORM_POSITION = Option("norm_position", "pre", Choice(*NORM_POSITIONS),
                       "pre (X + f(LN(X)), GPT-2) or post (LN(X + f(X)), the original transformer and BERT)")


def stack_options(*, activation: str = "gelu", norm_position: str = "pre") -> tuple:
    """The options every stack shares, in order; the stacks differ only in their defaults of ``activation``
    (the original transformer's ReLU, GELU after it) and ``norm_position``."""
    return (STACK_NORM, STACK_EPS, POSITION, MLP_ACTIVATION.but(default=activation), STACK_BIAS, TIED, N_KV_HEADS,
            NORM_POSITION.but(default=norm_position), *STACK_ROPE, STACK_QK_NORM, STACK_SCORE_CAP, STACK_LOGIT_CAP)


#: Algorithm 4's QK-norm in every attention sublayer, with the stack's norm ε.
STACK_QK_NORM = QK_NORM.but(doc=QK_NORM.doc + "; ε is the stack's eps")
#: Algorithm 4's soft cap of the scores in every attention sublayer.
STACK_SCORE_CAP = SCORE_CAP.but(doc="soft-capping of every attention sublayer's scaled scores: " + SCORE_CAP.doc)
#: Algorithm 7's soft cap of the final logits.
STACK_LOGIT_CAP = LOGIT_CAP.but(name="logit_cap", doc="soft-capping of the final logits, c·tanh(z/c) (Gemma 2: 30): "
                                                      "None or the cap c")
#: The rotary options of Algorithm 4, for every attention sublayer of a stack.
STACK_ROPE = (ROPE_OPTIONS[0].but(doc="rotary position embeddings in every attention sublayer (Llama, Mistral, "
                                      "Qwen, GPT-NeoX, GPT-J …): " + ROPE_OPTIONS[0].doc), *ROPE_OPTIONS[1:])


@dataclass(frozen=True)
class StackOptions:
    """The values of the options every stack shares (:func:`stack_options`), checked by the stack's builder."""

    norm: str
    eps: float
    position: str
    activation: str
    bias: bool
    tied: bool
    n_kv_heads: object
    norm_position: str
    qk_norm: object = None
    score_cap: object = None
    logit_cap: object = None
    rope: tuple = ()        # the rotary options (:data:`STACK_ROPE`) as (name, value) pairs

    @classmethod
    def of(cls, options: dict) -> "StackOptions":
        """The shared options among a stack's ``options`` (the rotary ones those it has)."""
        return cls(**{f.name: options[f.name] for f in fields(cls) if f.name != "rope"},
                   rope=tuple((k, options[k]) for k in ROPE_NAMES if k in options))

    @property
    def rope_options(self) -> dict:
        """The rotary options, by name."""
        return dict(self.rope)

    @property
    def rotation(self):
        """The :class:`~formal.ops.rotary.Rotation` of every attention sublayer, or None."""
        return rotation_of(self.rope_options)

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rope"}
        return {**out, **self.rope_options}


# ------------------------------------------------------------------------------------------------ embedding
def embed(target, tokens, length, opts: StackOptions, start=0):
    """``∀t: X[:, t] ← W_e[:, x[t]] + W_p[:, t]`` as calls of Algorithms 1 and 2: the line, the embedding
    parameters it reads, and the constraint ℓ ≤ ℓ_max that a positional table imposes."""
    expr = call_columns(token_embedding, label=("W_e", "W_e"), v=tokens, W_e="W_e")
    params, constraints = [], []
    if opts.position != "none":
        positional = build_positional_embedding(encoding=opts.position)
        args = {"W_p": "W_p"} if opts.position == "learned" else {}
        expr = add(expr, call_columns(positional, label=("W_p", "W_p"), t=positions(length, start), **args))
        if opts.position == "learned":
            params.append(TensorSpec("W_p", (d_e, ell_max), doc="positional embedding matrix", embedding=True))
        constraints.append(at_most(length + start, ell_max, f"the {opts.position} position table has ℓ_max columns"))
    return Assign(target, expr, forall="t", shown="e"), params, constraints


def length_line(length, tokens):
    """``ℓ ← length(x)``: the paper's line naming a size the signature already binds; ``tokens`` is a name or
    an expression (``data^n``)."""
    from ..engine.render import render_node
    from ..ops import Ref
    node = Ref(tokens) if isinstance(tokens, str) else tokens
    return Step(f"{sym_text(length)} ← length({render_node(node).text})",
                rf"{sym_latex(length)} \gets \mathrm{{length}}({render_node(node, True).text})", shape=())


def embedding_lines(target, tokens, length, opts: StackOptions, start=0):
    """The paper's three embedding lines: ``ℓ ← length(x)``; ``∀t: e_t ← W_e[:, x[t]] + W_p[:, t]``;
    ``X ← [e_1, …, e_ℓ]`` (the columns are written in place, so the last computes nothing): lines, the
    embedding parameters and the constraints of :func:`embed` (positions from ``start``)."""
    from ..engine.render import display
    line, params, constraints = embed(target, tokens, length, opts, start=start)
    n_text, n_latex = sym_text(length), sym_latex(length)
    gather = Step(f"{display(target)} ← [e_1, …, e_{n_text}]",
                  rf"{display(target, True)} \gets [e_1, \dots, e_{{{n_latex}}}]", value=target)
    return [length_line(length, tokens), line, gather], params, constraints


def token_params():
    return [TensorSpec("W_e", (d_e, N_V), doc="token embedding matrix", embedding=True)]


# ------------------------------------------------------------------------------------------------- layers
def norm_params(name, opts, layers=(), width=d_e, doc=""):
    """γ (and β for layer norm) of one norm, stacked on ``layers``: ``gamma1``/``beta1``."""
    suffix = name
    specs = [TensorSpec(f"gamma{suffix}", layers + (width,), doc=f"{doc} scale".strip())]
    if opts.norm == "layer":
        specs.append(TensorSpec(f"beta{suffix}", layers + (width,), doc=f"{doc} offset".strip()))
    return specs


def norm_columns(x, name, opts, layer=None):
    """``∀t: layer_norm(X[:, t] | γ, β)`` with this stack's norm, reading ``gamma<name>`` (layer ``layer``), its
    parameters written as their symbols (``γ^1_l``: :func:`formal.engine.names.symbol`)."""
    from ..engine.names import symbol
    norm = build_layer_norm(norm=opts.norm, eps=opts.eps)
    read = (lambda p: pick(p, layer)) if layer is not None else (lambda p: p)
    names = [f"gamma{name}"] + ([f"beta{name}"] if opts.norm == "layer" else [])
    index = layer.text() if layer is not None else None
    label = tuple(", ".join(symbol(n, latex=latex, index=index) for n in names) for latex in (False, True))
    return call_columns(norm, label=label, e=x, **{arg: read(n) for arg, n in zip(("gamma", "beta"), names)})


def _attention_params(prefix, opts, layers):
    kv = (H,) if opts.n_kv_heads is None else (kv_heads(opts.n_kv_heads),)
    shapes = {"W_q": (H, d_attn, d_e), "W_k": kv + (d_attn, d_e), "W_v": kv + (d_mid, d_e),
              "W_o": (d_e, H * d_mid)}
    biases = {"b_q": (H, d_attn), "b_k": kv + (d_attn,), "b_v": kv + (d_mid,), "b_o": (d_e,)}
    specs = [TensorSpec(f"{prefix}{n}", layers + s, doc=f"{n} of every layer") for n, s in shapes.items()]
    if opts.bias:
        specs += [TensorSpec(f"{prefix}{n}", layers + s, doc=f"{n} of every layer") for n, s in biases.items()]
    specs += [TensorSpec(f"{prefix}{p.name}", layers + p.shape, doc=f"{p.doc}, of every layer")
              for p in qk_params(opts.qk_norm)]
    return specs


def mlp_params(prefix, activation_name, bias, layers=(), doc="of every layer"):
    """The MLP's weights (and, with ``bias``, biases), named ``<prefix>W_mlp1`` …, stacked on ``layers``."""
    shapes = {"W_mlp1": (d_mlp, d_e), "W_mlp2": (d_e, d_mlp)}
    if activation_name == "swiglu":
        shapes["W_gate"] = (d_mlp, d_e)
    specs = [TensorSpec(f"{prefix}{n}", layers + s, doc=f"{n} {doc}".strip()) for n, s in shapes.items()]
    if bias:
        specs += [TensorSpec(f"{prefix}b_mlp1", layers + (d_mlp,), doc=f"b_mlp1 {doc}".strip()),
                  TensorSpec(f"{prefix}b_mlp2", layers + (d_e,), doc=f"b_mlp2 {doc}".strip())]
    return specs


def _mlp_params(prefix, opts, layers):
    return mlp_params(prefix, opts.activation, opts.bias, layers)


def attention_call(prefix, opts, l, x, mask, z=None, glyph=("W_l", "W_l")):
    """``MHAttention(X, Z | W_l, Mask)`` reading the layer-``l`` slices of ``<prefix>W_q`` …"""
    mha = build_mhattention(bias=opts.bias, n_kv_heads=opts.n_kv_heads, qk_norm=opts.qk_norm,
                            **({"qk_eps": opts.eps} if opts.qk_norm else {}),
                            score_cap=opts.score_cap, **opts.rope_options)
    names = (("W_q", "W_k", "W_v", "W_o") + (("b_q", "b_k", "b_v", "b_o") if opts.bias else ())
             + tuple(p.name for p in qk_params(opts.qk_norm)))
    args = {n: pick(f"{prefix}{n}", l) for n in names}
    if z is not None:
        args["Z"] = z
    return call(mha, label=glyph, X=x, mask=mask, **args)


def mlp_expression(x, activation_name, bias, read=lambda name: name):
    """``W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ``, each parameter read by ``read(name)``; SwiGLU gates
    W_mlp1 X by SiLU(W_gate X).  The one definition of the MLP: the stacks' sublayer and the ``mlp``
    algorithm (:mod:`formal.algorithms.feedforward`) both read it."""
    up = affine(read("W_mlp1"), x, read("b_mlp1") if bias else None, bias)
    if activation_name == "swiglu":
        hidden = mul(activation("silu", matmul(read("W_gate"), x)), up)
    else:
        hidden = activation(activation_name, up)
    return affine(read("W_mlp2"), hidden, read("b_mlp2") if bias else None, bias)


def mlp(prefix, opts, l, x):
    """The MLP sublayer of layer ``l``, reading the layer-``l`` slices of ``<prefix>W_mlp1`` …"""
    return mlp_expression(x, opts.activation, opts.bias, lambda name: pick(f"{prefix}{name}", l))


def sublayers(x, opts, l, steps):
    """The lines of one layer: each step is ``(norm name, f)`` where ``f(input)`` is the sublayer's
    expression; pre-LN: ``X̃ ← LN(X); X ← X + f(X̃)``; post-LN: ``X ← X + f(X); X ← LN(X)``."""
    lines = []
    for name, f in steps:
        if opts.norm_position == "pre":
            normed = "X_tilde" if x == "X" else f"{x}_tilde"
            lines += [Assign(normed, norm_columns(x, name, opts, l), forall="t"),
                      Assign(x, add(x, f(normed)))]
        else:
            lines += [Assign(x, add(x, f(x))), Assign(x, norm_columns(x, name, opts, l), forall="t")]
    return lines


def layer_loop(var, count, body):
    return Loop(var, count, tuple(body), sequential=True)


def layer_params(prefix, opts, layers, norms, attention_prefixes):
    """Every per-layer parameter of a stack, stacked on ``layers``."""
    specs = []
    for p in attention_prefixes:
        specs += _attention_params(p, opts, layers)
    specs += _mlp_params(prefix, opts, layers)
    for name in norms:
        specs += norm_params(name, opts, layers)
    return specs


# ---------------------------------------------------------------------------------------------- unembedding
def unembed(x, opts, *, width=d_e, bias=False, target="P"):
    """``P ← softmax(W_u X)`` as Algorithm 7 on every column; tied: ``W_u = W_eᵀ``; the logits soft-capped by the
    stack's ``logit_cap``."""
    algorithm = build_unembedding(bias=bias, cap=opts.logit_cap)
    w = transpose("W_e") if opts.tied else "W_u"
    args = {"W_u": w, **({"b_u": "b_u"} if bias else {})}
    label = ("W_eᵀ" if opts.tied else "W_u") + (", b_u" if bias else "")
    expr = call_columns(algorithm, label=(label, label.replace("ᵀ", r"^{\top}")), e=x, **args)
    params = [] if opts.tied else [TensorSpec("W_u", (N_V, width), doc="unembedding matrix", embedding=True)]
    if bias:
        params.append(TensorSpec("b_u", (N_V,), doc="unembedding bias"))
    return Assign(target, expr, forall="t", returns=True), params

