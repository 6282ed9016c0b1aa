"""Examples that bring lower-precision bugs out, for the float32 and bfloat16 checks of ``verify``.

Random examples at sizes up to five rarely meet what a kernel gets wrong in a lower precision: a sum of many
small terms, a cancellation, an angle far from zero, an exponent near the top of the range.  Each case here is
an ordinary example (:func:`formal.sampling.examples.example`) with its sizes pinned and its arrays shaped so
that such a bug shows, and a correct computation stays exact enough to tell:

- **a long flat softmax row**: every sequence attended over (and the vocabulary, where the algorithm has one)
  :data:`FLAT_KEYS` long, the parameters that make a softmax's input scaled by :data:`FLAT` — hundreds of
  nearly equal weights, each at most 1 once the row's maximum is subtracted, whose sum a softmax accumulated in
  bfloat16 gets wrong whatever the draw: past 256, where bfloat16's integers are 2 apart, a term of at most 1
  is at most half a unit in the last place and the sum stops growing (every weight twice too large).  Every key
  is admitted (no mask), a score bias is scaled as the scores are, and of the variants drawn one with a softmax
  is taken (not a mean pooling);
- **norm inputs with a common offset**: the tokens' values (or the token embedding's) :data:`OFFSET` plus a spread
  on a grid of 1/16, and a learned positional table on that grid, so that every value is exact in bfloat16 and
  a layer norm's input is offset + spread — where a one-pass variance E[x²] − E[x]² cancels catastrophically;
  of the variants drawn, one whose norm subtracts the mean (a layer norm, not an RMS norm: it has nothing to
  cancel), where one can be had;
- **positions across the whole table**: ℓ_max = :data:`TABLE` (1,024) and position :data:`POSITION` asked for,
  8 wide where the width is drawn (an angle t·ω formed in bfloat16 is wrong by whole radians there), where a
  position is an input — of a variant that computes its table (a sinusoid), not one that looks it up (a learned
  table: one rounding whatever the position), where one can be had; the stacks meet positions up to 511 in the
  flat case;
- **large logits**: the softmax's parameters scaled by :data:`PEAKED`, scores in the tens to hundreds (finite in
  float64 and float32, but past exp's float32 range where the maximum is not subtracted first).

>>> [ex.case for ex in precision_cases("dtransformer", 0)]   # doctest: +NORMALIZE_WHITESPACE
['a long flat softmax row (512 keys)', 'layer-norm inputs with a common offset', 'large logits']
"""

from __future__ import annotations

import functools

import numpy as np

from .. import algorithms
from ..engine.algorithm import Algorithm
from ..engine.execution import flat_lines, ops_of
from ..engine.lines import applications_of
from ..ops import Apply, Standardize, Sub
from .examples import Example, example
from .sizes import LENGTHS
from .softmaxes import scaled_params, softmax_sources

__all__ = ["FLAT_KEYS", "FLAT", "PEAKED", "OFFSET", "TABLE", "POSITION", "precision_cases"]

#: The keys of the flat softmax row (and the vocabulary): twice 256, the last integer bfloat16 adds 1 to — a
#: row summed in bfloat16 stops at 256, half its sum.
FLAT_KEYS = 512

#: The positional table of the position case, and the position asked for: past 2⁸, where bfloat16's integers are
#: 4 apart, and not a multiple of 4 — an angle t·ω formed in bfloat16 is off by whole radians.
TABLE, POSITION = 1024, 1021

#: The factor the flat case scales a softmax's parameters by: scores within a few hundredths of each other.
FLAT = 0.05

#: The factor the large-logit case scales them by: scores (a product of two) ~36 times larger, in the tens to
#: hundreds.
PEAKED = 6.0

#: The common offset of a layer norm's inputs, and the grid (1/16) their spread is drawn on: 8 + k/16 is exact in
#: bfloat16 for every value in [4, 16).
OFFSET, GRID = 8.0, 16


#: The lengths a softmax runs over (keys: a sequence attended to itself, a context, a cache, a caption's
#: annotations); the queries' ℓ_x of a cross attention stays small.
_KEYS = tuple(k for k in LENGTHS if k != "ell_x")


def _calls(algorithm: Algorithm):
    """``algorithm`` and every algorithm it calls."""
    yield algorithm
    for line in flat_lines(algorithm.lines):
        for op in ops_of(line.expr):
            callee = getattr(op, "callee", None)
            if isinstance(callee, Algorithm):
                yield from _calls(callee)


def _ops(algorithm: Algorithm):
    """Every op ``algorithm`` and the algorithms it calls apply."""
    return (op for a in _calls(algorithm) for line in flat_lines(a.lines) for op in ops_of(line.expr))


@functools.cache
def _normalises(algorithm: Algorithm) -> bool:
    """Whether ``algorithm`` (or one it calls) standardises a column: a layer norm."""
    return any(isinstance(op, Standardize) for op in _ops(algorithm))


@functools.cache
def _centres(algorithm: Algorithm) -> bool:
    """Whether a norm of ``algorithm`` (or of one it calls) standardises centred values ``e − m``: a layer
    norm, whose mean a common offset makes cancel, not an RMS norm."""
    return any(isinstance(a.op, Standardize) and isinstance(a.args[0], Apply) and isinstance(a.args[0].op, Sub)
               for callee in _calls(algorithm) for line in flat_lines(callee.lines)
               for a in applications_of(line.expr))


def _computes(algorithm: Algorithm) -> bool:
    """Whether ``algorithm`` computes what it gives for a position (a sinusoid table) rather than reading it from
    a parameter (a learned table): it has no parameters to read from."""
    return not algorithm.params


#: How many draws (seeds apart by :data:`_STRIDE`) a case looks through for the variant that brings its bug out:
#: one in two variants or more is one (a layer norm or an RMS norm; two sinusoid tables of three), so 16 draws
#: miss it with probability ≤ 2⁻¹⁶, and options that rule it out cost 15 draws of nothing (0.3 s for a stack).
_TRIES, _STRIDE = 16, 7919


def _preferring(draw, seed: int, wanted):
    """``draw(seed')`` for the first seed' of ``seed``, ``seed + _STRIDE``, … whose example's variant is
    ``wanted``, else the first example drawn (the options fixed may rule every such variant out), None where no
    draw gives one (``draw`` gives None for a variant the case does not apply to)."""
    first = None
    for k in range(_TRIES):
        ex = draw(seed + k * _STRIDE)
        if ex is not None and wanted(ex.algorithm):
            return ex
        first = first or ex
    return first


def _on_grid(values) -> np.ndarray:
    return np.round(np.asarray(values) * GRID) / GRID


def _pins(algorithm: Algorithm) -> dict:
    """The sizes the flat case pins in ``algorithm``: every length a softmax runs over, and the vocabulary."""
    have = {str(s) for s in algorithm.symbols}
    pins = {k: FLAT_KEYS for k in (*_KEYS, "N_V") if k in have}
    if pins and "ell_max" in have:
        pins["ell_max"] = "full"
    return pins


#: The flat case's pins for any variant: :func:`~formal.sampling.examples.example` pins those the variant drawn
#: has (a prefill's ℓ, an extension's ℓ_c) and passes over the rest.
_FLAT_PINS = {**{k: FLAT_KEYS for k in (*_KEYS, "N_V")}, "ell_max": "full"}


def _flat(subject, seed, options) -> Example | None:
    probe = algorithms.get(subject, **options) if isinstance(subject, str) else subject
    if not _pins(probe):
        return None
    case = f"a long flat softmax row ({FLAT_KEYS} keys)"

    def draw(s):
        ex = example(subject, s, small=2, pins=_FLAT_PINS, case=case, **options)
        if not _pins(ex.algorithm):
            return None
        if "ell_x" in {str(x) for x in ex.algorithm.symbols} and \
                not any(ex.sizes.get(k) == FLAT_KEYS for k in _KEYS):
            # the keys are X itself (a self-attention, a prefill with no cache before it): X as long
            ex = example(subject, s, small=2, pins={**_FLAT_PINS, "ell_x": FLAT_KEYS}, case=case, **options)
        return ex

    ex = _preferring(draw, seed, lambda a: bool(scaled_params(a)))    # a variant with a softmax (not a mean)
    if ex is None:
        return None
    for spec in ex.algorithm.inputs:
        if spec.kind == "mask":     # every key admitted: a mask (a causal one of a single query) would cut the row
            ex.arguments[spec.name] = None
    sources = softmax_sources(ex.algorithm)
    for spec in ex.algorithm.inputs:   # a score bias, added to the scores as they are: as flat as they are
        if spec.kind == "real" and not spec.role and spec.name in sources and spec.name in ex.arguments:
            ex.arguments[spec.name] = ex.arguments[spec.name] * FLAT
    return _scaled(ex, FLAT)


def _peaked(subject, seed, options) -> Example | None:
    return _scaled(example(subject, seed, small=4, case="large logits", **options), PEAKED)


def _scaled(ex: Example, factor: float) -> Example | None:
    """``ex`` with the parameters that make its softmaxes' inputs scaled by ``factor``; None where it has none."""
    names = scaled_params(ex.algorithm)
    if not names:
        return None
    for name in names:
        ex.arguments[name] = ex.arguments[name] * factor
    return ex


def _offset(subject, seed, options) -> Example | None:
    ex = _preferring(lambda s: example(subject, s, small=4, case="layer-norm inputs with a common offset",
                                       **options), seed, _centres)
    if not _normalises(ex.algorithm):
        return None
    params = {p.name for p in ex.algorithm.params}
    tokens = ex.algorithm.tokens
    reals = [s.name for s in ex.algorithm.inputs if s.kind == "real" and s.name not in params]
    target = tokens.name if tokens is not None and tokens.kind == "real" else reals[0] if reals \
        else "W_e" if "W_e" in ex.arguments else None
    if target is None:
        return None
    ex.arguments[target] = OFFSET + _on_grid(ex.arguments[target])
    if "W_p" in ex.arguments:
        ex.arguments["W_p"] = _on_grid(ex.arguments["W_p"])
    return ex


def _positions(subject, seed, options) -> Example | None:
    probe = algorithms.get(subject, **options) if isinstance(subject, str) else subject
    indices = [s for s in probe.inputs if s.kind == "index" and str(s.bound) == "ell_max" and not s.shape]
    if not indices:
        return None
    have = {str(s) for s in probe.symbols}
    pins = {"ell_max": TABLE, **({"d_e": 8} if "d_e" in have else {})}
    ex = _preferring(lambda s: example(subject, s, small=4, pins=pins, case=f"position {POSITION} of a table of "
                                       f"{TABLE}", **options), seed, _computes)
    for spec in indices:
        ex.arguments[spec.name] = np.int64(POSITION)
    return ex


def precision_cases(subject, seed: int = 0, **options) -> list:
    """The cases of ``subject`` (a name, or an algorithm object whose options are kept) that apply to it, in the
    order above: those it has no softmax, layer norm or position input for are left out.  ``options`` fix
    options as :func:`~formal.sampling.examples.example` does; the same arguments give the same examples."""
    found = [make(subject, seed + k, options) for k, make in enumerate((_flat, _offset, _positions, _peaked))]
    return [ex for ex in found if ex is not None]
