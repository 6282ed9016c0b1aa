"""The torch reference implementation of the model stack, and the checking of any implementation against the
spec.  It imports the spec (:mod:`formal`), never the tools (:mod:`formal.tools`).

- :mod:`reference.model` — the torch implementation (needs the ``torch`` extra): layers, stacks, training,
  decoding, the lecture notes' systems, third-party readers; it takes its parameters from the formal objects'
  canonical names, so one set of random parameters drives both the specification (:mod:`formal`) and it.
- :mod:`reference.conformance` — ``conform``: any implementation checked against the spec on the spec's
  examples (:mod:`formal.sampling`), called safely (a sandboxed worker), and ``conform --identify``;
  torch-free unless the function checked needs torch.
- :mod:`reference.verification` — ``verify``: the torch reference checked against the spec, and ``verify
  --mutants``: conform's kill rate on the catalogue.
- :mod:`reference.catalogue` — independent numpy implementations of every algorithm, written as a user would,
  and the bugs planted in them.
- :mod:`reference.execution` — the execution layer: tasks in this process, in worker processes or on a Dask
  cluster, the same report whichever runs them.
- :mod:`reference.records` — one record per algorithm: what the checking side knows of it (roles and
  properties from the formal object, its catalogue entry, its torch runner); :mod:`reference.tolerances` — how
  far lower precision may stray, as measured.

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
