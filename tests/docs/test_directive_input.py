"""A directive's invalid input is a build warning that names it, the page and the line — an error under
``sphinx-build -W`` — never a page built silently nor a traceback: an invalid claim (as ``check`` exits 2 on it),
a file that cannot be read, an option without its value or two options that contradict each other."""

import contextlib
import io
import re

import pytest

from tests.tiers import fast_few

sphinx = pytest.importorskip("sphinx")
pytest.importorskip("latex2mathml")

VALID = '''
[[claim]]
id = "mha-params"
says = "attention without biases has 3·d² parameters at d = 4"
source = "a test"
algorithm = "attention"
options = { bias = false }
sizes = { d_x = 4, d_z = 4, d_attn = 4, d_out = 4 }
quantity = "params"
equals = 48
'''

INVALID = '''
[[claim]]
id = "unknown-quantity"
says = "attention has a cost no one defined"
source = "a test"
algorithm = "attention"
sizes = { d_x = 4, d_z = 4, d_attn = 4, d_out = 4 }
quantity = "nosuch"
equals = 3
'''


def _build(tmp_path, body: str, files=None, *, strict: bool = True, dirs=()) -> tuple:
    """``(status, log, page)`` of a one-page project with ``body``, built with ``-W`` unless ``strict=False``."""
    from sphinx.cmd.build import build_main
    source = tmp_path / "src"
    source.mkdir(parents=True)
    (source / "conf.py").write_text('extensions = ["formal.tools.sphinx"]\n', encoding="utf-8")
    (source / "index.rst").write_text(f"Title\n=====\n\n{body}\n", encoding="utf-8")
    for name, content in (files or {}).items():
        path = source / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content, encoding="utf-8")
    for name in dirs:
        (source / name).mkdir()
    log = io.StringIO()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        status = build_main([*(["-W"] if strict else []), "-q", "-b", "html", str(source), str(tmp_path / "out")])
    page = tmp_path / "out" / "index.html"
    return status, log.getvalue(), page.read_text(encoding="utf-8") if page.exists() else ""


def _warned(log: str, *words) -> bool:
    """Whether the log has a warning (or a docutils error, which may run over several lines) at index.rst's
    line 4 holding every word."""
    entries = re.split(r"\n(?=\S*index\.rst:\d+: )", log)
    return any(re.match(r"\S*index\.rst:4: (WARNING|ERROR)", entry) and all(w in entry for w in words)
               for entry in entries)


def test_an_invalid_claim_in_a_claims_file_fails_a_strict_build(tmp_path):
    """``formal:claims FILE`` with a claim of an unknown quantity: a warning names the claim, its file and why (the
    line ``check`` prints before it exits 2), so ``-W`` fails the build; the page, built without ``-W``, still
    shows the claim as invalid."""
    files = {"claims.toml": VALID + INVALID}
    status, log, _ = _build(tmp_path / "strict", ".. formal:claims:: claims.toml", files)
    assert status != 0 and "Traceback" not in log
    assert _warned(log, "formal:claims claims.toml", "'unknown-quantity'", "is invalid", "quantity 'nosuch'")
    status, log, page = _build(tmp_path / "lenient", ".. formal:claims:: claims.toml", files, strict=False)
    assert status == 0 and _warned(log, "'unknown-quantity'", "is invalid") and "mha-params" in page
    assert "formal-verdict-invalid" in page


def test_the_summary_alone_warns_of_an_invalid_claim_too(tmp_path):
    """``:summary-only:`` shows counts only: an invalid claim counted there is a warning all the same."""
    status, log, _ = _build(tmp_path, ".. formal:claims:: claims.toml\n   :summary-only:",
                            {"claims.toml": VALID + INVALID})
    assert status != 0 and _warned(log, "'unknown-quantity'", "is invalid")


def test_one_invalid_claim_shown_fails_a_strict_build(tmp_path):
    """``formal:claim ID :file: FILE`` of an invalid claim: the warning names it."""
    status, log, _ = _build(tmp_path, ".. formal:claim:: unknown-quantity\n   :file: claims.toml",
                            {"claims.toml": VALID + INVALID})
    assert status != 0 and _warned(log, "'unknown-quantity'", "is invalid", "quantity 'nosuch'")


def test_a_valid_claims_file_builds_cleanly(tmp_path):
    """The warnings are for invalid claims only: a file of valid claims (one failing as a claim may) builds
    under ``-W``."""
    failing = VALID.replace('"mha-params"', '"wrong"').replace("equals = 48", 'equals = 49\nexpect = "fails"')
    status, log, page = _build(tmp_path, ".. formal:claims:: claims.toml\n\n.. formal:claim:: wrong\n"
                                         "   :file: claims.toml\n   :noindex:", {"claims.toml": VALID + failing})
    assert status == 0, log
    assert "mha-params" in page and "wrong" in page


@pytest.mark.parametrize("body, words", [
    (".. formal:claims:: claims.toml\n   :summary-only:\n   :no-summary:", ("contradict",)),
    (".. formal:claim:: mha-params\n   :file:", ('"formal:claim"', "argument required")),
    (".. formal:model::\n   :file:", ('"formal:model"', "argument required")),
])
def test_an_option_without_its_value_or_against_another_is_a_warning(tmp_path, body, words):
    """Two flags that contradict each other, or ``:file:`` with no path (it fell back to the catalogue, or to a
    preset named None), are warnings at the directive's line."""
    status, log, _ = _build(tmp_path, body, {"claims.toml": VALID})
    assert status != 0 and "Traceback" not in log and _warned(log, *words), log


@pytest.mark.parametrize("body, files, dirs, words", fast_few([
    (".. formal:claims:: missing.toml", {}, (), ("formal:claims missing.toml", "no such file")),
    (".. formal:claims:: folder.toml", {}, ("folder.toml",), ("not a regular file",)),
    (".. formal:claims:: binary.toml", {"binary.toml": b"\xff\xfe\x00"}, (), ("not UTF-8",)),
    (".. formal:claims:: broken.toml", {"broken.toml": "[[claim]\nid ="}, (), ("not valid TOML",)),
    (".. formal:claim:: x\n   :file: missing.toml", {}, (), ("formal:claim x", "no such file")),
    (".. formal:model::\n   :file: missing.toml", {}, (), ("formal:model missing.toml", "no such file")),
    (".. formal:pattern:: edgelist\n   :args: n=4, file=missing.txt", {}, (), ("formal:pattern edgelist",
                                                                                  "no such file")),
    (".. formal:algorithm:: attention\n   :convention: nope", {}, (), ("unknown convention 'nope'",)),
], unpack=True))
def test_a_file_that_cannot_be_read_or_a_bad_value_is_a_warning(tmp_path, body, files, dirs, words):
    """Every directive that reads a file or takes a value: a warning at its line naming what is wrong."""
    status, log, _ = _build(tmp_path, body, files, dirs=dirs)
    assert status != 0 and "Traceback" not in log and _warned(log, *words), log
