"""Fixed and tied sizes for the examples (``conform --size``): real code ties its sizes together, and an
example drawn without the ties fails an implementation's own shape checks.

A size is fixed (``H=4``) or tied to the algorithm's other sizes by a formula of the claims grammar
(:mod:`formal.core.formula`: parsed, never evaluated as code): ``d_attn=d_x/H``, ``d_mlp=4*d_e``.  Ties
chain (``d_x=H*d_attn``, ``d_z=d_x``) and are ordered so that each is set after the sizes it reads; a cycle
is an error.  The examples meet them by construction, never by filtering: the free sizes are drawn and
mended until every constraint holds — the algorithm's own, with each tied size replaced by its formula, and
what the formulas need to be positive integers (``d_attn = d_x/H``: H divides d_x; ``d_attn = d_x - 2``:
d_x ≥ 3) — and then the tied sizes are set from them.

Examples
--------
>>> from formal import algorithms
>>> ties = Ties.parse(algorithms.get("mhattention"), ["d_attn=d_x/H", "d_x=H*8"])
>>> ties.order
('d_x', 'd_attn')
>>> ties.apply({"H": 2, "d_x": 1, "d_attn": 1})["d_attn"]
8
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from ..core.constraints import Constraint
from ..core.formula import FormulaError, parse
from ..errors import ConfigError, shown
from .sizes import MAX_SIZE, RUN_SIZES

__all__ = ["Ties", "RUN_SIZES", "MAX_FIXED"]

#: The largest value a size may be fixed to (the largest size a conform run may draw).
MAX_FIXED = MAX_SIZE


@dataclass(frozen=True)
class Ties:
    """Fixed and tied sizes of one algorithm, checked against it and ordered.

    ``formulas`` maps each size to its parsed formula (``d_x/H``, ``4``), in the order they are set;
    ``resolved`` maps each to a sympy expression in the free sizes alone (ties substituted into ties);
    ``constraints`` are the algorithm's size constraints in the free sizes, and what the formulas need to be
    positive integers — what the generator mends; ``bounds`` maps a free size to the least value a tie needs
    and the tie that needs it.
    """

    algorithm: object = field(repr=False)
    formulas: dict = field(default_factory=dict)
    resolved: dict = field(default_factory=dict, repr=False)
    constraints: tuple = field(default=(), repr=False)
    bounds: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, algorithm, sizes=None) -> "Ties":
        """The ties ``sizes`` (None, ``"NAME=EXPR"`` strings, or a mapping ``{name: int | str}``) of
        ``algorithm``; a ConfigError naming the tie and what is wrong with it."""
        if isinstance(sizes, Ties):
            return sizes if sizes.algorithm is algorithm else cls.parse(algorithm, sizes.texts)
        written = _written(sizes)
        if not written:
            return cls(algorithm)
        have = {str(s): s for s in algorithm.symbols if str(s) not in RUN_SIZES}
        formulas = {}
        for name, text in written.items():
            if name not in have:
                why = "is bound by the run, not drawn" if name in RUN_SIZES else "is not one of its sizes"
                raise ConfigError(f"--size {name}={text}: {algorithm.label} has no size {shown(name)} to fix ({name} "
                                  f"{why}); its sizes: {', '.join(sorted(have))}")
            formula = parse(text, names=have, what=f"--size {name}=")
            if name in formula.names:
                raise ConfigError(f"--size {name}={text} ties {name} to itself")
            formulas[name] = formula
        order = _order(formulas)
        resolved = {}
        for name in order:
            expr = sp.cancel(formulas[name].sympy(have).xreplace(resolved))
            resolved[have[name]] = expr
            _check_constant(name, formulas[name].text, expr)
            if not expr.is_rational_function(*expr.free_symbols):
                raise ConfigError(f"--size {name} = {formulas[name].text}: a tie is a ratio of polynomials in the "
                                  "sizes (+ - * / and whole powers), so that it is an integer where they are")
        ties = cls(algorithm, {n: formulas[n] for n in order}, resolved)
        constraints, bounds = ties._derived()
        object.__setattr__(ties, "constraints", constraints)
        object.__setattr__(ties, "bounds", bounds)
        return ties

    def __bool__(self) -> bool:
        return bool(self.formulas)

    @property
    def texts(self) -> dict:
        """Each fixed or tied size and its formula as written, in the order they are set."""
        return {n: f.text for n, f in self.formulas.items()}

    @property
    def order(self) -> tuple:
        """The sizes set by the ties, each after those it reads."""
        return tuple(self.texts)

    @property
    def names(self) -> frozenset:
        return frozenset(self.texts)

    @property
    def fixed(self) -> dict:
        """The sizes fixed to a number: name → int."""
        return {str(s): int(e) for s, e in self.resolved.items() if e.is_number}

    def written(self, name: str) -> str:
        """The tie of ``name`` as written: ``d_attn = d_x/H``."""
        return f"{name} = {self.texts[name]}"

    def _derived(self) -> tuple:
        """The constraints the free sizes must meet (see the class), and the least values ties need."""
        label = self.algorithm.label
        out, bounds = [], {}
        for c in self.algorithm.size_constraints:
            renamed = c.renamed(self.resolved)
            if renamed.always_holds:
                continue
            a, b = renamed.args
            if a.is_number and b.is_number or renamed.relation == "<=" and sp.Le(a, b) == sp.false:
                raise ConfigError(f"--size {self._reading(c)} contradicts {label}'s constraint {c.text}"
                                  f"{f' ({c.reason})' if c.reason else ''}: it becomes {renamed.text}")
            out.append(renamed)
        for symbol, expr in self.resolved.items():
            if expr.is_number:
                continue
            name, (numerator, denominator) = str(symbol), sp.fraction(sp.together(expr))
            if denominator != 1:
                if _scaled(numerator) is None:
                    raise ConfigError(f"--size {self.written(name)}: conform makes a quotient a whole number by "
                                      f"raising one size to a multiple, so its numerator must be one size times a "
                                      f"number, not {numerator}")
                out.append(Constraint("divides", (denominator, numerator),
                                      f"{self.written(name)} is a whole number"))
            least = _least(numerator)
            if least is not None:
                free, value = least
                if value > bounds.get(str(free), (1, ""))[0]:
                    bounds[str(free)] = (value, name)
                out.append(Constraint("<=", (value, free), f"{self.written(name)} is positive"))
        return tuple(out), bounds

    def _reading(self, constraint) -> str:
        """The ties a constraint reads, as written."""
        names = [n for n in self.order if any(str(s) == n for s in constraint.symbols)]
        return ", ".join(self.written(n) for n in names) or ", ".join(self.written(n) for n in self.order)

    def check_reach(self, max_size: int) -> None:
        """A ConfigError where a tie needs a free size past ``max_size`` or a size is fixed past
        :data:`MAX_FIXED`."""
        for name, (least, tie) in sorted(self.bounds.items()):
            if least > max_size:
                raise ConfigError(f"--size {self.written(tie)} needs {name} ≥ {least} to be positive, past the "
                                  f"largest size drawn, {max_size} (--max-size)")
        for name, value in self.fixed.items():
            if value > MAX_FIXED:
                raise ConfigError(f"--size {self.written(name)}: a size is fixed to at most {MAX_FIXED}")

    def apply(self, sizes: dict) -> dict:
        """``sizes`` with every fixed and tied size set from the free ones, in order; a ConfigError where a
        tie is not a positive integer there."""
        for name in self.order:
            formula = self.formulas[name]
            at = ", ".join(f"{k}={sizes[k]}" for k in sorted(formula.names))
            try:   # exact: Fractions, never a float, and refused past MAX_BITS (formal.core.formula)
                value = formula.value({k: Fraction(v) for k, v in sizes.items()})
            except FormulaError as exc:
                why = str(exc).partition(": ")[2] or str(exc)
                raise ConfigError(f"--size {self.written(name)} at {at}: {why}") from None
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"--size {self.written(name)} is {value} at {at}: a size must be a positive "
                                  "integer")
            sizes[name] = value
        return sizes


def _written(sizes) -> dict:
    """``{name: text}`` from None, ``"NAME=EXPR"`` strings or a mapping ``{name: int | str}``."""
    if sizes is None:
        return {}
    if isinstance(sizes, Mapping):
        items = list(sizes.items())
    elif isinstance(sizes, (list, tuple)):
        items = []
        for entry in sizes:
            if not isinstance(entry, str) or "=" not in entry:
                raise ConfigError(f"--size {shown(entry)} must be NAME=EXPR, e.g. H=4 or d_attn=d_x/H")
            name, _, text = entry.partition("=")
            items.append((name.strip(), text.strip()))
    else:
        raise ConfigError(f"sizes = {shown(sizes)} must be NAME=EXPR strings or a table {{name = value}}")
    out = {}
    for name, text in items:
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError(f"--size {shown(name)}: the left side must be one size's name, e.g. d_attn")
        if isinstance(text, bool) or not isinstance(text, (int, str)) or text == "":
            raise ConfigError(f"--size {name}={shown(text)}: the right side must be an integer or a formula")
        if name in out:
            raise ConfigError(f"--size {name} is given twice ({name}={out[name]} and {name}={text})")
        out[name] = str(text)
    return out


def _order(formulas: dict) -> tuple:
    """The tied names, each after the tied names its formula reads; a ConfigError naming a cycle."""
    order, state = [], {}

    def visit(name, path):
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            cycle = path[path.index(name):] + [name]
            raise ConfigError(f"--size ties {' → '.join(cycle)} in a cycle: "
                              f"{', '.join(f'{n} = {formulas[n].text}' for n in cycle[:-1])}")
        state[name] = "open"
        for other in sorted(formulas[name].names & set(formulas)):
            visit(other, path + [name])
        state[name] = "done"
        order.append(name)
    for name in formulas:
        visit(name, [])
    return tuple(order)


def _check_constant(name, text, expr) -> None:
    if expr.is_number and not (expr.is_integer and expr >= 1):
        raise ConfigError(f"--size {name} = {text} is {expr}: a size must be a positive integer")


def _scaled(expr):
    """``(s, c)`` for ``c·s`` (one size, a positive rational c), else None."""
    coefficient, rest = sp.sympify(expr).as_coeff_Mul()
    return (rest, coefficient) if isinstance(rest, sp.Symbol) and coefficient.is_Rational and coefficient > 0 else None


def _least(expr):
    """``(s, m)`` where ``expr`` is ``c·s + k`` (one size, c > 0, k < 1) is positive only for s ≥ m > 1; None
    where it is positive whatever the sizes or is not of that form (then checked when the sizes are set)."""
    if len(expr.free_symbols) != 1:
        return None
    (s,) = expr.free_symbols
    if not expr.is_polynomial(s):
        return None
    poly = sp.Poly(expr, s)
    if poly.degree() != 1:
        return None
    c, k = (sp.Rational(x) for x in poly.all_coeffs())
    least = math.ceil((1 - k) / c) if c > 0 else None
    return (s, least) if least is not None and least > 1 else None
