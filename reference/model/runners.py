"""Which torch function runs which of the spec's algorithms.

Each module of :mod:`reference.model` marks the functions that run an algorithm with :func:`runs`, beside the
code they drive; :func:`runner` finds them by importing every module of the package, so that adding an
algorithm touches its own torch module and nothing here.  A runner takes a
:class:`reference.model.execute.Call` (the spec's arguments, converted on demand) and returns the result in
the spec's layout (numpy float64).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

from formal.errors import ConfigError

__all__ = ["Runner", "runs", "runner", "supported", "documented", "EXPLICIT", "SDPA_PATHS", "stack_paths"]

#: The attention paths of a runner without attention (or with scores the fused kernels lack): explicit only.
EXPLICIT = ("explicit",)
#: The explicit path and ``scaled_dot_product_attention``.
SDPA_PATHS = ("explicit", "sdpa")


def stack_paths(options: dict) -> tuple:
    """The paths of a stack's variant: :data:`SDPA_PATHS`, or the explicit one alone where its attention soft-caps
    the scores (SDPA's scores cannot be reached)."""
    return EXPLICIT if options.get("score_cap") is not None else SDPA_PATHS


@dataclass(frozen=True)
class Runner:
    """The reference's run of the spec's ``algorithm``: ``run(call)``, and the attention ``paths`` it takes — a
    tuple, or a function of the variant's options giving one."""

    algorithm: str
    run: Callable
    paths: tuple | Callable = EXPLICIT

    def paths_for(self, options: dict) -> tuple:
        """The paths this runner takes for a variant with ``options``."""
        return self.paths(options) if callable(self.paths) else self.paths


def runs(algorithm: str, *, paths=EXPLICIT):
    """Mark a function as the reference's run of the spec's ``algorithm`` (a registry name), taking the
    attention ``paths`` (a tuple, or a function of the variant's options)."""
    def mark(function):
        function.runner = Runner(algorithm, function, paths)
        return function
    return mark


@functools.cache
def _found() -> dict:
    """Algorithm name → its :class:`Runner`, from every module of :mod:`reference.model`."""
    import reference.model as package
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            marked = getattr(value, "runner", None)
            if isinstance(marked, Runner) and marked.run is value:
                if found.setdefault(marked.algorithm, marked) is not marked:
                    raise RuntimeError(f"two runners of {marked.algorithm}: {found[marked.algorithm].run.__module__} "
                                       f"and {module.__name__}")
    return found


def supported() -> tuple:
    """The algorithms the reference runs, by name."""
    return tuple(_found())


def documented() -> dict:
    """Algorithm name → the dotted name of the function that runs it: what the docs' algorithm entries link to
    (the docs' links, :mod:`formal.tools.sphinx.related`)."""
    return {name: f"{r.run.__module__}.{r.run.__qualname__}" for name, r in _found().items()}


def runner(name: str) -> Runner:
    """The :class:`Runner` of the algorithm called ``name``; a ConfigError for one the reference does not run."""
    try:
        return _found()[name]
    except KeyError:
        raise ConfigError(f"the reference runs {', '.join(sorted(supported()))}; {name} is trained with "
                          "reference.model.training.train") from None
