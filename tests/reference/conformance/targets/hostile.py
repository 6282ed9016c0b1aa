"""Targets that misbehave in every way a checked function can, for `formal-transformers conform`: each must
give one clear FAIL line (exit 1), never a traceback, a hang or a corrupted report."""

import os
import sys
import time

import numpy as np


def hangs(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    while True:
        pass


def sleeps(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    time.sleep(3600)


def exits_0(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    sys.exit(0)


def exits_3(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    sys.exit(3)


def interrupts(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    raise KeyboardInterrupt


def ends_the_process(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    os._exit(7)


def raises_deep(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    def project(W, X):
        raise ValueError("shapes (4,3) and (5,2) not aligned\nsecond line of the message")
    return project(W_q, X)


def returns_none(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return None


def returns_ragged(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return [[1.0, 2.0], [3.0]]


def returns_complex(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return np.zeros((W_v.shape[0], X.shape[1])) + 1j


def returns_strings(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return np.full((W_v.shape[0], X.shape[1]), "0.5")


def returns_objects(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return np.full((W_v.shape[0], X.shape[1]), object())


def returns_text(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return "attention"


def prints(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct, but chatty: on stdout, on stderr and straight to file descriptor 1."""
    from reference.catalogue import FACTORIES
    attention = FACTORIES["attention"]()
    print("{ not json", flush=True)
    print("debug", file=sys.stderr)
    os.write(1, b"raw write to fd 1\n")
    return attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def floods(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct, but prints 20 MB per call: only the end is kept."""
    from reference.catalogue import FACTORIES
    attention = FACTORIES["attention"]()
    sys.stdout.write("x" * 20_000_000 + "\nlast line\n")
    return attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def hoards(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Allocates 80 MB at a time until memory runs out (80 GB asked in all)."""
    import numpy as np
    kept = [np.ones(10**7) for _ in range(1000)]
    return kept[0][:1]
