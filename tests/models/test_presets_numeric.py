"""Every preset's options run numerically against HF transformers: the published config with only its sizes
shrunk (2 layers, d_e = 16, 4 heads, a short context, a small vocabulary) builds an HF model in float64 with
random weights; the reader of :mod:`reference.model.third_party` loads them into the spec's names, and the
spec's numpy execution and the torch reference, both run with the preset's options exactly, give HF's
output.  The tiny config still maps to the preset's options, so what runs is the preset's variant, and a
wrong ε, activation, norm position, tying, norm, bias or rotation makes the outputs differ.  Llama runs with its
rotary embedding (rotate-half, its θ and scaling rule).

GPT-3 is GPT-2's architecture (Brown et al. 2020, §2.1): its options run through HF's GPT-2.  The base
Transformer and Show, Attend and Tell have no HF model; their options are checked against their papers
(tests/models/test_presets_hf.py) and their execution against torch modules in tests/reference."""

import numpy as np
import pytest
import torch
import transformers

from formal import algorithms
from formal.models import presets
from reference import tolerances
from reference.model import hf_configs, third_party
from reference.model.execute import execute
from tests.models import published
from tests.models.test_presets_hf import complete
from tests.reference.model.torch_modules import randomise
from tests.tiers import fast_few

#: The size fields of each config class, shrunk; every other field stays as published.
TINY = {
    "GPT2Config": {"n_embd": 16, "n_head": 4, "n_layer": 2, "n_positions": 12, "n_ctx": 12, "vocab_size": 40,
                   "bos_token_id": None, "eos_token_id": None},
    "BertConfig": {"hidden_size": 16, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 24,
                   "max_position_embeddings": 12, "vocab_size": 40},
    "LlamaConfig": {"hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 4,
                    "num_hidden_layers": 2, "intermediate_size": 24, "max_position_embeddings": 12, "vocab_size": 40},
    "ViTConfig": {"hidden_size": 16, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 24,
                  "image_size": 6, "patch_size": 2, "num_labels": 5},
    "SwinConfig": {"embed_dim": 8, "num_heads": [2, 4, 8, 16], "depths": [2, 2, 2, 2], "image_size": 32,
                   "patch_size": 2, "window_size": 2, "num_labels": 5},
}
#: A Llama with grouped-query attention keeps it at tiny sizes (the preset's n_kv_heads = 8 is an option, compared
#: exactly): 16 query heads of 8 over 8 key/value heads — 4 frequencies, which at Llama 3's θ = 500000 and N = 8192
#: meet all three bands of the llama3 rule (kept, smoothed, divided by s).
TINY_GQA = {"num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 8}
ELL, SEED = 7, 0


def _hf_config_for(name: str):
    """(config class name, the tiny config) of preset ``name``: its published config, GPT-2's for GPT-3."""
    published_name = "gpt2" if name in published.GPT3 else name
    cls, fields = published.HF[published_name][0], published.fields_of(published_name)
    tiny = dict(TINY[cls])
    if cls == "LlamaConfig" and fields.get("num_key_value_heads", fields["num_attention_heads"]) != \
            fields["num_attention_heads"]:
        tiny.update(TINY_GQA)
    return cls, getattr(transformers, cls)(**{**fields, **tiny}, attn_implementation="sdpa")


def float64_frequencies(model):
    """Replace the ``inv_freq`` (and ``original_inv_freq``) buffers of an HF Llama's rotary module by the config's
    rule computed in float64 (read by :func:`~reference.model.hf_configs.llama_rotation`, computed by
    ``Rotation.frequencies``, which tests/models/test_llama_rotary.py checks against HF's rule), after checking
    they equal HF's own to float32's precision.

    Why: HF computes ``inv_freq`` in float32 even under ``.double()`` (its rules write ``dtype=torch.float``), a
    few float32 roundings off the rule; the spec computes it in float64.  The replacement leaves HF's frequencies
    one rounding off at most: its forward still multiplies them by the positions, and takes cos and sin, in float32
    (as its RMSNorm normalises in float32), so the comparison stays float32's (:func:`_tolerance`)."""
    from formal.ops.rotary import Rotation
    rotary, config = model.model.rotary_emb, model.config
    rotation = Rotation.of(hf_configs.llama_rotation(config))
    omega = rotation.frequencies(rotation.rotated(config.head_dim), config.max_position_embeddings)
    np.testing.assert_allclose(omega, rotary.inv_freq.double().numpy(), rtol=1e-6, atol=0)
    for buffer in ("inv_freq", "original_inv_freq"):
        if hasattr(rotary, buffer):
            setattr(rotary, buffer, torch.tensor(omega))


def run_llama(config, x):
    """(params, reader options, HF's output as N_V×ℓ columns) of an HF ``LlamaForCausalLM`` of ``config`` with
    random float64 weights (its frequencies as :func:`float64_frequencies` makes them) on the tokens ``x``."""
    model = randomise(transformers.LlamaForCausalLM(config), SEED)
    float64_frequencies(model)
    with torch.no_grad():       # embeddings of mean square ~ ε, where float32's tolerance can see ε
        model.model.embed_tokens.weight.mul_(1e-2)
        got = _columns(model(torch.tensor(x)[None]).logits)
    params, options = third_party.from_hf_llama(model)
    return params, options, got


def _columns(logits):
    """HF's (1, ℓ, N) logits as the spec's distributions, N×ℓ columns."""
    return torch.softmax(logits, dim=-1)[0].numpy().T


def _run_hf(cls, config, rng):
    """(params, reader options, the spec's inputs, HF's output in the spec's layout) of a random model."""
    if cls == "LlamaConfig":
        x = rng.integers(0, config.vocab_size, size=ELL)
        params, options, got = run_llama(config, x)
        return params, options, {"x": x}, got
    if cls == "GPT2Config":
        model = randomise(transformers.GPT2LMHeadModel(config), SEED)
        x = rng.integers(0, config.vocab_size, size=ELL)
        with torch.no_grad():
            got = _columns(model(torch.tensor(x)[None]).logits)
        params, options = third_party.from_gpt2(model)
        return params, options, {"x": x}, got
    if cls == "BertConfig":
        model = randomise(transformers.BertForMaskedLM(config), SEED)
        x, s = rng.integers(0, config.vocab_size, size=ELL), rng.integers(0, config.type_vocab_size, size=ELL)
        with torch.no_grad():
            got = _columns(model(torch.tensor(x)[None], token_type_ids=torch.tensor(s)[None]).logits)
        params, options = third_party.from_bert(model)
        return params, options, {"x": x, "s": s}, got
    image_model = {"ViTConfig": transformers.ViTForImageClassification,
                   "SwinConfig": transformers.SwinForImageClassification}[cls]
    model = randomise(image_model(config), SEED)
    side = config.image_size
    pixels = rng.normal(size=(1, config.num_channels, side, side))
    with torch.no_grad():
        got = torch.softmax(model(pixel_values=torch.tensor(pixels)).logits[0], -1).numpy()
    image = pixels[0].transpose(1, 2, 0)
    if cls == "SwinConfig":
        params, options = third_party.from_hf_swin(model)
        return params, options, {"X_img": image}, got
    params, options = third_party.from_hf_vit(model)
    # the preset takes flattened patches: the image's, in the order of HF's Conv2d patch embedding
    X_p = algorithms.etransformer.variant(**options).run(X_img=image, **params).values["X_p"]
    options = {k: v for k, v in options.items() if k != "patch_order"} | {"inputs": "patches"}
    return params, options, {"X_p": X_p}, got


def _tolerance(cls, algorithm, want, arguments):
    """float64's 1e-10 relative to max(1, max |output|); HF's Llama normalises in float32 (LlamaRMSNorm casts
    to float32 whatever the model's dtype) and computes its rotation's angles, cos and sin in float32 (its rotary
    module casts the positions and frequencies to float32), so there the bound of a correct float32 computation of
    the stack on this example (:func:`reference.tolerances.allowed`).  Measured: 1.1e-7 (Llama 2), 2.0e-8
    (Llama 3.1) against bounds of 9.5e-6 and 3.1e-5; the attention sublayer alone, its cos and sin evaluated in
    float64, agrees to float64's 1e-10 (tests/models/test_llama_rotary.py)."""
    return tolerances.allowed("float32" if cls == "LlamaConfig" else "float64", algorithm, want, arguments)


@pytest.mark.parametrize("name", fast_few(sorted(published.HF) + sorted(published.GPT3)))
def test_preset_options_compute_what_hf_computes(name):
    """The preset's variant, run by the spec (numpy) and by the torch reference on the HF model's weights,
    equals HF's output; the reader's options are the preset's; and the same weights under ε/10 are told
    apart (the comparison can see a wrong ε)."""
    preset = presets.get(name)
    cls, config = _hf_config_for(name)
    params, options, inputs, got = _run_hf(cls, config, np.random.default_rng(SEED))
    spec = algorithms.get(preset.algorithm).variant(**preset.options)
    want = spec(**inputs, **params)
    allowed = _tolerance(cls, spec, want, {**inputs, **params})
    assert np.max(np.abs(want - got)) <= allowed
    reference = execute(spec, device="cpu", **inputs, **params)
    assert np.max(np.abs(reference - got)) <= allowed
    other = algorithms.get(preset.algorithm).variant(**{**preset.options, "eps": preset.options["eps"] / 10})
    if preset.options["eps"] >= 1e-6:           # BERT's and ViT's 1e-12 is below float64's resolution here
        assert np.max(np.abs(other(**inputs, **params) - got)) > allowed
    if preset.options.get("rope"):              # and the same weights without the rotation, or with θ/10
        for changed in ({k: v for k, v in preset.options.items() if not k.startswith("rope")},
                        {**preset.options, "rope_theta": preset.options["rope_theta"] / 10}):
            moved = algorithms.get(preset.algorithm).variant(**changed)(**inputs, **params)
            assert np.max(np.abs(moved - got)) > allowed
    # what ran is the preset's variant: the tiny config and the reader of its model give the preset's options
    tiny = hf_configs.preset_of(config)
    assert complete(tiny.algorithm, tiny.options) == complete(preset.algorithm, preset.options)
    assert complete(preset.algorithm, options) == complete(preset.algorithm, preset.options)
