"""Third-party conformance: implementations nobody here wrote — torch's MultiheadAttention and
TransformerEncoderLayer, HF transformers' GPT2LMHeadModel and BertForMaskedLM — built offline from configs
with random weights, read into the spec's names (:mod:`reference.model.third_party`), equal the spec's numpy
execution in float64 (≤ 1e-10), the variant options explaining every difference from the paper."""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from formal import algorithms
from formal.errors import ConfigError
from reference.model import third_party
from tests.reference.model.torch_modules import randomise
from tests.strategies.cases import SEED
from tests.tiers import fast_few, slow

F = torch.nn.functional
FLOAT64 = 1e-10



def _columns(t):
    """A batch of one, (1, ℓ, d) ↦ the spec's (d, ℓ)."""
    return t[0].detach().numpy().T


@st.composite
def sizes(draw, *, layers=True):
    H, d_head = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    s = {"H": H, "d_e": H * d_head, "ell": draw(st.integers(1, 5)), "d_mlp": draw(st.integers(1, 6)),
         "N_V": draw(st.integers(4, 9)), "seed": draw(SEED)}
    s["ell_max"] = s["ell"] + draw(st.integers(0, 2))
    if layers:
        s["L"] = draw(st.integers(1, 2))
    return s


# ------------------------------------------------------------------------------ torch.nn.MultiheadAttention
@given(sizes(layers=False), st.booleans(), st.booleans(), st.booleans(), st.integers(1, 4), st.integers(1, 5))
def test_torch_multihead_attention_is_algorithm_5(s, bias, need_weights, cross, d_z, ell_z):
    """torch.nn.MultiheadAttention = Algorithm 5 with d_attn = d_mid = d_e/H, random masks included; a
    query no key may see gives NaN with need_weights=True and zeros through the fast path — the spec's
    ``empty="nan"`` and ``empty="zero"`` (decision-empty-neighbourhood)."""
    rng = np.random.default_rng(s["seed"])
    E, ell = s["d_e"], s["ell"]
    kdim = d_z if cross else E
    ell_z = ell_z if cross else ell
    mha = randomise(torch.nn.MultiheadAttention(E, s["H"], bias=bias, batch_first=True, kdim=kdim, vdim=kdim),
                     s["seed"])
    X, Z = rng.normal(size=(E, ell)), rng.normal(size=(kdim, ell_z))
    mask = rng.random((ell_z, ell)) < 0.7                                   # the spec's ℓ_z×ℓ_x, 1 = admitted
    x, z = torch.tensor(X.T[None]), torch.tensor(Z.T[None])
    got, _ = mha(x, z, z, attn_mask=torch.tensor(~mask.T), need_weights=need_weights)
    params, options = third_party.from_multihead_attention(mha, need_weights=need_weights)
    want = algorithms.mhattention.variant(**options)(X=X, Z=Z, mask=mask.astype(float), **params)
    got = _columns(got)
    assert np.array_equal(np.isnan(want), np.isnan(got))
    assert np.nanmax(np.abs(want - got), initial=0.0) <= FLOAT64


# ---------------------------------------------------------------------------- torch.nn.TransformerEncoderLayer
@slow
@given(sizes(), st.booleans(), st.sampled_from(["relu", "gelu"]), st.sampled_from([1e-5, 1e-3]))
def test_torch_transformer_encoder_layers_are_algorithm_9_layers(s, norm_first, activation, eps):
    """A stack of torch.nn.TransformerEncoderLayer (either ``norm_first``) between an embedding and the MLM
    head, written here in plain torch, = Algorithm 9 with ``norm_position``, ``activation`` and ``eps`` read
    off the layers: post-LN ``X ← LN(X + f(X))``, pre-LN ``X ← X + f(LN(X))`` with a final LN."""
    rng = np.random.default_rng(s["seed"])
    E, L = s["d_e"], s["L"]
    layers = [randomise(torch.nn.TransformerEncoderLayer(E, s["H"], s["d_mlp"], dropout=0.0, activation=activation,
                                                          layer_norm_eps=eps, batch_first=True, norm_first=norm_first),
                         s["seed"] + l) for l in range(L)]
    params, options = third_party.from_transformer_encoder(layers)
    head = {"W_e": (E, s["N_V"]), "W_p": (E, s["ell_max"]), "W_f": (E, E), "b_f": (E,), "gamma_f": (E,),
            "beta_f": (E,), "W_u": (s["N_V"], E)}
    if norm_first:
        head.update(gamma=(E,), beta=(E,))
    params.update({n: rng.normal(size=shape) for n, shape in head.items()})
    x = rng.integers(0, s["N_V"], size=s["ell"])
    t = {n: torch.tensor(v) for n, v in params.items()}

    X = (t["W_e"].T[torch.tensor(x)] + t["W_p"].T[: s["ell"]])[None]      # (1, ℓ, d_e)
    with torch.no_grad():
        for layer in layers:
            X = layer(X)
        if norm_first:
            X = F.layer_norm(X, (E,), t["gamma"], t["beta"], eps)
        X = F.layer_norm(F.gelu(F.linear(X, t["W_f"], t["b_f"])), (E,), t["gamma_f"], t["beta_f"], eps)
        got = _columns(torch.softmax(F.linear(X, t["W_u"]), dim=-1))
    spec = algorithms.etransformer.variant(**options)
    assert np.max(np.abs(spec(x=x, **params) - got)) <= FLOAT64


def test_transformer_encoder_layer_without_bias_is_refused():
    """bias=False also drops the layer norms' β, which Algorithm 6 always has: refused, not misread."""
    layer = torch.nn.TransformerEncoderLayer(4, 2, 8, bias=False, batch_first=True)
    with pytest.raises(ConfigError, match="bias=False"):
        third_party.from_transformer_encoder([layer])


# ------------------------------------------------------------------------------------ HF transformers
transformers = pytest.importorskip("transformers")


@slow
@pytest.mark.parametrize("attn_implementation", fast_few(["eager", "sdpa"]))
@given(s=sizes(), eps=st.sampled_from([1e-5, 1e-2]))
def test_hf_gpt2_lm_head_model_is_algorithm_10(attn_implementation, s, eps):
    """HF GPT2LMHeadModel = Algorithm 10 (pre-LN, causal) with activation=gelu-tanh (``gelu_new``), the
    unembedding tied to W_e, and eps = layer_norm_epsilon."""
    config = transformers.GPT2Config(vocab_size=s["N_V"], n_positions=s["ell_max"], n_embd=s["d_e"], n_layer=s["L"],
                                     n_head=s["H"], n_inner=s["d_mlp"], layer_norm_epsilon=eps, bos_token_id=None,
                                     eos_token_id=None, attn_implementation=attn_implementation)
    model = randomise(transformers.GPT2LMHeadModel(config), s["seed"])
    x = np.random.default_rng(s["seed"]).integers(0, s["N_V"], size=s["ell"])
    with torch.no_grad():
        got = _columns(torch.softmax(model(torch.tensor(x)[None]).logits, dim=-1))
    params, options = third_party.from_gpt2(model)
    assert options["tied"] and "W_u" not in params
    spec = algorithms.dtransformer.variant(**options)
    assert np.max(np.abs(spec(x=x, **params) - got)) <= FLOAT64


@slow
@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
@given(s=sizes(), patch=st.integers(1, 3), grid=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       channels=st.integers(1, 3), n_classes=st.integers(2, 5))
def test_hf_vit_from_pixel_values_is_algorithm_9_on_the_image(attn_implementation, s, patch, grid, channels,
                                                              n_classes):
    """HF ViTForImageClassification, fed ``pixel_values`` (B, C, H, W) of a non-square image, = Algorithm 9
    as ViT from the same image channel-last (inputs="image"): its Conv2d patch embedding is W_patch in the
    channel-first (c, i, j) patch order, pre-LN, exact GELU, the classifier on the class token.  Exactly
    (float64) through sdpa; HF's eager path takes the softmax of the scores in float32
    (``softmax(…, dtype=torch.float32)`` in modeling_vit.py), so there the two agree to float32's precision."""
    tolerance = FLOAT64 if attn_implementation == "sdpa" else 1e-6
    n_h, n_w = grid
    config = transformers.ViTConfig(hidden_size=s["d_e"], num_hidden_layers=s["L"], num_attention_heads=s["H"],
                                    intermediate_size=s["d_mlp"], image_size=(patch * n_h, patch * n_w),
                                    patch_size=patch, num_channels=channels, num_labels=n_classes,
                                    layer_norm_eps=1e-6, attn_implementation=attn_implementation)
    model = randomise(transformers.ViTForImageClassification(config), s["seed"])
    pixels = np.random.default_rng(s["seed"]).normal(size=(1, channels, patch * n_h, patch * n_w))
    with torch.no_grad():
        got = torch.softmax(model(pixel_values=torch.tensor(pixels)).logits, dim=-1)[0].numpy()
    params, options = third_party.from_hf_vit(model)
    spec = algorithms.etransformer.variant(**options)
    assert np.max(np.abs(spec(X_img=pixels[0].transpose(1, 2, 0), **params) - got)) <= tolerance
    # the order matters: HF's Conv2d patch embedding is W_patch on the channel-first patches, not the others
    with torch.no_grad():
        embedded = _columns(model.vit.embeddings.patch_embeddings(torch.tensor(pixels)))     # d_e×N
    image = pixels[0].transpose(1, 2, 0)
    for order in ("channel-first", "channel-last"):
        X_p = algorithms.etransformer.variant(**{**options, "patch_order": order}).run(X_img=image,
                                                                                      **params).values["X_p"]
        gap = np.max(np.abs(params["W_patch"] @ X_p + params["b_patch"][:, None] - embedded))
        assert gap <= FLOAT64 if order == "channel-first" else (gap > FLOAT64 or patch == 1 or channels == 1)


@slow
@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
@given(s=sizes(), n_types=st.integers(1, 3), eps=st.sampled_from([1e-12, 1e-2]))
def test_hf_bert_for_masked_lm_is_algorithm_9(attn_implementation, s, n_types, eps):
    """HF BertForMaskedLM = Algorithm 9 (post-LN, exact GELU, W_f head) with token types, a layer norm after
    the embedding, the output bias, the unembedding tied to W_e and eps = layer_norm_eps."""
    config = transformers.BertConfig(vocab_size=s["N_V"], hidden_size=s["d_e"], num_hidden_layers=s["L"],
                                     num_attention_heads=s["H"], intermediate_size=s["d_mlp"],
                                     max_position_embeddings=s["ell_max"], type_vocab_size=n_types,
                                     layer_norm_eps=eps, attn_implementation=attn_implementation)
    model = randomise(transformers.BertForMaskedLM(config), s["seed"])
    rng = np.random.default_rng(s["seed"])
    x, types = rng.integers(0, s["N_V"], size=s["ell"]), rng.integers(0, n_types, size=s["ell"])
    with torch.no_grad():
        logits = model(torch.tensor(x)[None], token_type_ids=torch.tensor(types)[None]).logits
    params, options = third_party.from_bert(model)
    spec = algorithms.etransformer.variant(**options)
    got = _columns(torch.softmax(logits, dim=-1))
    assert np.max(np.abs(spec(x=x, s=types, **params) - got)) <= FLOAT64


@given(st.integers(1, 5), st.lists(st.integers(1, 12), min_size=1, max_size=3), st.integers(1, 3), SEED)
def test_torch_paged_attention_pages_are_a_block_table(page_size, lengths, new, seed):
    """torch's PagedAttention (a private API of torch 2.13) reserves pages for several sequences and writes
    their keys and values into one paged cache; its page table and cache, read as the spec's pool and block
    table, give PagedMHAttention the output of Algorithm 5 over the contiguous keys and values it was given —
    and every sequence holds ⌈ℓ/B⌉ pages, formal.algorithms.paged's count."""
    from torch.nn.attention.experimental._paged_attention import PagedAttention

    from formal.algorithms.paged import memory
    from formal.core.symbols import block, ell_c
    rng, H, d = np.random.default_rng(seed), 2, 3
    n_pages = sum(-(-n // page_size) for n in lengths)
    paged = PagedAttention(n_pages=n_pages, page_size=page_size, max_batch_size=len(lengths), device="cpu")
    k_cache = torch.zeros(1, H, n_pages * page_size, d, dtype=torch.float64)
    v_cache = torch.zeros_like(k_cache)
    given = []
    for b, n in enumerate(lengths):
        K, V = rng.normal(size=(1, H, n, d)), rng.normal(size=(1, H, n, d))
        paged.reserve(torch.tensor(b), torch.tensor(n))
        paged.assign(torch.tensor([b]), torch.arange(n)[None], torch.tensor(K), torch.tensor(V), k_cache, v_cache)
        given.append((K[0].transpose(0, 2, 1), V[0].transpose(0, 2, 1)))                 # the spec's H×d×ℓ
    weights = {"W_q": rng.normal(size=(H, d, 2)), "W_k": rng.normal(size=(H, d, 2)),
               "W_v": rng.normal(size=(H, d, 2)), "W_o": rng.normal(size=(2, H * d)), "b_q": rng.normal(size=(H, d)),
               "b_k": rng.normal(size=(H, d)), "b_v": rng.normal(size=(H, d)), "b_o": rng.normal(size=2)}
    X = rng.normal(size=(2, new))
    for b, n in enumerate(lengths):
        arguments = third_party.from_torch_paged(paged, k_cache, v_cache, b, n)
        assert len(arguments["table"]) == memory()["blocks"].xreplace({ell_c: n, block: page_size})
        mask = rng.random((n + new, new)) < 0.8
        got = algorithms.paged_mhattention(X=X, mask=mask, **arguments, **weights)
        want = algorithms.get("kv_mhattention", step="extend")(X=X, K_c=given[b][0], V_c=given[b][1], mask=mask,
                                                               **weights)
        for g, w in zip(got, want):
            assert np.max(np.abs(g - w), initial=0.0) <= FLOAT64


# --------------------------------------------------------------------- the position-wise feed-forward network
def _feedforward_modules(kind, d_e, d_mlp, seed):
    """A third-party MLP (float64, random weights), the spec's variant it is, and its weights in the spec's names."""
    transformers = pytest.importorskip("transformers")
    if kind == "torch":   # TransformerEncoderLayer's linear1 → ReLU → linear2 (dropout off in eval)
        layer = torch.nn.TransformerEncoderLayer(d_e, 1, dim_feedforward=d_mlp, dropout=0.0, batch_first=True)
        module = randomise(torch.nn.Sequential(layer.linear1, torch.nn.ReLU(), layer.linear2), seed)
        names = {"W_mlp1": module[0].weight, "b_mlp1": module[0].bias, "W_mlp2": module[2].weight,
                 "b_mlp2": module[2].bias}
        return module, {"activation": "relu", "bias": True}, names
    if kind == "gpt2":    # GPT2MLP: Conv1D weights stored (in, out), GELU's tanh approximation
        from transformers.models.gpt2.modeling_gpt2 import GPT2MLP
        module = randomise(GPT2MLP(d_mlp, transformers.GPT2Config(n_embd=d_e, resid_pdrop=0.0)), seed)
        names = {"W_mlp1": module.c_fc.weight.T, "b_mlp1": module.c_fc.bias, "W_mlp2": module.c_proj.weight.T,
                 "b_mlp2": module.c_proj.bias}
        return module, {"activation": "gelu-tanh", "bias": True}, names
    from transformers.models.llama.modeling_llama import LlamaMLP  # SwiGLU, down(SiLU(gate x) ⊙ up x), no biases
    config = transformers.LlamaConfig(hidden_size=d_e, intermediate_size=d_mlp, num_attention_heads=1,
                                      num_key_value_heads=1, head_dim=2)   # (the attention's, unused here)
    module = randomise(LlamaMLP(config), seed)
    names = {"W_mlp1": module.up_proj.weight, "W_gate": module.gate_proj.weight, "W_mlp2": module.down_proj.weight}
    return module, {"activation": "swiglu", "bias": False}, names


@pytest.mark.parametrize("kind", ["torch", "gpt2", "llama"])
@given(st.integers(1, 6), st.integers(1, 7), st.integers(1, 5), SEED)
def test_third_party_feedforward_networks_are_the_spec_mlp(kind, d_e, d_mlp, ell, seed):
    """Vaswani et al.'s eq. (2) as torch's TransformerEncoderLayer computes it (ReLU), GPT-2's MLP (GELU-tanh)
    and Llama's (SwiGLU, Shazeer 2020): each, its weights read into the spec's names, equals ``mlp`` of that
    variant in float64, with the parameter count ``numel`` gives."""
    module, variant, names = _feedforward_modules(kind, d_e, d_mlp, seed)
    X = torch.as_tensor(np.random.default_rng(seed).normal(size=(1, ell, d_e)))
    with torch.no_grad():
        want = _columns(module(X))
    params = {name: t.detach().numpy() for name, t in names.items()}
    spec = algorithms.mlp.variant(**variant)
    got = spec(X=X[0].numpy().T, **params)
    assert np.max(np.abs(got - want)) <= FLOAT64 * max(1.0, np.max(np.abs(want)))
    sizes = {"d_e": d_e, "d_mlp": d_mlp}
    counted = sum(p.numel() for p in module.parameters())
    assert int(spec.param_count().xreplace({s: sizes[str(s)] for s in spec.param_count().free_symbols})) == counted


@pytest.mark.parametrize("path", ["explicit", "sdpa"])
def test_hf_gpt2_through_the_reference_stack_with_the_readers_options(path):
    """HF GPT-2 through the torch reference (the CPU twin of the GPU check): ``from_gpt2``'s options name only
    what differs from Algorithm 10's declared defaults, and the reference's stack takes the others from those
    declarations — equal to HF's logits in float64."""
    transformers = pytest.importorskip("transformers")
    from reference.model import architectures as stacks
    from reference.model.convert import params_to_torch
    config = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=32, n_layer=2, n_head=4,
                                     bos_token_id=None, eos_token_id=None)
    model = randomise(transformers.GPT2LMHeadModel(config), 0)
    params, options = third_party.from_gpt2(model)
    assert set(options) < set(algorithms.dtransformer.options)          # the reader names only some options
    x = torch.tensor(np.arange(10) % 50)[None]
    with torch.no_grad():
        want = model(x).logits
        got = stacks.dtransformer(x, params_to_torch(params), options, path=path)
    assert torch.max(torch.abs(want - got)).item() <= FLOAT64 * max(1.0, torch.max(torch.abs(want)).item())


def test_hf_llama_reader_reads_its_rotation_and_its_rows_as_they_are():
    """``from_hf_llama``'s options carry the module's rotation as :func:`reference.model.hf_configs.llama` reads it
    from the config (rotate-half, θ, the llama3 rule here; the legacy ``rope_scaling`` spelling too), and the rows
    of ``q_proj``/``k_proj`` are the spec's W_q/W_k as they are: HF's rotate-half layout is the spec's
    ``rope="half"``, so nothing is permuted (the interleaved layout would need the rows of each head reordered).
    tests/models/test_llama_rotary.py checks what the module computes."""
    transformers = pytest.importorskip("transformers")
    from reference.model import hf_configs
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 64}
    config = transformers.LlamaConfig(hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
                                      num_hidden_layers=1, intermediate_size=8, vocab_size=10,
                                      max_position_embeddings=128, rope_scaling=scaling, rope_theta=500000.0)
    model = randomise(transformers.LlamaForCausalLM(config), 0)
    params, options = third_party.from_hf_llama(model)
    assert options == {**hf_configs.llama(config).options, "tied": False}
    assert {k: v for k, v in options.items() if k.startswith("rope")} == {
        "rope": "half", "rope_theta": 500000.0, "rope_scaling": "llama3", "rope_factor": 8.0, "rope_original": 64,
        "rope_low": 1.0, "rope_high": 4.0}
    attention = model.model.layers[0].self_attn
    assert np.array_equal(params["W_q"][0].reshape(-1, 16), attention.q_proj.weight.detach().numpy())
    assert np.array_equal(params["W_k"][0].reshape(-1, 16), attention.k_proj.weight.detach().numpy())
