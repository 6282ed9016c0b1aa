"""An implementation under test: a Python function named on the command line, called as the spec is.

A target is ``path/to/file.py:function`` or ``module:function``.  It is called with keyword arguments named
as the spec names its inputs and parameters (``formal-transformers show NAME --params`` lists them):

- numpy float64 arrays in the paper's column layout (``layout="rows"``: every *input and output* of two or
  more axes — not the parameters — has its last two axes swapped, so ``X`` is ℓ×d, ``mask`` ℓ_x×ℓ_z and
  ``P`` ℓ×N_V);
- a mask always as an explicit 0/1 float64 array (1 = admitted), token ids as 0-based int64 arrays;
- models (Algorithms 8–15) take their parameters as one dict ``params`` of canonical names;
- sizes no array determines (``d_e``, ``ell_max`` of a fixed positional table) as ints, a random
  algorithm's ``seed`` as an int, and ``device`` (``"cpu"`` or ``"cuda"``) when the function accepts it.

It returns the output as an array-like (numpy, torch on any device, nested lists), a tuple for an
algorithm with several outputs.  Whatever it does wrong — raising, a wrong shape, something that is not an
array — becomes a :class:`Failed` naming the problem, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import warnings
from pathlib import Path

import numpy as np

from formal.errors import ConfigError, FormalError

__all__ = ["Target", "Failed", "TargetFault", "load", "LAYOUTS"]

LAYOUTS = ("columns", "rows")


class Failed(Exception):
    """A property did not hold: ``property`` names it, the message says what was seen."""

    def __init__(self, prop: str, message: str):
        super().__init__(message)
        self.property = prop


class TargetFault(FormalError):
    """The implementation is at fault before any property could run (it cannot be imported): exit 1."""

    status = 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load(text: str):
    """The function named by ``path/to/file.py:function`` or ``module:function``.

    A malformed name, a file or module that does not exist, or a missing attribute is the command line's
    fault (:class:`ConfigError`); a module that raises while importing, or an attribute that is not
    callable, is the implementation's (:class:`TargetFault`).
    """
    where, sep, name = text.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(f"target {text!r} must be path/to/file.py:function or module:function")
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where)
        if not path.is_file():
            raise ConfigError(f"target file {where!r} does not exist")
        module_name = f"_conform_target_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.resolve().parent))  # the file may import its neighbours
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise TargetFault(f"importing {where} raised {_first_line(exc)}") from None
        finally:
            sys.path.remove(str(path.resolve().parent))
    else:
        if importlib.util.find_spec(where.split(".")[0]) is None:
            raise ConfigError(f"no module named {where!r} (give path/to/file.py:function for a file)")
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            raise ConfigError(f"no module named {exc.name!r}") from None
        except Exception as exc:
            raise TargetFault(f"importing {where} raised {_first_line(exc)}") from None
    if not hasattr(module, name):
        raise ConfigError(f"{where} has no function {name!r}")
    function = getattr(module, name)
    if not callable(function):
        raise TargetFault(f"{text} is a {type(function).__name__}, not a function")
    return function


def _swap(array: np.ndarray) -> np.ndarray:
    return array.swapaxes(-1, -2) if array.ndim >= 2 else array


def _as_array(value, what: str) -> np.ndarray:
    """An array-like (numpy, torch on any device, lists) as a float64 numpy array."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu()
        value = value.double() if value.is_floating_point() else value
        value = value.numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise Failed("shape", f"{what} is a {type(value).__name__}, not an array of numbers ({_first_line(exc)})") \
            from None
    return array


class Target:
    """A function under test, called with the spec's arguments for ``algorithm``.

    ``target(arguments)`` takes the spec's arguments (column layout, resolved mask) and returns the
    function's outputs as a tuple of float64 arrays in the spec's layout.
    """

    def __init__(self, function, name: str, algorithm, *, layout: str = "columns", device: str = "cpu"):
        if layout not in LAYOUTS:
            raise ConfigError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
        self.function, self.name, self.algorithm = function, name, algorithm
        self.layout, self.device = layout, device
        self.model = algorithm.number >= 8
        self.inputs = {s.name for s in algorithm.inputs}
        self.params = {s.name for s in algorithm.params}
        try:
            self.signature = inspect.signature(function)
        except (TypeError, ValueError):
            self.signature = None
        accepted = {} if self.signature is None else self.signature.parameters
        self.takes_device = "device" in accepted or any(p.kind is p.VAR_KEYWORD for p in accepted.values())

    def arguments(self, arguments: dict) -> dict:
        """The keyword arguments the function receives for the spec's ``arguments``."""
        out, params = {}, {}
        for name, value in arguments.items():
            if name in self.params:
                params[name] = np.array(value, dtype=np.float64)
            elif name in self.inputs and isinstance(value, np.ndarray) and value.dtype.kind == "f":
                out[name] = _swap(value.copy()) if self.layout == "rows" else value.copy()
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
        try:
            self.signature.bind(**self.arguments(arguments))
        except TypeError as exc:
            raise Failed("signature", f"{self.name} cannot be called with the spec's arguments "
                                      f"({', '.join(self.arguments(arguments))}): {exc}") from None

    def __call__(self, arguments: dict) -> tuple:
        kwargs = self.arguments(arguments)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = self.function(**kwargs)
        except Exception as exc:
            raise Failed("runs", f"{self.name} raised {_first_line(exc)}") from None
        n = len(self.algorithm.outputs)
        if n > 1:
            if not isinstance(result, (tuple, list)) or len(result) != n:
                raise Failed("shape", f"{self.name} must return a tuple of {n} outputs "
                                      f"({', '.join(o.name for o in self.algorithm.outputs)}), got {type(result).__name__}")
            outputs = tuple(result)
        else:
            outputs = (result,)
        arrays = tuple(_as_array(o, f"output {o_spec.name}") for o, o_spec in zip(outputs, self.algorithm.outputs))
        return tuple(_swap(a) for a in arrays) if self.layout == "rows" else arrays

    def index(self, index: tuple) -> tuple:
        """A position in the spec's layout, as the function's layout writes it."""
        if self.layout == "rows" and len(index) >= 2:
            return index[:-2] + (index[-1], index[-2])
        return index

    def shape(self, shape: tuple) -> tuple:
        return self.index(tuple(shape))
