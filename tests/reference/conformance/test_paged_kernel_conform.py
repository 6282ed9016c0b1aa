"""``conform --algorithm paged_attention`` on a serving engine's kernel contract: a reference written the way
vLLM's kernel test writes its oracle (rows, the key cache split (d/x, B, x), one query per sequence, context
lengths, a scale), behind an adapter that only renames and reshapes, passes in every grouping; the same
oracle with one line wrong fails the comparison with the spec."""

from pathlib import Path

import pytest

from formal import algorithms
from formal.sampling.examples import examples
from formal.sampling.sizes import mend_sizes
from formal.tools.cli import main
from reference.conformance.conform import conform
from tests.tiers import fast_few, slow

#: The file conform loads by path, as it loads a user's.
TARGET = Path(__file__).parent / "targets" / "vllm_paged.py"


@slow
@pytest.mark.parametrize("options", fast_few([{}, {"n_kv_heads": 1}, {"n_kv_heads": 2}]))
def test_an_oracle_written_as_vllms_conforms(options):
    report = conform(f"{TARGET}:paged_attention", "paged_attention", options=options, n_examples=10)
    assert report.ok, report.failure
    assert report.checks["spec"].examples > 0 and report.checks["spec"].verdict == "pass"


@slow
def test_the_oracle_with_a_slot_off_by_one_fails_the_spec(capsys):
    """The slot within a block counted from 1: exit 1, the ``spec`` property named."""
    status = main(["conform", f"{TARGET}:stale_slot_paged_attention", "--algorithm", "paged_attention",
                   "--examples", "10"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL spec" in out.splitlines()[-2]


def test_mended_sizes_keep_the_table_as_long_as_the_cache_needs():
    """Raising ℓ_c to hold ℓ_x new tokens also lengthens the table: n_b = ⌈ℓ_c/B⌉ after every move."""
    kernel = algorithms.paged_attention
    for ell_x, ell_c, B in [(5, 1, 2), (9, 3, 4), (3, 3, 1), (7, 2, 3)]:
        sizes = mend_sizes(kernel, {"H": 2, "d_attn": 2, "d_mid": 2, "ell_x": ell_x, "ell_c": ell_c, "block": B,
                                    "n_blocks": 1, "n_pool": 2})
        assert sizes["ell_x"] <= sizes["ell_c"]
        assert sizes["n_blocks"] == -(-sizes["ell_c"] // B)


def test_the_examples_draw_shared_and_shuffled_block_tables():
    """conform's examples hold tables with a repeated block (shared by forked sequences) and tables of
    distinct blocks out of the pool's order (blocks taken as they were free), one-token decoding calls and
    several new tokens: what a real kernel is handed."""
    tables = [(e.arguments["table"].tolist(), e.sizes["ell_x"])
              for e in examples(algorithms.get("paged_attention", n_kv_heads=2), 20)]
    assert any(len(set(t)) < len(t) for t, _ in tables)
    assert any(len(set(t)) == len(t) and t != sorted(t) for t, _ in tables)
    assert {1} < {n for _, n in tables}
