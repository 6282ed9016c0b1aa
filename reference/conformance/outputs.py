"""A function's result as the spec's outputs: numpy float64 arrays, one per output, or a :class:`Failed`
``type`` naming what it returned instead (None, text, a ragged nesting, complex numbers, objects, something
whose conversion raises), or ``shape`` for an output whose shape, read before any copy, is not the spec's (a
broadcast view of 10¹² entries).  numpy only: a worker process converts its function's result before sending
it back.
"""

from __future__ import annotations

import numpy as np

from .loading import describe

__all__ = ["Failed", "as_arrays"]


class Failed(Exception):
    """A property did not hold: ``property`` names it, the message says what was seen; ``missing``: the
    top-level module the function could not import, where that is why (an environment without torch);
    ``measured``: the ``|Δ|`` the property measured where it measures one (the figure its message quotes), so that
    the report's max error includes the failing example; ``what``: the message without that figure (what was
    seen, where), for a report that quotes one deviation of its own (``identify``'s nearest variants)."""

    def __init__(self, prop: str, message: str, *, missing: str | None = None, measured: float | None = None,
                 what: str | None = None):
        super().__init__(message)
        self.property, self.missing, self.measured = prop, missing, measured
        self.what = message if what is None else what


def _shape(value) -> tuple | None:
    """The shape an array or tensor states, read without converting it (None for anything else)."""
    if isinstance(value, np.ndarray) or hasattr(value, "detach") and hasattr(value, "shape"):
        return tuple(int(n) for n in value.shape)
    return None


def _bounded(shape, name: str, expected) -> None:
    """Fail ``shape`` before any copy when an output is not of the spec's shape ``expected`` (None: unknown):
    a broadcast view of 10¹² entries is a few bytes until it is converted."""
    if expected is not None and shape is not None and tuple(shape) != tuple(expected):
        raise Failed("shape", f"output {name} has shape {tuple(shape)}, the spec's is {tuple(expected)}")


def _convert(value, name: str, kind: str, expected) -> np.ndarray:
    """One output as a numpy array: numpy, torch on any device (duck-typed: no torch import here), lists.
    ``kind`` is the spec's: ``"real"`` (any floating dtype; integers are accepted as exact values) or
    ``"index"`` (integers)."""
    if value is None:
        raise Failed("type", f"output {name} is None, not an array")
    if isinstance(value, (str, bytes)):
        raise Failed("type", f"output {name} is a {type(value).__name__} ({str(value)[:40]!r}), not an array")
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):  # a torch tensor
        if value.is_complex():
            raise Failed("type", f"output {name} is complex ({value.dtype}); the spec's is real")
        _bounded(_shape(value), name, expected)
        value = value.detach().cpu()
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
    _bounded(array.shape, name, expected)
    return np.array(array, dtype=np.float64, subok=False)


def _as_array(value, name: str, kind: str, expected=None) -> np.ndarray:
    """:func:`_convert`, whatever the value does meanwhile: an ``__array__`` or ``__len__`` that raises or
    lies, a nesting that contains itself, a tensor on the meta device (no data) — each a failure of ``type``
    in one line."""
    try:
        return _convert(value, name, kind, expected)
    except Failed:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the object raises is the function's failure
        raise Failed("type", f"output {name} ({type(value).__name__}) cannot be read as an array of numbers "
                             f"({describe(exc)})") from None


def as_arrays(result, outputs, shapes=None) -> tuple:
    """The function's result as a tuple of float64 arrays, one per output; ``outputs`` is the spec's
    ``((name, kind), ...)``, ``shapes`` (optional) the spec's shape of each as the function lays it out: an
    output of another shape fails ``shape`` before it is copied.  An algorithm with several outputs takes a
    tuple (or list) of them."""
    try:
        values = _values(result, outputs)
    except Failed:
        raise
    except Exception as exc:  # noqa: BLE001 - a tuple whose __len__ or __iter__ raises
        raise Failed("type", f"its result ({type(result).__name__}) cannot be read as {len(outputs)} outputs "
                             f"({describe(exc)})") from None
    shapes = (None,) * len(outputs) if shapes is None else tuple(shapes)
    return tuple(_as_array(v, name, kind, shape) for v, (name, kind), shape in zip(values, outputs, shapes))


def _values(result, outputs) -> tuple:
    """The result as one value per output."""
    if len(outputs) > 1:
        if not isinstance(result, (tuple, list)) or len(result) != len(outputs):
            got = f"a {type(result).__name__}" + (f" of {len(result)}" if isinstance(result, (tuple, list)) else "")
            raise Failed("type", f"it must return a tuple of {len(outputs)} outputs "
                                 f"({', '.join(n for n, _ in outputs)}), got {got}")
        return tuple(result)
    return (result,)
