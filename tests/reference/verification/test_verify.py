"""`formal-transformers verify`: the table, the atomic JSON report, a fault in the reference caught, bad
usage as one line with exit 2, and the CUDA run (marked ``gpu``: skipped without a GPU)."""

import json

import numpy as np
import pytest

from formal.tools.cli import main
from tests.tiers import slow

torch = pytest.importorskip("torch")  # verify runs the torch reference
from reference.model import normalization  # noqa: E402 - the torch reference: imported where torch is


@slow
def test_verify_passes_and_writes_the_json_report(capsys, tmp_path):
    report = tmp_path / "report.json"
    status = main(["verify", "--only", "attention,layer_norm,dloss", "--device", "cpu", "--json", str(report)])
    out = capsys.readouterr().out
    assert status == 0, out
    data = json.loads(report.read_text())
    assert data["verdict"] == "pass" and data["device"] == "cpu"
    checks = {(r["algorithm"], r["check"]) for r in data["rows"]}
    assert {("attention", "float64 sdpa"), ("attention", "matmul FLOPs"), ("dloss", "SGD step"),
            ("layer_norm", "bfloat16")} <= checks
    assert all(r["examples"] > 0 and r["verdict"] == "pass" for r in data["rows"])
    assert list(tmp_path.iterdir()) == [report]  # no temporary file left beside it
    assert out.splitlines()[-1].startswith(f"{len(data['rows'])} passed, 0 failed")


def test_verify_catches_a_fault_in_the_reference(capsys, monkeypatch):
    """An unbiased variance planted in the reference's layer norm: the float64 check fails, exit 1."""
    def unbiased(e, gamma, beta=None, *, norm="layer", eps=0.0):
        centred = e - e.mean(-1, keepdim=True)
        return centred / torch.sqrt(centred.square().sum(-1, keepdim=True) / (e.shape[-1] - 1) + eps) * gamma + beta
    monkeypatch.setattr(normalization, "layer_norm", unbiased)  # here: worker processes would not see it
    status = main(["verify", "--only", "layer_norm", "--device", "cpu", "--jobs", "1"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("layer_norm")]
    assert status == 1
    assert ["layer_norm", "float64"] == rows[0][:2] and "FAIL" in rows[0]


@pytest.mark.parametrize("args, message", [
    (["--only", "nope"], "verify knows no algorithm 'nope'"),
    (["--only", "attention", "--json", "/nonexistent-folder/r.json"], "does not exist"),
    (["--profile", "slow"], "invalid choice"),
])
def test_verify_bad_usage(capsys, args, message):
    assert main(["verify", "--device", "cpu", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_cuda_without_a_gpu_is_a_usage_error(capsys):
    assert main(["verify", "--device", "cuda"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.gpu
def test_verify_on_cuda(capsys):
    """The reference runs on CUDA unchanged: every check of the attention family and GPT-style decoder,
    the FlexAttention path included, passes there."""
    status = main(["verify", "--device", "cuda", "--only", "attention,mhattention,dtransformer,kv_dtransformer"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "bfloat16 flex" in out


@pytest.mark.gpu
def test_third_party_gpt2_on_cuda():
    """HF GPT-2 on the GPU equals the reference on the GPU (float64), weights read by the converter."""
    transformers = pytest.importorskip("transformers")
    from reference.model import architectures as stacks, third_party
    from reference.model.convert import params_to_torch
    config = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=32, n_layer=2, n_head=4,
                                     bos_token_id=None, eos_token_id=None)
    model = transformers.GPT2LMHeadModel(config).double().eval().cuda()
    params, options = third_party.from_gpt2(model)
    x = torch.tensor(np.arange(10) % 50, device="cuda")[None]
    with torch.no_grad():
        want = model(x).logits
        got = stacks.dtransformer(x, params_to_torch(params, device="cuda"), options, path="sdpa")
    assert torch.max(torch.abs(want - got)).item() <= 1e-10
