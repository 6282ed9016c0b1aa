"""Conditions on sizes that an algorithm states and checks once they are bound (``d_e`` even,
``n_kv_heads | H``, ``ℓ ≤ ℓ_max``); each renders with the paper's glyphs and explains a failure with the
ASCII names and values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .symbols import text as sym_text

__all__ = ["Constraint", "even", "divides", "at_most"]


@dataclass(frozen=True)
class Constraint:
    """A condition on sizes, checked once its symbols are bound (``d_e`` even, ``n_kv_heads | H``)."""

    text: str
    symbols: tuple
    holds: Callable[[dict], bool]
    explain: Callable[[dict], str]


def _size_value(expr, values: dict) -> int:
    """A size expression at bound values."""
    return int(expr.xreplace({s: values[s] for s in expr.free_symbols}))


def even(symbol, reason: str) -> Constraint:
    return Constraint(f"{sym_text(symbol)} is even", (symbol,), lambda v: v[symbol] % 2 == 0,
                      lambda v: f"{symbol} = {v[symbol]} must be even ({reason})")


def divides(divisor, multiple, reason: str) -> Constraint:
    symbols = tuple(sorted((divisor.free_symbols | multiple.free_symbols), key=str))
    value = _size_value
    return Constraint(f"{sym_text(divisor)} divides {sym_text(multiple)}", symbols,
                      lambda v: value(multiple, v) % value(divisor, v) == 0,
                      lambda v: f"{multiple} = {value(multiple, v)} is not divisible by "
                                f"{divisor} = {value(divisor, v)} ({reason})")


def at_most(small, large, reason: str) -> Constraint:
    """``small ≤ large`` (ℓ ≤ ℓ_max), checked once both are bound."""
    symbols = tuple(sorted((small.free_symbols | large.free_symbols), key=str))
    value = _size_value
    return Constraint(f"{sym_text(small)} ≤ {sym_text(large)}", symbols, lambda v: value(small, v) <= value(large, v),
                      lambda v: f"{small} = {value(small, v)} exceeds {large} = {value(large, v)} ({reason})")
