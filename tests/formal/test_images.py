"""ViT from the image itself (Dosovitskiy et al. 2021, §3.1: "reshape the image x ∈ ℝ^{H×W×C} into a
sequence of flattened 2D patches x_p ∈ ℝ^{N×(P²·C)}"): the patch op against a hand loop and a convolution,
Algorithm 9 on an image against Algorithm 9 on its patches, and the image's sizes derived."""

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import algorithms
from formal.core.symbols import by_name, channels, d_patch, ell, patch
from formal.errors import ConfigError, ShapeError

ORDERS = st.sampled_from(["channel-first", "channel-last"])


@st.composite
def images(draw):
    P, n_h, n_w, C = (draw(st.integers(1, 3)) for _ in range(4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return P, n_h, n_w, C, rng.normal(size=(P * n_h, P * n_w, C)), rng


def _vit(order, P, C, n_h, n_w, rng, d_e=2):
    """ViT's parameters at these sizes (L = 1, H = 1, d_mlp = 2, two classes), drawn."""
    vit = algorithms.get("etransformer", inputs="image", head="classifier", norm_position="pre",
                         patch_order=order)
    sizes = {"patch": P, "channels": C, "height": n_h, "width": n_w, "d_e": d_e, "L": 1, "H": 1,
             "d_attn": d_e, "d_mid": d_e, "d_mlp": 2, "n_classes": 2}
    values = {by_name(k): v for k, v in sizes.items()}
    params = {p.name: rng.normal(size=tuple(int(d.xreplace(values)) if hasattr(d, "xreplace") else int(d)
                                            for d in p.shape)) for p in vit.params}
    return vit, params


@given(images(), ORDERS)
def test_patches_are_the_images_blocks_read_row_major(image, order):
    """Column r·n_w + c of X_p is the P×P block at patch row r, patch column c, its values in (c, i, j) order
    (channel-first) or (i, j, c) (channel-last) — written here as index arithmetic, one value at a time."""
    P, n_h, n_w, C, X_img, rng = image
    vit, params = _vit(order, P, C, n_h, n_w, rng)
    X_p = vit.run(X_img=X_img, **params).values["X_p"]
    assert X_p.shape == (P * P * C, n_h * n_w)
    for r in range(n_h):
        for c in range(n_w):
            for i in range(P):
                for j in range(P):
                    for ch in range(C):
                        row = ch * P * P + i * P + j if order == "channel-first" else (i * P + j) * C + ch
                        assert X_p[row, r * n_w + c] == X_img[r * P + i, c * P + j, ch]


@given(images())
def test_channel_first_patches_are_a_stride_p_convolution(image):
    """HF's and timm's patch embedding is a Conv2d of kernel and stride P with weight K (d_e, C, P, P): its
    output at patch (r, c) is Σ_{ch,i,j} K[:, ch, i, j] X_img[rP + i, cP + j, ch], which is K flattened times
    the channel-first patch column."""
    P, n_h, n_w, C, X_img, rng = image
    vit, params = _vit("channel-first", P, C, n_h, n_w, rng)
    K = rng.normal(size=(3, C, P, P))
    X_p = vit.run(X_img=X_img, **params).values["X_p"]
    conv = np.stack([np.einsum("ochw,hwc->o", K, X_img[r * P:(r + 1) * P, c * P:(c + 1) * P, :])
                     for r in range(n_h) for c in range(n_w)], axis=1)
    np.testing.assert_allclose(K.reshape(3, -1) @ X_p, conv, rtol=1e-12, atol=1e-12)


@given(images(), ORDERS)
def test_vit_on_an_image_is_vit_on_its_patches(image, order):
    """inputs="image" is the patch op followed by Algorithm 9 with inputs="patches" (d_patch = P²·C,
    ℓ = n_h·n_w), the same parameters."""
    P, n_h, n_w, C, X_img, rng = image
    vit, params = _vit(order, P, C, n_h, n_w, rng)
    run = vit.run(X_img=X_img, **params)
    on_patches = algorithms.get("etransformer", inputs="patches", head="classifier", norm_position="pre")
    np.testing.assert_array_equal(on_patches(X_p=run.values["X_p"], **params), run.output)


def test_an_images_costs_are_its_patches_costs():
    """Cutting the image is free; every other cost is the patch model's at d_patch = P²·C, ℓ = n_h·n_w, and
    the depth is one line more."""
    image = algorithms.get("etransformer", inputs="image", head="classifier")
    patches = algorithms.get("etransformer", inputs="patches", head="classifier")
    at = {d_patch: patch ** 2 * channels, ell: by_name("height") * by_name("width")}
    a, b = image.cost(), patches.cost()
    for got, want in ((a.flops, b.flops), (a.params, b.params), (a.memory - patch ** 2 * channels * at[ell], b.memory),
                      (a.depth, b.depth + 1)):
        assert (got - want.xreplace(at)).expand() == 0


@pytest.mark.parametrize("shape, message", [
    ((10, 6, 4), "height*patch with patch = 3 but 10 was met (X_img axis 0)"),
    ((9, 6, 5), "channels*patch**2 with channels = 5 but 36 was met (W_patch axis 1)"),
])
def test_an_image_that_is_not_cut_into_whole_patches_is_refused(shape, message):
    """The sides are P·n_h and P·n_w by construction (the divisibility constraint P | H, P | W): a 10-pixel
    side with P = 3 binds no n_h, and a channel count that W_patch's P²·C cannot have binds no P."""
    rng = np.random.default_rng(0)
    vit, params = _vit("channel-first", 3, 4, 3, 2, rng)
    with pytest.raises(ShapeError, match=re.escape(message)):
        vit(X_img=np.zeros(shape), **params)


@pytest.mark.parametrize("options, message", [
    ({"patch_order": "channel-last"}, "patch_order = 'channel-last' applies to inputs = 'image' only, not 'tokens'"),
    ({"inputs": "image", "head": "classifier", "patch_order": "hwc"},
     "patch_order = 'hwc' must be None, 'channel-first' or 'channel-last'"),
    ({"inputs": "patches"}, "inputs = 'patches' needs head = 'classifier', not 'mlm' .ViT classifies its class token."),
    ({"inputs": "image", "head": "classifier", "position": "none"},
     "inputs = 'image' needs position = 'learned', not 'none'"),
    ({"inputs": "image", "head": "classifier", "token_types": True},
     "inputs = 'image' needs token_types = False, not True .ViT has no token types."),
    ({"head": "classifier", "tied": True}, "head = 'classifier' needs tied = False, not True"),
])
def test_bad_image_options_name_the_option_and_its_value(options, message):
    with pytest.raises(ConfigError, match=message):
        algorithms.get("etransformer", **options)
