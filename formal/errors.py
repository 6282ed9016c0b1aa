"""The errors of the package: every one names what is wrong and the value it had."""

from __future__ import annotations

import functools

__all__ = ["FormalError", "ShapeError", "ConfigError", "DomainError", "ResourceError", "shown", "one_of", "integers"]


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters: a value from a file or a
    command line may be 100 KB of text or a 5000-digit integer (which Python will not even print).

    >>> shown("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' (100 characters)"
    >>> shown(10**5000)
    'an integer of 5001 digits'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 128:
        return f"an integer of {_digits(abs(value))} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile object's __repr__
        return f"<a {type(value).__name__}>"
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return text[:limit - 2] + "…" + text[-1] * (text[-1] in "'\"])}") + size


def _digits(n: int) -> int:
    """The number of decimal digits of ``n`` > 0, without converting it to text (Python refuses past 4300)."""
    import math
    guess = int(n.bit_length() * math.log10(2)) + 1
    return guess if n >= 10 ** (guess - 1) else guess - 1


class FormalError(Exception):
    """Base class of every error the specification raises on bad input."""


class ShapeError(FormalError):
    """A tensor's size disagrees with what an algorithm line needs.

    Attributes
    ----------
    algorithm : str
        ``"Algorithm 4 (attention)"``.
    line : int or str
        The paper's line number, or ``"signature"`` for the inputs.
    symbol : str
        The dimension symbol (or expression) that disagrees.
    expected
        What the symbol was bound to (an int at execution, an expression at derivation).
    got
        What was met instead.
    """

    def __init__(self, *, algorithm, line, symbol, expected, got, detail=""):
        self.algorithm, self.line, self.symbol = algorithm, line, symbol
        self.expected, self.got, self.detail = expected, got, detail
        where = f"{algorithm}, line {line}" if line != "signature" else f"{algorithm}, signature"
        message = f"{where}: {symbol} is bound to {expected} but {got} was met"
        super().__init__(f"{message} ({detail})" if detail else message)


class ConfigError(FormalError, ValueError):
    """An impossible configuration: the message names the violated constraint and the values."""


class DomainError(FormalError, ValueError):
    """A value outside the domain an algorithm is defined on (a token id out of range,
    a constant column under eps = 0, an empty neighbourhood under ``empty="error"``)."""


class ResourceError(FormalError):
    """A computation refused before it starts: its estimated memory exceeds the limit
    (:func:`formal.guards.limits.max_memory`).  The message gives the estimate, the limit and how to raise it.

    Attributes
    ----------
    needed, limit : int
        The estimate and the limit, in bytes.
    """

    def __init__(self, message, *, needed, limit):
        self.needed, self.limit = needed, limit
        super().__init__(message)

    def __reduce__(self):
        """Pickled with its figures (they are keyword-only), so a refusal in a worker process reaches the parent
        as itself."""
        return functools.partial(type(self), needed=self.needed, limit=self.limit), (str(self),)


def condition_failure(relation: str, even: bool, a: tuple, b: tuple, reason: str = "") -> str:
    """Why the size condition ``a ≤ b`` (``relation="<="``) or ``a divides b`` fails, one wording for the
    derived constraints (:mod:`formal.core.constraints`) and their cached copies (:mod:`formal.models.costcache`): ``a``
    and ``b`` are ``(name, value)``, the name None for a number (then written as its value)."""
    def side(written, value):
        return str(value) if written is None else f"{written} = {value}"

    (wa, va), (wb, vb) = a, b
    if even:
        failure = f"{side(wb, vb)} must be even"
    elif relation == "divides":
        failure = f"{side(wb, vb)} is not divisible by {side(wa, va)}"
    elif wa is None:
        failure = f"{side(wb, vb)} must be at least {va}"
    else:
        failure = f"{side(wa, va)} exceeds {side(wb, vb)}"
    return f"{failure} ({reason})" if reason else failure


def one_of(what: str, value, known):
    """``value`` if it is one of the words ``known``, else a :class:`ConfigError` naming ``what`` and the value.

    >>> one_of("direction", "forward", ("forward", "backward"))
    'forward'
    >>> one_of("direction", "sideways", ("forward", "backward"))
    Traceback (most recent call last):
    ...
    formal.errors.ConfigError: unknown direction 'sideways'; known: forward, backward
    """
    if not isinstance(value, str) or value not in known:
        raise ConfigError(f"unknown {what} {shown(value)}; known: {', '.join(known)}")
    return value


def integers(minimum: int, maximum: int | None = None) -> str:
    """What an integer from ``minimum`` to ``maximum`` (None: no upper bound) must be, in words.

    >>> integers(1), integers(0), integers(3, 99)
    ('a positive integer', 'a non-negative integer', 'an integer from 3 to 99')
    """
    if maximum is not None:
        return f"an integer from {minimum} to {maximum}"
    return {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer ≥ {minimum}")
