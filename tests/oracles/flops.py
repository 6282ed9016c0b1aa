"""An independent FLOP oracle: an ndarray subclass that tallies the floating-point work numpy does on it.

Every ufunc call on a value derived from the inputs passes through ``__array_ufunc__``; the tally counts
what numpy actually performed, from the operand shapes met at run time — not from the algorithm objects:

- ``matmul``: 2·k per entry of the result (the FlopCounterMode convention), recorded apart as ``matmul``;
- any other ufunc call with a floating (or object, ``frompyfunc``) result: one per result element;
- a ufunc ``reduce`` (``sum``, ``max``): n − 1 per reduced group of n.

Products that bypass the matmul ufunc (``dot``, ``einsum``, ...) raise, so none can go uncounted.
"""

from __future__ import annotations

import numpy as np

_UNCOUNTABLE = {np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.einsum, np.kron, np.linalg.multi_dot}


class Tally:
    def __init__(self):
        self.matmul = 0
        self.other = 0
        self.products: list = []

    @property
    def full(self) -> int:
        return self.matmul + self.other


class Counting(np.ndarray):
    """Arrays whose arithmetic is tallied in :attr:`tally` (set it before use)."""

    tally: Tally | None = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raw = [x.view(np.ndarray) if isinstance(x, Counting) else x for x in inputs]
        result = getattr(ufunc, method)(*raw, **kwargs)
        _record(ufunc, method, raw, result, kwargs)
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in _UNCOUNTABLE:
            raise AssertionError(f"{func.__name__} performs a product the oracle cannot count")
        return _wrap(super().__array_function__(func, types, args, kwargs))


def _wrap(result):
    if isinstance(result, np.ndarray) and not isinstance(result, Counting):
        return result.view(Counting)
    if isinstance(result, np.generic):
        return np.asarray(result).view(Counting)
    return result


def _record(ufunc, method, raw, result, kwargs):
    tally = Counting.tally
    if tally is None:
        return
    out = np.asarray(result)
    if not (np.issubdtype(out.dtype, np.floating) or out.dtype == object):  # object: a per-element erf
        return
    if ufunc is np.matmul:
        a, b = (np.asarray(x) for x in raw)
        flops = 2 * a.shape[-1] * max(out.size, 1)
        tally.matmul += flops
        tally.products.append((a.shape, b.shape))
    elif method == "__call__":
        tally.other += out.size
    elif method == "reduce":
        tally.other += np.asarray(raw[0]).size - out.size
    else:
        raise AssertionError(f"the oracle does not count ufunc method {method!r}")


def counting(value):
    """``value`` as a counting float64 array (integers, such as token ids, stay as they are)."""
    array = np.asarray(value)
    if np.issubdtype(array.dtype, np.floating):
        return array.view(Counting)
    return value


def tallied_run(algorithm, kwargs):
    """Run ``algorithm`` on counting copies of ``kwargs``; return the run and the tally of its work."""
    tally = Tally()
    Counting.tally = tally
    try:
        run = algorithm.run(**{k: counting(v) for k, v in kwargs.items()})
    finally:
        Counting.tally = None
    return run, tally
