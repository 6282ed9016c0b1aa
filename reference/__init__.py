"""The torch reference implementation of the model stack, and the checking of any implementation against the
spec.

- :mod:`reference.model` — the torch implementation (needs the ``torch`` extra): layers, stacks, training,
  decoding, the lecture notes' systems, third-party readers; it takes its parameters from the formal objects'
  canonical names, so one set of random parameters drives both the specification (:mod:`formal`) and it.
- :mod:`reference.checking` — ``conform``, its examples and sandbox, tolerances, ``verify``, the mutant
  catalogue: torch-free unless a target returns torch tensors or a check needs the torch reference.

This package itself needs no torch, so the command line can say how to install it (:func:`require_torch`,
:func:`needs_torch`).
"""

from __future__ import annotations

__all__ = ["require_torch", "needs_torch", "INSTALL"]

INSTALL = "pip install torch==2.13.0 'formal-transformers[torch]'"


def needs_torch(what: str) -> str:
    """The one line saying that ``what`` needs torch, which is not installed, and how to install it."""
    return f"{what} needs torch, which is not installed: {INSTALL}"


def require_torch(*, what: str = "the torch reference"):
    """Import and return torch, or raise ImportError saying that ``what`` needs it and how to install it."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(needs_torch(what)) from exc
    return torch
