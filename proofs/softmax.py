"""Softmax (Algorithm 4, line 6): shift invariance and the online (blockwise) merge FlashAttention rests on.

The statements are about softmax as the paper defines it, ``softmax(x)_i = exp(x_i)/Σ_j exp(x_j)``, with
symbolic entries; the spec's :class:`formal.ops.Softmax` is checked against that definition numerically.
"""

from __future__ import annotations

from .theorem import Outcome, Theorem

SIZES = 4  # vectors of 1 … 4 symbolic entries


def _softmax(xs):
    import sympy as sp
    total = sum(sp.exp(x) for x in xs)
    return [sp.exp(x) / total for x in xs]


def _entries(n):
    import sympy as sp
    return sp.symbols(f"x1:{n + 1}", real=True)


def _spec_matches_definition():
    """The spec's Softmax op equals the definition on a column (numeric, float64)."""
    import numpy as np

    from formal.claims.ops import op_algorithm
    x = np.array([0.3, -1.2, 2.0, 0.0])
    want = np.exp(x) / np.exp(x).sum()
    return np.allclose(op_algorithm("softmax")(x=x), want, rtol=1e-14, atol=0)


def _shift(perturbed: bool) -> Outcome:
    import sympy as sp
    c = sp.Symbol("c", real=True)
    if not _spec_matches_definition():
        return Outcome(False, "the spec's softmax differs from the definition")
    for n in range(1, SIZES + 1):
        xs = _entries(n)
        moved = [c * x for x in xs] if perturbed else [x + c for x in xs]
        for a, b in zip(_softmax(moved), _softmax(xs)):
            if sp.simplify(a - b) != 0:
                values = {**{x: i for i, x in enumerate(xs)}, c: 2}
                return Outcome(False, f"n = {n}, x = {list(range(n))}, c = 2: {sp.N(a.subs(values), 6)} ≠ "
                                      f"{sp.N(b.subs(values), 6)}")
    return Outcome(True, f"every entry, n = 1 … {SIZES}, c symbolic")


def _merge(perturbed: bool) -> Outcome:
    """Two blocks A, B with any reference maxima m_A, m_B and a common m: the merged denominator
    l_A·e^(m_A − m) + l_B·e^(m_B − m), l_b = Σ_{j∈b} e^(x_j − m_b), gives softmax of the whole column."""
    import sympy as sp
    m_a, m_b, m = sp.symbols("m_A m_B m", real=True)
    for a in range(1, 3):
        for b in range(1, 3):
            xs = _entries(a + b)
            left, right = xs[:a], xs[a:]
            l_a = sum(sp.exp(x - m_a) for x in left)
            l_b = sum(sp.exp(x - m_b) for x in right)
            scale_a, scale_b = (1, 1) if perturbed else (sp.exp(m_a - m), sp.exp(m_b - m))
            denominator = l_a * scale_a + l_b * scale_b
            merged = [sp.exp(x - m) / denominator for x in xs]
            for got, want in zip(merged, _softmax(xs)):
                if sp.simplify(got - want) != 0:
                    values = {**{x: 0 for x in xs}, m_a: 1, m_b: 0, m: 1}
                    return Outcome(False, f"blocks of {a} and {b}, x = 0, m_A = 1, m_B = 0, m = 1: "
                                          f"{sp.N(got.subs(values), 6)} ≠ {sp.N(want.subs(values), 6)}")
    return Outcome(True, "every split of up to 2 + 2 entries, maxima symbolic")


def _associative(perturbed: bool) -> Outcome:
    """The merge of running (max, sum) pairs keeps l·e^m = Σ e^x, whatever the maximum taken: merging is
    associative and, by induction, any number of blocks gives the column's softmax denominator."""
    import sympy as sp
    m1, m2, m3, M, N = sp.symbols("m1 m2 m3 M N", real=True)
    l1, l2, l3 = sp.symbols("l1 l2 l3", positive=True)

    def merge(a, b, ref):
        (ma, la), (mb, lb) = a, b
        if perturbed:
            return ref, la + lb
        return ref, la * sp.exp(ma - ref) + lb * sp.exp(mb - ref)

    left = merge(merge((m1, l1), (m2, l2), M), (m3, l3), N)
    right = merge((m1, l1), merge((m2, l2), (m3, l3), M), N)
    total = l1 * sp.exp(m1) + l2 * sp.exp(m2) + l3 * sp.exp(m3)
    for name, (m_, l_) in (("(1·2)·3", left), ("1·(2·3)", right)):
        if sp.simplify(l_ * sp.exp(m_) - total) != 0:
            at = {m1: 1, m2: 0, m3: 0, M: 0, N: 0, l1: 1, l2: 1, l3: 1}
            return Outcome(False, f"{name}: l·e^m = {sp.simplify(l_ * sp.exp(m_))} ≠ {total} (at m1 = 1, others 0: "
                                  f"{sp.N((l_ * sp.exp(m_) - total).subs(at), 4)})")
    return Outcome(True, "l·e^m of both groupings equals l1·e^m1 + l2·e^m2 + l3·e^m3")


THEOREMS = [
    Theorem("softmax-shift-invariance",
            "Softmax is invariant to adding a constant c to every entry of a column.",
            r"\mathrm{softmax}(x + c\mathbf{1}) = \mathrm{softmax}(x)",
            ("attention",), "symbolic, sizes ≤ 4",
            "sympy simplifies each entry's difference to 0 for n = 1 … 4 symbolic entries and symbolic c; the spec's "
            "Softmax op equals the definition (float64)",
            "Softmax is invariant to multiplying every entry by a constant c.", _shift),
    Theorem("online-softmax-merge",
            "Softmax of a column split into two blocks, each with its own running maximum and sum, equals the "
            "blocks' sums rescaled by e^(m_b − m) and added: the identity FlashAttention rests on.",
            r"\frac{e^{x_i - m}}{l_A e^{m_A - m} + l_B e^{m_B - m}} = \mathrm{softmax}(x)_i,\quad "
            r"l_b = \textstyle\sum_{j \in b} e^{x_j - m_b}",
            ("attention",), "symbolic, sizes ≤ 4",
            "sympy, every split into blocks of 1–2 symbolic entries, the maxima symbolic (any reference works)",
            "The blocks' sums can be added without rescaling by e^(m_b − m).", _merge),
    Theorem("online-softmax-associative",
            "Merging running (maximum, sum) pairs preserves l·e^m, so the merge is associative and any number of "
            "blocks, merged in any grouping, gives the column's softmax denominator (induction on the blocks).",
            r"\mathrm{merge}((m_1,l_1),(m_2,l_2)) = (M,\ l_1 e^{m_1 - M} + l_2 e^{m_2 - M}),\quad l e^{m}"
            r" = \textstyle\sum_b l_b e^{m_b}",
            ("attention",), "symbolic",
            "sympy: both groupings of three blocks, all maxima and sums symbolic",
            "Merging adds the sums without rescaling.", _associative),
]
