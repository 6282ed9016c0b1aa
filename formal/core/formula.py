"""Formulas in claims: parsed by a small grammar of our own, never by ``eval`` or ``sympify``.

A formula is written in the spec's ASCII size names (``4*H*d_attn*d``, ``ell_x*ell_z``, ``12*L*d_e**2``)
with this grammar, and nothing else::

    formula  := sum
    sum      := product (("+" | "-") product)*
    product  := unary (("*" | "/") unary)*
    unary    := ("+" | "-") unary | power
    power    := atom (("**" | "^") unary)?          right-associative: 2**3**2 = 2**9
    atom     := number | name | name "(" formula ("," formula)* ")" | "(" formula ")"
    number   := 12 | 0.5 | 1e-3                     exact: 0.1 is 1/10, never a binary float
    name     := a size name, e.g. d_e, ell_x, H     the functions: sqrt, log, max, min

``·`` and ``×`` are read as ``*``, and ``−`` as ``-``, so a formula can be pasted from a paper.  An exponent
must be a number (``d**2``, ``n**0.5``; not ``2**L``), at most 64 in size.  A formula that breaks any of
this — another character, an unknown name or function, a number past 10,000 bits, nesting past 50 levels,
more than 1,000 characters — is a :class:`FormulaError` naming what and where; nothing is ever executed.

:meth:`Formula.value` evaluates a formula exactly (ints and Fractions) where it can without sympy;
:meth:`Formula.sympy` builds the sympy expression from the size symbols of :mod:`formal.core.symbols`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ..errors import ConfigError, shown

__all__ = ["Formula", "FormulaError", "parse", "FUNCTIONS", "MAX_LENGTH"]

MAX_LENGTH = 1000      # characters of a formula
MAX_DEPTH = 50         # nesting of parentheses, unary signs and powers
MAX_BITS = 10_000      # of a number met while evaluating
MAX_DIGITS = 1000      # of a number written (10**1000 has 3,322 bits: under MAX_BITS)
MAX_EXPONENT = 64
MAX_TERMS = 10_000     # terms the formula may expand to (a bound from its tree)
FUNCTIONS = {"sqrt": (1, 1), "log": (1, 2), "max": (2, 16), "min": (2, 16)}  # name: (fewest, most) arguments

_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>\*\*|[-+*/^(),]))")
_SAME = str.maketrans({"·": "*", "×": "*", "−": "-", "⋅": "*"})


class FormulaError(ConfigError):
    """A formula that does not parse, or names what it may not."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula: a tree of ``("num", Fraction)``, ``("name", str)``, ``("neg", a)``,
    ``(op, a, b)`` for ``+ - * / **`` and ``("call", function, args)``; ``text`` is what was written."""

    tree: tuple
    text: str

    @property
    def names(self) -> frozenset:
        """The size names it reads."""
        found = set()

        def walk(node):
            if node[0] == "name":
                found.add(node[1])
            elif node[0] == "call":
                for a in node[2]:
                    walk(a)
            elif node[0] != "num":
                for a in node[1:]:
                    walk(a)
        walk(self.tree)
        return frozenset(found)

    @property
    def is_number(self) -> bool:
        return not self.names

    @property
    def terms(self) -> int:
        """An upper bound on its terms once expanded (capped past :data:`MAX_TERMS`)."""
        return _terms(self.tree)

    def value(self, values: dict | None = None):
        """The exact value (int or Fraction) at ``values`` (name → int or Fraction), or ``None`` where it
        is not rational (a square root, a logarithm, a fractional power) — then use :meth:`sympy`.  A
        FormulaError for a name without a value or a division by zero."""
        values = values or {}
        try:
            result = _value(self.tree, values, self.text)
        except _Irrational:
            return None
        return result.numerator if isinstance(result, Fraction) and result.denominator == 1 else result

    def sympy(self, symbols: dict | None = None):
        """The sympy expression; a name is the size symbol of :func:`formal.core.symbols.by_name` unless
        ``symbols`` maps it (to a symbol, a number or an expression).  A FormulaError where the value is not
        finite (``log(0)``, ``1/(n - n)``) or sympy cannot build it."""
        import sympy as sp
        try:
            expr = sp.sympify(_sympy(self.tree, symbols or {}))
        except (ValueError, TypeError, ZeroDivisionError, OverflowError) as exc:
            raise FormulaError(f"formula {shown(self.text)} cannot be evaluated: {' '.join(str(exc).split())[:200]}") \
                from None
        if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise FormulaError(f"formula {shown(self.text)} is not finite here ({expr})")
        return expr

    def __str__(self):
        return self.text


class _Irrational(Exception):
    pass


def parse(text, *, names=None, what: str = "formula") -> Formula:
    """Parse ``text`` (a string, or a number from a TOML file) into a :class:`Formula`.  With ``names`` (a
    collection of size names) a name outside it is a FormulaError that lists the known ones."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise FormulaError(f"{what} must be a formula (a string) or a number, got {shown(text)}")
    if not isinstance(text, str):
        text = _number_text(text, what)
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"{what} {shown(text)} is longer than {MAX_LENGTH} characters")
    tokens = _tokens(text.translate(_SAME), text, what)
    parser = _Parser(tokens, text, what)
    tree = parser.sum(0)
    if parser.peek() is not None:
        raise FormulaError(f"{what} {shown(text)}: unexpected {parser.peek()[1]!r} at character "
                           f"{parser.peek()[2] + 1}")
    formula = Formula(tree, text.strip())
    if _bits(tree) > MAX_BITS:
        raise FormulaError(f"{what} {shown(text)}: a number in it is larger than {MAX_BITS} bits")
    terms = _terms(tree)
    if terms > MAX_TERMS:
        raise FormulaError(f"{what} {shown(text)} expands to more than {MAX_TERMS:,} terms")
    if names is not None:
        unknown = sorted(formula.names - set(names))
        if unknown:
            raise FormulaError(f"{what} {shown(text)} names {unknown[0]!r}, which is not a size here; known: "
                               f"{', '.join(sorted(names)) or 'none (numbers only)'}")
    return formula


def _bits(node) -> int:
    """An upper bound on the bits of any number the formula makes (its coefficients once expanded)."""
    kind = node[0]
    if kind == "num":
        return node[1].numerator.bit_length() + node[1].denominator.bit_length()
    if kind == "name":
        return 1
    if kind == "neg":
        return _bits(node[1])
    if kind == "call":
        return sum(_bits(a) for a in node[2]) + 1
    if kind == "**":
        return _bits(node[1]) * max(1, int(abs(node[2][1])) + 1)
    return _bits(node[1]) + _bits(node[2]) + 1


def _terms(node) -> int:
    """An upper bound on the terms of the expanded formula (capped past MAX_TERMS): a sum adds, a product
    multiplies, a power k of t terms has at most C(t + k − 1, k)."""
    from math import comb
    kind = node[0]
    if kind in ("num", "name"):
        return 1
    if kind == "neg":
        return _terms(node[1])
    if kind == "call":
        return max(1, sum(_terms(a) for a in node[2])) if node[1] in ("max", "min") else max(
            1, _terms(node[2][0]))
    a = _terms(node[1])
    if kind == "**":
        k = abs(node[2][1])
        k = int(k) + (k.denominator != 1)
        return 1 if a == 1 else min(comb(a + k - 1, k), MAX_TERMS + 1)
    b = _terms(node[2])
    return min(a + b if kind in "+-" else a * b, MAX_TERMS + 1)


def _number_text(value, what) -> str:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise FormulaError(f"{what} = {value} is not a finite number")
    return repr(value)


def _tokens(text: str, original: str, what: str) -> list:
    out, at = [], 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            bad = text[at:].lstrip()[:1]
            where = len(text) - len(text[at:].lstrip()) + 1
            raise FormulaError(f"{what} {shown(original)}: {bad!r} at character {where} is not part of a formula "
                               "(numbers, size names, + - * / ** ^, parentheses, sqrt, log, max, min)")
        kind = match.lastgroup
        out.append((kind, match.group(kind), match.start(kind)))
        at = match.end()
    if not out:
        raise FormulaError(f"{what} is empty")
    return out


class _Parser:
    def __init__(self, tokens, text, what):
        self.tokens, self.at, self.text, self.what = tokens, 0, text, what

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, op=None):
        token = self.peek()
        if token is None:
            raise FormulaError(f"{self.what} {shown(self.text)} ends too early"
                               + (f": {op!r} expected" if op else ""))
        if op is not None and token[1] != op:
            raise FormulaError(f"{self.what} {shown(self.text)}: {op!r} expected at character {token[2] + 1}, "
                               f"found {token[1]!r}")
        self.at += 1
        return token

    def _deeper(self, depth):
        if depth > MAX_DEPTH:
            raise FormulaError(f"{self.what} {shown(self.text)} nests deeper than {MAX_DEPTH} levels")
        return depth + 1

    def sum(self, depth):
        depth = self._deeper(depth)
        node = self.product(depth)
        while self.peek() is not None and self.peek()[1] in "+-":
            op = self.take()[1]
            node = (op, node, self.product(depth))
        return node

    def product(self, depth):
        node = self.unary(depth)
        while self.peek() is not None and self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            node = (op, node, self.unary(depth))
        return node

    def unary(self, depth):
        depth = self._deeper(depth)
        token = self.peek()
        if token is not None and token[1] in "+-" and token[0] == "op":
            self.take()
            inner = self.unary(depth)
            return ("neg", inner) if token[1] == "-" else inner
        return self.power(depth)

    def power(self, depth):
        base = self.atom(depth)
        token = self.peek()
        if token is not None and token[1] in ("**", "^"):
            self.take()
            exponent = self.unary(self._deeper(depth))
            value = _constant(exponent)
            if value is None:
                raise FormulaError(f"{self.what} {shown(self.text)}: an exponent must be a number, at character "
                                   f"{token[2] + 1}")
            if abs(value) > MAX_EXPONENT:
                raise FormulaError(f"{self.what} {shown(self.text)}: the exponent {value} is larger than "
                                   f"{MAX_EXPONENT}")
            return ("**", base, ("num", value))
        return base

    def atom(self, depth):
        kind, text, at = self.take()
        if kind == "number":
            return ("num", _exact(text, self.what, self.text))
        if kind == "name":
            if self.peek() is not None and self.peek()[1] == "(":
                if text not in FUNCTIONS:
                    raise FormulaError(f"{self.what} {shown(self.text)}: {text!r} is not a function here "
                                       f"(known: {', '.join(FUNCTIONS)})")
                self.take("(")
                args = [self.sum(depth)]
                while self.peek() is not None and self.peek()[1] == ",":
                    self.take(",")
                    args.append(self.sum(depth))
                self.take(")")
                fewest, most = FUNCTIONS[text]
                if not fewest <= len(args) <= most:
                    raise FormulaError(f"{self.what} {shown(self.text)}: {text} takes "
                                       f"{fewest if fewest == most else f'{fewest} to {most}'} arguments, "
                                       f"got {len(args)}")
                return ("call", text, tuple(args))
            if text in FUNCTIONS:
                raise FormulaError(f"{self.what} {shown(self.text)}: {text} is a function: write {text}(…)")
            return ("name", text)
        if text == "(":
            node = self.sum(depth)
            self.take(")")
            return node
        raise FormulaError(f"{self.what} {shown(self.text)}: unexpected {text!r} at character {at + 1}")


def _exact(text: str, what: str, whole: str) -> Fraction:
    mantissa, _, exponent = text.lower().partition("e")
    digits = mantissa.replace(".", "").lstrip("0")
    if len(digits) > MAX_DIGITS or (exponent and abs(int(exponent)) > MAX_DIGITS):
        raise FormulaError(f"{what} {shown(whole)}: the number {shown(text)} is too large ({MAX_DIGITS} digits, "
                           f"e±{MAX_DIGITS})")
    return Fraction(text)


def _constant(node):
    """The exact value of a tree without names, functions or irrational powers, else None."""
    try:
        return _value(node, {}, "")
    except (_Irrational, FormulaError):
        return None


def _checked(value, text):
    if isinstance(value, Fraction) and value.numerator.bit_length() + value.denominator.bit_length() > MAX_BITS:
        raise FormulaError(f"formula {shown(text)}: a number in it is larger than {MAX_BITS} bits")
    return value


def _value(node, values, text):
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "name":
        if node[1] not in values:
            raise FormulaError(f"formula {shown(text)}: no value for {node[1]!r}")
        return Fraction(values[node[1]])
    if kind == "neg":
        return -_value(node[1], values, text)
    if kind == "call":
        args = [_value(a, values, text) for a in node[2]]
        if node[1] == "max":
            return max(args)
        if node[1] == "min":
            return min(args)
        raise _Irrational  # sqrt, log
    a, b = _value(node[1], values, text), _value(node[2], values, text)
    if kind == "+":
        return _checked(a + b, text)
    if kind == "-":
        return _checked(a - b, text)
    if kind == "*":
        return _checked(a * b, text)
    if kind == "/":
        if b == 0:
            raise FormulaError(f"formula {shown(text)} divides by zero")
        return _checked(a / b, text)
    if b.denominator != 1:  # "**": a fractional power
        raise _Irrational
    if a == 0 and b < 0:
        raise FormulaError(f"formula {shown(text)} divides by zero")
    if a.numerator.bit_length() * abs(int(b)) > MAX_BITS or a.denominator.bit_length() * abs(int(b)) > MAX_BITS:
        raise FormulaError(f"formula {shown(text)}: a number in it is larger than {MAX_BITS} bits")
    return a ** int(b)


def _sympy(node, symbols):
    import sympy as sp
    kind = node[0]
    if kind == "num":
        return sp.Rational(node[1].numerator, node[1].denominator)
    if kind == "name":
        if node[1] in symbols:
            return symbols[node[1]]
        from .symbols import by_name
        return by_name(node[1])
    if kind == "neg":
        return -_sympy(node[1], symbols)
    if kind == "call":
        args = [_sympy(a, symbols) for a in node[2]]
        return {"sqrt": sp.sqrt, "log": sp.log, "max": sp.Max, "min": sp.Min}[node[1]](*args)
    a, b = _sympy(node[1], symbols), _sympy(node[2], symbols)
    if kind == "/" and b == 0:
        raise FormulaError(f"a formula divides by zero: {shown(node)}")
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
            "**": lambda: a ** b}[kind]()
