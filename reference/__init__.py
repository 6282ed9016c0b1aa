"""The torch reference implementation of the model stack (needs the ``torch`` extra).

It takes its parameters from the formal objects' canonical names, so one set of random parameters drives
both the specification (:mod:`formal`) and this reference.

- :mod:`.layers` (Algorithms 1–7), :mod:`.stacks` (8–10), :mod:`.training` (11–13: losses, the SGD step,
  minibatches, AdamW), :mod:`.decoding` (14, 15, KV cache); batch-first, on ``cuda`` when available, in
  float64, float32 or bfloat16 (:mod:`.device`).
- :mod:`.convert` moves arrays and parameters between the spec's world and this one, both ways;
  :mod:`.execute` runs any spec algorithm here with the spec's arguments.
- :mod:`.third_party` reads torch's and HF transformers' modules into the spec's names.
- :mod:`.conform` checks any implementation against the spec, on :mod:`.examples` (boundary cases and
  random ones), calling it through :mod:`.sandbox` (a worker process: time limit, exits, output captured);
  :mod:`.verify` checks this reference; :mod:`.mutation` measures conform's kill rate on the catalogue of
  correct implementations and planted bugs in :mod:`.mutants`.

Every submodule needs torch; this package itself does not, so the command line can say how to install it
(:func:`require_torch`).
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
