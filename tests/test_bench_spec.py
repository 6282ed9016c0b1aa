"""``benchmarks/bench_spec.py`` runs and reports what the README quotes: per algorithm the spec's time per call
against its control's, on replayed, first and plain runs, and which algorithms stay over the goal."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_spec  # noqa: E402


def test_the_table_and_the_json_hold_every_ratio(tmp_path, capsys):
    out = tmp_path / "spec.json"
    assert bench_spec.main(["--algorithms", "token_embedding", "attention", "--repeats", "1",
                            "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {r["algorithm"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"token_embedding", "attention"}
    for row in rows.values():
        assert row["examples"] >= 3 and row["control_us_per_call"] > 0
        assert row["ratio"] == pytest.approx(row["spec_ms"] / row["control_ms"])
        assert row["ratio_one_by_one"] > 0 and row["ratio_first"] > 0
    assert "within 3× their control" in printed
    # a lookup of ~1 µs stays over the goal, and the last line says so and why
    assert rows["token_embedding"]["ratio"] > 3 and "over 3×: token_embedding" in printed


def test_an_unknown_algorithm_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        bench_spec.main(["--algorithms", "no_such"])
    assert exit_.value.code == 2 and "unknown algorithm 'no_such'" in capsys.readouterr().err
