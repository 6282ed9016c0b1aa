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
- :func:`llama` — ``LlamaConfig`` ↦ Algorithm 10 with RMSNorm, SwiGLU, no biases and
  ``position="none"``: rotary embeddings have no parameters and are not modelled.
- :func:`vit` — ``ViTConfig`` ↦ Algorithm 9 as ViT on flattened patches (``inputs="patches"``), pre-LN, the
  classifier head on the class token.
- :func:`swin` — ``SwinConfig`` ↦ ``swin``: four stages, heads doubling from stage to stage.
"""

from __future__ import annotations

from formal.errors import ConfigError
from formal.models.presets import Preset

__all__ = ["gpt2", "bert", "llama", "vit", "swin", "MAPPINGS", "preset_of"]


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


def llama(config) -> Preset:
    """``LlamaConfig`` ↦ the ``dtransformer`` preset (grouped-query attention as ``n_kv_heads`` when
    ``num_key_value_heads`` is not ``num_attention_heads``; a ``head_dim`` other than d_e/H as ``d_attn``)."""
    _require(config, "hidden_act", "silu", "only silu (SwiGLU's gate) is mapped")
    if config.attention_bias or config.mlp_bias:
        raise ConfigError("LlamaConfig with attention_bias or mlp_bias: the spec's bias option covers both at once")
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    options = {"norm": "rms", "eps": float(config.rms_norm_eps), "position": "none", "activation": "swiglu",
               "bias": False, "tied": bool(config.tie_word_embeddings), "norm_position": "pre"}
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
