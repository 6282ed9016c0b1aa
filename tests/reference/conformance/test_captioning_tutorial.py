"""Show, Attend and Tell as the common PyTorch tutorial writes it conforms to the spec's variant of its options,
and to no variant that differs from it in one option."""

import numpy as np
import pytest

from formal import algorithms
from reference.catalogue import captioning_tutorial as tutorial
from reference.catalogue.captioning_tutorial import TUTORIAL_OPTIONS
from reference.conformance.conform import conform


def test_the_tutorials_decoder_conforms_to_its_variant():
    """Ported line for line, with an adapter that only renames and packs its weights, the tutorial's decoder
    passes every property in the rows layout under the options that name its choices."""
    report = conform(tutorial.show_attend_tell, "show_attend_tell", options=TUTORIAL_OPTIONS, layout="rows",
                     isolate=False)
    assert report.failure is None, report.failure
    assert report.checks["spec"].examples > 0


@pytest.mark.parametrize("option", sorted(set(TUTORIAL_OPTIONS) - {"inputs"}))
def test_each_of_the_tutorials_choices_is_needed(option):
    """With any one of its options at Xu et al.'s default, the tutorial's decoder fails: each option names a
    real difference (before them, a faithful port could only fail)."""
    default = algorithms.get("show_attend_tell").options[option]
    report = conform(tutorial.show_attend_tell, "show_attend_tell", options={**TUTORIAL_OPTIONS, option: default},
                     layout="rows", isolate=False)
    assert report.failure is not None and report.failure["property"] in ("runs", "spec")


def test_full_atts_bias_cancels_in_the_softmax():
    """The spec has no bias after v_a: the tutorial's full_att bias adds the same number to every location's
    score, which the softmax cancels — the decoder's outputs do not change with it."""
    rng = np.random.default_rng(0)
    model = algorithms.get("show_attend_tell", **TUTORIAL_OPTIONS)
    sizes = {"d_z": 3, "d_h": 4, "d_a": 2, "d_e": 3, "N_V": 5}
    shapes = {s.name: tuple(int(d.subs(_symbols(sizes))) for d in s.shape) for s in model.params}
    params = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    F, x = rng.standard_normal((2, 3, sizes["d_z"])), rng.integers(0, sizes["N_V"], 4)
    weights = tutorial.state_dict(params)
    shifted = {**weights, "full_att": {**weights["full_att"], "bias": np.array([3.7])}}
    for got, want in zip(tutorial.decoder(F, x, shifted), tutorial.decoder(F, x, weights)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _symbols(sizes):
    from formal.core.symbols import by_name
    return {by_name(name): value for name, value in sizes.items()}
