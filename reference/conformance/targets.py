"""An implementation under test: a Python function, called as the spec is.

A target is ``path/to/file.py:function`` or ``module:function`` (the command line), or a function object (the
Python API).  It is called with keyword arguments named as the spec names its inputs and parameters
(``formal-transformers show NAME --params`` lists them):

- numpy float64 arrays in the paper's column layout (``layout="rows"``: every *input and output* of two or
  more axes — not the parameters — has its last two axes swapped, so ``X`` is ℓ×d, ``mask`` ℓ_x×ℓ_z and
  ``P`` ℓ×N_V);
- a mask always as an explicit 0/1 float64 array (1 = admitted), token ids as 0-based int64 arrays;
- models (Algorithms 8–15) take their parameters as one dict ``params`` of canonical names;
- an input the spec lets default (``Z``, which defaults to ``X``: self-attention) is left out when the
  function gives it a default of its own, and passed as its default (``Z = X``) when the function requires it;
- sizes no array determines (``d_e``, ``ell_max`` of a fixed positional table) as ints, a random
  algorithm's ``seed`` as an int, and ``device`` (``"cpu"`` or ``"cuda"``) when the function accepts it.

It returns the output as an array-like (numpy, torch on any device, nested lists), a tuple for an
algorithm with several outputs.  Whatever it does — raising, exiting, hanging, printing, returning None, a
string, a ragged list or complex numbers — becomes a :class:`Failed` naming the problem, never a traceback
(:mod:`reference.conformance.sandbox` runs it).
"""

from __future__ import annotations

import inspect

import numpy as np

from formal.errors import ConfigError, FormalError

from .. import needs_torch
from .sandbox import DEFAULT_TIMEOUT, Failed, InProcess, Isolated, LoadError

__all__ = ["Target", "Failed", "TargetFault", "load", "runner", "LAYOUTS"]

LAYOUTS = ("columns", "rows")


class TargetFault(FormalError):
    """The implementation is at fault before any property could run (it cannot be imported): exit 1."""

    status = 1


def _load_error(exc: LoadError, text: str) -> FormalError:
    """A function that cannot be loaded: for want of torch (the torch extra is not installed) or a name that
    is wrong, a usage error; its module's own fault, a TargetFault."""
    if exc.missing == "torch":
        return ConfigError(needs_torch(text))
    return ConfigError(str(exc)) if exc.usage else TargetFault(str(exc))


def load(text: str):
    """The function named by ``path/to/file.py:function`` or ``module:function``, imported here.

    A malformed name, a file or module that does not exist, or a missing attribute is the caller's fault
    (:class:`ConfigError`); a module that raises or exits while importing, or an attribute that is not
    callable, is the implementation's (:class:`TargetFault`).
    """
    from .sandbox import load as load_function
    try:
        return load_function(text)
    except LoadError as exc:
        raise _load_error(exc, text) from None


def runner(target, *, timeout=DEFAULT_TIMEOUT, isolate=None, max_memory=0):
    """A runner for ``target``: a name (``file.py:function``) runs in a worker process unless
    ``isolate=False``, its address space capped at ``max_memory`` bytes (0: no cap); a function object
    runs in this process."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0 or not np.isfinite(timeout)):
        raise ConfigError(f"timeout = {timeout!r} must be a positive number of seconds")
    if callable(target):
        if isolate:
            raise ConfigError("a function object runs in this process; give its name (file.py:function) to "
                              "isolate it")
        return InProcess(target, timeout=timeout)
    if not isinstance(target, str):
        raise ConfigError(f"target {target!r} must be a function or a name path/to/file.py:function")
    try:
        if isolate is not False:
            return Isolated(target, timeout=timeout, max_memory=max_memory)
        return InProcess(load(target), timeout=timeout)
    except LoadError as exc:
        raise _load_error(exc, target) from None


def _swap(array: np.ndarray) -> np.ndarray:
    return array.swapaxes(-1, -2) if array.ndim >= 2 else array


class Target:
    """A function under test, called with the spec's arguments for ``algorithm``.

    ``target(arguments)`` takes the spec's arguments (column layout, resolved mask) and returns the
    function's outputs as a tuple of float64 arrays in the spec's layout.
    """

    def __init__(self, run, name: str, algorithm, *, layout: str = "columns", device: str = "cpu"):
        if layout not in LAYOUTS:
            raise ConfigError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
        if not hasattr(run, "call"):  # a function object
            run = InProcess(run)
        self.run, self.name, self.algorithm = run, name, algorithm
        self.layout, self.device = layout, device
        self.model = algorithm.is_model
        self.inputs = {s.name for s in algorithm.inputs}
        self.grids = {s.name for s in algorithm.inputs if s.grid}              # channel-last in either layout
        self.grid_outputs = {s.name for s in algorithm.outputs if s.grid}
        self.params = {s.name for s in algorithm.params}
        self.outputs = tuple((o.name, o.kind) for o in algorithm.outputs)
        self.expected = None     # the spec's output shapes on the example at hand, as the function lays them out
        self.signature = run.signature
        accepted = {} if self.signature is None else self.signature.parameters
        variadic = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
        self.takes_device = "device" in accepted or variadic
        if device != "cpu" and self.signature is not None and not self.takes_device:
            raise ConfigError(f"--device {device} has no effect: {name} takes no device argument, so it runs where it "
                              f"runs (give it a device parameter, or leave --device out)")
        #: defaulted inputs the function requires: passed as their default (Z = X)
        self.required = {name: source for name, source in algorithm.defaults.items()
                         if name in accepted and accepted[name].default is inspect.Parameter.empty
                         and accepted[name].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                         inspect.Parameter.VAR_KEYWORD)}

    @property
    def printed(self) -> str:
        """What the function wrote to stdout and stderr so far (the last few thousand characters)."""
        return self.run.printed

    def arguments(self, arguments: dict) -> dict:
        """The keyword arguments the function receives for the spec's ``arguments``."""
        arguments = dict(arguments)
        for name, source in self.required.items():
            if arguments.get(name) is None:
                arguments[name] = arguments[source]
        out, params = {}, {}
        for name, value in arguments.items():
            if name in self.params:
                params[name] = np.array(value, dtype=np.float64)
            elif name in self.inputs and isinstance(value, np.ndarray) and value.dtype.kind == "f":
                rows = self.layout == "rows" and name not in self.grids
                out[name] = _swap(value.copy()) if rows else value.copy()
            elif isinstance(value, np.ndarray):
                out[name] = value.copy()
            else:
                out[name] = value
        if self.model:
            out["params"] = params
        else:
            out.update(params)
        if self.takes_device:
            out["device"] = self.device
        return out

    def check_signature(self, arguments: dict):
        """Fail ``signature`` when the function cannot be called with these keyword arguments."""
        if self.signature is None:
            return
        kwargs = self.arguments(arguments)
        try:
            self.signature.bind(**kwargs)
        except TypeError as exc:
            raise Failed("signature", f"{self.name} cannot be called with the spec's arguments "
                                      f"({', '.join(kwargs)}): {exc}") from None

    def expect(self, want):
        """The spec's outputs ``want`` on the example about to be checked (None: unknown): an output of
        another shape fails ``shape`` before it is copied (a broadcast view of 10¹² entries)."""
        self.expected = None if want is None else tuple(
            self.shape(np.shape(w), name) for w, (name, _) in zip(want, self.outputs))

    def __call__(self, arguments: dict) -> tuple:
        try:
            arrays = self.run.call(self.arguments(arguments), self.outputs, self.expected)
        except Failed as failed:  # the sandbox says "it …": name the function
            if failed.missing == "torch":   # it imports torch when called: the environment lacks it
                raise ConfigError(needs_torch(self.name)) from None
            message = str(failed)
            raise Failed(failed.property, f"{self.name} {message[3:]}" if message.startswith("it ")
                         else f"{self.name}: {message}") from None
        if self.layout != "rows":
            return arrays
        return tuple(a if name in self.grid_outputs else _swap(a) for a, (name, _) in zip(arrays, self.outputs))

    def index(self, index: tuple, output: str | None = None) -> tuple:
        """A position in the spec's layout, as the function's layout writes it (a grid ``output`` is the same
        in both)."""
        if self.layout == "rows" and len(index) >= 2 and output not in self.grid_outputs:
            return index[:-2] + (index[-1], index[-2])
        return index

    def shape(self, shape: tuple, output: str | None = None) -> tuple:
        return self.index(tuple(shape), output)

    def close(self):
        self.run.close()
