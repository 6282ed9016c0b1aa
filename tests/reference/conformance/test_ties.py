"""Fixed and tied sizes (``conform --size``, ``examples(sizes=)``): every example meets the ties by
construction, boundary cases say what their sizes are, bad ties are one clear error, and an implementation
that ties its sizes as GPT code does passes with the ties and fails without them."""

import importlib.util
import json
from pathlib import Path

import pytest

from formal import algorithms
from formal.errors import ConfigError
from formal.sampling.examples import examples
from formal.sampling.ties import Ties
from formal.tools.cli import main
from reference.conformance.conform import conform

ROOT = Path(__file__).resolve().parents[3]
GPT_TIES = ["d_attn=d_x/H", "d_mid=d_x/H", "d_z=d_x", "d_out=d_x"]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ties_are_ordered_after_what_they_read():
    """A chain d_x = H·d_attn, d_z = d_x, d_out = d_z is set in an order where each tie follows the sizes it
    reads, whatever order it was written in."""
    ties = Ties.parse(algorithms.get("mhattention"), ["d_out=d_z", "d_z=d_x", "d_x=H*d_attn"])
    assert ties.order == ("d_x", "d_z", "d_out")


def _gpt(s):
    return s["d_attn"] * s["H"] == s["d_mid"] * s["H"] == s["d_x"] == s["d_z"] == s["d_out"]


@pytest.mark.parametrize("sizes, holds", [
    (GPT_TIES, _gpt),
    (["d_x=H*d_attn", "d_z=d_x", "d_out=d_x", "d_mid=d_attn"], _gpt),
    (["d_attn=d_x/3"], lambda s: 3 * s["d_attn"] == s["d_x"]),
    (["d_attn=3*d_x/2"], lambda s: 2 * s["d_attn"] == 3 * s["d_x"]),
    (["H=4", "d_attn=d_x/H"], lambda s: s["H"] == 4 and 4 * s["d_attn"] == s["d_x"]),
])
def test_every_example_meets_the_ties_and_none_is_filtered(sizes, holds):
    """Each random example asked for is made (none dropped for breaking a tie), and every example, boundary
    cases included, satisfies every tie exactly: the generator raises d_x to a multiple where a quotient asks
    for one rather than drawing again."""
    n = 20
    out = examples("mhattention", n, sizes=sizes)
    assert sum(e.case == "random" for e in out) == n
    for e in out:
        assert holds(e.sizes) and min(e.sizes.values()) >= 1, e.describe()
        assert e.shape("X")[0] == e.sizes["d_x"]


@pytest.mark.parametrize("fraction, multiple", [(1.0, 2), (0.5, 4), (0.25, 8)])
def test_ties_meet_a_rotary_head_width_by_construction(fraction, multiple):
    """With rotary embeddings the head width's rotated share must be even: under GPT's ties (d_attn = d_x/H) that
    is a divisibility of a quotient, 2q | p·d_x/H, met by raising d_x to a multiple of q·2H/p — never by drawing
    again.  Before the generator could mend a quotient, this raised "no sizes satisfy"."""
    algorithm = algorithms.get("mhattention", rope="half", rope_fraction=fraction)
    out = examples(algorithm, 12, sizes=GPT_TIES)
    assert sum(e.case == "random" for e in out) == 12
    for e in out:
        assert _gpt(e.sizes) and e.sizes["d_attn"] % multiple == 0, e.describe()


def test_a_mapping_and_strings_give_the_same_examples():
    a = examples("mhattention", 6, sizes=["H=2", "d_attn=d_x/H"])
    b = examples("mhattention", 6, sizes={"H": 2, "d_attn": "d_x/H"})
    assert [e.sizes for e in a] == [e.sizes for e in b]


def test_a_fixed_size_relabels_or_drops_the_boundary_cases_it_overrides():
    """With H = 4 fixed, no case claims one head or several heads of another number: a case whose only pin is
    H is dropped, one that pins more says what H is."""
    out = examples("dtransformer", 4, sizes=["H=4"])
    assert all(e.sizes["H"] == 4 for e in out)
    labels = [e.case for e in out]
    for label in labels:
        if "head" in label:
            assert "H = 4" in label, label
    assert not any(label.startswith("heads and blocks at the largest") for label in labels)


def test_a_context_of_its_own_where_the_ties_forbid_self_attention():
    """d_z = 2·d_x cannot hold with Z = X: every example passes a Z of its own, twice as wide."""
    for e in examples("mhattention", 10, sizes=["d_z=2*d_x"]):
        assert "Z" in e.arguments and e.arguments["Z"].shape[0] == 2 * e.sizes["d_x"]


def test_a_tie_that_needs_a_larger_size_raises_it():
    """d_attn = d_x − 10 is positive from d_x = 11: every example draws d_x ≥ 11."""
    assert min(e.sizes["d_x"] for e in examples("mhattention", 10, sizes=["d_attn=d_x-10"])) >= 11


@pytest.mark.parametrize("algorithm, sizes, says", [
    ("dtransformer", ["ell_max=ell-1"], "contradicts"),
    ("layer_norm", ["d_e=1"], "2 ≤ d_e"),
    ("mhattention", ["d_e=4"], "its sizes: H, d_attn"),
    ("mhattention", ["ell_out=4"], "no size 'ell_out'"),
    ("mhattention", ["d_x=d_x+1"], "to itself"),
    ("mhattention", ["d_x=d_z", "d_z=d_out", "d_out=d_x"], "cycle"),
    ("mhattention", ["d_attn=d_x-100"], "d_x ≥ 101"),
    ("mhattention", ["d_attn=d_x-2*H"], "is 0 at"),
    ("mhattention", ["H=0"], "positive integer"),
    ("mhattention", ["H=3/2"], "positive integer"),
    ("mhattention", ["H=4", "H=5"], "given twice"),
    ("mhattention", ["H"], "NAME=EXPR"),
    ("mhattention", ["d_attn=sqrt(d_x)"], "ratio of polynomials"),
    ("mhattention", ["d_attn=(d_x+d_z)/H"], "one size times a number"),
    ("mhattention", ["d_attn=__import__('os')"], "d_attn"),
    ("mhattention", ["H=5000"], "at most 4096"),
    ("mhattention", "H=4", "NAME=EXPR strings"),
])
def test_a_bad_tie_is_one_clear_error(algorithm, sizes, says):
    with pytest.raises(ConfigError) as caught:
        examples(algorithm, 4, sizes=sizes)
    assert says in str(caught.value)


# ----------------------------------------------------------------------- GPT-style code: ties in conform
def test_gpt_code_fails_without_the_ties_and_passes_with_them():
    """examples/gpt_tied.py computes its head width as n_embd // n_head and asserts it: drawn freely, the
    sizes break its own asserts (a false FAIL of runs); with --size it conforms."""
    module = _load(ROOT / "examples" / "gpt_tied.py")
    free = conform(module.mhattention, "mhattention", isolate=False)
    assert not free.ok and free.failure["property"] == "runs" and "AssertionError" in free.failure["message"]
    tied = conform(module.mhattention, "mhattention", isolate=False, sizes=GPT_TIES)
    assert tied.ok, tied.failure
    assert tied.sizes == {"d_attn": "d_x/H", "d_mid": "d_x/H", "d_z": "d_x", "d_out": "d_x"}


def test_a_planted_bug_in_gpt_code_fails_with_the_ties(tmp_path):
    """The same code scaling its scores by √n_embd instead of √(head width) — a bug no tie hides — fails spec."""
    text = (ROOT / "examples" / "gpt_tied.py").read_text()
    assert "/ np.sqrt(head)" in text
    buggy = tmp_path / "gpt_buggy.py"
    buggy.write_text(text.replace("/ np.sqrt(head)", "/ np.sqrt(n_embd)"))
    report = conform(_load(buggy).mhattention, "mhattention", isolate=False, sizes=GPT_TIES)
    assert not report.ok and report.failure["property"] == "spec"


def test_the_cli_takes_size_and_reports_the_ties(capsys):
    argv = ["conform", str(ROOT / "examples" / "gpt_tied.py") + ":mhattention", "--algorithm", "mhattention",
            "--examples", "4", "--in-process"]
    ties = [a for tie in GPT_TIES for a in ("--size", tie)]
    assert main(argv + ties + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sizes"] == {"d_attn": "d_x/H", "d_mid": "d_x/H", "d_z": "d_x", "d_out": "d_x"}
    assert main(argv + ties) == 0
    assert "sizes fixed and tied: d_attn = d_x/H, d_mid = d_x/H, d_z = d_x, d_out = d_x" in capsys.readouterr().out
    assert main(argv + ["--size", "ell_max=4"]) == 2
    assert "no size 'ell_max'" in capsys.readouterr().err


def test_an_implementation_claim_passes_its_sizes_to_conform(tmp_path, capsys):
    """check's implementation claim takes the ties as a table (sizes = {d_attn = "d_x/H", …})."""
    claims = tmp_path / "claims.toml"
    claims.write_text(f"""
[[claim]]
id = "gpt-attention"
says = "GPT-style attention conforms where its sizes are tied"
algorithm = "mhattention"
implementation = "{ROOT / 'examples' / 'gpt_tied.py'}:mhattention"
sizes = {{d_attn = "d_x/H", d_mid = "d_x/H", d_z = "d_x", d_out = "d_x", H = 2}}
expect = "holds"
""")
    assert main(["check", str(claims)]) == 0, capsys.readouterr().out


def test_the_large_score_case_survives_ties_that_set_its_lengths():
    """A tie that sets every length the large-score case pins relabels that case but keeps it, and the example
    still knows it is that case (conform then checks it for shape and finiteness only)."""
    from formal.sampling.sizes import LARGE_SCORES
    cases = examples("attention", 2, sizes=["ell_x=3", "ell_z=3"])
    large = [e for e in cases if e.large]
    assert len(large) == 1 and large[0].case.startswith(LARGE_SCORES)
    assert large[0].sizes["ell_x"] == large[0].sizes["ell_z"] == 3
    assert not any(e.large for e in cases if e is not large[0])
