"""The ``formal`` directives a user puts in a project of their own, read from the built HTML: a claims file and a
model configuration of one's own, presets side by side, the theorems' summary, what an algorithm entry offers
beside its lines (a call and commands to copy, links to what is related), and long formulas written so that
they wrap."""

import html
import re
from pathlib import Path

import pytest

from tests.tiers import slow

sphinx = pytest.importorskip("sphinx")
pytest.importorskip("latex2mathml")

CLAIMS = '''
[[claim]]
id = "my-mha-params"
says = "multi-head attention has 4·d² parameters"
source = "my slides"
note = "with biases it has 4·d² + 4·d"
algorithm = "mhattention"
options = { bias = false }
sizes = { d_x = 64, d_z = 64, d_out = 64, H = 8, d_attn = 8, d_mid = 8 }
quantity = "params"
equals = 16384
expect = "holds"

[[claim]]
id = "my-gpt2-117m"
says = "GPT-2 small has 117M parameters"
source = "the GPT-2 paper"
note = "OpenAI later corrected it to 124M"
model = "gpt2"
quantity = "params.total"
approx = "117M"
expect = "fails"
'''

CONFIG = '''
name = "tiny-gpt"
algorithm = "dtransformer"
seq_len = 128
[options]
norm_position = "pre"
[sizes]
N_V = 1000
ell_max = 128
d_e = 64
L = 2
H = 4
d_mlp = 256
'''


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def _build(tmp_path, body: str, files=None) -> str:
    from sphinx.cmd.build import build_main
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["formal.tools.sphinx"]\n', encoding="utf-8")
    (source / "index.rst").write_text(body, encoding="utf-8")
    for name, text in (files or {}).items():
        (source / name).write_text(text, encoding="utf-8")
    assert build_main(["-W", "-q", "-b", "html", str(source), str(tmp_path / "out")]) == 0
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def test_a_claims_file_of_ones_own_is_decided_and_tabled(tmp_path):
    """``formal:claims FILE`` decides the user's claims when the docs build, as ``check FILE`` does: one row
    each with what was claimed and derived, the verdict against the file's ``expect`` and the note."""
    from formal.tools.commands.check import run_files
    (tmp_path / "claims.toml").write_text(CLAIMS, encoding="utf-8")
    verdicts = {v.claim.id: v for v in run_files([str(tmp_path / "claims.toml")])}
    page = _build(tmp_path, "Title\n=====\n\n.. formal:claims:: claims.toml\n\n"
                            "See :formal:claim:`my-gpt2-117m`.\n", {"claims.toml": CLAIMS})
    text = _text(page)
    assert verdicts["my-mha-params"].verdict == "holds" and verdicts["my-gpt2-117m"].verdict == "fails"
    assert "2 claims: 1 holds, 1 fails" in text
    assert "fails (as expected)" in text and "OpenAI later corrected it to 124M" in text
    assert "with biases it has 4·d² + 4·d" in text
    assert 'href="#formal-claim-my-gpt2-117m"' in page and 'id="formal-claim-my-gpt2-117m"' in page
    assert f"{verdicts['my-gpt2-117m'].derived:,}" in text, "the derived value is shown"


def test_one_claim_of_ones_own_file(tmp_path):
    page = _build(tmp_path, "Title\n=====\n\n.. formal:claim:: my-gpt2-117m\n   :file: claims.toml\n",
                  {"claims.toml": CLAIMS})
    text = _text(page)
    assert "Claim my-gpt2-117m:" in text and "fails (as expected)" in text
    assert re.search(r"Claimed\s*:\s*approx 117M", text)


def test_a_model_configuration_of_ones_own(tmp_path):
    """``formal:model :file: CONFIG`` shows the figures ``complexity --config`` prints for it."""
    from formal.models.complexity import Model, report
    from formal.models.config import load_config
    (tmp_path / "tiny.toml").write_text(CONFIG, encoding="utf-8")
    _, algorithm, options, sizes, seq_len = load_config(str(tmp_path / "tiny.toml"))
    figures = report(Model(algorithm, options), sizes, seq_len=seq_len)
    page = _text(_build(tmp_path, "Title\n=====\n\n.. formal:model::\n   :file: tiny.toml\n", {"tiny.toml": CONFIG}))
    assert f"{figures['params']['total']:,}" in page
    assert f"{figures['flops']['forward_per_token']:,}" in page
    assert "(derived)" in page, "the sizes the configuration leaves to the rules are marked derived"


def test_presets_side_by_side(tmp_path):
    """``formal:models`` puts presets in one table: each one's parameters as ``complexity`` counts them."""
    from formal.models.complexity import preset_report
    page = _build(tmp_path, "Title\n=====\n\n.. formal:models:: gpt2 gpt2-medium\n")
    table = re.search(r'<table class="[^"]*formal-family.*?</table>', page, re.S).group(0)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
    assert len(rows) == 2
    for name, row in zip(("gpt2", "gpt2-medium"), rows):
        r = preset_report(name)
        assert name in _text(row) and f"{r['params']['total']:,}" in _text(row)


@slow
def test_the_theorems_page_has_a_summary_of_results(built_docs):
    """The theorems page opens with one row per declared theorem and the counts, from a run at build time."""
    from proofs.registry import theorems
    page = _text((Path(built_docs) / "objects/theorems.html").read_text(encoding="utf-8"))
    n = len(theorems())
    assert f"{n} theorems: {n} proved, {n} twins rejected" in page


@slow
def test_an_algorithm_entry_offers_a_call_and_commands_and_links(built_docs):
    """Each algorithm page has the Python call and the ``conform`` command to copy, and links to the algorithms
    it calls, the theorems about it and the catalogue's claims about it."""
    from formal import algorithms
    from formal.engine.render import callees
    from formal.tools.claims.catalogue import files
    from formal.tools.claims.claim import load
    from proofs.registry import theorems
    about = {c.id: c.subject.get("algorithm") for path in files() for c in load(path)}
    for name in algorithms.ALGORITHMS:
        page = (Path(built_docs) / f"algorithms/{name}.html").read_text(encoding="utf-8")
        text = _text(page)
        assert f'algorithms.get("{name}")' in text, name
        assert f"formal-transformers conform path/to/yours.py:FUNCTION --algorithm {name}" in text, name
        for callee in callees(algorithms.get(name)):
            assert f'href="{callee}.html#formal-algorithm-{callee}"' in page, (name, callee)
        for t in theorems():
            if name in t.about:
                assert f"formal-theorem-{t.name}" in page, (name, t.name)
        for claim_id, subject in about.items():
            if subject == name:
                assert f"formal-claim-{claim_id}" in page, (name, claim_id)


def test_a_long_formula_is_written_one_term_per_math_element():
    """A sum longer than :data:`~formal.tools.sphinx.mathml.LONG` is cut before its top-level + and −, never inside
    braces or brackets, so it can wrap; the pieces put together are the formula."""
    from formal.tools.sphinx.mathml import LONG, _converted, terms
    latex = r"2 H d_{\mathrm{attn}} \ell_{x} + \left(a - b\right) \ell^{2} - 4 e^{-x} + \frac{d_{x} + 1}{2}"
    parts = terms(latex)
    assert parts == [r"2 H d_{\mathrm{attn}} \ell_{x}", r"+ \left(a - b\right) \ell^{2}", "- 4 e^{-x}",
                     r"+ \frac{d_{x} + 1}{2}"]
    assert "".join(parts).replace(" ", "") == latex.replace(" ", "")
    assert len(latex) > LONG and _converted(latex, None, False).count("<math") == len(parts)
    assert terms("-a + b") == ["-a", "+ b"] and terms(r"x \cdot -1") == [r"x \cdot -1"]
