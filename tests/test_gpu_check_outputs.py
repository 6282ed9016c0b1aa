"""Every path the GPU check (``benchmarks/gpu_check.sh``) and its helpers write is checked before any work: a
directory, a FIFO, a link to nothing or a folder that takes no file where a JSON file is to go is one line on
stderr and exit status 2 — not a traceback after the first step (``OUTDIR/gpu_check.json`` a directory), nor a
FIFO silently replaced, nor a file of the user's written over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import gpu_check
    import gpu_steps
    return gpu_check, gpu_steps


def _hostile(folder: Path, kind: str) -> Path:
    """``folder/gpu_check.json`` made a ``kind`` of thing that is not a regular file."""
    path = folder / "gpu_check.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(folder / "nowhere")
    return path


def _run(argv, cwd):
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={**os.environ, "PYTHON": sys.executable})


def _one_line(done, prefix):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1 and done.stderr.startswith(prefix), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind, says", [("directory", "it is a directory"), ("fifo", "it is a FIFO"),
                                        ("link", "it is a link to nothing")])
def test_the_report_path_is_checked_before_any_step(tmp_path, kind, says):
    """The issue: ``OUTDIR/gpu_check.json`` a directory was a traceback after step 1 (a FIFO was replaced)."""
    out = tmp_path / "out"
    out.mkdir()
    _hostile(out, kind)
    done = _run(["bash", str(BENCHMARKS / "gpu_check.sh"), str(out), "--dry-run"], tmp_path)
    _one_line(done, "gpu_check: ")
    assert says in done.stderr and "gpu_check.json" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gpu_check.json"]      # nothing written beside it


def test_a_folder_that_takes_no_file_is_refused_and_nothing_is_made(tmp_path):
    done = _run(["bash", str(BENCHMARKS / "gpu_check.sh"), "/proc/self/out", "--dry-run"], tmp_path)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    done = _run(["bash", str(BENCHMARKS / "gpu_check.sh"), "/proc/self", "--dry-run"], tmp_path)
    _one_line(done, "gpu_check: ")
    assert "takes no new file" in done.stderr


def test_the_report_is_written_beside_no_file_of_the_users(tmp_path, bench):
    """Written through a temporary file of a name of its own: a ``gpu_check.json.partial`` the user keeps there
    (or a FIFO of that name, which writing would block on) is left as it was."""
    gpu_check, _ = bench
    (tmp_path / "gpu_check.json.partial").write_text("the user's")
    gpu_check._write({"verdict": "pass"}, tmp_path)
    assert json.loads((tmp_path / "gpu_check.json").read_text()) == {"verdict": "pass"}
    assert (tmp_path / "gpu_check.json.partial").read_text() == "the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_check.json", "gpu_check.json.partial"]


@pytest.mark.parametrize("kind", ["directory", "fifo", "link"])
def test_the_environment_helper_checks_its_file_first(tmp_path, kind):
    path = _hostile(tmp_path, kind)
    done = _run([sys.executable, str(BENCHMARKS / "gpu_environment.py"), str(path)], tmp_path)
    _one_line(done, "gpu_environment: ")


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_the_speed_helper_checks_its_json_first(tmp_path, kind):
    """``bench_reference.py --json FILE`` refuses a FILE it cannot write before it measures anything."""
    path = _hostile(tmp_path, kind)
    done = _run([sys.executable, str(BENCHMARKS / "bench_reference.py"), "--skip-verify", "--tiny", "--repeats",
                 "1", "--seq-len", "4", "--device", "cpu", "--json", str(path)], tmp_path)
    _one_line(done, "bench_reference: ")


def test_unwritable_says_why(tmp_path, bench):
    _, steps = bench
    assert steps.unwritable(tmp_path / "new.json") is None
    (tmp_path / "old.json").write_text("{}")
    assert steps.unwritable(tmp_path / "old.json") is None
    assert steps.unwritable(tmp_path / "missing" / "x.json").startswith("its folder")
    assert steps.unwritable(_hostile(tmp_path, "directory")) == "it is a directory"
    assert list(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []   # the probe is gone
