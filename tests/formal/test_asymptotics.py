"""Leading-order terms derived from the cost polynomials, against hand-written oracles."""

import pytest
import sympy as sp

from formal import ConfigError, attention, big_theta, leading_term, mhattention
from formal.core.symbols import H, d_attn, d_mid, d_out, d_x, d_z, ell_x, ell_z

d = sp.Symbol("d", positive=True, integer=True)
WIDTHS = {d_attn: d, d_out: d, d_x: d, d_z: d, d_mid: d}


def test_attention_flops_are_theta_lx_lz_d_in_the_sequence_lengths():
    """Θ(ℓ_x·ℓ_z·d): scores K^T Q and V·softmax each cost 2·d·ℓ_x·ℓ_z under the matmul convention."""
    flops = attention.cost("matmul").flops
    assert leading_term(flops, [ell_x, ell_z], subs=WIDTHS) == 4 * d * ell_x * ell_z
    assert big_theta(flops, [ell_x, ell_z], subs=WIDTHS) == "Θ(d·ℓ_x·ℓ_z)"


def test_lengths_then_width_order_is_lexicographic():
    flops = attention.cost("matmul").flops
    lead = leading_term(flops, [ell_x, ell_z], [d], subs=WIDTHS)
    assert lead == 4 * d * ell_x * ell_z


def test_width_alone_gives_the_projections():
    """In the width alone (lengths fixed) the d² projections dominate: 2d²ℓ_x + 4d²ℓ_z."""
    flops = attention.cost("matmul").flops
    assert sp.expand(leading_term(flops, d, subs=WIDTHS) - (2 * ell_x + 4 * ell_z) * d**2) == 0


def test_multi_head_self_attention_quadratic_term():
    """Self-attention with d_attn = d_mid = d/H and ℓ_x = ℓ_z = ℓ: the ℓ² term is 4·ℓ²·d."""
    ell = sp.Symbol("ell", positive=True, integer=True)
    subs = {d_attn: d / H, d_mid: d / H, d_x: d, d_z: d, d_out: d, ell_x: ell, ell_z: ell}
    flops = mhattention.cost("matmul").flops
    assert sp.expand(leading_term(flops, ell, subs=subs) - 4 * d * ell**2) == 0


def test_bad_variables_are_config_errors():
    with pytest.raises(ConfigError):
        leading_term(attention.cost().flops)
    with pytest.raises(ConfigError):
        leading_term(attention.cost().flops, ell_x + 1)


def test_cost_evaluate_takes_sizes_through_the_gate():
    """Cost.evaluate substitutes sizes given by name, each through the gate every number passes: a size spelled
    as a formula of numbers (read by the grammar, never executed) or a whole float is that number; a formula
    naming anything, a fraction, zero or a negative size is refused; the counts are exact (no float)."""
    sizes = {"d_x": 8, "d_z": 8, "ell_x": 5, "ell_z": 5, "d_attn": 4, "d_out": 8}
    want = attention.cost().evaluate(sizes)
    assert want["params"] == 8 * 4 + 4 + 8 * 4 + 4 + 8 * 8 + 8
    assert attention.cost().evaluate({**sizes, "d_x": "2*4", "d_z": 8.0}) == want
    assert all(type(v) is int for v in want.values())
    for bad, words in (("__import__('os')", "not part of a formula"), ("d", "names 'd'"), (0, "positive integer"),
                       ("-8", "is -8"), (7.5, "is 15/2"), ("1/2", "is 1/2"), (True, "positive integer")):
        with pytest.raises(ConfigError, match=words):
            attention.cost().evaluate({**sizes, "d_x": bad})
    with pytest.raises(ConfigError, match="no value for d_out"):
        attention.cost().evaluate({k: v for k, v in sizes.items() if k != "d_out"})
