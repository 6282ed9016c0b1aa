"""Layer normalisation (Algorithm 6): its output's moments, checked on the spec's execution."""

from __future__ import annotations

import numpy as np

from .checks import seeded
from .theorem import Theorem

TOL = 1e-12


def _run(norm, rng, d):
    from formal import algorithms
    algorithm = algorithms.get("layer_norm", norm=norm)
    e = rng.normal(size=d) * rng.uniform(0.1, 10) + rng.normal()
    args = {"e": e, "gamma": np.ones(d)}
    if norm == "layer":
        args["beta"] = np.zeros(d)
    return algorithm(**args)


def _layer(perturbed):
    def check(rng, d):
        y = _run("rms" if perturbed else "layer", rng, d)
        mean, var = float(y.mean()), float(y.var())
        if abs(mean) > TOL or abs(var - 1) > 1e-10:
            return f"{'RMS' if perturbed else 'layer'} norm of a column of {d}: mean {mean:.3g}, variance {var:.6g}"
    return seeded(check, seeds=25, sizes=(2, 3, 5, 8), label="d_e")


def _rms(perturbed):
    def check(rng, d):
        y = _run("rms", rng, d)
        value = float(y.var()) if perturbed else float(np.sqrt(np.mean(y**2)))
        if abs(value - 1) > 1e-10:
            return f"RMS norm of a column of {d}: {'variance' if perturbed else 'root mean square'} {value:.6g}"
    return seeded(check, seeds=25, sizes=(2, 3, 5, 8), label="d_e")


THEOREMS = [
    Theorem("layer-norm-moments",
            "With γ = 1, β = 0 and eps = 0, layer norm's output has mean 0 and (biased) variance 1 per column.",
            r"\tfrac{1}{d}\textstyle\sum_i \hat e_i = 0,\quad \tfrac{1}{d}\sum_i \hat e_i^2 = 1",
            ("layer_norm",), "property-tested",
            "the spec's execution (float64), 25 seeds at each of d_e = 2, 3, 5, 8, columns of random scale and offset",
            "RMS norm's output has mean 0 and variance 1.", _layer),
    Theorem("rms-norm-root-mean-square",
            "With γ = 1 and eps = 0, RMS norm's output has root mean square 1 per column.",
            r"\sqrt{\tfrac{1}{d}\textstyle\sum_i \hat e_i^2} = 1", ("layer_norm",), "property-tested",
            "the spec's execution (float64), 25 seeds at each of d_e = 2, 3, 5, 8",
            "RMS norm's output has variance 1.", _rms),
]
