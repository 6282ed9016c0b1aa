"""An independent count of the floating-point operations a numpy computation performs.

:func:`counted` runs a function on arrays that count (:class:`Counting`, an ``ndarray`` subclass whose
``__array_ufunc__`` tallies each ufunc call before it runs, and whose results stay counting), and returns the
tally.  The rules are the ``full`` convention's own words (:data:`formal.costs.conventions.CONVENTIONS`) applied
to what numpy is asked to do — they never read an op's FLOP rule:

- an arithmetic ufunc (``+ − × ÷``, ``exp``, ``sqrt``, ``tanh``, ``maximum``, a power, a negation…) costs one per
  element of its result, a scalar operand broadcast or not;
- a reduction of n elements to one (``sum``, ``max``, ``prod`` along an axis, a mean's sum) costs n − 1 per result;
  an accumulation (``cumsum``) n − 1 per lane;
- a matrix product (m×k)·(k×n) costs 2·m·k·n (a multiply and an add per term: the multiply-add counted as two);
- a comparison, a test (``isfinite``, ``isneginf``), a logical or bitwise op, a selection (``where``), an
  index, a copy, a reshape or a stack costs nothing: no floating-point arithmetic;
- work on Python numbers (a size's square root, ``math.sqrt(d)``) is not array work: constants computed from
  sizes alone are free, as the convention says;
- a routine that does its arithmetic without a ufunc (``dot``, ``einsum``, ``tensordot``, ``linalg``'s, a
  convolution, ``trace``, ``interp``: :data:`UNSEEN`) is not counted but *recorded* in :attr:`Tally.unseen`, so a
  computation the counter cannot see is reported, never counted as free.

The count is of one concrete execution; the theorems built on it (:mod:`proofs.flops`) say so.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Counting", "Tally", "counted", "FREE_UFUNCS", "UNSEEN"]

#: Ufuncs that perform no floating-point arithmetic: comparisons, tests, logic, bit and sign manipulation.
FREE_UFUNCS = frozenset({
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.isfinite, np.isinf,
    np.isnan, np.isnat, np.signbit, np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
})


#: Numpy routines that compute without calling ufuncs on their arguments: the counter does not model them.
UNSEEN = frozenset({np.dot, np.vdot, np.inner, np.einsum, np.tensordot, np.convolve, np.correlate, np.trace,
                    np.interp, np.kron, *(getattr(np.linalg, n) for n in np.linalg.__all__ if n[0].islower()
                                         and callable(getattr(np.linalg, n)))})


class Tally:
    """The operations counted so far (an int), by which ufunc (for messages), and the routines met that the
    counter does not model (:data:`UNSEEN`)."""

    def __init__(self):
        self.total, self.by, self.unseen = 0, {}, set()

    def add(self, what: str, count: int):
        if count:
            self.total += int(count)
            self.by[what] = self.by.get(what, 0) + int(count)


_TALLY: list = []     # the tally of the count running now (counts do not nest)


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, Counting) else x


def _counting(x):
    """A result made counting: a float (or object: a ``frompyfunc``'s) array viewed as :class:`Counting`, a numpy
    float as a 0-d one."""
    if isinstance(x, tuple):
        return tuple(_counting(v) for v in x)
    if isinstance(x, np.ndarray) and not isinstance(x, Counting) and x.dtype.kind in "fcO":
        return x.view(Counting)
    if isinstance(x, np.floating):
        return np.asarray(x).view(Counting)
    return x


def _size(x) -> int:
    return int(np.size(x))


def _cost(ufunc, method, inputs, result) -> int:
    """The operations one ufunc call performs, by the rules of the module docstring."""
    if ufunc in FREE_UFUNCS or ufunc.types and all(t.endswith("?") for t in ufunc.types):
        return 0
    first = result[0] if isinstance(result, tuple) else result
    if np.asarray(first).dtype.kind in "biu?":   # integer or boolean work: indices, not floating point
        return 0
    if method == "__call__":
        if ufunc is np.matmul:
            a = np.asarray(inputs[0])
            return 2 * a.shape[-1] * _size(first)
        return _size(first)
    if method == "reduce":
        return max(_size(inputs[0]) - _size(first), 0)
    if method == "accumulate":
        a = np.asarray(inputs[0])
        return max(_size(a) - _size(a) // max(a.shape[0], 1), 0) if a.ndim else 0
    return _size(first)           # outer, at, reduceat: one per element made


class Counting(np.ndarray):
    """A float array whose ufunc calls are counted into the running :class:`Tally`, and whose results count too."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [_plain(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if _TALLY:
            _TALLY[-1].add(f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__,
                           _cost(ufunc, method, plain, result))
        return _counting(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in UNSEEN and _TALLY:
            _TALLY[-1].unseen.add(getattr(func, "__name__", str(func)))
        return _counting(super().__array_function__(func, types, args, kwargs))

    # the methods that compute in C without a ufunc: recorded as unseen, like their functions
    def dot(self, *args, **kwargs):
        if _TALLY:
            _TALLY[-1].unseen.add("ndarray.dot")
        return _counting(self.view(np.ndarray).dot(*(_plain(a) for a in args), **kwargs))

    def trace(self, *args, **kwargs):
        if _TALLY:
            _TALLY[-1].unseen.add("ndarray.trace")
        return _counting(self.view(np.ndarray).trace(*args, **kwargs))


def counted(function, *values) -> Tally:
    """Run ``function(*values)`` with every float array or numpy float among ``values`` (and in tuples of them)
    counting, and return the :class:`Tally` of what it performed."""
    tally = Tally()
    _TALLY.append(tally)
    try:
        with np.errstate(all="ignore"):
            function(*(_counting(v) if isinstance(v, (np.ndarray, np.floating, tuple)) else v for v in values))
    finally:
        _TALLY.pop()
    return tally
