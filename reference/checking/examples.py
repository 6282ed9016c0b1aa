"""Seeded random examples of every algorithm and variant, for ``verify`` and ``conform``.

An example is one call of the spec: an algorithm object (options fixed, or drawn from the variant's choices —
the formal modules' own tuples ``NORMS``, ``POSITIONS`` …), sizes for every symbol it uses, and arguments
shaped as its specs say at those sizes.  Sizes are drawn, then mended until every constraint the algorithm
states holds — its own and those of the algorithms it calls (``Algorithm.size_constraints``: ``d_e`` even
under sinusoidal positions, ``n_kv_heads | H``, ``ℓ ≤ ℓ_max``, ``2 ≤ d_e`` under layer norm with eps = 0) —
so a new constraint is honoured without this module knowing it.

A list of examples (:func:`examples`) has two parts:

- **boundary cases**, always: every sequence of length 1; the context full (``ℓ = ℓ_max``, the longest
  sequence reaching the table's end); ``ℓ_z ≠ ℓ_x`` both ways; a query that admits no key (where a mask is
  an input); one head and one layer; several heads and layers; and a length just past every power of two up to ``max_size`` (3, 5, 9, 17, …: a bug that only
  shows past a chunk of 8 keys shows at 9);
- **random examples** whose size bound grows geometrically from 2 to ``max_size`` along the list.

The same arguments always give the same examples; they compare by total size, smallest first, so a failure
is reported at the smallest configuration that shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from formal import algorithms
from formal.engine.algorithm import Algorithm
from formal.algorithms.blocks import MLP_ACTIVATIONS, NORM_POSITIONS, POSITIONS
from formal.algorithms.embedding import ENCODINGS
from formal.algorithms.inference import DECODINGS
from formal.algorithms.kv_cache import STEPS
from formal.algorithms.normalization import NORMS
from formal.algorithms.recurrent import BIASES, CELLS, DIRECTIONS, NONLINEARITIES, RESETS, UPDATES
from formal.algorithms.seq2seq import ATTENTIONS, ENCODERS, INITS, SCORES
from formal.algorithms.convolution import CONV_ACTIVATIONS, NORMS as GRAPH_NORMS
from formal.algorithms.attention import SCORES as ATTENTION_SCORES
from formal.algorithms.captioning import INPUTS as CAPTION_INPUTS
from formal.algorithms.pooling import POOLING_SCORES
from formal.ops.images import PATCH_ORDERS
from formal.ops.scores import SCORE_ACTIVATIONS
from formal.errors import ConfigError

__all__ = ["Example", "example", "examples", "boundary_cases", "evaluate", "resolve", "EXAMPLE_ALGORITHMS",
           "VARIANTS", "PROFILES", "Profile", "checked_int", "MAX_EXAMPLES", "MAX_SIZE"]

_STACK = {"norm": NORMS, "eps": (1e-5, 0.1), "position": POSITIONS, "activation": MLP_ACTIVATIONS,
          "bias": (True, False), "tied": (True, False), "n_kv_heads": (None, "grouped"),
          "norm_position": NORM_POSITIONS}
_BERT = {**_STACK, "token_types": (True, False), "embedding_norm": (True, False),
         "unembedding_bias": (True, False), "inputs": ("tokens", "tokens", "patches", "image"),
         "patch_order": PATCH_ORDERS}
_EMPTY = ("zero", "nan")  # "error" raises by design; it is not an output to compare
_RECURRENT = {"cell": CELLS, "direction": DIRECTIONS, "bias": BIASES, "nonlinearity": NONLINEARITIES,
              "reset": RESETS, "update": UPDATES}
#: Options that apply to one cell only (formal.algorithms.recurrent.build_cell): option → that cell.  An
#: algorithm built on another cell keeps the option at its own default.
_CELL_OPTIONS = {"nonlinearity": "rnn", "reset": "gru", "update": "gru"}

#: Algorithm name → option → the choices an example draws from (when the option is not fixed).
VARIANTS = {
    "token_embedding": {},
    "positional_embedding": {"encoding": ENCODINGS},
    "single_query_attention": {"bias": (True, False), "score": ATTENTION_SCORES,
                               "activation": tuple(SCORE_ACTIVATIONS)},
    "attention": {"bias": (True, False), "empty": _EMPTY, "score": ATTENTION_SCORES,
                  "activation": tuple(SCORE_ACTIVATIONS)},
    "mhattention": {"bias": (True, False), "empty": _EMPTY, "n_kv_heads": (None, "grouped")},
    "kv_mhattention": {"bias": (True, False), "n_kv_heads": (None, "grouped"), "step": STEPS},
    "paged_mhattention": {"bias": (True, False), "n_kv_heads": (None, "grouped")},
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
    "rnn_cell": {"bias": BIASES, "nonlinearity": NONLINEARITIES},
    "gru_cell": {"bias": BIASES, "reset": RESETS, "update": UPDATES},
    "lstm_cell": {"bias": BIASES},
    "rnn_layer": _RECURRENT,
    "rnn": _RECURRENT,
    "conv1d": {"stride": (1, 1, 2, 3), "padding": (0, 1, 2, "same"), "dilation": (1, 1, 2),
               "bias": (True, False), "activation": CONV_ACTIVATIONS},
    "graph_conv": {"norm": GRAPH_NORMS, "bias": (True, False), "activation": CONV_ACTIVATIONS},
    "show_attend_tell": {"gate": (True, False), "bias": BIASES, "inputs": CAPTION_INPUTS},
    "show_attend_tell_loss": {"gate": (True, False), "bias": BIASES, "penalty": (0.0, 1.0),
                              "inputs": CAPTION_INPUTS},
    "attention_pooling": {"score": POOLING_SCORES},
    "han": {"cell": ("gru", "lstm"), "bias": BIASES, "reset": RESETS, "update": UPDATES},
    "seq2seq": {"attention": ATTENTIONS, "score": SCORES, "cell": ("gru", "lstm"), "encoder": ENCODERS,
                "init": INITS, "bias": BIASES, "reset": RESETS, "update": UPDATES},
    "window_mhattention": {"shifted": (False, True)},
    "swin_block": {"shifted": (False, True), "eps": (1e-5, 0.1)},
    "patch_merging": {"eps": (1e-5, 0.1)},
    "swin_stage": {"merge": (True, False), "eps": (1e-5, 0.1)},
    "swin": {"eps": (1e-5, 0.1), "mlp_ratio": (4, 1, 2)},
}

#: The algorithms examples exist for (training algorithms are checked through their losses).
EXAMPLE_ALGORITHMS = tuple(VARIANTS)


@dataclass(frozen=True)
class Profile:
    """How many random examples, and how large they grow (the longest sequence drawn)."""

    examples: int
    max_size: int


#: ``quick`` (conform's default) and ``thorough``.
PROFILES = {"quick": Profile(20, 17), "thorough": Profile(100, 65)}
#: The most random examples and the longest sequence a run may ask for: past them a run takes hours or
#: the examples alone outgrow the memory (a stack's cost grows with the square of the length).
MAX_EXAMPLES, MAX_SIZE = 100_000, 4096

_RUN_SIZES = ("ell_out", "n_steps")  # bound by the run itself (eos may come early)
_LENGTHS = ("ell", "ell_x", "ell_z", "T", "ell_c")
_WIDTHS = ("d_x", "d_z", "d_in", "d_out", "d_attn", "d_mid", "d_mlp", "d_f", "d_patch", "d_e", "d_a")
_LAYERS = ("L", "L_enc", "L_dec", "L_1", "L_2", "L_3", "L_4")
_WIDEST = 24   # widths stop growing here: width bugs show by then, and a model's cost grows with its square
_MIN_STACK_WIDTH = 4  # in a stack, d_e = 2 makes layer norm map every column to ±γ + β: bugs before it vanish


@dataclass
class Example:
    """One call of the spec: ``algorithm(**arguments)``."""

    algorithm: Algorithm
    arguments: dict
    sizes: dict                          # symbol name → int
    seed: int
    params: tuple = field(default=())    # the names of the parameter arguments
    case: str = "random"                 # which boundary case, or "random"

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
        mask = self.arguments.get("mask")
        masked = f", mask={mask!r}" if isinstance(mask, str) else ", mask=random 0/1" if mask is not None else ""
        cross = ", self-attention (Z = X)" if "Z" in self.algorithm.defaults and "Z" not in self.arguments else ""
        return f"{self.algorithm.name}({options}) at {sizes}{masked}{cross}"


def resolve(subject, **options) -> tuple:
    """``(name, fixed options)`` of an algorithm object (every option fixed) or of a registry name (the
    options given fixed, the others drawn per example)."""
    if isinstance(subject, Algorithm):
        if options:
            subject = subject.variant(**options)
        name, fixed = subject.name, dict(subject.options)
    else:
        name, fixed = subject, dict(options)
    if name not in VARIANTS:
        raise ConfigError(f"no examples for {name!r}; known: {', '.join(VARIANTS)}")
    known = {**algorithms.get(name).options, **VARIANTS[name]}
    unknown = sorted(set(fixed) - set(known))
    if unknown:
        raise ConfigError(f"{name} has no option {unknown[0]!r}; its options: {', '.join(known)}")
    return name, fixed


def _options(name, rng, fixed):
    options = {}
    for option, choices in VARIANTS[name].items():
        options[option] = fixed[option] if option in fixed else choices[rng.integers(len(choices))]
    options.update({k: v for k, v in fixed.items() if k not in options})
    if "cell" in VARIANTS[name]:  # an option of another cell keeps its default; one fixed picks its cell
        defaults = algorithms.get(name).options
        owned = {option: cell for option, cell in _CELL_OPTIONS.items() if option in VARIANTS[name]}
        for option, cell in owned.items():
            if option in fixed and fixed[option] != defaults[option] and "cell" not in fixed:
                options["cell"] = cell
        for option, cell in owned.items():
            if options["cell"] != cell and option not in fixed:
                options[option] = defaults[option]
    if name == "seq2seq":
        _seq2seq_options(options, fixed)
    if options.get("score") != "additive" and "activation" in options and "activation" not in fixed \
            and name in ("attention", "single_query_attention"):
        options["activation"] = "tanh"  # the score's activation applies to the additive score only
    if name == "conv1d" and options["padding"] == "same" and options["stride"] != 1:  # 'same' needs stride 1
        if "padding" in fixed:
            options["stride"] = 1
        else:
            options["padding"] = 0
    if name == "etransformer" and fixed.get("patch_order") is not None and "inputs" not in fixed:
        options["inputs"] = "image"              # a patch order fixed picks the image input
    if options.get("inputs") in ("patches", "image"):
        for k, v in dict(head="classifier", tied=False, token_types=False, unembedding_bias=False,
                         position="learned").items():
            options[k] = fixed.get(k, v)
    if options.get("inputs") != "image" and "patch_order" in options:
        options["patch_order"] = None            # the order of an image's patches applies to an image only
    return options


def _seq2seq_options(options, fixed):
    """Mend drawn seq2seq options that cannot go together (formal.algorithms.seq2seq._check), moving what
    was drawn, never what was fixed."""
    def mend(option, value):
        if option not in fixed:
            options[option] = value
    if options["attention"] == "none" and options["score"] != "additive":
        mend("score", "additive") if "score" not in fixed else mend("attention", "bahdanau")
    if options["score"] == "dot" and options["encoder"] == "bidirectional":
        mend("encoder", "forward") if "encoder" not in fixed else mend("score", "general")
    if options["init"] == "backward" and options["encoder"] == "forward":
        mend("init", "final") if "init" not in fixed else mend("encoder", "bidirectional")


# ---------------------------------------------------------------------------------------------- sizes
def evaluate(expr, sizes: dict) -> int:
    """A derived size, count or cost (a sympy expression) at sizes given by symbol name."""
    expr = sp.sympify(expr)
    return int(expr.xreplace({s: sizes[str(s)] for s in expr.free_symbols}))


def _evaluate(shape, sizes) -> tuple:
    return tuple(evaluate(d, sizes) for d in shape)


def checked_int(value, what: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int if it is an integer from ``minimum`` to ``maximum`` (None: no bound; not a bool),
    else a ConfigError naming ``what``."""
    if (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum
            or (maximum is not None and value > maximum)):
        upper = f" and ≤ {maximum:,}" if maximum is not None else ""
        raise ConfigError(f"{what} = {value!r} must be an integer ≥ {minimum}{upper}")
    return int(value)


def _draw_sizes(algorithm, symbols, rng, cap) -> dict:
    """Sizes for ``symbols`` at most ``cap`` (widths at most ``_WIDEST``), before the constraints."""
    def draw(lo, hi):
        return int(rng.integers(lo, max(lo, hi) + 1))
    stack = algorithm.is_model
    s = {}
    for k in sorted(symbols):  # a fixed order: the same seed gives the same sizes in every process
        if k in _LENGTHS:
            s[k] = draw(1, cap)
        elif k in _WIDTHS:
            lo = _MIN_STACK_WIDTH if stack and k in ("d_e", "d_f") else 2
            s[k] = draw(lo, min(cap, _WIDEST))
        elif k in _LAYERS:
            s[k] = draw(1, min(3, cap))
        elif k == "H":
            s[k] = draw(1, min(4, cap))
        elif k == "N_V":
            s[k] = draw(4, 4 + min(cap, _WIDEST))  # the last three ids are mask, bos and eos
        elif k == "n_types":
            s[k] = draw(1, 3)
        elif k == "n_classes":
            s[k] = draw(2, 4)
        elif k == "ell_gen":
            s[k] = draw(1, min(4, cap))
        elif k != "ell_max":
            s[k] = draw(1, min(cap, _WIDEST))
    if "L_1" in symbols:   # Swin: the grid is 8·M·k (three halvings, whole windows): keep M, P and k small, and
        # the heads (2^{i−1}·H in stage i) and the depths (pairs) few — a whole Swin runs window by window
        s.update(swin_window=draw(1, 2), patch=draw(1, 2), height=draw(1, min(cap, 8)), width=draw(1, min(cap, 8)),
                 H=draw(1, 2), **{f"L_{i}": 2 for i in range(1, 5)})
    elif "swin_window" in symbols:   # windows of 2 or 3 more often than 1, and grids of several: σ > 0
        s["swin_window"] = (1, 2, 2, 3, 3)[draw(0, 4)]
        for side in ("height", "width"):
            s[side] = s["swin_window"] * draw(1, max(1, min(3, cap // s["swin_window"])))
    if "ell_max" in symbols:
        s["ell_max"] = max([s[k] for k in _LENGTHS if k in s] + [1]) + draw(0, 1)
    return s


def _adjustable(expr, pinned):
    return isinstance(expr, sp.Symbol) and str(expr) not in pinned


def _scaled_symbol(expr):
    """``(s, c)`` for an expression ``c·s`` (one symbol, a rational c: ``n_h/2``), else None."""
    coefficient, rest = sp.sympify(expr).as_coeff_Mul()
    return (rest, sp.Rational(coefficient)) if isinstance(rest, sp.Symbol) and coefficient.is_Rational else None


def _mend(algorithm, sizes: dict, pinned=frozenset()) -> dict:
    """Raise sizes until every size constraint of ``algorithm`` holds (``a ≤ b``: raise b, or lower a;
    ``a | b``: raise b to a multiple of a).  Pinned sizes move only when nothing else can.  A block table
    has the blocks its cache needs, n_b = ⌈ℓ_c/B⌉ (two constraints no single move satisfies)."""
    if {"n_blocks", "block", "ell_c"} <= set(sizes):
        sizes["n_blocks"] = -(-sizes["ell_c"] // sizes["block"])
    constraints = [c for c in algorithm.size_constraints if all(str(s) in sizes for s in c.symbols)]
    for _ in range(10 * len(constraints) + 1):
        broken = [c for c in constraints if not c.holds({s: sizes[str(s)] for s in c.symbols})]
        if not broken:
            return sizes
        for c in broken:
            a, b = c.args
            va, vb = evaluate(a, sizes), evaluate(b, sizes)
            if c.relation == "<=":
                if _adjustable(b, pinned) or not _adjustable(a, pinned) and isinstance(b, sp.Symbol):
                    sizes[str(b)] = va
                elif isinstance(a, sp.Symbol):
                    sizes[str(a)] = max(1, sizes[str(a)] - (va - vb))
                else:  # a sum: lower its first adjustable term
                    term = next((t for t in sp.Add.make_args(a) if _adjustable(t, pinned)), None)
                    if term is None:
                        break
                    sizes[str(term)] = max(1, sizes[str(term)] - (va - vb))
            elif c.relation == "divides" and isinstance(b, sp.Symbol):
                sizes[str(b)] = va * math.ceil(vb / va)
            elif c.relation == "divides" and _scaled_symbol(b):   # a | s·p/q (Swin's M | n_h/2): a step of s
                symbol, coefficient = _scaled_symbol(b)
                p, q = coefficient.p, coefficient.q
                step = va * q // math.gcd(va * q, p)
                sizes[str(symbol)] = step * math.ceil(sizes[str(symbol)] / step)
            else:
                break
    broken = [c for c in constraints if not c.holds({s: sizes[str(s)] for s in c.symbols})]
    if broken:
        raise ConfigError(f"no sizes satisfy {algorithm.label}'s constraint {broken[0].text} "
                          f"({broken[0].explain({s: sizes[str(s)] for s in broken[0].symbols})})")
    return sizes


# ---------------------------------------------------------------------------------------- boundary cases
def boundary_cases(algorithm, max_size: int) -> list:
    """The boundary cases of ``algorithm``'s sizes, as ``(label, pins)``: ``pins`` maps symbol names to
    values (``"full"`` for ``ell_max``: the longest sequence's length, or as much more as the constraints
    ask, so that the context is full); ``"cross"`` in pins asks for a context Z of its own, ``"empty"`` for a
    mask with a query column that admits no key."""
    have = {str(s) for s in algorithm.symbols}
    lengths = [k for k in _LENGTHS if k in have and k != "ell_c"]
    layers = [k for k in _LAYERS if k in have]
    cases = []
    if lengths:
        cases.append(("every sequence of length 1", {k: 1 for k in lengths}))
    if "ell_max" in have and lengths:
        cases.append(("ℓ = ℓ_max (the context full)", {"ell_max": "full"}))
    if {"ell_x", "ell_z"} <= have:
        cases += [("ℓ_z > ℓ_x", {"ell_x": 2, "ell_z": 5, "cross": True}),
                  ("ℓ_z < ℓ_x", {"ell_x": 5, "ell_z": 2, "cross": True})]
    if any(spec.kind == "mask" for spec in algorithm.inputs):
        cases.append(("a query with no admitted key", {"empty": True, **{k: 4 for k in lengths}}))
    if "H" in have or layers:
        cases.append(("one head, one layer", {**({"H": 1} if "H" in have else {}), **{k: 1 for k in layers}}))
        cases.append(("several heads and layers", {**({"H": 3} if "H" in have else {}), **{k: 2 for k in layers}}))
    power = 2
    while lengths and power + 1 <= max_size:
        full = {"ell_max": "full"} if "ell_max" in have else {}
        cases.append((f"ℓ = {power + 1}, past {power}", {**{k: power + 1 for k in lengths}, **full}))
        power *= 2
    return cases


# ------------------------------------------------------------------------------------------ arguments
def _mask(rng, ell_z, ell_x, empty=False):
    """A mask argument: none, a causal one (either alignment), or random 0/1; ``empty`` forces a random one
    with a query column that admits no key."""
    kind = 4 if empty else rng.integers(5)
    if kind == 0:
        return None
    if kind == 1 and ell_z == ell_x:
        return "causal"
    if kind == 2:
        return "causal-bottom-right"
    if kind == 3:
        return "causal-top-left"
    mask = rng.random((ell_z, ell_x)) < 0.6
    if empty or rng.random() < 0.5:  # a query with no admitted key (design decision 7), on purpose and often
        mask[:, rng.integers(ell_x)] = False
    return mask


def _real(rng, spec, shape, params) -> np.ndarray:
    """A drawn real argument, spread as models are initialised, so that no token's influence drowns on its
    way to the output (a sampled token then shows a bug): a weight matrix ``W_*`` has entries of spread
    1/√fan-in (its last axis), so each sublayer's output is as large as the residual stream it joins; a norm's
    scale ``gamma*`` is 1 + N(0, ½²); embeddings and inputs are N(0, 1) and N(0, ½²), other vectors N(0, ½²)."""
    if spec not in params:
        return rng.normal(scale=0.5, size=shape)
    if spec.embedding:
        return rng.normal(size=shape)
    if spec.name.startswith("W") and len(shape) >= 2:
        return rng.normal(scale=1.0 / math.sqrt(max(shape[-1], 1)), size=shape)
    if spec.name.startswith("gamma"):
        return 1.0 + rng.normal(scale=0.5, size=shape)
    return rng.normal(scale=0.5, size=shape)


def example(subject, seed: int, *, small: int = 4, pins=None, case="random", **fixed_options) -> Example:
    """The example ``(subject, seed)``: ``subject`` is an algorithm object (its options are kept) or a name
    (options not in ``fixed_options`` are drawn from :data:`VARIANTS`); sizes are at most ``small`` (widths
    at most 24), then ``pins`` (see :func:`boundary_cases`) are applied and the constraints mended."""
    seed = checked_int(seed, "seed", 0)
    name, fixed = resolve(subject, **fixed_options)
    pins = dict(pins or {})
    rng = np.random.default_rng([int(seed), small])
    options = _options(name, rng, fixed)
    if options.get("n_kv_heads") == "grouped":
        options["n_kv_heads"] = int(rng.integers(1, 3))
    algorithm = (subject if isinstance(subject, Algorithm) and options == subject.options
                 else algorithms.get(name, **options))
    symbols = {str(s) for s in algorithm.symbols} - set(_RUN_SIZES)
    sizes = _draw_sizes(algorithm, symbols, rng, small)
    full = pins.pop("ell_max", None) == "full"
    cross = pins.pop("cross", False)
    empty = pins.pop("empty", False)
    sizes.update({k: v for k, v in pins.items() if k in sizes})
    if full and "ell_max" in sizes:  # the longest sequence fills the table, or more if a constraint says so
        sizes["ell_max"] = max([sizes[k] for k in _LENGTHS if k in sizes] + [1])
    sizes = _mend(algorithm, sizes, pinned=frozenset(pins))
    self_attention = "Z" in algorithm.defaults and not cross and rng.random() < 0.5
    if self_attention:  # Z defaults to X, whose sizes bind d_z and ell_z
        sizes["d_z"], sizes["ell_z"] = sizes["d_x"], sizes["ell_x"]
    arguments, determined = {}, set()
    param_specs = set(algorithm.params)
    for spec in algorithm.signature:
        if spec.name in algorithm.defaults and self_attention:   # Z = X: its sizes are X's
            determined |= {str(f) for d in spec.shape if isinstance(d, sp.Basic) for f in d.free_symbols}
            continue
        shape = _evaluate(spec.shape, sizes)
        if spec.kind != "mask":   # a mask may be a name ("causal"): its sizes must come from elsewhere
            determined |= {str(f) for d in spec.shape if isinstance(d, sp.Basic) for f in d.free_symbols}
        if spec.kind == "mask":
            arguments[spec.name] = _mask(rng, *shape, empty=empty)
        elif spec.kind == "index":
            bound = _evaluate((spec.bound,), sizes)[0]
            arguments[spec.name] = rng.integers(0, bound, size=shape)
        else:
            arguments[spec.name] = _real(rng, spec, shape, param_specs)
    for k in sorted(symbols - determined):
        arguments[k] = sizes[k]
    if algorithm.random:
        arguments["seed"] = int(rng.integers(2**32))
    params = tuple(p.name for p in algorithm.params)
    return Example(algorithm, arguments, sizes, int(seed), params, case)


def examples(subject, n: int, *, seed: int = 0, max_size: int | None = None, boundary: bool = True,
             **fixed_options) -> list:
    """The boundary cases of ``subject`` (unless ``boundary=False``) and ``n`` random examples from
    ``seed``, whose size bound grows from 2 to ``max_size`` (default: the ``quick`` profile's), smallest
    first."""
    n = checked_int(n, "the number of examples", 0)
    max_size = checked_int(PROFILES["quick"].max_size if max_size is None else max_size, "max_size", 2)
    out = [example(subject, seed + i, small=_cap(i, n, max_size), **fixed_options) for i in range(n)]
    if boundary:
        name, fixed = resolve(subject, **fixed_options)
        probe = subject if isinstance(subject, Algorithm) else algorithms.get(name)
        for k, (label, pins) in enumerate(boundary_cases(probe, max_size)):
            lengths = [v for key, v in pins.items() if key in _LENGTHS]
            small = max(lengths) if lengths else 4
            out.append(example(subject, seed + n + k, small=max(small, 4) if small > 1 else 4, pins=pins,
                               case=label, **fixed_options))
    return sorted(out, key=lambda e: e.size)


def _cap(i: int, n: int, max_size: int) -> int:
    """The size bound of random example i of n: 2 for the first, ``max_size`` for the last, geometric between."""
    if n <= 1:
        return 2
    return max(2, round(2 * (max_size / 2) ** (i / (n - 1))))
