"""The attention and decoding theorems: proved, twins rejected with a counterexample, levels stated with why no
symbolic proof is given, and each bug of proofs/mutants/attention.py failing every theorem it is about (in a
fresh interpreter, as ``prove --mutants`` plants it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from proofs import attention, decoding
from proofs.mutants.attention import MUTANTS
from proofs.registry import theorems
from tests.tiers import slow

pytestmark = slow   # every theorem here is proved once for the module: seconds

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("attention-permutation-equivariant", "attention-context-order", "causal-masking", "gqa-repeats-kv-heads",
         "kv-cache-equals-recomputation", "kv-cache-greedy-decoding")


@pytest.mark.parametrize("name", NAMES)
def test_proved_and_twin_rejected_with_a_counterexample(results, name):
    r = results[name]
    assert r.proved, r.detail
    assert r.twin_rejected, r.counterexample
    assert "seed" in r.counterexample or "H = " in r.counterexample, r.counterexample


@pytest.mark.parametrize("name", NAMES)
def test_level_is_property_tested_and_says_why_not_symbolic(results, name):
    t = results[name].theorem
    assert t.level == "property-tested"
    assert "no symbolic proof" in t.method and "seed" in t.method, t.method


def test_every_theorem_is_registered_once():
    names = [t.name for t in theorems()]
    assert all(names.count(n) == 1 for n in NAMES)
    assert {t.name for t in attention.THEOREMS + decoding.THEOREMS} == set(NAMES)


def test_the_module_stays_fast(results):
    assert sum(r.seconds for r in results.values()) < 15, {n: round(r.seconds, 2) for n, r in results.items()}


def test_gqa_covers_every_grouping_up_to_six_heads():
    groups = attention._groups(6)
    assert (6, 3) in groups and (6, 2) in groups and (4, 2) in groups and (5, 5) in groups
    assert all(h % g == 0 for h, g in groups) and len(groups) == 14


def test_gqa_twin_is_refuted_where_the_mappings_differ():
    refuted = attention._gqa(True)
    assert refuted.holds is False
    h, g = (int(s.split(" = ")[1]) for s in refuted.detail.split(", seed")[0].split(", "))
    assert 1 < g < h   # h mod g and ⌊h/(H/g)⌋ agree at g = 1 and g = H


def test_permutations_are_random_not_the_identity():
    rng = np.random.default_rng(0)
    drawn = {tuple(attention._permutation(rng, 5)) for _ in range(20)}
    assert tuple(range(5)) not in drawn and len(drawn) > 5


@pytest.mark.parametrize("n", [3, 4, 6, 8])
def test_splits_chain_at_least_two_extends_to_the_end(n):
    for seed in range(30):
        c, stages = decoding._splits(np.random.default_rng(seed), n)
        assert 1 <= c and len(stages) >= 2 and stages[0][0] == c and stages[-1][1] == n
        assert all(a < b for a, b in stages) and all(s[1] == t[0] for s, t in zip(stages, stages[1:]))


def test_every_bug_is_about_theorems_of_this_family():
    assert len({m.name for m in MUTANTS}) == len(MUTANTS) >= 5
    assert all(m.about and set(m.about) <= set(NAMES) for m in MUTANTS)


def _fresh(code, *args):
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_CYCLIC = """
import json
import numpy as np
from proofs.mutants.attention import MUTANTS
next(m for m in MUTANTS if m.name == "mask-rolled").apply()
from proofs.attention import _attention, _mask
gaps = {}
for kind, perm in (("cyclic", np.roll(np.arange(5), 2)), ("general", np.array([1, 0, 2, 4, 3]))):
    rng = np.random.default_rng(1)
    algorithm, args = _attention("attention", rng, 5)
    mask = _mask("random", 5, 5, rng)
    base = algorithm(**args, mask=mask)
    moved = algorithm(**dict(args, X=args["X"][:, perm]), mask=mask[np.ix_(perm, perm)])
    gaps[kind] = float(np.max(np.abs(moved - base[:, perm])))
print(json.dumps(gaps))
"""


def test_a_rolled_mask_keeps_cyclic_shifts_equivariant_but_not_random_permutations():
    gaps = _fresh(_CYCLIC)
    assert gaps["cyclic"] < 1e-10 < gaps["general"], gaps


_FIRST_EXTEND = """
import json
import numpy as np
from proofs.mutants.attention import MUTANTS
next(m for m in MUTANTS if m.name == "cache-written-one-early").apply()
from formal import algorithms
from proofs.decoding import _model
ex, params = _model(0, 6)
x = ex.arguments["x"]
prefill = algorithms.get("kv_dtransformer", step="prefill", **ex.algorithm.options)
extend = algorithms.get("kv_dtransformer", step="extend", **ex.algorithm.options)
full = ex.algorithm(**ex.arguments)
_, K, V = prefill(x=x[:3], **params)
P1, K, V = extend(x=x[3:5], K_c=K, V_c=V, **params)
P2, _, _ = extend(x=x[5:], K_c=K, V_c=V, **params)
print(json.dumps([float(np.max(np.abs(P1 - full[:, 3:5]))), float(np.max(np.abs(P2 - full[:, 5:])))]))
"""


def test_a_cache_written_one_early_is_caught_only_after_the_first_extend():
    first, second = _fresh(_FIRST_EXTEND)
    assert first < 1e-9 < second, (first, second)
