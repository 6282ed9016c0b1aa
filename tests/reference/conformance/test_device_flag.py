"""``conform --device cuda`` on a function that takes no ``device`` argument would run it where it runs anyway: a
flag with no effect, refused (checked without a GPU: the refusal comes before anything runs)."""

from __future__ import annotations

import pytest

from formal import algorithms
from formal.errors import ConfigError
from reference.conformance.targets import Target


def plain(X, Z=None, mask=None, **params):      # **params: it could take device=, so it is passed one
    return X


def fixed(X, Z=None, mask=None, W_q=None, W_k=None, W_v=None, b_q=None, b_k=None, b_v=None):
    return X


def with_device(X, Z=None, mask=None, W_q=None, W_k=None, W_v=None, b_q=None, b_k=None, b_v=None, device="cpu"):
    return X


def test_a_device_a_function_cannot_take_is_refused():
    attention = algorithms.get("attention")
    with pytest.raises(ConfigError, match="--device cuda has no effect"):
        Target(fixed, "fixed", attention, device="cuda")
    assert Target(with_device, "with_device", attention, device="cuda").takes_device
    assert Target(plain, "plain", attention, device="cuda").takes_device
    assert not Target(fixed, "fixed", attention, device="cpu").takes_device
