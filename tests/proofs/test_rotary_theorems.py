"""The rotary theorems (proofs/rotary.py): proved, twins rejected with a counterexample; the pair identity holds for
angles linear in the position and fails for others; the op's execution is tied to the pair map (and a pairing
mixed up is caught); hypothesis-drawn positions, shifts and sizes keep the scores and the outputs; dynamic NTK is
relative below N only, which is why it is outside the statements; and each algorithm's twin fails on its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import ConfigError, algorithms
from formal.ops.rotary import Rotation
from proofs import rotary
from proofs.registry import MODULES, theorems
from tests.tiers import slow

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("rope-relative-position", "rope-shift-invariance")


@pytest.mark.parametrize("name", NAMES)
def test_proved_and_twin_rejected_with_a_counterexample(results, name):
    r = results[name]
    assert r.proved, r.detail
    assert r.twin_rejected and r.counterexample, r.counterexample


def test_levels_and_what_each_says(results):
    relative, shift = results["rope-relative-position"], results["rope-shift-invariance"]
    assert relative.theorem.level == "symbolic" and "sympy" in relative.theorem.method
    assert "dynamic NTK's do:" in relative.detail and "scores move" in relative.detail
    assert "cos(3) - cos(1)" in relative.counterexample and "rotated by the squares" in relative.counterexample
    assert shift.theorem.level == "property-tested" and "no symbolic proof" in shift.theorem.method
    assert "before Z only" in shift.counterexample and "seed" in shift.counterexample


def test_registered_once_in_their_module():
    names = [t.name for t in theorems()]
    assert "rotary" in MODULES and all(names.count(n) == 1 for n in NAMES)
    assert {t.name for t in rotary.THEOREMS} == set(NAMES)


def test_the_module_stays_fast(results):
    assert sum(r.seconds for r in results.values()) < 15, {n: round(r.seconds, 2) for n, r in results.items()}


# ------------------------------------------------------------------------------------------------- the pair
@pytest.mark.parametrize("angle, why", [(lambda t, w: t * w, "linear"), (lambda t, w: t * w + 1, "affine: a phase"),
                                        (lambda t, w: -3 * t * w, "linear, backwards")])
def test_the_pair_identity_holds_for_every_angle_affine_in_the_position(angle, why):
    """R_aᵀR_b = R_{b−a} for any angles, so a phase φ (angle t·ω + φ) is relative too: only the slope matters."""
    assert rotary._pair_identity(angle).holds is True, why


@pytest.mark.parametrize("angle", [lambda t, w: t**2 * w, lambda t, w: t * w / (t + 1)], ids=["t²ω", "tω/(t+1)"])
def test_the_pair_identity_fails_with_a_counterexample_otherwise(angle):
    """An angle whose slope changes with the position (the twin's t²ω; a frequency that falls as the position
    grows, as dynamic NTK's does past N) is not relative: a counterexample at small integers."""
    outcome = rotary._pair_identity(angle)
    assert outcome.holds is False and "the sides differ by" in outcome.detail and "at m = " in outcome.detail


# ------------------------------------------------------------------------------------------------- the op
def test_the_tie_reads_each_rule_off_the_op():
    """σ_i and ω_i read off the op at position 1 are the rotation's own frequencies and YaRN's factor."""
    for rotation in rotary._rotations():
        sigma, omega = rotary._read(rotary._op(rotation), rotation)
        want = np.angle(np.exp(1j * rotation.frequencies(rotation.rotated(rotary.WIDTH))))   # mod 2π, in (−π, π]
        np.testing.assert_allclose(omega, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sigma, rotation.scale, rtol=1e-12)


def test_the_tie_catches_rows_paired_otherwise():
    """The op of one pairing, checked against the other's declared pairs, is not the pair map."""
    rng = np.random.default_rng(0)
    for style, other in (("half", "interleaved"), ("interleaved", "half")):
        op = rotary._op(Rotation(style, theta=10.0))
        assert rotary._tie(op, Rotation(style, theta=10.0), rng) is None
        assert "differ by" in rotary._tie(op, Rotation(other, theta=10.0), rng)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(rotary._rotations()), st.lists(st.integers(0, 5000), min_size=1, max_size=4),
       st.lists(st.integers(0, 5000), min_size=1, max_size=4), st.integers(0, 10**5), st.integers(0, 2**31))
def test_the_ops_scores_keep_under_any_shift(rotation, t_q, t_k, c, seed):
    """Hypothesis-drawn positions (to 5000, past every N), numbers of queries and keys, and shifts (to 10⁵):
    RoPE(K, t_k + c)ᵀ RoPE(Q, t_q + c) = RoPE(K, t_k)ᵀ RoPE(Q, t_q), every static rotation."""
    rng = np.random.default_rng(seed)
    op = rotary._op(rotation)
    q, k = rng.normal(size=(rotary.WIDTH, len(t_q))), rng.normal(size=(rotary.WIDTH, len(t_k)))

    def scores(shift):
        return rotary._rope(op, k, np.add(t_k, shift)).T @ rotary._rope(op, q, np.add(t_q, shift))
    np.testing.assert_allclose(scores(c), scores(0), rtol=0, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["half", "interleaved"]), st.lists(st.integers(0, 10), min_size=1, max_size=3),
       st.integers(0, 5), st.integers(0, 2**31))
def test_dynamic_ntk_is_relative_while_every_position_stays_below_n(style, t, c, seed):
    """Up to N the dynamic rule keeps θ: there the scores keep under a shift (positions + c + 1 ≤ N = 16)."""
    rotation = Rotation(style, theta=10.0, scaling="dynamic", factor=4.0, original=16)
    op, rng = rotary._op(rotation), np.random.default_rng(seed)
    x = rng.normal(size=(rotary.WIDTH, len(t)))

    def scores(shift):
        turned = rotary._rope(op, x, np.add(t, shift))
        return turned.T @ turned
    np.testing.assert_allclose(scores(c), scores(0), rtol=0, atol=1e-9)


def test_dynamic_ntk_moves_the_scores_past_n():
    """Past N the frequencies follow the last position: the same pair of positions, shifted, scores otherwise —
    why the statements leave dynamic NTK out (and why a KV cache refuses it)."""
    moved = rotary._dynamic_moves()
    assert moved and "dynamic NTK scaling" in moved and "the scores move by" in moved
    with pytest.raises(ConfigError, match="dynamic"):
        algorithms.get("kv_mhattention", rope="half", rope_scaling="dynamic")


# ------------------------------------------------------------------------------------------------- end to end
@pytest.mark.parametrize("case", rotary.CASES, ids=lambda case: f"{case[0]}-{case[2]}-{len(case[1])}")
@pytest.mark.parametrize("options", rotary.OPTIONS, ids=lambda options: "-".join(map(str, options.values())))
def test_each_algorithm_keeps_its_outputs_and_fails_the_twin_on_its_own(case, options):
    """Each algorithm's outputs keep under a shift past N; shifting its keys only moves them."""
    rng = np.random.default_rng(3)
    assert rotary._attention_moves(options, rng, 3, 20, False, cases=[case]) is None
    moved = rotary._attention_moves(options, rng, 3, 20, True, cases=[case])
    assert moved and "before Z only" in moved


@pytest.mark.parametrize("options", rotary.OPTIONS, ids=lambda options: "-".join(map(str, options.values())))
def test_the_cached_decoder_keeps_its_outputs_and_fails_the_twin(options):
    rng = np.random.default_rng(4)
    assert rotary._cache_moves(options, rng, 3, 20, False) is None
    moved = rotary._cache_moves(options, rng, 3, 20, True)
    assert moved and "dropped from the cache" in moved


@settings(max_examples=25, deadline=None)
@given(st.integers(0, len(rotary.OPTIONS) - 1), st.integers(1, 6), st.integers(1, 80), st.integers(0, 2**31))
def test_outputs_keep_under_drawn_sizes_and_shifts(which, n, c, seed):
    """Hypothesis-drawn numbers of real tokens, shifts (past N) and weights: every algorithm keeps its outputs."""
    rng = np.random.default_rng(seed)
    options = rotary.OPTIONS[which]
    assert rotary._attention_moves(options, rng, n, c, False) is None
    assert rotary._cache_moves(options, rng, n, c, False) is None


def test_dynamic_ntk_attention_is_not_shift_invariant_past_n():
    """Algorithm 5 with dynamic NTK: the same tokens, c hidden tokens before them, attend otherwise once c + ℓ
    passes N — the end-to-end statement leaves it out."""
    options = {"rope": "half", "rope_scaling": "dynamic", "rope_factor": 4.0, "rope_original": 16}
    rng = np.random.default_rng(0)
    case = [("mhattention", {}, "self")]
    assert rotary._attention_moves(options, rng, 4, 8, False, cases=case) is None       # 8 + 4 ≤ 16
    assert "moved the output" in rotary._attention_moves(options, rng, 4, 40, False, cases=case)


_PLANTED = """
import json
from proofs.mutants.attention import MUTANTS
next(m for m in MUTANTS if m.name == "extend-positions-from-zero").apply()
from proofs.registry import prove
(r,) = prove(["rope-shift-invariance"])
print(json.dumps([r.verdict, r.detail]))
"""


@slow
def test_a_cache_that_numbers_its_new_tokens_from_zero_fails_the_shift_theorem():
    """The catalogue's bug "extend-positions-from-zero", planted in a fresh interpreter: the new tokens' queries and
    keys are rotated as if at 0 …, and the end-to-end theorem fails on the cached decoder."""
    done = subprocess.run([sys.executable, "-c", _PLANTED], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    verdict, detail = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict == "failed" and "kv_mhattention" in detail, detail
