"""Softmax (Algorithm 4, line 6): shift invariance and the online (blockwise) merge FlashAttention rests on.

The statements are about the package's own :class:`formal.ops.Softmax` (the one in Algorithm 4's last line),
through its symbolic meaning (:mod:`formal.engine.meaning`) on a matrix of symbolic entries and symbolic sizes,
and that meaning is checked against the op's numpy execution at small sizes.
"""

from __future__ import annotations

from .symbolic import decided, one_op, tied, twin
from .theorem import Outcome, Theorem

#: Sizes (ℓ_z, ℓ_x) at which the symbolic softmax is compared with the op's execution.
TIE_SIZES = ((1, 1), (2, 3), (3, 2))


def _softmax_op():
    """The Softmax op of Algorithm 4's last line."""
    from formal import algorithms
    from formal.engine.execution import flat_lines
    from formal.ops import Apply, Softmax

    def find(node):
        if isinstance(node, Apply):
            if isinstance(node.op, Softmax):
                return node.op
            return next((op for op in map(find, node.args) if op is not None), None)
    found = [op for line in flat_lines(algorithms.get("attention").lines) if (op := find(line.expr))]
    if len(found) != 1:
        raise ValueError(f"Algorithm 4 has {len(found)} softmaxes")
    return found[0]


def _tie(op, rows, columns):
    """The op on its own over an input ``s`` of ``rows``×``columns``: the algorithm, its symbolic input, and
    its meaning."""
    from formal.core.symbolic import entries
    from formal.engine.meaning import evaluate
    algorithm = one_op(op, (rows, columns))
    symbolic = {"s": entries("s", (rows, columns))}
    return algorithm, symbolic, evaluate(algorithm, symbolic)


def _shift(perturbed: bool) -> Outcome:
    from formal.core.symbolic import AXES, Value, entries
    from formal.core.symbols import ell_x, ell_z
    from formal.engine.meaning import Context
    op = _softmax_op()
    algorithm, symbolic, meaning = _tie(op, ell_z, ell_x)
    if not perturbed:
        failure = tied(algorithm, symbolic, meaning, "y", [{ell_z: a, ell_x: b} for a, b in TIE_SIZES])
        if failure:
            return Outcome(False, f"the op's execution is not its meaning: {failure}")
    s, c = symbolic["s"], entries("c", (ell_x,))
    moved = s.expr * c.at(AXES[1]) if perturbed else s.expr + c.at(AXES[1])
    ctx = Context(algorithm)
    lhs, rhs = op.meaning(ctx, Value(s.shape, moved)).expr, op.meaning(ctx, s).expr
    ranges = {AXES[0]: ell_z, AXES[1]: ell_x}
    if perturbed:
        return twin(lhs, rhs, "softmax(c[j]·s[i, j]) = softmax(s)[i, j]", ranges=ranges)
    failure = decided(lhs, rhs, "softmax(s[i, j] + c[j]) = softmax(s)[i, j]", ranges=ranges)
    return failure or Outcome(True, f"softmax(s + 1 cᵀ)[i, j] = softmax(s)[i, j] for every ℓ_z, ℓ_x and entry "
                                    f"(exact), and the op executes its meaning at (ℓ_z, ℓ_x) = {TIE_SIZES}")


def _merge(perturbed: bool) -> Outcome:
    """Two blocks A (rows 0 … a−1) and B (rows a … a+b−1) of every column j, with any reference maxima
    m_A[j], m_B[j] and a common m[j]: the merged denominator l_A·e^(m_A − m) + l_B·e^(m_B − m), with
    l_b = Σ_{k∈b} e^(x[k, j] − m_b), gives the op's softmax of the whole (a+b)×ℓ_x input."""
    import sympy as sp

    from formal.core.symbolic import AXES, entries
    from formal.core.symbols import dim, ell_x
    from formal.engine.meaning import Context
    a, b = dim("a"), dim("b")
    op = _softmax_op()
    n = dim("n")    # the rows a + b, as one size the execution can bind
    algorithm, symbolic, meaning = _tie(op, n, ell_x)
    if not perturbed:
        failure = tied(algorithm, symbolic, meaning, "y", [{n: 2, ell_x: 2}, {n: 3, ell_x: 1}])
        if failure:
            return Outcome(False, f"the op's execution is not its meaning: {failure}")
    i, j = AXES[0], AXES[1]
    x = entries("x", (a + b, ell_x))
    m_a, m_b, m = (entries(n, (ell_x,)).at(j) for n in ("m_A", "m_B", "m"))
    k = sp.Symbol("k", integer=True, nonnegative=True)
    l_a = sp.Sum(sp.exp(x.at(k, j) - m_a), (k, 0, a - 1))
    l_b = sp.Sum(sp.exp(x.at(k, j) - m_b), (k, a, a + b - 1))
    scale_a, scale_b = (1, 1) if perturbed else (sp.exp(m_a - m), sp.exp(m_b - m))
    merged = sp.exp(x.expr - m) / (l_a * scale_a + l_b * scale_b)
    softmax = op.meaning(Context(algorithm), x).expr
    ranges = {i: a + b, j: ell_x}
    if perturbed:
        return twin(merged, softmax, "e^(x_i − m)/(l_A + l_B) = softmax(x)_i", ranges=ranges)
    failure = decided(merged, softmax, "the merged softmax", ranges=ranges)
    return failure or Outcome(True, "equal to the op's softmax for every a, b, ℓ_x, entry and maxima (exact, the "
                                    "column's sum split at a), and the op executes its meaning at 2×2 and 3×1 inputs")


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
            "Softmax is invariant to adding a constant c[j] to every entry of column j (it normalises each column).",
            r"\mathrm{softmax}(x + c\mathbf{1}) = \mathrm{softmax}(x)",
            ("attention",), "symbolic",
            "the meaning of Algorithm 4's Softmax op on an ℓ_z×ℓ_x matrix of symbolic entries, ℓ_z and ℓ_x "
            "symbolic, column j shifted by c[j]: the difference normalises to 0 exactly (the factor e^c[j] "
            "leaves the column's sum); the meaning instantiated at (ℓ_z, ℓ_x) = (1, 1), (2, 3), (3, 2) on 2 seeds "
            "of entries equals the op's numpy execution (float64, 1e-12)",
            "Softmax is invariant to multiplying column j by a constant c[j].", _shift),
    Theorem("online-softmax-merge",
            "Softmax of a column split into two blocks, each with its own running maximum and sum, equals the "
            "blocks' sums rescaled by e^(m_b − m) and added: the identity FlashAttention rests on.",
            r"\frac{e^{x_i - m}}{l_A e^{m_A - m} + l_B e^{m_B - m}} = \mathrm{softmax}(x)_i,\quad "
            r"l_b = \textstyle\sum_{j \in b} e^{x_j - m_b}",
            ("attention",), "symbolic",
            "the meaning of Algorithm 4's Softmax op on an (a+b)×ℓ_x matrix, a, b, ℓ_x, the entries and the "
            "maxima symbolic: the difference normalises to 0 exactly once the column's sum is split at row a; "
            "the meaning instantiated at 2 rows × 2 columns and 3 rows × 1 column on 2 seeds of entries "
            "equals the op's numpy execution (float64, 1e-12)",
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
