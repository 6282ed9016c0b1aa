"""The checking commands' limits and defaults, in a module that imports nothing: the command line's help
(:mod:`.commands`) quotes them without importing numpy or sympy, and the modules that use them
(:mod:`.examples`, :mod:`.sizes`, :mod:`.sandbox`, :mod:`.identify`) take them from here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Profile", "PROFILES", "MAX_EXAMPLES", "MAX_SIZE", "DEFAULT_TIMEOUT", "DEFAULT_BUDGET", "MAX_BUDGET",
           "SYMPY_CACHE_SIZE"]


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
#: Seconds one call of the function may take (``--timeout``).
DEFAULT_TIMEOUT = 60.0
#: The most variants ``conform --identify`` tries unless told (``--budget``): every variant of a decoder-only
#: transformer (3,072) fits; an encoder's (with its inputs and heads) does not, and the fewest changes are tried
#: first.  ``MAX_BUDGET``: the most it may be told.
DEFAULT_BUDGET = 4096
MAX_BUDGET = 1_000_000
#: Entries in each of sympy's caches in a ``verify`` process (its ``SYMPY_CACHE_SIZE``, read when sympy is first
#: imported, unless the environment sets it): sympy's default, 1,000, is too few for the derivations of every
#: variant drawn, which then expand again what was evicted — a quarter of the time taken drawing the examples,
#: an eighth of the whole (measured; 20,000 keeps it all, for 15 MB more; ``verify --mutants`` neither gains
#: nor loses).
SYMPY_CACHE_SIZE = 20_000
