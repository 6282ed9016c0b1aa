"""What the theorem modules share: each names its theorems in ``NAMES``; ``results`` proves them once per module."""

import pytest

from proofs.registry import prove


@pytest.fixture(scope="module")
def results(request):
    """The results of the theorems the test module names in ``NAMES``, by name, proved once for its tests."""
    return {r.theorem.name: r for r in prove(request.module.NAMES)}
