"""Algorithm 6: layer normalisation, and RMSNorm as the case m = β = 0 (Phuong & Hutter, §5)."""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import d_e
from ..engine.algorithm import Algorithm, Assign, at_most
from ..engine.declarations import Option, Options
from ..engine.domains import Choice, Real
from ..ops import add, mean, mul, square, standardize, sub

__all__ = ["ALGORITHMS", "layer_norm", "build_layer_norm", "NORMS", "NORM", "EPS"]

NORMS = ("layer", "rms")

#: Which norm: Algorithm 6, or RMSNorm.
NORM = Option("norm", "layer", Choice(*NORMS), "layer (Algorithm 6) or rms (RMSNorm: m = β = 0, Zhang & Sennrich)")
#: ε under the root (:ref:`decision-layer-norm-eps`: 0, the paper's, by default).
EPS = Option("eps", 0.0, Real(0), "added to the variance under the root (0: the paper's)", examples=(0.0, 1e-5),
             searched=(0.0, 1e-12, 1e-6, 1e-5))   # the paper's, BERT's, T5's and LLaMA's, GPT-2's and torch's


@Options(NORM, EPS).builds
def build_layer_norm(*, norm, eps) -> Algorithm:
    """Algorithm 6 on one column ``e``: ``(e − m)/√v ⊙ γ + β`` with mean m and biased variance v (÷d_e).

    ``norm="rms"`` is RMSNorm (Gopher): ``e/√v ⊙ γ`` with v the mean square.  ``eps`` is added to v under
    the root (:ref:`decision-layer-norm-eps`: default 0, as in the paper; then a constant column is a
    :class:`~formal.errors.DomainError`, not a NaN).  The last line is evaluated without squaring the
    entries (:class:`~formal.ops.Standardize`), so columns of any scale float64 holds normalise correctly.
    Layer norm with eps = 0 requires ``2 ≤ d_e``: over a single feature every column is constant, so v = 0 always.
    """
    zero = (f"v = 0 under eps = 0 (a {'constant' if norm == 'layer' else 'zero'} column e); use eps > 0")
    gamma = TensorSpec("gamma", (d_e,), doc="scale")
    if norm == "layer":
        lines = [
            Assign("m", mean("e", d_e)),
            Assign("v", mean(square(sub("e", "m")), d_e)),
            Assign("e_hat", add(mul(standardize(sub("e", "m"), "v", eps, nonzero=zero), "gamma"), "beta"),
                   returns=True),
        ]
        params, label = [gamma, TensorSpec("beta", (d_e,), doc="offset")], "γ, β"
        constraints = [at_most(2, d_e, "layer norm with eps = 0 is undefined on a single feature: its variance is 0")
                       ] if eps == 0 else []
    else:
        lines = [
            Assign("v", mean(square("e"), d_e)),
            Assign("e_hat", mul(standardize("e", "v", eps, nonzero=zero), "gamma"), returns=True),
        ]
        params, label, constraints = [gamma], "γ", []
    return Algorithm(
        number=6, name="layer_norm", display="layer_norm" if norm == "layer" else "rms_norm",
        summary="Algorithm 6: normalise a column to zero mean and unit variance, then scale and shift."
                if norm == "layer" else "Algorithm 6 with m = β = 0: RMSNorm (Zhang & Sennrich 2019).",
        inputs=[TensorSpec("e", (d_e,), doc="neural network activations")],
        params=params, output=TensorSpec("e_hat", (d_e,), doc="normalised activations"),
        lines=lines, params_label=label, constraints=constraints,
    )


layer_norm = build_layer_norm()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (layer_norm,)
