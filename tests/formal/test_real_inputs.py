"""The specification takes real arrays: complex numbers, strings, datetimes and objects are a ConfigError
naming the argument and its dtype, never a silently dropped imaginary part (formal.guards.arrays)."""

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from formal import ConfigError, algorithms
from formal.core import masks
from formal.core.shapes import Binding
from formal.guards.arrays import index_array, real_array
from tests.tiers import fast_few, in_fast_tier

REAL_DTYPES = st.one_of(hnp.boolean_dtypes(), hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(),
                        hnp.floating_dtypes())
OTHER_DTYPES = st.one_of(hnp.complex_number_dtypes(), hnp.unicode_string_dtypes(), hnp.byte_string_dtypes(),
                         hnp.datetime64_dtypes(), hnp.timedelta64_dtypes())
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)


@given(hnp.arrays(REAL_DTYPES, SHAPES))
def test_real_dtypes_are_real_arrays(a):
    out = real_array("X", a)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a.astype(np.float64))


@given(st.data(), OTHER_DTYPES, SHAPES)
def test_other_dtypes_are_a_config_error_naming_the_argument_and_dtype(data, dtype, shape):
    a = data.draw(hnp.arrays(dtype, shape))
    for check, what in ((real_array, "a real array"), (index_array, "an integer index")):
        with pytest.raises(ConfigError, match=re.escape(f"X must be {what}") + ".*" + re.escape(str(a.dtype))):
            check("X", a)


@pytest.mark.parametrize("value, held", [
    (np.array([1.0, "a"], dtype=object), "float, str"), (np.array([1 + 2j], dtype=object), "complex"),
    (None, "NoneType"), (np.array([{}], dtype=object), "dict")])
def test_object_arrays_holding_non_numbers_are_a_config_error(value, held):
    with pytest.raises(ConfigError, match=f"X must be a real array, got an object array holding {held}"):
        real_array("X", value)


def test_object_arrays_of_numbers_and_ragged_lists():
    np.testing.assert_array_equal(real_array("X", np.array([1, 2.5, True], dtype=object)), [1.0, 2.5, 1.0])
    assert index_array("x", np.array([1, 2], dtype=object)).dtype == np.int64
    with pytest.raises(ConfigError, match="x must be an integer index .*holding bool"):
        index_array("x", np.array([True], dtype=object))
    with pytest.raises(ConfigError, match="X must be a real array, got list"):
        real_array("X", [[1.0], [1.0, 2.0]])


@pytest.mark.parametrize("mask, message", [
    (np.ones((2, 2)) + 0j, "mask must be a 0/1 array of shape (2, 2), got complex128"),
    (np.array([[1.0, np.nan], [1.0, 1.0]]), "mask entries must be 0 or 1 (or booleans), got nan"),
    (np.array([[1, 2], [1, 1]]), "mask entries must be 0 or 1 (or booleans), got 2"),
    (np.array([["1", "0"], ["1", "1"]]), "got <U1"),
    (np.array([[1, None], [1, 1]], dtype=object), "got an object array holding NoneType, int"),
])
def test_masks_hold_zeros_and_ones(mask, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        masks.resolve(mask, 2, 2)


def test_a_real_0_1_mask_of_any_real_dtype_is_boolean():
    for dtype in (bool, np.int8, np.uint16, np.float32):
        np.testing.assert_array_equal(masks.resolve(np.eye(2, dtype=dtype), 2, 2), np.eye(2, dtype=bool))


# ----------------------------------------------------------------------------------- every algorithm
_SIZES = {"N_V": 6, "ell_max": 6, "ell_gen": 2, "ell_c": 2, "N_data": 2, "N_epochs": 1, "n_blocks": 1}
_RUN_TIME = {"ell_out", "n_steps"}  # bound by the execution itself
#: Sizes an algorithm needs other than those: Swin's grid halves three times and stays whole windows.
_OWN_SIZES = {"swin": {"height": 8, "width": 8, "swin_window": 1}}


def _arguments(algorithm):
    """Arguments of ``algorithm`` at small sizes that satisfy its constraints (every other size is 2)."""
    own = _OWN_SIZES.get(algorithm.name, {})
    sizes = {s: own.get(str(s), _SIZES.get(str(s), 2)) for s in algorithm.symbols}
    b = Binding(sizes)
    rng = np.random.default_rng(0)
    arguments = {}
    for spec in algorithm.signature:
        shape = tuple(b.evaluate(d) for d in spec.shape)
        if spec.kind == "real":
            arguments[spec.name] = rng.normal(size=shape)
        elif spec.kind == "index":
            arguments[spec.name] = np.zeros(shape, dtype=np.int64)
    carried = set().union(*(d.free_symbols for s in algorithm.signature if s.kind != "mask" for d in s.shape))
    arguments.update({str(s): v for s, v in sizes.items() if s not in carried and str(s) not in _RUN_TIME})
    if algorithm.random:
        arguments["seed"] = 0
    return arguments


def _specs(kind):
    return [(name, spec.name) for name, a in algorithms.ALGORITHMS.items() for spec in a.signature
            if spec.kind == kind]


@pytest.mark.parametrize("name, argument", fast_few(_specs("real"), keep=lambda s: in_fast_tier(s[0]), unpack=True))
def test_a_complex_real_argument_is_a_config_error_naming_it(name, argument):
    """Every real input and parameter of every algorithm: a complex array is refused, not truncated."""
    algorithm = algorithms.ALGORITHMS[name]
    arguments = _arguments(algorithm)
    arguments[argument] = arguments[argument] + 0.5j
    with pytest.raises(ConfigError, match=re.escape(f"{argument} must be a real array, got complex128")):
        algorithm.run(**arguments)


@pytest.mark.parametrize("name, argument", _specs("index"))
def test_a_complex_index_argument_is_a_config_error_naming_it(name, argument):
    algorithm = algorithms.ALGORITHMS[name]
    arguments = _arguments(algorithm)
    arguments[argument] = arguments[argument] + 0j
    with pytest.raises(ConfigError, match=re.escape(f"{argument} must be an integer index") + ".*complex128"):
        algorithm.run(**arguments)


@pytest.mark.parametrize("name", fast_few(sorted(algorithms.ALGORITHMS), keep=in_fast_tier))
def test_the_arguments_above_are_valid(name):
    """The arguments the tests above perturb run (training stops at its gradient step, by design)."""
    algorithm = algorithms.ALGORITHMS[name]
    if name.endswith("training"):
        with pytest.raises(ConfigError, match="computes losses, not gradients"):
            algorithm.run(**_arguments(algorithm))
    else:
        algorithm.run(**_arguments(algorithm))


def test_booleans_and_integers_stay_real_inputs():
    a = algorithms.layer_norm
    out = a(e=np.array([1, 0, 1]), gamma=np.array([True, True, True]), beta=np.zeros(3, dtype=np.int8))
    np.testing.assert_allclose(out, [2 ** -0.5, -(2 ** 0.5), 2 ** -0.5])
