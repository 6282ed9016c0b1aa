"""conform and ``--identify`` on rotary code written as real code writes it, through name-only adapters
(targets/llama_adapters.py): a Llama in the idiom of Meta's reference code (targets/meta_llama.py: the complex
form, rows 2i and 2i + 1 paired) and HF transformers' ``LlamaAttention`` and ``LlamaForCausalLM`` (rotate-half).

Each passes ``conform`` under the rotary style it implements — the attention (Algorithm 5), its cache
(``kv_mhattention``, ``kv_dtransformer``) and the whole decoder (Algorithm 10) — and fails under the other style and
without rotary embeddings, where a head is 4 rows wide (``d_x=4*H``: on 2 rows the two styles pair the same rows);
``--identify``, told the sizes and the options the search need not cover, names the style, the rotary base and the
empty-query policy of each.  The adapters reorder no row: the style is found, not given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from formal import algorithms  # noqa: E402
from formal.ops.rotary import Rotation  # noqa: E402
from reference.conformance.candidates import identify_text  # noqa: E402
from reference.conformance.conform import conform  # noqa: E402
from reference.conformance.identify import identify  # noqa: E402
from tests.tiers import slow

try:                                       # the Llama code is torch code
    import torch

    from tests.reference.conformance.targets import llama_adapters as adapters, meta_llama
except ImportError:                        # collected without torch (tests/test_without_torch.py): every test skips
    torch = adapters = meta_llama = None
pytestmark = pytest.mark.skipif(torch is None, reason="the Llama code is torch code")

ROOT = Path(__file__).parents[3]
ADAPTERS = Path(__file__).parent / "targets" / "llama_adapters.py"

#: Meta's attention as conform checks it: no biases, -inf masking (a query with no key: NaN), Llama 3's base.
META = {"bias": False, "empty": "nan", "rope": "interleaved", "rope_theta": getattr(adapters, "META_THETA", None)}
#: HF's: no biases, finfo.min masking (a query with no key averages every value), LlamaConfig's base.
HF = {"bias": False, "empty": "uniform", "rope": "half", "rope_theta": getattr(adapters, "HF_THETA", None)}
#: The Llama decoder's options, the rotary ones aside.
STACK = {"norm": "rms", "position": "none", "activation": "swiglu", "bias": False, "tied": False, "n_kv_heads": 2}
#: Heads 4 rows wide: the smallest on which rotate-half and interleaved pair different rows.
WIDE = ("d_x=4*H",)
#: What --identify is told: no biases, and every option but the empty-query policy, the rotary style and its base at
#: its default — the search is over 3 policies × (no rotation, or 2 styles × 4 bases) = 27 variants.
SEARCHED = ("empty", "rope", "rope_theta")
FIXED = {**{k: o.default for k, o in algorithms.get("mhattention").option_specs.items() if k not in SEARCHED},
         "bias": False}


def _have_transformers() -> bool:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


HF_ONLY = pytest.mark.skipif(not _have_transformers(), reason="HF's Llama needs transformers")


def _conform(function, algorithm, options, sizes, **kw):
    return conform(f"{ADAPTERS}:{function}", algorithm, options=options, sizes=list(sizes), layout="rows",
                   isolate=False, **kw)


def _fails_spec(report):
    assert not report.ok and report.failure["property"] == "spec", report.failure
    return report


# -------------------------------------------------------------------------------------------- the code itself
def test_meta_style_rotation_is_the_spec_s_interleaved_one():
    """apply_rotary_emb (complex pairs 2k, 2k + 1 times precompute_freqs_cis's e^{i·t·ω_k}) turns queries and keys
    as the spec's interleaved Rotation does, and not as its rotate-half one: the code is what its idiom says."""
    rng = np.random.default_rng(0)
    seq, heads, dim, theta = 5, 2, 8, 500000.0
    xq, xk = (torch.from_numpy(rng.normal(size=(1, seq, heads, dim))) for _ in range(2))
    freqs = meta_llama.precompute_freqs_cis(dim, 2 * seq, theta, dtype=torch.float64)[:seq]
    q, _ = meta_llama.apply_rotary_emb(xq, xk, freqs)
    columns = xq[0].permute(1, 2, 0).numpy()                         # heads × dim × seq: the spec's columns
    want = Rotation(style="interleaved", theta=theta).rotate(columns, np.arange(seq))
    np.testing.assert_allclose(q[0].permute(1, 2, 0).numpy(), want, rtol=1e-12, atol=1e-12)
    half = Rotation(style="half", theta=theta).rotate(columns, np.arange(seq))
    assert np.abs(q[0].permute(1, 2, 0).numpy() - half).max() > 1e-2


# ------------------------------------------------------------------------------------------ Meta-style code
def test_meta_attention_conforms_with_interleaved_rope():
    """Meta-style Attention (GQA-capable, its cache carrying a context) passes every property of Algorithm 5 under
    rope=interleaved at its own base, float64's tolerance."""
    report = _conform("meta_attention", "mhattention", META, adapters.META_TIES)
    assert report.ok, report.failure
    assert report.checks["spec"].examples >= 30 and report.checks["spec"].max_error < 1e-12


@pytest.mark.parametrize("wrong", [{"rope": "half"}, {"rope": None}, {"rope_theta": 10000.0}],
                         ids=["rotate-half", "no-rope", "theta-10000"])
def test_meta_attention_fails_under_another_rotation(wrong):
    """The check can fail: under rotate-half, without rotary embeddings and with another base, the smallest
    example with 4-row heads fails the spec comparison."""
    options = {**META, **wrong}
    if options["rope"] is None:
        options.pop("rope_theta")
    _fails_spec(_conform("meta_attention", "mhattention", options, adapters.META_TIES + WIDE))


def test_meta_attention_with_its_cache_conforms_to_cached_attention():
    """Meta's decoding step — the cache at positions 0 … ℓ_c − 1, the new tokens run at start_pos = ℓ_c — is
    kv_mhattention's extend step under rope=interleaved; under rotate-half it fails."""
    report = _conform("meta_kv_attention", "kv_mhattention", {**META, "n_kv_heads": 2}, adapters.META_CACHED_TIES)
    assert report.ok, report.failure
    _fails_spec(_conform("meta_kv_attention", "kv_mhattention", {**META, "rope": "half"},
                         adapters.META_CACHED_TIES + WIDE))


def test_meta_transformer_conforms_as_a_llama_decoder():
    """Meta-style Transformer (RMSNorm, SwiGLU w1/w2/w3, 2 key/value heads, no biases, untied output) is
    Algorithm 10 with rope=interleaved; under rotate-half it fails."""
    options = {**STACK, "eps": adapters.META_EPS, "rope": "interleaved", "rope_theta": adapters.META_THETA}
    report = _conform("meta_transformer", "dtransformer", options, adapters.META_STACK_TIES)
    assert report.ok, report.failure
    assert report.checks["causality"].verdict == "pass"
    _fails_spec(_conform("meta_transformer", "dtransformer", {**options, "rope": "half"},
                         adapters.META_STACK_TIES + ("d_e=4*H",)))


def test_meta_transformer_decoding_conforms_to_the_cached_decoder():
    """The Meta-style Transformer called at start_pos = ℓ_c with its caches filled is kv_dtransformer's extend
    step (its prefill too)."""
    options = {**STACK, "eps": adapters.META_EPS, "rope": "interleaved", "rope_theta": adapters.META_THETA}
    for step in ("extend", "prefill"):
        report = _conform("meta_kv_transformer", "kv_dtransformer", {**options, "step": step},
                          adapters.META_STACK_TIES)
        assert report.ok, (step, report.failure)


def test_the_command_line_passes_and_fails_meta_attention():
    """``python -m formal conform`` in a process of its own: exit 0 and PASS under rope=interleaved, exit 1 and
    FAIL spec under rope=half."""
    def run(*options):
        ties = [arg for tie in adapters.META_TIES + WIDE for arg in ("--size", tie)]
        argv = [sys.executable, "-m", "formal", "conform", f"{ADAPTERS}:meta_attention", "--algorithm",
                "mhattention", "--layout", "rows", "--examples", "8", "-o", "bias=false", "-o", "empty=nan", "-o",
                f"rope_theta={adapters.META_THETA}", *options, *ties]
        return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120)
    passed = run("-o", "rope=interleaved")
    assert passed.returncode == 0 and "PASS: every property held" in passed.stdout, passed.stdout + passed.stderr
    failed = run("-o", "rope=half")
    assert failed.returncode == 1 and "FAIL spec" in failed.stdout, failed.stdout + failed.stderr


def test_identify_names_meta_s_rotation_base_and_empty_policy():
    """--identify over empty × rope × rope_theta (27 variants) confirms exactly Meta's: the interleaved style,
    Llama 3's base 500000 among the searched values, and NaN for a query with no key."""
    found = identify(f"{ADAPTERS}:meta_attention", "mhattention", options=FIXED, sizes=list(adapters.META_TIES),
                     layout="rows", isolate=False, n_examples=4, max_size=9)
    assert len(found.trials) == 27
    assert [t.changes for t in found.confirmed] == [{"bias": False, "empty": "nan", "rope": "interleaved",
                                                     "rope_theta": 500000.0}], identify_text(found)
    assert "rope='interleaved'" in identify_text(found)


# ------------------------------------------------------------------------------------------------ HF's code
@HF_ONLY
def test_hf_llama_attention_conforms_with_rotate_half():
    """HF's LlamaAttention (float32, as it computes its rotation, norms and softmax) passes Algorithm 5 under
    rope=half within float32's bounds, and fails under rope=interleaved."""
    report = _conform("hf_attention", "mhattention", HF, adapters.HF_TIES, precision="float32")
    assert report.ok, report.failure
    _fails_spec(_conform("hf_attention", "mhattention", {**HF, "rope": "interleaved"}, adapters.HF_TIES + WIDE,
                         precision="float32"))


@HF_ONLY
def test_identify_names_hf_s_rotation():
    """--identify over the same 27 variants confirms HF's only: rotate-half at its default base, and finfo.min
    masking's mean of every value for a query with no key (empty=uniform)."""
    found = identify(f"{ADAPTERS}:hf_attention", "mhattention", options=FIXED, sizes=list(adapters.HF_TIES),
                     layout="rows", precision="float32", isolate=False, n_examples=4, max_size=9)
    assert len(found.trials) == 27
    assert [t.changes for t in found.confirmed] == [{"bias": False, "empty": "uniform", "rope": "half"}], \
        identify_text(found)


@HF_ONLY
@slow
def test_hf_llama_for_causal_lm_conforms_with_rotate_half():
    """HF's LlamaForCausalLM (2 key/value heads, untied lm_head, its rms_norm_eps) is Algorithm 10 with
    rope=half within float32's bounds; under rope=interleaved it fails."""
    options = {**STACK, "eps": adapters.HF_EPS, "rope": "half"}
    report = _conform("hf_causal_lm", "dtransformer", options, adapters.HF_STACK_TIES, precision="float32")
    assert report.ok, report.failure
    _fails_spec(_conform("hf_causal_lm", "dtransformer", {**options, "rope": "interleaved"},
                         adapters.HF_STACK_TIES + ("d_e=4*H",), precision="float32"))
