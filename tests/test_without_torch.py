"""The checking commands in an environment without torch: ``conform`` (and ``check``'s property and
implementation claims) run on numpy alone; where torch is needed — a function that imports it, ``--device cuda``,
``verify`` — the command says in one line how to install it, exit 2.  The tests of those tools are collected
there too.

Each command runs in a fresh interpreter in which ``import torch`` fails: a ``sitecustomize`` module, first on
``PYTHONPATH``, puts a finder before every other that raises ModuleNotFoundError for torch (and the conform
worker processes, started with the same environment, get it too)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tiers import slow

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install torch==2.13.0 'formal-transformers[torch]'"

BLOCK_TORCH = """
import sys


class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
"""


@pytest.fixture(scope="module")
def without_torch(tmp_path_factory):
    """``run(*argv)``: ``python -m formal *argv`` from the repository root, torch unimportable."""
    site = tmp_path_factory.mktemp("no_torch")
    (site / "sitecustomize.py").write_text(BLOCK_TORCH)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}

    def run(*argv, code=None):
        command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "formal", *argv]
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    return run


def _one_line_install(done, what):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [f"formal-transformers: error: {what} needs torch, which is not installed: "
                                        f"{INSTALL}"]
    assert "Traceback" not in done.stdout + done.stderr


def test_torch_cannot_be_imported_there(without_torch):
    done = without_torch(code="import torch")
    assert done.returncode == 1 and "No module named 'torch'" in done.stderr


def test_conform_passes_a_numpy_implementation(without_torch):
    """The README's first conform command: every property holds, exit 0."""
    done = without_torch("conform", "examples/attention.py:attention", "--algorithm", "attention")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("PASS")


@slow
def test_conform_of_a_function_that_imports_torch_says_to_install_it(without_torch):
    target = "examples/attention_rows_torch.py:attention"
    _one_line_install(without_torch("conform", target, "--algorithm", "attention", "--layout", "rows"), target)


@slow
def test_a_function_that_imports_torch_when_called_says_so_too(without_torch, tmp_path):
    module = tmp_path / "late.py"
    module.write_text(textwrap.dedent("""
        def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
            import torch
            return torch.zeros(1)
    """))
    done = without_torch("conform", f"{module}:attention", "--algorithm", "attention", "--examples", "1")
    _one_line_install(done, f"{module}:attention")


def test_conform_on_cuda_needs_torch(without_torch):
    done = without_torch("conform", "examples/attention.py:attention", "--algorithm", "attention", "--device",
                         "cuda")
    _one_line_install(done, "conform --device cuda")


def test_verify_needs_torch(without_torch):
    _one_line_install(without_torch("verify", "--only", "attention"), "verify")


@slow
def test_verify_mutants_runs_conform_without_torch(without_torch):
    """The kill rate measures conform, which needs no torch."""
    done = without_torch("verify", "--mutants", "--only", "layer_norm", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("kill rate 100.0%")


@slow
def test_property_and_implementation_claims_without_torch(without_torch, tmp_path):
    claims = tmp_path / "claims.toml"
    claims.write_text(textwrap.dedent(f"""
        [[claim]]
        id = "equivariant"
        says = "self-attention without a mask is permutation equivariant"
        algorithm = "attention"
        property = "permutation_equivariant"
        expect = "holds"

        [[claim]]
        id = "conforms"
        says = "the example attention conforms"
        algorithm = "attention"
        implementation = "{ROOT / 'examples' / 'attention.py'}:attention"
        expect = "holds"
    """))
    done = without_torch("check", str(claims))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 claims: 2 hold" in done.stdout


@slow
def test_the_checking_tests_are_collected_without_torch(without_torch):
    """The tests of the checking tools run where torch is missing, as the tools do: every module of
    tests/reference/conformance, tests/reference/verification and tests/sampling, and the records' tests, is
    collected but verify's, which skip (a test that drives torch skips itself)."""
    folders = ["tests/reference/conformance", "tests/reference/verification", "tests/sampling"]
    files = ["tests/reference/test_records.py"]
    done = without_torch(code="import sys, pytest; sys.exit(pytest.main(['--collect-only', '-q', '-p', "
                              f"'no:cacheprovider', *{folders + files!r}]))")
    assert done.returncode == 0, done.stdout + done.stderr
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    expected = {p.relative_to(ROOT).as_posix() for folder in folders for p in (ROOT / folder).glob("test_*.py")
                if not p.name.startswith("test_verify")}
    assert collected == expected | set(files), done.stdout
