"""conform draws its examples under its own memory limit (``--max-memory``), not the default: a run given more
memory is not refused at 4 GiB by the examples' estimate, and one given less is refused at its own limit."""

from __future__ import annotations

import pytest

from formal import algorithms
from formal.errors import ResourceError
from formal.guards import limits
from reference.conformance.conform import Settings


def test_the_examples_estimate_is_judged_against_the_runs_limit():
    heads = algorithms.get("mhattention", n_kv_heads=3000)     # H raised to a multiple of 3,000
    small = Settings.checked(max_memory="1M")
    with pytest.raises(ResourceError, match="memory limit of 1 MiB"):
        small.examples(heads)
    large = Settings.checked(max_memory="64G")
    with limits.memory_limit("1M"):          # the caller's limit does not decide: the run's own does
        drawn = large.examples(heads)
    assert drawn and all(ex.sizes["H"] % 3000 == 0 for ex in drawn)
