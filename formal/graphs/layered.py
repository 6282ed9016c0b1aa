"""Stacks of attention layers as layered graphs: receptive fields, layers to full coverage, path lengths.

A stack of attention layers is a layered graph: position ``q`` after layer ``l`` depends on position ``k``
after layer ``l − 1`` when ``k → q`` is an edge of layer ``l``'s pattern, and — through the residual
connection ``X ← X + Attention(X)`` — on itself.  The **receptive field** of ``q`` after ``L`` layers is the
set of input positions it depends on:

.. math:: R_L(q) = \\{k : \\text{a path } k \\to \\dots \\to q \\text{ of at most } L \\text{ edges}\\}
    \\quad\\text{(with the residual path; exactly } L \\text{ edges without it).}

The **maximum path length** ([Vaswani2017]_, Table 1) is the most layers any pair needs: the largest
shortest-path distance over the pairs ``k, q`` that are connected at all.  Receptive fields are computed as
bit sets, one row of ``⌈ℓ/64⌉`` words per position, propagated along the edge arrays.

**Any number of layers.**  The state after ``l`` layers (the bit sets, and ``l`` modulo the period of a
cycled list of patterns) determines every later one.  With the residual path fields only grow, so once a
whole period changes nothing every later layer equals the last; without it the states eventually cycle.
Every function here stops there and extrapolates, so ``L = 10**12`` layers cost what the layers take to
settle — at most ℓ periods with the residual path — and the bit sets are refused beforehand when they would
exceed the memory limit (:func:`formal.graphs.memory.stack_bytes`).

**Built-in patterns need no bit sets.**  This module is the exact analysis of edges, and the oracle of the
closed forms: one pattern a builder of :mod:`formal.graphs.patterns` made — a window, a dilated or strided
window, global + local, fixed, Swin, causal, full — is answered from its structure
(:mod:`formal.graphs.structure`) by :func:`formal.graphs.analysis.summary`,
:func:`~formal.graphs.analysis.layers_to_coverage` and :func:`~formal.graphs.analysis.max_path_length`, which
choose; the bit sets remain for BigBird's random keys, masks, user graphs and cycles of several patterns.

Examples
--------
>>> from formal.graphs import patterns
>>> p = patterns.sliding_window(16, 4)
>>> receptive_field_sizes(p, 3)[:, -1].tolist()   # the last position sees 4, 7, 10 inputs
[4, 7, 10]
>>> layers_to_coverage(p), max_path_length(p)
(5, 5)
>>> layers_to_coverage(patterns.dilated(16, 4, 2)) is None   # two classes that never meet
True
>>> int(receptive_field(p, 10**12).sum())             # settled after 5 layers: every earlier position
136

References
----------
.. [Vaswani2017] Vaswani et al. "Attention Is All You Need", NeurIPS 2017, Table 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, DomainError
from . import memory
from .edges import integer
from .pattern import Pattern, as_pattern
from .spans import span

__all__ = ["receptive_field", "receptive_field_sizes", "receptive_field_spread", "layers_to_coverage",
           "max_path_length", "summary", "Summary"]

WORDS = 64          # bits per word of a bit set
EDGE_BUDGET = 1 << 16  # edges gathered at once while propagating by segments
TABLE_BUDGET = 1 << 22  # entries of a table of runs of keys; more fragmented patterns propagate by segments


# ------------------------------------------------------------------------------------------ bit sets
def _layers(patterns) -> list:
    """One pattern, or a sequence used cyclically (layer l has ``patterns[l % len(patterns)]``)."""
    items = [patterns] if not isinstance(patterns, (list, tuple)) else list(patterns)
    if not items:
        raise ConfigError("give at least one pattern")
    items = [as_pattern(p) for p in items]
    for p in items:
        if not p.self_attention:
            raise ConfigError(f"{p!r} is cross-attention: its queries never become keys, so stacking layers does "
                              "not propagate along it (its receptive field is its in-neighbourhood)")
        if p.ell_x != items[0].ell_x:
            raise ConfigError(f"the layers' patterns have different lengths: {items[0].ell_x} and {p.ell_x}")
    return items


class _Stack:
    """The layers' patterns, cycled, each with its neighbour table: ``stack.step(bits, l, residual)``.

    Refused before anything is allocated when its bit sets (:func:`formal.graphs.memory.stack_bytes`) would
    exceed the memory limit.
    """

    def __init__(self, patterns):
        self.patterns = _layers(patterns)
        self.ell, self.period = self.patterns[0].ell_x, len(self.patterns)
        edges = sum(p.n_edges for p in self.patterns)
        memory.require(memory.stack_bytes(self.ell, edges), f"the layered analysis at ℓ = {memory.number(self.ell)} "
                       f"({memory.number(memory.state_bytes(self.ell))} bytes of bit sets per layer)")
        self.tables = [_runs(p) for p in self.patterns]

    def step(self, bits, layer, residual):
        i = layer % self.period
        return _step(bits, self.patterns[i], residual, self.tables[i])


def _identity(ell) -> np.ndarray:
    bits = np.zeros((ell, -(-ell // WORDS)), dtype=np.uint64)
    t = np.arange(ell)
    bits[t, t // WORDS] = np.left_shift(np.uint64(1), (t % WORDS).astype(np.uint64))
    return bits


def _runs(p: Pattern):
    """Each query's keys as maximal runs of consecutive positions, in a table ``(starts, stops)`` of shape
    (ℓ_x, most runs of a query), padded with empty runs; None when it would exceed TABLE_BUDGET entries
    (then propagation goes by segments of edges).  A window is one run per query, a full or causal
    pattern too, a random graph about one per edge."""
    if not p.n_edges:
        return np.zeros((p.ell_x, 0), np.int64), np.zeros((p.ell_x, 0), np.int64)
    first = np.ones(p.n_edges, dtype=bool)
    first[1:] = (p.keys[1:] != p.keys[:-1] + 1) | (p.queries[1:] != p.queries[:-1])
    begin = np.flatnonzero(first)
    end = np.append(begin[1:], p.n_edges)
    owner = p.queries[begin]
    per_query = np.bincount(owner, minlength=p.ell_x)
    if per_query.max() * p.ell_x > TABLE_BUDGET:
        return None
    slot = np.arange(begin.size) - (np.cumsum(per_query) - per_query)[owner]
    starts = np.zeros((p.ell_x, per_query.max()), dtype=np.int64)
    stops = np.zeros_like(starts)
    starts[owner, slot], stops[owner, slot] = p.keys[begin], p.keys[end - 1] + 1
    return starts, stops


def _range_or_table(bits, longest: int) -> np.ndarray:
    """Sparse table of ORs: ``table[j, i]`` is the OR of rows ``i … i + 2^j − 1`` (zeros past the end), so
    the OR of any run ``[a, b)`` is ``table[j, a] | table[j, b − 2^j]`` with ``2^j ≤ b − a < 2^{j+1}``; levels
    up to the ``longest`` run only."""
    table = np.empty((max(int(longest).bit_length(), 1), *bits.shape), dtype=bits.dtype)  # (levels, ℓ, words)
    table[0] = bits
    for j in range(1, table.shape[0]):
        half = 2 ** (j - 1)
        table[j] = table[j - 1]
        table[j, :-half] |= table[j - 1, half:]
    return table


def _step(bits, p: Pattern, residual: bool, runs=None) -> np.ndarray:
    """One layer: row q becomes the OR of the rows of its keys (and of itself, with the residual path)."""
    out = bits.copy() if residual else np.zeros_like(bits)
    if runs is not None:                                                  # two lookups per run of keys
        starts, stops = runs
        table = _range_or_table(bits, int((stops - starts).max(initial=0)))
        for a, b in zip(starts.T, stops.T):
            rows = np.flatnonzero(b > a)
            a, b = a[rows], b[rows]
            j = np.floor(np.log2(b - a)).astype(np.int64)                # 2^j ≤ run length < 2^(j+1)
            out[rows] |= table[j, a] | table[j, b - 2**j]
        return out
    degree = p.in_degree
    for q0, q1 in p.chunks(max(1, EDGE_BUDGET * 8 // bits.shape[1])):
        e0, e1 = p.indptr[q0], p.indptr[q1]
        if e0 == e1:
            continue
        rows = np.flatnonzero(degree[q0:q1]) + q0
        gathered = bits[p.keys[e0:e1]]                                     # (edges, words)
        out[rows] |= np.bitwise_or.reduceat(gathered, p.indptr[rows] - e0, axis=0)
    return out


def _popcount(bits) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(bits).sum(axis=1, dtype=np.int64)
    return np.unpackbits(bits.astype("<u8").view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)


def _to_bool(bits, ell) -> np.ndarray:
    unpacked = np.unpackbits(bits.astype("<u8").view(np.uint8), axis=1, bitorder="little")[:, :ell]
    return unpacked.astype(bool).T                                         # [k, q], as a mask


def _target(layers) -> np.ndarray:
    """What full coverage means: every earlier-or-equal position for a causal stack, every position otherwise."""
    ell = layers[0].ell_x
    if all(p.is_causal for p in layers):
        return np.tril(np.ones((ell, ell), dtype=bool))                    # row q: keys 0..q
    return np.ones((ell, ell), dtype=bool)


def _pack(rows_bool) -> np.ndarray:
    ell = rows_bool.shape[1]
    padded = np.zeros((rows_bool.shape[0], -(-ell // WORDS) * WORDS), dtype=bool)
    padded[:, :ell] = rows_bool
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def _digest(bits) -> bytes:
    return hashlib.blake2b(bits.tobytes(), digest_size=16).digest()


# -------------------------------------------------------------------------------------------- walking
@dataclass
class _Walk:
    """Where :func:`_walk` stopped: ``records[l]`` kept for layers ``0 … min(last, layers)``; every layer past
    ``last`` repeats layer ``start + (l − start) mod period``; ``bits`` is the state after ``last`` layers;
    ``covered`` the first layer that covers the target (None: none before the walk stopped); ``changed``
    the last layer that changed the state."""

    records: list
    last: int
    start: int
    period: int
    bits: np.ndarray
    covered: int | None
    changed: int
    cut: bool = False     # the walk reached its limit before the states repeated (coverage undetermined)

    def earlier(self, layer: int) -> int:
        """The layer walked that ``layer`` repeats."""
        return layer if layer <= self.last else self.start + (layer - self.start) % self.period


def settle_limit(ell: int, period: int) -> int:
    """The most layers a walk goes on past the layers asked, looking for coverage: with the residual path
    fields settle within ℓ periods, so this never cuts it; without it the states may take as many layers
    to repeat as the least common multiple of the graph's cycle lengths, which a user's graph can make
    astronomical — then coverage is reported undetermined instead of being searched for hours."""
    return 4 * ell * period + 64


def _walk(stack, layers, residual, *, keep=None, target=None, settle=False, progress=None) -> _Walk:
    """Propagate through ``stack`` layer by layer: ``layers`` layers, or — with ``settle`` — on until the
    target is covered or the states settle, keeping ``keep(state)`` for layers ``0 … layers``.

    It stops early where the rest is known: with the residual path at a fixed point (a whole period that
    changes nothing), without it at the first state (layer mod period, bits) seen before.
    """
    bits, seen, quiet, changed, l = _identity(stack.ell), {}, 0, 0, 0
    records = [keep(bits)] if keep else []
    covered = 0 if target is not None and _covers(bits, target) else None
    limit = max(layers, settle_limit(stack.ell, stack.period))
    while l < layers or (settle and covered is None):
        if l >= limit:                                                     # only a walk without the residual path
            return _Walk(records, l, l, 1, bits, covered, changed, cut=True)
        if not residual:
            state = (l % stack.period, _digest(bits))
            if state in seen:                                              # the states cycle from here
                return _Walk(records, l, seen[state], l - seen[state], bits, covered, changed)
            seen[state] = l
        new = stack.step(bits, l, residual)
        l += 1
        if progress is not None:
            progress(l)
        if np.array_equal(new, bits):
            quiet += 1
        else:
            quiet, changed, bits = 0, l, new
        if keep and l <= layers:
            records.append(keep(bits))
        if covered is None and target is not None and _covers(bits, target):
            covered = l
        if residual and quiet == stack.period:                            # a fixed point
            return _Walk(records, l, l, 1, bits, covered, changed)
    return _Walk(records, l, l, 1, bits, covered, changed)


def _covers(bits, target) -> bool:
    return np.array_equal(bits & target, target)


def _spread(bits) -> tuple:
    """``(min, mean, max)`` of the receptive-field sizes of a state; the mean is the exact total over the
    count, rounded once (as a structure's: numpy's float mean of large sizes is not)."""
    sizes = _popcount(bits)
    if not sizes.size:
        return 0, 0.0, 0
    return int(sizes.min()), int(sizes.sum(dtype=np.int64)) / sizes.size, int(sizes.max())


def _record(bits) -> tuple:
    return _spread(bits), span(bits)


class PerLayer(Sequence):
    """Per-layer values for layers 1..L, each computed when asked by ``value(layer)`` — a walk's record of the
    layer it repeats, or a structure's closed form — so ``L`` may be any number."""

    def __init__(self, layers, value):
        self.layers, self.value = layers, value

    def __len__(self):
        return self.layers

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.layers))]
        if not -self.layers <= i < self.layers:
            raise IndexError(f"layer index {i} is outside 0..{self.layers - 1}")
        return self.value(i % self.layers + 1)


# ------------------------------------------------------------------------------------------ the answers
def receptive_field(patterns, layers: int, *, residual: bool = True) -> np.ndarray:
    """``R[k, q]``: whether position ``q`` after ``layers`` layers depends on input position ``k`` (a mask)."""
    stack = _Stack(patterns)
    layers = integer("layers", layers, 0)
    memory.require(memory.mask_bytes(stack.ell, stack.ell, copies=2),
                   f"the {memory.number(stack.ell)}×{memory.number(stack.ell)} receptive field")
    walk = _walk(stack, layers, residual)
    bits = walk.bits
    if walk.earlier(layers) != walk.last:                                  # an earlier state of the cycle
        bits = _identity(stack.ell)
        for l in range(walk.earlier(layers)):
            bits = stack.step(bits, l, residual)
    return _to_bool(bits, stack.ell)


def receptive_field_sizes(patterns, layers: int, *, residual: bool = True) -> np.ndarray:
    """``(layers, ℓ)`` array: the receptive-field size of every position after each of layers 1..L (the
    layers after the states settle are copied, not computed)."""
    stack = _Stack(patterns)
    layers = integer("layers", layers, 0)
    memory.require(8 * (layers + 1) * (3 * stack.ell + 1), f"the receptive-field sizes of "
                   f"{memory.number(layers)} layers × {memory.number(stack.ell)} positions (int64)")
    walk = _walk(stack, layers, residual, keep=_popcount)
    table = np.array(walk.records, dtype=np.int64).reshape(len(walk.records), stack.ell)
    wanted = np.arange(1, layers + 1)
    return table[np.where(wanted <= walk.last, wanted, walk.start + (wanted - walk.start) % walk.period)]


def receptive_field_spread(patterns, layers: int, *, residual: bool = True) -> Sequence:
    """``(min, mean, max)`` of the receptive-field sizes after each of layers 1..L: a sequence of ``layers``
    tuples that keeps each layer walked once — no ``(L, ℓ)`` array, so ``layers`` may be any number."""
    return summary(patterns, layers, residual=residual, coverage=False).spread


def layers_to_coverage(patterns, *, residual: bool = True, progress=None):
    """The fewest layers after which every position depends on every position it may — every position, or
    every one at or before it when all layers are causal — or ``None`` when no depth achieves it (the
    positions split into classes that never exchange information, e.g. a purely dilated window).

    With the residual path and a finite answer, this is also :func:`max_path_length` (every pair that is
    connected at all is one it may reach).  ``progress``, if given, is called with each layer number.
    """
    stack = _Stack(patterns)
    walk = _walk(stack, 0, residual, target=_pack(_target(stack.patterns)), settle=True, progress=progress)
    if walk.cut:
        raise DomainError(undetermined(walk.last))
    return walk.covered


def undetermined(layers: int) -> str:
    return (f"coverage without the residual path is undetermined: not reached, and the states did not repeat, "
            f"within {layers:,} layers (the graph's cycles make them repeat only after their lengths' least "
            "common multiple)")


def max_path_length(patterns, *, progress=None) -> int:
    """The largest number of layers (with the residual path) any connected pair ``k → q`` needs: the maximum
    over such pairs of their shortest-path distance (Vaswani et al. 2017, Table 1).  ``progress``, if
    given, is called with each layer number."""
    return _walk(_Stack(patterns), 0, True, settle=True, progress=progress).changed


@dataclass(frozen=True)
class Summary:
    """What :func:`summary` finds in one walk of a stack.

    Attributes
    ----------
    spread : Sequence
        ``(min, mean, max)`` of the receptive-field sizes after each of layers 1..L.
    coverage : int or None
        :func:`layers_to_coverage` (None also when ``coverage=False`` was asked).
    max_path_length : int or None
        With the residual path and coverage asked, :func:`max_path_length`; otherwise None.
    span : Sequence or None
        With the residual path, the largest span of a field after each of layers 1..L: the last input
        position it holds minus the first, plus one (the positions between its ends, reached or not).
    """

    spread: Sequence
    coverage: int | None
    max_path_length: int | None
    undetermined: int | None = None   # the layers walked when coverage was left undetermined (see settle_limit)
    span: Sequence | None = None      # the largest span of a field after each layer (with the residual path)


def summary(patterns, layers: int, *, residual: bool = True, coverage: bool = True, progress=None) -> Summary:
    """Receptive-field spreads for layers 1..``layers``, and (``coverage=True``) the layers to full coverage
    and the maximum path length, from one walk: it goes on past ``layers`` only as far as coverage needs."""
    layers = integer("layers", layers, 0)
    stack = _Stack(patterns)
    target = _pack(_target(stack.patterns)) if coverage else None
    walk = _walk(stack, layers, residual, keep=_record, target=target, settle=coverage, progress=progress)
    longest = None
    if coverage and residual:
        # With the residual path, covering every allowed pair at L layers makes L the maximum path length;
        # otherwise the walk went on to the fixed point, after the last change.
        longest = walk.covered if walk.covered is not None else walk.changed
    return Summary(PerLayer(layers, lambda layer: walk.records[walk.earlier(layer)][0]),
                   walk.covered if coverage else None, longest, walk.last if walk.cut else None,
                   PerLayer(layers, lambda layer: walk.records[walk.earlier(layer)][1]) if residual else None)
