"""Independent oracles for every count ``graph`` reports: brute force for small ℓ, closed forms for any ℓ.

Written here from each pattern's documented definition (the docstrings of :mod:`formal.graphs.patterns`,
:mod:`~formal.graphs.windows` and :mod:`~formal.graphs.sparse`, and the papers they cite) — never read from
the package's edge, count or structure code.  Positions are 0-based, ``mask[k, q]`` means that query ``q``
attends to key ``k``.

- :func:`definition` — a pattern's mask over all (k, q) pairs, from its definition;
- :func:`brute` — from a mask: edges, in-degrees, and per layer the receptive fields (boolean matrix powers),
  their spans, layers to coverage with and without the residual path, and the maximum path length;
- :func:`closed` — the same figures in closed form with Python ints, for ℓ up to 2⁵⁰ and beyond.

Both return an :class:`Expected`; the tests compare the package's report with them, and them with each other
at small ℓ (so each closed form is itself checked against brute force).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

__all__ = ["Expected", "definition", "is_self", "brute", "closed", "room", "swin_groups", "tri", "sum_min"]


# ----------------------------------------------------------------------------------------- the container
@dataclasses.dataclass
class Expected:
    """What an oracle says the report holds: sizes, ``edges``, ``degree`` = (min, max, empty) of the
    in-degrees; for self-attention ``field(L)`` = (min, total, max, min without the residual path, largest
    span) of the receptive fields after L ≥ 1 layers, ``coverage``/``coverage_without`` (None: never) and
    ``max_path``."""

    ell_z: int
    ell_x: int
    self_attention: bool
    edges: int
    degree: tuple
    field: Callable | None = None
    coverage: int | None = None
    coverage_without: int | None = None
    max_path: int | None = None


# ------------------------------------------------------------------------------------- the definitions
def swin_groups(side: int, window: int, shift) -> list:
    """Swin's windows along one axis, as sizes in order: ``side/M`` windows of M, or — shifted by σ (the
    masked cyclic shift) — boundaries at σ + a·M: σ, then M, …, then M − σ."""
    if shift is None:
        return [window] * (side // window)
    return [shift] + [window] * (side // window - 1) + [window - shift]


def _labels(sizes) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes)


def definition(kind: str, v: dict) -> np.ndarray:
    """The mask ``[k, q]`` of the ``graph`` pattern ``kind`` with the checked parameters ``v``; for ``random``,
    its fixed part (window and global positions) only."""
    if kind == "swin":
        height, width = v["grid"]
        m = v["window"]
        shift = (v["shift"] or m // 2) if v["shifted"] else None
        rows, cols = _labels(swin_groups(height, m, shift)), _labels(swin_groups(width, m, shift))
        group = (rows[:, None] * (width + 1) + cols[None, :]).ravel()     # token i·W + j
        return group[:, None] == group[None, :]
    n = v["n"]
    if kind in ("causal", "cross"):
        n_z = n if v["n_z"] is None else v["n_z"]
        k, q = np.meshgrid(np.arange(n_z), np.arange(n), indexing="ij")
        if kind == "cross":
            return np.ones((n_z, n), dtype=bool)
        shift = n_z - n if v["align"] == "bottom-right" and n_z != n else 0   # the last query sees every key
        return k <= q + shift
    k, q = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    causal = v.get("causal")
    if kind == "full":
        return np.ones((n, n), dtype=bool)
    if kind == "sliding-window":
        w = v["window"]
        return (q - w < k) & (k <= q) if causal else abs(q - k) < w
    if kind == "dilated":
        w, d = v["window"], v["dilation"]
        gap = q - k if causal else abs(q - k)
        return (gap >= 0) & (gap % d == 0) & (gap < w * d)                # q − jδ, 0 ≤ j < w
    if kind in ("global-local", "random"):
        w, g = v["window"], v["n_global"]
        local = ((q - w < k) & (k <= q) if causal else abs(q - k) < w) if w else np.zeros((n, n), dtype=bool)
        hubs = (k < g) | (q < g)                                           # globals see and are seen by all
        return (local | hubs) & (k <= q) if causal else local | hubs
    if kind == "strided":                                                  # Child et al. 2019, §4.2
        s, part = v["stride"], v["part"]
        local, every = (k <= q) & (q - k <= s), (k <= q) & ((q - k) % s == 0)
        return {"local": local, "stride": every, "both": local | every}[part]
    if kind == "fixed":
        s, c, part = v["stride"], v["summary"], v["part"]
        block, summary = (k <= q) & (k // s == q // s), (k <= q) & (k % s >= s - c)
        return {"local": block, "summary": summary, "both": block | summary}[part]
    raise ValueError(f"no definition of {kind!r}")


def is_self(kind: str, v: dict) -> bool:
    """Whether the pattern is self-attention: all but cross, and causal between sequences of two lengths."""
    return kind != "cross" and not (kind == "causal" and v["n_z"] not in (None, v["n"]))


def room(v: dict) -> bool:
    """Whether BigBird's random keys fit: every non-global query has ``n_random`` keys outside its window
    (``2w − 1`` keys at most, within the non-global positions) and the global positions."""
    n, w, g = v["n"], v["window"], v["n_global"]
    widest = min(2 * w - 1, n - g) if w else 0
    return n == g or n - g - widest >= v["n_random"]


# --------------------------------------------------------------------------------------------- brute force
def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Boolean matrix product."""
    return (a.astype(np.int64) @ b.astype(np.int64)) > 0


def _span(field: np.ndarray) -> int:
    rows = np.arange(field.shape[0])[:, None]
    hit = field.any(axis=0)
    if not hit.any():
        return 0
    first = np.where(field, rows, field.shape[0]).min(axis=0)
    last = np.where(field, rows, -1).max(axis=0)
    return int((last - first + 1)[hit].max())


def _walk(step: np.ndarray, target: np.ndarray):
    """Layers 0, 1, … of ``F_L = F_{L−1}·step`` from the identity until a state repeats: the states, the first
    layer covering ``target`` (None: none) and the last layer that changed the state."""
    n = step.shape[0]
    state, seen, states, covered, changed = np.eye(n, dtype=bool), {}, [], None, 0
    while True:
        key = state.tobytes()
        if key in seen:
            return states, covered, changed
        seen[key] = len(states)
        if covered is None and not (target & ~state).any():
            covered = len(states)
        if states and not np.array_equal(state, states[-1]):
            changed = len(states)
        states.append(state)
        state = _matmul(state, step)


def brute(mask: np.ndarray, self_attention: bool) -> Expected:
    """Every figure of the report from the mask itself, by brute force."""
    ell_z, ell_x = mask.shape
    degree = mask.sum(axis=0)
    edges = int(mask.sum())
    spread = (int(degree.min()), int(degree.max()), int((degree == 0).sum())) if ell_x else (0, 0, 0)
    if not self_attention:
        return Expected(ell_z, ell_x, False, edges, spread)
    n = ell_x
    causal = not (mask & ~np.triu(np.ones((n, n), dtype=bool))).any()  # every edge k ≤ q
    target = np.triu(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    grown, covered, changed = _walk(mask | np.eye(n, dtype=bool), target)
    plain, covered_without, _ = _walk(mask, target)
    plain_start = next(i for i, s in enumerate(plain) if np.array_equal(s, _matmul(plain[-1], mask)))

    def at(states, layer, start):
        if layer < len(states):
            return states[layer]
        period = len(states) - start
        return states[start + (layer - start) % period]

    def field(layer):
        with_residual = at(grown, layer, len(grown) - 1)
        without = at(plain, layer, plain_start)
        sizes = with_residual.sum(axis=0)
        return (int(sizes.min()), int(sizes.sum()), int(sizes.max()), int(without.sum(axis=0).min()),
                _span(with_residual))
    return Expected(n, n, True, edges, spread, field, covered, covered_without, changed)


# ------------------------------------------------------------------------------------------ closed forms
def tri(x: int) -> int:
    """``1 + 2 + … + x``, 0 for x ≤ 0."""
    return x * (x + 1) // 2 if x > 0 else 0


def sum_min(n: int, a: int) -> int:
    """``Σ_{q<n} min(q, a)``, a ≥ 0."""
    if n <= 0:
        return 0
    if a >= n - 1:
        return n * (n - 1) // 2
    return a * (a + 1) // 2 + a * (n - 1 - a)


def _floors(n: int, s: int) -> int:
    """``Σ_{q<n} ⌊q/s⌋``."""
    m, r = divmod(n, s)
    return s * m * (m - 1) // 2 + r * m


def _residues(n: int, s: int) -> int:
    """``Σ_{q<n} (q mod s)``."""
    m, r = divmod(n, s)
    return m * s * (s - 1) // 2 + r * (r - 1) // 2


def _hub(t: int, g: int) -> int:
    """``Σ_{u=1}^{t} min(g, u)``, 0 for t ≤ 0."""
    return 0 if t <= 0 else tri(t) if t <= g else tri(g) + g * (t - g)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _extremes(f, n: int, breaks) -> tuple:
    """``(min, max)`` of ``f`` over ``0 … n−1`` where it is linear between the ``breaks``: at a segment's ends."""
    points = {p for b in (0, n - 1, *breaks) for p in (b - 1, b) if 0 <= p < n}
    values = [f(q) for q in points]
    return min(values), max(values)


def _classes(n: int, d: int) -> dict:
    """The residue classes of ``0 … n−1`` modulo ``d``: {size: how many classes}."""
    m, r = divmod(n, d)
    return {size: count for size, count in ((m + 1, r), (m, d - r)) if size and count}


def _band(classes: dict, a: int, b: int, delta: int = 1):
    """Classes of positions ({size: count}, every ``delta``-th position), each a band: index ``i`` sees
    ``i − a … i + b`` of its class, so after L layers ``i − La … i + Lb``; ``field(L)`` (a self-loop
    everywhere: the same without the residual path)."""
    def field(layer):
        la, lb = layer * a, layer * b
        least = min(min(m - 1, la, lb) + 1 for m in classes)
        most = max(min(m - 1, la + lb) + 1 for m in classes)
        total = sum(c * (sum_min(m, la) + sum_min(m, lb) + m) for m, c in classes.items())
        return least, total, most, least, (most - 1) * delta + 1
    return field


def _constant(least, total, most, span, least_without=None):
    """A field that one layer settles."""
    return lambda layer: (least, total, most, least if least_without is None else least_without, span)


def _first_then_all(first, n, span, causal=True):
    """A field that is the in-neighbourhood after one layer and every allowed position after two."""
    every = (1, n * (n + 1) // 2, n) if causal else (n, n * n, n)
    return lambda layer: (*first, first[0], span) if layer == 1 else (*every, every[0], n)


def closed(kind: str, v: dict) -> Expected:
    """The report's figures in closed form, Python ints only (``v``: the checked parameters)."""
    if kind == "swin":
        return _closed_swin(v)
    n = v["n"]
    if kind in ("causal", "cross") and v["n_z"] is not None and (kind == "cross" or v["n_z"] != n):
        return _closed_bipartite(kind, v["n_z"], n, v.get("align"))
    if kind == "cross":
        return Expected(n, n, False, n * n, (n, n, 0))
    if kind == "random":
        return _closed_random(v)
    return {"full": _closed_full, "causal": _closed_causal, "sliding-window": _closed_sliding,
            "dilated": _closed_dilated, "global-local": _closed_global, "strided": _closed_strided,
            "fixed": _closed_fixed}[kind](v)


def _closed_bipartite(kind, n_z, n_x, align):
    if kind == "cross":
        return Expected(n_z, n_x, False, n_z * n_x, (n_z, n_z, 0))
    if align == "bottom-right":                     # max(0, min(q + 1 + ℓ_z − ℓ_x, ℓ_z)) keys
        d = n_z - n_x
        edges = tri(n_x) + d * n_x if d >= 0 else tri(n_z)
        return Expected(n_z, n_x, False, edges, (max(0, 1 + d), n_z, max(0, -d)))
    edges = tri(n_x) if n_x <= n_z else tri(n_z) + (n_x - n_z) * n_z   # min(q + 1, ℓ_z) keys
    return Expected(n_z, n_x, False, edges, (1, min(n_x, n_z), 0))


def _self(n, edges, degree, field, coverage, max_path, coverage_without="same"):
    return Expected(n, n, True, edges, degree, field, coverage,
                    coverage if coverage_without == "same" else coverage_without, max_path)


def _closed_full(v):
    n = v["n"]
    return _self(n, n * n, (n, n, 0), _constant(n, n * n, n, n), int(n > 1), int(n > 1))


def _closed_causal(v):
    n = v["n"]
    return _self(n, tri(n), (1, n, 0), _constant(1, tri(n), n, n), int(n > 1), int(n > 1))


def _window_coverage(n, a):
    """Layers for a band of reach ``a`` to join positions ``n − 1`` apart (None: never)."""
    if n <= 1:
        return 0
    return None if a == 0 else _ceil(n - 1, a)


def _closed_sliding(v):
    n, w, causal = v["n"], v["window"], v["causal"]
    a = w - 1
    if causal:
        edges, degree = sum_min(n, a) + n, (1, min(a, n - 1) + 1, 0)
    else:
        edges, degree = 2 * sum_min(n, a) + n, (min(n - 1, a) + 1, min(n - 1, 2 * a) + 1, 0)
    cover = _window_coverage(n, a)
    return _self(n, edges, degree, _band({n: 1}, a, 0 if causal else a), cover, cover if cover is not None else 0)


def _closed_dilated(v):
    n, w, d, causal = v["n"], v["window"], v["dilation"], v["causal"]
    classes = _classes(n, d)                                               # q mod δ: a window in each
    a, b = w - 1, 0 if causal else w - 1
    field = _band(classes, a, b, d)
    least, edges, most, _, _ = field(1)
    largest = max(classes)
    cover = 0 if n <= 1 else None if d > 1 else _window_coverage(n, a)
    longest = 0 if a == 0 or largest <= 1 else _ceil(largest - 1, a)
    return _self(n, edges, (least, most, 0), field, cover, longest)


def _closed_global(v):
    n, w, g, causal = v["n"], v["window"], v["n_global"], v["causal"]
    if not g:
        return _closed_sliding(v)
    a = w - 1
    if causal:                  # min(q, a) + 1 window keys, and the globals left of the window
        def size(q, reach):
            return min(q, reach) + 1 + max(0, min(g, q - reach))
        edges = sum_min(n, a) + n + _hub(n - 1 - a, g)
        rest = n - 1 - g

        def field(layer):
            r = layer * a
            return 1, sum_min(n, r) + n + _hub(n - 1 - r, g), size(n - 1, r), 1, n
        cover = 0 if n <= 1 else 1 if rest <= 0 else None if a == 0 else max(1, _ceil(rest, a))
        longest = 0 if n <= 1 else 1 if a == 0 else cover
        return _self(n, edges, (1, size(n - 1, a), 0), field, cover, longest)

    def degree(q):
        if q < g:
            return n
        return min(q, a) + min(n - 1 - q, a) + 1 + max(0, min(g, q - a))
    edges = (g * n + sum_min(n, a) - sum_min(g, a) + sum_min(n - g, a) + (n - g)
             + _hub(n - 1 - a, g) - _hub(g - 1 - a, g))
    least, most = _extremes(degree, n, (g, a, a + g, n - 1 - a))
    cover = 0 if n <= 1 else 1 if least == n else 2
    return _self(n, edges, (least, most, 0), _first_then_all((least, edges, most), n, n, causal=False), cover, cover)


def _closed_strided(v):
    n, s, part = v["n"], v["stride"], v["part"]
    if part == "local":
        cover = _window_coverage(n, s)
        return _self(n, sum_min(n, s) + n, (1, min(s, n - 1) + 1, 0), _band({n: 1}, s, 0), cover, cover)
    if part == "stride":                            # classes q mod s, each causal and complete
        cover = 0 if n <= 1 else 1 if s == 1 else None
        return _self(n, _floors(n, s) + n, (1, (n - 1) // s + 1, 0), _band(_classes(n, s), n, 0, s), cover,
                     int(n - 1 >= s))

    def degree(q):                                  # window ∪ strides; q and q − s are in both
        return min(q, s) + q // s + 1 - (q >= s)
    edges = sum_min(n, s) + _floors(n, s) + n - max(0, n - s)
    span = max(min(s, n), s * ((n - 1) // s) + 1)
    cover = 0 if n <= 1 else 1 if s == 1 or n - 1 <= s else 2
    return _self(n, edges, (1, degree(n - 1), 0), _first_then_all((1, edges, degree(n - 1)), n, span), cover, cover)


def _closed_fixed(v):
    n, s, c, part = v["n"], v["stride"], v["summary"], v["part"]
    if part == "local":
        edges, most = _residues(n, s) + n, min(s, n)
        cover = 0 if n <= 1 else 1 if n <= s else None
        return _self(n, edges, (1, most, 0), _constant(1, edges, most, most), cover, int(most >= 2))
    if part == "summary":
        def keys(q):                                # summaries k ≤ q: k mod s ≥ s − c
            return c * (q // s) + max(0, q % s - (s - c) + 1)
        edges = c * _floors(n, s) + (n // s) * tri(c) + tri(n % s - s + c)
        last_is_summary = (n - 1) % s >= s - c
        span = n - (s - c) if n - 1 >= s - c else 1
        field = _constant(1, edges + n - keys(n - 1), keys(n - 1) + (not last_is_summary), span,
                          least_without=keys(0))
        cover = 0 if n <= 1 else 1 if c == s else None
        return _self(n, edges, (keys(0), keys(n - 1), min(s - c, n)), field, cover, int(s - c <= n - 2))

    def degree(q):                                  # own block up to q, c summaries of each earlier block
        return q % s + 1 + c * (q // s)
    edges = _residues(n, s) + n + c * _floors(n, s)
    most = max(degree(q) for q in (n - 1, n // s * s - 1) if q >= 0)
    span = max(min(s, n), n - s + c if n > s else 0)
    cover = 0 if n <= 1 else 1 if c == s or n <= s else 2
    return _self(n, edges, (1, most, 0), _first_then_all((1, edges, most), n, span), cover, cover)


def _closed_swin(v):
    height, width = v["grid"]
    m = v["window"]
    shift = (v["shift"] or m // 2) if v["shifted"] else None
    rows, cols = swin_groups(height, m, shift), swin_groups(width, m, shift)
    n = height * width
    edges = sum(r * r for r in rows) * sum(c * c for c in cols)
    least, most = min(rows) * min(cols), max(rows) * max(cols)
    span = (max(rows) - 1) * width + max(cols)
    cover = 0 if n <= 1 else 1 if len(rows) * len(cols) == 1 else None
    return _self(n, edges, (least, most, 0), _constant(least, edges, most, span), cover, int(most >= 2))


def _closed_random(v):
    """BigBird: the fixed part (a bidirectional window, g global positions) and ``r`` more keys for each
    non-global query — its figures other than the receptive fields, which depend on the draw."""
    n, r, w, g = v["n"], v["n_random"], v["window"], v["n_global"]
    a = w - 1

    def degree(q):
        if q < g:
            return n
        window = min(q, a) + min(n - 1 - q, a) + 1 + max(0, min(g, q - a)) if w else g
        return window + r
    if w:
        fixed = (g * n + sum_min(n, a) - sum_min(g, a) + sum_min(n - g, a) + (n - g)
                 + _hub(n - 1 - a, g) - _hub(g - 1 - a, g))
    else:
        fixed = g * n + (n - g) * g
    least, most = _extremes(degree, n, (g, a, a + g, n - 1 - a) if w else (g,))
    return Expected(n, n, True, fixed + r * (n - g), (least, most, 0))
