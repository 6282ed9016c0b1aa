"""The docs and the Sphinx extension ``formal.tools.sphinx``, read from the built HTML (no browser: see
test_browser.py for what a reader's browser shows): every algorithm has its page, every formula on it is
the derived one, the index finds an algorithm by its number, nothing is fetched from the network, the claims
are decided at build time, and the extension works in a user's own project and in the LaTeX builder."""

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reference.verification.process_tree import ctrl_c, descendants, ended, interruptible, needs_proc
from tests.tiers import fast_few, slow

sphinx = pytest.importorskip("sphinx")
pytest.importorskip("latex2mathml")

from formal import algorithms  # noqa: E402
from formal.engine.render import view  # noqa: E402
from formal.tools.sphinx.mathml import written  # noqa: E402


def _page(built, name) -> str:
    return (Path(built) / name).read_text(encoding="utf-8")


def _rows(page: str) -> list:
    """The rows of the page's numbered-lines table, each a list of cell HTML."""
    table = re.search(r'<table class="[^"]*formal-lines[^"]*".*?</table>', page, re.S).group(0)
    body = table.split("<tbody>", 1)[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


@slow
def test_every_algorithm_has_a_page_with_its_numbered_lines(built_docs):
    """One page per algorithm of ``list``, generated: its table has one row per line of the object, numbered
    1 … N, in order."""
    for name, algorithm in algorithms.ALGORITHMS.items():
        rows = _rows(_page(built_docs, f"algorithms/{name}.html"))
        assert [_text(r[0]) for r in rows] == [str(i) for i in range(1, len(algorithm.derivation.records) + 1)]


@slow
@pytest.mark.parametrize("name", ["mhattention", "layer_norm", "dtransformer", "window_mhattention"])
def test_every_formula_on_an_algorithm_page_is_the_derived_one(built_docs, name):
    """Each line, its shape and its FLOPs (matmul) are the MathML of the object's own derivation — the same
    LaTeX ``show --latex`` writes, a long one written a term (or an argument) per ``<math>`` so that it wraps —
    and so are the totals."""
    page = _page(built_docs, f"algorithms/{name}.html")
    v = view(algorithms.get(name))
    rows = _rows(page)
    for line, row in zip(v.lines, rows, strict=True):
        code = r"\quad " * line.level + (rf"\textbf{{for}}\ {line.latex}:" if line.loop else line.latex)
        assert written(code) in row[1]
        if line.shape_latex:
            assert written(line.shape_latex) in row[2]
        assert written(line.flops_latex["matmul"]) in row[3]
    for key in ("params", "flops", "memory", "depth"):
        assert written(v.totals["matmul"][key]) in page


@slow
def test_the_index_finds_algorithm_5_in_one_click(built_docs):
    """The general index has an entry "Algorithm 5" that links straight to the multi-head attention page."""
    index = _page(built_docs, "genindex.html")
    links = re.findall(r'<a href="([^"]+)">Algorithm 5</a>', index)
    assert any(link.startswith("algorithms/mhattention.html#") for link in links), links


@slow
def test_no_page_loads_anything_from_the_network(built_docs):
    """Scripts, stylesheets, images and fonts are all local: formulas are MathML written at build time, no
    MathJax, no CDN."""
    for page in Path(built_docs).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="((?:https?:)?//[^"]+)"', text)
        assert not remote, (page, remote)
        assert not re.search(r"<script[^>]*mathjax", text, re.I), page


@slow
def test_the_catalogue_page_shows_every_claim_with_its_verdict(built_docs):
    """Every claim of the shipped catalogue, decided when the pages were built, with its verdict and an anchor
    that ``:formal:claim:`` links to; none unexpected."""
    from formal.tools.claims.catalogue import files
    from formal.tools.claims.claim import load
    page = _page(built_docs, "objects/catalogue.html")
    ids = [c.id for path in files() for c in load(path)]
    verdicts = re.findall(r'class="[^"]*formal-verdict-(holds|fails|undecided|invalid)[^"]*"', page)
    assert len(verdicts) == len(ids) and "formal-verdict-unexpected" not in page
    for claim_id in ids:
        assert f'id="formal-claim-{claim_id}"' in page, claim_id


def _project(tmp_path, body: str) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["formal.tools.sphinx"]\n', encoding="utf-8")
    (source / "index.rst").write_text(body, encoding="utf-8")
    return source


def _build(source: Path, out: Path, builder="html"):
    from sphinx.cmd.build import build_main
    return build_main(["-W", "-q", "-b", builder, str(source), str(out)])


@slow
def test_a_users_project_renders_with_one_line_of_conf(tmp_path):
    """``extensions = ["formal.tools.sphinx"]`` is all a project needs: an algorithm with options, a model, a
    pattern, a theorem, a claim and the roles build without warnings."""
    body = ("Title\n=====\n\n.. formal:algorithm:: mhattention\n   :options: n_kv_heads=2\n   :convention: all\n\n"
            ".. formal:model:: gpt2\n\n.. formal:pattern:: sliding_window\n   :args: ell=8, window=3\n\n"
            ".. formal:theorem:: softmax-shift-invariance\n\n.. formal:claim:: swin-t-28m\n\n"
            "See :formal:alg:`mhattention` and :formal:sym:`d_attn`.\n")
    source = _project(tmp_path, body)
    assert _build(source, tmp_path / "out") == 0
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "grouped-query attention" in page and "FLOPs (kaplan)" in page and "124,439,808" in page
    assert 'class="formal-mask"' in page and "formal-verdict-holds" in page


def test_the_pattern_directive_shows_the_report_of_its_args(tmp_path):
    """``formal:pattern`` takes the pattern's parameters as ``graph`` does (:mod:`formal.graphs.schema`) and
    shows :func:`formal.graphs.report`'s figures: the same data, the same numbers as the command."""
    from formal import graphs
    r = graphs.report("sliding-window", n=16, window=5, causal=False)
    source = _project(tmp_path, "Title\n=====\n\n.. formal:pattern:: sliding-window\n"
                                "   :args: n=16, window=5, bidirectional=true\n")
    assert _build(source, tmp_path / "out") == 0
    page = _text((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    assert f"{r['edges']:,} edges of {r['ell_z'] * r['ell_x']:,} pairs ({r['density']:.1%})" in page
    assert re.search(rf"Layers to full coverage:\s*{r['layers']['layers_to_coverage']}\b", page)


def test_the_theorem_directive_without_the_proofs_says_so(tmp_path, capsys, monkeypatch):
    """The extension imports the theorems from ``proofs`` when a page shows one; where they cannot be imported
    the build fails with a line saying so (not a traceback)."""
    import sys
    monkeypatch.setitem(sys.modules, "proofs.registry", None)      # import proofs.registry raises ImportError
    source = _project(tmp_path, "Title\n=====\n\n.. formal:theorem:: softmax-shift-invariance\n")
    assert _build(source, tmp_path / "out") != 0
    assert "no theorems: proofs cannot be imported" in capsys.readouterr().err


@pytest.mark.parametrize("directive, message", fast_few([
    (".. formal:algorithm:: nosuch", "unknown algorithm 'nosuch'"),
    (".. formal:algorithm:: attention\n   :options: nosuch=1", "attention has no option 'nosuch'"),
    (".. formal:algorithm:: attention\n   :convention: flops", "unknown convention 'flops'"),
    (".. formal:model:: nosuch", "unknown preset 'nosuch'"),
    (".. formal:claim:: nosuch", "not in the catalogue"),
    (".. formal:pattern:: nosuch", "unknown pattern 'nosuch'"),
    (".. formal:pattern:: full\n   :args: n=8, window=2", "window does not apply to the full pattern"),
    (".. formal:pattern:: full\n   :args: n=8, max_memory=1T", "max_memory is not a parameter of a pattern"),
    (".. formal:pattern:: sliding_window\n   :args: n=16, window=5, window=6", "'window' is given twice"),
    (".. formal:pattern:: sliding_window\n   :args: n=16; window=5",
     "its parameters (:args: KEY=VALUE, …): n (required), window (required)"),
    (".. formal:model::", "formal:model needs a preset name or :file: PATH.toml"),
    (".. formal:claims:: nosuch.toml", "nosuch.toml"),
    ("See :formal:sym:`nosuch`.", "'nosuch' is not a size symbol"),
], keep=3, unpack=True))
def test_a_bad_entry_is_a_warning_naming_it(tmp_path, capsys, directive, message):
    """A directive the objects cannot render is a warning that names what is wrong — a failed build under -W."""
    source = _project(tmp_path, f"Title\n=====\n\n{directive}\n")
    assert _build(source, tmp_path / "out") != 0
    assert message in capsys.readouterr().err


def test_the_latex_builder_renders_the_same_model(tmp_path):
    """The LaTeX builder gets the same lines: the LaTeX of each line of the :class:`~formal.engine.render.View`,
    which ``show --latex`` writes too."""
    source = _project(tmp_path, "Title\n=====\n\n.. formal:algorithm:: layer_norm\n")
    assert _build(source, tmp_path / "out", "latex") == 0
    tex = next((tmp_path / "out").glob("*.tex")).read_text(encoding="utf-8")
    for line in view(algorithms.get("layer_norm")).lines:
        assert line.latex in tex


def test_a_second_build_after_the_worker_was_collected_checks_its_theorems_itself(monkeypatch):
    """The worker of an earlier build in this process, once collected, leaves no results to read: the next build
    checks its theorems itself instead of failing."""

    from formal.tools.sphinx import theorems
    monkeypatch.setattr(theorems, "_WORKER", {"owner": os.getpid()})       # what a collected worker leaves
    assert theorems._collected() == {}


def test_a_theorem_entry_shows_its_result_unless_asked_not_to(tmp_path):
    """The entry shows the theorem's result when the docs were built — the proof's verdict and detail, the twin's
    verdict and counterexample — the same as ``prove`` gives; ``:no-result:`` leaves the result out."""
    from proofs.registry import prove
    result, = prove(["kaplan-n"])
    source = _project(tmp_path, "Title\n=====\n\n.. formal:theorem:: kaplan-n\n\n"
                                ".. formal:theorem:: generation-growth\n   :no-result:\n")
    assert _build(source, tmp_path / "out") == 0
    page = _text((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    assert re.search(r"Result:\s*proved:", page) and _text(result.detail) in page
    assert re.search(r"Twin:\s*rejected:", page) and _text(result.counterexample) in page
    assert page.count("Result:") == 1, "the entry with :no-result: shows no result"


@slow
@needs_proc
def test_ctrl_c_during_a_build_leaves_no_theorem_worker(tmp_path):
    """The theorems are checked in a child of the execution layer while the pages are read; SIGINT to the build's
    process group, as a terminal sends it, ends the build, and the child (in a session of its own, which the signal
    does not reach) ends with it: no process is left."""
    body = "Title\n=====\n\n.. formal:theorem:: softmax-shift-invariance\n\n.. formal:algorithm:: dtransformer\n"
    source = _project(tmp_path, body)
    process = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(source), str(tmp_path / "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=interruptible)
    started = []

    def checking():
        started[:] = [p for p in descendants(process.pid) if b"formal.tools.sphinx.theorems:_send" in _cmdline(p)]
        return bool(started)
    ctrl_c(process, checking)
    assert process.returncode != 0
    assert ended(started)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
