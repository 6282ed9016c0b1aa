"""A function's result as the spec's outputs: numpy float64 arrays, one per output, or a :class:`Failed`
``type`` naming what it returned instead (None, text, a ragged nesting, complex numbers, objects).  numpy
only: a worker process converts its function's result before sending it back.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Failed", "as_arrays"]


class Failed(Exception):
    """A property did not hold: ``property`` names it, the message says what was seen; ``missing``: the
    top-level module the function could not import, where that is why (an environment without torch)."""

    def __init__(self, prop: str, message: str, *, missing: str | None = None):
        super().__init__(message)
        self.property, self.missing = prop, missing


def _as_array(value, name: str, kind: str) -> np.ndarray:
    """One output as a numpy array: numpy, torch on any device (duck-typed: no torch import here), lists.
    ``kind`` is the spec's: ``"real"`` (any floating dtype; integers are accepted as exact values) or
    ``"index"`` (integers)."""
    if value is None:
        raise Failed("type", f"output {name} is None, not an array")
    if isinstance(value, (str, bytes)):
        raise Failed("type", f"output {name} is a {type(value).__name__} ({str(value)[:40]!r}), not an array")
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu()
        if value.is_complex():
            raise Failed("type", f"output {name} is complex ({value.dtype}); the spec's is real")
        value = (value.double() if value.is_floating_point() else value).numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        what = "a ragged nesting" if "inhomogeneous" in str(exc) else f"a {type(value).__name__}"
        raise Failed("type", f"output {name} is {what}, not an array of numbers") from None
    if array.dtype.kind == "c":
        raise Failed("type", f"output {name} is complex ({array.dtype}); the spec's is real")
    if kind == "index" and array.dtype.kind not in "iu":
        raise Failed("type", f"output {name} has dtype {array.dtype}; the spec's are integer token ids")
    if array.dtype.kind not in "biuf":
        raise Failed("type", f"output {name} has dtype {array.dtype} ({type(value).__name__}), not numbers")
    return array.astype(np.float64)


def as_arrays(result, outputs) -> tuple:
    """The function's result as a tuple of float64 arrays, one per output; ``outputs`` is the spec's
    ``((name, kind), ...)``.  An algorithm with several outputs takes a tuple (or list) of them."""
    if len(outputs) > 1:
        if not isinstance(result, (tuple, list)) or len(result) != len(outputs):
            got = f"a {type(result).__name__}" + (f" of {len(result)}" if isinstance(result, (tuple, list)) else "")
            raise Failed("type", f"it must return a tuple of {len(outputs)} outputs "
                                 f"({', '.join(n for n, _ in outputs)}), got {got}")
        values = tuple(result)
    else:
        values = (result,)
    return tuple(_as_array(v, name, kind) for v, (name, kind) in zip(values, outputs))
