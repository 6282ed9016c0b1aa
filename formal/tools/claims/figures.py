"""Figures as papers and slides write them — ``"117M"``, ``"800 KB"``, ``"1.6 GB"``, ``"131K"`` — with the
precision they state.

A figure holds within one unit of its last significant digit, and the trailing zeros of an integer are not
significant: ``"117M"`` is 116–118 M, ``"800 KB"`` 700–900 KB, ``"1.6 GB"`` 1.5–1.7 GB, ``"1.60 GB"``
1.59–1.61 GB, ``"110M"`` 100–120 M.  Suffixes: ``K M B G T`` (10³ … 10¹²; ``B`` is a billion), ``KB MB GB
TB`` (bytes, decimal) and ``KiB MiB GiB TiB`` (bytes, binary).  A figure may carry a sign, an exponent
(``"1.5e9"``) and thousands separators (``"500,000"``); nothing else is accepted.

>>> f = figure("117M")
>>> f.low, f.high
(Fraction(116000000, 1), Fraction(118000000, 1))
>>> figure("800 KB").holds(819_200)
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ...core.formula import FormulaError
from ...errors import shown

__all__ = ["Figure", "figure", "is_figure", "decimal_text", "UNITS"]

UNITS = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12,
         "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

_FIGURE = re.compile(r"\s*(?P<sign>[+-]?)(?P<int>\d{1,3}(?:,\d{3}){1,9}|\d{1,30})(?:\.(?P<frac>\d{0,30}))?"
                     r"(?:[eE](?P<exp>[+-]?\d{1,3}))?\s*(?P<unit>[A-Za-z]{0,3})\s*")


@dataclass(frozen=True)
class Figure:
    """``value`` ± ``step`` (one unit of the last significant digit): ``low`` … ``high``, exact."""

    text: str
    value: Fraction
    step: Fraction

    @property
    def low(self) -> Fraction:
        return self.value - self.step

    @property
    def high(self) -> Fraction:
        return self.value + self.step

    def holds(self, derived) -> bool:
        """``derived`` lies within one unit of the last digit (``approx``)."""
        return self.low <= Fraction(derived) <= self.high

    def rounds(self, derived) -> bool:
        """``derived`` rounds to this figure at its last digit: within half a unit, ties either way
        (``rounds_to``)."""
        return abs(Fraction(derived) - self.value) <= self.step / 2

    def describe(self) -> str:
        return f"{_short(self.low)}–{_short(self.high)}"

    def describe_rounding(self) -> str:
        return f"{_short(self.value - self.step / 2)}–{_short(self.value + self.step / 2)}"


def is_figure(text) -> bool:
    return isinstance(text, str) and _match(text) is not None


def _match(text: str):
    match = _FIGURE.fullmatch(text)
    if match is None or match.group("unit") not in UNITS:
        return None
    return match


def figure(text, what: str = "figure") -> Figure:
    """The :class:`Figure` a string states; a FormulaError for anything that is not one."""
    match = _match(text) if isinstance(text, str) else None
    if match is None:
        raise FormulaError(f"{what} {shown(text)} is not a figure such as \"117M\", \"800 KB\" or \"1.6 GB\" "
                           f"(units: {', '.join(u for u in UNITS if u)})")
    whole, frac, exp = match.group("int").replace(",", ""), match.group("frac"), int(match.group("exp") or 0)
    unit = Fraction(UNITS[match.group("unit")]) * Fraction(10) ** exp
    value = Fraction(int(whole + (frac or "")), 10 ** len(frac or "")) * unit
    if match.group("sign") == "-":
        value = -value
    if frac:                                      # every written decimal is significant
        step = unit / 10 ** len(frac)
    else:                                         # an integer's trailing zeros are not
        stripped = whole.rstrip("0") or "0"
        step = unit * 10 ** (len(whole) - len(stripped)) if stripped != "0" else unit
    return Figure(text.strip(), value, step)


def _short(value: Fraction) -> str:
    """A bound as a figure shows it: an integer in full (116,000,000), else six significant digits."""
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return decimal_text(value)


def decimal_text(value, digits: int = 6) -> str:
    """``value`` (an int, a Fraction or a float) to ``digits`` significant digits, at any magnitude: no float
    overflow or underflow for a Fraction such as 10**-400."""
    from decimal import Context, Decimal
    if isinstance(value, float):
        return f"{value:,.{digits}g}"
    value = Fraction(value)
    if value == 0 or Fraction(1, 10**300) < abs(value) < 10**300:   # a float holds it: Python's own format
        return f"{float(value):,.{digits}g}"
    context = Context(prec=digits + 2, Emin=-10**9, Emax=10**9)
    return format(context.divide(Decimal(value.numerator), Decimal(value.denominator)), f",.{digits}g")
