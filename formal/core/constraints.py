"""Conditions on sizes that an algorithm states and checks once they are bound (``d_e`` even,
``n_kv_heads | H``, ``ℓ ≤ ℓ_max``); each renders with the paper's glyphs and explains a failure with the
ASCII names and values.

A constraint is data: a relation (``"<="`` or ``"divides"``) between two size expressions, and the reason
it exists.  So it can be renamed into the symbols of an algorithm that calls the one stating it.

Examples
--------
>>> from formal.core.symbols import d_e, d_f, ell, ell_max
>>> c = at_most(2, d_e, "a variance over one feature is 0")
>>> c.text
'2 ≤ d_e'
>>> c.renamed({d_e: d_f}).text
'2 ≤ d_f'
>>> c.holds({d_e: 1})
False
>>> even(d_e, "sin and cos rows").explain({d_e: 7})
'd_e = 7 must be even (sin and cos rows)'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..errors import ConfigError, condition_failure
from .numeric import value
from .symbols import latex as sym_latex, text as sym_text

__all__ = ["RELATIONS", "Constraint", "even", "divides", "at_most"]

#: The relations a constraint states: ``a ≤ b``, and ``a`` divides ``b``.
RELATIONS = ("<=", "divides")


def _size(expr) -> sp.Expr:
    if isinstance(expr, bool) or not isinstance(expr, (int, sp.Basic)):
        raise ConfigError(f"a constraint relates size expressions or ints, got {expr!r}")
    return sp.sympify(expr)


def _value(expr, values: dict) -> int:
    """A size expression at bound values."""
    return int(value(expr, values))


@dataclass(frozen=True)
class Constraint:
    """A condition on sizes, checked once its symbols are bound: ``relation`` holds between ``args``.

    Parameters
    ----------
    relation : {"<=", "divides"}
        ``args = (a, b)`` means ``a ≤ b``, or ``a`` divides ``b`` (``d_e`` even is ``("divides", (2, d_e))``).
    args : tuple of two sympy expressions (ints are turned into sympy Integers)
    reason : str
        Why the algorithm needs it; quoted when it fails.
    wording : {"", "even"}
        How it reads: ``"even"`` writes ``("divides", (2, s))`` as ``s is even`` rather than ``2 divides s``.

    Two constraints with the same relation and arguments are equal whatever their reasons and wording.
    """

    relation: str
    args: tuple
    reason: str = field(default="", compare=False)
    wording: str = field(default="", compare=False)

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ConfigError(f"unknown constraint relation {self.relation!r}; known: {', '.join(RELATIONS)}")
        if not isinstance(self.args, (tuple, list)) or len(self.args) != 2:
            raise ConfigError(f"a constraint relates two sizes, got args = {self.args!r}")
        object.__setattr__(self, "args", tuple(_size(a) for a in self.args))
        if self.wording not in ("", "even") or self.wording == "even" and (
                self.relation != "divides" or self.args[0] != 2):
            raise ConfigError(f"wording = {self.wording!r} does not fit {self.relation} {self.args}")

    @property
    def _even(self) -> bool:
        return self.wording == "even"

    @property
    def text(self) -> str:
        """The condition in the paper's glyphs: ``ℓ ≤ ℓ_max``, ``H_kv divides H``, ``d_e is even``."""
        a, b = (sym_text(x) for x in self.args)
        if self._even:
            return f"{b} is even"
        return f"{a} ≤ {b}" if self.relation == "<=" else f"{a} divides {b}"

    @property
    def latex(self) -> str:
        r"""The condition in LaTeX: ``\ell \le \ell_{\mathrm{max}}``, ``H_{\mathrm{kv}} \mid H``."""
        a, b = (sym_latex(x) for x in self.args)
        if self._even:
            return rf"{b} \text{{ is even}}"
        return rf"{a} \le {b}" if self.relation == "<=" else rf"{a} \mid {b}"

    @cached_property
    def symbols(self) -> tuple:
        """The size symbols the condition reads, sorted by name."""
        return tuple(sorted(self.args[0].free_symbols | self.args[1].free_symbols, key=str))

    def holds(self, values: dict) -> bool:
        """Whether it holds at ``values`` (symbol → int, every one of :attr:`symbols` bound)."""
        a, b = (_value(x, values) for x in self.args)
        return a <= b if self.relation == "<=" else b % a == 0

    def explain(self, values: dict) -> str:
        """Why it fails at ``values``, in ASCII names with their values and the reason."""
        (a, b), (va, vb) = self.args, (_value(x, values) for x in self.args)
        written = [None if x.is_number else str(x) for x in (a, b)]
        return condition_failure(self.relation, self._even, (written[0], va), (written[1], vb), self.reason)

    def renamed(self, substitution: dict) -> "Constraint":
        """The same condition with ``substitution`` (symbol → expression) applied to both sides: a
        callee's constraint in its caller's symbols."""
        args = tuple(a.xreplace(substitution) for a in self.args)
        return Constraint(self.relation, args, self.reason, self.wording if args[0] == 2 else "")

    @property
    def always_holds(self) -> bool:
        """Whether it holds whatever the sizes: its sides are numbers, or sympy decides it from every size
        being a positive integer (``1 ≤ d_e``, ``H divides 2·H``)."""
        a, b = self.args
        if a == b:
            return True
        if self.relation == "<=":
            return bool(sp.Le(a, b) == sp.true)
        if a.is_number and b.is_number:
            return b % a == 0
        return a == 1 or bool((b / a).is_integer)


def even(symbol, reason: str) -> Constraint:
    """``symbol`` is even: 2 divides it."""
    return Constraint("divides", (2, symbol), reason, "even")


def divides(divisor, multiple, reason: str) -> Constraint:
    """``divisor`` divides ``multiple`` (``n_kv_heads | H``)."""
    return Constraint("divides", (divisor, multiple), reason)


def at_most(small, large, reason: str) -> Constraint:
    """``small ≤ large`` (ℓ ≤ ℓ_max, 2 ≤ d_e), checked once both are bound."""
    return Constraint("<=", (small, large), reason)
