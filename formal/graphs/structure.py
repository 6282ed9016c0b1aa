"""The built-in patterns by their structure: counts, degrees and stacks of layers without an edge in memory.

A sliding window over a million tokens has four billion edges, and its receptive field after ``L`` layers is
still one interval per position: ``[q − L(w − 1), q]``.  A :class:`Structure` describes a built-in pattern by
what it is made of — bands of keys around each query (windows, dilated windows in δ classes of positions, the
causal and full patterns), blocks (the fixed pattern's, Swin's windows), and hubs (global positions, the
strided and fixed patterns' summary keys; :mod:`formal.graphs.shapes`) — and derives from it, with Python
integers, what :mod:`formal.graphs.layered` computes with bit sets:

- the edge count (the pattern's exact formula, :data:`~formal.graphs.patterns.PATTERNS`), the density, and
  the in-degrees' minimum, mean, maximum and empty neighbourhoods;
- the receptive-field sizes' minimum, mean and maximum after any number of layers, with and without the
  residual path, the layers to full coverage, and the maximum path length.

Everything is a closed form in Python integers — sums of ``min(i, r)``, of ``⌊q/s⌋``, of a
piecewise-linear size taken at its corners — so ℓ = 10¹² costs what ℓ = 10 does, and no array is made.
Edges are made only by :meth:`Structure.build` — to execute, draw or export — and the tests check every
figure here against the bit-set analysis of the built pattern, for every small size and parameter.

A pattern the builders of :mod:`formal.graphs.patterns` made carries its structure (:func:`of`), so
:func:`formal.graphs.analysis.summary`, :func:`~formal.graphs.analysis.layers_to_coverage` and
:func:`~formal.graphs.analysis.max_path_length` take this path for it; BigBird's random keys, masks and user
graphs keep the exact bit-set analysis of :mod:`formal.graphs.layered`.

Examples
--------
>>> s = describe("sliding_window", 140_000, 4096)
>>> s.n_edges
565053440
>>> s.spread(32)             # receptive field after 32 layers: min, mean, max
(1, 69713.812, 131041)
>>> s.layers_to_coverage(), s.max_path_length()
(35, 35)
"""

from __future__ import annotations

from ..errors import ConfigError
from . import memory
from .counts import exact_count
from .layered import PerLayer, Summary
from .pattern import Described
from .patterns import PATTERNS
from .shapes import shape_of

__all__ = ["Structure", "describe", "of", "STRUCTURED"]

#: The built-in patterns described by their structure (BigBird's random keys have none to use).
STRUCTURED = ("full", "causal", "cross", "sliding_window", "dilated", "global_local", "strided", "fixed", "swin")


def _params(name, a) -> dict:
    """The parameters a built pattern records (:attr:`Pattern.params`)."""
    if name == "causal":
        return {} if a["ell_z"] == a["ell_x"] else {"align": a["align"]}
    if name == "swin":
        return {k: a[k] for k in ("height", "width", "window")} | ({"shift": a["shift"]} if a["shifted"] else {})
    return {k: v for k, v in a.items() if k not in ("ell", "ell_z", "ell_x")}


def _count_args(name, a) -> dict:
    """The arguments of the pattern's edge-count formula."""
    if name == "causal" and a["ell_z"] == a["ell_x"]:
        return {"ell": a["ell_z"]}
    if name == "swin":
        extra = {"shift": a["shift"]} if a["shifted"] else {}
        return {"ell": a["height"] * a["width"], "height": a["height"], "width": a["width"],
                "window": a["window"], **extra}
    return dict(a)


# ------------------------------------------------------------------------------------------ the class
class Structure(Described):
    """A built-in pattern by its structure: what :class:`~formal.graphs.pattern.Pattern` reports about its
    edges and :mod:`~formal.graphs.layered` about stacks of it, derived without edges.

    Made by :func:`describe` (from a pattern's name and arguments) or :func:`of` (from a built pattern).

    Attributes
    ----------
    name, params, ell_z, ell_x, self_attention
        As the built pattern's.
    n_edges : int
        ``|E|``, from the pattern's exact edge-count formula.
    args : dict
        The builder's arguments, checked: ``build()`` calls the builder with them.
    """

    def __init__(self, name: str, args: dict):
        self.name, self.args = name, dict(args)
        self.params = _params(name, self.args)
        if name == "swin":
            self.ell_z = self.ell_x = self.args["height"] * self.args["width"]
        elif "ell" in self.args:
            self.ell_z = self.ell_x = self.args["ell"]
        else:
            self.ell_z, self.ell_x = self.args["ell_z"], self.args["ell_x"]
        self._shape = shape_of(name, self.args)
        self.self_attention = self._shape is not None
        self.n_edges = exact_count(name, **_count_args(name, self.args))

    # ------------------------------------------------------------------------------------------- counts
    @property
    def density(self) -> float:
        """``|E|`` / (ℓ_z·ℓ_x): the float nearest the exact fraction (``/`` of Python ints rounds once)."""
        pairs = self.ell_z * self.ell_x
        return self.n_edges / pairs if pairs else 0.0

    @property
    def is_causal(self) -> bool:
        """Whether every edge goes from a key to a query at or after it (self-attention only)."""
        return self.self_attention and self._shape.causal

    def in_degree_spread(self) -> dict:
        """``{"min", "mean", "max", "empty"}`` of the keys each query sees (``empty``: queries that see none):
        exact ints, and the mean ``|E|/ℓ_x`` the float nearest the exact fraction."""
        mean = self.n_edges / self.ell_x if self.ell_x else 0.0
        if self._shape is not None:
            least, _, most = self._shape.spread(1, False)
            return {"min": least, "mean": mean, "max": most, "empty": self._shape.empty() if self.ell_x else 0}
        if not self.ell_x:
            return {"min": 0, "mean": 0.0, "max": 0, "empty": 0}
        if self.name == "cross":
            keys = self.ell_z
            return {"min": keys, "mean": mean, "max": keys, "empty": self.ell_x if not keys else 0}
        from ..core.masks import causal_shift
        shift = causal_shift(self.ell_z, self.ell_x, self.args["align"])
        stop = lambda q: min(max(q + 1 + shift, 0), self.ell_z)           # noqa: E731 (grows with q)
        return {"min": stop(0), "mean": mean, "max": stop(self.ell_x - 1),
                "empty": self.ell_x if not self.ell_z else min(max(-shift, 0), self.ell_x)}

    # --------------------------------------------------------------------------------- stacks of layers
    def _layered(self):
        if self._shape is None:
            raise ConfigError(f"{self!r} is cross-attention: its queries never become keys, so stacking layers "
                              "does not propagate along it (its receptive field is its in-neighbourhood)")
        return self._shape

    def spread(self, layers: int, *, residual: bool = True) -> tuple:
        """``(min, mean, max)`` of the receptive-field sizes after ``layers`` layers: exact ints, and the mean
        the float nearest the exact total over ℓ."""
        least, total, most = self._layered().spread(layers, residual)
        return least, (total / self.ell_x if self.ell_x else 0.0), most

    def span(self, layers: int) -> int:
        """The largest span of a receptive field after ``layers`` layers (:meth:`formal.graphs.shapes.Shape.span`):
        the last input position minus the first, plus one."""
        return self._layered().span(layers)

    def layers_to_coverage(self, *, residual: bool = True):
        """As :func:`formal.graphs.layered.layers_to_coverage` of the built pattern: None when no depth covers."""
        return self._layered().coverage(residual)

    def max_path_length(self) -> int:
        """As :func:`formal.graphs.layered.max_path_length` of the built pattern."""
        return self._layered().changed()

    def summary(self, layers: int, *, residual: bool = True, coverage: bool = True):
        """As :func:`formal.graphs.layered.summary` of the built pattern, without edges."""
        shape = self._layered()
        spreads = PerLayer(layers, lambda layer: self.spread(layer, residual=residual))
        spans = PerLayer(layers, self.span) if residual else None
        if not coverage:
            return Summary(spreads, None, None, span=spans)
        covered = shape.coverage(residual)
        return Summary(spreads, covered, shape.changed() if residual else None, span=spans)

    # ------------------------------------------------------------------------------------------- edges
    def build(self):
        """The pattern itself, with its edges (refused beyond the memory limit, as any build)."""
        return PATTERNS[self.name].build(**self.args)

    def __repr__(self):
        size = f"ell={self.ell_x}" if self.self_attention else f"ell_z={self.ell_z}, ell_x={self.ell_x}"
        params = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Structure({self.name!r}, {size}{params}, {memory.number(self.n_edges)} edges)"


def describe(name: str, /, *args, **kwargs) -> Structure:
    """The structure of the built-in pattern ``name`` with the builder's arguments (checked as the builder
    checks them), e.g. ``describe("sliding_window", 10**6, 4096)``."""
    if name not in STRUCTURED:
        known = ", ".join(STRUCTURED)
        raise ConfigError(f"the {name!r} pattern has no structure to analyse; known: {known}")
    return Structure(name, PATTERNS[name].args(*args, **kwargs))


def of(pattern) -> Structure | None:
    """The structure of a pattern a builder of :mod:`formal.graphs.patterns` made, or None (a mask, a user
    graph, BigBird's random keys, or a pattern assembled from arrays under a built-in name)."""
    built = getattr(pattern, "built_from", None)
    if built is None or built[0] not in STRUCTURED:
        return None
    return Structure(*built)
