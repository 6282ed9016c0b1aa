"""Every theorem, by module, in the order ``prove`` runs them, and :func:`prove`, which runs them."""

from __future__ import annotations

from importlib import import_module

from formal.errors import FormalError, shown

__all__ = ["MODULES", "theorems", "prove"]

MODULES = ("softmax", "scaling", "attention", "decoding", "rotary", "norms", "costs", "kaplan", "flops", "graphs")


def theorems() -> list:
    out = []
    for name in MODULES:
        out += import_module(f"proofs.{name}").THEOREMS
    return out


def prove(names=(), progress=None) -> list:
    """The :class:`~proofs.theorem.Result` of each theorem named (all by default), in order."""
    from .theorem import run
    known = {t.name: t for t in theorems()}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise FormalError(f"no theorem {shown(unknown[0])}; known: {', '.join(known)}")
    chosen = [known[n] for n in dict.fromkeys(names)] if names else list(known.values())
    results = []
    for i, theorem in enumerate(chosen):
        if progress is not None:
            progress(i, len(chosen), theorem.name)
        results.append(run(theorem))
    return results
