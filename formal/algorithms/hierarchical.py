"""Hierarchical attention networks (Yang et al. 2016): a document as sentences of words; each sentence
encoded by a bidirectional recurrent layer and pooled by attention with a learned context vector, then the
sentence vectors encoded and pooled the same way, then classified — the notes' "encode and pool each
sentence separately, then repeat over the sentence vectors".

The document is a token matrix x ∈ [N_V]^{ℓ×n_s}: column j is sentence j, ℓ words long (sentences padded
to one length are the caller's business).  The sentences are encoded independently — a parallel loop — so
the depth is the word level's once plus the sentence level's: Θ(ℓ + n_s), not Θ(ℓ·n_s).

Yang et al. eqs. (1)–(11): ``h_it = [h⃗_it; h⃖_it]`` (a bi-GRU over the words), ``u_it = tanh(W_w h_it +
b_w)``, ``α_it = softmax_t(u_itᵀ u_w)``, ``s_i = Σ_t α_it h_it``; the same with ``W_s, b_s, u_s`` over the
bi-GRU states of the s_i gives v; ``p = softmax(W_c v + b_c)``.  Their GRU takes the update with z and
1 − z the other way round and resets after the recurrent product (``update="bahdanau", reset="after"``).

References
----------
- Z. Yang et al., "Hierarchical attention networks for document classification", NAACL 2016, §2.
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, d_a, d_e, d_h, d_x, ell, n_classes, n_sent
from ..engine.algorithm import Algorithm, Assign, Loop, call, call_columns
from ..engine.declarations import Options
from ..engine.domains import Choice
from ..ops import LoopIndex, column, sequence
from .embedding import token_embedding
from .pooling import build_attention_pooling
from .recurrent import CELL, CELL_BIAS, RESET, UPDATE, build_rnn_layer
from .unembedding import build_unembedding

__all__ = ["ALGORITHMS", "build_han", "han", "HAN_OPTIONS"]

#: The encoders' options, the recurrent cells' declarations with Yang et al.'s GRU as the defaults.
HAN_OPTIONS = Options(
    CELL.but(default="gru", domain=Choice("gru", "lstm"), doc="the encoders' cell: gru (Yang et al.) or lstm"),
    CELL_BIAS.but(doc="the cells' bias convention: single, double or none"),
    RESET.but(default="after").when("cell", "gru"), UPDATE.but(default="bahdanau").when("cell", "gru"))


def _renamed(specs, prefix, width):
    return [TensorSpec(f"{prefix}{p.name}", tuple(width if d == d_x else d for d in p.shape), doc=p.doc)
            for p in specs]


@HAN_OPTIONS.builds
def build_han(*, cell, bias, reset, update) -> Algorithm:
    """A hierarchical attention network: a document's token matrix x (ℓ×n_s) ↦ class probabilities p."""
    extra = {"reset": reset, "update": update} if cell == "gru" else {}
    layer = build_rnn_layer(cell=cell, direction="bidirectional", bias=bias, **extra)
    pool = build_attention_pooling(score="mlp")
    j = LoopIndex("j")
    words = [
        Assign("E", call_columns(token_embedding, label=("W_e", "W_e"), v=column("x", j, n_sent), W_e="W_e"),
               forall="t", note="Sentence j's words"),
        Assign("H", call(layer, label=("θ_w", r"\theta_{w}"), X="E", **{p.name: f"w_{p.name}" for p in layer.params}),
               note="Word encoder"),
        Assign("s", call(pool, label=("W_w, b_w, u_w", r"W_w, b_w, u_w"), Z="H", W="W_w", b="b_w", u_w="u_w"),
               note="Word attention"),
    ]
    lines = [
        Loop("j", n_sent, tuple(words), stack=(("s", "s_steps"),)),
        Assign("S", sequence("s_steps", n_sent, "s", "s"), note="Sentence vectors"),
        Assign("H_s", call(layer, label=("θ_s", r"\theta_{s}"), X="S", **{p.name: f"s_{p.name}" for p in layer.params}),
               note="Sentence encoder"),
        Assign("v", call(pool, label=("W_s, b_s, u_s", r"W_s, b_s, u_s"), Z="H_s", W="W_s", b="b_s", u_w="u_s"),
               note="Sentence attention"),
        Assign("p", call(build_unembedding(bias=True), label=("W_c, b_c", "W_c, b_c"), e="v", W_u="W_c", b_u="b_c"),
               returns=True),
    ]
    width = 2 * d_h
    params = [TensorSpec("W_e", (d_e, N_V), doc="word embeddings", embedding=True),
              *_renamed(layer.params, "w_", d_e),
              TensorSpec("W_w", (d_a, width), doc="word attention: hidden layer"),
              TensorSpec("b_w", (d_a,), doc="word attention: hidden bias"),
              TensorSpec("u_w", (d_a,), doc="word attention: the word context vector"),
              *_renamed(layer.params, "s_", width),
              TensorSpec("W_s", (d_a, width), doc="sentence attention: hidden layer"),
              TensorSpec("b_s", (d_a,), doc="sentence attention: hidden bias"),
              TensorSpec("u_s", (d_a,), doc="sentence attention: the sentence context vector"),
              TensorSpec("W_c", (n_classes, width), doc="classifier"),
              TensorSpec("b_c", (n_classes,), doc="classifier bias")]
    return Algorithm(
        number=None, source="Yang et al. 2016", name="han", display="HAN",
        summary="A hierarchical attention network: words pooled into sentences, sentences into a document.",
        inputs=[TensorSpec("x", (ell, n_sent), "index", "the document: column j holds sentence j's words", bound=N_V)],
        params=params, output=TensorSpec("p", (n_classes,), doc="the class probabilities"),
        lines=lines, params_label="θ", model=True,
    )


han = build_han()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (han,)
