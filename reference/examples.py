"""Seeded random examples of every algorithm and variant, for ``verify`` and ``conform``.

An example is one call of the spec: options drawn from the variant's choices (the formal modules' own
tuples: ``NORMS``, ``POSITIONS`` …), small sizes drawn constructively so that every constraint holds
(``d_e`` even, ``n_kv_heads | H``, ``ℓ ≤ ℓ_max``), parameters shaped as the algorithm's specs say,
evaluated at those sizes.  The same ``(name, seed)`` always gives the same example; examples compare by
their total size, so a failure can be reported at the smallest configuration that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from formal import algorithms
from formal.algorithms.blocks import MLP_ACTIVATIONS, NORM_POSITIONS, POSITIONS
from formal.algorithms.embedding import ENCODINGS
from formal.algorithms.inference import DECODINGS
from formal.algorithms.kv_cache import STEPS
from formal.algorithms.normalization import NORMS
from formal.errors import ConfigError

__all__ = ["Example", "example", "examples", "evaluate", "EXAMPLE_ALGORITHMS"]

_STACK = {"norm": NORMS, "eps": (1e-5, 0.1), "position": POSITIONS, "activation": MLP_ACTIVATIONS,
          "bias": (True, False), "tied": (True, False), "n_kv_heads": (None, "grouped"),
          "norm_position": NORM_POSITIONS}
_BERT = {**_STACK, "token_types": (True, False), "embedding_norm": (True, False),
         "unembedding_bias": (True, False), "inputs": ("tokens", "tokens", "patches")}
_EMPTY = ("zero", "nan")  # "error" raises by design; it is not an output to compare

#: Algorithm name → option → the choices an example draws from.
VARIANTS = {
    "token_embedding": {},
    "positional_embedding": {"encoding": ENCODINGS},
    "single_query_attention": {"bias": (True, False)},
    "attention": {"bias": (True, False), "empty": _EMPTY},
    "mhattention": {"bias": (True, False), "empty": _EMPTY, "n_kv_heads": (None, "grouped")},
    "kv_mhattention": {"bias": (True, False), "n_kv_heads": (None, "grouped"), "step": STEPS},
    "layer_norm": {"norm": NORMS, "eps": (0.0, 1e-5)},
    "unembedding": {"bias": (True, False)},
    "dtransformer": _STACK,
    "etransformer": _BERT,
    "edtransformer": _STACK,
    "kv_dtransformer": {**_STACK, "step": STEPS},
    "dloss": _STACK,
    "eloss": {**_BERT, "inputs": ("tokens",)},
    "edloss": _STACK,
    "dinference": {**_STACK, "decoding": DECODINGS, "tau": (0.5, 1.0, 2.0), "kv_cache": (True, False)},
    "edinference": {**_STACK, "decoding": DECODINGS, "tau": (0.5, 1.0, 2.0)},
}

#: The algorithms examples exist for (training algorithms are checked through their losses).
EXAMPLE_ALGORITHMS = tuple(VARIANTS)

_RUN_SIZES = ("ell_out", "n_steps")  # bound by the run itself (eos may come early)


@dataclass
class Example:
    """One call of the spec: ``algorithm(**arguments)``."""

    algorithm: object
    arguments: dict
    sizes: dict                          # symbol name → int
    seed: int
    params: tuple = field(default=())    # the names of the parameter arguments

    @property
    def size(self) -> int:
        """The total of the sizes: what "smallest configuration" means."""
        return sum(self.sizes.values())

    def evaluate(self, expr) -> int:
        """A derived expression (parameter count, FLOPs) at this example's sizes."""
        return evaluate(expr, self.sizes)

    def shape(self, name: str) -> tuple:
        """The spec's shape of argument ``name`` at this example's sizes."""
        return _evaluate(self.algorithm.spec(name).shape, self.sizes)

    def describe(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.algorithm.options.items())
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(self.sizes.items()))
        return f"{self.algorithm.name}({options}) at {sizes}"


def _options(name, rng, fixed):
    options = {}
    for option, choices in VARIANTS[name].items():
        options[option] = fixed[option] if option in fixed else choices[rng.integers(len(choices))]
    options.update({k: v for k, v in fixed.items() if k not in options})
    if options.get("inputs") == "patches":
        options.update(head="classifier", tied=False, token_types=False, unembedding_bias=False, position="learned")
    return options


def _sizes(name, options, rng, small):
    """Sizes for every symbol, drawn so that the constraints hold by construction."""
    def draw(lo=1, hi=small):
        return int(rng.integers(lo, hi + 1))
    s = {k: draw() for k in ("d_x", "d_z", "d_in", "d_out", "d_attn", "d_mid", "d_mlp", "d_f", "T",
                              "d_patch", "ell_c", "L", "L_enc", "L_dec")}
    s["d_e"] = 2 * draw(1, max(1, small // 2 + 1))
    groups = draw(1, 2)
    kv = options.get("n_kv_heads")
    s["n_kv_heads"] = draw(1, 2) if kv == "grouped" else kv if isinstance(kv, int) else None
    s["H"] = groups * (s["n_kv_heads"] or draw(1, 2))
    s["N_V"] = draw(4, 4 + small)
    s["n_types"], s["n_classes"] = draw(1, 3), draw(2, 4)
    loss = name in ("dloss", "edloss")
    for k in ("ell", "ell_x", "ell_z"):
        s[k] = draw(2 if loss else 1, small + 1)
    s["ell_gen"] = draw(1, 3)
    longest = max(s["ell"], s["ell_x"], s["ell_z"], s["ell_gen"], s["ell_c"] + s["ell_x"])
    if name == "dinference":
        longest = s["ell"] + (s["ell_gen"] if options.get("kv_cache") else draw(0, s["ell_gen"]))
    s["ell_max"] = longest + draw(0, 1)
    return s


def evaluate(expr, sizes: dict) -> int:
    """A derived size, count or cost (a sympy expression) at sizes given by symbol name."""
    expr = sp.sympify(expr)
    return int(expr.xreplace({s: sizes[str(s)] for s in expr.free_symbols}))


def _evaluate(shape, sizes) -> tuple:
    return tuple(evaluate(d, sizes) for d in shape)


def _mask(rng, ell_z, ell_x):
    kind = rng.integers(5)
    if kind == 0:
        return None
    if kind == 1 and ell_z == ell_x:
        return "causal"
    if kind == 2:
        return "causal-bottom-right"
    if kind == 3:
        return "causal-top-left"
    mask = rng.random((ell_z, ell_x)) < 0.6
    if rng.random() < 0.5:  # a query with no admitted key (SPEC.md decision 7), on purpose and often
        mask[:, rng.integers(ell_x)] = False
    return mask


def example(name: str, seed: int, *, small: int = 4, **fixed_options) -> Example:
    """The example ``(name, seed)``; ``small`` bounds the sizes, ``fixed_options`` pins options (any option
    of the algorithm; the others are drawn from :data:`VARIANTS`)."""
    if name not in VARIANTS:
        raise ConfigError(f"no examples for {name!r}; known: {', '.join(VARIANTS)}")
    known = {**algorithms.get(name).options, **VARIANTS[name]}
    unknown = sorted(set(fixed_options) - set(known))
    if unknown:
        raise ConfigError(f"{name} has no option {unknown[0]!r}; its options: {', '.join(known)}")
    rng = np.random.default_rng([seed, small])
    options = _options(name, rng, fixed_options)
    sizes = _sizes(name, options, rng, small)
    if options.get("n_kv_heads") == "grouped":
        options["n_kv_heads"] = sizes["n_kv_heads"]
    algorithm = algorithms.get(name, **options)
    symbols = {str(s) for s in algorithm.symbols} - set(_RUN_SIZES)
    used = {k: v for k, v in sizes.items() if k in symbols}
    if options.get("inputs") == "patches":
        used.pop("ell_max", None)
    arguments, determined = {}, set()
    self_attention = "Z" in {spec.name for spec in algorithm.signature} and rng.random() < 0.5
    if self_attention:  # Z defaults to X, whose sizes bind d_z and ell_z
        used["d_z"], used["ell_z"] = used["d_x"], used["ell_x"]
    for spec in algorithm.signature:
        if spec.name == "Z" and self_attention:
            continue
        shape = _evaluate(spec.shape, used)
        determined |= {str(f) for d in spec.shape if isinstance(d, sp.Basic) for f in d.free_symbols}
        if spec.kind == "mask":
            arguments[spec.name] = _mask(rng, *shape)
        elif spec.kind == "index":
            bound = _evaluate((spec.bound,), used)[0]
            arguments[spec.name] = rng.integers(0, bound, size=shape)
        else:
            arguments[spec.name] = rng.normal(scale=0.5, size=shape)
    for k in sorted(symbols - determined):
        if k in used:
            arguments[k] = used[k]
    if algorithm.random:
        arguments["seed"] = int(rng.integers(2**32))
    params = tuple(p.name for p in algorithm.params)
    return Example(algorithm, arguments, used, seed, params)


def examples(name: str, n: int, *, seed: int = 0, **fixed_options) -> list:
    """``n`` examples of ``name`` from ``seed``, smallest first; sizes grow along the list."""
    out = [example(name, seed + i, small=2 + (4 * i) // max(n, 1), **fixed_options) for i in range(n)]
    return sorted(out, key=lambda e: e.size)
