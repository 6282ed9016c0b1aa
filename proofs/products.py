"""The matrix products in an algorithm's lines, read from the lines themselves (calls included): the FLOPs of
its :class:`~formal.ops.linalg.MatMul` nodes alone, and the parameters that are a product's weight matrix.

The cost and Kaplan theorems compare these with the derived costs: each is computed by walking the
expression trees, so a cost rule that counts something other than a product, or a parameter that is not a
weight matrix counted as one, shows up as a difference.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from types import SimpleNamespace

__all__ = ["product_flops", "weight_matrices", "nodes"]


def nodes(algorithm):
    """Every expression node of ``algorithm``'s lines (loop bodies included, calls not entered)."""
    from formal.engine.execution import flat_lines

    def walk(node):
        yield node
        for arg in getattr(node, "args", ()):
            yield from walk(arg)
    for line in flat_lines(algorithm.lines):
        yield from walk(line.expr)


def product_flops(algorithm, convention: str = "matmul", *, roles: tuple | None = None):
    """The FLOPs under ``convention`` of ``algorithm``'s :class:`~formal.ops.linalg.MatMul` nodes alone (with
    ``roles``, only the products of those roles), every other op counted 0, summed as the derivation sums a
    line's work (loops times their counts, a growing loop in closed form, a call its callee's products
    renamed): an expanded sympy polynomial."""
    return _product_work(algorithm, None if roles is None else tuple(sorted(roles))).flops[convention]


@lru_cache(maxsize=None)
def _product_work(algorithm, roles):
    from formal.costs.cost import Work
    from formal.engine.calls import CallOp
    from formal.engine.derivation import derive
    from formal.ops.linalg import MatMul

    def products_only(op, shapes, out):
        """A matrix product's work (a call's: its callee's products, renamed); every other op's is 0."""
        if isinstance(op, CallOp):
            return _renamed(op, _product_work(op.callee, roles), shapes, out)
        if isinstance(op, MatMul) and (roles is None or op.role in roles):
            return op.work(shapes, out)
        return Work()

    return derive(algorithm, op_work=products_only).work


def _renamed(op, work, shapes, out):
    """``work`` (the callee's products) renamed to the caller's symbols as the call renames its callee's work:
    the call op itself, given a callee whose derived work is ``work``."""
    stand_in = copy.copy(op)
    stand_in.callee = _Callee(op.callee, work)
    return stand_in.work(shapes, out)


class _Callee:
    """A callee whose derivation's work is replaced; everything else is the callee's."""

    def __init__(self, callee, work):
        self._callee, self.derivation = callee, SimpleNamespace(work=work)

    def __getattr__(self, name):
        return getattr(self._callee, name)


def weight_matrices(algorithm) -> list:
    """The parameters of ``algorithm`` (not embeddings) that enter a product with the role ``weight`` as an
    operand — directly, through views (``W_q^h``), or as the argument of a call whose callee multiplies it —
    in the order of the signature."""
    used = _weight_operands(algorithm)
    return [p for p in algorithm.params if p.name in used and not p.embedding]


@lru_cache(maxsize=None)
def _weight_operands(algorithm) -> frozenset:
    from formal.engine.calls import CallOp
    from formal.ops.linalg import MatMul
    found = set()
    for node in nodes(algorithm):
        op = getattr(node, "op", None)
        if isinstance(op, MatMul) and op.role == "weight":
            for arg in node.args:
                found |= _viewed(arg)
        elif isinstance(op, CallOp):
            inner = _weight_operands(op.callee)
            for name, arg in zip(op.names, node.args):
                if name in inner:
                    found |= _viewed(arg)
    return frozenset(found)


def _viewed(node) -> set:
    """The names a node is a view of: a reference, or a view op (a pick, a transpose) of one."""
    from formal.ops import Ref
    if isinstance(node, Ref):
        return {node.name}
    if getattr(node.op, "view", False):
        return set().union(*(_viewed(a) for a in node.args))
    return set()
