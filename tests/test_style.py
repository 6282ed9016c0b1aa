"""Static checks: ``ruff check`` over the whole repository — pyflakes (unused and undefined names), pycodestyle's
errors and warnings, and the import order — as ``pyproject.toml``'s ``[tool.ruff]`` configures them."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list | None:
    """The command that runs ruff: the package of this interpreter's environment, or one on PATH."""
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def test_ruff_finds_nothing():
    command = _ruff()
    if command is None:
        pytest.skip("ruff is not installed (it is in the test extra: pip install -e '.[test]')")
    done = subprocess.run([*command, "check", "--no-cache", str(ROOT)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
