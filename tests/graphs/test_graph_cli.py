"""``formal-transformers graph``: what it prints agrees with the analysis, pictures are written, and bad
usage is one line with exit status 2."""

import json

import numpy as np
import pytest

from formal.errors import ConfigError
from formal.graphs import analysis, from_pairs, patterns
from formal.tools.cli import main
from tests.tiers import slow


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_json_report_agrees_with_the_analysis(capsys):
    status, out, err = run(capsys, "graph", "sliding-window", "--seq-len", "64", "--window", "8", "--layers", "3",
                           "--json")
    assert status == 0 and err == ""
    r = json.loads(out)
    p = patterns.sliding_window(64, 8)
    assert r["edges"] == p.n_edges and r["density"] == p.density
    assert r["formula"]["values"] == {"ell": 64, "window": 8}
    sizes = analysis.receptive_field_sizes(p, 3)
    assert [row["max"] for row in r["layers"]["receptive_field"]] == sizes.max(axis=1).tolist()
    assert r["layers"]["layers_to_coverage"] == analysis.layers_to_coverage(p) == 9
    assert r["layers"]["max_path_length"] == analysis.max_path_length(p)
    assert r["flops"]["sparse"] < r["flops"]["dense"]


def test_text_report_names_every_quantity(capsys):
    status, out, _ = run(capsys, "graph", "strided", "--seq-len", "256", "--stride", "16")
    assert status == 0
    for word in ("edges", "formula", "density", "in-degree", "attention FLOPs", "receptive field",
                 "full coverage", "max path length"):
        assert word in out
    assert "2 layers with the residual path" in out


def test_never_is_reported_for_split_graphs(capsys):
    status, out, _ = run(capsys, "graph", "dilated", "--seq-len", "32", "--window", "4", "--dilation", "2")
    assert status == 0 and "full coverage     never with the residual path" in out


@pytest.mark.parametrize("argv", [
    ["full", "--seq-len", "12"], ["causal", "--seq-len", "6", "--context-len", "9", "--align", "bottom-right"],
    ["cross", "--seq-len", "5", "--context-len", "7"],
    ["global-local", "--seq-len", "40", "--window", "3", "--global", "2", "--causal"],
    ["fixed", "--seq-len", "40", "--stride", "8", "--summary", "2", "--part", "summary"],
    ["random", "--seq-len", "60", "--random", "3", "--window", "2", "--global", "1", "--seed", "7"],
    ["swin", "--grid", "8x12", "--window", "4", "--shifted", "--shift", "1"],
])
def test_every_pattern_runs_and_counts_its_edges(capsys, argv):
    status, out, err = run(capsys, "graph", *argv, "--json")
    assert status == 0, err
    r = json.loads(out)
    assert r["edges"] > 0 and "formula" in r


def test_edgelist_file_is_a_user_graph(capsys, tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("0 1\n1 2\n2 0\n")
    status, out, _ = run(capsys, "graph", "edgelist", "--file", str(path), "--seq-len", "4", "--json")
    r = json.loads(out)
    assert status == 0 and r["edges"] == 3 and "formula" not in r
    assert r["in_degree"]["empty"] == 1                                    # position 3 sees nothing


@slow
def test_draw_writes_a_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    for argv, name in ((["causal", "--seq-len", "12"], "small.png"),
                       (["sliding-window", "--seq-len", "3000", "--window", "64",
                                                                  "--layers", "0"], "large.png"),
                       (["swin", "--grid", "8x12", "--window", "4", "--shifted"], "grid.png"),
                       (["cross", "--seq-len", "5", "--context-len", "7"], "bipartite.png")):
        path = tmp_path / name
        status, out, err = run(capsys, "graph", *argv, "--draw", str(path))
        assert status == 0, err
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, message", [
    (["full"], "needs --seq-len LENGTH"),
    (["full", "--seq-len", "8", "--window", "3"], "--window does not apply to the full pattern"),
    (["sliding-window", "--seq-len", "8"], "needs --window"),
    (["sliding-window", "--seq-len", "8", "--window", "0"], "window = 0 must be a positive integer"),
    (["swin", "--grid", "6x8", "--window", "4"], "height 6 is not divisible by the Swin window 4"),
    (["swin", "--grid", "8", "--window", "4"], "--grid '8' must be HxW"),
    (["swin", "--grid", "8x8", "--window", "4", "--seq-len", "60"], "disagrees with --grid"),
    (["swin", "--window", "4"], "needs --grid"),
    (["causal", "--seq-len", "4", "--context-len", "6"], "explicit alignment"),
    (["edgelist", "--seq-len", "4"], "needs --file"),
    (["edgelist", "--seq-len", "4", "--file", "/nonexistent/graph.txt"],
     "cannot read edge list '/nonexistent/graph.txt': no such file"),
    (["full", "--seq-len", "8", "--layers", "-1"], "argument --layers: -1 must be a non-negative integer"),
    (["bogus", "--seq-len", "8"], "invalid choice"),
    # integer options are parsed with their bounds (formal.tools.arguments.bounded_int): a usage error, never a
    # traceback
    (["random", "--seq-len", "64", "--random", "2", "--seed", "-1"],
     "argument --seed: -1 must be a non-negative integer"),
    (["random", "--seq-len", "64", "--random", "0"], "argument --random: 0 must be a positive integer"),
    (["random", "--seq-len", "64", "--random", "2", "--seed", "1.5e0"],
     "argument --seed: '1.5e0' must be a non-negative"),
    (["full", "--seq-len", "-5"], "argument --seq-len: -5 must be a positive integer"),
    (["full", "--seq-len", "0"], "argument --seq-len: 0 must be a positive integer"),
    (["full", "--seq-len", "abc"], "argument --seq-len: 'abc' must be a positive integer"),
    (["full", "--seq-len", "9" * 5000], "must be a positive integer"),
    (["cross", "--seq-len", "4", "--context-len", "-1"], "argument --context-len: -1 must be a positive integer"),
    (["sliding-window", "--seq-len", "8", "--window", "-2"], "argument --window: -2 must be a non-negative integer"),
    (["dilated", "--seq-len", "8", "--window", "2", "--dilation", "0"], "argument --dilation: 0 must be a positive"),
    (["global-local", "--seq-len", "8", "--window", "2", "--global", "-1"],
     "argument --global: -1 must be a non-negative"),
    (["strided", "--seq-len", "8", "--stride", "-4"], "argument --stride: -4 must be a positive integer"),
    (["fixed", "--seq-len", "8", "--stride", "4", "--summary", "0"],
     "argument --summary: 0 must be a positive integer"),
    (["swin", "--grid", "8x8", "--window", "4", "--shifted", "--shift", "-1"], "argument --shift: -1 must be"),
    (["full", "--seq-len", "8", "--heads", "0"], "argument --heads: 0 must be an integer from 1 to"),
    (["full", "--seq-len", "8", "--d-head", "-64"], "argument --d-head: -64 must be an integer from 1 to"),
    (["full", "--seq-len", "8", "--layers", "2.5"], "argument --layers: '2.5' must be a non-negative integer"),
])
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, message):
    status, out, err = run(capsys, "graph", *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_edgelist_outside_the_sequence_is_a_config_error(capsys, tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("0 9\n")
    status, _, err = run(capsys, "graph", "edgelist", "--file", str(path), "--seq-len", "4")
    assert status == 2 and "line 1 has a query position 9 outside the sequence 0..3" in err


def test_unwritable_picture_is_one_line(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    status, _, err = run(capsys, "graph", "full", "--seq-len", "4", "--draw", str(tmp_path / "no" / "such" / "dir.png"))
    assert status == 2 and "cannot write picture" in err and "does not exist" in err and err.count("\n") == 1


def test_mask_image_is_the_mask_or_its_block_densities():
    """Short sequences are drawn pixel for pixel; long ones as the fraction of admitted pairs per block,
    which sums back to |E| when weighted by the block sizes."""
    from formal.graphs.draw import mask_image
    small = patterns.dilated(30, 3, 2)
    assert (mask_image(small) == small.mask()).all()
    large = patterns.sliding_window(1000, 37)
    image = mask_image(large, pixels=64)
    assert image.shape == (64, 64) and image.max() <= 1
    sizes = np.bincount(np.arange(1000) * 64 // 1000)
    assert round(float((image * np.outer(sizes, sizes)).sum())) == large.n_edges


def test_long_layered_analyses_show_a_live_line_on_a_terminal():
    """On a terminal the layer count is shown as it runs and erased at the end; elsewhere nothing."""
    import io

    from formal.graphs.figures import collect as report

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    chain = patterns.sliding_window(200, 2)                  # a user's graph: walked layer by layer
    p = from_pairs(chain.keys, chain.queries, ell_z=200)
    terminal, pipe = Terminal(), io.StringIO()
    report(p, layers=1, heads=1, d_head=4, progress=terminal)
    report(p, layers=1, heads=1, d_head=4, progress=pipe)
    assert "full coverage: layer 192" in terminal.getvalue() and terminal.getvalue().endswith("\r\033[K")
    assert pipe.getvalue() == ""


def test_the_command_offers_the_heads_the_builders_know():
    """``--part`` is declared from the schema without importing the builders (the command line loads none of
    numpy or networkx): its choices are every head a builder takes, and a builder refuses the others."""
    from formal.graphs import schema
    from formal.tools.cli import build_parser
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices and "graph" in a.choices)
    part = next(a for a in sub.choices["graph"]._actions if a.dest == "part")
    assert tuple(part.choices) == schema.PARTS == patterns.PARTS
    for builder in (patterns.strided, patterns.fixed):
        taken = schema.schema_of(builder.__name__)["part"].kind.words
        assert set(taken) < set(schema.PARTS)
        for head in set(schema.PARTS) - set(taken):
            with pytest.raises(ConfigError, match=f"part = '{head}'"):
                builder(16, 4, part=head)


