"""Targets whose harm comes after the call or from what they return: printing once the call has returned (an
atexit handler, a thread, a raw write to file descriptor 1 from a thread), and outputs that are hostile to
convert — a broadcast view of 10¹² entries, an ``__array__`` that raises or hangs, a ``__len__`` that lies, a
list that contains itself, a tensor on the meta device, an object array of arrays, an ndarray subclass whose
``__array_finalize__`` raises.  Each must be one FAIL line (or, for the printing ones, a pass whose report
keeps what they printed), never a traceback, a hang or text outside the report."""

import atexit
import os
import threading
import time

import numpy as np


def _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    from reference.catalogue import FACTORIES
    return FACTORIES["attention"]()(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def _goodbye():
    print("atexit: goodbye from the target", flush=True)
    os.write(2, b"atexit: raw write to fd 2\n")


def registers_atexit(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct, but prints from an atexit handler when its process ends."""
    atexit.register(_goodbye)
    return _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def _later():
    time.sleep(0.05)
    print("thread: printed after the call returned", flush=True)
    os.write(1, b"thread: raw write to fd 1\n")


def prints_from_a_thread(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct, but leaves a thread that prints after the call has returned."""
    threading.Thread(target=_later, daemon=True).start()
    return _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def returns_a_huge_view(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """A 10⁶×10⁶ broadcast view: a few bytes, 8 TB once copied."""
    return np.broadcast_to(0.5, (10**6, 10**6))


class _Raises:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("no array for you")


def returns_array_that_raises(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return _Raises()


class _Hangs:
    def __array__(self, dtype=None, copy=None):
        while True:
            pass


def returns_array_that_hangs(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return _Hangs()


class _Liar:
    def __len__(self):
        return 10**12

    def __getitem__(self, i):
        return 1.0


def returns_lying_len(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return _Liar()


def returns_recursive_list(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    nested = [1.0]
    nested.append(nested)
    return nested


def returns_meta_tensor(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    import torch
    return torch.empty(W_v.shape[0], X.shape[1], device="meta", dtype=torch.float64)


def returns_object_array_of_arrays(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    out = np.empty(X.shape[1], dtype=object)
    for t in range(X.shape[1]):
        out[t] = np.zeros(W_v.shape[0])
    return out


class _Odd(np.ndarray):
    def __array_finalize__(self, obj):
        if obj is not None and getattr(obj, "_armed", False):
            raise RuntimeError("__array_finalize__ refuses")


def returns_odd_subclass(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    out = _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z).view(_Odd)
    out._armed = True   # from now on every view of it raises
    return out


class _Hostile:
    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name} for you")


def returns_hostile_getattr(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return _Hostile()
