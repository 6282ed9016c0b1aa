"""Variants real code writes that the spec now names: attention masked by a large negative fill
(``empty="uniform"``), in the spec, the torch reference (every path) and ``conform`` — code written as widely
copied transformer code writes it passes under ``-o empty=uniform``, fails under the default on a query that
admits no key with a message that says so, and planted-bug copies fail."""

from pathlib import Path

import numpy as np
import pytest

from formal import algorithms
from formal.errors import ConfigError
from formal.graphs.message_passing import propagate_edges, propagate_loop
from formal.tools.cli import main
from tests.tiers import fast_few, slow

TARGETS = Path(__file__).parent / "targets"
REAL = f"{TARGETS}/real_variants.py"


def _inputs(seed, *, ell_z=4, ell_x=3, d=3, heads=None):
    """Attention's inputs in the spec's columns, with query 1 admitting no key and the others some."""
    rng = np.random.default_rng(seed)
    mask = (rng.random((ell_z, ell_x)) < 0.6).astype(float)
    mask[:, 1] = 0.0
    mask[0, [0, 2]] = 1.0
    lead = () if heads is None else (heads,)
    params = {"W_q": rng.normal(size=lead + (d, d)), "W_k": rng.normal(size=lead + (d, d)),
              "W_v": rng.normal(size=lead + (d, d)), "b_q": rng.normal(size=lead + (d,)),
              "b_k": rng.normal(size=lead + (d,)), "b_v": rng.normal(size=lead + (d,))}
    if heads is not None:
        params.update(W_o=rng.normal(size=(d, heads * d)), b_o=rng.normal(size=d))
    return {"X": rng.normal(size=(d, ell_x)), "Z": rng.normal(size=(d, ell_z)), "mask": mask, **params}


def test_spec_gives_a_query_without_keys_the_mean_of_every_value():
    """Under empty=uniform the column of a query that admits no key is the mean of the value columns
    (W_v Z + b_v, averaged over the ℓ_z keys); the other columns are those of the default policy."""
    kw = _inputs(0)
    uniform = algorithms.attention.variant(empty="uniform")(**kw)
    zero = algorithms.attention(**kw)
    values = kw["W_v"] @ kw["Z"] + kw["b_v"][:, None]
    np.testing.assert_allclose(uniform[:, 1], values.mean(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(zero[:, 1], 0.0)
    np.testing.assert_allclose(uniform[:, [0, 2]], zero[:, [0, 2]], rtol=1e-12)


@pytest.mark.parametrize("path", ["explicit", "sdpa"])
def test_reference_equals_spec_under_uniform_on_every_cpu_path(path):
    """Algorithms 4 and 5 under empty=uniform: the torch reference on the explicit and the fused path equals the
    spec in float64, the query without keys included."""
    pytest.importorskip("torch")
    from reference.model import attention as torch_attention
    from reference.model.convert import columns_to_rows, mask_to_rows, params_to_torch, rows_to_columns
    kw = _inputs(1)
    X, Z = columns_to_rows(kw["X"], device="cpu"), columns_to_rows(kw["Z"], device="cpu")
    mask = mask_to_rows(kw["mask"], 4, 3, device="cpu")
    names = ("W_q", "W_k", "W_v", "b_q", "b_k", "b_v")
    got = torch_attention.attention(X, Z, mask, empty="uniform", path=path, **params_to_torch({k: kw[k] for k in names},
                                                                                      device="cpu"))
    want = algorithms.attention.variant(empty="uniform")(**kw)
    np.testing.assert_allclose(rows_to_columns(got), want, rtol=1e-10, atol=1e-12)

    kw = _inputs(2, heads=2)
    X, Z = columns_to_rows(kw["X"], device="cpu"), columns_to_rows(kw["Z"], device="cpu")
    names += ("W_o", "b_o")
    got = torch_attention.mhattention(X, Z, mask_to_rows(kw["mask"], 4, 3, device="cpu"), empty="uniform", path=path,
                             **params_to_torch({k: kw[k] for k in names}, device="cpu"))
    want = algorithms.mhattention.variant(empty="uniform")(**kw)
    np.testing.assert_allclose(rows_to_columns(got), want, rtol=1e-10, atol=1e-12)


def test_executors_along_edges_refuse_uniform():
    """A graph's edges have no dense row of scores to fill: every edge executor names the policy it refuses (the
    torch one where torch is installed)."""
    kw = _inputs(3)
    Q, K, V = kw["X"], kw["Z"][:, :4], kw["Z"][:, :4]
    mask = np.ones((4, 3))
    runs = [lambda: propagate_loop(mask, Q, K, V, empty="uniform"),
            lambda: propagate_edges(mask, Q, K, V, empty="uniform")]
    try:
        import torch

        from reference.model import message_passing as graph_attention
    except ImportError:
        pass
    else:
        runs.append(lambda: graph_attention.attend_edges(*(torch.ones(1, 1, 3, 2) for _ in range(3)),
                                                         torch.tensor([0]), torch.tensor([0]), empty="uniform"))
    for run in runs:
        with pytest.raises(ConfigError, match="'uniform'.*graph's edges"):
            run()


def _conform(capsys, function, *args):
    status = main(["conform", f"{REAL}:{function}", "--algorithm", "attention", *args])
    return status, capsys.readouterr().out


def test_large_negative_fill_attention_conforms_under_uniform(capsys):
    """Attention written with ``masked_fill(mask == 0, -1e9)`` (tokens as rows) passes every property under
    -o empty=uniform, the query with no admitted key included."""
    status, out = _conform(capsys, "masked_fill_attention", "-o", "empty=uniform")
    assert status == 0, out
    assert "PASS" in out.splitlines()[-1]


def test_large_negative_fill_attention_fails_the_default_on_a_query_without_keys(capsys):
    """Under the default empty=zero the same code fails the spec on a query that admits no key, and the
    message says that the query admits none and names the option that fits."""
    status, out = _conform(capsys, "masked_fill_attention")
    assert status == 1, out
    assert "FAIL spec" in out
    assert "admits no key" in out and "empty='zero'" in out and "-o empty=uniform" in out


@pytest.mark.parametrize("function", ["masked_fill_attention_mask_unturned", "masked_fill_attention_fill_positive"])
def test_planted_bugs_in_large_negative_fill_attention_fail(capsys, function):
    """Copies with one bug planted — the spec's key × query mask used untransposed as the rows' mask, hidden
    scores filled with +10⁹ — fail under -o empty=uniform."""
    status, out = _conform(capsys, function, "-o", "empty=uniform")
    assert status == 1, out
    assert "FAIL spec" in out


# ------------------------------------------------------------------------------------------------ seq2seq
SEQ2SEQ_SIZES = {"N_V": 6, "d_e": 3, "d_h": 2, "d_a": 3, "ell_z": 4, "ell_x": 3}


def _seq2seq_arguments(model, seed):
    from formal.core.symbols import by_name
    rng = np.random.default_rng(seed)
    params = {p.name: rng.normal(size=tuple(int(d.xreplace({by_name(k): v for k, v in SEQ2SEQ_SIZES.items()}))
                                            for d in p.shape)) for p in model.params}
    return rng.integers(0, 6, 4), rng.integers(0, 6, 3), params


@pytest.mark.parametrize("options", [
    {"align_bias": True},
    {"attention": "luong", "align_bias": True},
    {"output": "state_context_embedding"},
    {"attention": "none", "output": "embedding_state_context", "cell": "lstm"},
    {"bias": "double", "reset": "after", "align_bias": True, "output": "state_context_embedding"},
])
def test_seq2seq_reference_equals_spec_under_the_new_options(options):
    """The torch reference (reference.model.seq2seq) equals the spec in float64 under align_bias and output."""
    torch = pytest.importorskip("torch")
    from reference.model.convert import params_to_torch
    from reference.model.seq2seq import seq2seq
    model = algorithms.get("seq2seq", **options)
    z, x, params = _seq2seq_arguments(model, 4)
    got = seq2seq(torch.as_tensor(z)[None], torch.as_tensor(x)[None], params_to_torch(params, device="cpu"),
                  model.options)[0]
    np.testing.assert_allclose(got.numpy().T, model(z=z, x=x, **params), rtol=1e-10, atol=1e-12)


def _conform_seq2seq(capsys, name, options):
    args = [arg for key, value in options.items() for arg in ("-o", f"{key}={value}")]
    status = main(["conform", f"{TARGETS}/catalogue.py:{name}", "--algorithm", "seq2seq", *args])
    return status, capsys.readouterr().out


@slow
def test_torch_style_seq2seq_conforms_under_its_options_only(capsys):
    """The seq2seq-with-attention code as widely copied (rows, nn.Linear weights, torch's GRU, attn over
    cat(hidden, encoder_outputs), fc_out over cat(output, weighted, embedded)) passes under the options that
    name what it computes, and fails when align_bias or output is left at its default."""
    from reference.catalogue.seq2seq import TORCH_STYLE
    status, out = _conform_seq2seq(capsys, "seq2seq_correct_torch_style", TORCH_STYLE)
    assert status == 0, out
    for left_out in ("align_bias", "output"):
        status, out = _conform_seq2seq(capsys, "seq2seq_correct_torch_style",
                                       {k: v for k, v in TORCH_STYLE.items() if k != left_out})
        assert status == 1, (left_out, out)


@pytest.mark.parametrize("name", fast_few(["seq2seq_torch_style_attn_without_bias",
                                           "seq2seq_torch_style_cat_order_mismatch",
                                           "seq2seq_torch_style_readout_order"]))
def test_torch_style_seq2seq_with_a_planted_bug_fails(capsys, name):
    """Copies of that code with one bug planted — attn without its bias, attn's weight laid out for the other
    cat order, fc_out's parts in another order — fail the spec under the same options."""
    from reference.catalogue.seq2seq import TORCH_STYLE
    status, out = _conform_seq2seq(capsys, name, TORCH_STYLE)
    assert status == 1, out
    assert "FAIL spec" in out
