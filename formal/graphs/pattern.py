"""An attention pattern: which keys each query attends to, as a graph with edges ``key → query``.

A :class:`Pattern` keeps its edges as two integer arrays sorted by query, then key (a compressed
sparse column layout of the spec's mask ``Mask ∈ {0,1}^{ℓ_z×ℓ_x}``), so patterns of millions of edges are
built and executed without a Python loop per edge.  :meth:`Pattern.to_networkx` gives the same pattern as a
networkx ``DiGraph`` for inspection and graph algorithms.

Nodes of the networkx form
--------------------------
- **self-attention** (keys and queries are the same tokens): node ``t`` for position ``t`` (0-based), with
  attributes ``position=t`` and ``side="self"``;
- **cross-attention** (bipartite): nodes ``("z", t)`` for the context (keys, ``side="z"``,
  ``bipartite=0``) and ``("x", t)`` for the primary sequence (queries, ``side="x"``, ``bipartite=1``).

An edge ``k → q`` means ``Mask[k, q] = 1``: query ``q`` attends to key ``k``.  Self-loops are never added:
a token attends to itself only where its pattern (or the user's graph) says so.

Examples
--------
>>> import numpy as np
>>> p = from_mask(np.tril(np.ones((3, 3))).T)
>>> p
Pattern('mask', ell=3, 6 edges)
>>> sorted(p.to_networkx().edges)
[(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
>>> p.in_degree.tolist()
[1, 2, 3]
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from ..core import masks
from ..errors import ConfigError
from ..guards.arrays import index_array
from . import memory
from .edges import integer

__all__ = ["Pattern", "Described", "from_pairs", "from_mask", "from_graph", "as_pattern", "to_mask", "plain"]

SIDES = ("z", "x")


def _index_array(values, what) -> np.ndarray:
    try:
        empty = np.size(values) == 0  # [] is float64 to numpy: no edges, whatever its dtype
    except ValueError:  # a ragged nesting: index_array names it
        empty = False
    if empty:
        return np.zeros(0, dtype=np.int64)
    array = index_array(what, values, "a 1-D array of integer positions")
    if array.ndim != 1:
        raise ConfigError(f"{what} must be a 1-D array of integer positions, got shape {array.shape}")
    return array.astype(np.int64, copy=False)


class Pattern:
    """The edges ``key → query`` of one attention layer over ``ℓ_z`` keys and ``ℓ_x`` queries.

    Built by the functions of :mod:`formal.graphs.patterns`, :func:`from_mask`, :func:`from_graph` or
    :func:`from_pairs`; immutable (its arrays are read-only).

    Attributes
    ----------
    keys, queries : numpy.ndarray of int64
        The edges, sorted by query then key; ``keys[e] → queries[e]``.
    indptr : numpy.ndarray of int64
        ``ℓ_x + 1`` offsets: the keys of query ``q`` are ``keys[indptr[q]:indptr[q + 1]]``.
    ell_z, ell_x : int
        Keys (context positions) and queries (primary positions).
    self_attention : bool
        Whether keys and queries are the same tokens (then ``ell_z == ell_x``).
    name : str
        The pattern's name (``"sliding_window"``, ``"mask"``, ``"graph"``).
    params : dict
        The arguments it was built with (``{"window": 128, "causal": True}``).
    built_from : tuple or None
        ``(name, arguments)`` when a builder of :mod:`formal.graphs.patterns` made it: its structure
        (:func:`formal.graphs.structure.of`) then answers the layered analysis without bit sets.
    """

    __slots__ = ("keys", "queries", "indptr", "ell_z", "ell_x", "self_attention", "name", "params", "built_from")

    def __init__(self, keys, queries, *, ell_z, ell_x, self_attention, name="graph", params=None):
        # Trusted constructor: arrays already validated, sorted and unique (see from_pairs).
        self.keys, self.queries = keys, queries
        self.ell_z, self.ell_x = ell_z, ell_x
        self.self_attention, self.name, self.params = self_attention, name, dict(params or {})
        self.built_from = None
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(queries, minlength=ell_x)))).astype(np.int64)
        for array in (self.keys, self.queries, self.indptr):
            array.flags.writeable = False

    # ------------------------------------------------------------------------------------------- counts
    @property
    def n_edges(self) -> int:
        """``|E|``: the score computations one head performs."""
        return int(self.keys.size)

    @property
    def density(self) -> float:
        """``|E|`` / (ℓ_z·ℓ_x): the fraction of the dense score matrix that is computed (the float nearest the
        exact fraction: ``/`` of Python ints rounds once)."""
        pairs = self.ell_z * self.ell_x
        return self.n_edges / pairs if pairs else 0.0

    @property
    def in_degree(self) -> np.ndarray:
        """Keys seen by each query (ℓ_x entries); 0 is an empty neighbourhood."""
        return np.diff(self.indptr)

    @property
    def out_degree(self) -> np.ndarray:
        """Queries that see each key (ℓ_z entries)."""
        return np.bincount(self.keys, minlength=self.ell_z)

    @property
    def is_causal(self) -> bool:
        """Whether every edge of a self-attention pattern goes from a key to a query at or after it."""
        return self.self_attention and bool(np.all(self.keys <= self.queries))

    # --------------------------------------------------------------------------------------- conversions
    def mask(self) -> np.ndarray:
        """The spec's ``Mask ∈ {0,1}^{ℓ_z×ℓ_x}`` as booleans: ``Mask[k, q]`` iff the edge ``k → q`` exists
        (ℓ_z·ℓ_x bytes: refused beyond the memory limit, see :mod:`formal.guards.limits`)."""
        size = f"{memory.number(self.ell_z)}×{memory.number(self.ell_x)}"
        memory.require(memory.mask_bytes(self.ell_z, self.ell_x), f"the {size} boolean mask of {self!r}")
        m = np.zeros((self.ell_z, self.ell_x), dtype=bool)
        m[self.keys, self.queries] = True
        return m

    def node(self, position: int, side: str):
        """The networkx node of ``position`` on ``side`` (``"z"`` for a key, ``"x"`` for a query)."""
        return int(position) if self.self_attention else (side, int(position))

    def to_networkx(self) -> nx.DiGraph:
        """A new ``DiGraph`` with every position as a node (isolated ones included) and an edge per key → query.

        networkx stores a graph as dicts, so this costs Python work and a few hundred bytes per edge and per
        node (refused beyond the memory limit); the patterns themselves and the executors never need it.
        """
        nodes = self.ell_x if self.self_attention else self.ell_z + self.ell_x
        memory.require(memory.networkx_bytes(self.n_edges, nodes), f"the networkx graph of {self!r}")
        G = nx.DiGraph(name=self.name, params=dict(self.params), ell_z=self.ell_z, ell_x=self.ell_x)
        if self.self_attention:
            G.add_nodes_from((t, {"position": t, "side": "self"}) for t in range(self.ell_x))
            G.add_edges_from(zip(self.keys.tolist(), self.queries.tolist()))
            return G
        for part, (side, ell) in enumerate((("z", self.ell_z), ("x", self.ell_x))):
            G.add_nodes_from(((side, t), {"position": t, "side": side, "bipartite": part}) for t in range(ell))
        G.add_edges_from(zip((("z", k) for k in self.keys.tolist()), (("x", q) for q in self.queries.tolist())))
        return G

    def chunks(self, max_edges: int):
        """Consecutive query ranges ``(q0, q1)`` covering all queries, each with at most ``max_edges`` edges
        (or one query, if that query alone has more)."""
        start = 0
        while start < self.ell_x:
            stop = int(np.searchsorted(self.indptr, self.indptr[start] + max_edges, side="right")) - 1
            stop = min(max(stop, start + 1), self.ell_x)
            yield start, stop
            start = stop

    def spans(self, max_edges: int):
        """For each chunk of :meth:`chunks` with an edge: ``(q0, q1, e0, e1, k0, k1)`` — its queries
        ``q0…q1−1``, its edges ``e0…e1−1`` and the range ``k0…k1−1`` its keys lie in.  A chunk whose range
        holds few more (query, key) pairs than it has edges (a window, a block) can run as a dense block."""
        bounds = np.array(list(self.chunks(max_edges)), dtype=np.int64).reshape(-1, 2)
        edges = self.indptr[bounds]                                        # (chunks, 2): e0, e1
        full = edges[:, 1] > edges[:, 0]
        bounds, edges = bounds[full], edges[full]
        if not len(bounds):
            return
        low = np.minimum.reduceat(self.keys, edges[:, 0])
        high = np.maximum.reduceat(self.keys, edges[:, 0]) + 1
        for (q0, q1), (e0, e1), k0, k1 in zip(bounds.tolist(), edges.tolist(), low.tolist(), high.tolist()):
            yield q0, q1, e0, e1, k0, k1

    # ------------------------------------------------------------------------------------------ identity
    def __eq__(self, other):
        if not isinstance(other, Pattern):
            return NotImplemented
        return ((self.ell_z, self.ell_x, self.self_attention) == (other.ell_z, other.ell_x, other.self_attention)
                and np.array_equal(self.keys, other.keys) and np.array_equal(self.queries, other.queries))

    __hash__ = None

    def __repr__(self):
        size = f"ell={self.ell_x}" if self.self_attention else f"ell_z={self.ell_z}, ell_x={self.ell_x}"
        params = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Pattern({self.name!r}, {size}{params}, {self.n_edges:,} edges)"

    def _repr_svg_(self) -> str:
        """In a notebook: the mask as a picture, keys down and queries across (:func:`formal.graphs.svg.mask_svg`)."""
        from .svg import mask_svg
        return mask_svg(self)


class Described:
    """A pattern known by its description, not its edges (:class:`formal.graphs.structure.Structure`):
    :meth:`build` makes them, and :func:`as_pattern` calls it."""

    def build(self) -> Pattern:
        raise NotImplementedError


def check_pairs(ell_z: int, ell_x: int) -> None:
    """Refuse sizes whose ``ℓ_z·ℓ_x`` pairs int64 cannot number: edges are sorted by ``q·ℓ_z + k``."""
    if ell_z * ell_x > 2**63:
        raise ConfigError(f"ell_z × ell_x = {memory.number(ell_z)} × {memory.number(ell_x)} is more pairs than int64 "
                          "edge indices can number (2^63)")


def plain(p: Pattern) -> Pattern:
    """The same edges as ``p``, under its name and parameters, but not marked as built: no structure
    describes it, so the layered analysis walks its bit sets (the oracle the closed forms are checked
    against)."""
    return from_pairs(p.keys, p.queries, ell_z=p.ell_z, ell_x=p.ell_x, self_attention=p.self_attention,
                      name=p.name, params=p.params)


def from_pairs(keys, queries, *, ell_z, ell_x=None, self_attention=None, name="graph", params=None,
               duplicates="error", owned=False) -> Pattern:
    """A pattern from edge arrays ``keys[e] → queries[e]`` (any order).

    ``ell_x`` defaults to ``ell_z``; ``self_attention`` defaults to ``ell_z == ell_x``.  A repeated edge is
    an error (``duplicates="error"``: attention has no edge weights to sum) or merged (``"merge"``, for
    patterns built as unions of parts).  ``owned``: the arrays are the caller's to give away (a builder's, a
    reader's), so already sorted ones are kept without a copy.  The sort's temporaries are estimated first (see
    :mod:`formal.guards.limits`).
    """
    ell_z = integer("ell_z", ell_z, 0)
    ell_x = ell_z if ell_x is None else integer("ell_x", ell_x, 0)
    if self_attention is None:
        self_attention = ell_z == ell_x
    if self_attention and ell_z != ell_x:
        raise ConfigError(f"a self-attention pattern has ell_z = ell_x, got ell_z = {ell_z}, ell_x = {ell_x}")
    if duplicates not in ("error", "merge"):
        raise ConfigError(f"duplicates = {duplicates!r}; known: error, merge")
    k, q = _index_array(keys, "keys"), _index_array(queries, "queries")
    if k.shape != q.shape:
        raise ConfigError(f"keys and queries must have one entry per edge, got {k.size} and {q.size}")
    sizes = (f"{memory.number(k.size)} edges over ℓ_z = {memory.number(ell_z)}, ℓ_x = {memory.number(ell_x)} "
             "positions")
    memory.require(memory.pairs_bytes(k.size, ell_x, sort=False, owned=owned), f"checking {sizes}")
    check_pairs(ell_z, ell_x)
    for array, ell, what in ((k, ell_z, "key"), (q, ell_x, "query")):
        bad = (array < 0) | (array >= ell)
        if np.any(bad):
            raise ConfigError(f"{what} position {int(array[np.argmax(bad)])} is outside the sequence 0..{ell - 1} "
                              f"(ell = {ell})")
    linear = q * max(ell_z, 1) + k
    step = np.diff(linear)
    if np.all(step > 0):                                                  # already sorted and unique (builders)
        if not owned:                                                     # the pattern will make them read-only
            k, q = k.copy(), q.copy()
        return Pattern(k, q, ell_z=ell_z, ell_x=ell_x, self_attention=bool(self_attention), name=name,
                       params=params)
    memory.require(memory.pairs_bytes(k.size, ell_x, sort=True), f"sorting {sizes}")
    order = np.argsort(linear, kind="stable")
    linear = linear[order]
    repeated = np.flatnonzero(np.diff(linear) == 0)
    if repeated.size:
        if duplicates == "error":
            e = order[repeated[0]]
            raise ConfigError(f"duplicate edge {int(k[e])} → {int(q[e])}: attention has no edge weights to sum; "
                              "give each edge once")
        linear = np.unique(linear)
    return Pattern(linear % max(ell_z, 1), linear // max(ell_z, 1), ell_z=ell_z, ell_x=ell_x,
                   self_attention=bool(self_attention), name=name, params=params)


def from_mask(mask, *, ell_z=None, ell_x=None, self_attention=None, name="mask") -> Pattern:
    """The pattern of a mask ``Mask ∈ {0,1}^{ℓ_z×ℓ_x}`` (rows keys, columns queries; a name such as
    ``"causal"`` needs ``ell_z`` and ``ell_x``).  A square mask is self-attention unless
    ``self_attention=False``; giving ``ell_z``/``ell_x`` checks the mask's shape.  The dense mask a name
    resolves to, and the pattern's edges, are estimated first (see :mod:`formal.guards.limits`)."""
    named = isinstance(mask, str) or mask is None
    if named:
        if ell_z is None or ell_x is None:
            raise ConfigError(f"mask {mask!r} needs ell_z and ell_x")
        shape = (integer("ell_z", ell_z, 0), integer("ell_x", ell_x, 0))
    else:
        shape = np.shape(mask)
        if len(shape) != 2:
            raise ConfigError(f"a mask is a 2-D ell_z×ell_x array, got shape {shape}")
        shape = (shape[0] if ell_z is None else ell_z, shape[1] if ell_x is None else ell_x)
    if self_attention is None:
        self_attention = shape[0] == shape[1]
    if self_attention and shape[0] != shape[1]:
        raise ConfigError(f"a self-attention mask is square, got shape {shape}")
    size = f"{memory.number(shape[0])}×{memory.number(shape[1])}"
    # a name is resolved to a boolean array; an array of numbers is compared with 0 and 1 (two more)
    memory.require(memory.mask_bytes(*shape, copies=1 if named or getattr(mask, "dtype", None) == np.bool_ else 3),
                   f"the {size} mask {mask!r}" if named else f"checking the {size} mask")
    m = masks.resolve(mask, *shape)
    edges = int(np.count_nonzero(m))
    memory.require(memory.mask_bytes(*shape, edges=edges),
                   f"the pattern of the {size} mask ({memory.number(edges)} edges)")
    q, k = np.nonzero(m.T)  # sorted by query, then key
    return Pattern(k.astype(np.int64, copy=False), q.astype(np.int64, copy=False), ell_z=shape[0], ell_x=shape[1],
                   self_attention=bool(self_attention), name=name)


def to_mask(pattern) -> np.ndarray:
    """The spec's boolean ``ℓ_z×ℓ_x`` mask of a pattern or graph (see :func:`as_pattern`)."""
    return as_pattern(pattern).mask()


def _position(node, ell, what):
    if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, np.integer)):
        raise ConfigError(f"{what} node {node!r} is not a position: a self-attention graph has integer nodes "
                          f"0..{ell - 1}")
    if not 0 <= node < ell:
        raise ConfigError(f"node {node!r} is outside the sequence 0..{ell - 1} (ell = {ell})")
    return int(node)


def _is_cross_node(node):
    return isinstance(node, tuple) and len(node) == 2 and node[0] in SIDES


def from_graph(G, *, ell=None, ell_z=None, ell_x=None, name="graph") -> Pattern:
    """The pattern of a networkx graph (adjacency-restricted attention, as in graph attention networks).

    A ``DiGraph`` edge ``k → q`` lets query ``q`` attend to key ``k``; an undirected ``Graph`` edge lets each
    end attend to the other.  Nodes are positions ``0..ℓ−1`` (self-attention) or ``("z", t)``/``("x", t)``
    (cross-attention).  ``ell`` defaults to the graph's own ``ell_x`` attribute or its number of nodes.  No
    self-loop is added: a node attends to itself only if the graph has the loop.

    Raises
    ------
    ConfigError
        For a multigraph (duplicate edges are rejected, not summed), a node outside the sequence, or
        a node that is not a position.
    """
    if isinstance(G, (nx.MultiGraph, nx.MultiDiGraph)):
        raise ConfigError(f"{type(G).__name__}: duplicate edges are rejected, not summed; give a Graph or DiGraph")
    if not isinstance(G, nx.Graph):
        raise ConfigError(f"expected a networkx Graph or DiGraph, got {type(G).__name__}")
    edges = list(G.edges)
    if not G.is_directed():
        edges += [(v, u) for u, v in edges if u != v]
    cross = any(_is_cross_node(n) for n in G.nodes)
    if cross:
        ell_z = G.graph.get("ell_z") if ell_z is None else ell_z
        ell_x = G.graph.get("ell_x") if ell_x is None else ell_x
        counts = {side: sum(1 for n in G.nodes if _is_cross_node(n) and n[0] == side) for side in SIDES}
        ell_z, ell_x = (counts["z"] if ell_z is None else ell_z), (counts["x"] if ell_x is None else ell_x)
        for n in G.nodes:
            if not _is_cross_node(n):
                raise ConfigError(f"node {n!r} of a cross-attention graph is not ('z', t) or ('x', t)")
            _position(n[1], ell_z if n[0] == "z" else ell_x, f"{n[0]}-side")
        for u, v in edges:
            if u[0] != "z" or v[0] != "x":
                raise ConfigError(f"edge {u!r} → {v!r} of a cross-attention graph must go from a key ('z', t) to a "
                                  "query ('x', t)")
        keys, queries = [u[1] for u, _ in edges], [v[1] for _, v in edges]
        return from_pairs(np.array(keys, dtype=np.int64), np.array(queries, dtype=np.int64), ell_z=ell_z,
                          ell_x=ell_x, self_attention=False, name=name)
    if ell is None:
        ell = G.graph.get("ell_x", G.number_of_nodes())
    ell = integer("ell", ell, 0)
    for n in G.nodes:
        _position(n, ell, "a")
    keys = np.array([u for u, _ in edges], dtype=np.int64)
    queries = np.array([v for _, v in edges], dtype=np.int64)
    return from_pairs(keys, queries, ell_z=ell, self_attention=True, name=name)


def as_pattern(obj, *, ell_z=None, ell_x=None, inputs=None) -> Pattern:
    """A :class:`Pattern` from a pattern, a :class:`Described` one such as a
    :class:`~formal.graphs.structure.Structure` (built), a networkx graph, or a 0/1 mask; ``ell_z``/``ell_x``,
    when given, are checked (a mask of the wrong shape or a graph of the wrong size is a ConfigError that
    names the ``inputs`` — e.g. ``("Z", "X")`` — whose columns set them)."""
    if obj is None:
        raise ConfigError("pattern is None: give a Pattern, a networkx graph or a 0/1 mask")
    if isinstance(obj, Described):
        obj = obj.build()
    if isinstance(obj, Pattern):
        pattern = obj
    elif isinstance(obj, nx.Graph):
        pattern = from_graph(obj, ell=ell_x if ell_z == ell_x else None, ell_z=ell_z, ell_x=ell_x)
    else:
        return from_mask(obj, ell_z=ell_z, ell_x=ell_x)
    for i, (name, role, want, got) in enumerate((("ell_z", "keys", ell_z, pattern.ell_z),
                                                  ("ell_x", "queries", ell_x, pattern.ell_x))):
        if want is not None and want != got:
            source = f"{inputs[i]} has {want} columns" if inputs else f"{want} was expected"
            raise ConfigError(f"the pattern has {name} = {got} {role} but {source}")
    return pattern
