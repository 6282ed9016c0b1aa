"""Leading-order terms of cost polynomials, derived from the polynomial itself.

A cost is a polynomial in the size symbols.  "Attention FLOPs are Θ(ℓ_x·ℓ_z·d)" is a statement about the
terms that dominate as some sizes grow: :func:`leading_term` keeps exactly those terms, treating every
other symbol as a constant.  Groups of variables are compared in order (lexicographically): first the
total degree in the first group, then in the second, and so on.

Examples
--------
>>> from formal import attention
>>> from formal.core.symbols import d_attn, d_out, d_x, d_z, ell_x, ell_z
>>> from sympy import Symbol
>>> d = Symbol("d", positive=True, integer=True)
>>> flops = attention.cost("matmul").flops
>>> same_width = {d_attn: d, d_out: d, d_x: d, d_z: d}
>>> leading_term(flops, [ell_x, ell_z], subs=same_width)
4*d*ell_x*ell_z
>>> big_theta(flops, [ell_x, ell_z], subs=same_width)
'Θ(d·ℓ_x·ℓ_z)'
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sp

from ..core.symbols import text
from ..errors import ConfigError

__all__ = ["leading_term", "big_theta"]


def _groups(groups) -> list:
    out = []
    for g in groups:
        group = tuple(g) if isinstance(g, Iterable) and not isinstance(g, (str, sp.Basic)) else (g,)
        for s in group:
            if not isinstance(s, sp.Symbol):
                raise ConfigError(f"leading_term takes symbols, got {s!r}")
        out.append(group)
    if not out:
        raise ConfigError("leading_term needs at least one variable")
    return out


def leading_term(expr, *groups, subs: dict | None = None) -> sp.Expr:
    """The terms of ``expr`` that dominate as the variables in ``groups`` grow (others held constant).

    Parameters
    ----------
    expr : sympy.Expr
        A polynomial in the variables (other symbols may appear in the coefficients).
    *groups : Symbol or sequence of Symbol
        Variables, compared by total degree within a group and lexicographically across groups.
    subs : dict, optional
        A substitution applied first (``{d_x: d, d_z: d}`` to speak of one width d).
    """
    groups = _groups(groups)
    expr = sp.sympify(expr).xreplace(subs or {})
    # ⌊x⌋ = x + O(1) (a strided convolution's output length): the leading term is x's
    expr = sp.expand(expr.replace(lambda e: isinstance(e, (sp.floor, sp.ceiling)), lambda e: e.args[0]))
    gens = [s for g in groups for s in g]
    poly = sp.Poly(expr, *gens)
    spans, start = [], 0
    for g in groups:
        spans.append(range(start, start + len(g)))
        start += len(g)

    def key(monom):
        return tuple(sum(monom[i] for i in span) for span in spans)

    terms = poly.terms()
    best = max(key(m) for m, _ in terms)
    return sp.Add(*(c * sp.Mul(*(x ** e for x, e in zip(gens, m))) for m, c in terms if key(m) == best))


def big_theta(expr, *groups, subs: dict | None = None) -> str:
    """``"Θ(…)"`` of the leading term, with its numeric factor dropped."""
    lead = leading_term(expr, *groups, subs=subs)
    _, primitive = lead.as_content_primitive()
    return f"Θ({text(sp.factor_terms(primitive))})"
