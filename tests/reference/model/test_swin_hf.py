"""Swin against HF transformers' SwinForImageClassification, built offline from configs with random weights:
a block (regular and shifted) and the whole model equal the spec's numpy execution in float64; the presets'
parameter counts equal the modules' ``numel`` (built on the meta device: no weights allocated); the matmul
FLOPs equal what torch's FlopCounterMode counts; half of them, plus one per layer-norm element, are what
Swin's official counter reports (its ``flops()`` methods, written out below as the oracle)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from formal.algorithms.vision import swin, swin_block
from formal.models.presets import get as preset
from formal.ops import shift_of
from reference import tolerances
from reference.model import third_party
from tests.reference.model.torch_modules import randomise
from tests.strategies.cases import SEED
from tests.tiers import fast_few, slow

transformers = pytest.importorskip("transformers")
FLOAT64 = 1e-10
#: HF's eager attention takes its softmax in float32 (``softmax(..., dtype=torch.float32)`` in modeling_swin.py),
#: whatever the model's dtype: through it the two agree to float32's precision — the bound of a correct float32
#: computation of the block on the example (reference.tolerances.allowed), relative to max(1, max |output|) as
#: every such bound is — and through sdpa to float64's.  (A fixed 1e-6 was exceeded by a 2-wide block whose
#: layer norms amplify the rounding.)
TOLERANCE = {"eager": "float32", "sdpa": "float64"}



def _config(*, window, patch, grid, embed, heads, depths=(2, 2, 2, 2), n_classes=3, eps=1e-5, attention="sdpa"):
    return transformers.SwinConfig(image_size=patch * grid, patch_size=patch, num_channels=3, embed_dim=embed,
                                   depths=list(depths), num_heads=[heads * 2 ** i for i in range(4)],
                                   window_size=window, num_labels=n_classes, layer_norm_eps=eps,
                                   attn_implementation=attention)


@slow
@pytest.mark.parametrize("attention", fast_few(["eager", "sdpa"]))
@given(window=st.integers(1, 3), per_side=st.tuples(st.integers(1, 3), st.integers(1, 3)), heads=st.integers(1, 2),
       head_width=st.integers(2, 3), shifted=st.booleans(), seed=SEED)
@settings(max_examples=60, deadline=None)
def test_hf_swin_layer_is_swin_block(attention, window, per_side, heads, head_width, shifted, seed):
    """HF's SwinLayer (shift_size ⌊M/2⌋ on odd blocks, 0 where the grid is one window) equals ``swin_block``
    with ``shifted`` its own, on the grid of its (n_h·n_w, C) tokens read row-major.  (Width ≥ 2: a layer
    norm over one feature divides rounding noise by √ε.)"""
    rows, cols = window * per_side[0], window * per_side[1]
    width = heads * head_width
    config = _config(window=window, patch=1, grid=max(rows, cols), embed=width, heads=heads, attention=attention)
    layer = transformers.models.swin.modeling_swin.SwinLayer(config, width, (rows, cols), heads,
                                                             shift_size=window // 2 if shifted else 0)
    randomise(layer, seed)
    x = torch.tensor(np.random.default_rng(seed).normal(size=(1, rows * cols, width)))
    with torch.no_grad():
        got = layer(x, (rows, cols))[0][0].numpy()
    params, options = third_party.from_hf_swin_block(layer)
    assert layer.shift_size == shift_of(rows, cols, window, shifted)      # HF's rule is the spec's σ
    assert options["shifted"] == bool(layer.shift_size)
    block, arguments = swin_block.variant(**options), {"X": x[0].numpy().reshape(rows, cols, width), **params}
    want = block(**arguments)
    assert np.max(np.abs(want.reshape(rows * cols, width) - got)) <= tolerances.allowed(TOLERANCE[attention],
                                                                                    block, want, arguments)


@slow
@given(window=st.integers(1, 2), patch=st.integers(1, 2), windows=st.integers(1, 2), heads=st.integers(1, 2),
       seed=SEED)
@settings(max_examples=24, deadline=None)
def test_hf_swin_for_image_classification_is_swin_on_the_image(window, patch, windows, heads, seed):
    """The whole classifier from ``pixel_values``: patch embedding (Conv2d = W_patch on channel-first
    patches), four stages with merging, final norm, mean pooling, classifier — softmax of HF's logits."""
    grid = 8 * window * windows                       # stage 4 is windows × windows windows of M×M
    config = _config(window=window, patch=patch, grid=grid, embed=2 * heads, heads=heads)     # sdpa
    model = randomise(transformers.SwinForImageClassification(config), seed)
    pixels = torch.tensor(np.random.default_rng(seed).normal(size=(1, 3, patch * grid, patch * grid)))
    with torch.no_grad():
        got = torch.softmax(model(pixel_values=pixels).logits[0], -1).numpy()
    params, options = third_party.from_hf_swin(model)
    want = swin.variant(**options)(X_img=pixels[0].permute(1, 2, 0).numpy(), **params)
    assert np.max(np.abs(want - got)) <= FLOAT64


@pytest.mark.parametrize("name", ["swin-t", "swin-s", "swin-b", "swin-l"])
def test_preset_parameter_counts_equal_hf_modules(name):
    """Every parameter of HF's SwinForImageClassification at the preset's configuration (the relative-position
    tables included, their index buffers not), counted by ``numel`` on the meta device."""
    p = preset(name)
    s = p.sizes
    config = _config(window=s["swin_window"], patch=s["patch"], grid=s["height"], embed=s["H"] * s["d_attn"],
                     heads=s["H"], depths=[s[f"L_{i}"] for i in range(1, 5)], n_classes=s["n_classes"])
    with torch.device("meta"):
        model = transformers.SwinForImageClassification(config)
    assert p.evaluate()["params"] == sum(t.numel() for t in model.parameters())


def _small_swin_sizes():
    return {"patch": 2, "channels": 3, "height": 16, "width": 16, "swin_window": 2, "n_classes": 10, "H": 2,
            "d_attn": 4, "L_1": 2, "L_2": 2, "L_3": 4, "L_4": 2}


def test_matmul_flops_equal_flop_counter_mode():
    """torch's FlopCounterMode over HF's forward pass (the convolution, every linear layer, QKᵀ and the
    weighting, as eager attention computes them) counts what the matmul convention derives."""
    from torch.utils.flop_counter import FlopCounterMode

    from formal.models.presets import resolve_sizes
    s = _small_swin_sizes()
    config = _config(window=s["swin_window"], patch=s["patch"], grid=s["height"], embed=s["H"] * s["d_attn"],
                     heads=s["H"], depths=[s[f"L_{i}"] for i in range(1, 5)], n_classes=s["n_classes"],
                     attention="eager")
    model = transformers.SwinForImageClassification(config).eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(pixel_values=torch.randn(1, 3, 32, 32))
    assert swin.cost("matmul").evaluate(resolve_sizes(swin, s))["flops"] == counter.get_total_flops()


def _official_flops(C, depths, heads, M, grid, patch=4, channels=3, n_classes=1000):
    """Swin's official ``SwinTransformer.flops()`` (microsoft/Swin-Transformer, models/swin_transformer.py),
    written out: multiply–accumulates of the products, plus one per element of every layer norm, the final
    norm counted at grid²/2⁴ positions (a quirk of the official counter: the grid after four halvings)."""
    total = grid * grid * C * channels * patch * patch + grid * grid * C           # patch embed + its norm
    side, dim, norms = grid, C, grid * grid * C
    for i, depth in enumerate(depths):
        n = M * M
        window = n * 3 * dim * dim + heads[i] * n * n * (dim // heads[i]) * 2 + n * dim * dim
        per_block = side * side * dim * 2 + (side * side // n) * window + 2 * side * side * dim * dim * 4
        total += depth * per_block
        norms += depth * side * side * dim * 2
        if i < len(depths) - 1:
            total += side * side * dim + (side // 2) * (side // 2) * 4 * dim * 2 * dim
            norms += side * side * dim
            side, dim = side // 2, dim * 2
    final = dim * grid * grid // 2 ** len(depths)
    total += final + dim * n_classes
    return total, norms + final


@pytest.mark.parametrize("name, official", [("swin-t", 4_494_405_120), ("swin-s", 8_746_520_064),
                                            ("swin-b", 15_438_473_216), ("swin-l", 34_487_049_216)])
def test_swin_reported_flops_are_macs_plus_the_layer_norms(name, official):
    """What Swin's official counter reports (4.5G for Swin-T: the paper's Table 1) is the matmul convention's
    FLOPs halved — multiply–accumulates — plus one per layer-norm element, which no convention here counts
    as a product."""
    s = preset(name).sizes
    C, heads = s["H"] * s["d_attn"], [s["H"] * 2 ** i for i in range(4)]
    reported, norms = _official_flops(C, [s[f"L_{i}"] for i in range(1, 5)], heads, s["swin_window"], s["height"])
    assert reported == official
    macs = preset(name).evaluate()["flops"] // 2
    assert macs + norms == official
    from formal.models.complexity import preset_report
    assert preset_report(name)["flops"]["forward_macs_per_sequence"] == macs


def _hf_swin_block(shift_of_block):
    """A user's Swin block: HF's SwinLayer (sdpa) loaded with the spec's parameters, on the grid's tokens read
    row-major; ``shift_of_block(M)`` is the shift its author built the layer with."""
    def swin_block(X, gamma1, beta1, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, B_hat, gamma2, beta2, W_mlp1, b_mlp1,
                   W_mlp2, b_mlp2):
        rows, cols, width = X.shape
        heads, M = W_q.shape[0], (B_hat.shape[1] + 1) // 2
        config = _config(window=M, patch=1, grid=max(rows, cols), embed=width, heads=heads)
        config.mlp_ratio = W_mlp1.shape[0] / width                     # HF's MLP is int(mlp_ratio·C) wide
        layer = transformers.models.swin.modeling_swin.SwinLayer(config, width, (rows, cols), heads,
                                                                 shift_size=shift_of_block(M)).double().eval()
        state = {"layernorm_before.weight": gamma1, "layernorm_before.bias": beta1,
                 "layernorm_after.weight": gamma2, "layernorm_after.bias": beta2,
                 "mlp.fc1.weight": W_mlp1, "mlp.fc1.bias": b_mlp1, "mlp.fc2.weight": W_mlp2, "mlp.fc2.bias": b_mlp2,
                 "attention.o_proj.weight": W_o, "attention.o_proj.bias": b_o,
                 "attention.relative_position_bias.relative_position_bias_table": B_hat.reshape(heads, -1).T}
        for name, W, b in (("q", W_q, b_q), ("k", W_k, b_k), ("v", W_v, b_v)):
            state[f"attention.{name}_proj.weight"] = W.reshape(heads * W.shape[1], width)
            state[f"attention.{name}_proj.bias"] = b.reshape(-1)
        with torch.no_grad():
            for key, value in state.items():
                layer.get_parameter(key).copy_(torch.tensor(np.ascontiguousarray(value)))
            out = layer(torch.tensor(X.reshape(1, rows * cols, width)), (rows, cols))[0][0].numpy()
        return out.reshape(rows, cols, width)
    return swin_block


@slow
def test_conform_passes_hf_swin_layer_as_a_users_block_and_fails_a_misplaced_shift():
    """``conform`` checks a user's Swin block: HF's SwinLayer wrapped as a function of the spec's parameters
    conforms to ``swin_block`` regular and shifted, in either layout (a grid, in and out, is channel-last in
    both); the same layer shifted on a regular block fails."""
    from reference.conformance.conform import conform
    for shifted, layout in ((False, "columns"), (True, "columns"), (True, "rows")):
        good = conform(_hf_swin_block(lambda M, s=shifted: M // 2 if s else 0), "swin_block",
                       options={"shifted": shifted, "eps": 1e-5}, n_examples=6, layout=layout)
        assert good.ok, good.failure
    bad = conform(_hf_swin_block(lambda M: M // 2), "swin_block", options={"shifted": False, "eps": 1e-5},
                  n_examples=6)
    assert not bad.ok and bad.failure["property"] == "spec", bad.failure
