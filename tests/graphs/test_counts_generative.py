"""Every count ``graph`` reports is exact: against brute force at small ℓ, closed forms at ℓ up to 2⁵⁰, and
through the command line, every pattern ``graph`` offers, with parameters drawn as its schema allows.

The oracles are :mod:`tests.graphs.exact_oracles` (written from each pattern's documented definition, never
read from the package) and, here, the FLOPs of Algorithm 5 under the ``matmul`` convention.  The report is
taken through the path the command takes (:func:`formal.graphs.report`, and ``graph --json`` itself):

- small ℓ (≤ 40): edges, density, in-degrees (and the built pattern's in- and out-degrees), per layer the
  receptive fields' min/mean/max with the residual path, min without it, largest span, layers to coverage
  with and without the residual path, maximum path length — each equal to brute force over all (k, q) pairs
  and boolean matrix powers, and the closed forms equal to brute force too;
- huge ℓ (10⁹ … 2⁵⁰, at times to 10³⁰): the same figures equal to the closed forms, every count an ``int`` (a
  float appears only as the density, a mean or the FLOP ratio, each the float nearest the exact quotient), and
  the report's printed formulas, evaluated at its values, equal to its numbers;
- the command line: every spelling of a size it accepts means the same value, and one it cannot read is one
  line ``formal-transformers: error: …`` with exit status 2.

Each property runs a few examples in the fast tier (``FAST``) and a long run (``LONG``) marked ``slow``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from formal import graphs
from formal.core.symbols import by_name, info
from formal.errors import ConfigError
from formal.graphs import counts, edgelist, memory, sums
from formal.graphs.schema import PARAMETERS, SCHEMAS
from formal.tools.cli import main
from tests.graphs.exact_oracles import brute, closed, definition, is_self, room, sum_min, tri
from tests.tiers import fast_few, slow

FAST, LONG = 25, 2000
HUGE = 2**50                                 # formal.guards.limits.MAX_SIZE; graph's sizes may go past it
FLOATS = {"density", "mean", "ratio"}        # the only floats a report may hold: quotients of exact ints
KINDS = tuple(SCHEMAS)


# ------------------------------------------------------------------------------------ the report's checks
def exact_types(obj, path=("report",)):
    """Every number of the report is a Python ``int`` (not a bool, not numpy's), but the documented quotients."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            exact_types(value, (*path, key))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            exact_types(value, (*path, i))
    elif isinstance(obj, float):
        assert path[-1] in FLOATS, f"{'.'.join(map(str, path))} = {obj!r} is a float"
    elif not isinstance(obj, (str, bool, type(None))):
        assert type(obj) is int, f"{'.'.join(map(str, path))} = {obj!r} is a {type(obj).__name__}, not an int"


def evaluate(text: str, values: dict) -> sp.Expr:
    """A formula as the report prints it (glyphs, ``·``, ``^``), evaluated exactly at ``values`` (by symbol
    name) — read back from the text, not from the package's expression."""
    glyphs = {info(by_name(name)).glyph: f"_v{i}" for i, name in enumerate(values)}
    bound = {f"_v{i}": sp.Integer(value) for i, value in enumerate(values.values())}
    words = re.compile("|".join(rf"(?<![\w|]){re.escape(g)}(?![\w|])" for g in sorted(glyphs, key=len, reverse=True)))
    python = words.sub(lambda m: glyphs[m.group(0)], text).replace("·", "*").replace("^", "**")
    return sp.sympify(python, locals={**bound, "Max": sp.Max, "Min": sp.Min, "floor": sp.floor})


def flops(heads, d_head, ell_z, ell_x, edges) -> int:
    """Algorithm 5 in the matmul convention (2 FLOPs a multiply-add) with d_attn = d_mid = d_head and
    d_x = d_z = d_out = H·d_head: per head Q (d_attn·d_x a query), K and V (d_attn·d_z and d_mid·d_z a key),
    scores and weighted values (d_attn and d_mid an edge), and the output (d_mid·d_out a query)."""
    d_model = heads * d_head
    return 2 * heads * d_head * 2 * (d_model * ell_x + d_model * ell_z + edges)


def agrees(r: dict, want, given: dict, *, layers: int, heads: int = 1, d_head: int = 64):
    """The report ``r`` holds the oracle's figures ``want`` exactly (``given``: for the messages)."""
    exact_types(r)
    case = f"{r['pattern']} {given}"
    assert (r["ell_z"], r["ell_x"], r["self_attention"]) == (want.ell_z, want.ell_x, want.self_attention), case
    assert type(r["edges"]) is int and r["edges"] == want.edges, (case, r["edges"], want.edges)
    pairs = want.ell_z * want.ell_x
    assert r["density"] == (want.edges / pairs if pairs else 0.0), case       # the float nearest the fraction
    degree = r["in_degree"]
    assert (degree["min"], degree["max"], degree["empty"]) == want.degree, (case, degree, want.degree)
    assert degree["mean"] == want.edges / want.ell_x, case
    assert ("formula" in r) == (r["pattern"] != "edgelist"), case              # a built-in pattern's
    if "formula" in r:
        formula = r["formula"]
        at = formula["values"]
        assert evaluate(formula["exact"], at) == want.edges, (case, formula)
        holds = all(evaluate(c.removesuffix(" ≥ 0"), at) >= 0 for c in formula["when"])
        assert formula["simplified_applies"] == holds, (case, formula)
        if holds:
            assert evaluate(formula["simplified"], at) == want.edges, (case, formula)
    f = r["flops"]
    assert f["sparse"] == flops(heads, d_head, want.ell_z, want.ell_x, want.edges), case
    assert f["dense"] == flops(heads, d_head, want.ell_z, want.ell_x, pairs), case
    assert f["ratio"] == f["sparse"] / f["dense"], case
    sizes = {"H": heads, "d_attn": d_head, "d_mid": d_head, "d_x": heads * d_head, "d_z": heads * d_head,
             "d_out": heads * d_head, "ell_x": want.ell_x, "ell_z": want.ell_z, "n_edges": want.edges}
    assert evaluate(f["sparse_formula"], sizes) == f["sparse"], case
    stack = r["layers"]
    if not want.self_attention:
        assert "skipped" in stack, case
        return
    n = want.ell_x
    rows = [(row["min"], row["mean"], row["max"], row["min_without_residual"], row["max_span"])
            for row in stack["receptive_field"]]
    expected = []
    for layer in range(1, layers + 1):
        least, total, most, alone, span = want.field(layer)
        expected.append((least, total / n, most, alone, span))
    assert [row["layer"] for row in stack["receptive_field"]] == list(range(1, layers + 1)), case
    assert rows == expected, (case, rows, expected)
    assert stack["layers_to_coverage"] == want.coverage, (case, stack, want.coverage)
    assert stack["max_path_length"] == want.max_path, (case, stack, want.max_path)
    after = stack.get("without_residual_undetermined_after")
    if after is None:
        assert stack["layers_to_coverage_without_residual"] == want.coverage_without, (case, stack)
    else:                                     # a user's graph: the walk stopped before its states repeated
        assert stack["layers_to_coverage_without_residual"] is None
        assert want.coverage_without is None or want.coverage_without > after, (case, stack)


def same_oracles(a, b, layers: int, context):
    """The closed forms agree with brute force."""
    def fields(e):
        return [e.field(layer) for layer in range(1, layers + 1)] if e.self_attention else []
    keys = ("ell_z", "ell_x", "self_attention", "edges", "degree", "coverage", "coverage_without", "max_path")
    assert [getattr(a, k) for k in keys] == [getattr(b, k) for k in keys], context
    assert fields(a) == fields(b), context


# ------------------------------------------------------------------------------------------ small cases
@st.composite
def options(draw, kind: str, n: int, *, big: bool = False) -> dict:
    """The options of ``kind`` at length ``n``, drawn as its schema allows (around the edge cases: windows
    and strides wider than ℓ, no global position, every position global, a summary per position); ``big``:
    any size up to 2·ℓ, besides small ones and those next to ℓ."""
    def size(low=1, high=None):
        high = 2 * n + 2 if high is None else high
        near = [x for x in (n - 1, n, n + 1, 2 * n, math.isqrt(n), math.isqrt(n) + 1) if low <= x <= high]
        choices = [st.integers(low, min(high, 64))]
        if big:
            choices += [st.integers(low, high), st.sampled_from(near or [low])]
        else:
            choices.append(st.integers(low, high))
        return draw(st.one_of(*choices))

    def maybe(name, strategy):
        return {name: draw(strategy)} if draw(st.booleans()) else {}

    if kind in ("sliding-window", "dilated", "global-local"):
        causal = maybe("causal", st.booleans())
    if kind in ("causal", "cross"):
        given = maybe("n_z", st.integers(1, 40) if not big else st.one_of(st.integers(1, HUGE), st.just(n)))
        if kind == "causal":                                # two lengths need an alignment
            align = st.sampled_from(("top-left", "bottom-right"))
            given |= {"align": draw(align)} if given.get("n_z", n) != n else maybe("align", align)
        return given
    if kind == "sliding-window":
        return {"window": size(), **causal}
    if kind == "dilated":
        return {"window": size(), "dilation": size(), **causal}
    if kind == "global-local":
        return {"window": size(), "n_global": size(0, n), **causal}
    if kind == "strided":
        return {"stride": size(), **maybe("part", st.sampled_from(("both", "local", "stride")))}
    if kind == "fixed":
        stride = size()
        summary = draw(st.one_of(st.integers(1, min(stride, 64)), st.sampled_from([1, stride, max(1, stride - 1)]),
                                 st.integers(1, stride)))
        return {"stride": stride, "summary": summary, **maybe("part", st.sampled_from(("both", "local", "summary")))}
    if kind == "random":                                    # built so that every query has keys left to draw
        n_global = size(0, n)
        window = size(0)
        widest = min(2 * window - 1, n - n_global) if window else 0
        free = n - n_global - widest
        if n > n_global and free < 1:
            window, free = 0, n - n_global
        n_random = draw(st.integers(1, max(free, 1))) if n > n_global else size()
        return {"n_random": n_random, "window": window, "n_global": n_global, "seed": draw(st.integers(0, 2**32))}
    return {}


@st.composite
def swin(draw, *, big: bool = False) -> dict:
    """A grid of H×W tokens cut into M×M windows (H and W multiples of M), shifted or not."""
    most = 2**12 if big else 4
    window = draw(st.integers(1, most))
    height, width = (window * draw(st.integers(1, most if big else 3)) for _ in range(2))
    given = {"grid": f"{height}x{width}", "window": window}
    if window >= 2 and draw(st.booleans()):
        given["shifted"] = True
        if draw(st.booleans()):
            given["shift"] = draw(st.integers(1, window - 1))
    if draw(st.booleans()):
        given["n"] = height * width
    return given


def report_options(draw, *, big: bool) -> dict:
    """The report's own parameters: layers shown, and the heads and head width of the FLOPs."""
    return {"layers": draw(st.integers(0, 6)), **({"heads": draw(st.integers(1, 2**10 if big else 4))}
                                                  if draw(st.booleans()) else {}),
            **({"d_head": draw(st.integers(1, 2**12 if big else 128))} if draw(st.booleans()) else {})}


@st.composite
def small_cases(draw):
    """``(kind, given, pairs)``: a pattern of ``graph`` with ℓ ≤ 40 (an edge list: ℓ ≤ 12 and its pairs)."""
    kind = draw(st.sampled_from(KINDS))
    if kind == "swin":
        given = draw(swin())
    elif kind == "edgelist":
        n = draw(st.integers(1, 12))
        pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n * n))
        return kind, {"n": n, **report_options(draw, big=False)}, sorted(pairs)
    else:
        n = draw(st.integers(1, 40))
        given = {"n": n, **draw(options(kind, n))}
    return kind, {**given, **report_options(draw, big=False)}, None


@contextlib.contextmanager
def edge_file(pairs):
    """A temporary edge list of ``pairs`` (None: no file)."""
    if pairs is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "edges.txt")
        with open(path, "w") as out:
            out.write("".join(f"{k} {q}\n" for k, q in pairs))
        yield path


def check_small(case):
    kind, given, pairs = case
    with edge_file(pairs) as path:
        spec = graphs.spec(kind, **given, **({"file": path} if path else {}))
        r, built = spec.report(), spec.build()
    v = spec.values
    pattern = built.build() if hasattr(built, "build") else built              # a structure's edges, made
    if kind == "edgelist":
        mask = np.zeros((v["n"], v["n"]), dtype=bool)
        for k, q in pairs:
            mask[k, q] = True
    else:
        mask = definition(kind, v)
    if kind == "random":                    # the fixed part, and r more keys for every non-global query
        drawn = pattern.mask()
        extra = drawn.sum(axis=0) - mask.sum(axis=0)
        assert not (mask & ~drawn).any(), given
        assert extra.tolist() == [0 if q < v["n_global"] else v["n_random"] for q in range(v["n"])], given
        mask = drawn
    want = brute(mask, is_self(kind, v))
    if kind not in ("random", "edgelist"):
        same_oracles(closed(kind, v), want, v["layers"], (kind, given))
    elif kind == "random":
        c = closed(kind, v)
        assert (c.edges, c.degree) == (want.edges, want.degree), given
    assert pattern.in_degree.tolist() == mask.sum(axis=0).tolist(), given
    assert pattern.out_degree.tolist() == mask.sum(axis=1).tolist(), given
    agrees(r, want, given, layers=v["layers"], heads=v["heads"], d_head=v["d_head"])


@settings(max_examples=FAST, deadline=None)
@given(small_cases())
def test_small_patterns_count_as_brute_force(case):
    """Every figure of the report at ℓ ≤ 40 equals brute force over all (k, q) pairs (and the closed forms)."""
    check_small(case)


@slow
@settings(max_examples=LONG, deadline=None)
@given(small_cases())
def test_small_patterns_count_as_brute_force_long(case):
    check_small(case)


# ------------------------------------------------------------------------------------------ huge cases
@st.composite
def huge_cases(draw, kinds=tuple(k for k in KINDS if k != "edgelist")):
    """``(kind, given, deep)``: a pattern of ``graph`` (not an edge list) with ℓ from 10⁹ to 2⁵⁰ (and at times to
    10³⁰), and a number of layers up to 2⁴⁰ to ask its structure about."""
    kind = draw(st.sampled_from(kinds))
    if kind == "swin":
        given = draw(swin(big=True))
    else:
        n = draw(st.one_of(st.integers(10**9, HUGE), st.sampled_from([10**9, 1_000_000_001, 2**53 + 1, HUGE]),
                           st.integers(HUGE, 10**30)))                  # no upper bound: a structure has none
        given = {"n": n, **draw(options(kind, n, big=True))}
    return kind, {**given, **report_options(draw, big=True)}, draw(st.integers(1, 2**40))


def check_huge(case):
    kind, given, deep = case
    spec = graphs.spec(kind, **given)
    v = spec.values
    want = closed(kind, v)
    if kind == "random":                    # its edges are drawn: the count, without building them
        if room(v):
            count = spec.edge_count()
            assert type(count) is int and count == want.edges, (given, count, want.edges)
        else:
            with pytest.raises(ConfigError, match="n_random"):
                spec.edge_count()
        return
    agrees(graphs.report(kind, **given), want, given, layers=v["layers"], heads=v["heads"], d_head=v["d_head"])
    s = spec.build()
    assert type(s.n_edges) is int and s.n_edges == want.edges
    if want.self_attention:                 # any depth, from the structure
        least, total, most, alone, span = want.field(deep)
        assert s.spread(deep) == (least, total / want.ell_x, most), (given, deep)
        assert s.spread(deep, residual=False)[0] == alone and s.span(deep) == span, (given, deep)


@settings(max_examples=FAST, deadline=None)
@given(huge_cases())
def test_huge_patterns_count_as_closed_forms(case):
    """At ℓ from 10⁹ to 2⁵⁰ every count of the report equals its closed form in Python ints."""
    check_huge(case)


@slow
@settings(max_examples=LONG, deadline=None)
@given(huge_cases())
def test_huge_patterns_count_as_closed_forms_long(case):
    check_huge(case)


def test_the_reported_case_counts_every_edge():
    """The report that found the bug: a causal window wider than ℓ = 10⁹ + 1 is the causal pattern, ℓ(ℓ+1)/2
    edges — its last digit 1, not the float's 0 — and the formula printed beside it agrees."""
    n = 1_000_000_001
    r = graphs.report("sliding-window", n=n, window=2_000_000_000)
    assert r["edges"] == n * (n + 1) // 2 == 500000001500000001
    assert evaluate(r["formula"]["exact"], r["formula"]["values"]) == r["edges"]
    assert r["in_degree"]["mean"] == (n + 1) / 2 and r["density"] == float(Fraction(n + 1, 2 * n))


# ------------------------------------------------------------------------------------------ sums, counts
@st.composite
def big_ints(draw, low=0):
    return draw(st.one_of(st.integers(low, 64), st.integers(low, 2**64), st.sampled_from([2**53 + 1, 2**60 - 1])))


@settings(max_examples=200, deadline=None)
@given(big_ints(), big_ints(), st.booleans())
def test_the_sums_are_exact_for_ints_and_fractions(n, m, fractions):
    """``formal.graphs.sums`` with Python numbers: exact (an int or a whole Fraction, never a float) past 2⁵³,
    whether given ints or Fractions; a float argument is refused."""
    wrap = Fraction if fractions else int
    s = max(m, 1)
    got = {"triangle": sums.triangle(wrap(n - m)), "sum_min": sums.sum_min(wrap(n), wrap(m)),
           "sum_floor": sums.sum_floor(wrap(n), wrap(s))}
    want = {"triangle": tri(n - m), "sum_min": sum_min(n, m),
            "sum_floor": s * (n // s) * (n // s - 1) // 2 + (n % s) * (n // s)}
    for name, value in got.items():
        assert isinstance(value, (int, Fraction)) and value == want[name], (name, value, want[name])
    assert sums.ratio(n, s) == Fraction(n, s)
    with pytest.raises(TypeError, match="exact"):
        sums.triangle(float(n))


def test_exact_count_is_an_int_or_an_error():
    """:func:`formal.graphs.counts.exact_count` gives an int for every pattern at ℓ = 2⁵⁰; a result that is not a
    whole number, or a float on the way, is a TypeError, never rounded."""
    n = HUGE
    for name, args in [("full", {"ell": n}), ("causal", {"ell": n}), ("cross", {"ell_z": n, "ell_x": n - 3}),
                       ("sliding_window", {"ell": n, "window": n + 7}), ("dilated", {"ell": n, "window": 5,
                                                                                        "dilation": 3}),
                       ("global_local", {"ell": n, "window": 9, "n_global": 3}), ("strided", {"ell": n, "stride": 3}),
                       ("fixed", {"ell": n, "stride": 3, "summary": 2}), ("random", {"ell": n, "n_random": 2}),
                       ("swin", {"ell": n, "height": 2**25, "width": 2**25, "window": 4, "shift": 1})]:
        assert type(counts.exact_count(name, **args)) is int, name
    assert counts.exact_count("causal", ell=n) == n * (n + 1) // 2
    with pytest.raises(TypeError, match="not an exact integer"):
        counts.exact_count("full", ell=2.5)                                 # 6.25 edges: never rounded to 6
    with pytest.raises(TypeError, match="a count is exact"):
        counts.exact_count("causal", ell=1.5)                               # a float met by an exact quotient


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(10**18, 10**40), st.integers(1, 400).map(lambda e: 10**e - 1),
                 st.integers(1, 400).map(lambda e: 10**e), st.integers(19, 400).map(lambda e: 9995 * 10**(e - 3))))
def test_number_rounds_huge_counts_to_three_figures(n):
    """:func:`formal.graphs.memory.number` prints a count from 10¹⁸ as ``≈d.dde+X`` with ``1 ≤ d.dd < 10``, within
    half a unit of its last place (a float's logarithm put ``≈10.00e+18`` for 10¹⁹ − 1)."""
    text = memory.number(n)
    if n < 10**18:
        assert text == f"{n:,}"
        return
    mantissa, exponent = text.removeprefix("≈").split("e+")
    assert re.fullmatch(r"[1-9]\.[0-9]{2}", mantissa), text
    assert abs(Fraction(mantissa) * 10 ** int(exponent) - n) <= Fraction(5, 1000) * 10 ** int(exponent), text


# ------------------------------------------------------------------------------------------ the command line
_FLAGS = {p.name: p for p in PARAMETERS}
_FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def spellings(value: int) -> list:
    """Ways to write ``value``: as Python's ``int`` reads it (a sign, leading zeros, spaces, underscores, other
    scripts' digits), in scientific notation or as a power, and ``value.0``."""
    digits = str(value)
    ways = [digits, f"+{digits}", f"00{digits}", f" {digits} ", f"{value:_}", digits.translate(_FULLWIDTH),
            digits.translate(_ARABIC), f"{digits}.0"]
    zeros = len(digits) - len(digits.rstrip("0"))
    if zeros:
        ways.append(f"{digits[:len(digits) - zeros]}e{zeros}")                  # 1000 → 1e3
    if value > 1 and value & (value - 1) == 0:
        ways.append(f"2**{value.bit_length() - 1}")                             # 1024 → 2**10
    return ways


@st.composite
def command_lines(draw):
    """``(kind, given, argv, pairs, plain)``: a small or huge case and the ``graph`` command line giving it, each
    size in a drawn spelling (``plain``: all in decimal digits), ``--flag value`` or ``--flag=value``,
    ``--seq-len`` or its deprecated ``--n``."""
    kind, given, extra = draw(st.one_of(small_cases(), huge_cases(tuple(k for k in KINDS if k not in
                                                                          ("edgelist", "random")))))
    argv, plain = ["graph", kind, "--json"], True
    for name, value in given.items():
        if isinstance(value, bool):
            p = _FLAGS[name]
            argv.append(p.flag if value else f"--{p.negation[0]}")
            continue
        p = _FLAGS[name]
        flag = draw(st.sampled_from((p.flag, *p.deprecated)))
        if isinstance(value, int):
            text = draw(st.sampled_from(spellings(value)))
            plain = plain and text.isascii() and text.isdigit()
        elif name == "grid":                                # HxW, HXW, H×W, spaces around
            height, width = value.split("x")
            text = draw(st.sampled_from([value, f"{height}X{width}", f"{height}×{width}", f" {value} "]))
        else:
            text = value
        argv += [f"{flag}={text}"] if draw(st.booleans()) else [flag, text]
    pairs = extra if kind == "edgelist" else None
    return kind, given, argv, pairs, plain


def run(argv) -> tuple:
    """``main(argv)`` in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def check_command_line(case):
    """A spelling the command accepts means the value it spells; one it refuses is one line, exit status 2 —
    and plain decimal digits are always accepted."""
    kind, given, argv, pairs, plain = case
    with edge_file(pairs) as path:
        argv = argv + (["--file", path] if path else [])
        status, out, err = run(argv)
        want = graphs.report(kind, **given, **({"file": path} if path else {}))
    said = [line for line in err.splitlines() if not line.startswith("formal-transformers: note: ")]  # --n's
    if status == 2 and not plain:
        assert out == "" and len(said) == 1 and said[0].startswith("formal-transformers: error: "), err
        return
    assert status == 0 and not said, (argv, err)
    printed = json.loads(out)
    assert printed == json.loads(json.dumps(want)), argv
    exact_types(printed)


@settings(max_examples=10, deadline=None)
@given(command_lines())
def test_every_spelling_of_a_size_means_its_value(case):
    """``graph … --json`` prints :func:`formal.graphs.report`'s figures for the same values, whichever spelling
    of each size the command line was given."""
    check_command_line(case)


@slow
@settings(max_examples=LONG, deadline=None)
@given(command_lines())
def test_every_spelling_of_a_size_means_its_value_long(case):
    check_command_line(case)


@pytest.mark.parametrize("argv", [
    ["full", "--seq-len", "1,000"], ["full", "--seq-len", "1.000,5"], ["full", "--seq-len", "1k"],
    ["full", "--seq-len", "1.5"], ["full", "--seq-len", "1e-3"], ["full", "--seq-len", ""], ["full", "--seq-len", "½"],
    ["full", "--seq-len", "ten"], ["full", "--seq-len", "1" * 5000], ["strided", "--seq-len", "64", "--stride", "2.5"],
    ["swin", "--grid", "8*8", "--window", "4"], ["swin", "--grid", "8x8x8", "--window", "4"],
    ["swin", "--grid", "8,5x8", "--window", "4"], ["full", "--s", "64"],
], ids=lambda argv: " ".join(a[:12] for a in argv))
def test_a_size_the_command_cannot_read_is_one_line(argv):
    """A thousands separator or decimal comma (1,000: a thousand, or one?), a unit, a fraction, a word, 5,000
    digits, an ambiguous flag prefix: refused with one line ``formal-transformers: error: …`` and exit status 2,
    nothing on stdout."""
    status, out, err = run(["graph", *argv, "--json"])
    assert status == 2 and out == "", (argv, out)
    assert err.count("\n") == 1 and err.startswith("formal-transformers: error: "), err


@pytest.mark.parametrize("command", fast_few([(sys.executable, "-m", "formal"), ("formal-transformers",)]))
def test_the_reported_case_through_the_installed_command(command):
    """``python -m formal`` and ``formal-transformers``, each in its own process: ℓ(ℓ+1)/2 exactly."""
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not on PATH")
    n = 1_000_000_001
    done = subprocess.run([*command, "graph", "sliding-window", "--seq-len", str(n), "--window", "2000000000",
                           "--layers", "1", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["edges"] == n * (n + 1) // 2 and r["ell_x"] == n
    assert evaluate(r["formula"]["exact"], r["formula"]["values"]) == r["edges"]


def test_an_edge_list_too_long_for_int64_is_refused():
    """An edge list's edges are sorted by ``q·ℓ + k`` in int64: an ℓ whose ℓ² pairs it cannot number is refused,
    not wrapped into a negative position."""
    with pytest.raises(ConfigError, match="more pairs than int64"):
        edgelist.parse("5 3000000000000\n3000000000000 7\n", 2**45)
    keys, queries = edgelist.parse("5 3000000000\n3000000000 7\n", 3_037_000_499)     # ℓ² < 2⁶³
    assert keys.tolist() == [3_000_000_000, 5] and queries.tolist() == [7, 3_000_000_000]
