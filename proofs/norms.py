"""Layer normalisation and RMS norm (Algorithm 6): what their own lines compute, for every width.

Each algorithm's lines are evaluated with the ops' meanings (:mod:`formal.engine.meaning`) over a column ``e``
and parameters γ, β of symbolic length d_e and a symbolic ε (the one under the root), and compared with the
statement's formulas exactly; the meaning is checked against the numpy execution of the object with ε = 0 (the
default) and with ε = 1/4.
"""

from __future__ import annotations

from .symbolic import decided, tied, twin
from .theorem import Outcome, Theorem

#: The ε of the second object checked (the default's is 0): any ε > 0 gives the same lines.
EPS = 0.25
#: Widths at which each meaning is compared with the execution.
TIE_WIDTHS = (2, 3)


def _eps():
    import sympy as sp
    return sp.Symbol("epsilon", nonnegative=True)


def _objects(norm):
    from formal import algorithms
    return algorithms.get("layer_norm", norm=norm), algorithms.get("layer_norm", norm=norm, eps=EPS)


def _meanings(norm, fixed=None):
    """``(algorithm, inputs, meaning)`` of each object, ε symbolic; the first failure of a meaning to equal
    the execution, or None."""
    from formal.core.symbols import d_e
    from formal.engine.meaning import evaluate, inputs
    out, failure = [], None
    for algorithm in _objects(norm):
        symbolic = inputs(algorithm, fixed=fixed)
        meaning = evaluate(algorithm, symbolic, constants={"ε": _eps()})
        out.append((algorithm, symbolic, meaning))
        failure = failure or tied(algorithm, symbolic, meaning, "e_hat", [{d_e: n} for n in TIE_WIDTHS])
    return out, failure


def _moments():
    """μ, σ² (biased) and ŝ = (e − μ)/√(σ² + ε) at entry i_0, written from their definitions."""
    import sympy as sp

    from formal.core.symbolic import AXES, entries
    from formal.core.symbols import d_e
    e, k = entries("e", (d_e,)), sp.Symbol("k", integer=True, nonnegative=True)
    mu = sp.Sum(e.at(k), (k, 0, d_e - 1)) / d_e
    var = sp.Sum((e.at(k) - mu) ** 2, (k, 0, d_e - 1)) / d_e
    return e, mu, var, (e.at(AXES[0]) - mu) / sp.sqrt(var + _eps()), AXES[0]


def _layer(perturbed):
    import sympy as sp

    from formal.core.symbolic import entries
    from formal.core.symbols import d_e
    e, mu, var, s_hat, i = _moments()
    eps = _eps()
    ranges = {i: d_e}
    plain, failure = _meanings("layer", fixed={"gamma": 1, "beta": 0})
    if failure:
        return Outcome(False, f"the execution is not the meaning: {failure}")
    for _, _, meaning in plain:
        s = meaning.values["e_hat"]
        k = sp.Symbol("j", integer=True, nonnegative=True)
        second = sp.Sum(s.at(k) ** 2, (k, 0, d_e - 1)) / d_e
        if perturbed:
            return twin(second, 1, "Σŝ²/d_e = 1 whatever ε", ranges=ranges)
        failure = (decided(sp.Sum(s.at(k), (k, 0, d_e - 1)), 0, "Σ_i ŝ_i = 0")
                   or decided(second, var / (var + eps), "Σ_i ŝ_i²/d_e = σ²/(σ² + ε)"))
        if failure:
            return failure
    full, failure = _meanings("layer")
    if failure:
        return Outcome(False, f"the execution is not the meaning: {failure}")
    gamma, beta = entries("gamma", (d_e,)).at(i), entries("beta", (d_e,)).at(i)
    for _, _, meaning in full:
        failure = decided(meaning.values["e_hat"].expr, gamma * s_hat + beta, "output = γ⊙ŝ + β", ranges=ranges)
        if failure:
            return failure
    return Outcome(True, "the lines give γ⊙ŝ + β, ŝ = (e − μ)/√(σ² + ε), and with γ = 1, β = 0 Σŝ = 0 and "
                         "Σŝ²/d_e = σ²/(σ² + ε), for every d_e and ε (exact), at ε = 0 and ε = 1/4; both objects "
                         f"execute their meaning at d_e = {', '.join(map(str, TIE_WIDTHS))}")


def _rms(perturbed):
    import sympy as sp

    from formal.core.symbolic import entries
    from formal.core.symbols import d_e
    e, _, _, s_hat, i = _moments()
    gamma = entries("gamma", (d_e,)).at(i)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    square = sp.Sum(e.at(k) ** 2, (k, 0, d_e - 1)) / d_e
    meanings, failure = _meanings("rms")
    if failure and not perturbed:
        return Outcome(False, f"the execution is not the meaning: {failure}")
    for _, _, meaning in meanings:
        got = meaning.values["e_hat"].expr
        if perturbed:
            return twin(got, gamma * s_hat, "RMS norm = γ⊙(e − μ)/√(σ² + ε)", ranges={i: d_e})
        failure = decided(got, gamma * e.expr / sp.sqrt(square + _eps()), "output = γ⊙e/√(Σe²/d_e + ε)",
                          ranges={i: d_e})
        if failure:
            return failure
    return Outcome(True, "the lines give γ⊙e/√(Σe²/d_e + ε) for every d_e and ε (exact), at ε = 0 and ε = 1/4; "
                         f"both objects execute their meaning at d_e = {', '.join(map(str, TIE_WIDTHS))}")


_METHOD = ("Algorithm 6's own lines (formal.algorithms.get('layer_norm'{})) evaluated with the ops' meanings over "
           "e, γ{} of symbolic length d_e and a symbolic ε under the root, for the default object (ε = 0) and the "
           "one with ε = 1/4: each statement's difference normalises to 0 exactly; each meaning instantiated at "
           "d_e = 2, 3 on 2 seeds of entries equals the numpy execution (float64, 1e-12)")

THEOREMS = [
    Theorem("layer-norm-moments",
            "Layer norm's lines compute γ⊙ŝ + β with ŝ = (e − μ)/√(σ² + ε), μ the mean and σ² the biased variance "
            "of the column; ŝ has mean 0 and mean square σ²/(σ² + ε) (1 at ε = 0).",
            r"\hat e = \gamma \odot \hat s + \beta,\quad \hat s = \tfrac{e - \mu}{\sqrt{\sigma^2 + \epsilon}},"
            r"\quad \textstyle\sum_i \hat s_i = 0,\quad \tfrac{1}{d}\sum_i \hat s_i^2 = \tfrac{\sigma^2}"
            r"{\sigma^2 + \epsilon}",
            ("layer_norm",), "symbolic", _METHOD.format("", ", β"),
            "ŝ has mean square 1 whatever ε.", _layer),
    Theorem("rms-norm-root-mean-square",
            "RMS norm's lines compute γ⊙e/√(Σe²/d_e + ε): the column divided by its root mean square, not "
            "centred.",
            r"\hat e = \gamma \odot e \big/ \sqrt{\tfrac{1}{d}\textstyle\sum_i e_i^2 + \epsilon}",
            ("layer_norm",), "symbolic", _METHOD.format(", norm='rms'", ""),
            "RMS norm's output is layer norm's, γ⊙(e − μ)/√(σ² + ε).", _rms),
]
