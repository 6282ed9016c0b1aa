"""A claim about a graph takes the pattern's parameters as data (formal.graphs.schema): never the command
line's flags — a ``help``, a prefix of ``--max-memory`` or the memory limit itself in ``args`` is an invalid
claim, reported in one line, and the file's other claims are still decided."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from formal import graphs
from formal.tools.claims import check_text
from formal.tools.cli import main

GOOD = '[[claim]]\nid = "good"\ngraph = "full"\nargs = { n = 8 }\nquantity = "edges"\nequals = 64\n'
HOSTILE = {"help": "1", "max": '"8G"', "max_memory": '"1T"'}


def _file(tmp_path) -> str:
    text = GOOD + "".join(f'\n[[claim]]\nid = "{key}"\ngraph = "full"\nargs = {{ n = 8, {key} = {value} }}\n'
                          f'quantity = "edges"\nequals = 64\n' for key, value in HOSTILE.items())
    path = tmp_path / "claims.toml"
    path.write_text(text)
    return str(path)


def test_flags_in_args_are_invalid_claims_and_the_others_are_decided(tmp_path):
    path = _file(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["check", path, "--json"])
    assert status == 2
    assert err.getvalue().count("\n") == 1 and "(and 2 more)" in err.getvalue(), err.getvalue()
    verdicts = {c["id"]: c for c in json.loads(out.getvalue())["claims"]}
    assert verdicts["good"]["verdict"] == "holds"
    for key in HOSTILE:
        assert verdicts[key]["verdict"] == "invalid"
        assert verdicts[key]["reason"].startswith("graph args: ") and key in verdicts[key]["reason"]
    assert "usage:" not in out.getvalue() + err.getvalue()          # the help was never printed


@pytest.mark.parametrize("key, value", [("help", 1), ("max", "8G"), ("max_memory", "1T"), ("draw", "x.png"),
                                        ("window", 2), ("nosuch", 1)])
def test_a_parameter_the_pattern_does_not_take_names_the_ones_it_does(key, value):
    text = GOOD.replace("args = { n = 8 }", f"args = {{ n = 8, {key} = {json.dumps(value)} }}")
    [verdict] = check_text(text)
    assert verdict.verdict == "invalid" and key in verdict.reason
    assert verdict.reason.endswith("takes n, layers, heads, d_head"), verdict.reason


def test_a_graph_claim_is_judged_on_the_report():
    """The derived value is :func:`formal.graphs.report`'s, whatever spelling the claim uses."""
    r = graphs.report("sliding-window", n=1000, window=5, causal=False)
    text = ('[[claim]]\nid = "w"\ngraph = "sliding-window"\nargs = { n = 1000, window = 5, bidirectional = true }\n'
            f'quantity = "layers.max_path_length"\nequals = {r["layers"]["max_path_length"]}\n')
    [verdict] = check_text(text)
    assert verdict.verdict == "holds", verdict.reason


def test_a_wrong_value_is_invalid_with_its_parameter():
    [verdict] = check_text(GOOD.replace("args = { n = 8 }", 'args = { n = "eight" }'))
    assert verdict.verdict == "invalid" and verdict.reason == "graph args: n = 'eight' must be a positive integer"
    [verdict] = check_text(GOOD.replace("args = { n = 8 }", 'args = { n = "8/3" }'))
    assert verdict.verdict == "invalid" and "(it is 8/3)" in verdict.reason, verdict.reason
    for spelled in ('"8"', '"2**3"', "8.0"):        # a number means the same however it is spelled
        [same] = check_text(GOOD.replace("args = { n = 8 }", f"args = {{ n = {spelled} }}"))
        assert same.verdict == check_text(GOOD)[0].verdict and same.derived == check_text(GOOD)[0].derived
