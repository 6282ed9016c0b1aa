"""The √d scaling of Algorithm 4's scores: it keeps a query–key score's variance at 1.

Algorithm 4's own lines are evaluated with the ops' meanings (:mod:`formal.engine.meaning`) from the score
line on, Q and K bound to matrices of independent zero-mean unit-variance entries in their derived shapes; the
variance of the softmax's argument is computed from those moments alone, for every size.
"""

from __future__ import annotations

from .symbolic import decided, tied, twin
from .theorem import Outcome, Theorem

#: The random matrices the scores are made of: independent entries with E[x] = 0 and E[x²] = 1.
RANDOM = ("Q", "K")


def _expect(expr, ranges: dict):
    """E[expr] for independent entries of the :data:`RANDOM` matrices, E[x] = 0, E[x²] = 1: linear, through sums
    (``ranges``: index → (lo, hi) of the sums around), a product of entries of one matrix at indices u, v giving
    the Kronecker delta δ_uv, and a sum of a delta over its own index collapsing where the ranges agree."""
    import sympy as sp
    expr = sp.expand(expr)
    if isinstance(expr, sp.Add):
        return sp.Add(*[_expect(t, ranges) for t in expr.args])
    factors = sp.Mul.make_args(expr)
    for n, factor in enumerate(factors):
        base, power = factor.as_base_exp()
        if isinstance(base, sp.Sum) and power.is_Integer and power > 0:
            (k, lo, hi), = base.limits
            index = sp.Symbol(f"u_{len(ranges)}", integer=True, nonnegative=True)
            rest = sp.Mul(*factors[:n], *factors[n + 1:], base ** (power - 1))
            summand = _expect(base.function.xreplace({k: index}) * rest, {**ranges, index: (lo, hi)})
            return _collapse(summand, index, (lo, hi), ranges)
    return _moment(factors)


def _moment(factors):
    """E of a product of entries (and constants): per matrix, no entry → 1, one → 0, two → δ of their indices."""
    import sympy as sp
    by_matrix, scale = {}, sp.Integer(1)
    for factor in factors:
        base, power = factor.as_base_exp()
        if isinstance(base, sp.Indexed) and str(base.base.label) in RANDOM:
            by_matrix.setdefault(str(base.base.label), []).extend([base.indices] * int(power))
        else:
            scale *= factor
    for name, seen in by_matrix.items():
        if len(seen) == 1:
            return sp.Integer(0)
        if len(seen) > 2:
            raise ValueError(f"a moment of order {len(seen)} of {name}: only E[x] and E[x²] are stated")
        scale *= sp.Mul(*[sp.KroneckerDelta(u, v) for u, v in zip(*seen)])
    return scale


def _collapse(summand, index, bounds, ranges):
    """``Σ_{index ∈ bounds} summand``: a delta δ(index, t) with t running over the same range sets index = t."""
    import sympy as sp
    for delta in summand.atoms(sp.KroneckerDelta):
        other = delta.args[1] if delta.args[0] == index else delta.args[0] if delta.args[1] == index else None
        if other is not None and ranges.get(other) == bounds:
            return sp.expand(summand.xreplace({index: other}))
    lo, hi = bounds
    if index not in summand.free_symbols:
        return summand * (hi - lo + 1)
    return sp.Sum(summand, (index, lo, hi))


def _variance(x):
    import sympy as sp
    return sp.simplify(_expect(x**2, {}) - _expect(x, {}) ** 2)


def _scores():
    """Algorithm 4 from its score line on, Q and K independent entries in their derived shapes and an all-ones
    mask: the score S and the softmax's argument, with the DivSqrt's size."""
    from formal import algorithms
    from formal.core.symbolic import constant
    from formal.engine.meaning import Context, evaluate, evaluate_node, intermediate
    from formal.ops import DivSqrt, Softmax
    algorithm = algorithms.get("attention")
    values = {name: intermediate(algorithm, name) for name in ("Q", "K", "V")}
    values["mask"] = constant(1, algorithm.spec("mask").shape)
    score_line = next(line for line in algorithm.lines if getattr(line, "target", None) == "S")
    ctx = Context(algorithm)
    score = evaluate_node(ctx, score_line.expr, values)
    env = evaluate(algorithm, values, start="S").values
    found = [node for line in algorithm.lines for node in _nodes(line.expr) if isinstance(node.op, Softmax)]
    argument = evaluate_node(ctx, found[-1].args[0], env)
    sizes = [node.op.size for line in algorithm.lines for node in _nodes(line.expr) if isinstance(node.op, DivSqrt)]
    return algorithm, score, argument, sizes


def _nodes(node):
    from formal.ops import Apply
    if isinstance(node, Apply):
        yield node
        for arg in node.args:
            yield from _nodes(arg)


def _tie(algorithm):
    """None when Algorithm 4's symbolic evaluation (every input and parameter symbolic, an all-ones mask)
    equals its execution at two assignments of the sizes."""
    from formal.core.symbols import d_attn, d_out, d_x, d_z, ell_x, ell_z
    from formal.engine.meaning import evaluate, inputs
    symbolic = inputs(algorithm, fixed={"mask": 1})
    meaning = evaluate(algorithm, symbolic)
    sizes = [{d_x: 1, d_z: 2, d_attn: 2, d_out: 1, ell_x: 2, ell_z: 3},
             {d_x: 3, d_z: 1, d_attn: 3, d_out: 2, ell_x: 1, ell_z: 2}]
    return tied(algorithm, symbolic, meaning, "V_tilde", sizes)


def _sqrt_scaling(perturbed):
    import sympy as sp

    from formal.core.symbols import text
    algorithm, score, argument, sizes = _scores()
    if not isinstance(score.expr, sp.Sum):
        return Outcome(False, f"Algorithm 4's score is not a sum over an inner size: {score.expr}")
    (_, lo, hi), = score.expr.limits
    inner = hi - lo + 1
    if perturbed:
        scaled = score.expr / inner
        return twin(_variance(scaled), 1, f"Var(S/{text(inner)})")
    if len(sizes) != 1:
        return Outcome(False, f"Algorithm 4 scales its scores {len(sizes)} times")
    failure = _tie(algorithm)
    if failure:
        return Outcome(False, f"Algorithm 4's execution is not its meaning: {failure}")
    variance = _variance(argument.expr)
    failure = decided(variance, 1, f"Var of the softmax's argument (S scaled by 1/√{text(sizes[0])})")
    return failure or Outcome(
        True, f"S[i, j] = Σ over the derived inner size {text(inner)} (the size the DivSqrt scales by: "
              f"{text(sizes[0])}); Var(S/√{text(sizes[0])}) = {text(variance)} for every {text(inner)}; "
              "Algorithm 4 executes its meaning")


THEOREMS = [
    Theorem("sqrt-d-scaling",
            "Scaling the scores by 1/√d_attn, as Algorithm 4 does, keeps the variance of a query–key score at 1 "
            "for independent zero-mean unit-variance entries.",
            r"\mathrm{Var}\!\left(q^\top k / \sqrt{d}\right) = \tfrac{1}{d}\sum_{a=1}^{d} E[q_a^2]\,E[k_a^2] = 1",
            ("attention",), "symbolic",
            "Algorithm 4's lines evaluated with the ops' meanings from the score line on, Q (d_attn×ℓ_x) and K "
            "(d_attn×ℓ_z) bound to symbolic matrices in their derived shapes: the score is a sum over the derived "
            "inner size, and the variance of the softmax's argument, from E[x] = 0, E[x²] = 1 and independence "
            "alone, is 1 for every size (exact); the whole algorithm's meaning instantiated at two assignments of "
            "the sizes on 2 seeds of entries equals its numpy execution (float64, 1e-12)",
            "Scaling by 1/d keeps the variance at 1.", _sqrt_scaling),
]
