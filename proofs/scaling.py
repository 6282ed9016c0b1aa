"""The √d scaling of Algorithm 4's scores: it keeps a query–key score's variance at 1."""

from __future__ import annotations

from .theorem import Outcome, Theorem


def _sqrt_scaling(perturbed):
    """Var(q·k) = Σ_a Σ_b E[q_a q_b]·E[k_a k_b] = Σ_a Σ_b δ_ab = d for independent zero-mean unit-variance
    entries; the spec's scale (its DivSqrt's size, read from Algorithm 4's lines) makes it 1."""
    import sympy as sp

    from formal import algorithms
    from formal.core.symbols import text
    from formal.ops import Apply, DivSqrt
    found = []

    def visit(node):
        if isinstance(node, Apply):
            if isinstance(node.op, DivSqrt):
                found.append(node.op.size)
            for a in node.args:
                visit(a)
    for line in algorithms.get("attention").lines:
        visit(line.expr)
    if len(found) != 1:
        return Outcome(False, f"Algorithm 4 scales its scores {len(found)} times")
    d = found[0]
    a = sp.Symbol("a", integer=True, positive=True)
    mean, var = 0, 1  # of every entry of q and k, independent
    # E[(Σ_a q_a k_a)²] = Σ_a E[q_a²]·E[k_a²] + Σ_{a≠b} E[q_a]·E[q_b]·E[k_a]·E[k_b]
    variance = sp.Sum((var + mean**2) ** 2, (a, 1, d)).doit() + (d**2 - d) * mean**4 - (d * mean**2) ** 2
    scale = 1 / d if perturbed else 1 / sp.sqrt(d)
    scaled = sp.simplify(variance * scale ** 2)
    if scaled == 1:
        return Outcome(True, f"Var(q·k) = {text(variance)}; scaled by {text(scale)}: 1")
    return Outcome(False, f"Var(q·k·{text(scale)}) = {text(scaled)}: at {text(d)} = 2 it is {scaled.subs(d, 2)}")


THEOREMS = [
    Theorem("sqrt-d-scaling",
            "Scaling the scores by 1/√d_attn, as Algorithm 4 does, keeps the variance of a query–key score at 1 "
            "for independent zero-mean unit-variance entries.",
            r"\mathrm{Var}\!\left(q^\top k / \sqrt{d}\right) = \tfrac{1}{d}\sum_{a=1}^{d} E[q_a^2]\,E[k_a^2] = 1",
            ("attention",), "symbolic",
            "the scale is read from Algorithm 4's DivSqrt op; E[(Σ_a q_a k_a)²] − E[Σ_a q_a k_a]² summed by sympy "
            "for symbolic d from the entries' moments",
            "Scaling by 1/d keeps the variance at 1.", _sqrt_scaling),
]
