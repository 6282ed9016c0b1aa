"""Hypothesis strategies for the algorithms and their variants, built constructively.

Each :class:`Case` carries the keyword arguments of one execution and, as an independent oracle, the
sizes it was built from and the parameter shapes *as the paper states them* — written here by hand,
never read from the algorithm objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from hypothesis import strategies as st

import formal
from formal import algorithms

SIZE = st.integers(1, 5)
SEED = st.integers(0, 2**32 - 1)


@dataclass
class Case:
    algorithm: formal.Algorithm
    kwargs: dict
    sizes: dict                                 # symbol name → int (the oracle's binding)
    params: tuple = field(default_factory=tuple)  # names of the parameter arguments

    def __repr__(self):
        return f"Case({self.algorithm!r}, sizes={self.sizes})"


def evaluate(expr, sizes):
    """A derived expression at the oracle's sizes (given by name)."""
    value = expr.xreplace({s: sp.Integer(sizes[s.name]) for s in expr.free_symbols})
    assert not value.free_symbols, f"{expr} has symbols the case does not size"
    return value


def randomise(module, seed):
    """A torch module with every parameter ~ N(0, 0.5²), in float64, in eval mode: libraries initialise biases
    to 0 and norms to 1, which would hide a misplaced bias or γ."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module.double().eval()


def normal(rng, *shape, scale=1.0):
    return rng.normal(scale=scale, size=shape)


def projections(rng, sizes, specs, bias):
    """Parameters from a hand-written table ``name: shape`` (biases dropped unless ``bias``)."""
    return {name: normal(rng, *shape) for name, shape in specs.items() if bias or not name.startswith("b_")}


@st.composite
def token_embedding_cases(draw):
    s = {"N_V": draw(SIZE), "d_e": draw(SIZE)}
    rng = np.random.default_rng(draw(SEED))
    params = {"W_e": normal(rng, s["d_e"], s["N_V"])}
    v = draw(st.integers(0, s["N_V"] - 1))
    return Case(algorithms.token_embedding, {"v": v, **params}, s, tuple(params))


@st.composite
def positional_embedding_cases(draw):
    encoding = draw(st.sampled_from(["learned", "sinusoidal-paper", "sinusoidal-vaswani"]))
    s = {"ell_max": draw(SIZE), "d_e": draw(SIZE) * (1 if encoding == "learned" else 2)}
    rng = np.random.default_rng(draw(SEED))
    t = draw(st.integers(0, s["ell_max"] - 1))
    algorithm = algorithms.positional_embedding.variant(encoding=encoding)
    if encoding == "learned":
        params = {"W_p": normal(rng, s["d_e"], s["ell_max"])}
        return Case(algorithm, {"t": t, **params}, s, tuple(params))
    return Case(algorithm, {"t": t, "d_e": s["d_e"], "ell_max": s["ell_max"]}, s, ())


@st.composite
def single_query_attention_cases(draw):
    bias = draw(st.booleans())
    s = {k: draw(SIZE) for k in ("d_in", "T", "d_attn", "d_out")}
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_in"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_in"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_in"]), "b_v": (s["d_out"],)}, bias)
    inputs = {"e": normal(rng, s["d_in"]), "e_t": normal(rng, s["d_in"], s["T"])}
    algorithm = algorithms.single_query_attention.variant(bias=bias)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def masks(draw, ell_z, ell_x, rng):
    kind = draw(st.sampled_from(["none", "bidirectional", "causal-top-left", "causal-bottom-right", "random"]))
    if kind == "none":
        return {}
    if kind == "random":
        return {"mask": rng.random((ell_z, ell_x)) < 0.6}
    return {"mask": kind}


@st.composite
def attention_cases(draw, *, self_attention=None, same_width=False):
    bias = draw(st.booleans())
    empty = draw(st.sampled_from(["zero", "nan"]))
    s = {k: draw(SIZE) for k in ("d_x", "ell_x", "d_attn", "d_out")}
    same = draw(st.booleans()) if self_attention is None else self_attention
    s["d_z"], s["ell_z"] = (s["d_x"], s["ell_x"]) if same else (draw(SIZE), draw(SIZE))
    if same_width:
        s["d_z"] = s["d_x"]
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_x"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_z"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_z"]), "b_v": (s["d_out"],)}, bias)
    X = normal(rng, s["d_x"], s["ell_x"])
    inputs = {"X": X} if same else {"X": X, "Z": normal(rng, s["d_z"], s["ell_z"])}
    inputs.update(draw(masks(s["ell_z"], s["ell_x"], rng)))
    algorithm = algorithms.attention.variant(bias=bias, empty=empty)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def mhattention_cases(draw, *, grouped=None, self_attention=None):
    bias = draw(st.booleans())
    empty = draw(st.sampled_from(["zero", "nan"]))
    grouped = draw(st.booleans()) if grouped is None else grouped
    s = {k: draw(SIZE) for k in ("d_x", "ell_x", "d_attn", "d_mid", "d_out")}
    s["H"] = draw(st.integers(1, 4))
    same = draw(st.booleans()) if self_attention is None else self_attention
    s["d_z"], s["ell_z"] = (s["d_x"], s["ell_x"]) if same else (draw(SIZE), draw(SIZE))
    option = None
    n_kv = s["H"]
    if grouped:
        n_kv = draw(st.sampled_from([d for d in range(1, s["H"] + 1) if s["H"] % d == 0]))
        option = draw(st.sampled_from(["symbolic", n_kv]))
        if option == "symbolic":
            s["n_kv_heads"] = n_kv
    rng = np.random.default_rng(draw(SEED))
    H = s["H"]
    params = projections(rng, s, {
        "W_q": (H, s["d_attn"], s["d_x"]), "b_q": (H, s["d_attn"]),
        "W_k": (n_kv, s["d_attn"], s["d_z"]), "b_k": (n_kv, s["d_attn"]),
        "W_v": (n_kv, s["d_mid"], s["d_z"]), "b_v": (n_kv, s["d_mid"]),
        "W_o": (s["d_out"], H * s["d_mid"]), "b_o": (s["d_out"],)}, bias)
    X = normal(rng, s["d_x"], s["ell_x"])
    inputs = {"X": X} if same else {"X": X, "Z": normal(rng, s["d_z"], s["ell_z"])}
    inputs.update(draw(masks(s["ell_z"], s["ell_x"], rng)))
    algorithm = algorithms.mhattention.variant(bias=bias, empty=empty, n_kv_heads=option)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def layer_norm_cases(draw):
    norm = draw(st.sampled_from(["layer", "rms"]))
    eps = draw(st.sampled_from([0.0, 1e-5]))
    s = {"d_e": draw(st.integers(2, 6))}  # d_e ≥ 2: a random column is then almost surely not constant
    rng = np.random.default_rng(draw(SEED))
    params = {"gamma": normal(rng, s["d_e"])}
    if norm == "layer":
        params["beta"] = normal(rng, s["d_e"])
    algorithm = algorithms.layer_norm.variant(norm=norm, eps=eps)
    return Case(algorithm, {"e": normal(rng, s["d_e"]), **params}, s, tuple(params))


@st.composite
def unembedding_cases(draw):
    s = {"N_V": draw(SIZE), "d_e": draw(SIZE)}
    rng = np.random.default_rng(draw(SEED))
    params = {"W_u": normal(rng, s["N_V"], s["d_e"])}
    return Case(algorithms.unembedding, {"e": normal(rng, s["d_e"]), **params}, s, tuple(params))


STRATEGIES = {
    "token_embedding": token_embedding_cases(),
    "positional_embedding": positional_embedding_cases(),
    "single_query_attention": single_query_attention_cases(),
    "attention": attention_cases(),
    "mhattention": mhattention_cases(),
    "layer_norm": layer_norm_cases(),
    "unembedding": unembedding_cases(),
}

#: Every algorithm and variant.
any_case = st.one_of(*STRATEGIES.values())
