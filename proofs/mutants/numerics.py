"""Realistic bugs in the numerics of the spec — softmax, the √d scaling, the norms — and the theorems each
must make fail."""

from __future__ import annotations

from .entry import SpecMutant, patch, rebuild

__all__ = ["MUTANTS"]

_SOFTMAX = ("softmax-shift-invariance", "online-softmax-merge")


def _softmax_rows():
    """Softmax's numpy face normalises each row (axis=1), the torch habit of ``softmax(dim=-1)``."""
    import numpy as np

    from formal.ops import Softmax

    def numpy(self, ctx, s):
        e = np.exp(s - np.max(s, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)
    patch(Softmax, "numpy", numpy)


def _div_sqrt_by_d():
    """DivSqrt's numpy face divides by d instead of √d."""
    from formal.ops import DivSqrt
    patch(DivSqrt, "numpy", lambda self, ctx, a: a / ctx.evaluate(self.size))


def _attention_sqrt_d_x():
    """Algorithm 4 scales its scores by 1/√d_x (the model width) instead of 1/√d_attn."""
    from importlib import import_module

    from formal.core.symbols import d_x
    from formal.ops import div_sqrt
    attention = import_module("formal.algorithms.attention")
    patch(attention, "_scaled", lambda S, score: div_sqrt(S, d_x) if score == "scaled_dot" else S)
    rebuild("attention", attention.build_attention)


def _norm(lines):
    """Rebuild Algorithm 6 with ``lines(norm, built)`` in place of its lines (``built``: the correct object)."""
    from formal.algorithms import normalization as norms
    from formal.engine.algorithm import Algorithm
    from formal.engine.declarations import Options

    @Options(norms.NORM, norms.EPS).builds
    def build_layer_norm(*, norm, eps):
        built = norms.build_layer_norm(norm=norm, eps=eps)
        return Algorithm(number=built.number, name=built.name, display=built.display, summary=built.summary,
                         inputs=built.inputs, params=built.params, output=built.output,
                         lines=lines(norm, built), params_label=built.params_label, constraints=built.constraints,
                         options=built.options, builder=build_layer_norm)
    rebuild("layer_norm", build_layer_norm)


def _beta_inside():
    """Layer norm's last line shifts before it scales: (ŝ + β)⊙γ."""
    from formal.engine.algorithm import Assign
    from formal.ops import add, mul

    def lines(norm, built):
        if norm != "layer":
            return built.lines
        s_hat = built.lines[-1].expr.args[0].args[0]           # γ⊙ŝ + β: the ŝ of its first term
        return (*built.lines[:-1], Assign("e_hat", mul(add(s_hat, "beta"), "gamma"), returns=True))
    _norm(lines)


def _unbiased():
    """Layer norm's variance divides by d_e − 1 (``torch.var``'s default, Bessel's correction)."""
    import numpy as np

    from formal.core.symbols import d_e
    from formal.engine.algorithm import Assign
    from formal.ops import Apply, Mean

    class Unbiased(Mean):
        def numpy(self, ctx, a):
            return np.sum(a, axis=0) / (a.shape[0] - 1)

    def lines(norm, built):
        if norm != "layer":
            return built.lines
        m, v, out = built.lines
        return (m, Assign("v", Apply(Unbiased(d_e - 1), v.expr.args)), out)
    _norm(lines)


def _eps_outside():
    """Standardize's numpy face adds ε outside the root: c / (√v + ε)."""
    import numpy as np

    from formal.ops import Standardize
    patch(Standardize, "numpy", lambda self, ctx, c, v: c / (np.sqrt(v) + self.eps))


def _rms_centred():
    """RMS norm subtracts the column's mean, as layer norm does."""
    from formal.core.symbols import d_e
    from formal.engine.algorithm import Assign
    from formal.ops import Apply, Ref, mean, mul, square, sub

    def lines(norm, built):
        if norm != "rms":
            return built.lines
        standardize = built.lines[-1].expr.args[0].op
        return (Assign("m", mean("e", d_e)), Assign("v", mean(square(sub("e", "m")), d_e)),
                Assign("e_hat", mul(Apply(standardize, (sub("e", "m"), Ref("v"))), "gamma"), returns=True))
    _norm(lines)


MUTANTS = (
    SpecMutant("softmax-over-rows", "Softmax's numpy face normalises rows (axis=1) instead of columns", _SOFTMAX,
               "op", _softmax_rows),
    SpecMutant("div-sqrt-by-d", "DivSqrt's numpy face divides the scores by d instead of √d", ("sqrt-d-scaling",),
               "op", _div_sqrt_by_d),
    SpecMutant("attention-scaled-by-sqrt-d-x", "Algorithm 4 scales its scores by 1/√d_x instead of 1/√d_attn",
               ("sqrt-d-scaling",), "algorithm", _attention_sqrt_d_x),
    SpecMutant("layer-norm-beta-inside", "layer norm returns (ŝ + β)⊙γ instead of γ⊙ŝ + β",
               ("layer-norm-moments",), "algorithm", _beta_inside),
    SpecMutant("layer-norm-unbiased-variance", "layer norm's variance divides by d_e − 1",
               ("layer-norm-moments",), "algorithm", _unbiased),
    SpecMutant("standardize-eps-outside-root", "Standardize's numpy face computes c/(√v + ε) instead of c/√(v + ε)",
               ("layer-norm-moments", "rms-norm-root-mean-square"), "op", _eps_outside),
    SpecMutant("rms-norm-centred", "RMS norm subtracts the column's mean before dividing by its root mean square",
               ("rms-norm-root-mean-square",), "algorithm", _rms_centred),
)
