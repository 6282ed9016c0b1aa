"""Realistic bugs in the ops' own FLOP rules (the ``full`` convention), each planted in a fresh process, with the
theorem that counts what the ops' numpy semantics perform (:mod:`proofs.flops`) and the cost theorems they break."""

from __future__ import annotations

from .entry import SpecMutant, patch

__all__ = ["MUTANTS"]

_COUNTS = ("op-flop-counts",)


def _softmax_without_max():
    """Softmax counted as 4nm − m: the maximum's comparisons forgotten (a count from the textbook formula)."""
    from formal.core.shapes import numel
    from formal.ops import Softmax
    counted = Softmax.flops

    def flops(self, shapes, out):
        return {**counted(self, shapes, out), "full": 4 * numel(out) - numel(out) / out[0]}
    patch(Softmax, "flops", flops)


def _softmax_by_rows():
    """Softmax's maximum and sum counted along rows: 5nm − 2n, right only for a square input."""
    from formal.core.shapes import numel
    from formal.ops import Softmax
    counted = Softmax.flops

    def flops(self, shapes, out):
        return {**counted(self, shapes, out), "full": 5 * numel(out) - 2 * out[0]}
    patch(Softmax, "flops", flops)


def _mean_n_plus_one():
    """A mean counted as n additions and a division per column (n + 1), not n − 1 additions and the division."""
    from formal.core.shapes import numel
    from formal.ops import Mean
    patch(Mean, "flops", lambda self, shapes, out: {"full": numel(shapes[0]) + numel(out)})


def _matmul_multiply_adds():
    """A matrix product's full count mkn — multiply-adds counted once — while the other conventions count 2·m·k·n."""
    from formal.ops import MatMul
    counted = MatMul.flops

    def flops(self, shapes, out):
        counts = counted(self, shapes, out)
        return {**counts, "full": counts["full"] / 2}
    patch(MatMul, "flops", flops)


def _standardize_without_eps():
    """Standardize's work forgets the addition of ε under the root."""
    import sympy as sp

    from formal.core.shapes import numel
    from formal.costs.cost import CONVENTIONS, Work
    from formal.ops import Standardize

    def work(self, shapes, out):
        count = numel(out) + numel(shapes[1])
        return Work({c: sp.sympify(count if c == "full" else 0) for c in CONVENTIONS}, sp.sympify(count),
                    sp.Integer(0))
    patch(Standardize, "work", work)


def _gelu_free():
    """GELU counted as free, like a table lookup."""
    from formal.ops.activations import GELU
    patch(GELU, "per_element", 0)


MUTANTS = (
    SpecMutant("softmax-count-without-max", "softmax's full count leaves out the maximum's n − 1 comparisons per "
               "column", _COUNTS, "cost rule", _softmax_without_max),
    SpecMutant("softmax-count-by-rows", "softmax's full count takes the maximum and the sum along rows (5nm − 2n, "
               "not 5nm − 2m): right only for square scores", _COUNTS, "cost rule", _softmax_by_rows),
    SpecMutant("mean-count-n-plus-one", "a mean's full count is n + 1 per column (n additions and the division)",
               _COUNTS, "cost rule", _mean_n_plus_one),
    SpecMutant("matmul-full-count-halved", "a matrix product's full count is mkn (multiply-adds counted once), "
               "below its matmul count", (*_COUNTS, "flop-conventions-ordered"), "cost rule", _matmul_multiply_adds),
    SpecMutant("standardize-count-without-eps", "layer norm's last line counts no addition of ε under the root",
               _COUNTS, "cost rule", _standardize_without_eps),
    SpecMutant("gelu-counted-free", "the exact GELU counts no FLOPs", _COUNTS, "cost rule", _gelu_free),
)
