"""A flag that would have no effect is refused — one line, exit 2 — never silently ignored: ``--device cuda`` where
torch sees no CUDA GPU, for every command that takes ``--device``, and ``verify --mutants --device …``, whose
catalogue is numpy checked by conform on the CPU (it ran on the CPU and exited 0 with ``--device cuda``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formal.tools.cli import main

EXAMPLE = "examples/attention.py:attention"
ROOT = Path(__file__).resolve().parent.parent


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch
    return torch.cuda.is_available()


def _one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("formal-transformers: error: "), (out, err)
    return err


@pytest.mark.parametrize("device", ["cuda", "cpu", "auto"])
def test_verify_mutants_refuses_a_device(capsys, device):
    """The issue: ``verify --mutants --device cuda`` on a machine without a GPU ran on the CPU and exited 0."""
    assert main(["verify", "--mutants", "--only", "attention", "--device", device, "--dry-run"]) == 2
    err = _one_line(capsys)
    assert f"--device {device}" in err and "--mutants" in err


def test_verify_mutants_without_a_device_runs(capsys):
    assert main(["verify", "--mutants", "--only", "attention", "--dry-run"]) == 0


@pytest.mark.skipif(_cuda(), reason="torch sees a CUDA GPU here: --device cuda has its effect")
@pytest.mark.parametrize("argv", [
    ["verify", "--device", "cuda", "--only", "attention", "--dry-run"],
    ["verify", "--device", "cuda", "--only", "attention", "--jobs", "1", "--quiet"],
    ["verify", "--mutants", "--device", "cuda", "--only", "attention"],
    ["conform", EXAMPLE, "--algorithm", "attention", "--device", "cuda"],
    ["conform", EXAMPLE, "--algorithm", "attention", "--device", "cuda", "--identify"],
    ["conform", EXAMPLE, "--algorithm", "attention", "--device", "cuda", "--in-process"],
])
def test_cuda_without_a_gpu_is_refused_by_every_command_that_takes_device(capsys, monkeypatch, argv):
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    err = _one_line(capsys)
    assert "cuda" in err


@pytest.mark.skipif(_cuda(), reason="torch sees a CUDA GPU here: --device cuda has its effect")
def test_the_speed_benchmark_refuses_cuda_without_a_gpu(tmp_path):
    """The GPU check's speed step (``benchmarks/bench_reference.py``) on a machine without a GPU: one line, exit 2,
    before anything is measured (it was a traceback from deep in the timing, or the verify runs' failure)."""
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_reference.py"), "--device", "cuda",
                           "--skip-verify", "--tiny", "--repeats", "1", "--seq-len", "4"], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("bench_reference: --device cuda: ")
