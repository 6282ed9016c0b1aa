"""Name-only adapters for ``conform``: the spec's arrays handed, by name and nothing else, to Llama code that knows
nothing of the spec — the Meta-style code of :mod:`.meta_llama` (its rotation interleaved: rows 2i and 2i + 1 as
one complex number) and HF transformers' ``LlamaAttention`` and ``LlamaForCausalLM`` (rotate-half), each built
here, offline, from its own config.  Every function takes the spec's keyword arguments in the rows layout
(``conform --layout rows``: a token per row, the mask query × key, a cache head × token × width).

What an adapter does, and all it does:

- it builds the module from the sizes the arrays have (``dim``, ``n_heads``, ``n_kv_heads`` from W_k's heads,
  the SwiGLU width from W_mlp1's rows — for Meta's code through its own rule, ``multiple_of`` and
  ``ffn_dim_multiplier`` set to give that width) and a rotary base of its own (:data:`META_THETA`,
  :data:`HF_THETA`): the code's, not an option of the spec;
- it loads each parameter under its name in the code: ``W_q`` (H×d_head×d) reshaped to ``wq.weight``
  (H·d_head×d), the rows of head h in block h, as the code's ``view(…, n_heads, head_dim)`` reads them — no row
  is reordered, so the pairing of the rotated rows is the code's own, for ``conform`` to find;
- it turns the spec's 0/1 mask into the code's additive one (Meta's ``-inf``, HF's ``finfo.min``), and calls the
  module.  Both modules are self-attention with a key/value cache; a context Z other than X reaches them as
  their cache does when they decode: a first call on Z writes its rotated keys and values to the cache
  (positions 0 … ℓ_z − 1), and X's queries (positions 0 … ℓ_x − 1) read them, X's own keys (written after
  them) left out by ``-inf``.  The cached functions (``meta_kv_attention``, ``meta_kv_transformer``) write the
  spec's cache K_c, V_c into the module's ``cache_k``, ``cache_v`` and run the new tokens at ``start_pos`` = ℓ_c,
  as Meta's decoding loop does.

So the code's sizes are tied as it ties them (``--size``: :data:`META_TIES`, :data:`HF_TIES` …); its empty-query
policy is what its fill makes (``-inf``: NaN, ``empty=nan``; ``finfo.min``: the mean of every value,
``empty=uniform``).  HF's Llama computes its rotary table, norms and softmax in float32 whatever the weights'
dtype, so it is run in float32 and checked with ``--precision float32``; the Meta-style code runs in float64.
"""

import numpy as np
import torch

try:
    from . import meta_llama
except ImportError:   # loaded by path (conform's path/to/file.py:function): its neighbour is on sys.path
    import meta_llama

#: The rotary base the Meta-style models are built with: Llama 3's ``rope_theta``.
META_THETA = 500000.0
#: The RMSNorm eps the Meta-style transformer is built with (``ModelArgs.norm_eps``'s default).
META_EPS = 1e-5
#: The rotary base of the HF models: ``LlamaConfig``'s default.
HF_THETA = 10000.0
#: The RMSNorm eps of the HF models: ``LlamaConfig``'s default ``rms_norm_eps``.
HF_EPS = 1e-6
#: The dtype the HF models run in (their rotary table, norms and softmax are float32 in any case).
HF_DTYPE = torch.float32

#: Sizes as the Meta-style attention ties them: one width ``dim``, heads of ``dim // n_heads`` rows.
META_TIES = ("d_attn=d_x/H", "d_mid=d_x/H", "d_z=d_x", "d_out=d_x")
#: … and with its cache (no context Z).
META_CACHED_TIES = ("d_attn=d_x/H", "d_mid=d_x/H", "d_out=d_x")
#: … and the Meta-style transformer.
META_STACK_TIES = ("d_attn=d_e/H", "d_mid=d_e/H")
#: Sizes as HF's Llama ties them: its ``head_dim`` left at its default, ``hidden_size // num_attention_heads``
#: (a config of its own ``head_dim`` must still have ``hidden_size`` a multiple of the heads: LlamaConfig refuses
#: any other).
HF_TIES, HF_STACK_TIES = META_TIES, META_STACK_TIES


def _tensor(array, dtype=torch.float64):
    return torch.from_numpy(np.ascontiguousarray(array)).to(dtype)


def _load(module, state: dict, dtype=torch.float64):
    """The module's parameters set from ``state`` (name → array, reshaped to the parameter's shape only)."""
    own = dict(module.named_parameters())
    module.load_state_dict({name: _tensor(value, dtype).reshape(own[name].shape) for name, value in state.items()},
                           strict=True)


def _additive(mask, fill, dtype):
    """The spec's 0/1 mask (query × key) as an additive one: 0 where admitted, ``fill`` where hidden."""
    hidden = torch.from_numpy(np.asarray(mask)) == 0
    return torch.zeros(hidden.shape, dtype=dtype).masked_fill(hidden, fill)


# ------------------------------------------------------------------------------------------- Meta's code
def _meta_attention(dim, W_q, W_k, W_v, W_o, length):
    args = meta_llama.ModelArgs(dim=dim, n_heads=len(W_q), n_kv_heads=len(W_k), max_batch_size=1,
                                max_seq_len=length, rope_theta=META_THETA, dtype=torch.float64)
    attention = meta_llama.Attention(args)
    _load(attention, {"wq.weight": W_q, "wk.weight": W_k, "wv.weight": W_v, "wo.weight": W_o})
    freqs_cis = meta_llama.precompute_freqs_cis(dim // args.n_heads, 2 * length, args.rope_theta,
                                                dtype=torch.float64)
    return attention, freqs_cis


@torch.inference_mode()
def meta_attention(X, mask, W_q, W_k, W_v, W_o, Z=None):
    """Algorithm 5 (``mhattention``) by the Meta-style ``Attention``: ``rope=interleaved``, ``bias=False``,
    ``empty=nan``, ``rope_theta`` = :data:`META_THETA`, sizes :data:`META_TIES`."""
    ell_x = X.shape[0]
    ell_z = ell_x if Z is None else Z.shape[0]
    attention, freqs_cis = _meta_attention(X.shape[1], W_q, W_k, W_v, W_o, ell_z + ell_x)
    hide = _additive(mask, float("-inf"), torch.float64)
    if Z is None:
        out = attention(_tensor(X)[None], 0, freqs_cis[:ell_x], hide)
    else:
        attention(_tensor(Z)[None], 0, freqs_cis[:ell_z], None)           # Z's keys and values, cached at 0 … ℓ_z − 1
        own = torch.full((ell_x, ell_x), float("-inf"), dtype=torch.float64)
        out = attention(_tensor(X)[None], ell_z, freqs_cis[:ell_x], torch.cat([hide, own], dim=1))
    return out[0].numpy()


@torch.inference_mode()
def meta_kv_attention(X, mask, W_q, W_k, W_v, W_o, K_c=None, V_c=None):
    """Algorithm 5 over a key/value cache (``kv_mhattention``) by the Meta-style ``Attention`` decoding: the cache
    K_c, V_c (H_kv × ℓ_c × d_head) is its ``cache_k``, ``cache_v`` at positions 0 … ℓ_c − 1, the new tokens run at
    ``start_pos`` = ℓ_c, and the grown cache is returned with the output (options and sizes as
    :func:`meta_attention`'s, the context tie aside)."""
    ell_c, ell_x = (0 if K_c is None else K_c.shape[1]), X.shape[0]
    total = ell_c + ell_x
    attention, freqs_cis = _meta_attention(X.shape[1], W_q, W_k, W_v, W_o, total)
    if K_c is not None:
        attention.cache_k[0, :ell_c] = _tensor(K_c).transpose(0, 1)
        attention.cache_v[0, :ell_c] = _tensor(V_c).transpose(0, 1)
    out = attention(_tensor(X)[None], ell_c, freqs_cis[ell_c:total], _additive(mask, float("-inf"), torch.float64))
    keys, values = attention.cache_k[0, :total].transpose(0, 1), attention.cache_v[0, :total].transpose(0, 1)
    return out[0].numpy(), keys.numpy(), values.numpy()


def _meta_transformer(p, length):
    """The Meta-style ``Transformer`` of the parameters ``p``, its caches ``length`` tokens long."""
    L, H, _, dim = p["W_q"].shape
    d_mlp = p["W_mlp1"].shape[1]
    # Meta's width rule (int(8·dim/3)·ffn_dim_multiplier, rounded up to multiple_of) set to give W_mlp1's rows
    multiplier = (d_mlp + 0.5) / int(2 * 4 * dim / 3)
    args = meta_llama.ModelArgs(dim=dim, n_layers=L, n_heads=H, n_kv_heads=p["W_k"].shape[1],
                                vocab_size=p["W_e"].shape[1], multiple_of=1, ffn_dim_multiplier=multiplier,
                                norm_eps=META_EPS, rope_theta=META_THETA, max_batch_size=1, max_seq_len=length,
                                dtype=torch.float64)
    model = meta_llama.Transformer(args)
    state = {"tok_embeddings.weight": p["W_e"].T, "norm.weight": p["gamma"], "output.weight": p["W_u"]}
    for l in range(L):
        for code, spec in (("attention.wq", "W_q"), ("attention.wk", "W_k"), ("attention.wv", "W_v"),
                           ("attention.wo", "W_o"), ("feed_forward.w1", "W_gate"), ("feed_forward.w3", "W_mlp1"),
                           ("feed_forward.w2", "W_mlp2"), ("attention_norm", "gamma1"), ("ffn_norm", "gamma2")):
            state[f"layers.{l}.{code}.weight"] = p[spec][l]
    _load(model, state)
    return model


def _tokens(x):
    return torch.from_numpy(np.asarray(x, dtype=np.int64))[None]


def meta_transformer(x, params):
    """Algorithm 10 (``dtransformer``) by the Meta-style ``Transformer``: ``norm=rms``, ``eps`` =
    :data:`META_EPS`, ``position=none``, ``activation=swiglu``, ``bias=False``, ``tied=False``,
    ``rope=interleaved``, ``rope_theta`` = :data:`META_THETA`, sizes :data:`META_STACK_TIES`; the distributions
    are the softmax of its logits."""
    logits = _meta_transformer(params, len(x))(_tokens(x), 0)[0]                      # ℓ×N_V
    return torch.softmax(logits, dim=-1).numpy()


def meta_kv_transformer(x, params, K_c=None, V_c=None):
    """Algorithm 10 with a key/value cache (``kv_dtransformer``) by the Meta-style ``Transformer`` decoding: layer
    l's cache K_c[l], V_c[l] (H_kv × ℓ_c × d_head) is its ``cache_k``, ``cache_v`` at positions 0 … ℓ_c − 1, the
    new tokens run at ``start_pos`` = ℓ_c, and the grown caches are returned with the distributions (the options
    and sizes :func:`meta_transformer`'s)."""
    ell_c = 0 if K_c is None else K_c.shape[2]
    total = ell_c + len(x)
    model = _meta_transformer(params, total)
    for l, layer in enumerate(model.layers):
        if K_c is not None:
            layer.attention.cache_k[0, :ell_c] = _tensor(K_c[l]).transpose(0, 1)
            layer.attention.cache_v[0, :ell_c] = _tensor(V_c[l]).transpose(0, 1)
    logits = model(_tokens(x), ell_c)[0]
    keys = torch.stack([layer.attention.cache_k[0, :total].transpose(0, 1) for layer in model.layers])
    values = torch.stack([layer.attention.cache_v[0, :total].transpose(0, 1) for layer in model.layers])
    return torch.softmax(logits, dim=-1).numpy(), keys.numpy(), values.numpy()


# ------------------------------------------------------------------------------------------- HF's code
def _hf_config(**fields):
    from transformers import LlamaConfig
    return LlamaConfig(**fields, rope_parameters={"rope_type": "default", "rope_theta": HF_THETA},
                       attention_bias=False, mlp_bias=False, attn_implementation="eager")


def hf_attention(X, mask, W_q, W_k, W_v, W_o, Z=None):
    """Algorithm 5 (``mhattention``) by HF's ``LlamaAttention`` in float32: ``rope=half``, ``bias=False``,
    ``empty=uniform``, ``rope_theta`` = :data:`HF_THETA`, sizes :data:`HF_TIES`."""
    from transformers.cache_utils import DynamicCache
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding
    ell_x = X.shape[0]
    config = _hf_config(hidden_size=X.shape[1], num_attention_heads=len(W_q), num_key_value_heads=len(W_k),
                        max_position_embeddings=max(ell_x, 1 if Z is None else len(Z)))
    attention = LlamaAttention(config, layer_idx=0).to(HF_DTYPE).eval()
    _load(attention, {"q_proj.weight": W_q, "k_proj.weight": W_k, "v_proj.weight": W_v, "o_proj.weight": W_o},
          HF_DTYPE)
    rotary = LlamaRotaryEmbedding(config)
    fill = torch.finfo(HF_DTYPE).min

    def run(hidden, mask, cache=None):
        turns = rotary(hidden, torch.arange(hidden.shape[1])[None])
        return attention(hidden, position_embeddings=turns, attention_mask=mask, cache=cache)[0]

    hide = _additive(mask, fill, HF_DTYPE)
    with torch.no_grad():
        if Z is None:
            out = run(_tensor(X, HF_DTYPE)[None], hide[None, None])
        else:
            cache = DynamicCache(config=config)
            run(_tensor(Z, HF_DTYPE)[None], None, cache)                     # Z's keys and values, cached
            # X's own keys are no keys of this attention: left out entirely (−∞), so that a query whose every
            # key of Z is hidden (finfo.min) still averages Z's values, as HF's fill makes it do
            own = torch.full((ell_x, ell_x), float("-inf"), dtype=HF_DTYPE)
            out = run(_tensor(X, HF_DTYPE)[None], torch.cat([hide, own], dim=1)[None, None], cache)
    return out[0].double().numpy()


def hf_causal_lm(x, params):
    """Algorithm 10 (``dtransformer``) by HF's ``LlamaForCausalLM`` in float32: ``norm=rms``, ``eps`` =
    :data:`HF_EPS`, ``position=none``, ``activation=swiglu``, ``bias=False``, ``tied=False``, ``rope=half``,
    ``rope_theta`` = :data:`HF_THETA`, sizes :data:`HF_STACK_TIES`."""
    from transformers import LlamaForCausalLM
    p = params
    L, H, _, d_e = p["W_q"].shape
    config = _hf_config(vocab_size=p["W_e"].shape[1], hidden_size=d_e, intermediate_size=p["W_mlp1"].shape[1],
                        num_hidden_layers=L, num_attention_heads=H, num_key_value_heads=p["W_k"].shape[1],
                        rms_norm_eps=HF_EPS, tie_word_embeddings=False, hidden_act="silu",
                        max_position_embeddings=len(x))
    model = LlamaForCausalLM(config).to(HF_DTYPE).eval()
    state = {"model.embed_tokens.weight": p["W_e"].T, "model.norm.weight": p["gamma"], "lm_head.weight": p["W_u"]}
    for l in range(L):
        for code, spec in (("self_attn.q_proj", "W_q"), ("self_attn.k_proj", "W_k"), ("self_attn.v_proj", "W_v"),
                           ("self_attn.o_proj", "W_o"), ("mlp.gate_proj", "W_gate"), ("mlp.up_proj", "W_mlp1"),
                           ("mlp.down_proj", "W_mlp2"), ("input_layernorm", "gamma1"),
                           ("post_attention_layernorm", "gamma2")):
            state[f"model.layers.{l}.{code}.weight"] = p[spec][l]
    _load(model, state, HF_DTYPE)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(np.asarray(x, dtype=np.int64))[None]).logits[0]    # ℓ×N_V
    return torch.softmax(logits.double(), dim=-1).numpy()
