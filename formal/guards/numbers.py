"""One gate for every number: a size, a count or a claimed value means the same however it is spelled.

A number reaches the package by many doors — a command-line flag, a claims file, a configuration, ``--size``,
``sizes = {…}``, ``tokens``, ``batch``, an API call — and may be spelled as an integer (``1024``), a string
(``"1024"``), a decimal (``0.1``), a float literal of a TOML file (``124439808.0000000001``) or a formula
(``"2**10"``, ``"0 - 300"``).  Each spelling goes through this module, which

- reads it **exactly**: an integer as an integer; a decimal as the decimal written (a TOML file's floats are
  read as their text by :func:`formal.guards.files.parse_toml`: ``0.1`` is 1/10 and
  ``124439808.0000000001`` is not 124,439,808); a Python float as the shortest decimal that prints it
  (``0.1`` again); a formula by the grammar of :mod:`formal.core.formula`, never by ``eval``;
- evaluates a formula without names to the number it is: ``"2**10"`` *is* 1024, ``"0 - 300"`` *is* −300;
- then validates the number against its domain (:func:`whole`: a positive integer at most
  :data:`~formal.guards.limits.MAX_SIZE`), *after* evaluation, so no spelling skips a check.

A formula with names (``"d_x/H"``, ``"n"``) stays a formula; where its names get numbers it is evaluated and
validated the same way (:func:`at`), and where they do not, a formula that is not positive for any positive
sizes (``"-d"``) is refused (:func:`size`).

Examples
--------
>>> exact("0.1"), exact(Written("124439808.0000000001")) == 124439808
(Fraction(1, 10), False)
>>> size("2**10", "size d_x"), size(1024, "size d_x")
(1024, 1024)
>>> size("0 - 300", "tokens")
Traceback (most recent call last):
...
formal.errors.ConfigError: tokens = '0 - 300' is -300, which is not a positive integer
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..errors import ConfigError, shown

__all__ = ["Written", "exact", "integer", "whole", "size", "at", "is_number", "written", "count_text"]


class Written(float):
    """A float read from a TOML file that keeps the decimal ``text`` it was written as: it behaves as
    the float everywhere a float is meant (an executed input array), and :func:`exact` reads its text."""

    def __new__(cls, text):
        value = super().__new__(cls, text)
        value.text = text if isinstance(text, str) else repr(float(text))
        return value

    def __repr__(self):
        return self.text

    def __reduce__(self):
        return (Written, (self.text,))


def written(raw) -> str:
    """``raw`` as it was written: a :class:`Written` float's text, a string itself, else its ``repr``."""
    return raw.text if isinstance(raw, Written) else raw if isinstance(raw, str) else repr(raw)


def is_number(raw) -> bool:
    """Whether ``raw`` is a number rather than a string or a bool (an int, a float, a Fraction)."""
    return isinstance(raw, (int, float, Fraction)) and not isinstance(raw, bool)


def exact(raw, what: str = "number", *, names=()):
    """``raw`` as an exact number: an int, or a Fraction (a decimal as written, a formula's rational value).

    ``raw`` is an int, a float (a :class:`Written` float: its text; any other: the shortest decimal that
    prints it), a Fraction, or a string: a formula of :mod:`formal.core.formula`, which may name ``names``
    (then it has no single value: a ConfigError).  An irrational formula (``"sqrt(2)"``), a non-finite float, a
    bool or anything else is a ConfigError naming ``what`` and the value.
    """
    if isinstance(raw, bool):
        raise ConfigError(f"{what} = {raw} is not a number")
    if isinstance(raw, int):
        return int(raw)
    if isinstance(raw, Fraction):
        return _whole_int(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise ConfigError(f"{what} = {shown(raw)} is not a finite number")
        return _whole_int(Fraction(raw.text if isinstance(raw, Written) else repr(raw)))
    if isinstance(raw, str):
        from ..core.formula import parse
        formula = parse(raw, names=names, what=what)
        if formula.names:
            raise ConfigError(f"{what} = {shown(raw)} names {', '.join(sorted(formula.names))}: it has no single value")
        value = _value(formula, what)
        if value is None:
            raise ConfigError(f"{what} = {shown(raw)} is irrational: give a rational number")
        return value
    raise ConfigError(f"{what} = {shown(raw)} is not a number")


def integer(raw, what: str = "number") -> int:
    """``raw`` (any spelling :func:`exact` reads) as the integer it is: ``"1e3"``, ``"2**10"`` and ``4.0`` are
    integers; a fraction (``1.5``, ``"1/2"``) is a ConfigError naming ``what``, the value and the number it is.
    The range is the caller's to check."""
    value = exact(raw, what)
    if isinstance(value, Fraction):
        raise ConfigError(f"{what} = {shown(raw)} is {_text(value)}, which is not an integer")
    return value


def whole(value, what: str, *, raw=None, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` (exact: an int or a Fraction) as an int in ``[minimum, maximum]`` (by default a positive integer
    at most :data:`~formal.guards.limits.MAX_SIZE`); a ConfigError names ``what``, the value as spelled (``raw``)
    and, where a spelling other than an integer gave it, the number it is."""
    from .limits import MAX_SIZE
    maximum = MAX_SIZE if maximum is None else maximum
    kind = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
    limit = "2**50" if maximum == MAX_SIZE else f"{maximum:,}"
    value = Fraction(value)
    if value.denominator == 1 and minimum <= value <= maximum:
        return int(value)
    why = f"is more than {limit}" if value > maximum and value.denominator == 1 else f"is not {kind}"
    if raw is None or (isinstance(raw, int) and not isinstance(raw, bool)):
        raise ConfigError(f"{what} = {shown(raw if raw is not None else _text(value))} must be {kind} at most {limit}")
    raise ConfigError(f"{what} = {shown(raw)} is {_text(value)}, which {why}")


def size(raw, what: str, *, names=None, maximum: int | None = None):
    """A size or a count as given: an int, or a :class:`~formal.core.formula.Formula` where it names sizes.

    Every spelling of a number (``1024``, ``"1024"``, ``"2**10"``, ``1024.0`` from a file) is that number,
    validated by :func:`whole`; a formula with names (``names``: those it may use, None for any) is kept, and
    refused where no positive sizes make it positive (``"-d"``, ``"0*n"``).
    """
    from ..core.formula import parse
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str, Fraction)):
        raise ConfigError(f"{what} = {shown(raw)} must be a positive integer or a formula (a string)")
    if not isinstance(raw, str):
        return whole(exact(raw, what), what, raw=raw, maximum=maximum)
    formula = parse(raw, names=names, what=what)
    if not formula.names:
        value = _value(formula, what)
        if value is None:
            raise ConfigError(f"{what} = {shown(raw)} is irrational, not a positive integer")
        return whole(value, what, raw=raw, maximum=maximum)
    _positive_somewhere(formula, what)
    return formula


def at(formula, values: dict, what: str, *, maximum: int | None = None):
    """A size formula at ``values`` (name → int): the positive integer it is there (validated as :func:`whole`
    validates a number), or None where a name it reads has no number in ``values``."""
    if not formula.names <= set(values):
        return None
    value = formula.value({k: values[k] for k in formula.names})
    if value is None:
        import sympy as sp
        number = formula.sympy({k: sp.Integer(values[k]) for k in formula.names})
        if not number.is_Rational:
            raise ConfigError(f"{what} = {shown(formula.text)} is {number} at "
                              f"{_where(formula, values)}, which is not a positive integer")
        value = Fraction(int(number.p), int(number.q))
    try:
        return whole(value, what, raw=formula.text, maximum=maximum)
    except ConfigError as error:
        raise ConfigError(f"{error} (at {_where(formula, values)})") from None


def _where(formula, values) -> str:
    return ", ".join(f"{k} = {values[k]}" for k in sorted(formula.names))


def _value(formula, what):
    """A formula without names, exactly: an int or a Fraction, None where irrational."""
    value = formula.value({})
    if value is not None:
        return _whole_int(Fraction(value))
    number = formula.sympy({})
    if number.is_Rational:
        return _whole_int(Fraction(int(number.p), int(number.q)))
    return None


def _positive_somewhere(formula, what) -> None:
    """Refuse a size formula that no positive integer sizes make a positive number (sympy decides it for
    positive integer symbols; undecided is allowed: the sizes it is taken at are checked there)."""
    import sympy as sp
    symbols = {name: sp.Symbol(name, positive=True, integer=True) for name in formula.names}
    expr = formula.sympy(symbols)
    if expr.is_positive is False or expr.is_zero:
        raise ConfigError(f"{what} = {shown(formula.text)} is not positive for any positive sizes")


def _whole_int(value: Fraction):
    return value.numerator if value.denominator == 1 else value


def _text(value) -> str:
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def count_text(n) -> str:
    """A count for a message: ``1,000,000``; from 10¹⁸, ``≈1.00e+40``: three significant digits, rounded half up
    with integers (the digits of a huge int are not printed: Python limits them; a float's logarithm misplaces
    the exponent near a power of ten).

    >>> count_text(1_000_000), count_text(10**40), count_text(10**19 - 1)
    ('1,000,000', '≈1.00e+40', '≈1.00e+19')
    """
    n = int(n)
    if abs(n) < 10**18:
        return f"{n:,}"
    sign, n = "-" * (n < 0), abs(n)
    exponent = (n.bit_length() - 1) * 30103 // 100000                    # log10(2) = 0.30103, low by < 1
    while 10 ** (exponent + 1) <= n:
        exponent += 1
    scale = 10 ** (exponent - 2)
    digits = (n + scale // 2) // scale                                     # 100 … 1000
    if digits == 1000:                                                     # 9.995… rounds up to 10.0
        digits, exponent = 100, exponent + 1
    return f"≈{sign}{digits // 100}.{digits % 100:02d}e+{exponent}"
