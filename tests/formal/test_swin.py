"""Swin as algorithm objects (formal.algorithms.vision, formal.ops.windows): the window ops against index
arithmetic, the shift mask against the graph pattern of admitted edges, the relative-position bias against
the relative coordinates, the costs against Liu et al.'s Ω formulas (hand-written here as oracles), and bad
sizes and options.  Conformance with HF transformers' Swin is in tests/reference/model/test_swin_hf.py."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import algorithms
from formal.algorithms.vision import SWIN_EPS, C, patch_merging, swin, swin_block, window_mhattention
from formal.core.symbols import H, by_name, d_attn, d_e, d_mid, d_out, d_x, d_z, ell_x, ell_z
from formal.errors import ConfigError, FormalError
from formal.graphs import patterns
from formal.models.presets import get as preset
from formal.ops import relative_index, shift_of, window_regions
from tests.strategies.cases import SEED

M, n_h, n_w = by_name("swin_window"), by_name("height"), by_name("width")
rng = np.random.default_rng


@st.composite
def grids(draw, *, max_windows=3):
    """A window side M, a grid of whole windows, and a head layout."""
    window = draw(st.integers(1, 4))
    rows, cols = window * draw(st.integers(1, max_windows)), window * draw(st.integers(1, max_windows))
    return {"M": window, "n_h": rows, "n_w": cols, "H": draw(st.integers(1, 3)), "d": draw(st.integers(1, 3)),
            "seed": draw(SEED)}


def _window_params(g, r):
    H_, d, width = g["H"], g["d"], g["H"] * g["d"]
    p = {n: r.normal(size=(H_, d, width)) for n in ("W_q", "W_k", "W_v")}
    p.update({n: r.normal(size=(H_, d)) for n in ("b_q", "b_k", "b_v")})
    p.update(W_o=r.normal(size=(width, width)), b_o=r.normal(size=width),
             B_hat=r.normal(size=(H_, 2 * g["M"] - 1, 2 * g["M"] - 1)))
    return p


# ------------------------------------------------------------------------------------------------ the ops
@given(g=grids())
def test_windows_are_the_m_by_m_blocks_row_major(g):
    """windows_M(X)[a·(n_w/M) + b][:, i·M + j] = X[a·M + i, b·M + j]: windows row-major over the grid,
    tokens row-major within; the reverse puts every token back (no attention: W_o = 0, b_o = X's own)."""
    r = rng(g["seed"])
    X = r.normal(size=(g["n_h"], g["n_w"], g["H"] * g["d"]))
    run = window_mhattention.run(X=X, **_window_params(g, r))
    windows, M_, per_row = run.values["X_w"], g["M"], g["n_w"] // g["M"]
    assert windows.shape == (g["n_h"] * g["n_w"] // M_ ** 2, X.shape[2], M_ * M_)
    for w in range(windows.shape[0]):
        a, b = divmod(w, per_row)
        for t in range(M_ * M_):
            i, j = divmod(t, M_)
            assert np.array_equal(windows[w][:, t], X[a * M_ + i, b * M_ + j])
    from formal.core.shapes import Binding
    from formal.ops import Unwindows

    class Ctx:
        binding = Binding({n_h: g["n_h"], n_w: g["n_w"], M: M_})

        def evaluate(self, e):
            return self.binding.evaluate(e)
    assert np.array_equal(Unwindows(n_h, n_w, M).numpy(Ctx(), windows), X)


@given(rows=st.integers(1, 12), cols=st.integers(1, 12), window=st.integers(1, 12), shifted=st.booleans())
def test_shift_is_half_a_window_unless_the_grid_is_one_window(rows, cols, window, shifted):
    """Swin's rule: σ = ⌊M/2⌋ for a shifted block whose grid is wider than a window, else 0."""
    expected = window // 2 if shifted and rows > window and cols > window else 0
    assert shift_of(rows, cols, window, shifted) == expected


@pytest.mark.parametrize("side, window", [(56, 7), (8, 4), (12, 3), (6, 2)])
def test_shift_mask_admits_exactly_the_edges_of_the_shifted_swin_pattern(side, window):
    """The mask of every window after the roll, mapped back to the unrolled grid, admits exactly the edges of
    ``graphs.patterns.swin(shifted=True)`` (an independent construction, from the regions' boundaries) —
    135,424 at 56×56 with M = 7 — while the windows compute all n_h·n_w·M² scores (153,664)."""
    shift = window // 2
    labels = window_regions(side, side, window, shift)
    per_window = labels.reshape(side // window, window, side // window, window).transpose(0, 2, 1, 3)
    rolled = np.arange(side * side).reshape(side, side)
    positions = np.roll(rolled, -shift, axis=(0, 1))        # rolled grid cell ← original token
    tokens = positions.reshape(side // window, window, side // window, window).transpose(0, 2, 1, 3)
    tokens, per_window = tokens.reshape(-1, window * window), per_window.reshape(-1, window * window)
    admitted = {(int(k), int(q)) for w in range(tokens.shape[0]) for a, k in enumerate(tokens[w])
                for b, q in enumerate(tokens[w]) if per_window[w, a] == per_window[w, b]}
    pattern = patterns.swin(side, side, window, shifted=True)
    assert admitted == set(zip(pattern.keys.tolist(), pattern.queries.tolist()))
    computed = tokens.shape[0] * window ** 4
    assert computed == side * side * window ** 2 >= len(admitted)
    if (side, window) == (56, 7):
        assert (computed, len(admitted)) == (153_664, 135_424)


def test_executed_scores_of_a_shifted_window_are_all_of_the_window_scores():
    """SW-MSA costs what W-MSA does: its matmul FLOPs less the projections' (8·hw·C²) are 4·C per score, and
    the scores are n_h·n_w·M² per head — the masked ones included."""
    for shifted in (False, True):
        flops = window_mhattention.variant(shifted=shifted).cost("matmul").flops
        scores = sp.expand((flops - 8 * n_h * n_w * C ** 2) / (4 * C))
        assert sp.expand(scores - n_h * n_w * M ** 2) == 0
        assert scores.subs({n_h: 56, n_w: 56, M: 7}) == 153_664
    assert patterns.swin(56, 56, 7, shifted=True).n_edges == 135_424


@given(sides=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=SEED)
def test_relative_bias_reads_the_table_at_the_query_minus_the_key(sides, seed):
    """B[h, t_z, t_x] = B̂[h, p(t_x) − p(t_z) + s − 1] for positions p in a box of ``sides`` (row-major): the
    offset of the query from the key, shifted to be ≥ 0 — one axis for a sequence, two for a window."""
    from formal.ops import RelativeBias
    table = rng(seed).normal(size=(2,) + tuple(2 * s - 1 for s in sides))
    positions = list(np.ndindex(*sides))
    index = relative_index(tuple(sides))
    for j, pj in enumerate(positions):
        for i, pi in enumerate(positions):
            offset = tuple(a - b + s - 1 for a, b, s in zip(pi, pj, sides))
            assert table.reshape(2, -1)[:, index[j, i]].tolist() == table[(slice(None),) + offset].tolist()
    assert RelativeBias(tuple(sides)).shape([(2,) + tuple(2 * s - 1 for s in sides)]) == (2, np.prod(sides),
                                                                                          np.prod(sides))


@given(g=grids())
def test_window_attention_is_algorithm_5_on_each_window_with_the_bias(g):
    """Unshifted, window w's output columns are MHAttention(X_w | W, B = B̂[rel]) on that window alone, the
    mask ≡ 1: attention never crosses a window border."""
    r = rng(g["seed"])
    width = g["H"] * g["d"]
    X, p = r.normal(size=(g["n_h"], g["n_w"], width)), _window_params(g, r)
    Y = window_mhattention(X=X, **p)
    mha = algorithms.mhattention.variant(score_bias=True)
    B = p["B_hat"].reshape(g["H"], -1)[:, relative_index((g["M"], g["M"]))]
    M_ = g["M"]
    for a in range(g["n_h"] // M_):
        for b in range(g["n_w"] // M_):
            block = X[a * M_:(a + 1) * M_, b * M_:(b + 1) * M_].reshape(M_ * M_, width).T
            args = {k: v for k, v in p.items() if k != "B_hat"}
            want = mha(X=block, B=B, mask=np.ones((M_ * M_, M_ * M_)), **args)
            got = Y[a * M_:(a + 1) * M_, b * M_:(b + 1) * M_].reshape(M_ * M_, width).T
            assert np.allclose(got, want, rtol=0, atol=1e-12)


@given(g=grids(max_windows=3))
def test_shifted_window_attention_is_the_regular_one_on_the_rolled_grid_with_the_mask(g):
    """SW-MSA = roll(+σ) ∘ W-MSA-with-the-region-mask ∘ roll(−σ); where σ = 0 it is W-MSA itself."""
    r = rng(g["seed"])
    width = g["H"] * g["d"]
    X, p = r.normal(size=(g["n_h"], g["n_w"], width)), _window_params(g, r)
    shifted = window_mhattention.variant(shifted=True)(X=X, **p)
    sigma = shift_of(g["n_h"], g["n_w"], g["M"], True)
    if sigma == 0:
        assert np.array_equal(shifted, window_mhattention(X=X, **p))
        return
    # A token's neighbours are the tokens of its window from its own region: a dense attention with that mask.
    pattern = patterns.swin(g["n_h"], g["n_w"], g["M"], shifted=True)
    mask = np.zeros((g["n_h"] * g["n_w"],) * 2)
    mask[pattern.keys, pattern.queries] = 1
    tokens = X.reshape(-1, width).T
    positions = np.array(list(np.ndindex(g["n_h"], g["n_w"])))
    rel = np.zeros((g["H"], len(positions), len(positions)))
    for j, pj in enumerate(positions):
        for i, pi in enumerate(positions):
            dr = (pi[0] - pj[0]) % g["n_h"] if mask[j, i] else 0   # within a window, after the roll
            dc = (pi[1] - pj[1]) % g["n_w"] if mask[j, i] else 0
            dr = dr - g["n_h"] if dr > g["M"] - 1 else dr
            dc = dc - g["n_w"] if dc > g["M"] - 1 else dc
            rel[:, j, i] = p["B_hat"][:, dr + g["M"] - 1, dc + g["M"] - 1] if mask[j, i] else 0
    args = {k: v for k, v in p.items() if k != "B_hat"}
    want = algorithms.mhattention.variant(score_bias=True)(X=tokens, B=rel, mask=mask, **args)
    assert np.allclose(shifted.reshape(-1, width).T, want, rtol=0, atol=1e-12)


@given(n=st.integers(1, 4), m=st.integers(1, 4), width=st.integers(1, 3), seed=SEED)
def test_patch_merging_concatenates_x0_x1_x2_x3_then_normalises_and_reduces(n, m, width, seed):
    """Token (r, c) of the merged grid is W_m LN([x(2r, 2c); x(2r+1, 2c); x(2r, 2c+1); x(2r+1, 2c+1)]): the row
    offset varies first, Swin's x0, x1, x2, x3."""
    r = rng(seed)
    X = r.normal(size=(2 * n, 2 * m, width))
    gamma, beta, W = r.normal(size=4 * width), r.normal(size=4 * width), r.normal(size=(2 * width, 4 * width))
    got = patch_merging(X=X, gamma_m=gamma, beta_m=beta, W_m=W)
    assert got.shape == (n, m, 2 * width)
    for a in range(n):
        for b in range(m):
            v = np.concatenate([X[2 * a, 2 * b], X[2 * a + 1, 2 * b], X[2 * a, 2 * b + 1], X[2 * a + 1, 2 * b + 1]])
            z = (v - v.mean()) / np.sqrt(v.var() + SWIN_EPS) * gamma + beta
            assert np.allclose(got[a, b], W @ z, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------- the costs
def test_window_and_global_attention_costs_are_liu_et_al_eq_1_and_2():
    """Liu et al.'s Ω(MSA) = 4hwC² + 2(hw)²C and Ω(W-MSA) = 4hwC² + 2M²hwC (multiply–accumulates, softmax
    omitted) are half the matmul FLOPs of Algorithm 5 over all hw tokens and of W-MSA; at Swin-T's first
    stage (56×56, C = 96, M = 7) 2,003,828,736 against 145,108,992."""
    c, h, w = sp.symbols("C h w", positive=True, integer=True)
    omega_msa = 4 * h * w * c ** 2 + 2 * (h * w) ** 2 * c
    omega_wmsa = 4 * h * w * c ** 2 + 2 * M ** 2 * h * w * c
    ell = n_h * n_w
    msa = algorithms.mhattention.cost("matmul").flops.subs(
        {d_x: C, d_z: C, d_out: C, d_mid: d_attn, ell_x: ell, ell_z: ell}) / 2
    wmsa = window_mhattention.cost("matmul").flops / 2
    to_c = {d_attn: c / H, n_h: h, n_w: w}
    assert sp.expand(msa.subs(to_c) - omega_msa) == 0
    assert sp.expand(wmsa.subs(to_c) - omega_wmsa) == 0
    stage1 = {H: 3, d_attn: 32, n_h: 56, n_w: 56, M: 7}
    assert (msa.subs(stage1), wmsa.subs(stage1)) == (2_003_828_736, 145_108_992)


def test_swin_flops_are_linear_in_the_grid_and_its_stages_shrink():
    """The model's FLOPs are Θ(n_h·n_w) for fixed M and widths; each stage's attention costs the same per
    image in its products (4× fewer tokens, 2× the width: hw·C² is halved, hw·M²·C halved too)."""
    flops = swin.cost("matmul").flops
    t = sp.Symbol("t", positive=True)
    scaled = sp.expand(flops.subs({n_h: t * n_h, n_w: t * n_w}))
    assert sp.degree(sp.Poly(scaled, t)) == 2


def test_param_count_is_the_swin_formula():
    """49C + 2C (patch embedding and its norm) + Σ_i L_i(12C_i² + 13C_i + (2M−1)²h_i) + Σ_{i<4}(8C_i² + 8C_i)
    (merging) + 2C_4 + N_C(C_4 + 1), C_i = 2^{i−1}C, h_i = 2^{i−1}H — with 3-channel 4×4 patches."""
    sizes = {by_name("patch"): 4, by_name("channels"): 3}
    c = H * d_attn
    depths = [by_name(f"L_{i}") for i in range(1, 5)]
    n_classes = by_name("n_classes")
    formula = 49 * c + 2 * c
    for i, L_i in enumerate(depths):
        ci, hi = 2 ** i * c, 2 ** i * H
        formula += L_i * (12 * ci ** 2 + 13 * ci + (2 * M - 1) ** 2 * hi)
        if i < 3:
            formula += 8 * ci ** 2 + 8 * ci
    formula += 2 * 8 * c + n_classes * (8 * c + 1)
    assert sp.expand(swin.param_count().subs(sizes) - formula) == 0


def test_presets_are_the_papers_variants():
    """swin-t/s/b/l: C = 96, 96, 128, 192 (32 per head), depths 2-2-6-2 and 2-2-18-2, M = 7, 224² images."""
    for name, width, depths in [("swin-t", 96, (2, 2, 6, 2)), ("swin-s", 96, (2, 2, 18, 2)),
                                ("swin-b", 128, (2, 2, 18, 2)), ("swin-l", 192, (2, 2, 18, 2))]:
        s = preset(name).sizes
        assert s["H"] * s["d_attn"] == width and s["patch"] * s["height"] == 224 == s["patch"] * s["width"]
        assert tuple(s[f"L_{i}"] for i in range(1, 5)) == depths and s["swin_window"] == 7


# ------------------------------------------------------------------------------------------- bad input
def test_a_grid_of_partial_windows_is_refused_with_its_sizes():
    g = {"M": 3, "n_h": 6, "n_w": 6, "H": 1, "d": 2}
    p = _window_params(g, rng(0))
    with pytest.raises(FormalError, match="width = 5"):
        window_mhattention(X=np.zeros((6, 5, 2)), **p)


def test_an_odd_grid_cannot_be_merged():
    with pytest.raises(FormalError, match="even"):
        patch_merging(X=np.ones((3, 4, 2)), gamma_m=np.ones(8), beta_m=np.zeros(8), W_m=np.ones((4, 8)))


@pytest.mark.parametrize("options, message", [
    ({"shifted": 1}, "shifted = 1 must be True or False"),
    ({"eps": -1.0}, "eps"),
])
def test_bad_block_options_are_named(options, message):
    with pytest.raises(ConfigError, match=message):
        swin_block.variant(**options)


@pytest.mark.parametrize("ratio", [0, 2.5, True, "4"])
def test_bad_mlp_ratio_is_named(ratio):
    with pytest.raises(ConfigError, match="mlp_ratio"):
        swin.variant(mlp_ratio=ratio)


def test_width_not_split_into_the_heads_is_refused():
    """The grid's width must be H·d_attn, the heads' widths together."""
    g = {"M": 2, "n_h": 2, "n_w": 2, "H": 2, "d": 2}
    with pytest.raises(FormalError, match="H\\*d_attn"):
        window_mhattention(X=np.zeros((2, 2, 5)), **_window_params(g, rng(0)))


def test_the_patch_merging_width_is_a_size_of_its_own():
    assert patch_merging.derivation.output_shape == (n_h / 2, n_w / 2, 2 * d_e)
