"""Rotary position embeddings (formal.ops.rotary; Su et al. 2021, §3.4): the op against independent oracles — the
complex-number form of Meta's code and a rotate-half written from the pairs — its relative-position property, its
costs, the stacks and the cache that read it, and the errors of bad settings."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from formal import ConfigError, DomainError
from formal.algorithms import get
from formal.core.symbols import H, L, d_attn, ell, ell_x, ell_z
from formal.ops.rotary import Rotation
from formal.sampling.examples import example

RNG = np.random.default_rng(0)


def _complex_oracle(x, t, theta, rows):
    """Meta's form: rows (2i, 2i + 1) as one complex number, times e^{i t θ^(−2i/rows)}; rows past ``rows`` kept."""
    out = x.copy()
    z = x[0:rows:2] + 1j * x[1:rows:2]
    omega = theta ** (-np.arange(0, rows, 2) / rows)
    z = z * np.exp(1j * np.outer(omega, t))
    out[0:rows:2], out[1:rows:2] = z.real, z.imag
    return out


def _half_oracle(x, t, theta, rows):
    """Rotate-half as GPT-NeoX writes it: x·cos + rotate_half(x)·sin, with cos and sin repeated over both halves."""
    omega = theta ** (-np.arange(0, rows, 2) / rows)
    angle = np.concatenate([np.outer(omega, t)] * 2)                     # (rows, ℓ)
    head = x[:rows]
    half = np.concatenate([-head[rows // 2:], head[:rows // 2]])
    return np.concatenate([head * np.cos(angle) + half * np.sin(angle), x[rows:]])


shapes = st.tuples(st.integers(1, 6), st.integers(1, 5), st.sampled_from([1.0, 0.5]))


@given(st.sampled_from([("interleaved", _complex_oracle), ("half", _half_oracle)]), shapes,
       st.sampled_from([10.0, 10000.0]), st.integers(0, 50))
def test_each_pairing_is_its_oracle(pairing, shape, theta, start):
    """Interleaved RoPE is Meta's complex multiplication of the pairs (2i, 2i + 1) by e^{i t ω_i}; rotate-half is
    x·cos + rotate_half(x)·sin over the first d_rot rows (GPT-NeoX's and HF's form)."""
    (style, oracle), (pairs, length, fraction) = pairing, shape
    d = int(2 * pairs / fraction)
    x, t = RNG.normal(size=(d, length)), np.arange(start, start + length)
    got = Rotation(style, theta=theta, fraction=fraction).rotate(x, t)
    np.testing.assert_allclose(got, oracle(x, t, theta, 2 * pairs), rtol=0, atol=1e-12)


def test_the_two_pairings_differ_and_agree_at_position_zero():
    """The pairings are different maps (a test that mixes them up fails) and both are the identity at t = 0."""
    x = RNG.normal(size=(8, 3))
    half, inter = Rotation("half").rotate(x, np.arange(3)), Rotation("interleaved").rotate(x, np.arange(3))
    assert np.abs(half - inter).max() > 0.1
    np.testing.assert_array_equal(Rotation("half").rotate(x, np.zeros(3, int)), x)


@settings(max_examples=60)
@given(st.sampled_from(["half", "interleaved"]), st.sampled_from([None, "linear", "yarn", "llama3"]),
       st.integers(0, 40), st.integers(0, 40), st.integers(0, 1000))
def test_scores_depend_only_on_relative_positions(style, scaling, m, n, shift):
    """(R_m q)ᵀ(R_n k) = (R_{m+c} q)ᵀ(R_{n+c} k): every static rule; the planted twin (angles t²) breaks it."""
    rotation = Rotation(style, theta=100.0, scaling=scaling, factor=4.0, original=16)
    q, k = RNG.normal(size=(8, 1)), RNG.normal(size=(8, 1))

    def score(a, b, rot=rotation.rotate):
        return float((rot(q, np.array([a])) * rot(k, np.array([b]))).sum())
    assert score(m, n) == pytest.approx(score(m + shift, n + shift), rel=1e-9, abs=1e-9)


def test_a_rotation_by_squared_positions_is_not_relative():
    """The twin: rotating by t² breaks the relative-position property, so the test above can fail."""
    rotation, q, k = Rotation("half", theta=10.0), RNG.normal(size=(8, 1)), RNG.normal(size=(8, 1))

    def score(a, b):
        return float((rotation.rotate(q, np.array([a * a])) * rotation.rotate(k, np.array([b * b]))).sum())
    assert abs(score(1, 2) - score(4, 5)) > 1e-3


def test_dynamic_scaling_depends_on_the_length():
    """Dynamic NTK changes every frequency once the last position passes N (so a cache cannot keep it)."""
    rotation = Rotation("half", scaling="dynamic", factor=4.0, original=8)
    short, long = rotation.frequencies(8, length=8), rotation.frequencies(8, length=32)
    np.testing.assert_allclose(short, Rotation("half").frequencies(8), rtol=1e-15)
    assert (long[1:] < short[1:]).all() and long[0] == short[0] == 1.0


def test_scaling_rules_at_their_fixed_points():
    """linear divides by s; llama3 keeps the short wavelengths and divides the long ones by s; YaRN scales the
    rotated rows by 0.1·ln s + 1 and keeps the fastest pair's frequency."""
    base = Rotation("half", theta=10000.0).frequencies(16)
    np.testing.assert_allclose(Rotation("half", scaling="linear", factor=4.0).frequencies(16), base / 4)
    llama = Rotation("half", scaling="llama3", factor=8.0, original=64, low=1.0, high=4.0).frequencies(16)
    wave = 2 * math.pi / base
    np.testing.assert_allclose(llama[wave < 16], base[wave < 16])
    np.testing.assert_allclose(llama[wave > 64], base[wave > 64] / 8)
    yarn = Rotation("half", scaling="yarn", factor=4.0, original=64)
    assert yarn.scale == pytest.approx(0.1 * math.log(4) + 1)
    assert yarn.frequencies(16)[0] == base[0] and yarn.frequencies(16)[-1] == pytest.approx(base[-1] / 4)
    x = RNG.normal(size=(16, 1))
    assert np.linalg.norm(yarn.rotate(x, np.array([3]))) == pytest.approx(yarn.scale * np.linalg.norm(x))


def test_attention_with_rope_is_the_oracle():
    """Algorithm 4 with rope rotates Q and K (positions 0 … ℓ − 1) before the scaled scores, and not V."""
    d, n = 6, 4
    X, Z = RNG.normal(size=(5, n)), RNG.normal(size=(5, n + 1))
    W_q, W_k, W_v = (RNG.normal(size=(d, 5)) for _ in range(3))
    got = get("attention", rope="interleaved", bias=False)(X=X, Z=Z, W_q=W_q, W_k=W_k, W_v=W_v,
                                                             mask=np.ones((n + 1, n)))
    Q = _complex_oracle(W_q @ X, np.arange(n), 10000.0, d)
    K = _complex_oracle(W_k @ Z, np.arange(n + 1), 10000.0, d)
    S = K.T @ Q / math.sqrt(d)
    A = np.exp(S - S.max(0))
    np.testing.assert_allclose(got, (W_v @ Z) @ (A / A.sum(0)), rtol=0, atol=1e-12)


def test_cached_decoding_with_rope_equals_the_whole_sequence():
    """Prefill then extend (new tokens at positions ℓ_c …, the cache's keys rotated when new) equals Algorithm 10 on
    the whole sequence; a cache whose keys were rotated by other angles does not."""
    opts = dict(rope="half", rope_theta=10.0, position="none", norm="rms", activation="swiglu", bias=False,
                n_kv_heads=1)
    whole = get("dtransformer", **opts)
    drawn = example(whole, 1, sizes={"N_V": 7, "d_e": 8, "L": 2, "H": 2, "d_attn": 4, "d_mid": 4, "d_mlp": 6})
    params = {name: drawn.arguments[name] for name in drawn.params}
    rng = np.random.default_rng(1)
    x = rng.integers(0, 7, size=6)
    P = whole(x=x, **params)
    prefill, extend = (get("kv_dtransformer", step=s, **opts) for s in ("prefill", "extend"))
    _, K, V = prefill(x=x[:4], **params)
    P_new, _, _ = extend(x=x[4:], K_c=K, V_c=V, **params)
    np.testing.assert_allclose(P_new, P[:, 4:], rtol=0, atol=1e-12)
    other = get("kv_dtransformer", step="prefill", **{**opts, "rope_theta": 10000.0})
    _, K_other, _ = other(x=x[:4], **params)      # the same keys rotated by other angles: the answer moves
    assert np.abs(extend(x=x[4:], K_c=K_other, V_c=V, **params)[0] - P[:, 4:]).max() > 1e-3


def test_rope_costs():
    """No parameters; under the full convention 3 FLOPs per rotated entry of every head's Q and K (3·d_rot·ℓ each);
    under matmul none — the same cost as without the rotation."""
    plain, rotated = get("mhattention"), get("mhattention", rope="half", rope_fraction=0.5)
    assert plain.cost("matmul").flops == rotated.cost("matmul").flops
    assert plain.cost("full").params == rotated.cost("full").params
    extra = sp.expand(rotated.cost("full").flops - plain.cost("full").flops)
    assert extra == sp.expand(3 * H * (d_attn / 2) * (ell_x + ell_z))
    stack = sp.expand(get("dtransformer", rope="interleaved").cost("full").flops
                      - get("dtransformer").cost("full").flops)
    assert stack == sp.expand(L * 3 * H * d_attn * 2 * ell)
    assert rotated.symbols == plain.symbols and ell_z in rotated.symbols


def test_rotary_needs_an_even_number_of_rotated_rows():
    """d_rot = fraction·d_attn must be an even whole number: a size constraint stated on the object and checked."""
    assert [c.text for c in get("mhattention", rope="half").size_constraints] == ["d_attn is even"]
    partial = get("mhattention", rope="half", rope_fraction=0.25)
    assert [c.text for c in partial.size_constraints] == ["8 divides d_attn"]
    X = RNG.normal(size=(3, 2))
    with pytest.raises(ConfigError, match="d_attn"):
        get("attention", rope="half", bias=False)(X=X, W_q=np.ones((3, 3)), W_k=np.ones((3, 3)), W_v=np.ones((3, 3)),
                                                  mask=np.ones((2, 2)))


@pytest.mark.parametrize("options, words", [
    ({"rope": "sideways"}, "rope = 'sideways'"),
    ({"rope": "half", "rope_theta": 0}, "rope_theta = 0"),
    ({"rope": "half", "rope_fraction": 1.5}, "rope_fraction = 1.5"),
    ({"rope": "half", "rope_scaling": "linear", "rope_factor": 0.5}, "rope_factor = 0.5"),
    ({"rope_theta": 500000.0}, "rope_theta = 500000 applies to rope"),
    ({"rope": "half", "rope_scaling": "llama3", "rope_low": 4.0, "rope_high": 1.0}, "rope_high > rope_low"),
    ({"rope": "half", "rope_scaling": "yarn", "rope_beta_fast": 1.0, "rope_beta_slow": 2.0}, "rope_beta_fast >"),
    ({"rope": "half", "score": "additive"}, "needs score"),
])
def test_bad_rope_settings_are_refused_by_name(options, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace("+", r"\+")):
        get("attention", **options)


def test_negative_positions_are_a_domain_error():
    from formal.core.shapes import TensorSpec
    from formal.engine.algorithm import Algorithm, Assign
    from formal.ops.rotary import rotate
    alg = Algorithm(number=0, name="rot", display="Rot", summary="a rotation", lines=[
        Assign("Y", rotate("X", "t", Rotation("half")), returns=True)],
        inputs=[TensorSpec("X", (d_attn, ell), doc="x"), TensorSpec("t", (ell,), "index", "positions", bound=ell)],
        params=[], output=TensorSpec("Y", (d_attn, ell), doc="y"))
    with pytest.raises(DomainError, match="negative"):
        alg(X=np.ones((2, 2)), t=np.array([0, -1]))
