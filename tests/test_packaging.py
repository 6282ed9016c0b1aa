"""What the package declares of itself and what a wheel of it holds: the MIT license and its file, valid
classifiers that agree with ``requires-python``, ``py.typed`` shipped with ``formal``, the changelog.  The
wheel is built offline from a copy of the sources (no build isolation, no index)."""

import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.tiers import slow

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: The top-level categories of PyPI's classifiers (https://pypi.org/classifiers/).
CATEGORIES = ("Development Status", "Environment", "Framework", "Intended Audience", "License", "Natural Language",
              "Operating System", "Programming Language", "Topic", "Typing")


def test_the_license_file_is_the_declared_license():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the formal-transformers developers" in text
    assert "Permission is hereby granted, free of charge" in text and 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_classifiers_are_well_formed_and_agree_with_requires_python():
    classifiers = PROJECT["classifiers"]
    assert len(set(classifiers)) == len(classifiers)
    for c in classifiers:
        assert re.fullmatch(r"[A-Z][\w ]+( :: [\w ./+()-]+)+", c), c
        assert c.split(" :: ")[0] in CATEGORIES, c
    assert not any(c.startswith("License ::") for c in classifiers)      # PEP 639: the SPDX expression says it
    lowest = tuple(map(int, re.fullmatch(r">=(\d+)\.(\d+)", PROJECT["requires-python"]).groups()))
    versions = [tuple(map(int, c.rsplit(" ", 1)[1].split("."))) for c in classifiers
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert min(versions) == lowest and versions == sorted(versions)
    assert ("Typing :: Typed" in classifiers) == (ROOT / "formal" / "py.typed").exists()


def test_the_changelog_keeps_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "keepachangelog.com" in text
    assert re.search(rf"^## \[{re.escape(PROJECT['version'])}\]", text, re.M), "the version has an entry"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("setuptools < 77 cannot build PEP 639 metadata")
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for package in ("formal", "reference", "proofs"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(out), str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return zipfile.ZipFile(next(out.glob("*.whl")))


@slow
def test_the_wheel_ships_the_license_py_typed_and_the_metadata(wheel):
    names = wheel.namelist()
    assert "formal/py.typed" in names
    static = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "formal/tools/sphinx/static").iterdir())
    assert static and set(static) <= set(names), f"the Sphinx extension's static files not in the wheel: {static}"
    license_file = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert wheel.read(license_file) == (ROOT / "LICENSE").read_bytes()
    metadata = Parser().parsestr(wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    assert metadata.get_all("Classifier") == PROJECT["classifiers"]
    assert metadata["Keywords"].split(",") == PROJECT["keywords"]
    assert any(n.startswith("formal/models/data/") and n.endswith(".json") for n in names)
