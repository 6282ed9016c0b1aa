"""``conform``'s limits and defaults, in a module that imports nothing: the command line's help quotes them
without importing numpy or sympy, and the modules that use them (:mod:`.sandbox`, :mod:`.identify`) take them
from here.  The examples' profiles and limits are the spec's (:mod:`formal.sampling.profiles`)."""

from __future__ import annotations

__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_BUDGET", "MAX_BUDGET"]

#: Seconds one call of the function may take (``--timeout``).
DEFAULT_TIMEOUT = 60.0
#: The most variants ``conform --identify`` tries unless told (``--budget``): every variant of a decoder-only
#: transformer (3,072) fits; an encoder's (with its inputs and heads) does not, and the fewest changes are tried
#: first.  ``MAX_BUDGET``: the most it may be told.
DEFAULT_BUDGET = 4096
MAX_BUDGET = 1_000_000
