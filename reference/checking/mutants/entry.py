"""An entry of the mutant catalogue: an implementation ``conform`` checks, and the bug planted in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Entry"]


@dataclass(frozen=True)
class Entry:
    name: str           # "attention_divides_by_d"
    algorithm: str      # registry name, as --algorithm takes it
    options: dict       # the variant conform checks against (what -o would pass); {} = the algorithm's defaults
    function: Callable  # what conform calls
    bug: str            # one sentence: what is wrong ("" for a control)
    source: str         # where the bug comes from: "README", "review", "variant option <name>"
