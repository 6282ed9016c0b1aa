"""The torch reference implementation of the model stack (needs the ``torch`` extra).

It takes its parameters from the formal objects' canonical names, so one set of random parameters drives
both the specification (:mod:`formal`) and this reference.  The implementation arrives with the
reference issue; today the package offers only :func:`require_torch`, which the command-line front door
uses to explain a missing install.
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
