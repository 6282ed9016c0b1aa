"""Llama's rotation against HF transformers: the spec's rotary embedding (:mod:`formal.ops.rotary`) with the options
:func:`reference.model.hf_configs.llama_rotation` reads from a ``LlamaConfig`` computes what HF's Llama computes.

Three checks, each with its own oracle:

- the frequencies: ``Rotation.frequencies`` equals HF's own rule (``ROPE_INIT_FUNCTIONS``, and Llama's default
  rule) for every scaling rule, at several head widths, fractions and bases — HF computes them in float32, so to
  float32's precision (:data:`RTOL32`);
- HF's ``LlamaAttention`` (its projections, ``rotate_half``, grouped-query ``repeat_kv``, SDPA) in float64 equals
  the spec's Algorithm 5 with the rotation to float64's 1e-10: HF's rotary module computes its angles, cos and sin
  in float32 whatever the model's dtype, so here its forward's three lines (``cat(freqs, freqs)``, cos and sin
  times ``attention_scaling``) are evaluated in float64 on float64 frequencies — the config's rule, checked
  against HF's own float32 frequencies and cos/sin first;
- the whole ``LlamaForCausalLM`` equals the spec's Algorithm 10 with the reader's options — to the float32 rule,
  as tests/models/test_presets_numeric.py explains (HF's RMSNorm and rotary module compute in float32).

Each can fail: a field planted in HF's config and not in the spec's (or the other way round) moves the float64
comparison far past its tolerance, and a rope field the spec has no counterpart for is refused by name."""

import math

import numpy as np
import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding

from formal import algorithms
from formal.errors import ConfigError
from formal.ops.rotary import Rotation
from reference import tolerances
from reference.model import hf_configs, third_party
from reference.model.convert import to_numpy
from tests.models.test_presets_numeric import run_llama
from tests.reference.model.torch_modules import randomise

#: What HF's float32 frequencies may differ from the exact rule's by, relatively (measured: 4.1e-7 at most over
#: the cases below — a float32 power θ^x with |ln ω| up to 13).
RTOL32 = 1e-6
ELL, SEED = 7, 0


def _config(rope: dict | None = None, **sizes):
    """A tiny ``LlamaConfig`` (d_e = 16, 4 heads of 4, a context of 12) with ``rope`` as its ``rope_parameters``
    (transformers 5's spelling; ``rope_scaling=…`` and ``rope_theta=…`` in ``sizes`` give the legacy one)."""
    fields = {"hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 2,
              "intermediate_size": 24, "max_position_embeddings": 12, "vocab_size": 40, "rms_norm_eps": 1e-5,
              **sizes}
    if rope is not None:
        fields["rope_parameters"] = dict(rope)
    return transformers.LlamaConfig(**fields, attn_implementation="sdpa")


# ------------------------------------------------------------------------------------------- the frequencies
def _hf_frequencies(kind, parameters, theta, width, fraction, length):
    """HF's inverse frequencies (float32) and attention factor: ``ROPE_INIT_FUNCTIONS[kind]``, or Llama's default
    rule (which ignores ``partial_rotary_factor``: it is given the rotated width as its head width)."""
    rope = {"rope_type": kind, "rope_theta": theta, **parameters}
    if kind == "default":
        config = _config(rope, head_dim=int(width * fraction))
        return LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    config = _config({**rope, "partial_rotary_factor": fraction}, head_dim=width, max_position_embeddings=64)
    return ROPE_INIT_FUNCTIONS[kind](config, None, seq_len=length)


#: (HF's rope_type, its parameters, the spec's Rotation fields, lengths): each rule at an N of 64, where a head of
#: 8 to 128 rows meets every band of the llama3 rule and both ends of YaRN's ramp, and llama3 at Llama 3.1's own.
RULES = [
    ("default", {}, {}, [None]),
    ("linear", {"factor": 4.0}, {"scaling": "linear", "factor": 4.0}, [None]),
    ("dynamic", {"factor": 4.0}, {"scaling": "dynamic", "factor": 4.0, "original": 64}, [32, 64, 200]),
    ("yarn", {"factor": 4.0, "original_max_position_embeddings": 64},
     {"scaling": "yarn", "factor": 4.0, "original": 64}, [None]),
    ("yarn", {"factor": 16.0, "original_max_position_embeddings": 64, "beta_fast": 16.0, "beta_slow": 2.0},
     {"scaling": "yarn", "factor": 16.0, "original": 64, "beta_fast": 16.0, "beta_slow": 2.0}, [None]),
    ("llama3", {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
     {"scaling": "llama3", "factor": 8.0, "original": 64, "low": 1.0, "high": 4.0}, [None]),
    ("llama3", {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192},
     {"scaling": "llama3", "factor": 32.0, "original": 8192, "low": 1.0, "high": 4.0}, [None]),
]


@pytest.mark.parametrize("kind, parameters, fields, lengths", RULES)
@pytest.mark.parametrize("theta", [10000.0, 500000.0])
@pytest.mark.parametrize("width, fraction", [(8, 1.0), (64, 1.0), (64, 0.5), (128, 1.0), (128, 0.25)])
def test_frequencies_are_hfs_rule(kind, parameters, fields, lengths, theta, width, fraction):
    """``Rotation(...).frequencies(rows, length)`` = HF's ``inv_freq`` for the same settings, written here by hand
    (not through the mapping), to float32's precision; YaRN's attention factor is the rotation's ``scale``.  The
    dynamic rule at a length below its N, at N, and past it (where the base grows)."""
    rotation = Rotation("half", theta=theta, fraction=fraction, **fields)
    for length in lengths:
        want, factor = _hf_frequencies(kind, parameters, theta, width, fraction, length)
        got = rotation.frequencies(rotation.rotated(width), length)
        np.testing.assert_allclose(got, want.double().numpy(), rtol=RTOL32, atol=0)
        assert factor == pytest.approx(rotation.scale, rel=1e-15)


def test_the_frequency_check_can_fail():
    """Each rule moves the frequencies by far more than :data:`RTOL32`: a rule read wrong (linear for llama3, the
    dynamic base at N for a longer sequence, YaRN without its ramp) is seen."""
    base = Rotation("half", theta=10000.0).frequencies(64)
    for kind, parameters, fields, lengths in RULES[1:]:
        for length in lengths:
            want, _ = _hf_frequencies(kind, parameters, 10000.0, 64, 1.0, length)
            if kind != "dynamic" or length > 64:
                assert np.max(np.abs(want.double().numpy() / base - 1)) > 1e3 * RTOL32, (kind, length)


# ------------------------------------------------------------------------------- LlamaAttention in float64
def _float64_cos_sin(config, ell):
    """(cos, sin) of HF's rotary module for positions 0 … ell − 1, in float64.

    HF's ``LlamaRotaryEmbedding`` computes ``inv_freq`` in float32 even under ``.double()``, and its forward
    multiplies the positions by it, and takes cos and sin, in float32 too: a float64 model sees float32 angles.
    Here its forward is run first (its own output, and a dynamic rule's update for this length), then its three
    lines are evaluated in float64 on the frequencies of the config's rule computed in float64 (read by
    :func:`~reference.model.hf_configs.llama_rotation`, computed by ``Rotation.frequencies``) — after checking that
    those equal HF's own float32 frequencies, and the float64 cos and sin HF's float32 ones, to float32's
    precision."""
    rotation = Rotation.of(hf_configs.llama_rotation(config))     # read before HF's module rewrites the config
    rotary = LlamaRotaryEmbedding(config)
    positions = torch.arange(ell)[None]
    cos32, sin32 = rotary(torch.zeros(1, ell, 1, dtype=torch.float64), positions)
    omega = rotation.frequencies(rotation.rotated(config.head_dim), ell)
    np.testing.assert_allclose(omega, rotary.inv_freq.double().numpy(), rtol=RTOL32, atol=0)
    freqs = torch.arange(ell, dtype=torch.float64)[:, None] * torch.tensor(omega)[None]
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    cos, sin = emb.cos() * rotary.attention_scaling, emb.sin() * rotary.attention_scaling
    for mine, hfs in ((cos, cos32), (sin, sin32)):
        np.testing.assert_allclose(mine.numpy(), hfs.numpy(), rtol=0, atol=1e-6)
    return cos, sin


def _hf_attention(config, X):
    """HF's ``LlamaAttention`` of ``config`` with random float64 weights on the spec's X (d_e×ℓ), causal; its
    output as d_e×ℓ, and the module."""
    attention = randomise(LlamaAttention(config, layer_idx=0), SEED)
    cos, sin = _float64_cos_sin(config, X.shape[1])
    with torch.no_grad():
        out, _ = attention(torch.tensor(X.T[None]), position_embeddings=(cos, sin), attention_mask=None)
    return out[0].numpy().T, attention


def _spec_attention(attention, rope: dict, X, heads: int, kv: int):
    """The spec's Algorithm 5, causal, no biases, with the rotary options ``rope``, on HF's weights read as
    ``heads`` query heads and ``kv`` key/value heads."""
    weights = {n: to_numpy(getattr(attention, f"{n}_proj").weight) for n in "qkvo"}
    variant = algorithms.get("mhattention").variant(bias=False, n_kv_heads=kv if kv != heads else None, **rope)
    ell = X.shape[1]
    return variant(X=X, Z=X, mask=np.triu(np.ones((ell, ell))), W_q=third_party._heads(weights["q"], heads),
                   W_k=third_party._heads(weights["k"], kv), W_v=third_party._heads(weights["v"], kv), W_o=weights["o"])


def _attention_error(config, *, rope=None, heads=None, kv=None, ell=ELL):
    """max |spec − HF| of the attention sublayer of ``config`` in float64, the spec run with the rotary options
    ``rope`` (default: what the mapping reads from ``config``) on heads as ``heads``/``kv`` say (default: the
    config's)."""
    X = np.random.default_rng(SEED).normal(size=(config.hidden_size, ell))
    rope = hf_configs.llama_rotation(config) if rope is None else rope     # before HF's modules rewrite the config
    got, attention = _hf_attention(config, X)
    want = _spec_attention(attention, rope, X, heads or config.num_attention_heads,
                           kv or config.num_key_value_heads)
    return float(np.max(np.abs(want - got))) / tolerances.scale(want)


#: Configs whose rotation the mapping reads, each run through HF's attention and the spec's: every rule, the legacy
#: ``rope_scaling`` with ``type`` (which HF still accepts), grouped-query heads, a head_dim other than d_e/H.
CONFIGS = {
    "default": dict(rope={"rope_type": "default", "rope_theta": 10000.0}),
    "theta-500000": dict(rope={"rope_type": "default", "rope_theta": 500000.0}),
    "no-rope-parameters": dict(),
    "legacy-type-linear": dict(rope_scaling={"type": "linear", "factor": 2.0}, rope_theta=100.0),
    "linear": dict(rope={"rope_type": "linear", "factor": 4.0, "rope_theta": 100.0}),
    "dynamic-below-N": dict(rope={"rope_type": "dynamic", "factor": 4.0, "rope_theta": 100.0}),
    "dynamic-past-N": dict(rope={"rope_type": "dynamic", "factor": 4.0, "rope_theta": 100.0},
                           max_position_embeddings=4),
    "yarn": dict(rope={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "rope_theta": 100.0},
                 head_dim=8),
    "yarn-betas-and-its-attention-factor": dict(
        rope={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "rope_theta": 100.0,
              "beta_fast": 8.0, "beta_slow": 2.0, "attention_factor": 0.1 * math.log(4.0) + 1.0, "truncate": True},
        head_dim=8),
    "yarn-implicit-factor": dict(rope={"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 3,
                                       "rope_theta": 100.0}, head_dim=8),       # s = 12/3, as HF takes it
    "yarn-original-as-an-attribute": dict(rope={"rope_type": "yarn", "factor": 4.0, "rope_theta": 100.0},
                                          original_max_position_embeddings=64, head_dim=8),
    "llama3": dict(rope={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_theta": 500000.0},
                   num_attention_heads=4, num_key_value_heads=2, head_dim=8),
    "gqa-head-dim": dict(rope={"rope_type": "default", "rope_theta": 10000.0}, num_attention_heads=4,
                         num_key_value_heads=1, head_dim=6),
}


def _from(entry):
    entry = dict(entry)
    return _config(entry.pop("rope", None), **entry)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_hf_llama_attention_is_the_spec_with_its_rotation_in_float64(name):
    """HF's attention sublayer with its rotation (its cos and sin in float64) = the spec's Algorithm 5 with the
    rotary options the mapping reads, to 1e-10 relative to max(1, max |output|) (measured: 7.7e-16 at most)."""
    assert _attention_error(_from(CONFIGS[name])) <= tolerances.FLOAT64


# ------------------------------------------------------------------------------------- planted fields
#: (what is planted, HF's config, the spec's rotary options, the spec's heads): one field differs between the HF
#: model and the spec; each moves the float64 comparison far past 1e-10.
PLANTED = {
    # HF's θ is 500000, the spec's 10000
    "rope_theta": (dict(rope={"rope_type": "default", "rope_theta": 500000.0}), {"rope": "half"}, None),
    # HF's heads are 8 wide (2 of them); the spec reads the same 16×16 projections as 4 heads of 4
    "head_dim": (dict(rope={"rope_type": "default", "rope_theta": 100.0}, num_attention_heads=2,
                      num_key_value_heads=2, head_dim=8), {"rope": "half", "rope_theta": 100.0}, (4, 4)),
    # HF's Llama rotates whole heads; the spec rotates half of each (rope_fraction 1/2)
    "partial_rotary_factor": (dict(rope={"rope_type": "default", "rope_theta": 100.0}, head_dim=8),
                              {"rope": "half", "rope_theta": 100.0, "rope_fraction": 0.5}, None),
    # HF's llama3 factor is 32, the spec's 8
    "rope_factor": (CONFIGS["llama3"], {**hf_configs.llama_rotation(_from(CONFIGS["llama3"])), "rope_factor": 32.0},
                    None),
    # HF rotates (θ = 10000); the spec does not
    "rope": (dict(rope={"rope_type": "default", "rope_theta": 10000.0}), {}, None),
}


@pytest.mark.parametrize("field", sorted(PLANTED))
def test_a_planted_rope_field_fails_the_float64_comparison(field):
    """With one field differing between HF's config and the spec's options, the float64 comparison fails (by far
    more than its tolerance): the check above can see each field.  The same config with the field agreeing
    passes, so it is the field that fails it."""
    entry, rope, heads = PLANTED[field]
    config = _from(entry)
    heads, kv = heads or (None, None)
    assert _attention_error(config, rope=rope, heads=heads, kv=kv) > 1e4 * tolerances.FLOAT64
    assert _attention_error(config) <= tolerances.FLOAT64


def test_hf_llama_ignores_partial_rotary_factor_so_the_mapping_refuses_it():
    """HF's Llama rotates whole heads whatever ``partial_rotary_factor`` says (its default rule ignores it; a
    scaling rule's frequencies no longer fit the head): its frequencies with 1/2 are those without, so the spec's
    ``rope_fraction = 1/2`` would compute something else — the mapping refuses the field instead of reading it."""
    half = LlamaRotaryEmbedding(_config({"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.5},
                                        head_dim=8))
    whole = LlamaRotaryEmbedding(_config({"rope_type": "default", "rope_theta": 100.0}, head_dim=8))
    assert torch.equal(half.inv_freq, whole.inv_freq) and half.inv_freq.shape == (4,)
    with pytest.raises(ConfigError, match=r"partial_rotary_factor'\] = 0.5"):
        hf_configs.llama_rotation(half.config)


# ------------------------------------------------------------------------------------- refused fields
def _yarn(**extra):
    return {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4, "rope_theta": 100.0, **extra}


@pytest.mark.parametrize("rope, field", [
    (_yarn(attention_factor=1.5), r"\['attention_factor'\] = 1.5"),
    (_yarn(mscale=0.707, mscale_all_dim=0.707), r"\['mscale'\] = 0.707"),
    (_yarn(mscale_all_dim=1.0), r"\['mscale_all_dim'\] = 1.0"),
    (_yarn(truncate=False), r"\['truncate'\] = False"),
    ({"rope_type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0],
      "original_max_position_embeddings": 4, "rope_theta": 100.0}, r"\['rope_type'\] = 'longrope'"),
    ({"rope_type": "proportional", "rope_theta": 100.0, "partial_rotary_factor": 0.5}, r"\['rope_type'\] = "),
    ({"rope_type": "sideways", "rope_theta": 100.0}, r"\['rope_type'\] = 'sideways'"),
    ({"type": "su", "rope_theta": 100.0}, r"\['rope_type'\] = 'su'"),
    ({"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.5},
     r"\['partial_rotary_factor'\] = 0.5"),
    ({"rope_type": "linear", "factor": 0.5, "rope_theta": 100.0}, r"\['factor'\] = 0.5"),
    ({"rope_type": "dynamic", "factor": 0.5, "rope_theta": 100.0}, r"\['factor'\] = 0.5"),
])
def test_a_rope_field_the_spec_cannot_compute_is_refused_by_name(rope, field):
    """A rope parameter that would make HF compute what no option of the spec's rotation does — another YaRN
    attention factor, an untruncated ramp, another rule, a partial rotation HF's Llama does not perform, a factor
    below 1 — is a ConfigError naming the field and its value, from the mapping and from the reader of the model."""
    config = _config(rope, head_dim=4)
    with pytest.raises(ConfigError, match=field):
        hf_configs.preset_of(config)
    model = transformers.LlamaForCausalLM(_config())      # HF cannot build every refused config: a model whose
    model.config = config                                  # config is the refused one is what the reader sees
    with pytest.raises(ConfigError, match=field):
        third_party.from_hf_llama(model)


# ------------------------------------------------------------------------------- LlamaForCausalLM, whole
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_hf_llama_for_causal_lm_is_the_spec_with_its_rotation(name):
    """The whole model, read by :func:`~reference.model.third_party.from_hf_llama`, equals Algorithm 10 with the
    reader's options (its rotation among them), to the float32 rule (HF's RMSNorm and rotary module compute in
    float32: tests/models/test_presets_numeric.py), and the same weights without the rotation are told apart."""
    config = _from(CONFIGS[name])
    x = np.random.default_rng(SEED).integers(0, config.vocab_size, size=ELL)
    params, options, got = run_llama(config, x)
    spec = algorithms.get("dtransformer").variant(**options)
    want = spec(x=x, **params)
    allowed = tolerances.allowed("float32", spec, want, {"x": x, **params})
    assert np.max(np.abs(want - got)) <= allowed
    unrotated = algorithms.get("dtransformer").variant(**{k: v for k, v in options.items() if not k.startswith("rope")})
    assert np.max(np.abs(unrotated(x=x, **params) - got)) > allowed
