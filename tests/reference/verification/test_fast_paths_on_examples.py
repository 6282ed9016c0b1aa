"""The spec's fast paths on the examples ``verify`` and ``conform`` draw (every variant of every option, the
boundary cases): a run with its independent loops batched and its column calls at once, and a second run on the
same shapes (the replay of the first), equal the definition — every column and every trip one by one, every run
checked in full — and raise its errors.  ``tests/formal`` checks the same on the strategies' cases; these are
the examples users' checks meet (grouped-query attention with a KV cache among them, which has no strategy)."""

import numpy as np
import pytest

from formal.engine import tape
from formal.engine.columns import one_by_one
from formal.errors import FormalError
from formal.sampling.examples import EXAMPLE_ALGORITHMS, examples
from reference.conformance.conform import normalise
from tests.formal.test_batches import _batches
from tests.tiers import fast_few


def _outcome(algorithm, arguments):
    try:
        output = algorithm(**arguments)
    except FormalError as error:
        return type(error), str(error)
    return [np.asarray(v) for v in (output if isinstance(output, tuple) else (output,))]


def _same(fast, definition):
    if isinstance(definition, tuple):
        assert fast == definition
        return
    assert not isinstance(fast, tuple), fast
    for a, b in zip(fast, definition, strict=True):
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0, where=np.isfinite(b))))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * scale, equal_nan=True)


BATCHERS = sorted(name for name in EXAMPLE_ALGORITHMS if _batches(examples(name, 1, boundary=False)[0].algorithm))


def test_the_batchers_include_the_kv_cache_and_swin():
    assert {"mhattention", "kv_mhattention", "kv_dtransformer", "window_mhattention", "swin"} <= set(BATCHERS)


@pytest.mark.parametrize("name", fast_few(BATCHERS, keep={"kv_mhattention"}))
def test_fast_paths_equal_the_definition_on_verifys_examples(name):
    for example in examples(name, 12, seed=3):
        arguments = normalise(example)
        tape.forget()
        first, replayed = _outcome(example.algorithm, arguments), _outcome(example.algorithm, arguments)
        with one_by_one(), tape.untaped():
            definition = _outcome(example.algorithm, arguments)
        _same(first, definition)
        _same(replayed, definition)
