"""The torch reference implementation of the model stack, and the checking of any implementation against the
spec.

- :mod:`reference.model` — the torch implementation (needs the ``torch`` extra): layers, stacks, training,
  decoding, the lecture notes' systems, third-party readers; it takes its parameters from the formal objects'
  canonical names, so one set of random parameters drives both the specification (:mod:`formal`) and it.
- :mod:`reference.checking` — ``conform``, its examples and sandbox, tolerances, ``verify``, the mutant
  catalogue: torch-free unless a target returns torch tensors or a check needs the torch reference.

This package itself needs no torch, so the command line can say how to install it (:func:`require_torch`).
"""

from __future__ import annotations

__all__ = ["require_torch"]

INSTALL = "pip install torch==2.13.0 'formal-transformers[torch]'"


def require_torch():
    """Import and return torch, or raise ImportError saying how to install the torch extra."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"the torch reference needs torch: {INSTALL}") from exc
    return torch
