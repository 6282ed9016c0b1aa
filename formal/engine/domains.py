"""The sets of values an algorithm's option may take: a :class:`Choice` of words, booleans or None, an
:class:`Integer` or :class:`Real` range, or a union of them (:class:`AnyOf`).

A domain decides membership (Python's ``True == 1`` is not taken for membership: ``bias=1`` is not a
boolean), keeps a value in its normal form (an int ``eps`` as a float), reads a value from the command line's
text, and says what it holds four ways: in an error message (``"True or False"``), in ``show``'s listing
(``"True | False"``), on the command line (``"true or false"``) and in ASCII LaTeX; and as a JSON Schema.

Examples
--------
>>> padding = AnyOf(Integer(0), Choice("same"))
>>> padding.text(), padding.notation(), padding.words()
("a non-negative integer or 'same'", "int ≥ 0 | 'same'", 'an integer or same')
>>> padding.admits(2), padding.admits("same"), padding.admits(-1), padding.admits(True)
(True, True, False, False)
>>> padding.parse("same"), padding.parse("3")
('same', 3)
>>> Real(0, 1, open_low=True, open_high=True).text()
'a number in (0, 1)'
"""

from __future__ import annotations

import math
import numbers

from .latex_text import code

__all__ = ["Domain", "Choice", "Integer", "Real", "AnyOf", "BOOL", "written", "either"]



def written(value) -> str:
    """A value as the messages and ``show`` write it: a word quoted (``'zero'``), True, False, None and
    numbers as Python writes them (a whole float without its ``.0``: ``eps ≥ 0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def either(items) -> str:
    """``"a, b or c"``."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


class Domain:
    """A set of values (abstract): see the module docstring."""

    def admits(self, value) -> bool:
        """Whether ``value`` is in the set."""
        raise NotImplementedError

    def normal(self, value):
        """``value`` (admitted) in the form the builders keep."""
        return value

    def parse(self, text: str):
        """The value the command-line text ``text`` names; ValueError when it names none of the set's."""
        raise NotImplementedError

    def values(self) -> tuple:
        """The values of a finite set; ``()`` for a range."""
        return ()

    def text(self) -> str:
        """For a message: ``f"eps = -1 must be {text}"``."""
        raise NotImplementedError

    def notation(self) -> str:
        """For ``show``'s listing: ``"float ≥ 0"``, ``"True | False"``."""
        raise NotImplementedError

    def words(self) -> str:
        """For the command line: ``f"option bias takes {words}"``."""
        raise NotImplementedError

    def latex(self) -> str:
        """The notation in ASCII LaTeX (text mode)."""
        raise NotImplementedError

    def schema(self) -> dict:
        """The set as a JSON Schema."""
        raise NotImplementedError

    def parts(self) -> tuple:
        """The domains of a union; the domain itself otherwise."""
        return (self,)


def _same(a, b) -> bool:
    """``a`` is ``b`` as a choice: equal and of one kind (``True`` is not ``1``; a numpy word is a word)."""
    if b is None or isinstance(b, bool):
        return a is b
    if isinstance(b, str):
        return isinstance(a, str) and a == b
    return type(a) is type(b) and a == b


class Choice(Domain):
    """One of a few values: words, True and False, None."""

    def __init__(self, *values):
        if not values or not all(v is None or isinstance(v, (bool, str)) for v in values):
            raise ValueError(f"a choice is of words, booleans or None, not {values!r}")
        self._values = tuple(values)

    def __repr__(self):
        return f"Choice{self._values!r}"

    def __eq__(self, other):
        return isinstance(other, Choice) and self._values == other._values

    def __hash__(self):
        return hash(self._values)

    def admits(self, value) -> bool:
        return any(_same(value, v) for v in self._values)

    def normal(self, value):
        return str(value) if isinstance(value, str) else value

    def values(self) -> tuple:
        return self._values

    def parse(self, text: str):
        for v in self._values:   # a word as written; True, False and None in any case, spaces around
            if (v is None or isinstance(v, bool)) and text.strip().lower() == str(v).lower() or v == text:
                return v
        raise ValueError(text)

    def text(self) -> str:
        return either([written(v) for v in self._values])

    def notation(self) -> str:
        return " | ".join(written(v) for v in self._values)

    def words(self) -> str:
        return either([v if isinstance(v, str) else str(v).lower() for v in self._values])

    def latex(self) -> str:
        return r" $\mid$ ".join(code(written(v)) for v in self._values)

    def schema(self) -> dict:
        return {"enum": list(self._values)}


#: True or False.
BOOL = Choice(True, False)


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class Integer(Domain):
    """An integer at least ``minimum``."""

    def __init__(self, minimum: int):
        self.minimum = minimum

    def __repr__(self):
        return f"Integer({self.minimum})"

    def admits(self, value) -> bool:
        whole = _whole(value) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
        return whole and value >= self.minimum      # a file's 4.0 is the count 4, as every number's gate reads it

    def normal(self, value):
        return int(value)

    def parse(self, text: str):
        """The integer ``text`` is, read by the gate every number passes (:func:`formal.guards.numbers.exact`):
        ``4``, ``4.0``, ``2**2``; ValueError for anything else (a word, a fraction)."""
        from ..errors import ConfigError
        from ..guards.numbers import integer
        try:
            return integer(text.strip(), "value")
        except ConfigError:
            raise ValueError(text) from None

    def text(self) -> str:
        return {1: "a positive integer", 0: "a non-negative integer"}.get(self.minimum,
                                                                        f"an integer ≥ {self.minimum}")

    def notation(self) -> str:
        return f"int ≥ {self.minimum}"

    def words(self) -> str:
        return "an integer"

    def latex(self) -> str:
        return rf"integer $\geq {self.minimum}$"

    def schema(self) -> dict:
        return {"type": "integer", "minimum": self.minimum}


class Real(Domain):
    """A finite number from ``low`` (or −∞) to ``high`` (or ∞), each end open or closed."""

    def __init__(self, low=None, high=None, *, open_low=False, open_high=False):
        self.low, self.high, self.open_low, self.open_high = low, high, open_low, open_high

    def __repr__(self):
        return f"Real({self.low}, {self.high}, open_low={self.open_low}, open_high={self.open_high})"

    def admits(self, value) -> bool:
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            return False
        above = self.low is None or (value > self.low if self.open_low else value >= self.low)
        below = self.high is None or (value < self.high if self.open_high else value <= self.high)
        return above and below

    def normal(self, value):
        return float(value)

    def parse(self, text: str):
        if len(text.strip()) > 40:      # float() of 5000 digits is slow, and no option needs them
            raise ValueError(text)
        return float(text)

    def _ends(self):
        low = "−∞" if self.low is None else written(self.low)
        high = "∞" if self.high is None else written(self.high)
        return ("(" if self.open_low or self.low is None else "[") + f"{low}, {high}" + (
            ")" if self.open_high or self.high is None else "]")

    def _bound(self) -> str | None:
        """``"≥ 0"`` for a range with one end, None for one with two."""
        if self.high is None and self.low is not None:
            return f"{'>' if self.open_low else '≥'} {written(self.low)}"
        if self.low is None and self.high is not None:
            return f"{'<' if self.open_high else '≤'} {written(self.high)}"
        return None

    def text(self) -> str:
        bound = self._bound()
        return f"a finite number {bound}" if bound else f"a number in {self._ends()}"

    def notation(self) -> str:
        bound = self._bound()
        return f"float {bound}" if bound else f"float in {self._ends()}"

    def words(self) -> str:
        return "a number"

    def latex(self) -> str:
        bound = self._bound()
        if bound:
            relation = {">": ">", "≥": r"\geq", "<": "<", "≤": r"\leq"}[bound[0]]
            return rf"real ${relation} {bound[2:]}$"
        ends = self._ends().replace("−∞", r"-\infty").replace("∞", r"\infty")
        return rf"real in ${ends}$"

    def schema(self) -> dict:
        out = {"type": "number"}
        if self.low is not None:
            out["exclusiveMinimum" if self.open_low else "minimum"] = self.low
        if self.high is not None:
            out["exclusiveMaximum" if self.open_high else "maximum"] = self.high
        return out


class AnyOf(Domain):
    """The union of several domains (``n_kv_heads``: None, a positive integer or ``'symbolic'``)."""

    def __init__(self, *domains):
        self._parts = tuple(domains)

    def __repr__(self):
        return f"AnyOf{self._parts!r}"

    def parts(self) -> tuple:
        return self._parts

    def admits(self, value) -> bool:
        return any(d.admits(value) for d in self._parts)

    def normal(self, value):
        return next(d for d in self._parts if d.admits(value)).normal(value)

    def values(self) -> tuple:
        return tuple(v for d in self._parts for v in d.values())

    def parse(self, text: str):
        for d in self._parts:
            try:
                return d.parse(text)
            except ValueError:
                continue
        raise ValueError(text)

    def _each(self, how) -> list:
        """Every part's rendering, a choice's values one by one (``None, a positive integer or 'symbolic'``)."""
        out = []
        for d in self._parts:
            out += [how(Choice(v)) for v in d.values()] if isinstance(d, Choice) else [how(d)]
        return out

    def text(self) -> str:
        return either(self._each(lambda d: d.text()))

    def notation(self) -> str:
        return " | ".join(self._each(lambda d: d.notation()))

    def words(self) -> str:
        return either(self._each(lambda d: d.words()))

    def latex(self) -> str:
        return r" $\mid$ ".join(self._each(lambda d: d.latex()))

    def schema(self) -> dict:
        return {"anyOf": [d.schema() for d in self._parts]}
