"""Asymptotic claims — ``Θ``, ``O`` and the exact leading term — decided from the derived formula.

"Attention is Θ(ℓ_x·ℓ_z)" speaks of the sizes that grow (``in``), every other size held at a positive
constant.  With several growing sizes this module uses the strict meaning: ``f = O(g)`` when ``f ≤ c·g`` for
*every* choice of the growing sizes past some bound, each independently.  For sums of monomials
``c·∏ xᵢ^aᵢ·∏ log(xᵢ)^bᵢ`` with positive coefficients that has an exact test (the monomial orders of
Newton polytopes): a term of ``f`` is ``O(g)`` exactly when its exponents lie under the convex hull of
``g``'s (a linear programme, solved exactly with sympy's simplex; with logarithms, under one of ``g``'s
terms).  So ``ℓ_x·ℓ_z = O(ℓ_x² + ℓ_z²)`` but not ``O(ℓ_x²)``.

Negative terms (the ``full`` convention subtracts a few) are allowed when each is dominated strictly by a
positive one, so that they cannot cancel the leading behaviour; otherwise, or for a coefficient whose sign
the sizes do not fix, the question is :class:`Undecided`, never guessed.
"""

from __future__ import annotations

__all__ = ["Undecided", "Terms", "big_o", "theta", "theta_text", "leading"]


class Undecided(Exception):
    """The formula is outside what this module decides; the message says why."""


class Terms:
    """The positive part of a formula in the growing ``variables``, as ``(exponents, log exponents)``."""

    def __init__(self, expr, variables, what: str):
        import sympy as sp
        self.variables = tuple(variables)
        positive, negative = [], []
        for term in sp.Add.make_args(sp.expand(expr)):
            coefficient, monomial = _split(term, self.variables, what)
            sign = (coefficient.is_positive, coefficient.is_negative)
            if sign == (True, False):
                positive.append(monomial)
            elif sign == (False, True):
                negative.append(monomial)
            else:
                raise Undecided(f"the sign of the coefficient {coefficient} in {what} is not fixed by the sizes")
        if not positive:
            raise Undecided(f"{what} has no positive term in {', '.join(map(str, variables))}")
        for m in negative:
            if not any(_strictly_below(m, p) for p in positive):
                raise Undecided(f"a negative term of {what} is not dominated by a positive one, so terms could "
                                "cancel")
        self.monomials = _maximal(positive)

    def below(self, other: "Terms") -> bool:
        """Every term of these is O(other)."""
        return all(_dominated(m, other.monomials) for m in self.monomials)


def _split(term, variables, what):
    """``term`` as (coefficient free of the variables, (exponents, log exponents))."""
    import sympy as sp
    exps, logs = [0] * len(variables), [0] * len(variables)
    coefficient = sp.Integer(1)
    index = {v: i for i, v in enumerate(variables)}
    for factor in sp.Mul.make_args(term):
        base, k = factor.as_base_exp()
        if not factor.free_symbols & set(variables):
            coefficient *= factor
        elif base in index and k.is_Rational:
            exps[index[base]] += k
        elif isinstance(base, sp.log) and base.args[0] in index and k.is_Rational and k > 0:
            logs[index[base.args[0]]] += k
        else:
            raise Undecided(f"{what}: the factor {factor} is not a power or a logarithm of a growing size")
    return coefficient, (tuple(sp.Rational(e) for e in exps), tuple(sp.Rational(e) for e in logs))


def _below(m, p) -> bool:
    """x^a·log^b = O(x^c·log^d) for all growing x: per variable a < c, or a = c and b ≤ d."""
    return all(a < c or (a == c and b <= d) for a, b, c, d in zip(m[0], m[1], p[0], p[1]))


def _strictly_below(m, p) -> bool:
    return _below(m, p) and m != p


def _dominated(m, monomials) -> bool:
    if any(_below(m, p) for p in monomials):
        return True
    if any(any(p[1]) for p in monomials) or any(m[1]) or len(monomials) < 2:
        return False
    return _under_hull(m[0], [p[0] for p in monomials])


def _under_hull(a, points) -> bool:
    """Is ``a ≤ Σ λⱼ·pⱼ`` for some convex weights λ (an exact linear programme)?"""
    import sympy as sp
    from sympy.solvers.simplex import InfeasibleLPError, linprog
    n = len(points)
    A = sp.Matrix([[-p[i] for p in points] for i in range(len(a))])
    b = sp.Matrix([-x for x in a])
    try:
        linprog(sp.Matrix([0] * n), A, b, sp.Matrix([[1] * n]), sp.Matrix([1]))
    except InfeasibleLPError:
        return False
    return True


def _maximal(monomials) -> list:
    """The monomials that decide the growth: each one O(the rest) is dropped, one at a time."""
    kept = list(dict.fromkeys(monomials))
    i = 0
    while i < len(kept):
        rest = kept[:i] + kept[i + 1:]
        if rest and _dominated(kept[i], rest):
            kept = rest
        else:
            i += 1
    return kept


def big_o(derived, claimed, variables, what: str) -> bool:
    return Terms(derived, variables, what).below(Terms(claimed, variables, "the claim"))


def theta(derived, claimed, variables, what: str) -> tuple:
    """``(O holds, Ω holds)``."""
    f, g = Terms(derived, variables, what), Terms(claimed, variables, "the claim")
    return f.below(g), g.below(f)


def theta_text(derived, variables, what: str) -> str:
    """``Θ(ℓ_x·ℓ_z)``: the derived formula's growth, its dominant terms without coefficients."""
    import sympy as sp

    from ..core.symbols import text
    terms = Terms(derived, variables, what)
    parts = []
    for exps, logs in terms.monomials:
        parts.append(sp.Mul(*(v ** e for v, e in zip(terms.variables, exps)),
                            *(sp.log(v) ** e for v, e in zip(terms.variables, logs))))
    return f"Θ({text(sp.Add(*parts))})"


def leading(derived, variables, what: str):
    """The exact leading term (coefficient included) in the growing ``variables``, by total degree."""
    import sympy as sp

    from .asymptotics import leading_term
    try:
        return leading_term(derived, list(variables))
    except (sp.PolynomialError, sp.polys.polyerrors.PolificationFailed, ValueError) as exc:
        raise Undecided(f"{what} is not a polynomial in {', '.join(map(str, variables))}: {exc}") from None
