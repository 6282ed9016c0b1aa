"""One record per algorithm: everything the checking side knows of it, found from the algorithm object.

A :class:`Record` gathers what is declared once, each piece beside the code it is about:

- from the formal object (:mod:`formal.algorithms`): the roles of its inputs — the sequence of tokens a
  property permutes or perturbs, the contexts attended over, which mask hides which context — whether output
  column t reads only tokens ≤ t (or ≥ t), how its outputs answer a permutation, whether its output is
  itself a sequence of tokens, and whether a training algorithm steps along its gradient (a loss);
- from the family module of :mod:`reference.catalogue`: its correct numpy implementation's factory,
  the measured seconds of its verify tasks, its mutants and
  controls;
- from its torch module in :mod:`reference.model` (needs torch, found only when asked for): the runner and
  the attention paths it takes.

>>> from reference.records import record
>>> record("attention").tokens, record("attention").hidden, record("dtransformer").causal
('X', {'mask': 'Z'}, 'forward')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from formal import algorithms
from formal.engine.algorithm import Algorithm, Loop
from formal.errors import ConfigError, shown

__all__ = ["Record", "record", "records", "chosen", "permute"]


@dataclass(frozen=True)
class Record:
    """What checking knows of ``algorithm`` (an algorithm object: a variant, its options fixed)."""

    algorithm: Algorithm

    @property
    def name(self) -> str:
        return self.algorithm.name

    # ------------------------------------------------------------------------------ from the formal object
    @property
    def tokens(self) -> str | None:
        """The input whose columns are the tokens a property permutes or perturbs, or None."""
        spec = self.algorithm.tokens
        return spec.name if spec is not None else None

    @property
    def contexts(self) -> tuple:
        """The inputs attended over."""
        return tuple(s.name for s in self.algorithm.with_role("context"))

    @property
    def hidden(self) -> dict:
        """Mask input → the context whose columns it hides."""
        return self.algorithm.hidden

    @property
    def causal(self) -> str | None:
        """``"forward"`` (output column t reads tokens ≤ t), ``"backward"`` (≥ t), or None."""
        return self.algorithm.causal

    @property
    def permutation(self) -> dict:
        """Input → ``"equivariant"`` or ``"invariant"``: how the outputs answer a permutation of its columns."""
        return self.algorithm.permutation

    @property
    def token_outputs(self) -> bool:
        """Whether the output is itself a sequence of tokens (generated ids: compared exactly)."""
        return all(o.role == "tokens" for o in self.algorithm.outputs)

    @property
    def loss(self) -> bool:
        """Whether a training algorithm of the registry steps along this algorithm's gradient."""
        return self.name in _trained()

    # ------------------------------------------------------------------------- from the mutants catalogue
    @property
    def implementation(self):
        """The :class:`~reference.catalogue.entry.Implementation`: its factory and measured seconds."""
        from .catalogue.catalogue import implementations
        return implementations()[self.name]

    @property
    def factory(self):
        """options → the correct numpy implementation conform calls."""
        return self.implementation.factory

    def seconds(self, profile: str, variant: bool = False) -> float | None:
        """The measured CPU seconds of ``verify``'s task of this algorithm under ``profile`` — of one variant's
        checks (``variant``), or of its checks drawn across its variants — or None where none is declared
        (:attr:`~reference.catalogue.entry.Implementation.seconds`)."""
        measured = self.implementation.seconds.get(profile)
        return None if measured is None else measured[1 if variant else 0]

    @property
    def mutants(self) -> tuple:
        from .catalogue.catalogue import mutants
        return tuple(e for e in mutants() if e.algorithm == self.name)

    @property
    def controls(self) -> tuple:
        from .catalogue.catalogue import controls
        return tuple(e for e in controls() if e.algorithm == self.name)

    # ------------------------------------------------------------------- from the torch reference (torch)
    @property
    def runner(self):
        """The :class:`~reference.model.runners.Runner` of its torch module (imports torch)."""
        from .model.runners import runner
        return runner(self.name)

    @property
    def paths(self) -> tuple:
        """The attention paths the reference takes for this variant (imports torch)."""
        return self.runner.paths_for(self.algorithm.options)


def _names() -> tuple:
    from formal.sampling.examples import EXAMPLE_ALGORITHMS
    return EXAMPLE_ALGORITHMS


def record(algorithm) -> Record:
    """The record of ``algorithm``: an algorithm object (that variant) or a registry name (its defaults)."""
    if isinstance(algorithm, str):
        if algorithm not in _names():
            raise ConfigError(f"no record of {shown(algorithm)}: the checked algorithms are {', '.join(_names())}")
        algorithm = algorithms.get(algorithm)
    elif not isinstance(algorithm, Algorithm) or algorithm.name not in _names():
        raise ConfigError(f"no record of {shown(getattr(algorithm, 'name', algorithm))}: the checked algorithms "
                          f"are {', '.join(_names())}")
    return Record(algorithm)


def records() -> tuple:
    """Every algorithm's record (its default variant), in the order ``verify`` checks them."""
    return tuple(record(name) for name in _names())


def chosen(only) -> list:
    """The algorithm names of ``only`` (a list, or None for all), each one with a record; an empty list is a
    ConfigError: a run that checks nothing must not pass."""
    names = list(_names() if only is None else only)
    if not names:
        raise ConfigError("only names no algorithm: give at least one (known: " + ", ".join(_names()) + ")")
    unknown = [n for n in names if n not in _names()]
    if unknown:
        raise ConfigError(f"verify knows no algorithm {unknown[0]!r}; known: {', '.join(_names())}")
    return names


@functools.cache
def _trained() -> frozenset:
    """The losses the registry's training algorithms take gradient steps along (their GradStepOp's callee)."""
    from formal.algorithms.training import GradStepOp

    def callees(lines):
        for line in lines:
            if isinstance(line, Loop):
                yield from callees(line.body)
            elif isinstance(getattr(getattr(line, "expr", None), "op", None), GradStepOp):
                yield line.expr.op.callee.name
    return frozenset(name for a in algorithms.ALGORITHMS.values() for name in callees(a.lines))


# ------------------------------------------------------------------------------------ permuting tokens
def permute(algorithm, arguments: dict, name: str, perm, *, masks: bool = False) -> dict:
    """``arguments`` with the columns of input ``name`` permuted by ``perm``, and with them every axis of every
    other input that runs over the same positions (as long, by the same size symbol: the token types beside
    their tokens, a score bias's query or key axis); an input left to its default (Z = X) lends its symbols to
    its source.  Arguments that are not arrays are left as they are, and so are masks unless ``masks``: then a
    mask's axes over the same positions move too (a graph's adjacency with its nodes, an attention mask's
    columns with its queries), so that the permuted call is the same computation renumbered.  A claim about
    permuting the tokens under a fixed mask (a causal one) leaves ``masks`` off."""
    symbol = algorithm.spec(name).shape[-1]
    same = {symbol}
    for default, source in algorithm.defaults.items():
        if arguments.get(default) is None:
            same |= {d for d, s in zip(algorithm.spec(default).shape, algorithm.spec(source).shape) if s == symbol}
    moved = dict(arguments)
    for spec in algorithm.inputs:
        value = arguments.get(spec.name)
        if (spec.kind == "mask" and not masks) or not isinstance(value, np.ndarray):
            continue
        for axis, dim in enumerate(spec.shape):
            if dim in same:
                value = np.take(value, perm, axis=axis)
        moved[spec.name] = value
    return moved
