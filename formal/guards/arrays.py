"""Arrays from user input: the one check, shared by execution, masks and the graph executors, that an
argument holds real numbers (or integer indices) and not complex numbers, strings, datetimes or other
objects.  The specification takes real arrays; numpy would drop an imaginary part with a warning, or parse
a string, so the check comes first and its error names the argument and its dtype.

Examples
--------
>>> real_array("X", [[1, 2], [3, 4]]).dtype
dtype('float64')
>>> real_array("X", [1 + 2j])
Traceback (most recent call last):
...
formal.errors.ConfigError: X must be a real array, got complex128
>>> index_array("v", 2.5)
Traceback (most recent call last):
...
formal.errors.ConfigError: v must be an integer index (or an array of them), got float64
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["REAL_KINDS", "INDEX_KINDS", "checked_array", "real_array", "index_array"]

#: numpy dtype kinds of real numbers: booleans, signed and unsigned integers, floating point.
REAL_KINDS = "biuf"
#: numpy dtype kinds of integer indices (booleans are not indices).
INDEX_KINDS = "iu"

_ELEMENTS = {REAL_KINDS: numbers.Real, INDEX_KINDS: numbers.Integral}


def _element_types(array) -> list:
    """The Python types held by an object array, by name."""
    return sorted({type(x).__name__ for x in array.flat})


def checked_array(name: str, value, kinds: str, what: str) -> np.ndarray:
    """``value`` as a numpy array (a subclass kept) whose dtype kind is one of ``kinds``, unchanged otherwise.

    An object array is accepted when every element is a number of those kinds (``numbers.Real`` for
    :data:`REAL_KINDS`, ``numbers.Integral`` without bool for :data:`INDEX_KINDS`) and is converted to
    float64 or int64.

    Raises
    ------
    ConfigError
        ``"{name} must be {what}, got {dtype}"`` for any other dtype (complex, string, datetime, an object
        array holding other things), or for a nesting numpy cannot make an array of.
    """
    try:
        array = np.asanyarray(value)
    except (TypeError, ValueError) as exc:  # a ragged nesting
        raise ConfigError(f"{name} must be {what}, got {type(value).__name__}: {exc}") from None
    if array.dtype.kind in kinds:
        return array
    if array.dtype.kind == "O":
        element = _ELEMENTS.get(kinds, numbers.Real)
        if all(isinstance(x, element) and ("b" in kinds or not isinstance(x, bool)) for x in array.flat):
            try:
                return array.astype(np.float64 if "f" in kinds else np.int64)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ConfigError(f"{name} must be {what}: {exc}") from None
        raise ConfigError(f"{name} must be {what}, got an object array holding {', '.join(_element_types(array))}")
    raise ConfigError(f"{name} must be {what}, got {array.dtype}")


def real_array(name: str, value) -> np.ndarray:
    """``value`` as a float64 array (booleans and integers converted); see :func:`checked_array`."""
    return checked_array(name, value, REAL_KINDS, "a real array").astype(np.float64, copy=False)


def index_array(name: str, value, what: str = "an integer index (or an array of them)") -> np.ndarray:
    """``value`` as an integer array (its integer dtype kept); see :func:`checked_array`."""
    return checked_array(name, value, INDEX_KINDS, what)
