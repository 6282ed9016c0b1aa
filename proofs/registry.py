"""Every theorem, by module, in the order ``prove`` runs them."""

from __future__ import annotations

from importlib import import_module

__all__ = ["MODULES", "theorems"]

MODULES = ("softmax", "scaling", "attention", "decoding", "norms", "costs", "kaplan", "flops", "graphs")


def theorems() -> list:
    out = []
    for name in MODULES:
        out += import_module(f"proofs.{name}").THEOREMS
    return out
