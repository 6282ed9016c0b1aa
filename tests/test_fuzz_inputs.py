"""Fuzzing the readers and the option parser with hypothesis: whatever the bytes of a file, the text of an
option or the words of a command line, the only exceptions are the package's own (:class:`FormalError`,
with a one-line message), and the command line answers 0 or 2 with at most one line on stderr.

- :func:`formal.guards.files.read_toml` / :func:`formal.models.config.load_config` on arbitrary bytes, arbitrary text,
  generated TOML documents (random keys, values and nesting, then mutated) and deep nesting;
- a configuration read all the way through ``complexity --config`` (in process);
- :func:`formal.engine.options.parse_options` and :func:`formal.get` for every algorithm with arbitrary
  ``KEY=VALUE`` texts; a text option's value round-trips exactly;
- :func:`formal.tools.cli.main` on argv built from the real subcommands and flags with random values (only the
  spec's own commands, with small sizes).

``max_examples`` follows the hypothesis profile of ``tests/conftest.py`` (derandomized under ``ci``), capped
so that this file runs in well under a minute in the ``dev`` and ``ci`` profiles.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import re
import string
import tempfile

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

import formal
from formal.algorithms import ALGORITHMS
from formal.engine.options import parse_options
from formal.errors import ConfigError, FormalError
from formal.guards.files import read_toml
from formal.models.complexity import MODELS
from formal.models.config import KEYS, load_config
from formal.models.presets import PRESETS
from formal.tools import cli
from tests.tiers import fast_few, in_fast_tier, slow

_PROFILE_EXAMPLES = settings.default.max_examples


def examples(n: int) -> int:
    """``n`` examples in the dev/ci profiles; proportionally more under a larger profile (``thorough``)."""
    return n if _PROFILE_EXAMPLES <= 60 else max(n, n * _PROFILE_EXAMPLES // 60)


def fuzz(n: int):
    return settings(max_examples=examples(n), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


# ------------------------------------------------------------------------------------------ files
@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="formal-fuzz-") as path:
        yield path


def _file(folder, content) -> str:
    path = os.path.join(folder, "config.toml")
    with open(path, "wb") as handle:
        handle.write(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _one_line(exc: BaseException):
    message = str(exc)
    assert message.strip(), f"{type(exc).__name__} with an empty message"
    assert "\n" not in message.strip() and "\r" not in message.strip(), f"a message of several lines: {message!r}"


def _only_formal_errors(call):
    """``call()``'s value, or None if it raised a FormalError (one line); any other exception fails."""
    try:
        return call()
    except FormalError as exc:
        _one_line(exc)
        return None


def _check_config(folder, content):
    path = _file(folder, content)
    data = _only_formal_errors(lambda: read_toml(path, what="config file"))
    assert data is None or isinstance(data, dict)
    loaded = _only_formal_errors(lambda: load_config(path))
    event("loaded" if loaded is not None else "refused")
    if loaded is not None:
        name, algorithm, options, sizes, seq_len = loaded
        assert isinstance(name, str) and isinstance(algorithm, str)
        assert isinstance(options, dict) and isinstance(sizes, dict)
        assert all(isinstance(v, int) and not isinstance(v, bool) for v in sizes.values())
        assert seq_len is None or (isinstance(seq_len, int) and not isinstance(seq_len, bool))
    return loaded


@fuzz(60)
@given(content=st.binary(max_size=2000))
def test_read_toml_on_arbitrary_bytes(folder, content):
    _check_config(folder, content)


@fuzz(60)
@given(content=st.text(max_size=500))
def test_read_toml_on_arbitrary_text(folder, content):
    _check_config(folder, content)


# TOML documents: random keys (the real ones and others), values and nesting, serialised by hand.
MODEL_OPTIONS = sorted({k for m in MODELS for k in ALGORITHMS[m].options})
SIZE_NAMES = sorted({str(s) for m in MODELS for variant in ({}, {"n_kv_heads": "symbolic"}, {"token_types": True})
                     if set(variant) <= set(ALGORITHMS[m].options)
                     for s in formal.get(m, **variant).symbols})
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _string(text: str) -> str:
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _key(key: str) -> str:
    return key if _BARE.fullmatch(key) else _string(key)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise AssertionError(type(v))


def _document(doc: dict, sections: bool) -> str:
    """Scalars first, then (``sections``) every table of scalars as a [section], the rest inline."""
    head, tail = [], []
    for k, v in doc.items():
        if sections and isinstance(v, dict) and not any(isinstance(x, dict) for x in v.values()):
            tail.append(f"[{_key(k)}]\n" + "".join(f"{_key(a)} = {_value(b)}\n" for a, b in v.items()))
        else:
            head.append(f"{_key(k)} = {_value(v)}\n")
    return "".join(head) + "\n".join(tail)


_keys = st.one_of(st.sampled_from(list(KEYS) + MODEL_OPTIONS + SIZE_NAMES),
                  st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True), st.text(max_size=6))
_ints = st.one_of(st.integers(-3, 70), st.integers(-2**64, 2**64), st.sampled_from([0, 2**50, 2**50 + 1, 10**400,
                                                                                     -10**400, 2**63]))
_scalars = st.one_of(_ints, st.floats(), st.booleans(), st.text(max_size=12),
                     st.sampled_from(["dtransformer", "etransformer", "edtransformer", "nan", "inf", "true",
                                      "rms", "swiglu", "symbolic", "__import__('os').system('true')"]),
                     st.datetimes(), st.dates(), st.times())
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
                       max_leaves=16)
_options = st.dictionaries(st.sampled_from(MODEL_OPTIONS) | _keys, _values, max_size=5)
_sizes = st.dictionaries(st.sampled_from(SIZE_NAMES) | _keys, _ints | _values, max_size=8)
documents = st.fixed_dictionaries({}, optional={
    "name": _values, "algorithm": st.sampled_from(MODELS) | _values, "seq_len": _ints | _values,
    "options": _options | _values, "sizes": _sizes | _values}).flatmap(
    lambda d: st.one_of(st.just({}), st.just({}), st.just({}), st.dictionaries(_keys, _values, max_size=2)).map(
        lambda extra: {**extra, **d}))


@st.composite
def toml_texts(draw):
    text = _document(draw(documents), draw(st.booleans()))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):      # mutations: insert, delete, duplicate a line
        kind = draw(st.sampled_from(["insert", "delete", "duplicate"]))
        at = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:at] + draw(st.text(alphabet=string.printable + "[]{}=\".'#é\x00\x7f", max_size=4)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
        else:
            lines = text.splitlines(keepends=True)
            if lines:
                line = lines[draw(st.integers(0, len(lines) - 1))]
                text += line if line.endswith("\n") else "\n" + line
    return text


@slow
@fuzz(80)
@given(text=toml_texts())
def test_load_config_on_generated_toml(folder, text):
    if _check_config(folder, text) is not None:  # read: then all the way through `complexity --config`
        argv = ["complexity", "--config", _file(folder, text), "--json"]
        _check_status(argv, *_main(argv))


@fuzz(30)
@given(kind=st.sampled_from(["array", "inline", "dotted", "header", "array-of-tables", "mixed"]),
       depth=st.integers(1, 3000))
def test_deep_nesting_is_a_config_error_or_fine(folder, kind, depth):
    text = {"array": "x = " + "[" * depth + "]" * depth,
            "inline": "x = " + "{a = " * depth + "1" + "}" * depth,
            "dotted": "a" + ".a" * depth + " = 1",
            "header": "[" + ".".join(["t"] * depth) + "]",
            "array-of-tables": "[[" + ".".join(["t"] * depth) + "]]",
            "mixed": "x = " + "[{a = " * depth + "1" + "}]" * depth}[kind] + "\n"
    _check_config(folder, text)


LONG = "x" * 100_000


@pytest.mark.parametrize("text", [
    'algorithm = "dtransformer"\n[sizes]\nd_e = "' + LONG + '"\n',
    'algorithm = "dtransformer"\nsizes = "' + LONG + '"\n',
    'algorithm = "dtransformer"\noptions = "' + LONG + '"\n',
    'algorithm = "dtransformer"\nseq_len = "' + LONG + '"\n',
    'algorithm = "dtransformer"\n"' + LONG + '" = 1\n',
    'algorithm = ["' + LONG + '"]\n',
    'x = "' + LONG + '\n',                                 # malformed: the parser's message
], ids=["size", "sizes-table", "options-table", "seq-len", "unknown-key", "algorithm-array",
        "unterminated-string"])
def test_a_long_value_is_not_echoed_whole(folder, text):
    """A 100 KB string where something short belongs: the error names it in a bounded line."""
    path = _file(folder, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    _one_line(caught.value)
    assert len(str(caught.value)) <= 1000, f"an error message of {len(str(caught.value))} characters"


@pytest.mark.parametrize("config", [
    'algorithm = "' + LONG + '"\n',
    'algorithm = "dtransformer"\n[options]\nactivation = "' + LONG + '"\n',
    'algorithm = "dtransformer"\n[options]\n"' + LONG + '" = 1\n',
    'algorithm = "dtransformer"\n[sizes]\n"' + LONG + '" = 1\n',
], ids=["algorithm", "option-value", "option-key", "size-key"])
def test_a_long_value_through_complexity_is_one_bounded_line(folder, config):
    """The same through ``complexity --config`` (the model's builder and the sizes' resolver echo values too)."""
    argv = ["complexity", "--config", _file(folder, config)]
    status, out, err = _main(argv)
    _check_status(argv, status, out, err, record=False)
    assert status == 2 and len(err) <= 1000, f"exit {status}, an error line of {len(err)} characters"


def _main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:  # --help, --version
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def _check_status(argv, status, out, err, record=True):
    shown = f"{argv!r} → {status}\nstderr: {err[-2000:]}\nstdout: {out[:500]}"
    if record:
        event(f"exit status {status}")
    assert status in (0, 2), shown
    assert "Traceback" not in err, shown
    if status == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{cli.PROG}: error:"), shown
        assert out == "", shown
    else:
        assert err == "", shown
    if "--json" in argv and out:
        import json
        assert isinstance(json.loads(out), dict), shown


# a configuration with the real keys and sizes, read through `complexity --config` (in process)
_size_values = st.one_of(st.integers(1, 64), st.integers(-3, 3), st.sampled_from([2**50, 2**50 + 1, 10**30, 10**400]))
_option_values = st.one_of(st.sampled_from(["layer", "rms", "learned", "sinusoidal-paper", "sinusoidal-vaswani",
                                            "none", "relu", "gelu", "gelu-tanh", "swiglu", "pre", "post", "tokens",
                                            "patches", "mlm", "classifier", "symbolic", "nan"]),
                           st.booleans(), st.integers(-2, 8), st.floats(), st.text(max_size=8))


@st.composite
def configs(draw):
    """A preset's configuration written out, then perturbed: sizes dropped, changed or added, options changed or
    added, the sequence length changed or dropped."""
    preset = PRESETS[draw(st.sampled_from(sorted(PRESETS)))]
    sizes, options = dict(preset.sizes), dict(preset.options)
    config = {"name": preset.name, "algorithm": preset.algorithm, "seq_len": preset.seq_len}
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["drop-size", "size", "size", "option", "option", "seq_len", "no-seq_len",
                                     "algorithm", "shrink"]))
        if what == "drop-size" and sizes:
            sizes.pop(draw(st.sampled_from(sorted(sizes))))
        elif what == "size":
            sizes[draw(st.sampled_from(SIZE_NAMES))] = draw(_size_values)
        elif what == "option":
            name = draw(st.sampled_from(list(ALGORITHMS[config["algorithm"]].options)))
            options[name] = draw(_option_values)
        elif what == "seq_len":
            config["seq_len"] = draw(_size_values)
        elif what == "no-seq_len":
            config.pop("seq_len", None)
        elif what == "algorithm":
            config["algorithm"] = draw(st.sampled_from(MODELS))
        else:  # every size small: a tiny model
            sizes = {k: draw(st.integers(1, 8)) for k in sizes}
    config = {k: v for k, v in config.items() if v is not None}
    return {**config, "options": options, "sizes": sizes}


@slow
@fuzz(60)
@given(config=configs(), flags=st.lists(st.sampled_from(["--json", "--symbolic", "--seq-len=7", "--batch=3",
                                                       "--dtype=bf16", "--convention=kaplan",
                                                       "--convention=full"]), unique=True, max_size=3))
def test_complexity_config_answers_0_or_2(folder, config, flags):
    path = _file(folder, _document(config, sections=True))
    argv = ["complexity", "--config", path, *flags]
    _check_status(argv, *_main(argv))


# ------------------------------------------------------------------------------------------ options
_identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_raw_values = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "true", "false", "True", " true ", "0", "1", "-1", "2", "5",
                     "1e-5", "1e-300", "1e400", "0x10", "1_000", "symbolic", "None", "", " ", "zero", "error",
                     "layer", "rms", "gelu", "swiglu", "pre", "post", "greedy", "sample", "prefill", "extend",
                     "learned", "sinusoidal-paper", "__import__('os')", "١٢", "²", "9" * 40]),
    st.integers(-10, 10**6).map(str), st.floats().map(repr), st.text(max_size=12))


def _candidates(algorithm, key) -> list:
    """Plausible values of ``key``: by the type of its default, and the words of its documentation."""
    default = algorithm.options[key]
    if isinstance(default, bool):
        return ["true", "false", "TRUE", " false "]
    if isinstance(default, int):
        return ["0", "1", "2", "3", "-1"]
    if isinstance(default, float):
        return ["0", "1e-5", "0.5", "2", "1e-30", "1e300", "nan", "inf", "-1"]
    words = re.findall(r"[a-z][a-z0-9-]*", algorithm.option_docs.get(key, ""))
    return [str(default)] + words + (["1", "2", "4", "symbolic"] if default is None else [])


@st.composite
def option_texts(draw, name):
    """Mostly distinct real keys with plausible values; sometimes any value, an unknown key, a repeated key or
    a text that is not KEY=VALUE."""
    algorithm = ALGORITHMS[name]
    keys = draw(st.lists(st.sampled_from(list(algorithm.options)), unique=True, max_size=4)) \
        if algorithm.options else []
    texts = []
    for key in keys:
        plausible = st.sampled_from(_candidates(algorithm, key))
        texts.append(f"{key}=" + draw(st.one_of(plausible, plausible, plausible, _raw_values)))
    if draw(st.integers(0, 9)) == 0:
        texts.insert(draw(st.integers(0, len(texts))), draw(st.one_of(
            _identifiers.map(lambda k: k + "=1"), st.text(max_size=12),
            st.sampled_from(texts or ["x=1"]))))
    return texts


@pytest.mark.parametrize("name", fast_few(list(ALGORITHMS), keep=in_fast_tier))
@fuzz(25)
@given(data=st.data())
def test_parse_options_and_get(name, data):
    texts = data.draw(option_texts(name), label="texts")
    options = _only_formal_errors(lambda: parse_options(name, texts))
    event("parsed" if options is not None else "refused by parse_options")
    if options is None:
        return
    algorithm = ALGORITHMS[name]
    assert isinstance(options, dict) and set(options) <= set(algorithm.options)
    given_values = {}
    for text in texts:
        key, _, raw = text.partition("=")
        given_values[key] = raw
    for key, value in options.items():
        default = algorithm.options[key]
        if isinstance(default, str) or (default is None and isinstance(value, str)):
            assert value == given_values[key], f"text option {key}: given {given_values[key]!r}, stored {value!r}"
            assert isinstance(value, str)
    built = _only_formal_errors(lambda: formal.get(name, **options))
    event("built" if built is not None else "refused by the builder")
    if built is not None:
        for key, value in options.items():
            if isinstance(algorithm.options[key], str):
                assert built.options[key] == value, f"{key}: parsed {value!r}, built {built.options[key]!r}"


def test_a_documented_text_value_round_trips():
    assert parse_options("attention", ["empty=nan"]) == {"empty": "nan"}
    assert formal.get("attention", **parse_options("attention", ["empty=nan"])).options["empty"] == "nan"


# ------------------------------------------------------------------------------------------ the command line
_junk = st.one_of(st.text(max_size=8), st.integers(-3, 3).map(str), st.just(""), st.just("1.5"), st.just("-"),
                  st.just("--"), st.just("9" * 40))
_small = st.one_of(st.integers(0, 40).map(str), _junk)


def _flag(name, values):
    return st.tuples(st.just(name), values).map(list)


_SHOW_FLAGS = [st.just(["--json"]), st.just(["--latex"]), st.just(["--params"]),
               _flag("--convention", st.sampled_from(["matmul", "kaplan", "chinchilla", "full"]) | _junk)]
_COMPLEXITY_FLAGS = [st.just(["--json"]), st.just(["--symbolic"]), st.just(["--list"]),
                     _flag("--seq-len", st.integers(-2, 10**6).map(str) | _junk),
                     _flag("--batch", st.integers(-2, 10**4).map(str) | _junk),
                     _flag("--dtype", st.sampled_from(["bf16", "fp16", "fp32"]) | _junk),
                     _flag("--convention", st.sampled_from(["matmul", "kaplan", "chinchilla", "full"]) | _junk),
                     _flag("--config", st.just("/nonexistent/model.toml") | _junk)]
_GRAPH_FLAGS = [st.just(["--json"]), st.just(["--causal"]), st.just(["--bidirectional"]), st.just(["--shifted"]),
                _flag("--seq-len", _small), _flag("--context-len", _small), _flag("--window", _small),
                _flag("--dilation", _small),
                _flag("--global", _small), _flag("--stride", _small), _flag("--summary", _small),
                _flag("--random", _small), _flag("--seed", _small), _flag("--shift", _small),
                _flag("--layers", st.integers(0, 6).map(str) | _junk),
                _flag("--heads", st.integers(-1, 10**6).map(str) | _junk),
                _flag("--d-head", st.integers(-1, 10**6).map(str) | _junk),
                _flag("--align", st.sampled_from(["top-left", "bottom-right"]) | _junk),
                _flag("--part", st.sampled_from(["both", "1", "2", "a", "b"]) | _junk),
                _flag("--grid",
                      st.tuples(st.integers(0, 9), st.integers(0, 9)).map(lambda t: f"{t[0]}x{t[1]}") | _junk),
                _flag("--file", st.just("/nonexistent/edges.txt") | _junk)]
_PATTERNS = ["full", "causal", "cross", "sliding-window", "dilated", "global-local", "strided", "fixed", "random",
             "swin", "edgelist"]


def _mostly(valid, junk=_junk):
    """``valid`` seven times in eight."""
    return st.integers(0, 7).flatmap(lambda i: junk if i == 0 else valid)


# the graph flags each pattern takes (its schema, formal.graphs.schema), with small valid values
_GRAPH_VALUES = {"--window": st.integers(1, 8).map(str), "--dilation": st.integers(1, 4).map(str),
                 "--global": st.integers(0, 3).map(str), "--stride": st.integers(1, 8).map(str),
                 "--summary": st.integers(1, 3).map(str), "--random": st.integers(1, 3).map(str),
                 "--seed": st.integers(0, 9).map(str), "--shift": st.integers(1, 4).map(str),
                 "--context-len": st.integers(1, 40).map(str),
                 "--align": st.sampled_from(["top-left", "bottom-right"]),
                 "--part": st.sampled_from(["both", "1", "2"])}
_GRAPH_TAKES = {"full": [], "causal": ["--align", "--context-len"], "cross": ["--context-len"],
                "sliding-window": ["--window", "--causal"], "dilated": ["--window", "--dilation", "--causal"],
                "global-local": ["--window", "--global", "--causal"], "strided": ["--stride", "--part"],
                "fixed": ["--stride", "--summary", "--part"], "random": ["--random", "--window", "--global", "--seed"],
                "swin": ["--window", "--shifted", "--shift"], "edgelist": []}


@st.composite
def argvs(draw):
    """A command line of list/show/complexity/graph: mostly valid words with small sizes, some junk."""
    command = draw(st.sampled_from(["list"] + ["show"] * 3 + ["complexity"] * 3 + ["graph"] * 4 + ["junk"]))
    if command == "list":
        return ["list"] + draw(st.lists(st.sampled_from(["--json", "--json", "--junk", "x"]), max_size=2))
    if command == "show":
        name = draw(st.sampled_from(list(ALGORITHMS)))
        argv = ["show", draw(_mostly(st.just(name)))]
        for text in draw(option_texts(name)):
            argv += ["-o", text]
        flags = _SHOW_FLAGS
    elif command == "complexity":
        argv = ["complexity"] + ([draw(_mostly(st.sampled_from(list(PRESETS))))] if draw(st.integers(0, 7)) else [])
        flags = _COMPLEXITY_FLAGS
    elif command == "graph":
        pattern = draw(st.sampled_from(_PATTERNS))
        argv = ["graph", draw(_mostly(st.just(pattern)))]
        if pattern == "swin":
            side = draw(st.integers(1, 8))
            argv += ["--grid", draw(_mostly(st.just(f"{side}x{side}")))]
        else:
            argv += ["--seq-len", draw(_mostly(st.integers(1, 40).map(str)))]
        if pattern == "edgelist":
            argv += ["--file", draw(st.sampled_from(["/nonexistent/edges.txt", "/dev/null", "/etc/hostname"]))]
        takes = _GRAPH_TAKES[pattern]
        for flag in draw(st.lists(st.sampled_from(takes), unique=True)) if takes else []:
            argv += [flag] if flag in ("--causal", "--shifted") else [flag, draw(_mostly(_GRAPH_VALUES[flag]))]
        argv += draw(st.lists(st.sampled_from(["--json", "--layers=2", "--heads=3", "--d-head=8"]), unique=True))
        flags = _GRAPH_FLAGS if draw(st.integers(0, 3)) == 0 else []
    else:
        return draw(st.lists(_junk, max_size=3))
    if flags:
        for chosen in draw(st.lists(st.sampled_from(flags), max_size=2)):
            argv += draw(chosen)
    return argv


def _small_graph(argv) -> bool:
    """Graph sizes stay small: every number after --seq-len, --context-len or --grid is at most 40 positions (the junk
    values are not numbers, or small ones)."""
    for flag, value in zip(argv, argv[1:]):
        if flag in ("--seq-len", "--context-len") and value.strip().lstrip("+").isdigit():
            if int(value) > 64:
                return False
    return True


@slow
@fuzz(200)
@given(argv=argvs())
def test_main_answers_0_or_2(argv):
    assume(_small_graph(argv))
    _check_status(argv, *_main(argv))


# ------------------------------------------------------------------------------------------ claims files
_CLAIM_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**30) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30) | st.sampled_from(["gpt2", "attention", "params.total", "flops", "117M", "1/8",
                                              "ell_x*ell_z", "sliding-window", "softmax", "holds", "d_e", "n"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["n", "window", "d_e", "H", "bias", "x", "model", "algorithm", "graph", "layers", "zz"]), inner, max_size=4),
    max_leaves=10)
_CLAIM_KEYS = ["id", "model", "algorithm", "op", "graph", "options", "sizes", "seq_len", "quantity", "equals",
               "approx", "at_most", "theta", "in", "leading", "args", "inputs", "ratio_to", "rel_tol", "expect",
               "mask", "convention", "dtype", "batch", "nosuch"]


@fuzz(80)
@given(st.dictionaries(st.sampled_from(_CLAIM_KEYS), _CLAIM_VALUES, min_size=1, max_size=8))
def test_a_claim_of_random_fields_gets_a_verdict(table):
    """Property: whatever a [[claim]] table holds, deciding it returns a verdict (holds, fails, undecided or
    invalid with a one-line reason): no other exception escapes, nothing is executed."""
    from formal.tools.claims.claim import parse_claims
    from formal.tools.claims.decide import decide
    table.pop("property", None)
    table.pop("implementation", None)
    [claim] = parse_claims({"claim": [table]})
    verdict = decide(claim)
    event(verdict.verdict)
    assert verdict.verdict in ("holds", "fails", "undecided", "invalid")
    if verdict.verdict == "invalid":
        assert verdict.reason and "\n" not in verdict.reason


@fuzz(60)
@given(st.text(max_size=200))
def test_claims_text_is_read_or_refused(text):
    """Property: arbitrary text as a claims file is a ConfigError or a list of verdicts."""
    from formal.tools.claims import check_text
    try:
        verdicts = check_text(text)
    except ConfigError:
        return
    assert all(v.verdict in ("holds", "fails", "undecided", "invalid") for v in verdicts)
