"""The shipped catalogue of claims: TOML files beside this module, each claim with its ``source`` and the
verdict it is expected to get (``expect``).  ``formal-transformers check --catalogue`` runs them."""

from __future__ import annotations

import os

__all__ = ["files", "FOLDER"]

FOLDER = os.path.dirname(os.path.abspath(__file__))


def files() -> list:
    """The catalogue's files, sorted."""
    return sorted(os.path.join(FOLDER, f) for f in os.listdir(FOLDER) if f.endswith(".toml"))
