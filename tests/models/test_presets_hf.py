"""Every preset field by field against its published configuration: the HF checkpoint's ``config.json``
(written out in :mod:`tests.models.published`) read by :mod:`reference.model.hf_configs` — the mapping the
readers of HF modules use — must give the preset's algorithm, options (completed with the algorithm's declared
defaults, so an option the preset leaves to its default is compared too), sizes and default sequence length.
A preset without an HF model is compared with its paper's table.  Parameter counts cannot do this: with
d_attn = d_e/H a count does not depend on H, nor on eps, the activation or the norm's position."""

import pytest
import transformers

from formal import algorithms
from formal.errors import ConfigError
from formal.models import presets
from reference.model import hf_configs
from tests.models import published


def complete(algorithm: str, options: dict) -> dict:
    """``options`` with every option ``algorithm`` declares: those not given at their declared defaults."""
    return {**algorithms.get(algorithm).option_specs.defaults(), **options}


def hf_config(name: str):
    """The HF config object of preset ``name``'s published checkpoint."""
    return getattr(transformers, published.HF[name][0])(**published.fields_of(name))


def assert_same_preset(preset, derived):
    """The preset equals ``derived`` in algorithm, every option, every size and the default sequence length."""
    assert preset.algorithm == derived.algorithm
    assert complete(preset.algorithm, preset.options) == complete(derived.algorithm, derived.options)
    assert preset.sizes == derived.sizes
    assert preset.seq_len == derived.seq_len


@pytest.mark.parametrize("name", sorted(published.HF))
def test_preset_is_its_published_hf_config(name):
    """Heads, eps, activation, context, tying, norm and its position, vocabulary, MLP width, depth, width,
    patch, window and biases of the preset equal those of the published config.json."""
    assert_same_preset(presets.get(name), hf_configs.preset_of(hf_config(name)))


def _differs(preset, derived) -> bool:
    """Whether :func:`assert_same_preset` fails."""
    try:
        assert_same_preset(preset, derived)
    except AssertionError:
        return True
    return False


@pytest.mark.parametrize("name, field, value", [
    ("llama-2-7b", "rope_theta", 500000.0),
    ("llama-3.1-8b", "rope_theta", 10000.0),
    ("llama-3.1-8b", "rope_scaling", {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    ("llama-3.1-70b", "rope_scaling", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 2.0, "original_max_position_embeddings": 8192}),
    ("llama-3.1-405b", "rope_scaling", None),
    ("llama-3.1-405b", "num_key_value_heads", 16),
    ("llama-3.2-3b", "head_dim", 96),
    ("llama-3.2-1b", "tie_word_embeddings", False),
    ("llama-3.2-1b", "max_position_embeddings", 8192),
])
def test_a_planted_field_fails_the_field_by_field_comparison(name, field, value):
    """One field of the published config changed (θ, the llama3 factor or band, no scaling, the key/value heads,
    head_dim, tying, the context): the preset no longer equals what the mapping derives — the check above can
    see each of them."""
    fields = {**published.fields_of(name), field: value}
    assert _differs(presets.get(name), hf_configs.preset_of(getattr(transformers, published.HF[name][0])(**fields)))


#: The HF model class of each config class: what a preset's count is checked against.
HF_MODELS = {"GPT2Config": "GPT2LMHeadModel", "BertConfig": "BertForMaskedLM", "LlamaConfig": "LlamaForCausalLM",
             "ViTConfig": "ViTForImageClassification", "SwinConfig": "SwinForImageClassification"}


def hf_count(config) -> int:
    """The parameters of the HF model of ``config`` built on the meta device (no memory, nothing downloaded):
    ``sum(p.numel())`` over its parameters, a tied matrix counted once."""
    import torch
    with torch.device("meta"):
        model = getattr(transformers, HF_MODELS[type(config).__name__])(config)
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


@pytest.mark.parametrize("name", sorted(published.HF))
def test_preset_parameters_equal_the_hf_model_of_its_published_config(name):
    """The preset's derived parameter count equals HF's model built from the published config.json exactly —
    the Llama 3.1 and 3.2 presets (grouped-query attention, 3.2's tied embeddings) among them."""
    assert presets.get(name).evaluate()["params"] == hf_count(hf_config(name))


def test_the_count_check_can_fail():
    """Untying Llama 3.2 1B's unembedding adds its 128256 × 2048 matrix to HF's count, and a fourth of the
    key/value heads takes 3/4 of W_k and W_v off every layer: the counts above would see either."""
    untied = transformers.LlamaConfig(**{**published.fields_of("llama-3.2-1b"), "tie_word_embeddings": False})
    assert hf_count(untied) - presets.get("llama-3.2-1b").evaluate()["params"] == 128256 * 2048
    fewer = transformers.LlamaConfig(**{**published.fields_of("llama-3.1-8b"), "num_key_value_heads": 2})
    assert presets.get("llama-3.1-8b").evaluate()["params"] - hf_count(fewer) == 32 * 2 * 4096 * (8 - 2) * 128


@pytest.mark.parametrize("name", sorted(published.CLASS_DEFAULTS))
def test_published_configs_agree_with_hf_class_defaults(name):
    """HF's config classes default to these checkpoints: the transcription of their config.json and the
    class's defaults (but for the fields ``CLASS_DEFAULTS`` names, given) map to the same preset."""
    cls, fields = published.HF[name][0], published.fields_of(name)
    defaults = getattr(transformers, cls)(**{k: fields[k] for k in published.CLASS_DEFAULTS[name]})
    assert_same_preset(hf_configs.preset_of(defaults), hf_configs.preset_of(hf_config(name)))


def test_presets_with_an_hf_model_are_all_checked():
    """Every preset on an algorithm HF models is in the published table, or is GPT-3 (GPT-2's architecture
    without an HF checkpoint, checked below against its paper)."""
    hf_algorithms = {"dtransformer", "etransformer", "swin"}
    unchecked = [n for n, p in presets.PRESETS.items() if p.algorithm in hf_algorithms and n not in published.HF
                 and n not in published.GPT3]
    assert not unchecked


@pytest.mark.parametrize("name", sorted(published.GPT3))
def test_gpt3_preset_is_its_paper_table_on_gpt2s_architecture(name):
    """GPT-3 (Brown et al. 2020, §2.1: "the same model and architecture as GPT-2") has no HF model: its
    options are what the GPT-2 mapping derives from GPT-2's published config, its sizes Table 2.1's row —
    d_attn = d_mid = d_head as the table lists it (its 13B row's d_model = 5140 ≠ 40·128 is the table's)."""
    layers, d_model, heads, d_head = published.GPT3[name]
    derived = hf_configs.gpt2(hf_config("gpt2"))
    preset = presets.get(name)
    assert preset.algorithm == derived.algorithm
    assert complete(preset.algorithm, preset.options) == complete(derived.algorithm, derived.options)
    assert preset.sizes == {"N_V": published.GPT3_VOCABULARY, "ell_max": published.GPT3_CONTEXT, "d_e": d_model,
                            "L": layers, "H": heads, "d_attn": d_head, "d_mid": d_head, "d_mlp": 4 * d_model}
    assert preset.seq_len == published.GPT3_CONTEXT


def test_transformer_base_preset_is_vaswanis_table_3():
    """The base Transformer (Vaswani et al. 2017): Table 3's sizes; §3.1's post-LN sublayers
    LayerNorm(x + Sublayer(x)); §3.3's ReLU MLP with biases; §3.4's one embedding matrix shared by both
    stacks and the pre-softmax projection; §3.5's sinusoids from position 0.  The paper gives no layer-norm
    ε: the preset's 1e-6 is the default of its authors' tensor2tensor."""
    t = published.TRANSFORMER_BASE
    p = presets.get("transformer-base")
    assert p.algorithm == "edtransformer"
    assert complete(p.algorithm, p.options) == complete("edtransformer", {
        "norm": "layer", "position": "sinusoidal-vaswani", "activation": "relu", "bias": True, "tied": True,
        "norm_position": "post", "n_kv_heads": None, "eps": 1e-6})
    resolved = p.binding()
    assert {k: resolved[k] for k in ("L_enc", "L_dec", "d_e", "d_mlp", "H", "d_attn", "d_mid", "N_V")} == {
        "L_enc": t["N"], "L_dec": t["N"], "d_e": t["d_model"], "d_mlp": t["d_ff"], "H": t["h"], "d_attn": t["d_k"],
        "d_mid": t["d_v"], "N_V": t["vocabulary"]}


def test_show_attend_tell_preset_is_the_authors_coco_script():
    """Show, Attend and Tell (Xu et al. 2015, §3.1.2 and §4.3) at the authors' MS COCO script's sizes
    (arctic-captions' evaluate_coco.py: dim_word = 512, ctx_dim = 512, dim = 1800, n_words = 10000, on VGG's
    14×14 conv5_4 grid): soft attention over the grid, the gate β (§4.2.1) and the paper's one bias per affine
    map."""
    p = presets.get("show-attend-tell-coco")
    assert complete(p.algorithm, p.options) == complete("show_attend_tell",
                                                        {"inputs": "grid", "gate": True, "bias": "single"})
    assert p.sizes == {"height": 14, "width": 14, "d_z": 512, "d_e": 512, "d_h": 1800, "d_a": 512, "N_V": 10000}


@pytest.mark.parametrize("cls, fields, message", [
    ("GPT2Config", {"activation_function": "relu"}, "activation_function = 'relu'"),
    ("GPT2Config", {"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx = True"),
    ("BertConfig", {"position_embedding_type": "relative_key"}, "position_embedding_type = 'relative_key'"),
    ("LlamaConfig", {"attention_bias": True}, "attention_bias"),
    ("LlamaConfig", {"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": [2.0] * 64,
                                      "original_max_position_embeddings": 4096}}, r"\['rope_type'\] = 'longrope'"),
    ("LlamaConfig", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096,
                                      "attention_factor": 1.0}}, r"\['attention_factor'\] = 1.0"),
    ("LlamaConfig", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096,
                                      "mscale": 1.0, "mscale_all_dim": 0.5}}, r"\['mscale'\] = 1.0"),
    ("LlamaConfig", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096,
                                      "truncate": False}}, r"\['truncate'\] = False"),
    ("LlamaConfig", {"partial_rotary_factor": 0.5}, r"\['partial_rotary_factor'\] = 0.5"),
    ("ViTConfig", {"qkv_bias": False}, "qkv_bias = False"),
    ("SwinConfig", {"num_heads": [3, 6, 12, 12]}, r"num_heads = \[3, 6, 12, 12\]"),
    ("SwinConfig", {"use_absolute_embeddings": True}, "use_absolute_embeddings = True")])
def test_a_config_the_spec_cannot_express_is_refused_by_name(cls, fields, message):
    """A published field the spec has no variant for is a ConfigError naming it and its value, never a
    preset that silently computes something else."""
    with pytest.raises(ConfigError, match=message):
        hf_configs.preset_of(getattr(transformers, cls)(**fields))
