"""How many examples a run draws and how large they grow, in a module that imports nothing: the command line's
help quotes these without importing numpy or sympy, and :mod:`.examples` and :mod:`.sizes` take them from
here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Profile", "PROFILES", "MAX_EXAMPLES", "MAX_SIZE"]


@dataclass(frozen=True)
class Profile:
    """How many random examples, and how large they grow (the longest sequence drawn)."""

    examples: int
    max_size: int


#: ``quick`` (conform's default) and ``thorough``.
PROFILES = {"quick": Profile(20, 17), "thorough": Profile(100, 65)}
#: The most random examples a run may ask for: past it a run takes hours (the largest size: :data:`MAX_SIZE`).
MAX_EXAMPLES = 100_000
#: The longest sequence (the largest size) a run may ask for: past it the examples alone outgrow the memory
#: (a stack's cost grows with the square of the length).
MAX_SIZE = 4096
