"""Sequence to sequence with recurrent networks: the encoder–decoder with a fixed context (Cho et al. 2014;
Sutskever et al. 2014), RNNsearch with additive attention (Bahdanau et al. 2015), and global attention
(Luong et al. 2015) — the models attention was invented in, as one algorithm with options.

The interface is Algorithm 8's: source tokens z and target tokens x in, ``P ∈ (0, 1)^{N_V×ℓ_x}`` out, column
t the distribution of token t + 1 given z and x[1…t] (teacher forcing), so the training and inference
algorithms' conventions carry over.  The encoder is a recurrent layer (:mod:`.recurrent`) over the source
embeddings; the decoder is its cell, stepped once per target token with its state carried — a sequential
loop, so the depth is Θ(ℓ_z + ℓ_x) (the notes' "T_x + T_y sequential steps").

- ``attention="none"``: the context c is the encoder's final state, the same at every step (Cho et al.'s
  c fed to every step; the notes' "c doesn't change during decoding" — the bottleneck);
  ``s_t = Cell([E x_t; c], s_{t−1})``, ``p_t = softmax(W_u [s_t; c] + b_u)``.
- ``attention="bahdanau"``: ``e_t = a(s_{t−1}, H)``, ``α_t = softmax(e_t)``, ``c_t = H α_t``,
  ``s_t = Cell([E x_t; c_t], s_{t−1})``, ``p_t = softmax(W_u [s_t; c_t] + b_u)``.  The keys ``U_a H`` are
  computed once, before the loop ("U_a h_j does not depend on i, we can pre-compute it", §A.1.2).
- ``attention="luong"``: the current state is the query: ``s_t = Cell(E x_t, s_{t−1})``, ``α_t =
  softmax(score(s_t, H))``, ``c_t = H α_t``, ``h̃_t = tanh(W_c [c_t; s_t])``, ``p_t = softmax(W_u h̃_t + b_u)``.

``score``: ``"additive"`` — ``v_aᵀ tanh(W_a s + U_a h)`` (Bahdanau's alignment model, Luong's "concat");
``"dot"`` — ``hᵀ s`` (the encoder's states as wide as the decoder's: a forward encoder); ``"general"`` —
``hᵀ W_a s``.  No score is scaled by √d.  The decoder starts from ``s_0 = tanh(W_init h_n + b_init)``, h_n
the encoder's final state ([h⃗_ℓ; h⃖_1] both ways; Bahdanau et al. use h⃖_1 alone: ``init="backward"``).

``align_bias``: the additive score with a bias inside its tanh, ``v_aᵀ tanh(W_a s + U_a h + b_a)`` — what
PyTorch code's ``v(tanh(attn(cat[s, h])))`` computes with ``nn.Linear``'s bias; b_a joins the query's side.
``output`` (attention none and bahdanau): what the output layer reads, ``[s_t; c_t]`` (the default),
``[s_t; c_t; E x_t]`` (the widely copied PyTorch tutorial's ``fc_out(cat(output, weighted, embedded))``) or
``[E x_t; s_t; c_t]`` (its fixed-context model's, Cho et al.'s readout of y_{t−1}, s_t and c), E x_t the
embedding of the token fed at step t, i.e. y_{t−1}.

Simplified against the papers, and said so: Bahdanau's deep output with maxout and Cho's output are a single
softmax layer (over ``[s_t; c_t]``, or with y_{t−1}'s embedding by ``output``); Luong's input feeding and local
attention are not modelled; one vocabulary size N_V for both languages (separate embeddings ``W_src`` and
``W_e``).

References
----------
- K. Cho et al., "Learning phrase representations using RNN encoder–decoder for statistical machine
  translation", EMNLP 2014.
- I. Sutskever, O. Vinyals, Q. V. Le, "Sequence to sequence learning with neural networks", NeurIPS 2014.
- D. Bahdanau, K. Cho, Y. Bengio, "Neural machine translation by jointly learning to align and
  translate", ICLR 2015, §3.1 and Appendix A.
- M.-T. Luong, H. Pham, C. D. Manning, "Effective approaches to attention-based neural machine
  translation", EMNLP 2015, §3 and eqs. (5), (8).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, d_a, d_e, d_h, d_x, ell_x, ell_z
from ..engine.algorithm import Algorithm, Assign, Loop, call, call_columns
from ..engine.declarations import Option, Options, Requires
from ..engine.domains import BOOL, Choice
from ..ops import (
    LoopIndex,
    activation,
    add,
    column,
    final,
    matmul,
    matmul_t,
    sequence,
    softmax,
    stack_vertical,
    weighted_sum,
    zeros,
)
from ..ops.scores import additive_score
from .embedding import token_embedding
from .recurrent import CELL, CELL_BIAS, RESET, UPDATE, build_cell, build_rnn_layer
from .unembedding import build_unembedding

__all__ = ["ALGORITHMS", "ATTENTIONS", "SCORES", "ENCODERS", "INITS", "OUTPUTS", "SEQ2SEQ_OPTIONS", "build_seq2seq",
           "seq2seq"]

ATTENTIONS = ("none", "bahdanau", "luong")
SCORES = ("additive", "dot", "general")
ENCODERS = ("bidirectional", "forward")
INITS = ("final", "backward")
#: What the output layer W_u reads (the attention none and bahdanau; Luong's reads h̃): the spec's [s; c], or
#: with the embedding E x_t of the token fed at step t (y_{t−1}, Bahdanau's and Cho's readout) after or before.
OUTPUTS = ("state_context", "state_context_embedding", "embedding_state_context")

_SOURCES = {"none": "Cho et al. 2014; Sutskever et al. 2014", "bahdanau": "Bahdanau et al. 2015",
            "luong": "Luong et al. 2015"}

#: The model's options; the cells' own (bias, reset, update) are the recurrent cells' declarations.
SEQ2SEQ_OPTIONS = Options(
    Option("attention", "bahdanau", Choice(*ATTENTIONS),
           "none (a fixed context, Cho et al.), bahdanau (RNNsearch: the previous state queries) or luong "
           "(global attention: the current state queries, h̃ = tanh(W_c [c; s]))"),
    Option("score", "additive", Choice(*SCORES),
           "additive (v_aᵀ tanh(W_a s + U_a h), Luong's concat), dot (hᵀ s) or general (hᵀ W_a s)"
           ).when("attention", "bahdanau", "luong"),
    CELL.but(default="gru", domain=Choice("gru", "lstm"), doc="the encoder's and decoder's cell: gru or lstm"),
    Option("encoder", "bidirectional", Choice(*ENCODERS),
           "bidirectional (annotations [h⃗; h⃖], 2d_h rows) or forward"),
    Option("init", "final", Choice(*INITS),
           "the decoder's start s_0 = tanh(W_init h + b_init) from h = the encoder's final state(s) (final) or "
           "h⃖_1 alone (backward, Bahdanau et al.)"),
    CELL_BIAS.but(doc="the cells' bias convention: single, double or none (none also drops b_init and b_u)"),
    RESET.when("cell", "gru"), UPDATE.when("cell", "gru"),
    Option("align_bias", False, BOOL,
           "whether the additive score has a bias b_a (d_a) inside its tanh, v_aᵀ tanh(W_a s + U_a h + b_a): what "
           "v(tanh(attn(cat[s, h]))) computes with nn.Linear's bias; b_a joins the query's side W_a s + b_a"
           ).when("score", "additive"),
    Option("output", "state_context", Choice(*OUTPUTS),
           "what the output layer reads: state_context (W_u [s_t; c_t]), state_context_embedding (W_u [s_t; c_t; "
           "E x_t], fc_out(cat(output, weighted, embedded))) or embedding_state_context (W_u [E x_t; s_t; c_t], "
           "Cho et al.'s readout of y_(t−1), s_t and c); E x_t embeds the token fed at step t, y_(t−1)"
           ).when("attention", "none", "bahdanau"),
    rules=(Requires("score", ("dot",), "encoder", ("forward",),
                    "the dot score needs the encoder's states as wide as the decoder's; a bidirectional encoder's "
                    "are 2·d_h"),
           Requires("init", ("backward",), "encoder", ("bidirectional",),
                    "it reads h⃖_1, the first state of a bidirectional encoder's backward direction", move="option"),
           Requires("align_bias", (True,), "attention", ("bahdanau", "luong"),
                    "without attention there is no score to bias", move="option")))


def _renamed(specs, prefix, width=None, doc=""):
    """``specs`` named ``prefix + name``, their input width d_x replaced by ``width``."""
    out = []
    for p in specs:
        shape = tuple(width if (width is not None and d == d_x) else d for d in p.shape)
        out.append(TensorSpec(f"{prefix}{p.name}", shape, doc=f"{doc}{p.doc}"))
    return out


def _score(score, query, keys, align_bias=False):
    """The scores of every source position for one query state (``align_bias``: b_a joins ``W_a s``)."""
    if score == "additive":
        side = matmul("W_a", query)
        return additive_score(add(side, "b_a") if align_bias else side, keys, "v_a", single=True)
    if score == "dot":
        return matmul_t("H", query)
    return matmul_t("H", matmul("W_a", query))


def _attend(score, query, note, align_bias=False):
    return [Assign("e", _score(score, query, "K" if score == "additive" else "H", align_bias), note=note),
            Assign("alpha", softmax("e")),
            Assign("c", weighted_sum("H", "alpha"), note="Context")]


def _params(layer, step, *, attention, score, bias, align_bias, rows, dec_in, out_width, start_width) -> list:
    """The model's parameters: the embeddings, the encoder layer's (``enc_``), the decoder's start, the
    score's, the decoder cell's (``dec_``, reading ``dec_in`` rows), Luong's W_c and the output layer;
    ``rows`` is D, the annotations' width."""
    D = rows
    params = [TensorSpec("W_src", (d_e, N_V), doc="source token embeddings", embedding=True),
              TensorSpec("W_e", (d_e, N_V), doc="target token embeddings", embedding=True),
              *_renamed(layer.params, "enc_", width=d_e, doc="encoder: "),
              TensorSpec("W_init", (d_h, start_width), doc="decoder start from the encoder's final state")]
    if bias != "none":
        params.append(TensorSpec("b_init", (d_h,), doc="decoder start bias"))
    if attention != "none" and score == "additive":
        params += [TensorSpec("W_a", (d_a, d_h), doc="alignment: the decoder state's side"),
                   TensorSpec("U_a", (d_a, D), doc="alignment: the annotations' side"),
                   TensorSpec("v_a", (d_a,), doc="alignment: the output vector")]
        if align_bias:
            params.append(TensorSpec("b_a", (d_a,), doc="alignment: the bias inside the tanh"))
    elif attention != "none" and score == "general":
        params.append(TensorSpec("W_a", (D, d_h), doc="the general score's matrix"))
    params += _renamed(step.params, "dec_", width=dec_in, doc="decoder: ")
    if attention == "luong":
        params.append(TensorSpec("W_c", (d_h, D + d_h), doc="attentional state from [c; s]"))
    params.append(TensorSpec("W_u", (N_V, out_width), doc="output layer", embedding=True))
    if bias != "none":
        params.append(TensorSpec("b_u", (N_V,), doc="output bias"))
    return params


def _encode(layer, *, attention, score, encoder, init, bias, lstm) -> list:
    """The lines before the decoder's loop: both embeddings, the annotations H, the decoder's start (and its
    memory cell), and what attention computes once (the fixed context, or the keys U_a·H)."""
    lines = [
        Assign("Z", call_columns(token_embedding, label=("W_src", r"W_{\mathrm{src}}"), v="z", W_e="W_src"),
               forall="t", note="Source embeddings"),
        Assign("X", call_columns(token_embedding, label=("W_e", "W_e"), v="x", W_e="W_e"), forall="t",
               note="Target embeddings"),
        Assign("H", call(layer, label=("θ_enc", r"\theta_{\mathrm{enc}}"), X="Z",
                         **{p.name: f"enc_{p.name}" for p in layer.params}), note="Annotations"),
    ]
    start = matmul("W_init", final("H", d_h, encoder, init))
    lines.append(Assign("s", activation("tanh", add(start, "b_init") if bias != "none" else start),
                        note="Decoder start"))
    if lstm:
        lines.append(Assign("m", zeros(d_h), note="Start memory cell"))
    if attention == "none":
        lines.append(Assign("c", final("H", d_h, encoder, "final"), note="Fixed context"))
    elif score == "additive":
        lines.append(Assign("K", matmul("U_a", "H"), note="Keys, computed once"))
    return lines


def _readout(output, x_t):
    """What the output layer reads under Bahdanau (and no attention): ``[s; c]``, ``[s; c; E x_t]`` or
    ``[E x_t; s; c]``."""
    if output == "state_context":
        return stack_vertical("s", "c")
    if output == "state_context_embedding":
        return stack_vertical("s", "c", x_t)
    return stack_vertical(x_t, "s", "c")


def _decode(step, *, attention, score, bias, lstm, align_bias, output) -> list:
    """One step of the decoder's loop over t: Luong attends after the recurrent step and reads the attentional
    state; Bahdanau (and no attention) feeds the context into the step and reads [s; c] (``output``: and the
    token's embedding)."""
    state = {"h": "s", **({"c": "m"} if lstm else {})}
    targets = ("s", "m") if lstm else "s"
    dec_params = {p.name: f"dec_{p.name}" for p in step.params}
    unembedding = build_unembedding(bias=bias != "none")
    out_args = {"W_u": "W_u", **({"b_u": "b_u"} if bias != "none" else {})}

    def decoder_step(x_in):
        return Assign(targets, call(step, label=("θ_dec", r"\theta_{\mathrm{dec}}"), x=x_in, **state, **dec_params))

    x_t = column("X", LoopIndex("t"), ell_x)
    if attention == "luong":
        return [decoder_step(x_t), *_attend(score, "s", "Scores", align_bias),
                Assign("h_tilde", activation("tanh", matmul("W_c", stack_vertical("c", "s"))),
                       note="Attentional state"),
                Assign("p", call(unembedding, label=("W_u", "W_u"), e="h_tilde", **out_args))]
    attend = [] if attention == "none" else _attend(score, "s", "Scores", align_bias)
    return [*attend, decoder_step(stack_vertical(x_t, "c")),
            Assign("p", call(unembedding, label=("W_u", "W_u"), e=_readout(output, x_t), **out_args))]


@SEQ2SEQ_OPTIONS.builds
def build_seq2seq(*, attention, score, cell, encoder, init, bias, reset, update, align_bias, output) -> Algorithm:
    """A recurrent encoder–decoder: source tokens z, target tokens x ↦ P (N_V×ℓ_x); see the module docstring."""
    extra = {"reset": reset, "update": update} if cell == "gru" else {}
    layer = build_rnn_layer(cell=cell, direction=encoder, bias=bias, **extra)
    step = build_cell(cell, bias=bias, **extra)
    lstm = cell == "lstm"
    D = 2 * d_h if encoder == "bidirectional" else d_h               # rows of H, width of a context
    dec_in = d_e if attention == "luong" else d_e + D
    out_width = d_h if attention == "luong" else d_h + D + (0 if output == "state_context" else d_e)
    start_width = d_h if init == "backward" else D

    lines = _encode(layer, attention=attention, score=score, encoder=encoder, init=init, bias=bias, lstm=lstm)
    body = _decode(step, attention=attention, score=score, bias=bias, lstm=lstm, align_bias=align_bias,
                   output=output)
    lines += [Loop("t", ell_x, tuple(body), stack=(("p", "P_steps"),), sequential=True),
              Assign("P", sequence("P_steps", ell_x, "p", "p"), returns=True)]

    params = _params(layer, step, attention=attention, score=score, bias=bias, align_bias=align_bias, rows=D,
                     dec_in=dec_in, out_width=out_width, start_width=start_width)
    return Algorithm(
        number=None, source=_SOURCES[attention], name="seq2seq", display="Seq2Seq",
        summary={"none": "A recurrent encoder–decoder with a fixed context vector.",
                 "bahdanau": "RNNsearch: a recurrent encoder–decoder with additive attention.",
                 "luong": "A recurrent encoder–decoder with Luong's global attention."}[attention],
        inputs=[TensorSpec("z", (ell_z,), "index", "source tokens", bound=N_V, role="context"),
                TensorSpec("x", (ell_x,), "index", "target tokens (teacher forcing)", bound=N_V, role="tokens")],
        params=params, output=TensorSpec("P", (N_V, ell_x), doc="P[:, t]: the distribution of token t + 1"),
        lines=lines, params_label="θ", model=True,
        causal="forward",
    )


seq2seq = build_seq2seq()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (seq2seq,)
