"""HF transformers configurations read as the spec's configurations: which algorithm, which options, which sizes.

Each function takes an HF config object (``transformers.GPT2Config(**config_json)``: a field the published
``config.json`` leaves out takes the class default, as HF loads it) and returns a
:class:`~formal.models.presets.Preset` — the registry algorithm, its options, its sizes and the sequence
length costs are quoted at — or a ``ConfigError`` naming a field that has no counterpart in the spec.  The
readers of :mod:`.third_party` take their options from here, so one mapping both reads a module's weights
and says which preset a published configuration is; the tests compare the shipped presets with what these
derive from the published configs.

- :func:`gpt2` — ``GPT2Config`` ↦ Algorithm 10 (``dtransformer``): pre-LN, GELU-tanh (``gelu_new``), learned
  positions, the unembedding tied as ``tie_word_embeddings`` says, ``eps = layer_norm_epsilon``.
- :func:`bert` — ``BertConfig`` ↦ Algorithm 9 (``etransformer``) as the masked-LM model: post-LN, exact
  GELU, token types, an embedding layer norm, the MLM head's output bias.
- :func:`llama` — ``LlamaConfig`` ↦ Algorithm 10 with RMSNorm, SwiGLU, no biases, no position table
  (``position="none"``) and HF's rotation: rotate-half RoPE (``rope="half"``) of base ``rope_theta`` with the
  scaling rule of its rope parameters (:func:`llama_rotation`).
- :func:`vit` — ``ViTConfig`` ↦ Algorithm 9 as ViT on flattened patches (``inputs="patches"``), pre-LN, the
  classifier head on the class token.
- :func:`swin` — ``SwinConfig`` ↦ ``swin``: four stages, heads doubling from stage to stage.
"""

from __future__ import annotations

import math

from formal.errors import ConfigError
from formal.models.presets import Preset

__all__ = ["gpt2", "bert", "llama", "llama_rotation", "vit", "swin", "MAPPINGS", "preset_of"]


def _require(config, field: str, wanted, why: str):
    """A ConfigError unless ``config.field`` is ``wanted``: the spec has no variant for the other value."""
    value = getattr(config, field)
    if value != wanted:
        raise ConfigError(f"{type(config).__name__}.{field} = {value!r}: {why}")


def _name(config) -> str:
    return getattr(config, "name_or_path", "") or type(config).__name__


def gpt2(config) -> Preset:
    """``GPT2Config`` ↦ the ``dtransformer`` preset it is (``d_mlp = n_inner``, or 4·n_embd when it is None)."""
    _require(config, "activation_function", "gelu_new", "only gelu_new (GELU-tanh) is mapped")
    _require(config, "scale_attn_weights", True, "the spec always scales the scores by 1/√d_attn")
    _require(config, "scale_attn_by_inverse_layer_idx", False, "the spec does not scale the scores by layer")
    options = {"position": "learned", "activation": "gelu-tanh", "tied": bool(config.tie_word_embeddings),
               "eps": float(config.layer_norm_epsilon), "norm_position": "pre", "bias": True}
    d_e = config.n_embd
    sizes = {"N_V": config.vocab_size, "ell_max": config.n_positions, "d_e": d_e, "L": config.n_layer,
             "H": config.n_head, "d_mlp": config.n_inner or 4 * d_e}
    return Preset(_name(config), "dtransformer", options, sizes, config.n_positions)


def bert(config) -> Preset:
    """``BertConfig`` ↦ the ``etransformer`` preset of ``BertForMaskedLM``."""
    _require(config, "hidden_act", "gelu", "only gelu (exact) is mapped")
    _require(config, "is_decoder", False, "BERT as a decoder is not Algorithm 9")
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"BertConfig.position_embedding_type = {config.position_embedding_type!r}: only "
                          "absolute (learned) positions are mapped")
    options = {"position": "learned", "activation": "gelu", "tied": bool(config.tie_word_embeddings),
               "eps": float(config.layer_norm_eps), "norm_position": "post", "bias": True, "token_types": True,
               "embedding_norm": True, "unembedding_bias": True}
    sizes = {"N_V": config.vocab_size, "ell_max": config.max_position_embeddings, "n_types": config.type_vocab_size,
             "d_e": config.hidden_size, "L": config.num_hidden_layers, "H": config.num_attention_heads,
             "d_mlp": config.intermediate_size}
    return Preset(_name(config), "etransformer", options, sizes, config.max_position_embeddings)


#: HF's ``rope_type`` ↦ the spec's ``rope_scaling`` (None: the frequencies θ^(−2i/d) as they are).
_ROPE_TYPES = {"default": None, "linear": "linear", "dynamic": "dynamic", "yarn": "yarn", "llama3": "llama3"}


def _rope_parameters(config) -> dict:
    """The config's rope parameters as one flat dict: transformers 5's ``rope_parameters`` (``rope_theta`` and
    ``partial_rotary_factor`` inside it), else the legacy ``rope_scaling`` with the ``rope_theta`` and
    ``partial_rotary_factor`` attributes beside it (transformers 4)."""
    params = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
    for field in ("rope_theta", "partial_rotary_factor"):
        if field not in params and getattr(config, field, None) is not None:
            params[field] = getattr(config, field)
    return params


def _field(config, field: str) -> str:
    """How a message names a rope parameter: ``LlamaConfig.rope_parameters['factor']``."""
    return f"{type(config).__name__}.rope_parameters['{field}']"


def _real(config, field: str, value, least: float | None = None) -> float:
    """A rope parameter as a float (at least ``least``, where given), else a ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{_field(config, field)} = {value!r}: not a finite number")
    if least is not None and value < least:
        raise ConfigError(f"{_field(config, field)} = {value!r}: the spec's scaling factor is ≥ {least:g} (a context "
                          "extended, not shrunk)")
    return float(value)


def _whole(where: str, value) -> int:
    """A context length (named ``where`` in a message) as an int, else a ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise ConfigError(f"{where} = {value!r}: a context length is a whole number ≥ 1")
    return int(value)


def llama_rotation(config) -> dict:
    """The rotary options of a ``LlamaConfig``: ``rope="half"`` (HF's ``rotate_half``), ``rope_theta`` and the
    scaling rule of its rope parameters, read as HF reads them (``modeling_rope_utils``):

    - ``rope_type`` (or the legacy ``type``, which HF also accepts) ``default``, ``linear``, ``dynamic``,
      ``yarn`` or ``llama3`` is ``rope_scaling`` None, linear, dynamic, yarn or llama3; any other (``longrope``,
      ``proportional``, …) is a ConfigError;
    - ``factor`` is ``rope_factor``; ``original_max_position_embeddings`` is ``rope_original`` under yarn and
      llama3 (the config's own attribute of that name first, as HF's rotary module takes it; else the rope
      parameters', else ``max_position_embeddings``), ``low_freq_factor``/``high_freq_factor`` are
      ``rope_low``/``rope_high``, ``beta_fast``/
      ``beta_slow`` are ``rope_beta_fast``/``rope_beta_slow`` (32 and 1 where absent or 0, as HF's ``or``
      gives them);
    - HF's dynamic rule takes ``max_position_embeddings`` as N (it reads no
      ``original_max_position_embeddings``): ``rope_original = max_position_embeddings`` there.  (HF also keeps
      the frequencies of the longest sequence seen until one shorter than N resets them; the spec's are those
      of the sequence at hand.)
    - yarn without ``factor`` takes ``max_position_embeddings / original_max_position_embeddings``, as HF does.

    A field that would make HF compute something the spec's rotation does not is a ConfigError naming it and its
    value: yarn's ``attention_factor`` other than 0.1·ln s + 1, ``mscale`` or ``mscale_all_dim`` (they set
    another attention factor), ``truncate`` false (an untruncated ramp); and ``partial_rotary_factor`` other
    than 1 — HF's ``LlamaForCausalLM`` does not rotate part of a head: its default rule rotates the whole head
    whatever the field says, and under a scaling rule its frequencies no longer fit the head (its forward
    fails), so no ``rope_fraction`` computes what it does."""
    name = type(config).__name__
    params = _rope_parameters(config)
    kind = params.get("rope_type", params.get("type", "default"))
    if kind not in _ROPE_TYPES:
        raise ConfigError(f"{name}.rope_parameters['rope_type'] = {kind!r}: no counterpart in the spec's "
                          f"rotation; known: {', '.join(_ROPE_TYPES)}")
    fraction = params.get("partial_rotary_factor")
    if fraction is not None and fraction != 1:
        raise ConfigError(f"{name}.rope_parameters['partial_rotary_factor'] = {fraction!r}: HF's LlamaForCausalLM "
                          "rotates whole heads (its default rule ignores the field; under a scaling rule its "
                          "frequencies no longer fit the head), so no rope_fraction computes what it does")
    options = {"rope": "half", "rope_theta": _real(config, "rope_theta", params.get("rope_theta", 10000.0))}
    scaling = _ROPE_TYPES[kind]
    if scaling is None:
        return options
    options["rope_scaling"] = scaling
    factor = params.get("factor")
    if scaling == "dynamic":
        options.update(rope_factor=_real(config, "factor", factor, 1),
                       rope_original=_whole(f"{name}.max_position_embeddings", config.max_position_embeddings))
        return options
    if scaling == "linear":
        options["rope_factor"] = _real(config, "factor", factor, 1)
        return options
    if getattr(config, "original_max_position_embeddings", None) is not None:    # HF prefers the config's own
        original = _whole(f"{name}.original_max_position_embeddings", config.original_max_position_embeddings)
    else:
        original = _whole(_field(config, "original_max_position_embeddings"),
                          params.get("original_max_position_embeddings", config.max_position_embeddings))
    if scaling == "llama3":
        options.update(rope_factor=_real(config, "factor", factor, 1), rope_original=original,
                       rope_low=_real(config, "low_freq_factor", params.get("low_freq_factor")),
                       rope_high=_real(config, "high_freq_factor", params.get("high_freq_factor")))
        return options
    if factor is None:                                       # yarn: HF's implicit factor
        factor = config.max_position_embeddings / original
    factor = _real(config, "factor", factor, 1)
    for field in ("mscale", "mscale_all_dim"):
        if params.get(field):
            raise ConfigError(f"{name}.rope_parameters['{field}'] = {params[field]!r}: YaRN's mscale and "
                              "mscale_all_dim set another attention factor (and, in the models that read it, "
                              "another softmax scale); the spec's yarn multiplies the rotated rows by 0.1·ln s + 1")
    attention = params.get("attention_factor")
    implied = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    if attention is not None and not math.isclose(_real(config, "attention_factor", attention), implied,
                                                  rel_tol=1e-12):
        raise ConfigError(f"{name}.rope_parameters['attention_factor'] = {attention!r}: the spec's yarn multiplies "
                          f"the rotated rows by 0.1·ln s + 1 = {implied!r} (s = {factor:g})")
    if not params.get("truncate", True):
        raise ConfigError(f"{name}.rope_parameters['truncate'] = {params['truncate']!r}: the spec's yarn ramp "
                          "rounds its ends to whole pairs (HF's truncate = True)")
    options.update(rope_factor=factor, rope_original=original,
                   rope_beta_fast=_real(config, "beta_fast", params.get("beta_fast") or 32.0),
                   rope_beta_slow=_real(config, "beta_slow", params.get("beta_slow") or 1.0))
    return options


def llama(config) -> Preset:
    """``LlamaConfig`` ↦ the ``dtransformer`` preset (grouped-query attention as ``n_kv_heads`` when
    ``num_key_value_heads`` is not ``num_attention_heads``; a ``head_dim`` other than d_e/H as ``d_attn``; the
    rotation as :func:`llama_rotation` reads it)."""
    _require(config, "hidden_act", "silu", "only silu (SwiGLU's gate) is mapped")
    if config.attention_bias or config.mlp_bias:
        raise ConfigError("LlamaConfig with attention_bias or mlp_bias: the spec's bias option covers both at once")
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    options = {"norm": "rms", "eps": float(config.rms_norm_eps), "position": "none", "activation": "swiglu",
               "bias": False, "tied": bool(config.tie_word_embeddings), "norm_position": "pre",
               **llama_rotation(config)}
    if kv is not None and kv != heads:
        options["n_kv_heads"] = kv
    sizes = {"N_V": config.vocab_size, "d_e": config.hidden_size, "L": config.num_hidden_layers, "H": heads,
             "d_mlp": config.intermediate_size}
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    if head_dim * heads != config.hidden_size:
        sizes.update(d_attn=head_dim, d_mid=head_dim)
    return Preset(_name(config), "dtransformer", options, sizes, config.max_position_embeddings)


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value, value)


def vit(config) -> Preset:
    """``ViTConfig`` ↦ the ``etransformer`` preset of ``ViTForImageClassification`` on flattened patches
    (``num_labels`` classes; a square or rectangular image of whole patches)."""
    _require(config, "hidden_act", "gelu", "only gelu (exact) is mapped")
    _require(config, "qkv_bias", True, "qkv_bias=False keeps biases on W_o and the MLP, which no variant has")
    (rows, cols), (p_h, p_w) = _pair(config.image_size), _pair(config.patch_size)
    if p_h != p_w or rows % p_h or cols % p_w:
        raise ConfigError(f"ViTConfig image_size = {config.image_size}, patch_size = {config.patch_size}: the spec "
                          "takes square patches that tile the image")
    options = {"position": "learned", "activation": "gelu", "eps": float(config.layer_norm_eps),
               "norm_position": "pre", "bias": True, "tied": False, "inputs": "patches", "head": "classifier"}
    n = (rows // p_h) * (cols // p_w)
    sizes = {"d_patch": config.num_channels * p_h * p_w, "ell": n, "n_classes": config.num_labels,
             "d_e": config.hidden_size, "L": config.num_hidden_layers, "H": config.num_attention_heads,
             "d_mlp": config.intermediate_size}
    return Preset(_name(config), "etransformer", options, sizes, n)


def swin(config) -> Preset:
    """``SwinConfig`` ↦ the ``swin`` preset of ``SwinForImageClassification``: stage i has ``H·2^(i−1)`` heads
    of ``embed_dim / num_heads[0]`` each, as the spec's Swin doubles them."""
    _require(config, "hidden_act", "gelu", "only gelu (exact) is mapped")
    _require(config, "qkv_bias", True, "the spec's Swin has query, key and value biases")
    _require(config, "use_absolute_embeddings", False, "the spec's Swin has no absolute position embedding")
    heads, depths = list(config.num_heads), list(config.depths)
    if len(depths) != 4 or any(d % 2 for d in depths):
        raise ConfigError(f"SwinConfig.depths = {depths}: the spec's Swin has four stages of pairs of blocks")
    if heads != [heads[0] * 2 ** i for i in range(4)] or config.embed_dim % heads[0]:
        raise ConfigError(f"SwinConfig.num_heads = {heads}, embed_dim = {config.embed_dim}: the spec's Swin "
                          "doubles the heads from stage to stage, each embed_dim / num_heads[0] wide")
    if config.mlp_ratio != int(config.mlp_ratio):
        raise ConfigError(f"SwinConfig.mlp_ratio = {config.mlp_ratio}: the spec takes a whole number")
    side = config.image_size // config.patch_size
    sizes = {"patch": config.patch_size, "channels": config.num_channels, "height": side, "width": side,
             "swin_window": config.window_size, "n_classes": config.num_labels, "H": heads[0],
             "d_attn": config.embed_dim // heads[0], **{f"L_{i}": d for i, d in enumerate(depths, 1)}}
    options = {"eps": float(config.layer_norm_eps), "mlp_ratio": int(config.mlp_ratio)}
    return Preset(_name(config), "swin", options, sizes, side * side)


#: The mapping of each HF ``model_type`` this module reads.
MAPPINGS = {"gpt2": gpt2, "bert": bert, "llama": llama, "vit": vit, "swin": swin}


def preset_of(config) -> Preset:
    """The preset an HF config is, by its ``model_type``."""
    try:
        mapping = MAPPINGS[config.model_type]
    except KeyError:
        raise ConfigError(f"no mapping for HF model_type {config.model_type!r}; known: "
                          f"{', '.join(MAPPINGS)}") from None
    return mapping(config)
