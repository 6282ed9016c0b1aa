"""Examples that bring lower-precision bugs out, for the float32 and bfloat16 checks of ``verify``.

Random examples at sizes up to five rarely meet what a kernel gets wrong in a lower precision: a sum of many
small terms, a cancellation, an angle far from zero, an exponent near the top of the range.  Each case here is
an ordinary example (:func:`formal.sampling.examples.example`) with its sizes pinned and its arrays shaped so
that such a bug shows, and a correct computation stays exact enough to tell:

- **a long flat softmax row**: every sequence attended over (and the vocabulary, where the algorithm has one)
  :data:`FLAT_KEYS` long, the parameters that make a softmax's input scaled by :data:`FLAT` — hundreds of
  nearly equal weights, whose sum a softmax accumulated in bfloat16 gets wrong (past 0.5 each term is below half
  a unit in the last place);
- **norm inputs with a common offset**: the tokens' values (or the token embedding's) :data:`OFFSET` plus a spread
  on a grid of 1/16, and a learned positional table on that grid, so that every value is exact in bfloat16 and
  a layer norm's input is offset + spread — where a one-pass variance E[x²] − E[x]² cancels catastrophically;
- **positions across the whole table**: ℓ_max = :data:`TABLE` (1,024) and position :data:`POSITION` asked for,
  8 wide where the width is drawn (an angle t·ω formed in bfloat16 is wrong by whole radians there), where a
  position is an input; the stacks meet positions up to 255 in the flat case;
- **large logits**: the softmax's parameters scaled by :data:`PEAKED`, scores in the tens to hundreds (finite in
  float64 and float32, but past exp's float32 range where the maximum is not subtracted first).

>>> [ex.case for ex in precision_cases("dtransformer", 0)]   # doctest: +NORMALIZE_WHITESPACE
['a long flat softmax row (256 keys)', 'layer-norm inputs with a common offset', 'large logits']
"""

from __future__ import annotations

import functools

import numpy as np

from .. import algorithms
from ..engine.algorithm import Algorithm
from ..engine.execution import flat_lines, ops_of
from ..ops import Standardize
from .examples import Example, example
from .sizes import LENGTHS
from .softmaxes import scaled_params

__all__ = ["FLAT_KEYS", "FLAT", "PEAKED", "OFFSET", "TABLE", "POSITION", "precision_cases"]

#: The keys of the flat softmax row (and the positions of the table, where a position is an input).
FLAT_KEYS = 256

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


@functools.cache
def _normalises(algorithm: Algorithm) -> bool:
    """Whether ``algorithm`` (or one it calls) standardises a column: a layer norm."""
    return any(isinstance(op, Standardize) for a in _calls(algorithm) for line in flat_lines(a.lines)
               for op in ops_of(line.expr))


def _on_grid(values) -> np.ndarray:
    return np.round(np.asarray(values) * GRID) / GRID


def _flat(subject, seed, options) -> Example | None:
    probe = algorithms.get(subject, **options) if isinstance(subject, str) else subject
    have = {str(s) for s in probe.symbols}
    pins = {k: FLAT_KEYS for k in _KEYS if k in have}
    if "N_V" in have:
        pins["N_V"] = FLAT_KEYS
    if not pins:
        return None
    if "ell_max" in have:
        pins["ell_max"] = "full"
    case = f"a long flat softmax row ({FLAT_KEYS} keys)"
    ex = example(subject, seed, small=2, pins=pins, case=case, **options)
    if "ell_x" in have and ex.sizes.get("ell_z", FLAT_KEYS) != FLAT_KEYS:   # the context is X itself: X as long
        ex = example(subject, seed, small=2, pins={**pins, "ell_x": FLAT_KEYS}, case=case, **options)
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
    ex = example(subject, seed, small=4, case="layer-norm inputs with a common offset", **options)
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
    ex = example(subject, seed, small=4, pins=pins, case=f"position {POSITION} of a table of {TABLE}", **options)
    for spec in indices:
        ex.arguments[spec.name] = np.int64(POSITION)
    return ex


def precision_cases(subject, seed: int = 0, **options) -> list:
    """The cases of ``subject`` (a name, or an algorithm object whose options are kept) that apply to it, in the
    order above: those it has no softmax, layer norm or position input for are left out.  ``options`` fix
    options as :func:`~formal.sampling.examples.example` does; the same arguments give the same examples."""
    found = [make(subject, seed + k, options) for k, make in enumerate((_flat, _offset, _positions, _peaked))]
    return [ex for ex in found if ex is not None]
