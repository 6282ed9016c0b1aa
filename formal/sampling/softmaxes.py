"""Which parameters make the input of an algorithm's softmaxes, read from its lines: the boundary case of large
scores scales them (:mod:`formal.sampling.examples`), so that a softmax that does not subtract the maximum
overflows (``exp(s)`` is ∞ past s ≈ 709 in float64) where the spec's, which subtracts it, is exact.

The walk follows the values a softmax's input is computed from, back through the algorithm's own lines to its
parameters, and into every algorithm it calls: a callee's parameters that make its softmax's input are the
caller's parameters passed in their place (``W_q^l`` of a stack's layer loop is its ``W_q``).  It stops at a
call's result and at the inputs: scaling an input would be undone by a layer norm on the way.  Only where no
parameter makes a softmax's scores — a kernel that takes projected queries and cached keys — are the inputs
that make them scaled instead (there no layer norm sits between).
"""

from __future__ import annotations

import functools

from ..engine.algorithm import Algorithm
from ..engine.execution import flat_lines
from ..ops import Apply, Ref, Softmax

__all__ = ["softmax_sources", "scaled_params"]


def _callee(op):
    callee = getattr(op, "callee", None)
    return callee if isinstance(callee, Algorithm) else None


def _names(node, scale_of_norms: bool = False) -> set:
    """The names a value reads, stopping at calls (their result is not made from the caller's parameters in
    the sense that matters here: a layer norm or a recurrence sits between).  With ``scale_of_norms``, a layer
    norm's γ and β are read through its call: they scale what it returns (a QK-norm's γ_q, γ_k make the scores)."""
    if isinstance(node, Ref):
        return {node.name}
    if not isinstance(node, Apply):
        return set()
    callee = _callee(node.op)
    if callee is None:
        return set().union(*(_names(a, scale_of_norms) for a in node.args)) if node.args else set()
    if scale_of_norms and callee.name == "layer_norm":
        return set().union(*(_names(a) for name, a in zip(node.op.names, node.args) if name in ("gamma", "beta")))
    return set()


@functools.cache
def softmax_sources(algorithm: Algorithm) -> dict:
    """Parameter (or real input) name → the kinds of softmax (``"scores"``, ``"logits"``) whose input it helps
    make, in ``algorithm`` and every algorithm it calls."""
    params = {p.name for p in algorithm.params} | {s.name for s in algorithm.inputs if s.kind == "real"}
    defined: dict = {}
    for line in flat_lines(algorithm.lines):
        for target in (line.target if isinstance(line.target, tuple) else (line.target,)):
            defined.setdefault(target, []).append(line.expr)
    found: dict = {}

    def trace(node, over, seen):
        for name in _names(node, scale_of_norms=over == "scores") - seen:
            seen.add(name)
            if name in params:
                found.setdefault(name, set()).add(over)
            for expr in defined.get(name, ()):
                trace(expr, over, seen)

    def visit(node):
        if not isinstance(node, Apply):
            return
        if isinstance(node.op, Softmax):
            trace(node.args[0], node.op.over, set())
        callee = _callee(node.op)
        if callee is not None:
            inner = softmax_sources(callee)
            for name, arg in zip(node.op.names, node.args):
                for over in inner.get(name, ()):
                    for source in _names(arg) & params:
                        found.setdefault(source, set()).add(over)
        for arg in node.args:
            visit(arg)

    for line in flat_lines(algorithm.lines):
        visit(line.expr)
    return {name: frozenset(kinds) for name, kinds in found.items()}


@functools.cache
def _takes_log(algorithm: Algorithm) -> bool:
    """Whether a line (or a callee's) is a negative log-likelihood of the probabilities it computes."""
    from ..ops import losses

    def visit(node):
        if not isinstance(node, Apply):
            return False
        callee = _callee(node.op)
        return (type(node.op).__module__ == losses.__name__ or (callee is not None and _takes_log(callee))
                or any(visit(a) for a in node.args))
    return any(visit(line.expr) for line in flat_lines(algorithm.lines))


def scaled_params(algorithm: Algorithm) -> tuple:
    """The parameters the large-score case scales (where none makes them, the inputs): those that make a
    softmax's scores, and those that make its logits unless a line takes the log of the resulting
    probabilities (a loss: there an underflowing probability makes the spec's −log P infinite, which no
    implementation is asked to match)."""
    log = _takes_log(algorithm)
    sources = {name: kinds for name, kinds in softmax_sources(algorithm).items() if "scores" in kinds or not log}
    weights = {p.name for p in algorithm.params} & set(sources)
    return tuple(sorted(weights or sources))
