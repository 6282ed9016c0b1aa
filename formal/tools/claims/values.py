"""The derived value a claim is judged against (:class:`Value`), and what every subject checks the same way:
its fields, the sizes it binds, and how far a substitution of formulas may expand."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import shown
from .claim import ClaimError

__all__ = ["Value", "only", "size_value", "spelled", "numbers_at", "SIZE_FIELDS", "check_expansion", "check_growing",
           "formula_value", "MAX_EXPANSION"]

#: The most terms a quantity may expand to once its sizes are replaced by formulas.
MAX_EXPANSION = 100_000


@dataclass
class Value:
    """A derived value: ``kind`` is ``"number"``, ``"formula"`` (sympy) or ``"array"``; ``sizes`` maps the
    names a claimed formula may use to their numbers (a model's resolved sizes) or symbols; ``measure`` is,
    for a graph, ``(argument, function of it)`` to measure growth."""

    kind: str
    value: object
    sizes: dict = field(default_factory=dict)
    what: str = ""
    measure: tuple | None = None
    bound: dict = field(default_factory=dict)

    @property
    def names(self) -> dict:
        """What a claimed formula's names stand for: the sizes the claim bound (``d_mid = "d_attn"``: the
        binding holds on both sides of the claim), then the derived value's own sizes."""
        return {**self.bound, **self.sizes}


def only(subject, allowed, what):
    """Refuse a field of ``subject`` that ``what`` (a kind of subject) does not take."""
    extra = sorted(set(subject) - set(allowed))
    if extra:
        raise ClaimError(f"{extra[0]} does not apply to {what}")


def check_growing(growing, known, sizes, label) -> None:
    """Refuse a growing size (``in``) that is neither a size of the subject nor a name its ``sizes`` introduce
    (``ell_x = "n"`` introduces ``n``), or that ``sizes`` binds: a claim about growth in a name the formula
    does not have would be judged on a constant."""
    introduced = set().union(*(size_value(k, v).names for k, v in sizes.items() if isinstance(v, str)))
    names = (set(known) - set(sizes)) | introduced
    for name in growing:
        if name in sizes and name not in introduced:
            raise ClaimError(f"in names {name!r}, which sizes binds to {shown(sizes[name])}: a size that grows "
                             "cannot also be fixed")
        if name not in names:
            raise ClaimError(f"in names {shown(name)}, which is not a size of {label} here; its sizes: "
                             f"{', '.join(sorted(names))}")


def check_expansion(expr, formulas: dict) -> None:
    """Refuse, before expanding, a substitution of size formulas (name → Formula) that would expand ``expr``
    (a sympy expression) past :data:`MAX_EXPANSION` terms."""
    from math import comb

    import sympy as sp
    sizes = {k: f.terms for k, f in formulas.items()}
    total = 0
    for term in sp.Add.make_args(sp.expand(expr)):
        count = 1
        for factor in sp.Mul.make_args(term):
            base, k = factor.as_base_exp()
            t = sizes.get(str(base), 1)
            if t > 1 and k.is_Integer:
                count *= comb(t + abs(int(k)) - 1, abs(int(k)))
            elif t > 1:
                count *= t
        total += count
        if total > MAX_EXPANSION:
            raise ClaimError(f"the sizes bound to {', '.join(sorted(formulas))} expand the quantity past "
                             f"{MAX_EXPANSION:,} terms")


def size_value(name, value):
    """A size bound in a claim, through the gate (:func:`formal.guards.numbers.size`): a positive int (at most
    :data:`formal.guards.limits.MAX_SIZE`) however it is spelled (``1024``, ``"1024"``, ``"2**10"``), or a
    formula that names sizes (``d_x = "d"``), kept as a :class:`~formal.core.formula.Formula`."""
    from ...guards.numbers import size
    return size(value, f"size {name}")


#: The subject fields that hold one size each (``sizes`` holds many; ``tokens`` may also be a figure).
SIZE_FIELDS = ("seq_len", "batch", "kv_window", "tokens")


def spelled(subject: dict) -> dict:
    """``subject`` with every size it binds through the gate: a number, however spelled, is that number (an
    int), validated there; a formula that names sizes stays the string written.  So ``seq_len = "5000"`` is
    checked against ℓ_max as ``5000`` is, and ``L = "-12"`` is refused as ``-12`` is."""
    from .figures import is_figure
    out = dict(subject)
    if isinstance(subject.get("sizes"), dict):
        out["sizes"] = {k: _through(f"size {k}", v) for k, v in subject["sizes"].items()}
    for key in SIZE_FIELDS:
        raw = subject.get(key)
        if key in subject and not (key == "tokens" and isinstance(raw, str) and is_figure(raw)):
            out[key] = _through(key, raw)
    return out


def _through(what, raw):
    from ...guards.numbers import size
    value = size(raw, what)
    return value if isinstance(value, int) else raw


def numbers_at(formulas: dict, numbers: dict) -> dict:
    """The sizes bound to formulas (name → Formula) whose names all have numbers (``numbers``: name → int), as
    the positive integers they are there, repeatedly (``d_mid = "d_attn"``, ``d_attn = "d_x/H"``); a value that
    is not a positive integer is a ConfigError naming the size, its formula and the numbers."""
    from ...guards.numbers import at
    numbers, found = dict(numbers), {}
    pending = dict(formulas)
    while True:
        ready = {k: f for k, f in pending.items() if f.names <= set(numbers)}
        if not ready:
            return found
        for k, f in ready.items():
            numbers[k] = found[k] = at(f, numbers, f"size {k}")   # a ConfigError: the claim is invalid
            del pending[k]


def formula_value(expr, what, *, bound=None) -> Value:
    """A sympy expression as a :class:`Value`: a number (int or Fraction) when it has no symbol left, else a
    formula with its symbols as the sizes a claim may name; ``bound``: the sizes the claim bound (name → an
    int or a sympy expression), which a claimed formula may name too."""
    import sympy as sp
    expr = sp.expand(expr)
    bound = dict(bound or {})
    if not expr.free_symbols:
        number = sp.nsimplify(expr) if not expr.is_Rational else expr
        if number.is_Rational:
            from fractions import Fraction
            value = Fraction(int(number.p), int(number.q))
            return Value("number", value.numerator if value.denominator == 1 else value, {}, what, bound=bound)
    return Value("formula", expr, {str(s): s for s in expr.free_symbols}, what, bound=bound)
