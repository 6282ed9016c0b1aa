"""Every size reaches the profile's largest value in some example: a bug that shows only at the largest
width, head count or depth is found by the quick profile, not only by luck of the draw."""

import itertools

import numpy as np
import pytest
import sympy as sp

from formal import algorithms
from formal.sampling import sizes as sizes_module
from formal.sampling.examples import EXAMPLE_ALGORITHMS, PROFILES, examples
from formal.sampling.sizes import RUN_SIZES
from reference.catalogue import FACTORIES
from reference.conformance.conform import conform
from tests.tiers import fast_few, in_fast_tier

QUICK = PROFILES["quick"]


def _reachable(algorithm, top: int) -> dict:
    """The largest value each size can take with every size from 1 to ``top`` and every divisibility the
    algorithm states holding — found by trying every assignment of the sizes a chain of those constraints
    links (an oracle of the test's own).  A size no divisibility names can be ``top``."""
    rules = [c for c in algorithm.size_constraints if c.relation == "divides"]
    best = {str(s): top for s in algorithm.symbols}
    groups = []                                   # sizes linked through the rules, merged as rules join them
    for c in rules:
        linked = {str(s) for s in c.symbols}
        joined = [g for g in groups if g & linked]
        groups = [g for g in groups if not g & linked] + [linked.union(*joined)]
    for group in groups:
        names = sorted(group)
        assert len(names) <= 3, names
        symbols = [sp.Symbol(n) for n in names]
        checks = [tuple(sp.lambdify(symbols, x.xreplace({s: sp.Symbol(str(s)) for s in x.free_symbols}))
                        for x in c.args) for c in rules if {str(s) for s in c.symbols} <= group]
        best.update({n: 0 for n in names})
        for values in itertools.product(range(1, top + 1), repeat=len(names)):
            if all(b(*values) % a(*values) == 0 for a, b in checks):
                best.update({n: max(best[n], v) for n, v in zip(names, values)})
    return best


@pytest.mark.parametrize("name", fast_few(EXAMPLE_ALGORITHMS, keep=in_fast_tier))
def test_every_size_reaches_the_largest_the_constraints_allow(name):
    """In the quick profile each size symbol reaches the largest size, 17, in at least one example — or, where
    the algorithm's divisibility constraints forbid 17 with every size at most 17, the largest value they
    allow: Swin's grid is 8·M·k (n_h = 16 and M = 2 at most), a Swin stage's depth is even (16), a patch
    merge halves an even grid (16).  The algorithm is the default variant, as conform checks one variant (by
    name, each example draws its options, and the cases take the sizes of the variant drawn)."""
    algorithm = algorithms.get(name)
    out = examples(algorithm, QUICK.examples, max_size=QUICK.max_size)
    reachable = _reachable(algorithm, QUICK.max_size)
    for symbol in sorted({str(s) for s in algorithm.symbols} - set(RUN_SIZES)):
        largest = max(e.sizes[symbol] for e in out if symbol in e.sizes)
        assert largest >= reachable[symbol], (symbol, largest, reachable[symbol])


def test_the_random_draws_alone_stop_short(monkeypatch):
    """Without the cases that take every size to its largest, some size of these algorithms never reaches 17:
    the test above rests on those cases, not on the draw."""
    monkeypatch.setattr(sizes_module, "largest_cases", lambda algorithm, max_size: [])
    short = []
    for name in ("mhattention", "rnn_cell", "dtransformer", "swin"):
        out = examples(algorithms.get(name), QUICK.examples, max_size=QUICK.max_size)
        reachable = _reachable(algorithms.get(name), QUICK.max_size)
        short += [(name, s) for s in reachable if s not in RUN_SIZES
                  and max(e.sizes[s] for e in out if s in e.sizes) < reachable[s]]
    assert short


def test_conform_finds_a_nan_that_shows_only_at_the_largest_width():
    """Attention that returns NaN only when d_x ≥ 17 fails finite in the quick profile."""
    correct = FACTORIES["attention"]()

    def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
        out = correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)
        return out * np.nan if X.shape[0] >= QUICK.max_size else out

    report = conform(attention, "attention", isolate=False)
    assert not report.ok and report.failure["property"] == "finite"
    assert "d_x=17" in report.failure["example"]


def test_conform_finds_an_rnn_cell_wrong_only_at_the_largest_state():
    """An RNN cell wrong only when d_h ≥ 17 fails spec in the quick profile."""
    correct = FACTORIES["rnn_cell"]()

    def rnn_cell(x, h, **theta):
        out = np.asarray(correct(x, h, **theta), dtype=np.float64)
        return out + 1.0 if h.shape[0] >= QUICK.max_size else out

    report = conform(rnn_cell, "rnn_cell", isolate=False)
    assert not report.ok and report.failure["property"] == "spec"
