"""conform and ``--identify`` on code written the way widely used implementations write it: a head width tied
to the model width (GPT), a 4·d_e MLP, masking by a −10⁹ fill, a GAT layer as PyTorch Geometric writes it, a
paged-attention kernel taking a block table as vLLM's test oracle does.  Each correct one passes ``conform``
with the sizes it ties and the options it implements, and ``--identify`` finds those options without being
told; each with a planted bug fails, and no variant of the spec takes it for a correct one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reference.conformance.conform import conform
from reference.conformance.identify import identify
from tests.tiers import fast_few

ROOT = Path(__file__).parents[3]
TARGETS = Path(__file__).parent / "targets"
GPT_TIES = ("d_attn=d_x/H", "d_mid=d_x/H", "d_z=d_x", "d_out=d_x")
SMALL = {"n_examples": 4, "max_size": 9}
#: vLLM's oracle is torch code: it runs where torch is installed
def _have_torch() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except ImportError:   # hidden by an import hook
        return False


TORCH = pytest.mark.skipif(not _have_torch(), reason="the vLLM-style oracle needs torch")


def _buggy_gpt(tmp_path) -> str:
    """examples/gpt_tied.py with the scores divided by √n_embd instead of √(n_embd / n_head)."""
    text = (ROOT / "examples" / "gpt_tied.py").read_text()
    assert "/ np.sqrt(head)" in text
    path = tmp_path / "gpt_tied_bug.py"
    path.write_text(text.replace("/ np.sqrt(head)", "/ np.sqrt(n_embd)"))
    return f"{path}:mhattention"


# (target, algorithm, sizes, layout, what identify must confirm: a list of the options that differ from the
#  defaults, each confirmed variant's)
CORRECT = [
    pytest.param(f"{ROOT}/examples/gpt_tied.py:mhattention", "mhattention", GPT_TIES, "columns", [{}],
                 id="gpt-tied-head-width"),
    pytest.param(f"{TARGETS}/real_code.py:gpt_mlp", "mlp", ("d_mlp=4*d_e",), "columns",
                 [{"activation": "gelu-tanh"}], id="gpt-4de-mlp"),
    pytest.param(f"{TARGETS}/real_variants.py:masked_fill_attention", "attention", (), "columns",
                 [{"empty": "uniform"}], id="masked-fill-1e9"),
    pytest.param(f"{TARGETS}/pyg_gat.py:gat", "gat", (), "rows", [{}], id="pyg-gat"),
    pytest.param(f"{TARGETS}/vllm_paged.py:paged_attention", "paged_attention", (), "columns",
                 [{}, {"n_kv_heads": 1}, {"n_kv_heads": 2}], id="vllm-paged-kernel", marks=TORCH),
]

BUGGY = [
    pytest.param(None, "mhattention", GPT_TIES, "columns", id="gpt-tied-scale-by-n_embd"),
    pytest.param(f"{TARGETS}/real_code.py:gpt_mlp_bias_after_activation", "mlp", ("d_mlp=4*d_e",), "columns",
                 id="gpt-mlp-bias-after-gelu"),
    pytest.param(f"{TARGETS}/real_variants.py:masked_fill_attention_mask_unturned", "attention", (), "columns",
                 id="masked-fill-mask-untransposed"),
    pytest.param(f"{TARGETS}/pyg_gat.py:gat_softmax_by_source", "gat", (), "rows", id="pyg-gat-softmax-by-source"),
    pytest.param(f"{TARGETS}/vllm_paged.py:stale_slot_paged_attention", "paged_attention", (), "columns",
                 id="vllm-paged-slot-off-by-one", marks=TORCH),
]


@pytest.mark.parametrize("target, algorithm, sizes, layout, confirmed", fast_few(CORRECT, unpack=True))
def test_real_code_is_identified_and_conforms(target, algorithm, sizes, layout, confirmed):
    """--identify, told nothing but the ties, confirms exactly the variants the code implements; conform with
    those options passes."""
    found = identify(target, algorithm, sizes=list(sizes) or None, layout=layout, **SMALL)
    assert [t.changes for t in found.confirmed] == confirmed, [(t.changes, t.failure) for t in found.trials
                                                              if t.verdict != "pruned"][:3]
    report = conform(target, algorithm, options=found.confirmed[0].options, sizes=list(sizes) or None,
                     layout=layout, **SMALL)
    assert report.ok, report.failure


@pytest.mark.parametrize("target, algorithm, sizes, layout", fast_few(BUGGY, unpack=True))
def test_real_code_with_a_planted_bug_fails_under_every_variant(target, algorithm, sizes, layout, tmp_path):
    """A planted bug is no variant: --identify confirms none and names the nearest, each with the property it
    fails; conform under the correct copy's options fails."""
    target = target or _buggy_gpt(tmp_path)
    found = identify(target, algorithm, sizes=list(sizes) or None, layout=layout, **SMALL)
    assert not found.ok
    nearest = found.nearest()
    assert nearest and all(t.failure["property"] for t in nearest)
