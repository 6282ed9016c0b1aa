"""Seeded random examples of every algorithm and variant, for ``verify`` and ``conform``.

An example is one call of the spec: an algorithm object (options fixed, or drawn from each option's declared
domain and mended where the declarations say two values cannot go together: :mod:`.variants`), sizes for
every symbol it uses (drawn, then mended until every constraint the algorithm states holds: :mod:`.sizes`),
and arguments shaped as its specs say at those sizes.

A list of examples (:func:`examples`) has two parts:

- **boundary cases**, always: every sequence of length 1; the context full (``ℓ = ℓ_max``, the longest
  sequence reaching the table's end); ``ℓ_z ≠ ℓ_x`` both ways; a query that admits no key (where a mask is
  an input); one head and one layer; several heads and layers; scores past exp's range (where a softmax
  takes them: its scores' or logits' parameters scaled by :data:`LARGE`, so that a softmax that does not
  subtract the maximum overflows); and a length just past every power of two up to
  ``max_size`` (3, 5, 9, 17, …: a bug that only shows past a chunk of 8 keys shows at 9);
- **random examples** whose size bound grows geometrically from 2 to ``max_size`` along the list.

The same arguments always give the same examples; they compare by total size, smallest first, so a failure
is reported at the smallest configuration that shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .. import algorithms
from ..engine.algorithm import Algorithm
from ..errors import ConfigError
from . import memory
from .profiles import MAX_EXAMPLES, PROFILES, Profile
from .sizes import (
    LENGTHS,
    MAX_SIZE,
    RUN_SIZES,
    boundary_cases,
    draw_sizes,
    evaluate,
    evaluate_shape,
    largest_pins,
    mend_sizes,
)
from .ties import Ties
from .variants import EXAMPLE_ALGORITHMS, draw_options

__all__ = ["Example", "example", "example_list", "examples", "boundary_cases", "evaluate", "resolve",
           "EXAMPLE_ALGORITHMS", "PROFILES", "Profile", "checked_int", "MAX_EXAMPLES", "MAX_SIZE"]




@dataclass
class Example:
    """One call of the spec: ``algorithm(**arguments)``."""

    algorithm: Algorithm
    arguments: dict
    sizes: dict                          # symbol name → int
    seed: int
    params: tuple = field(default=())    # the names of the parameter arguments
    case: str = "random"                 # which boundary case, or "random"
    pins: dict = field(default_factory=dict, repr=False)  # what the case pinned (sizes, before the ties; flags)

    @property
    def size(self) -> int:
        """The total of the sizes: what "smallest configuration" means."""
        return sum(self.sizes.values())

    def evaluate(self, expr) -> int:
        """A derived expression (parameter count, FLOPs) at this example's sizes."""
        return evaluate(expr, self.sizes)

    def shape(self, name: str) -> tuple:
        """The spec's shape of argument ``name`` at this example's sizes."""
        return evaluate_shape(self.algorithm.spec(name).shape, self.sizes)

    @property
    def large(self) -> bool:
        """Whether this is the large-score case (its softmax inputs scaled past exp's range), whatever its label
        says after the ties relabelled it."""
        return bool(self.pins.get("large"))

    def describe(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.algorithm.options.items())
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(self.sizes.items()))
        mask = self.arguments.get("mask")
        masked = f", mask={mask!r}" if isinstance(mask, str) else ", mask=random 0/1" if mask is not None else ""
        cross = ", self-attention (Z = X)" if "Z" in self.algorithm.defaults and "Z" not in self.arguments else ""
        return f"{self.algorithm.name}({options}) at {sizes}{masked}{cross}"


def resolve(subject, /, **options) -> tuple:
    """``(name, fixed options)`` of an algorithm object (every option fixed) or of a registry name (the
    options given fixed, the others drawn per example)."""
    if isinstance(subject, Algorithm):
        if options:
            subject = subject.variant(**options)
        name, fixed = subject.name, dict(subject.options)
    else:
        name, fixed = subject, dict(options)
    if name not in EXAMPLE_ALGORITHMS:
        raise ConfigError(f"no examples for {name!r}; known: {', '.join(EXAMPLE_ALGORITHMS)}")
    known = algorithms.get(name).option_specs
    unknown = sorted(set(fixed) - set(known))
    if unknown:
        raise ConfigError(f"{name} has no option {unknown[0]!r}; its options: {', '.join(known)}")
    return name, fixed


def checked_int(value, what: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int if it is an integer from ``minimum`` to ``maximum`` (None: no bound; not a bool),
    else a ConfigError naming ``what``."""
    if (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum
            or (maximum is not None and value > maximum)):
        upper = f" and ≤ {maximum:,}" if maximum is not None else ""
        raise ConfigError(f"{what} = {value!r} must be an integer ≥ {minimum}{upper}")
    return int(value)



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
    if empty or rng.random() < 0.5:  # a query with no admitted key (decision-empty-neighbourhood), on purpose and often
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


#: The factor the large-score case multiplies a softmax's parameters by: a product of two (q·k) reaches
#: ~10⁸, one (the logits, a pooling query) ~10³–10⁴, all far past the 709 where exp overflows in float64.
LARGE = 1e4


def _scale_scores(algorithm, arguments):
    """The large-score case: the parameters that make a softmax's input (its scores or logits) scaled by
    :data:`LARGE`.  Weights, not inputs: a layer norm in a stack would undo a scaled input."""
    from .softmaxes import scaled_params
    for name in scaled_params(algorithm):
        arguments[name] = arguments[name] * LARGE


#: Draws of the options the large-score case takes at most to meet a variant with a softmax.
SOFTMAX_DRAWS = 32


#: The options that soft-cap a softmax's input (:mod:`formal.ops.softcap`): under a cap c no score passes |c|.
CAPS = ("score_cap", "logit_cap", "cap")


def _uncapped(name, options, fixed):
    """``options`` with every soft cap the user did not fix turned off: a capped score cannot pass exp's range.
    Returns ``(algorithm, options)``."""
    lifted = {k: None for k in CAPS if options.get(k) is not None and k not in fixed}
    options = {**options, **lifted}
    return algorithms.get(name, **options), options


def _with_a_softmax(algorithm, options, rng, fixed, name, case):
    """The large-score case needs a variant that runs a softmax (average pooling runs none) whose inputs are not
    soft-capped (:data:`CAPS`, turned off unless fixed): the options drawn again, at most :data:`SOFTMAX_DRAWS`
    times, until one does; where none does (the options fixed rule every softmax out, or fix a cap), the example is
    an ordinary random one."""
    from .softmaxes import scaled_params
    if any(options.get(k) is not None for k in CAPS):
        algorithm, options = _uncapped(name, options, fixed)
    if any(options.get(k) is not None for k in CAPS):
        return algorithm, options, "random"
    for _ in range(SOFTMAX_DRAWS):
        if scaled_params(algorithm):
            return algorithm, options, case
        options = draw_options(algorithms.get(name).option_specs, rng, fixed, name)
        algorithm, options = _uncapped(name, options, fixed)
    return (algorithm, options, case) if scaled_params(algorithm) else (algorithm, options, "random")


@dataclass
class _Plan:
    """An example before its arrays are drawn: its variant, sizes and the shapes of its arguments, and the
    generator that draws them next — so that what a list of examples takes is estimated before any of it is
    drawn (:mod:`.memory`)."""

    algorithm: Algorithm
    sizes: dict
    seed: int
    case: str
    pins: dict
    rng: np.random.Generator = field(repr=False)
    shapes: dict = field(default_factory=dict)     # array argument → (spec, shape), in the signature's order
    scalars: dict = field(default_factory=dict)    # a size passed as an argument (no array determines it)
    drawn: dict = field(default_factory=dict, repr=False)  # the sizes before the constraints were mended
    flags: tuple = (False, False)                  # (empty, large)

    @property
    def nbytes(self) -> int:
        """What its arrays take (:func:`.memory.example_bytes`)."""
        return memory.example_bytes(self.algorithm, self.array_shapes)

    @property
    def array_shapes(self) -> dict:
        """Each array argument's shape."""
        return {n: shape for n, (_, shape) in self.shapes.items()}


def example(subject, seed: int, /, *, small: int = 4, pins=None, case="random", sizes=None,
            **fixed_options) -> Example:
    """The example ``(subject, seed)``: ``subject`` is an algorithm object (its options are kept) or a name
    (options not in ``fixed_options`` are drawn from their declarations: :func:`.variants.draw_options`); sizes
    are at most ``small`` (widths at most 24), then ``pins`` (see :func:`boundary_cases`) are applied and the
    constraints mended.  ``sizes`` fixes and ties sizes (``["H=4", "d_attn=d_x/H"]``, or ``{name: int | str}``:
    :class:`.ties.Ties`): the others are drawn and mended, then the tied ones set from them.  What its arrays
    take is estimated first, and refused past the memory limit (:mod:`.memory`)."""
    plan = _plan(subject, seed, small=small, pins=pins, case=case, sizes=sizes, **fixed_options)
    memory.require([plan], subject, fixed_options, sizes)
    return _draw(plan)


def example_list(subject, seeds, /, *, small: int = 4, sizes=None, **fixed_options) -> list:
    """The examples ``(subject, seed)`` of each of ``seeds`` (see :func:`example`), held together: their arrays
    are estimated as one list and refused past the memory limit before the first is drawn."""
    plans = [_plan(subject, seed, small=small, pins=None, case="random", sizes=sizes, **fixed_options)
             for seed in seeds]
    memory.require(plans, subject, fixed_options, sizes)
    return [_draw(plan) for plan in plans]


def _plan(subject, seed, *, small, pins, case, sizes, **fixed_options) -> _Plan:
    """Everything of the example ``(subject, seed)`` but its arrays (see :func:`example`)."""
    seed = checked_int(seed, "seed", 0)
    name, fixed = resolve(subject, **fixed_options)
    pins = dict(pins or {})
    rng = np.random.default_rng([int(seed), small])
    options = draw_options(algorithms.get(name).option_specs, rng, fixed, name)
    algorithm = (subject if isinstance(subject, Algorithm) and options == subject.options
                 else algorithms.get(name, **options))
    if pins.get("large"):
        algorithm, options, case = _with_a_softmax(algorithm, options, rng, fixed, name, case)
        pins["large"] = case != "random"
    ties = Ties.parse(algorithm, sizes)
    if "largest" in pins:  # the sizes of the variant drawn, at the largest
        largest, note = largest_pins(algorithm, *pins.pop("largest"))
        pins, case = {**largest, **pins}, case + note
    symbols = {str(s) for s in algorithm.symbols} - set(RUN_SIZES)
    drawn = draw_sizes(algorithm, symbols, rng, small)
    full = pins.get("ell_max") == "full" and pins.pop("ell_max") == "full"
    cross = pins.pop("cross", False)
    empty = pins.pop("empty", False)
    large = pins.pop("large", False)
    drawn.update({k: v for k, v in pins.items() if k in drawn})
    if full and "ell_max" in drawn:  # the longest sequence fills the table, or more if a constraint says so
        drawn["ell_max"] = max([drawn[k] for k in LENGTHS if k in drawn] + [1])
    before = dict(drawn)
    final = ties.apply(mend_sizes(algorithm, drawn, pinned=frozenset(pins) - ties.names,
                                  constraints=ties.constraints if ties else None))
    self_attention = "Z" in algorithm.defaults and not cross and rng.random() < 0.5
    if self_attention:  # Z defaults to X, whose sizes bind d_z and ell_z (where the ties allow it)
        self_attention = _self_attention(algorithm, final, ties)
    flags = {k: True for k, on in (("cross", cross), ("empty", empty), ("large", large)) if on}
    pinned = {**pins, **({"ell_max": "full"} if full else {}), **flags}
    plan = _Plan(algorithm, final, int(seed), case, pinned, rng, drawn=before, flags=(empty, large))
    determined = set()
    for spec in algorithm.signature:
        if spec.name in algorithm.defaults and self_attention:   # Z = X: its sizes are X's
            determined |= _symbols(spec.shape)
            continue
        if spec.kind != "mask":   # a mask may be a name ("causal"): its sizes must come from elsewhere
            determined |= _symbols(spec.shape)
        plan.shapes[spec.name] = (spec, evaluate_shape(spec.shape, final))   # Python ints, exact at any size
    plan.scalars = {k: final[k] for k in sorted(symbols - determined)}
    return plan


def _symbols(shape) -> set:
    """The names of the sizes a symbolic shape reads."""
    return {str(f) for d in shape if isinstance(d, sp.Basic) for f in d.free_symbols}


def _draw(plan: _Plan) -> Example:
    """The example ``plan`` describes, its arrays drawn with its generator."""
    algorithm, sizes, rng = plan.algorithm, plan.sizes, plan.rng
    empty, large = plan.flags
    arguments = {}
    param_specs = set(algorithm.params)
    for name, (spec, shape) in plan.shapes.items():
        if spec.kind == "mask":
            arguments[name] = _mask(rng, *shape, empty=empty)
        elif spec.kind == "index":
            bound = evaluate_shape((spec.bound,), sizes)[0]
            arguments[name] = rng.integers(0, bound, size=shape)
        else:
            arguments[name] = _real(rng, spec, shape, param_specs)
    arguments.update(plan.scalars)
    if large:
        _scale_scores(algorithm, arguments)
    if algorithm.random:
        arguments["seed"] = int(rng.integers(2**32))
    params = tuple(p.name for p in algorithm.params)
    return Example(algorithm, arguments, sizes, plan.seed, params, plan.case, plan.pins)


def _self_attention(algorithm, sizes: dict, ties) -> bool:
    """Sets the context's sizes to the tokens' (Z = X) and says so, unless the ties then break or set other
    values (``d_z = 2*d_x``), or a constraint breaks; then the context stays an input of its own."""
    trial = {**sizes, "d_z": sizes["d_x"], "ell_z": sizes["ell_x"]}
    try:
        trial = ties.apply(trial)
    except ConfigError:
        return False
    if (trial["d_z"], trial["ell_z"]) != (sizes["d_x"], sizes["ell_x"]) or not all(
            c.holds({s: trial[str(s)] for s in c.symbols}) for c in algorithm.size_constraints):
        return False
    sizes.update(trial)
    return True


def examples(subject, n: int, *, seed: int = 0, max_size: int | None = None, boundary: bool = True,
             sizes=None, **fixed_options) -> list:
    """The boundary cases of ``subject`` (unless ``boundary=False``) and ``n`` random examples from
    ``seed``, whose size bound grows from 2 to ``max_size`` (default: the ``quick`` profile's), smallest
    first.  ``sizes`` fixes and ties sizes (see :func:`example`); a boundary case that pins a size the ties
    set is relabelled with the value it has, or dropped where nothing it pins is left."""
    n = checked_int(n, "the number of examples", 0)
    max_size = checked_int(PROFILES["quick"].max_size if max_size is None else max_size, "max_size", 2)
    name, fixed = resolve(subject, **fixed_options)
    probe = subject if isinstance(subject, Algorithm) else algorithms.get(name)
    ties = Ties.parse(probe, sizes)
    ties.check_reach(max_size)
    plans = [_plan(subject, seed + i, small=_cap(i, n, max_size), pins=None, case="random", sizes=ties,
                   **fixed_options) for i in range(n)]
    if boundary:
        for k, (label, pins) in enumerate(boundary_cases(probe, max_size)):
            lengths = [v for key, v in pins.items() if key in LENGTHS]
            group = pins.get("largest", ("",))[0]
            small = max_size if group == "every length and width" else max(lengths) if lengths else 4
            # S heads or S layers: the other sizes as small as drawn at all, so the case costs S times one layer
            small = 2 if group in ("heads and blocks", "layers and patches") else max(small, 4) if small > 1 else 4
            plan = _plan(subject, seed + n + k, small=small, pins=pins, case=label, sizes=ties, **fixed_options)
            plan.case = _honest(plan.case, plan.pins, plan.sizes, ties)
            if plan.case is not None:
                plans.append(plan)
    memory.require(plans, subject, fixed_options, ties)   # the list is held whole: refused before any is drawn
    out = [_draw(plan) for plan in plans]
    return sorted(out, key=lambda e: e.size)


def _honest(label: str, pins: dict, sizes: dict, ties) -> str | None:
    """A boundary case's label as its sizes are: unchanged where the ties set none of what it pins, with the
    values they set where they set some, None (drop the case) where they set all."""
    wanted = {k: v for k, v in pins.items() if k in sizes and not isinstance(v, bool)}
    if wanted.get("ell_max") == "full":
        wanted["ell_max"] = max([sizes[k] for k in LENGTHS if k in sizes] + [1])
    moved = sorted(k for k, v in wanted.items() if k in ties.names and sizes[k] != v)
    if not moved:
        return label
    if len(moved) == len(wanted) and not any(v is True for v in pins.values()):   # a flag (large scores) stays
        return None
    return f"{label}, but {', '.join(f'{k} = {sizes[k]}' for k in moved)} as the sizes given tie it"


def _cap(i: int, n: int, max_size: int) -> int:
    """The size bound of random example i of n: 2 for the first, ``max_size`` for the last, geometric between."""
    if n <= 1:
        return 2
    return max(2, round(2 * (max_size / 2) ** (i / (n - 1))))
