"""Masks, against their definitions (the conventions and decision-causal-alignment)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import ConfigError
from formal.core import masks

lengths = st.integers(1, 8)


@given(lengths, lengths)
def test_causal_alignments_follow_their_definitions(ell_z, ell_x):
    top_left = masks.causal(ell_z, ell_x, align="top-left")
    bottom_right = masks.causal(ell_z, ell_x, align="bottom-right")
    for t_z in range(ell_z):
        for t_x in range(ell_x):
            assert top_left[t_z, t_x] == (t_z <= t_x)
            assert bottom_right[t_z, t_x] == (t_z <= t_x + ell_z - ell_x)


@given(lengths)
def test_square_causal_needs_no_alignment_and_both_agree(ell):
    expected = np.tril(np.ones((ell, ell), dtype=bool)).T  # Mask[t_z, t_x] = [t_z ≤ t_x]
    for m in (masks.causal(ell, ell), masks.resolve("causal", ell, ell),
              masks.causal(ell, ell, align="bottom-right")):
        np.testing.assert_array_equal(m, expected)


def test_named_masks_resolve():
    assert masks.resolve(None, 2, 3).all() and masks.resolve("bidirectional", 2, 3).shape == (2, 3)
    np.testing.assert_array_equal(masks.resolve("causal-bottom-right", 3, 2),
                                  masks.causal(3, 2, align="bottom-right"))
    np.testing.assert_array_equal(masks.resolve(np.array([[1, 0]]), 1, 2), [[True, False]])


def test_unknown_alignment_is_a_config_error():
    with pytest.raises(ConfigError, match="alignment"):
        masks.causal(2, 3, align="middle")
    with pytest.raises(ConfigError, match="explicit alignment"):
        masks.causal(2, 3)
