"""Algorithms 1 and 2: token and positional embeddings (Phuong & Hutter, §5)."""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, d_e, ell_max
from ..engine.algorithm import Algorithm, Assign, even
from ..engine.declarations import Option, Options
from ..engine.domains import Choice
from ..ops import gather, sinusoid

__all__ = ["ALGORITHMS", "token_embedding", "positional_embedding", "build_token_embedding",
           "build_positional_embedding", "ENCODINGS", "ENCODING"]

#: The positional encodings of Algorithm 2 (:ref:`decision-sinusoids`: neither sinusoid replaces the other).
ENCODINGS = ("learned", "sinusoidal-paper", "sinusoidal-vaswani")

#: Algorithm 2's table.
ENCODING = Option("encoding", "learned", Choice(*ENCODINGS),
                  "the position table: learned (W_p, the paper's), sinusoidal-paper (the paper's fixed table: base "
                  "ℓ_max, positions from 1) or sinusoidal-vaswani (Vaswani et al.'s: base 10000, from 0)")


@Options().builds
def build_token_embedding() -> Algorithm:
    """Algorithm 1: a token id ``v`` ↦ its embedding, column ``v`` of W_e (ids 0-based in Python)."""
    return Algorithm(
        number=1, name="token_embedding", display="TokenEmbedding",
        summary="Algorithm 1: the embedding of a token is its column of the token embedding matrix.",
        inputs=[TensorSpec("v", (), "index", "token id", bound=N_V)],
        params=[TensorSpec("W_e", (d_e, N_V), doc="token embedding matrix")],
        output=TensorSpec("e", (d_e,), doc="vector representation of the token"),
        lines=[Assign("e", gather("W_e", "v", what="token id v", onehot=True), returns=True)],
        params_label="W_e",
    )


@Options(ENCODING).builds
def build_positional_embedding(*, encoding) -> Algorithm:
    """Algorithm 2: a position ``t`` ↦ column ``t`` of W_p, learned or one of two fixed sinusoidal tables.

    With a sinusoidal encoding there is no parameter, so ``d_e`` and ``ell_max`` are given as sizes:
    ``positional_embedding.variant(encoding="sinusoidal-paper")(t=3, d_e=8, ell_max=16)``.
    """
    learned = encoding == "learned"
    line = gather("W_p", "t", what="position t") if learned else sinusoid("t", encoding, d_e, ell_max)
    return Algorithm(
        number=2, name="positional_embedding", display="PositionalEmbedding",
        summary="Algorithm 2: the embedding of position t is column t of the positional embedding matrix"
                + ("." if learned else f", here a fixed {encoding} table."),
        inputs=[TensorSpec("t", (), "index", "position in the sequence", bound=ell_max)],
        params=[TensorSpec("W_p", (d_e, ell_max), doc="positional embedding matrix")] if learned else [],
        output=TensorSpec("e_p", (d_e,), doc="vector representation of the position"),
        lines=[Assign("e_p", line, returns=True)],
        params_label="W_p" if learned else "",
        constraints=[] if learned else [even(d_e, f"a {encoding} encoding pairs sin and cos rows")],
    )


token_embedding = build_token_embedding()
positional_embedding = build_positional_embedding()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (token_embedding, positional_embedding)
