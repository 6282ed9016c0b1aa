"""Patterns from data: a pattern's name and parameters, checked against its schema, then built or reported.

:func:`report` is what ``graph --json`` prints, for any pattern of ``graph`` and its parameters as data
(:mod:`formal.graphs.schema`: ``n``, ``window``, ``grid``, …, and the report's ``layers``, ``heads``,
``d_head``); :func:`build` makes the pattern — its :class:`~formal.graphs.structure.Structure` for the
built-in patterns but BigBird's random keys (no edge is made), else its
:class:`~formal.graphs.pattern.Pattern`.  The ``graph`` command, the claims checker
(:mod:`formal.tools.claims`) and the docs' ``formal:pattern`` directive all go through :class:`GraphSpec`, so the
same data gives the same figures everywhere.  Nothing here sets the memory limit: every step that grows
with ℓ² or ``|E|`` is refused beyond the caller's (:func:`formal.guards.limits.memory_limit`).

Examples
--------
>>> from formal import graphs
>>> r = graphs.report("sliding-window", n=140_000, window=4096, layers=32)
>>> r["edges"], r["layers"]["receptive_field"][-1]["max"]
(565053440, 131041)
>>> graphs.build("strided", n=64, stride=8)
Structure('strided', ell=64, stride=8, part='both', 708 edges)
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Schema, check, schema_of

__all__ = ["GraphSpec", "spec", "build", "report"]


@dataclass(frozen=True)
class GraphSpec:
    """A pattern of ``graph`` (``schema``) with its parameters checked and completed (``values``, every
    parameter of the schema by name: None where the pattern decides)."""

    schema: Schema
    values: dict

    @classmethod
    def checked(cls, pattern, given, *, flags: bool = False) -> "GraphSpec":
        """``pattern`` with the parameters ``given`` (a mapping) checked against its schema
        (:func:`formal.graphs.schema.check`; ``flags``: from the command line, and named so)."""
        name, values = check(pattern, given, flags=flags)
        return cls(schema_of(name), values)

    @property
    def structured(self) -> bool:
        """Whether it is analysed from its structure, without edges, at any size (not random, not an edge list)."""
        from .structure import STRUCTURED
        return self.schema.builder in STRUCTURED

    def edge_count(self) -> int:
        """``|E|`` from the pattern's exact formula (:mod:`formal.graphs.counts`), without an edge made, at any
        size.  For BigBird's random keys it is the count of every draw — the ``r`` keys of a non-global query
        are drawn from those its window and the global positions do not already give it, so no drawn edge
        repeats a fixed one — and so also the expected count over the seeds.  An edge list is counted by
        reading it."""
        if self.structured or self.schema.builder == "edgelist":
            return self.build().n_edges
        from .counts import exact_count
        from .patterns import PATTERNS
        from .sparse import check_room
        v = self.values
        a = PATTERNS["random"].args(v["n"], **{p.name: v[p.name] for p in self.schema.parameters
                                                if p.role == "option"})
        check_room(a["ell"], a["n_random"], a["window"], a["n_global"])
        return exact_count("random", **a)

    def build(self):
        """The :class:`~formal.graphs.structure.Structure` of a built-in pattern (no edge is made), or the
        :class:`~formal.graphs.pattern.Pattern` of BigBird's random keys or an edge list (refused beyond the
        memory limit)."""
        v, builder = self.values, self.schema.builder
        if builder == "edgelist":
            from .edgelist import read
            return read(v["file"], v["n"])
        options = {p.name: v[p.name] for p in self.schema.parameters if p.role == "option"}
        if builder == "swin":
            sizes = v["grid"]
        elif builder in ("causal", "cross") and v["n_z"] is not None:
            sizes = (v["n_z"], v["n"])
        else:
            sizes = (v["n"], v["n"]) if builder == "cross" else (v["n"],)
        if self.structured:
            from .structure import describe
            return describe(builder, *sizes, **options)
        from .patterns import PATTERNS
        return PATTERNS[builder].build(*sizes, **options)

    def report(self, built=None, *, progress=None) -> dict:
        """What ``graph --json`` prints (without the picture): of ``built`` (what :meth:`build` returned, to
        build once), else built now; ``progress``, a stream for a live line on long layered analyses."""
        from .figures import collect
        v = self.values
        return collect(self.build() if built is None else built, layers=v["layers"], heads=v["heads"],
                       d_head=v["d_head"], progress=progress)


def spec(pattern, /, **parameters) -> GraphSpec:
    """``pattern`` (a name of ``graph``: ``"sliding-window"``, or its builder's: ``"sliding_window"``) with
    ``parameters`` checked against its schema (:func:`formal.graphs.schema.check`; ConfigError if wrong)."""
    return GraphSpec.checked(pattern, parameters)


def build(pattern, /, **parameters):
    """The pattern ``pattern`` with ``parameters`` (as :func:`spec` checks them), as :meth:`GraphSpec.build`."""
    return spec(pattern, **parameters).build()


def report(pattern, /, **parameters) -> dict:
    """What ``formal-transformers graph PATTERN --json`` prints for the same parameters (as :func:`spec`
    checks them), without a picture: edges and their formula, density, in-degrees, attention FLOPs,
    receptive field per layer, layers to full coverage, maximum path length."""
    return spec(pattern, **parameters).report()
