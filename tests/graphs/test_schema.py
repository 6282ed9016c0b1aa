"""The patterns' parameter schema (formal.graphs.schema) and patterns from data (formal.graphs.specs): every
parameter is reachable from the command line and from data with the same result, bad data is refused with a
message naming what is wrong, and the command, the claims and :func:`formal.graphs.report` agree."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import keyword

import pytest
from hypothesis import event, given, settings, strategies as st

from formal import graphs
from formal.errors import ConfigError, FormalError, ResourceError, shown
from formal.graphs import patterns, schema
from formal.graphs.kinds import Choice, File, Flag, Grid, Integer
from formal.graphs.schema import PARAMETERS, SCHEMAS
from formal.guards.files import json_text
from formal.guards.limits import memory_limit
from formal.tools.cli import build_parser, main

OUTPUT_OPTIONS = {"pattern", "draw", "json", "max_memory", "command", "run"}


def _graph_parser():
    sub = next(a for a in build_parser()._actions if getattr(a, "choices", None) and "graph" in a.choices)
    return sub.choices["graph"]


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------- the schema itself
def test_every_flag_of_graph_is_a_declared_parameter():
    """The command's flags are the declared parameters (and its own output options), one each."""
    dests = {a.dest for a in _graph_parser()._actions if a.dest != "help"}
    assert dests - OUTPUT_OPTIONS == {p.name for p in PARAMETERS}


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_every_parameter_of_a_pattern_is_reachable_from_the_command_line(name):
    """A pattern takes a declared parameter, narrowed at most: every value it accepts, the flag accepts."""
    declared = {p.name: p for p in PARAMETERS}
    for p in SCHEMAS[name].parameters:
        assert p.name.isidentifier() and not keyword.iskeyword(p.name)
        assert declared[p.name].kind.admits(p.kind), (name, p.name)
        assert (p.flag, p.metavar, p.meaning, p.aliases) == (declared[p.name].flag, declared[p.name].metavar,
                                                              declared[p.name].meaning, declared[p.name].aliases)


@pytest.mark.parametrize("name", [n for n, s in SCHEMAS.items() if s.builder in patterns.PATTERNS])
def test_the_builders_take_the_options_their_schema_declares(name):
    """The Python builders' keyword defaults are the schema's defaults, and their required arguments the
    schema's required options: a pattern built from data is the one built in Python."""
    s = SCHEMAS[name]
    signature = inspect.signature(patterns.PATTERNS[s.builder].build).parameters
    options = {p.name: p for p in s.parameters if p.role == "option"}
    taken = {k: v for k, v in signature.items() if k in options}
    assert set(taken) == set(options), (name, set(signature))
    for key, p in options.items():
        expected = inspect.Parameter.empty if p.required else p.default
        assert taken[key].default == expected, (name, key)


def test_the_alignments_are_the_specs():
    from formal.core import masks
    assert schema.ALIGNMENTS == masks.ALIGNMENTS


# ------------------------------------------------------------------------------- data ↔ command line
def _value(draw, p, tmp):
    """A value of the type ``p`` declares, mostly in range (small sizes); sometimes one the pattern refuses."""
    kind = p.kind
    if isinstance(kind, Integer):
        low = kind.minimum if p.name in ("n", "n_z") else max(kind.minimum - 1, 0)
        return draw(st.integers(max(low, 1) if p.name in ("n", "n_z") else low, 20 if p.role == "size" else 5))
    if isinstance(kind, Choice):
        return draw(st.sampled_from(schema.schema_of("causal")["align"].kind.words if p.name == "align"
                                    else [w for q in PARAMETERS if q.name == p.name for w in q.kind.words]))
    if isinstance(kind, Flag):
        return draw(st.booleans())
    if isinstance(kind, Grid):
        return f"{draw(st.integers(1, 8))}x{draw(st.integers(1, 8))}"
    assert isinstance(kind, File)
    return tmp


@st.composite
def data(draw, tmp):
    """A pattern and parameters of the right types for it (required ones given, others sometimes), as data."""
    name = draw(st.sampled_from(list(SCHEMAS)))
    given_ = {}
    for p in SCHEMAS[name].parameters:
        if p.name == "n" and name == "swin":
            continue                                 # n follows from the grid (a disagreement is the flags' wording)
        if p.required or draw(st.booleans()):
            given_[p.name] = _value(draw, p, tmp)
    return name, given_


def argv_of(name, given_) -> list:
    """The command line of the same parameters: each parameter's flag, from the schema."""
    argv = ["graph", name]
    for p in SCHEMAS[name].parameters:
        if p.name not in given_:
            continue
        value = given_[p.name]
        if isinstance(p.kind, Flag):
            argv += [p.flag] if value else ([f"--{p.negation[0]}"] if p.negation else [])
        else:
            argv += [p.flag, str(value)]
    return argv


@pytest.fixture(scope="module")
def edges_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "edges.txt"
    path.write_text("0 1\n1 2\n# a comment\n2 0\n")
    return str(path)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_data_and_the_command_line_give_the_same_report(edges_file, drawn):
    """``graph PATTERN --flags --json`` prints what ``formal.graphs.report(PATTERN, **parameters)`` returns,
    or both refuse with the same message — but a value no pattern takes, which the flag itself refuses first
    (``argument --dilation: 0 must be a positive integer``), and data then refuses too."""
    name, given_ = drawn.draw(data(edges_file))
    status, out, err = _run(argv_of(name, given_) + ["--json"])
    try:
        expected = json.loads(json_text(graphs.report(name, **given_)))
    except FormalError as exc:
        event("refused by the flags" if "argument --" in err else "refused")
        assert status == 2 and err.count("\n") == 1, err
        if not err.startswith("formal-transformers: error: argument --"):
            assert err == f"formal-transformers: error: {exc}\n", (err, str(exc))
        return
    event("reported")
    assert status == 0 and json.loads(out) == expected, err


@pytest.mark.parametrize("name, given_", [
    ("sliding-window", {"n": 140_000, "window": 4096, "layers": 32}),
    ("sliding-window", {"n": 1000, "window": 5, "causal": False}),
    ("swin", {"grid": "56x56", "window": 7, "heads": 3, "d_head": 32}),
    ("swin", {"grid": "8x8", "window": 4, "shifted": True, "shift": 1}),
    ("global-local", {"n": 40, "window": 3, "n_global": 2, "causal": True}),
    ("fixed", {"n": 40, "stride": 8, "summary": 2, "part": "summary"}),
    ("random", {"n": 60, "n_random": 3, "window": 2, "n_global": 1, "seed": 7}),
    ("causal", {"n": 6, "n_z": 9, "align": "bottom-right"}),
    ("cross", {"n": 5, "n_z": 7}),
])
def test_the_command_the_claims_and_report_agree(name, given_):
    """The three callers of one function: ``graph --json``, a claim's ``graph``/``args`` and
    :func:`formal.graphs.report` give the same figures for the same data."""
    from formal.tools.claims.subjects import value_of
    expected = json.loads(json_text(graphs.report(name, **given_)))
    status, out, err = _run(argv_of(name, given_) + ["--json"])
    assert status == 0 and json.loads(out) == expected, err
    for quantity, figure in (("edges", expected["edges"]), ("density", expected["density"]),
                             ("flops.sparse", expected["flops"]["sparse"])):
        assert value_of({"graph": name, "args": given_}, quantity).value == figure
    if expected["self_attention"]:
        last = expected["layers"]["receptive_field"][-1]["max"] if expected["layers"]["receptive_field"] else None
        if last is not None:
            assert value_of({"graph": name, "args": given_}, "layers.receptive_field.max").value == last


def test_an_edge_list_from_data_is_the_command_lines(edges_file):
    status, out, _ = _run(["graph", "edgelist", "--seq-len", "4", "--file", edges_file, "--json"])
    assert status == 0 and json.loads(out) == json.loads(json_text(graphs.report("edgelist", n=4, file=edges_file)))
    assert graphs.build("edgelist", n=4, file=edges_file).n_edges == 3


# ------------------------------------------------------------------------------- spellings
def test_other_spellings_are_the_same_parameters():
    """``ell`` for ``n``, the flags' ``global`` and ``random``, ``bidirectional`` for not ``causal``; the
    builder's name for the command's."""
    assert graphs.report("sliding_window", ell=64, window=8, bidirectional=True) == \
        graphs.report("sliding-window", n=64, window=8, causal=False)
    assert graphs.report("random", n=32, random=2, **{"global": 1}) == \
        graphs.report("random", n=32, n_random=2, n_global=1)
    with pytest.raises(ConfigError, match="^global does not apply to the full pattern; it takes n, layers"):
        graphs.report("full", n=8, **{"global": 1})                   # named as the caller wrote it
    for twice in ({"n": 8, "ell": 8}, {"n": 8, "window": 2, "causal": True, "bidirectional": False}):
        with pytest.raises(ConfigError, match="give the same parameter: give one"):
            graphs.report("sliding-window" if "window" in twice else "full", **twice)


def test_none_is_not_given():
    assert graphs.spec("swin", grid="8x8", window=4, shift=None, n=None).values["shift"] is None
    with pytest.raises(ConfigError, match="the full pattern needs n$"):
        graphs.spec("full", n=None)


# ------------------------------------------------------------------------------- bad data
_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(list(SCHEMAS)), key=_NAMES)
def test_an_unknown_parameter_is_refused_with_the_patterns_parameters(name, key):
    s = SCHEMAS[name]
    spellings = {p.name for p in PARAMETERS} | {a for p in PARAMETERS for a in p.aliases} | {"bidirectional"}
    if key in s.names or key in spellings - set(schema.NOT_PARAMETERS):
        return
    with pytest.raises(ConfigError) as error:
        graphs.spec(name, **{p.name: 1 for p in s.parameters if p.required and p.role == "option"}, **{key: 1})
    message = str(error.value)
    assert key in message and message.endswith(f" takes {', '.join(s.names)}"), message


@pytest.mark.parametrize("key", ["help", "max", "max_memory", "draw", "json"])
def test_the_command_lines_own_options_are_not_parameters(key):
    """What reached the command line's flags through argv before (``--help``, a prefix of ``--max-memory``)
    is refused as data; the memory limit is the caller's."""
    with pytest.raises(ConfigError, match=f"{key}|the memory limit") as error:
        graphs.report("full", n=8, **{key: 1})
    assert "n, layers, heads, d_head" in str(error.value)


def test_the_memory_limit_is_the_callers():
    with memory_limit("1K"), pytest.raises(ResourceError, match="memory limit"):
        graphs.report("random", n=4096, n_random=3)


def _not_an_integer(value) -> bool:
    """Whether the gate every number passes reads ``value`` as no integer ("8", "2**3" and 8.0 are 8)."""
    from formal.guards.numbers import exact
    try:
        return not isinstance(exact(value), int)
    except ConfigError:
        return True


_WRONG = {Integer: st.one_of(st.text(max_size=5), st.floats(allow_nan=False), st.booleans()).filter(_not_an_integer),
          Flag: st.one_of(st.integers(), st.text(max_size=5)),
          Choice: st.one_of(st.integers(),
                            st.text(max_size=5).filter(lambda t: t not in schema.PARTS + schema.ALIGNMENTS)),
          Grid: st.one_of(st.integers(), st.booleans()),
          File: st.one_of(st.integers(), st.booleans())}


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_value_of_the_wrong_type_names_the_parameter_its_value_and_what_it_must_be(drawn):
    name = drawn.draw(st.sampled_from(list(SCHEMAS)))
    s = SCHEMAS[name]
    p = drawn.draw(st.sampled_from(s.parameters))
    value = drawn.draw(_WRONG[type(p.kind)])
    needed = {q.name: 1 for q in s.parameters if q.required and q.role == "option"}
    sizes = {"grid": "8x8"} if name == "swin" else {"n": 8, **({"file": "x"} if name == "edgelist" else {})}
    with pytest.raises(ConfigError) as error:
        graphs.spec(name, **{**needed, **sizes, p.name: value})
    assert f"{p.name} = {shown(value)}" in str(error.value)
    assert p.kind.describe().split(",")[0].split()[-1] in str(error.value) or "known:" in str(error.value)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_value_out_of_range_names_the_parameter(drawn):
    name = drawn.draw(st.sampled_from(list(SCHEMAS)))
    s = SCHEMAS[name]
    integers = [p for p in s.parameters if isinstance(p.kind, Integer)]
    p = drawn.draw(st.sampled_from(integers))
    value = drawn.draw(st.integers(-10**6, p.kind.minimum - 1) | (st.integers(p.kind.maximum + 1, 2**60)
                                                                  if p.kind.maximum else st.nothing()))
    needed = {q.name: 1 for q in s.parameters if q.required and q.role == "option"}
    sizes = {"grid": "8x8"} if name == "swin" else {"n": 8, **({"file": "x"} if name == "edgelist" else {})}
    with pytest.raises(ConfigError, match=f"{p.name} = {value} must be {p.kind.describe()}"):
        graphs.spec(name, **{**needed, **sizes, p.name: value})


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_a_missing_required_parameter_is_named(name):
    for p in SCHEMAS[name].parameters:
        if not p.required:
            continue
        given_ = {q.name: "8x8" if q.name == "grid" else "x" if q.name == "file" else 2
                  for q in SCHEMAS[name].parameters if q.required and q is not p}
        with pytest.raises(ConfigError, match=f"the {name} pattern needs {p.name}$"):
            graphs.spec(name, **given_)


def test_an_unknown_pattern_names_the_known_ones():
    with pytest.raises(ConfigError, match="unknown pattern 'nosuch'; known: full, causal, cross"):
        graphs.report("nosuch", n=8)
