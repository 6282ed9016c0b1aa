"""conform's report is honest about its failures.  The issue: the max error column left out the failing example
(``spec 4 1.11e-16 FAIL``, then ``|Δ| = 0.00942 > allowed 1.28e-10``), the counts per property disagreed
(``shape 3`` beside ``spec 4``: the failing example counted for the property that failed and for none that held
before it), and ``--identify`` printed "deviation 1.32e-02" beside "|Δ| = 0.0176" for one variant.  Now each
property counts the examples it was checked on, the failing one included, its max error includes the failing
|Δ|, the report says how many examples ran before the first failure ended the check, and each variant of
``--identify`` has one deviation figure, the same in the summary, the detail and the JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from formal.tools.cli import main
from reference.conformance.conform import IN_ORDER, conform

TARGETS = Path(__file__).parent / "targets"


def _layer_norm(e, gamma, beta):
    return (e - e.mean()) / np.sqrt(e.var()) * gamma + beta


def layer_norm_off_past_3(e, gamma, beta):
    """Algorithm 6, right up to d_e = 3; past it every value off by 10⁻³ (``spec`` fails)."""
    return _layer_norm(e, gamma, beta) + (1e-3 if len(e) > 3 else 0.0)


def layer_norm_short_past_3(e, gamma, beta):
    """Right up to d_e = 3; past it the last feature dropped (``shape`` fails)."""
    out = _layer_norm(e, gamma, beta)
    return out[:-1] if len(e) > 3 else out


def layer_norm_raises_past_3(e, gamma, beta):
    """Right up to d_e = 3; past it an exception (``runs`` fails)."""
    if len(e) > 3:
        raise ValueError("only up to 3 features")
    return _layer_norm(e, gamma, beta)


def _counts(report) -> dict:
    return {p: c.examples for p, c in report.checks.items()}


@pytest.mark.parametrize("function, failing", [
    (layer_norm_off_past_3, "spec"),
    (layer_norm_short_past_3, "shape"),
    (layer_norm_raises_past_3, "runs"),
])
def test_each_property_counts_the_examples_it_was_checked_on_the_failing_one_included(function, failing):
    """Examples with d_e ≤ 3 pass, then one fails: every property up to the failing one was checked on each
    example run (that one included), every property after it on each but that one — never ``shape 3`` beside
    ``spec 4``."""
    report = conform(function, "layer_norm")
    assert report.failure["property"] == failing
    run = report.run
    assert 2 <= run < report.examples + report.boundary        # some passed first; the rest were not run
    position = IN_ORDER.index(failing)
    counts = _counts(report)
    assert {p: counts[p] for p in IN_ORDER} == {p: run if i <= position else run - 1
                                                for i, p in enumerate(IN_ORDER)}, counts
    assert [p for p, c in report.checks.items() if c.verdict == "FAIL"] == [failing]


def test_the_failing_example_is_in_the_max_error_column():
    """The failing |Δ| (10⁻³) is the spec's max error, the figure the failure quotes — not the largest error of
    the examples that passed (~10⁻¹⁶)."""
    report = conform(layer_norm_off_past_3, "layer_norm")
    quoted = float(re.search(r"\|Δ\| = (\S+) >", report.failure["message"]).group(1))
    error = report.checks["spec"].max_error
    assert error > 1e-4 and f"{error:.3g}" == f"{quoted:.3g}"


def test_one_bug_in_a_multi_output_failure_is_the_largest():
    """With several outputs, the failure names the output and entry of the largest |Δ|: the column's figure."""
    report = conform(f"{TARGETS}/one_bug.py:gqa_attention", "mhattention", options={"n_kv_heads": 2},
                     n_examples=4, max_size=5)
    assert report.failure["property"] == "spec"
    quoted = float(re.search(r"\|Δ\| = (\S+) >", report.failure["message"]).group(1))
    assert f"{report.checks['spec'].max_error:.3g}" == f"{quoted:.3g}"
    counts = _counts(report)
    assert counts["signature"] == counts["shape"] == counts["finite"] == report.run
    assert counts["shape"] - counts["spec"] in (0, 1)                  # the large-score case: shape and finite only
    assert counts["masks"] < report.run and counts["equivariance"] < report.run   # not run on the failing one


def test_the_text_shows_the_failing_error_and_counts_that_agree(capsys):
    """The table as printed: shape and spec count the same examples, the spec row's max error is the |Δ| of the
    FAIL line, and a line says how many of the examples ran."""
    status = main(["conform", f"{__file__}:layer_norm_off_past_3", "--algorithm", "layer_norm"])
    out = capsys.readouterr().out
    assert status == 1
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(r"^(\w+) +(\d+) +(\S+)  (\S+)", out, re.M)}
    assert rows["shape"][0] == rows["finite"][0] == rows["spec"][0], out
    assert rows["spec"][2] == "FAIL"
    quoted = re.search(r"\|Δ\| = (\S+) >", out).group(1)
    assert f"{float(rows['spec'][1]):.3g}" == f"{float(quoted):.3g}", out
    ran = re.search(r"^checked (\d+) of the (\d+) examples, up to the smallest failing one", out, re.M)
    assert ran and ran.group(1) == rows["spec"][0] and int(ran.group(1)) < int(ran.group(2)), out
    assert "FAIL spec" in out.splitlines()[-2]


def test_the_json_report_counts_alike(capsys):
    status = main(["conform", f"{__file__}:layer_norm_off_past_3", "--algorithm", "layer_norm", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["verdict"] == "fail"
    checks = {c["property"]: c for c in report["checks"]}
    assert all(checks[p]["examples"] == report["run"] for p in IN_ORDER)
    assert checks["spec"]["max_error"] > 1e-4
    assert "outcomes" not in report


def test_a_passing_report_counts_every_example():
    report = conform(_layer_norm, "layer_norm", n_examples=4, max_size=5)
    assert report.ok and report.run == report.examples + report.boundary - len(report.undefined)
    assert all(report.checks[p].examples == report.run for p in IN_ORDER)


def _identify(capsys, *extra):
    status = main(["conform", f"{TARGETS}/one_bug.py:gat_torch_slope", "--algorithm", "gat", "--identify", *extra])
    return status, capsys.readouterr().out


def test_identify_gives_each_variant_one_deviation_figure(capsys):
    """Each nearest variant's deviation reads the same in its summary line and in the JSON (its fit's and its
    failure's), and its detail line quotes no |Δ| of its own (the issue: "deviation 2.96e-01" beside
    "|Δ| = 0.378" for GAT with slope 0.01, one variant)."""
    status, out = _identify(capsys)
    assert status == 1
    status, text = _identify(capsys, "--json")
    report = json.loads(text)
    nearest = report["nearest"]
    assert len(nearest) == 3
    lines = out[out.index("NO VARIANT"):].splitlines()[1:7]
    summaries, details = lines[0::2], lines[1::2]
    for n, summary, detail in zip(nearest, summaries, details):
        figure = n["fit"]["deviation"]
        assert n["failure"]["deviation"] == figure
        assert f"deviation {figure:.2e} (the median over" in summary, summary
        assert len(re.findall(r"deviation|\|Δ\|", summary + detail)) == 1, (summary, detail)
        assert "|Δ|" not in n["failure"]["message"]
        fit = n["fit"]
        assert (f"{fit['examples_matched']} of {fit['examples']} examples and "
                f"{100 * fit['entries_matched'] / fit['entries']:.1f}% of output entries match") in summary
