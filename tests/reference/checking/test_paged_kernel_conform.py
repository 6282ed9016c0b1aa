"""``conform --algorithm paged_attention`` on a serving engine's kernel contract: a reference written the way
vLLM's kernel test writes its oracle (rows, the key cache split (d/x, B, x), one query per sequence, context
lengths, a scale), behind an adapter that only renames and reshapes, passes in every grouping; the same
oracle with one line wrong fails the comparison with the spec."""

from pathlib import Path

import pytest

from formal.cli import main
from reference.checking.conform import conform

#: The file conform loads by path, as it loads a user's.
TARGET = Path(__file__).parent / "targets" / "vllm_paged.py"


@pytest.mark.parametrize("options", [{}, {"n_kv_heads": 1}, {"n_kv_heads": 2}])
def test_an_oracle_written_as_vllms_conforms(options):
    report = conform(f"{TARGET}:paged_attention", "paged_attention", options=options, n_examples=10)
    assert report.ok, report.failure
    assert report.checks["spec"].examples > 0 and report.checks["spec"].verdict == "pass"


def test_the_oracle_with_a_slot_off_by_one_fails_the_spec(capsys):
    """The slot within a block counted from 1: exit 1, the ``spec`` property named."""
    status = main(["conform", f"{TARGET}:stale_slot_paged_attention", "--algorithm", "paged_attention",
                   "--examples", "10"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL spec" in out.splitlines()[-2]
