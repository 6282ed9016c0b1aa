"""Bad input: ShapeError names the algorithm, line, symbol, what was bound and what was met;
ConfigError names the constraint and the values."""

import numpy as np
import pytest
import sympy as sp

from formal import ConfigError, ShapeError, attention, mhattention, positional_embedding
from formal.core.shapes import Binding, Mismatch, TensorSpec
from formal.core.symbols import H, d_attn, d_mid, d_x, d_z, ell_z
from formal.engine.algorithm import Algorithm, Assign
from formal.ops import matmul


def attention_args(d_x=3, ell_x=4, d_z=5, ell_z=2, d_attn=2, d_out=3, seed=0):
    rng = np.random.default_rng(seed)
    return dict(X=rng.normal(size=(d_x, ell_x)), Z=rng.normal(size=(d_z, ell_z)),
                W_q=rng.normal(size=(d_attn, d_x)), b_q=rng.normal(size=d_attn),
                W_k=rng.normal(size=(d_attn, d_z)), b_k=rng.normal(size=d_attn),
                W_v=rng.normal(size=(d_out, d_z)), b_v=rng.normal(size=d_out))


def test_shape_error_names_algorithm_line_symbol_binding_and_value():
    args = attention_args()
    args["W_k"] = np.ones((2, 6))  # d_z is 5, from Z
    with pytest.raises(ShapeError) as info:
        attention(**args)
    err = info.value
    assert (err.algorithm, err.line, err.symbol, err.expected, err.got) == (
        "Algorithm 4 (attention)", 2, "d_z", 5, 6)
    assert "Algorithm 4 (attention), line 2: d_z is bound to 5 but 6 was met" in str(err)


def test_shape_error_on_a_later_line_names_that_line():
    args = attention_args()
    args["W_v"] = np.ones((3, 4))
    with pytest.raises(ShapeError, match=r"line 3: d_z is bound to 5 but 4 was met"):
        attention(**args)


def test_shape_error_in_a_compound_dimension():
    rng = np.random.default_rng(0)
    args = dict(X=rng.normal(size=(3, 2)), W_q=rng.normal(size=(2, 2, 3)), b_q=np.ones((2, 2)),
                W_k=rng.normal(size=(2, 2, 3)), b_k=np.ones((2, 2)), W_v=rng.normal(size=(2, 4, 3)),
                b_v=np.ones((2, 4)), W_o=rng.normal(size=(3, 7)), b_o=np.ones(3))
    with pytest.raises(ShapeError) as info:
        mhattention(**args)
    assert (info.value.line, info.value.symbol, info.value.expected, info.value.got) == (4, "H*d_mid", 8, 7)


def test_rank_error_is_a_shape_error_at_the_signature():
    args = attention_args()
    args["X"] = np.ones(3)
    with pytest.raises(ShapeError, match="signature"):
        attention(**args)


@pytest.mark.parametrize("shape", [(3, 0), (0, 4)])
def test_non_positive_size_is_a_config_error(shape):
    with pytest.raises(ConfigError, match=r"= 0 must be positive"):
        attention(**{**attention_args(), "X": np.ones(shape)})


def test_non_positive_explicit_size_is_a_config_error():
    with pytest.raises(ConfigError, match=r"ell_max = -3 must be a positive integer"):
        positional_embedding.variant(encoding="sinusoidal-paper")(t=0, d_e=4, ell_max=-3)


def test_kv_heads_not_dividing_heads_is_a_config_error():
    rng = np.random.default_rng(0)
    args = dict(X=rng.normal(size=(3, 2)), W_q=rng.normal(size=(3, 2, 3)), W_k=rng.normal(size=(2, 2, 3)),
                W_v=rng.normal(size=(2, 2, 3)), W_o=rng.normal(size=(3, 6)))
    gqa = mhattention.variant(bias=False, n_kv_heads="symbolic")
    with pytest.raises(ConfigError, match=r"H = 3 is not divisible by n_kv_heads = 2"):
        gqa(**args)
    with pytest.raises(ConfigError, match=r"H = 3 is not divisible by 2"):
        mhattention.variant(bias=False, n_kv_heads=2)(**args)


@pytest.mark.parametrize("value", [0, -1, 1.5, "two", True])
def test_bad_n_kv_heads_option_is_a_config_error(value):
    with pytest.raises(ConfigError, match="n_kv_heads"):
        mhattention.variant(n_kv_heads=value)


@pytest.mark.parametrize("mask, message", [
    (np.ones((4, 2)), r"mask has shape \(4, 2\) but .* needs \(2, 4\)"),
    ("causal", "needs an explicit alignment"),
    ("sideways", "unknown mask 'sideways'"),
    (np.full((2, 4), 0.5), "0 or 1"),
])
def test_bad_mask_is_a_config_error(mask, message):
    with pytest.raises(ConfigError, match=message):
        attention(**attention_args(), mask=mask)


def test_unknown_and_missing_arguments_are_config_errors():
    args = attention_args()
    with pytest.raises(ConfigError, match="unexpected argument 'W_x'"):
        attention(**args, W_x=1)
    del args["W_q"]
    with pytest.raises(ConfigError, match="missing argument 'W_q'"):
        attention(**args)


def test_non_numeric_array_is_a_config_error():
    with pytest.raises(ConfigError, match="X must be a real array"):
        attention(**{**attention_args(), "X": [["a"]]})


def test_unknown_option_and_bad_values_are_config_errors():
    with pytest.raises(ConfigError, match="no option 'heads'"):
        attention.variant(heads=2)
    with pytest.raises(ConfigError, match="empty = 'skip' must be 'zero', 'nan', 'error' or 'uniform'"):
        attention.variant(empty="skip")
    with pytest.raises(ConfigError, match="encoding = 'rotary' must be 'learned', 'sinusoidal-paper' or"):
        positional_embedding.variant(encoding="rotary")


def test_a_product_of_unequal_widths_is_a_shape_error_at_derivation():
    """(d_attn×d_x)·(d_z×ℓ_z) is an error unless d_x and d_z are one symbol — sympy's MatMul would not
    catch it; the op's shape rule does, naming the line."""
    bad = Algorithm(number=0, name="bad", display="Bad", summary="", output=TensorSpec("Q", (d_attn, ell_z)),
                    inputs=[TensorSpec("Z", (d_z, ell_z))], params=[TensorSpec("W_q", (d_attn, d_x))],
                    lines=[Assign("Q", matmul("W_q", "Z"), returns=True)])
    with pytest.raises(ShapeError) as info:
        bad.derivation
    assert (info.value.line, info.value.expected, info.value.got) == (1, d_x, d_z)


def test_binding_solves_linear_dimensions_and_checks_them():
    b = Binding()
    b.bind((H,), (3,), "W_q")
    b.bind((H * d_mid,), (12,), "Y")
    assert b.values[d_mid] == 4
    with pytest.raises(Mismatch):
        b.bind((H * d_mid,), (13,), "W_o")
    with pytest.raises(Mismatch):
        Binding({H: 3}).bind((H * d_mid,), (10,), "Y")  # 10 is not a multiple of H = 3
    assert sp.Integer(b.evaluate(H * d_mid)) == 12
