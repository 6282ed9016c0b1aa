"""Vaswani et al.'s Table 1 derived from the objects (formal.models.table1, ``formal-transformers table1``), against
the layers' FLOPs written out by hand here — the independent oracle — and the paper's entries."""

import json

import pytest

from formal.models import table1
from formal.tools.cli import main


@pytest.fixture(scope="module")
def report():
    return table1.report(n=(16, 64))


def _row(report, layer):
    return next(r for r in report["rows"] if r["layer"] == layer)


def test_exact_flops_are_the_layers_matrix_products(report):
    """One layer, n positions, width d (matmul convention): self-attention 4 projections of 2nd² and the
    scores and weighted sum 2n²d each; an LSTM layer 4 gates × (2nd² + 2nd²); a same-padded convolution
    2·n·k·d² — written out by hand."""
    assert _row(report, "self-attention")["flops"] == "8·d^2·n + 4·d·n^2"
    assert _row(report, "recurrent")["flops"] == "16·d^2·n"
    assert _row(report, "convolutional")["flops"] == "2·d^2·k·n"


def test_derived_entries_beside_the_papers(report):
    """The paper's complexity and sequential-operations columns, reproduced: Θ(n·d²) and Θ(n) for recurrence,
    Θ(k·n·d²) and Θ(1) for convolution, Θ(1) steps for attention; self-attention's complexity adds the
    projections' n·d² to the paper's n²·d."""
    assert _row(report, "recurrent")["complexity"] == "Θ(d^2·n)" and _row(report, "recurrent")["sequential"] == "Θ(n)"
    assert _row(report, "convolutional")["complexity"] == "Θ(d^2·k·n)"
    assert _row(report, "convolutional")["sequential"] == "Θ(1)"
    assert _row(report, "self-attention")["complexity"] == "Θ(d^2·n + d·n^2)"
    assert _row(report, "self-attention")["sequential"] == "Θ(1)"
    assert _row(report, "self-attention (restricted)")["complexity"].startswith("Θ(d^2·n + d·n·w)")


def test_path_lengths_grow_as_the_paper_says(report):
    """Maximum path length: constant for self-attention, n − 1 for a recurrence, about n/r restricted."""
    assert _row(report, "self-attention")["path_lengths"] == {16: 1, 64: 1}
    assert _row(report, "recurrent")["path_lengths"] == {16: 15, 64: 63}
    restricted = _row(report, "self-attention (restricted)")["path_lengths"]
    assert restricted[64] > 3 * restricted[16] - 3


@pytest.mark.parametrize("cell, n", [("lstm", "2·d"), ("gru", "d"), ("rnn", None)])
def test_cost_parity_with_self_attention(cell, n):
    """16nd² = 8nd² + 4n²d at n = 2d (LSTM); 12nd² at n = d (GRU); 4nd² < 8nd² + 4n²d always (RNN)."""
    assert table1.parity()[cell] == n


def test_the_command_prints_the_table_and_its_json(capsys):
    assert main(["table1", "--cell", "gru", "--measure-at", "32"]) == 0
    out = capsys.readouterr().out
    assert "Vaswani et al." in out and "at n = d" in out
    assert main(["table1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["layer"] for r in data["rows"]} == set(table1.PAPER)


@pytest.mark.parametrize("args, message", [
    (["--kernel", "4"], "--kernel 4 must be odd"),
    (["--measure-at", "1"], "1 must be an integer from 2 to 4096"),
    (["--cell", "transformer"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    assert main(["table1", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
