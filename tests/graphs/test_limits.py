"""Bounded memory and time for formal.graphs: every step that grows with ℓ², |E| or the number of layers is
estimated first and refused beyond the memory limit with one line; any number of layers is extrapolated
from where the receptive fields settle; edge lists and pictures are checked before any work.

The refusals are run through the real command in a subprocess with its address space capped at 3 GiB and
a timeout, so a regression fails the test instead of taking the machine."""

import contextlib
import os
import re
import resource
import signal
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import ConfigError
from formal.errors import ResourceError
from formal.graphs import analysis, attention, edgelist, from_mask, from_pairs, memory, mhattention, patterns
from formal.guards import limits
from formal.tools.cli import main
from tests.strategies.graphs import builtin, masks
from tests.tiers import fast_few, slow

CAP = 3 * 2**30
REFUSED = re.compile(r"formal-transformers: error: .+ needs about [0-9.]+(e\+[0-9]+)? [KMGTPE]?i?B, "
                     r"more than the memory limit of 4 GiB \(raise it with --max-memory SIZE")


def plain(p):
    """The pattern's edges without its structure: the layered analysis walks them with bit sets."""
    return from_pairs(p.keys, p.queries, ell_z=p.ell_z, name=p.name, params=p.params)


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def cli(*argv, timeout=60):
    """``formal-transformers graph ARGV`` in a fresh process under a 3 GiB address space."""
    return subprocess.run([sys.executable, "-m", "formal", "graph", *argv], preexec_fn=_capped, capture_output=True,
                          text=True, timeout=timeout)


@contextlib.contextmanager
def within(seconds):
    """Fail, instead of hanging, when the block takes longer than ``seconds`` (a loop over every layer would)."""
    def stop(signum, frame):
        raise TimeoutError(f"took more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(capsys, *argv):
    status = main(["graph", *argv])
    out, err = capsys.readouterr()
    return status, out, err


# ------------------------------------------------------------------------------- refused, before building
@pytest.mark.parametrize("argv, what", fast_few([
    (["random", "--seq-len", "1000000000", "--random", "3"], "the random pattern at ℓ = 1,000,000,000"),
    (["sliding-window", "--seq-len", "64", "--window", "4", "--layers", "100000000"],
     "the report of 100,000,000 layers"),
    (["full", "--seq-len", "1000000", "--draw", "mask.png"],
     "the full pattern at ℓ = 1,000,000 (1,000,000,000,000 edges)"),
    (["swin", "--grid", "100000x100000", "--window", "8", "--draw", "mask.png"],
     "the swin pattern on a 100,000×100,000 grid"),
], keep=2, unpack=True))
def test_the_command_refuses_what_would_not_fit_in_one_line(argv, what, tmp_path):
    r = subprocess.run([sys.executable, "-m", "formal", "graph", *argv], preexec_fn=_capped, capture_output=True,
                       text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and REFUSED.match(r.stderr) and what in r.stderr, r.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, edges", fast_few([
    (["full", "--seq-len", "1000000"], "1,000,000,000,000"),
    (["causal", "--seq-len", "3000000"], "4,500,001,500,000"),
    (["sliding-window", "--seq-len", "1000000000", "--window", "4"], "3,999,999,994"),
    (["full", "--seq-len", "1" + "0" * 30], "1" + ",000" * 20),
    (["swin", "--grid", "100000x100000", "--window", "8", "--shifted"], None),
    (["cross", "--seq-len", "5", "--context-len", "1" + "0" * 24], "5" + ",000" * 8),
    (["strided", "--seq-len", "1" + "0" * 12, "--stride", "1000"], None),
    (["fixed", "--seq-len", "1" + "0" * 12, "--stride", "128", "--summary", "8"], None),
    (["global-local", "--seq-len", "1" + "0" * 12, "--window", "256", "--global", "2", "--bidirectional"], None),
], unpack=True))
def test_the_built_in_patterns_are_answered_at_any_length_without_edges(argv, edges):
    """What would need terabytes of edges is answered from the pattern's structure, at once and in little
    memory (the same 3 GiB cap and a timeout)."""
    r = cli(*argv, "--json", timeout=30)
    assert r.returncode == 0, r.stderr
    import json
    result = json.loads(r.stdout)
    if edges is not None:
        assert f"{result['edges']:,}" == edges
    if result["self_attention"]:
        assert len(result["layers"]["receptive_field"]) == 4 and result["layers"]["max_path_length"] is not None


def test_a_huge_number_of_layers_is_refused_at_once(capsys):
    """Refused from the estimate of its report, which the error names, before any layer is computed."""
    status, out, err = run(capsys, "sliding-window", "--seq-len", "64", "--window", "4", "--layers", "100000000")
    assert status == 2 and out == "" and "needs about 74.5 GiB" in err


def test_many_layers_run_quickly_and_repeat_the_settled_rows(capsys):
    """1,000 rows at ℓ = 64: the fields settle after 21 layers, and the rows after repeat the last one."""
    import json
    with within(20):
        status, out, _ = run(capsys, "sliding-window", "--seq-len", "64", "--window", "4", "--layers", "1000", "--json")
    assert status == 0
    rows = json.loads(out)["layers"]["receptive_field"]
    assert len(rows) == 1000 and rows[-1] == {**rows[20], "layer": 1000} and rows[-1]["min"] == 1


@pytest.mark.parametrize("build, what", [
    (lambda: patterns.full(10**6), "the full pattern at ℓ = 1,000,000"),
    (lambda: patterns.full(10**30), "the full pattern at ℓ = ≈1.00e+30"),
    (lambda: patterns.causal(3 * 10**6), "the causal pattern"),
    (lambda: patterns.causal(10**24, 5, align="bottom-right"), "ℓ_z = ≈1.00e+24, ℓ_x = 5"),
    (lambda: patterns.sliding_window(10**9, 4), "the sliding_window pattern"),
    (lambda: patterns.dilated(10**30, 3, 2), "the dilated pattern"),
    (lambda: patterns.global_local(10**9, 4, 2), "the global_local pattern"),
    (lambda: patterns.strided(10**7, 100), "the strided pattern"),
    (lambda: patterns.fixed(10**30, 7, 3), "the fixed pattern"),
    (lambda: patterns.random(10**9, 3, window=3, n_global=1), "the random pattern"),
    (lambda: patterns.swin(10**5, 10**5, 8, shifted=True), "the swin pattern"),
    (lambda: patterns.cross(10**5, 10**5), "the cross pattern"),
])
def test_every_builder_refuses_before_allocating(build, what):
    """Under the default limit and under an explicit one; ℓ = 10**30 is a ResourceError, not an overflow."""
    for limit in (None, "4G"):
        with pytest.raises(ResourceError, match=re.escape(what)) as caught:
            if limit is None:
                build()
            else:
                with limits.memory_limit(limit):
                    build()
        assert caught.value.needed > caught.value.limit == limits.parse_size("4G")


def test_the_limit_applies_both_ways():
    """A small pattern is refused under 1 KiB and built under the default: the estimate really is checked."""
    with limits.memory_limit("1K"), pytest.raises(ResourceError, match=r"the full pattern at ℓ = 8 \(64 edges\)"):
        patterns.full(8)
    assert patterns.full(8).n_edges == 64
    with limits.memory_limit("1K"):
        assert limits.max_memory() == 1024
    assert limits.max_memory() == limits.DEFAULT_MAX_MEMORY


def test_the_max_memory_option_sets_the_limit(capsys):
    status, out, err = run(capsys, "random", "--seq-len", "64", "--random", "2", "--max-memory", "1K")
    assert status == 2 and out == "" and "more than the memory limit of 1 KiB" in err
    status, out, _ = run(capsys, "random", "--seq-len", "64", "--random", "2", "--max-memory", "1M")
    assert status == 0 and "edges             128" in out


@pytest.mark.parametrize("value, message", [
    ("abc", "memory size 'abc' must be a number of bytes"), ("0", "memory size '0' must be at least 1 byte"),
    ("-1", "memory size '-1' must be a number of bytes"), ("1e999", "memory size '1e999' must be a number of bytes"),
])
def test_bad_max_memory_is_one_line(capsys, value, message):
    status, out, err = run(capsys, "full", "--seq-len", "8", "--max-memory", value)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"argument --max-memory: {message}" in err


REVERSED = np.arange(200_000)[::-1]


@pytest.mark.parametrize("make, step, limit, what", [
    (lambda: patterns.full(2048), lambda p: p.mask(), "2M", "the 2,048×2,048 boolean mask"),
    (lambda: patterns.sliding_window(20_000, 8), lambda p: p.to_networkx(), "2M", "the networkx graph of"),
    (lambda: None, lambda _: from_mask("causal", ell_z=4096, ell_x=4096), "2M", "the 4,096×4,096 mask 'causal'"),
    (lambda: np.ones((2048, 2048)), from_mask, "2M", "checking the 2,048×2,048 mask"),
    (lambda: (REVERSED % 1000, REVERSED // 1000), lambda kq: from_pairs(*kq, ell_z=1000), "10M",
     "sorting 200,000 edges"),
    (lambda: patterns.sliding_window(4096, 2), lambda p: analysis.receptive_field(p, 3), "2M",
     "the layered analysis at ℓ = 4,096"),
    pytest.param(lambda: plain(patterns.sliding_window(4096, 2)), analysis.layers_to_coverage, "2M",
                 "the layered analysis", marks=slow),
    (lambda: patterns.sliding_window(64, 2), lambda p: analysis.receptive_field_sizes(p, 100_000), "2M",
     "the receptive-field sizes of 100,000 layers"),
])
def test_other_quadratic_steps_are_estimated_first(make, step, limit, what):
    """Built under the default limit, refused under a small one."""
    made = make()
    with limits.memory_limit(limit), pytest.raises(ResourceError, match=re.escape(what)):
        step(made)
    with limits.memory_limit("1G"):
        step(made)                                                        # and done under a larger one


def test_the_executor_and_the_picture_are_estimated_first():
    p = patterns.full(1024)
    X = np.ones((8, 1024))
    W = {name: np.eye(8) for name in ("W_q", "W_k", "W_v")}
    chunks = r"attention over Pattern.* \(chunks of 4,096 edges\)"
    with limits.memory_limit("1M"), pytest.raises(ResourceError, match=chunks):
        attention(p, X, **W)
    from formal.graphs.draw import mask_image
    with limits.memory_limit("1M"), pytest.raises(ResourceError, match="the picture of"):
        mask_image(p)


def test_huge_parameters_are_clamped_not_overflowed():
    big = 10**30
    assert patterns.sliding_window(20, big) == patterns.sliding_window(20, 20)
    assert patterns.dilated(20, big, big, causal=False) == patterns.dilated(20, 1, 20, causal=False)
    assert patterns.strided(20, big) == patterns.strided(20, 20)
    assert patterns.global_local(20, big, 2) == patterns.global_local(20, 20, 2)
    assert patterns.fixed(20, big, big - 25).n_edges == patterns.fixed(20, 30, 5).n_edges
    with pytest.raises(ConfigError, match="n_random = 3 is more than the 0 keys query 0"):
        patterns.random(20, 3, window=big)


@settings(max_examples=60, deadline=None)
@given(builtin())
def test_the_estimate_counts_the_edges_exactly(case):
    """The count a builder checks before building (its formula on exact integers) is the count it builds."""
    from formal.graphs.building import afford
    name, _, p, _ = case
    assert afford(name, p.ell_x, ell=p.ell_x, **p.params) == p.n_edges


@slow
@pytest.mark.parametrize("step, estimate", fast_few([
    (lambda: patterns.fixed(2048, 64, 64), memory.build_bytes("fixed", edges=2_098_176, positions=2048)),
    (lambda: patterns.strided(1024, 1), memory.build_bytes("strided", edges=524_800, positions=1024)),
    (lambda: patterns.random(2048, 16, window=8, n_global=4), None),
    (lambda: patterns.full(512).to_networkx(), memory.networkx_bytes(512**2, 512)),
], unpack=True))
def test_the_estimates_stay_above_what_is_allocated(step, estimate):
    """tracemalloc sees numpy's arrays: the measured peak stays below the estimate (benchmarks/bench_graphs.py
    --peaks measures every step)."""
    import tracemalloc
    tracemalloc.start()
    try:
        result = step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if estimate is None:
        estimate = memory.build_bytes(result.name, edges=result.n_edges, positions=result.ell_x)
    assert peak < estimate


# ------------------------------------------------------------------------------------ any number of layers
def naive(ms, L, residual):
    """The plain loop over boolean matrices: R_l[k, q] = OR_j R_{l−1}[k, j] M_l[j, q] (and R_{l−1}[k, q])."""
    R, out = np.eye(ms[0].shape[0], dtype=bool), []
    for l in range(L):
        step = (R.astype(np.int64) @ ms[l % len(ms)].astype(np.int64)) > 0
        R = step | R if residual else step
        out.append(R)
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9).flatmap(lambda ell: st.tuples(
    st.lists(masks(square=True, min_len=ell, max_len=ell), min_size=1, max_size=3),
    st.integers(0, 3 * ell + 3), st.booleans())))
def test_extrapolated_layers_equal_the_plain_loop(case):
    """Stopping at the fixed point (residual) or at the first repeated state (without) and extrapolating
    gives exactly what running every layer gives: sizes, the last mask, the spread."""
    ms, L, residual = case
    ps = [from_mask(m) for m in ms]
    ell = ms[0].shape[0]
    states = naive(ms, L, residual)
    sizes = analysis.receptive_field_sizes(ps, L, residual=residual)
    np.testing.assert_array_equal(sizes, np.array([R.sum(axis=0) for R in states], dtype=np.int64).reshape(L, ell))
    np.testing.assert_array_equal(analysis.receptive_field(ps, L, residual=residual),
                                  states[-1] if L else np.eye(ell, dtype=bool))
    spread = analysis.summary(ps, L, residual=residual).spread
    assert len(spread) == L and [s[2] for s in spread] == sizes.max(axis=1).tolist()


def test_a_trillion_layers_take_what_the_fields_take_to_settle():
    """With the residual path the window settles after 21 layers; without it two cycles of 5 and 7
    positions repeat every 35 layers: both answer for 10**12 layers at once, exactly."""
    p = patterns.sliding_window(64, 4)
    cycles = np.zeros((12, 12), dtype=bool)
    for first, size in ((0, 5), (5, 7)):
        for i in range(size):
            cycles[first + i, first + (i + 1) % size] = True
    layers = 10**12 + 3
    with within(20):
        assert analysis.receptive_field(p, 10**12).sum() == 64 * 65 // 2
        assert len(analysis.receptive_field_spread(p, 10**12)) == 10**12
        R = analysis.receptive_field(from_mask(cycles), layers, residual=False)
    np.testing.assert_array_equal(R, naive([cycles], layers % 35, False)[-1])


# ---------------------------------------------------------------------------------------------- edge lists
@pytest.mark.parametrize("text, message", [
    ("0 1\nx y\n", "line 2 is not 'key query' (two non-negative integers): 'x y'"),
    ("0 1\n\n1 -2\n", "line 3 has a negative query position -2: '1 -2'"),
    ("# n = 4\n0 9\n", "line 2 has a query position 9 outside the sequence 0..3 (ell = 4): '0 9'"),
    ("1.5 2\n", "line 1 is not 'key query' (two non-negative integers): '1.5 2'"),
    ("0 1\n1 2 3\n", "line 2 is not 'key query' (two non-negative integers): '1 2 3'"),
    ("0 1\n1 2\n0 1  # again\n", "line 3 repeats the edge 0 → 1 of line 1: attention has no edge weights"),
    ("7\n", "line 1 is not 'key query'"),
    ("1" * 40 + " 0\n", "line 1 has a key position 11111111111111111111… outside the sequence"),
    ("0 1\n" + "z" * 100 + "\n", "line 2 is not 'key query' (two non-negative integers): '" + "z" * 57 + "…'"),
])
def test_edge_list_errors_name_the_line(tmp_path, capsys, text, message):
    path = tmp_path / "graph.txt"
    path.write_text(text)
    status, out, err = run(capsys, "edgelist", "--seq-len", "4", "--file", str(path))
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"edge list {str(path)!r}, {message}" in err


def test_edge_lists_allow_comments_blank_lines_and_no_edges(tmp_path, capsys):
    import json
    path = tmp_path / "graph.txt"
    path.write_text("# a ring\n\n0 1   # first\n1\t2\r\n2 0\n")
    status, out, _ = run(capsys, "edgelist", "--seq-len", "4", "--file", str(path), "--json")
    assert status == 0 and json.loads(out)["edges"] == 3
    path.write_text("")
    status, out, _ = run(capsys, "edgelist", "--seq-len", "4", "--file", str(path), "--json")
    assert status == 0 and json.loads(out)["edges"] == 0
    keys, queries = edgelist.parse("2 0\n0 1\n1 0\n", 3)                  # sorted by query, then key
    assert keys.tolist() == [1, 2, 0] and queries.tolist() == [0, 0, 1]


@pytest.mark.parametrize("make, message", fast_few([
    (lambda d: (d / "bin").write_bytes(b"0 1\n\xff\xfe\x00\n") and d / "bin", "is not UTF-8 text (byte 4"),
    (lambda d: d, "is not a regular file (a directory)"),
    (lambda d: "/dev/zero", "is not a regular file (a character device)"),
    (lambda d: os.mkfifo(d / "fifo") or d / "fifo", "is not a regular file (a FIFO (named pipe))"),
    (lambda d: (d / "big").write_bytes(b"0 1\n" * 257) and d / "big",
     "has 1,028 bytes, more than the 1,024 read under a memory limit of 32 KiB (a 32nd of it"),
], keep=2, unpack=True))
def test_edge_lists_that_are_not_regular_text_files_are_refused(tmp_path, make, message):
    """In a subprocess with a timeout: read naively, /dev/zero and a FIFO without a writer never end."""
    path = make(tmp_path)
    r = cli("edgelist", "--seq-len", "4", "--file", str(path), "--max-memory", "32K", timeout=60)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert f"edge list {str(path)!r} " in r.stderr and message in r.stderr


def test_ten_megabytes_of_garbage_are_one_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "garbage.txt"
    path.write_bytes(bytes(rng.integers(32, 127, 10 * 2**20, dtype=np.uint8)))
    status, out, err = run(capsys, "edgelist", "--seq-len", "4", "--file", str(path))
    assert status == 2 and out == "" and err.count("\n") == 1 and "line 1 is not 'key query'" in err


# ----------------------------------------------------------------------------------------------- pictures
@pytest.mark.parametrize("where, message", [
    (lambda d: d / "missing" / "x.png", "does not exist"), (lambda d: d, "it is a directory"),
    (lambda d: "/proc/x.png", "is not writable"), (lambda d: d / "x.nosuchformat", "does not write .nosuchformat"),
])
def test_a_picture_path_is_checked_before_any_work(tmp_path, capsys, where, message):
    """The pattern asked for would be refused by its estimate: the picture's error comes first."""
    pytest.importorskip("matplotlib")
    status, out, err = run(capsys, "full", "--seq-len", "1000000", "--draw", str(where(tmp_path)))
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "picture" in err and message in err and "needs about" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_picture_is_written_atomically(tmp_path, capsys, monkeypatch):
    """A successful draw leaves exactly its file; a save that fails half-way leaves the old file intact
    and no temporary beside it."""
    pytest.importorskip("matplotlib")
    import matplotlib.figure
    path = tmp_path / "x.png"
    status, _, err = run(capsys, "causal", "--seq-len", "6", "--draw", str(path))
    assert status == 0, err
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"] and path.read_bytes()[:4] == b"\x89PNG"
    path.write_bytes(b"old")

    def broken(self, fname, **kwargs):
        with open(fname, "wb") as handle:
            handle.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    status, _, err = run(capsys, "causal", "--seq-len", "6", "--draw", str(path))
    assert status == 2 and "cannot write the picture" in err and "No space left" in err
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"] and path.read_bytes() == b"old"


# ------------------------------------------------------------------------------------------------- grids
@pytest.mark.parametrize("grid, message", [
    ("0x5", "--grid '0x5' has a side of 0"), ("axb", "--grid 'axb' must be HxW"),
    ("8x8x8", "--grid '8x8x8' must be HxW"), ("9" * 5000 + "x1", "must be HxW"), ("²x1", "must be HxW"),
])
def test_bad_grids_are_one_line(capsys, grid, message):
    status, out, err = run(capsys, "swin", "--grid", grid, "--window", "1")
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


# ------------------------------------------------------------------------------------------ None is no pattern
@pytest.mark.parametrize("call", [
    lambda X, W: attention(None, X, **W),
    lambda X, W: mhattention(None, X, **{k: v[None] for k, v in W.items()}, W_o=np.eye(3)),
    lambda X, W: analysis.layers_to_coverage(None),
    lambda X, W: analysis.receptive_field(None, 2),
    lambda X, W: analysis.edge_count(None),
    lambda X, W: analysis.attention_flops(None, {"H": 1}),
])
def test_none_is_not_a_pattern(call):
    X = np.ones((3, 4))
    W = {name: np.eye(3) for name in ("W_q", "W_k", "W_v")}
    with pytest.raises(ConfigError, match="pattern is None: give a Pattern, a networkx graph or a 0/1 mask"):
        call(X, W)


def test_coverage_without_the_residual_path_is_undetermined_rather_than_searched_for_hours():
    """Disjoint directed cycles of coprime lengths (no self-loops): without the residual path the states
    repeat only after lcm(2, 3, …, 23) ≈ 2·10⁸ layers.  The walk stops at its limit and says so — in the
    report, and as a DomainError from layers_to_coverage — instead of running for hours."""
    import networkx as nx

    from formal.errors import DomainError
    from formal.graphs import analysis, layered
    from formal.graphs.pattern import from_graph
    G, start = nx.DiGraph(), 0
    for length in (2, 3, 5, 7, 11, 13, 17, 19, 23):
        G.add_edges_from((start + i, start + (i + 1) % length) for i in range(length))
        start += length
    p = from_graph(G, ell=start)
    walked = analysis.summary(p, 4, residual=False)
    assert walked.undetermined == layered.settle_limit(start, 1) and walked.coverage is None
    with pytest.raises(DomainError, match="undetermined"):
        analysis.layers_to_coverage(p, residual=False)
    assert analysis.layers_to_coverage(p) is None           # with the residual path: settles, never covers
