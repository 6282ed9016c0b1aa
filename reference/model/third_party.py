"""Implementations nobody here wrote, read into the spec's names: weights and the variant that explains them.

Each reader takes a built module (random weights are fine: nothing is downloaded) and returns
``(params, options)``: the module's weights as numpy float64 arrays under the spec's canonical names, in the
spec's orientation, and the options of the spec's algorithm that say where the module departs from the
paper (the HF readers take them from :mod:`.hf_configs`, the mapping of a config to a preset).
``algorithm.variant(**options)(**inputs, **params)`` must then equal what the module computes —
``tests/reference/test_third_party.py`` and ``formal-transformers verify`` check that it does.

- :func:`from_multihead_attention` — ``torch.nn.MultiheadAttention`` is Algorithm 5 (``mhattention``) with
  ``d_attn = d_mid = d_e / H``; asked for its attention weights (``need_weights=True``) it gives NaN for a
  query no key may see: the spec's ``empty="nan"``; without them (the fast path) zeros: ``empty="zero"``.
- :func:`from_transformer_encoder` — a stack of ``torch.nn.TransformerEncoderLayer`` is the layer loop of
  Algorithm 9: ``norm_first`` is ``norm_position``, ``activation`` and ``layer_norm_eps`` are
  ``activation`` and ``eps``, ``bias`` is ``bias``.
- :func:`from_gpt2` — HF ``GPT2LMHeadModel`` is Algorithm 10 with GELU-tanh (``gelu_new``), the
  unembedding tied to ``W_e`` and ``eps = layer_norm_epsilon``.
- :func:`from_bert` — HF ``BertForMaskedLM`` is Algorithm 9 with token types, a layer norm after the
  embedding, the MLM head's output bias, the unembedding tied to ``W_e`` and ``eps = layer_norm_eps``.
- :func:`from_hf_llama` — HF ``LlamaForCausalLM`` is Algorithm 10 with RMSNorm, SwiGLU, no biases,
  ``eps = rms_norm_eps`` and its rotary position embedding: rotate-half RoPE (``rope="half"``) of base
  ``rope_theta`` with its scaling rule (:func:`.hf_configs.llama_rotation`).
- :func:`from_hf_vit` — HF ``ViTForImageClassification`` is Algorithm 9 as ViT from the image
  (``inputs="image"``, pre-LN, the classifier head): its patch embedding is a Conv2d of kernel and stride P,
  whose weight (d_e, C, P, P) flattened is ``W_patch`` in the ``channel-first`` patch order.
- :func:`from_torch_paged` — torch's ``PagedAttention`` (``torch.nn.attention.experimental``, a private API)
  keeps one cache (1, H, n_pages·page_size, d) whose page p is the slots p·B … (p + 1)·B − 1, and a page
  table per batch row: read as the pool (n_pages, H, d, B) and the sequence's block table of
  ``paged_mhattention``.
- :func:`from_torch_rnn` — ``torch.nn.RNN``, ``GRU`` and ``LSTM`` (any ``num_layers``, bidirectional or not)
  are the spec's ``rnn`` stack with two bias vectors per gate (``bias="double"``), and the GRU resets after
  the recurrent product (``reset="after"``, cuDNN's form); ``RNNCell``, ``GRUCell`` and ``LSTMCell`` are
  ``rnn_cell``, ``gru_cell`` and ``lstm_cell``.  Their gates are packed in the rows of ``weight_ih`` in the
  order (i, f, g, o) and (r, z, n).
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError

from .. import require_torch
from . import hf_configs
from .convert import to_numpy

__all__ = ["from_multihead_attention", "from_transformer_encoder", "from_gpt2", "from_bert", "from_hf_llama",
           "from_hf_vit", "from_hf_swin_block", "from_hf_swin", "from_torch_paged", "from_torch_rnn"]

torch = require_torch()


def _heads(weight, H):
    """A (H·d_head, d_in) projection whose rows are grouped by head ↦ the spec's (H, d_head, d_in)."""
    return weight.reshape(H, weight.shape[0] // H, weight.shape[1])


def _stack(per_layer: list) -> dict:
    """One dict of arrays per layer ↦ one dict of arrays stacked on a leading layer axis."""
    return {name: np.stack([layer[name] for layer in per_layer]) for name in per_layer[0]}


def _attention(H, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None) -> dict:
    """Algorithm 5's parameters from row-major (out, in) projections whose rows are grouped by head; the
    columns of W_o are the stacked heads [Y¹; …; Yᴴ], as the spec stacks them."""
    p = {"W_q": _heads(W_q, H), "W_k": _heads(W_k, H), "W_v": _heads(W_v, H), "W_o": W_o}
    if b_q is not None:
        p.update(b_q=b_q.reshape(H, -1), b_k=b_k.reshape(H, -1), b_v=b_v.reshape(H, -1), b_o=b_o)
    return p


def from_multihead_attention(mha, *, need_weights: bool = True) -> tuple[dict, dict]:
    """``torch.nn.MultiheadAttention`` ↦ (Algorithm 5's parameters, options).

    The module may be batch-first or not; its keys and values may have their own sizes
    (``kdim``, ``vdim``), but its value head size is its query head size, as torch builds it.
    """
    if mha.bias_k is not None or mha.add_zero_attn:
        raise ConfigError("MultiheadAttention with add_bias_kv or add_zero_attn has no counterpart in Algorithm 5")
    H, E = mha.num_heads, mha.embed_dim
    if mha._qkv_same_embed_dim:
        W_q, W_k, W_v = to_numpy(mha.in_proj_weight).reshape(3, E, E)
    else:
        W_q, W_k, W_v = (to_numpy(w) for w in (mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight))
    biases = {}
    if mha.in_proj_bias is not None:
        b_q, b_k, b_v = to_numpy(mha.in_proj_bias).reshape(3, E)
        biases = dict(b_q=b_q, b_k=b_k, b_v=b_v, b_o=to_numpy(mha.out_proj.bias))
    params = _attention(H, W_q, W_k, W_v, to_numpy(mha.out_proj.weight), **biases)
    return params, {"bias": mha.in_proj_bias is not None, "empty": "nan" if need_weights else "zero"}


_ACTIVATIONS = {"relu": "relu", "gelu": "gelu"}


def _encoder_layer(layer) -> dict:
    attn, E = layer.self_attn, layer.self_attn.embed_dim
    biased = attn.in_proj_bias is not None
    biases = (*to_numpy(attn.in_proj_bias).reshape(3, E), to_numpy(attn.out_proj.bias)) if biased else ()
    params = _attention(attn.num_heads, *to_numpy(attn.in_proj_weight).reshape(3, E, E),
                        to_numpy(attn.out_proj.weight), *biases)
    params.update(W_mlp1=to_numpy(layer.linear1.weight), W_mlp2=to_numpy(layer.linear2.weight),
                  gamma1=to_numpy(layer.norm1.weight), beta1=to_numpy(layer.norm1.bias),
                  gamma2=to_numpy(layer.norm2.weight), beta2=to_numpy(layer.norm2.bias))
    if biased:
        params.update(b_mlp1=to_numpy(layer.linear1.bias), b_mlp2=to_numpy(layer.linear2.bias))
    return params


def from_transformer_encoder(layers) -> tuple[dict, dict]:
    """A sequence of ``torch.nn.TransformerEncoderLayer`` ↦ (the per-layer parameters of Algorithm 9's
    layer loop, stacked on a leading layer axis; options).  Every layer must be built alike."""
    layers = list(layers)
    first = layers[0]
    name = getattr(first.activation, "__name__", type(first.activation).__name__).lower()
    if name not in _ACTIVATIONS:
        raise ConfigError(f"TransformerEncoderLayer activation {name!r} has no counterpart; known: relu, gelu")
    if first.norm1.bias is None:
        raise ConfigError("TransformerEncoderLayer(bias=False) drops the layer norms' β too, which Algorithm 6 "
                          "always has")
    options = {"activation": _ACTIVATIONS[name], "norm_position": "pre" if first.norm_first else "post",
               "eps": float(first.norm1.eps), "bias": first.self_attn.in_proj_bias is not None}
    return _stack([_encoder_layer(layer) for layer in layers]), options


def from_gpt2(model) -> tuple[dict, dict]:
    """HF ``GPT2LMHeadModel`` ↦ (Algorithm 10's parameters, options).  GPT-2's ``Conv1D`` stores its
    weights as (in, out); the spec's are (out, in)."""
    config, t = model.config, model.transformer
    options = hf_configs.gpt2(config).options
    H, E = config.n_head, config.n_embd
    per_layer = []
    for block in t.h:
        W = to_numpy(block.attn.c_attn.weight).T.reshape(3, E, E)           # (q|k|v, out, in)
        b = to_numpy(block.attn.c_attn.bias).reshape(3, E)
        p = _attention(H, *W, to_numpy(block.attn.c_proj.weight).T, *b, to_numpy(block.attn.c_proj.bias))
        p.update(W_mlp1=to_numpy(block.mlp.c_fc.weight).T, b_mlp1=to_numpy(block.mlp.c_fc.bias),
                 W_mlp2=to_numpy(block.mlp.c_proj.weight).T, b_mlp2=to_numpy(block.mlp.c_proj.bias),
                 gamma1=to_numpy(block.ln_1.weight), beta1=to_numpy(block.ln_1.bias),
                 gamma2=to_numpy(block.ln_2.weight), beta2=to_numpy(block.ln_2.bias))
        per_layer.append(p)
    params = {"W_e": to_numpy(t.wte.weight).T, "W_p": to_numpy(t.wpe.weight).T, **_stack(per_layer),
              "gamma": to_numpy(t.ln_f.weight), "beta": to_numpy(t.ln_f.bias)}
    tied = model.lm_head.weight is t.wte.weight
    if not tied:
        params["W_u"] = to_numpy(model.lm_head.weight)
    return params, {**options, "tied": tied}


def from_bert(model) -> tuple[dict, dict]:
    """HF ``BertForMaskedLM`` ↦ (Algorithm 9's parameters, options)."""
    config, bert, head = model.config, model.bert, model.cls.predictions
    options = hf_configs.bert(config).options
    H, emb = config.num_attention_heads, bert.embeddings
    per_layer = []
    for block in bert.encoder.layer:
        a = block.attention
        p = _attention(H, *(to_numpy(getattr(a.self, n).weight) for n in ("query", "key", "value")),
                       to_numpy(a.output.dense.weight),
                       *(to_numpy(getattr(a.self, n).bias) for n in ("query", "key", "value")),
                       to_numpy(a.output.dense.bias))
        p.update(gamma1=to_numpy(a.output.LayerNorm.weight), beta1=to_numpy(a.output.LayerNorm.bias),
                 W_mlp1=to_numpy(block.intermediate.dense.weight), b_mlp1=to_numpy(block.intermediate.dense.bias),
                 W_mlp2=to_numpy(block.output.dense.weight), b_mlp2=to_numpy(block.output.dense.bias),
                 gamma2=to_numpy(block.output.LayerNorm.weight), beta2=to_numpy(block.output.LayerNorm.bias))
        per_layer.append(p)
    params = {"W_e": to_numpy(emb.word_embeddings.weight).T, "W_p": to_numpy(emb.position_embeddings.weight).T,
              "W_s": to_numpy(emb.token_type_embeddings.weight).T, "gamma_e": to_numpy(emb.LayerNorm.weight),
              "beta_e": to_numpy(emb.LayerNorm.bias), **_stack(per_layer),
              "W_f": to_numpy(head.transform.dense.weight), "b_f": to_numpy(head.transform.dense.bias),
              "gamma_f": to_numpy(head.transform.LayerNorm.weight), "beta_f": to_numpy(head.transform.LayerNorm.bias),
              "b_u": to_numpy(head.bias)}
    tied = head.decoder.weight is emb.word_embeddings.weight
    if not tied:
        params["W_u"] = to_numpy(head.decoder.weight)
    return params, {**options, "tied": tied}


def from_hf_llama(model) -> tuple[dict, dict]:
    """HF ``LlamaForCausalLM`` ↦ (Algorithm 10's parameters, options): RMSNorm (γ only), SwiGLU
    (``down(SiLU(gate x) ⊙ up x)``: ``W_gate``, ``W_mlp1``, ``W_mlp2``), no biases, no position table
    (``position="none"``) and the module's rotation, which has no parameters: its options (``rope="half"``,
    ``rope_theta``, the scaling rule) are :func:`.hf_configs.llama`'s, read from ``model.config``.  The rows of
    ``q_proj``/``k_proj`` are HF's rotate-half layout (row i pairs with row i + d/2 of its head), the spec's
    ``rope="half"``: they are read as they are, with no permutation.

    HF computes the rotation's frequencies (``inv_freq``) and angles in float32 whatever the model's dtype (as
    its RMSNorm normalises in float32), so a float64 model agrees with the spec to float32's precision there."""
    config, inner = model.config, model.model
    options = hf_configs.llama(config).options
    H, kv = config.num_attention_heads, options.get("n_kv_heads", config.num_attention_heads)
    per_layer = []
    for block in inner.layers:
        a, m = block.self_attn, block.mlp
        per_layer.append({"W_q": _heads(to_numpy(a.q_proj.weight), H), "W_k": _heads(to_numpy(a.k_proj.weight), kv),
                          "W_v": _heads(to_numpy(a.v_proj.weight), kv), "W_o": to_numpy(a.o_proj.weight),
                          "W_mlp1": to_numpy(m.up_proj.weight), "W_gate": to_numpy(m.gate_proj.weight),
                          "W_mlp2": to_numpy(m.down_proj.weight), "gamma1": to_numpy(block.input_layernorm.weight),
                          "gamma2": to_numpy(block.post_attention_layernorm.weight)})
    params = {"W_e": to_numpy(inner.embed_tokens.weight).T, **_stack(per_layer), "gamma": to_numpy(inner.norm.weight)}
    tied = model.lm_head.weight is inner.embed_tokens.weight
    if not tied:
        params["W_u"] = to_numpy(model.lm_head.weight)
    return params, {**options, "tied": tied}


def _norm(name, ln) -> dict:
    return {f"gamma{name}": to_numpy(ln.weight), f"beta{name}": to_numpy(ln.bias)}


def from_hf_vit(model) -> tuple[dict, dict]:
    """HF ``ViTForImageClassification`` (transformers 5's layout: ``vit.layers[l].attention.q_proj`` …,
    ``mlp.fc1``/``fc2``) ↦ (Algorithm 9's parameters as ViT from the image, options).  Its input is
    ``pixel_values`` (B, C, H, W); the spec's image is one of them channel-last, (H, W, C)."""
    config, vit = model.config, model.vit
    options = {**hf_configs.vit(config).options, "inputs": "image", "patch_order": "channel-first"}
    H, emb, per_layer = config.num_attention_heads, vit.embeddings, []
    for block in vit.layers:
        a = block.attention
        p = _attention(H, *(to_numpy(getattr(a, f"{n}_proj").weight) for n in "qkvo"),
                       *(to_numpy(getattr(a, f"{n}_proj").bias) for n in "qkvo"))
        p.update(W_mlp1=to_numpy(block.mlp.fc1.weight), b_mlp1=to_numpy(block.mlp.fc1.bias),
                 W_mlp2=to_numpy(block.mlp.fc2.weight), b_mlp2=to_numpy(block.mlp.fc2.bias),
                 **_norm("1", block.layernorm_before), **_norm("2", block.layernorm_after))
        per_layer.append(p)
    conv = emb.patch_embeddings.projection                                  # Conv2d(C, d_e, P, stride=P)
    params = {"W_patch": to_numpy(conv.weight).reshape(conv.weight.shape[0], -1), "b_patch": to_numpy(conv.bias),
              "x_class": to_numpy(emb.cls_token)[0].T, "W_p": to_numpy(emb.position_embeddings)[0].T,
              **_stack(per_layer), **_norm("", vit.layernorm),
              "W_head": to_numpy(model.classifier.weight), "b_head": to_numpy(model.classifier.bias)}
    return params, options


def from_hf_swin_block(block) -> tuple[dict, dict]:
    """One HF ``SwinLayer`` (transformers 5's layout: ``attention.q_proj`` …, ``attention.relative_position_bias``
    with its ((2M−1)², H) table, ``layernorm_before``/``after``, ``mlp.fc1``/``fc2``) ↦ (``swin_block``'s
    parameters, options).  HF's block takes (B, n_h·n_w, C) tokens row-major; the spec's input is one of them
    as the n_h×n_w×C grid.  ``shifted`` is the block's own: HF shifts by ``shift_size`` (0 or ⌊M/2⌋)."""
    a = block.attention
    H = a.num_attention_heads
    table = to_numpy(a.relative_position_bias.relative_position_bias_table)           # ((2M−1)², H)
    side = int(round(table.shape[0] ** 0.5))
    p = _attention(H, *(to_numpy(getattr(a, f"{n}_proj").weight) for n in "qkvo"),
                   *(to_numpy(getattr(a, f"{n}_proj").bias) for n in "qkvo"))
    p.update(B_hat=table.T.reshape(H, side, side),
             W_mlp1=to_numpy(block.mlp.fc1.weight), b_mlp1=to_numpy(block.mlp.fc1.bias),
             W_mlp2=to_numpy(block.mlp.fc2.weight), b_mlp2=to_numpy(block.mlp.fc2.bias),
             **_norm("1", block.layernorm_before), **_norm("2", block.layernorm_after))
    eps = float(block.layernorm_before.eps)
    if block.layernorm_after.eps != eps:
        raise ConfigError(f"the block's two layer norms have different eps ({eps}, {block.layernorm_after.eps})")
    return p, {"shifted": bool(block.shift_size), "eps": eps}


def from_hf_swin(model) -> tuple[dict, dict]:
    """HF ``SwinForImageClassification`` ↦ (``swin``'s parameters, options).  Its input is ``pixel_values``
    (B, C, H, W); the spec's image is one of them channel-last, (H, W, C).  Stage i's blocks alternate
    regular and shifted (HF's ``shift_size`` of a block whose grid is one window is 0, as the spec's σ)."""
    config, swin = model.config, model.swin
    options = hf_configs.swin(config).options
    conv, emb = swin.embeddings.patch_embeddings.projection, swin.embeddings
    params = {"W_patch": to_numpy(conv.weight).reshape(conv.weight.shape[0], -1), "b_patch": to_numpy(conv.bias),
              "gamma_e": to_numpy(emb.norm.weight), "beta_e": to_numpy(emb.norm.bias)}
    for i, stage in enumerate(swin.encoder.layers, 1):
        blocks = [from_hf_swin_block(b)[0] for b in stage.blocks]
        for half, chosen in (("", blocks[0::2]), ("sw_", blocks[1::2])):
            params.update({f"s{i}_{half}{name}": value for name, value in _stack(chosen).items()})
        if stage.downsample is not None:
            merge = stage.downsample
            params.update({f"s{i}_W_m": to_numpy(merge.reduction.weight), f"s{i}_gamma_m": to_numpy(merge.norm.weight),
                           f"s{i}_beta_m": to_numpy(merge.norm.bias)})
    params.update(**_norm("", swin.layernorm), W_head=to_numpy(model.classifier.weight),
                  b_head=to_numpy(model.classifier.bias))
    return params, options


def from_torch_paged(paged, k_cache, v_cache, batch_idx: int, length: int) -> dict:
    """torch's ``PagedAttention`` and its caches (1, H, n_pages·B, d) ↦ ``paged_mhattention``'s arguments for
    the sequence in batch row ``batch_idx`` holding ``length`` tokens: ``K_pool``, ``V_pool``
    (n_pages×H×d×B), ``table`` (its ⌈length/B⌉ pages) and ``ell_c``."""
    B, n = paged.page_size, paged.n_pages

    def pool(cache):
        _, H, _, d = cache.shape
        return to_numpy(cache[0].reshape(H, n, B, d).permute(1, 0, 3, 2))
    blocks = -(-length // B)
    table = to_numpy(paged.page_table[batch_idx, :blocks]).astype(int)
    if (table < 0).any():
        raise ConfigError(f"batch row {batch_idx} has {int((table >= 0).sum())} pages reserved, fewer than the "
                          f"{blocks} its {length} tokens need")
    return {"K_pool": pool(k_cache), "V_pool": pool(v_cache), "table": table, "ell_c": length}


def _gates(module, kind: str, layer: str) -> dict:
    """The packed ``weight_ih<layer>`` … of a torch recurrent module ↦ the spec's per-gate names (no suffix)."""
    from formal.algorithms.recurrent import GATES
    gates = GATES[kind]
    split = {name: to_numpy(getattr(module, f"{name}{layer}")).reshape((len(gates), -1) + tuple(
        getattr(module, f"{name}{layer}").shape[1:])) for name in ("weight_ih", "weight_hh")}
    params = {}
    for i, g in enumerate(gates):
        params[f"W_x{g}"], params[f"W_h{g}"] = split["weight_ih"][i], split["weight_hh"][i]
        if module.bias:
            params[f"b_x{g}"] = to_numpy(getattr(module, f"bias_ih{layer}")).reshape(len(gates), -1)[i]
            params[f"b_h{g}"] = to_numpy(getattr(module, f"bias_hh{layer}")).reshape(len(gates), -1)[i]
    return params


def _rnn_kind(module) -> tuple[str, dict]:
    name = type(module).__name__
    kinds = {"RNN": "rnn", "GRU": "gru", "LSTM": "lstm", "RNNCell": "rnn", "GRUCell": "gru", "LSTMCell": "lstm"}
    if name not in kinds:
        raise ConfigError(f"{name} is not a torch recurrent module; known: {', '.join(kinds)}")
    kind = kinds[name]
    options = {"bias": "double" if module.bias else "none"}
    if kind == "rnn":
        options["nonlinearity"] = module.nonlinearity
    if kind == "gru":
        options.update(reset="after", update="cho")
    return kind, options


def from_torch_rnn(module) -> tuple[dict, dict]:
    """``torch.nn.RNN/GRU/LSTM`` ↦ (the ``rnn`` stack's parameters, options); ``RNNCell/GRUCell/LSTMCell`` ↦
    (the cell's parameters, options).  A stack's layer 1 carries the suffix ``_1`` and layers 2…L are stacked
    under ``_l``; the backward direction adds ``_back``.  ``proj_size`` (an LSTM with projections) has no
    counterpart in the spec."""
    kind, options = _rnn_kind(module)
    if type(module).__name__.endswith("Cell"):
        return _gates(module, kind, ""), options
    if getattr(module, "proj_size", 0):
        raise ConfigError(f"LSTM(proj_size={module.proj_size}) has no counterpart in the spec's LSTM stack")
    directions = ("", "_back") if module.bidirectional else ("",)
    per_layer = []
    for layer in range(module.num_layers):
        merged = {}
        for suffix in directions:
            torch_suffix = f"_l{layer}" + ("_reverse" if suffix else "")
            merged.update({f"{k}{suffix}": v for k, v in _gates(module, kind, torch_suffix).items()})
        per_layer.append(merged)
    params = {f"{k}_1": v for k, v in per_layer[0].items()}
    if module.num_layers > 1:
        params.update({f"{k}_l": v for k, v in _stack(per_layer[1:]).items()})
    else:  # no layer above the first: the stacked parameters are empty, (0, …) of the upper layers' shapes
        width = module.hidden_size * len(directions)
        for k, v in per_layer[0].items():
            shape = (width,) if k.startswith("W_x") else ()
            params[f"{k}_l"] = np.zeros((0,) + v.shape[:1] + (shape or v.shape[1:]))
    options.update(cell=kind, direction="bidirectional" if module.bidirectional else "forward")
    for name, default in (("nonlinearity", "tanh"), ("reset", "before"), ("update", "cho")):
        options.setdefault(name, default)
    return params, options
