"""Polynomials in the size symbols as plain data, evaluated exactly with Python ints and Fractions.

The derived costs of the model stacks are expanded polynomials with rational coefficients in the size
symbols (:mod:`formal.costs.cost`).  As data — a list of terms ``[coefficient, {name: power}]``, a rational
coefficient written ``[numerator, denominator]`` — they can be stored in a JSON file and evaluated without
sympy: :mod:`formal.models.costcache` ships the presets' formulas this way.  Nothing is parsed as text, nothing is
evaluated as code.

Examples
--------
>>> p = Polynomial.from_data([[2, {"L": 1, "d_e": 2}], [[1, 2], {"ell": 1}], [-3, {}]])
>>> p.value({"L": 12, "d_e": 768, "ell": 1024})
14156285
>>> p.value({"L": 12, "d_e": 768, "ell": 3})
Fraction(28311549, 2)
>>> p.to_data() == Polynomial.from_data(p.to_data()).to_data()
True
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import ConfigError

__all__ = ["Polynomial"]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Polynomial:
    """``Σ c·∏ sᵏ``: ``terms`` is a tuple of ``(c, ((name, k), ...))``, ``c`` an int or a Fraction ≠ 0 and ``k``
    a non-zero int (a negative power is a division), names sorted within a term and terms sorted by their
    names and powers, so two equal polynomials have equal terms."""

    __slots__ = ("terms",)

    def __init__(self, terms):
        merged = {}
        for coefficient, powers in terms:
            key = tuple(sorted((name, k) for name, k in powers if k != 0))
            merged[key] = merged.get(key, 0) + coefficient
        self.terms = tuple((_simplest(c), key) for key, c in sorted(merged.items()) if c != 0)

    @classmethod
    def from_sympy(cls, expr) -> "Polynomial":
        """The polynomial ``expr`` (a sympy expression, expanded here); a TypeError for anything else (a
        ``Min``, a float coefficient, a power of a sum that does not expand)."""
        import sympy as sp
        terms = []
        for term in sp.Add.make_args(sp.expand(sp.sympify(expr))):
            coefficient, rest = term.as_coeff_Mul()
            if not isinstance(coefficient, sp.Rational):
                raise TypeError(f"{expr} is not a polynomial with rational coefficients (coefficient {coefficient})")
            powers = []
            for factor in sp.Mul.make_args(rest):
                base, k = factor.as_base_exp()
                if factor == 1:
                    continue
                if not (isinstance(base, sp.Symbol) and isinstance(k, sp.Integer)):
                    raise TypeError(f"{expr} is not a polynomial in the size symbols (factor {factor})")
                powers.append((base.name, int(k)))
            terms.append((Fraction(int(coefficient.p), int(coefficient.q)), powers))
        return cls(terms)

    @classmethod
    def from_data(cls, data) -> "Polynomial":
        """The polynomial written as :meth:`to_data` writes it; a ValueError for anything else."""
        if not isinstance(data, list):
            raise ValueError(f"a polynomial is a list of terms, got {type(data).__name__}")
        terms = []
        for term in data:
            if not (isinstance(term, list) and len(term) == 2 and isinstance(term[1], dict)):
                raise ValueError(f"a term is [coefficient, {{name: power}}], got {term!r:.80}")
            coefficient, powers = term
            if _is_int(coefficient):
                value = coefficient
            elif (isinstance(coefficient, list) and len(coefficient) == 2 and all(map(_is_int, coefficient))
                  and coefficient[1] > 0):
                value = Fraction(*coefficient)
            else:
                raise ValueError(f"a coefficient is an int or [numerator, denominator], got {coefficient!r:.80}")
            if not all(isinstance(n, str) and _is_int(k) for n, k in powers.items()):
                raise ValueError(f"powers are {{name: int}}, got {powers!r:.80}")
            terms.append((value, powers.items()))
        return cls(terms)

    def to_data(self) -> list:
        """JSON-ready: ``[[coefficient, {name: power}], ...]``, a Fraction as ``[numerator, denominator]``."""
        return [[c if isinstance(c, int) else [c.numerator, c.denominator], dict(key)] for c, key in self.terms]

    def to_sympy(self, symbols: dict | None = None):
        """The sympy expression; a name is the size symbol of :func:`formal.core.symbols.by_name` unless
        ``symbols`` maps it (to a symbol, a number or an expression)."""
        import sympy as sp

        from ..core.symbols import by_name
        symbols = symbols or {}
        terms = []
        for c, key in self.terms:
            c = Fraction(c)
            factors = [(symbols[n] if n in symbols else by_name(n)) ** k for n, k in key]
            terms.append(sp.Rational(c.numerator, c.denominator) * sp.Mul(*factors))
        return sp.Add(*terms)

    @property
    def names(self) -> frozenset:
        """The size names it reads."""
        return frozenset(name for _, key in self.terms for name, _ in key)

    def value(self, values: dict):
        """Its value at ``values`` (name → int): an int, or a Fraction when it does not come out whole."""
        missing = sorted(self.names - set(values))
        if missing:
            raise ConfigError(f"cannot evaluate {self}: no value for {', '.join(missing)}")
        total = 0
        for coefficient, key in self.terms:
            term = coefficient
            for name, k in key:
                term = term * values[name] ** k if k > 0 else Fraction(term, values[name] ** -k)
            total += term
        return _simplest(total)

    def __eq__(self, other):
        return isinstance(other, Polynomial) and self.terms == other.terms

    def __hash__(self):
        return hash(self.terms)

    def __str__(self):
        if not self.terms:
            return "0"
        return " + ".join("*".join([str(c)] * (c != 1 or not key) + [n if k == 1 else f"{n}**{k}" for n, k in key])
                          for c, key in self.terms)

    def __repr__(self):
        return f"Polynomial({self.to_data()!r})"


def _simplest(value):
    """A Fraction that is whole, as an int."""
    return value.numerator if isinstance(value, Fraction) and value.denominator == 1 else value
