"""Every algorithm's options are declared once, with a domain, a default and a meaning
(:mod:`formal.engine.options`), and everything about them is derived from the declarations: validation and
its messages, ``-o KEY=VALUE`` parsing, and ``show``'s listing (text, JSON, LaTeX)."""

import inspect
import json

import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.algorithms import ALGORITHMS
from formal.engine import render
from formal.engine.declarations import Option, Options, Requires
from formal.engine.domains import BOOL, AnyOf, Choice, Integer, Real, written
from formal.engine.latex_text import GLYPHS, latex_text
from formal.engine.options import parse_options
from formal.errors import ConfigError
from tests.tiers import fast_few, in_fast_tier

PAIRS = [(name, option) for name, a in ALGORITHMS.items() for option in a.option_specs]


def _command_line(value) -> str:
    """How a value is written after ``-o KEY=``."""
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


# ----------------------------------------------------------------------------------------- declarations
def test_every_algorithm_declares_every_option_it_has():
    """``algorithm.options`` (the values) and ``algorithm.option_specs`` (the declarations) name the same
    options in the same order, each default in its domain and each with a meaning."""
    for name, a in ALGORITHMS.items():
        assert list(a.options) == list(a.option_specs), name
        for option, spec in a.option_specs.items():
            assert spec.domain.admits(spec.default) and spec.doc, (name, option)
            assert a.option_docs[option] == spec.doc


def test_shared_options_are_declared_once():
    """The stacks' options, grouped-query heads and the recurrent cells' options are one declaration each,
    reused by every algorithm that has them (a loss and its training algorithm share their model's)."""
    get = algorithms.get
    assert get("dtransformer").option_specs["n_kv_heads"] is get("mhattention").option_specs["n_kv_heads"]
    assert get("dtransformer").option_specs["n_kv_heads"] is get("paged_mhattention").option_specs["n_kv_heads"]
    assert get("dloss").option_specs is get("dtransformer").option_specs is get("dtraining").option_specs
    assert get("eloss").option_specs is get("etraining").option_specs
    for option in ("norm", "eps", "position", "bias", "tied"):
        assert get("dtransformer").option_specs[option] is get("kv_dtransformer").option_specs[option]
    edtransformer, dtransformer = get("edtransformer").option_specs, get("dtransformer").option_specs
    assert edtransformer["activation"] == dtransformer["activation"].but(default="relu")   # only the default
    assert get("rnn").option_specs is get("rnn_layer").option_specs
    assert get("rnn_cell").option_specs["bias"].domain == get("han").option_specs["bias"].domain


def test_a_builder_signature_shows_the_declared_defaults():
    from formal.algorithms.attention import build_attention
    parameters = inspect.signature(build_attention).parameters
    assert {k: p.default for k, p in parameters.items()} == algorithms.attention.option_specs.defaults()
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())


def test_a_declaration_refuses_what_it_cannot_be():
    with pytest.raises(ValueError, match="default"):
        Option("x", 3, BOOL, "a flag")
    with pytest.raises(ValueError, match="examples"):
        Option("x", 1.0, Real(0), "a range without the values examples draw")
    with pytest.raises(ValueError, match="not declared"):
        Options(Option("x", True, BOOL, "a flag").when("y", True))
    with pytest.raises(ValueError, match="twice"):
        Options(Option("x", True, BOOL, "a"), Option("x", True, BOOL, "b"))


# ----------------------------------------------------------------------------------------- domains
@pytest.mark.parametrize("domain, inside, outside", [
    (BOOL, [True, False], [1, 0, "true", None, 1.0]),
    (Choice("zero", "nan"), ["zero", "nan"], ["Zero", float("nan"), None, 0]),
    (Choice(None, "a"), [None, "a"], ["None", "b", False]),
    (Integer(1), [1, 2, 10**30, 1.0, 4.0], [0, -1, True, 1.5, 0.0, float("inf"), float("nan"), "1", None]),
    (Integer(0), [0, 5], [-1, False, 0.5]),
    (Real(0), [0, 0.0, 1e-300, 5], [-1e-300, float("inf"), float("nan"), True, "1"]),
    (Real(0, 1, open_low=True, open_high=True), [0.5, 1e-9], [0, 1, 0.0, 1.0, 2]),
    (AnyOf(Choice(None), Integer(1), Choice("symbolic")), [None, 1, 7, "symbolic"], [0, "sym", 1.5, True]),
])
def test_a_domain_admits_exactly_its_values(domain, inside, outside):
    """Membership is by kind as well as value: True is not 1, 1.0 is not the int 1, NaN is no number ≥ 0."""
    assert all(domain.admits(v) for v in inside)
    assert not any(domain.admits(v) for v in outside)


def test_a_domain_says_what_it_holds_four_ways():
    padding = AnyOf(Integer(0), Choice("same"))
    assert padding.text() == "a non-negative integer or 'same'"
    assert padding.notation() == "int ≥ 0 | 'same'"
    assert padding.words() == "an integer or same"
    assert padding.schema() == {"anyOf": [{"type": "integer", "minimum": 0}, {"enum": ["same"]}]}
    assert Real(0, open_low=True).text() == "a finite number > 0" and BOOL.text() == "True or False"
    assert padding.latex().isascii()


# ----------------------------------------------------------------------------------------- validation
_ANY = st.one_of(st.none(), st.booleans(), st.integers(-5, 10), st.floats(allow_nan=True, allow_infinity=True),
                 st.sampled_from(["", "none", "None", "true", "zero", "same", "symbolic", "layer", "gru", "x"]),
                 st.text(max_size=6), st.lists(st.integers(), max_size=2))


@pytest.mark.parametrize("name, option", fast_few(PAIRS, keep=lambda p: in_fast_tier(p[0]), unpack=True),
                         ids=[f"{n}-{o}" for n, o in PAIRS])
@settings(max_examples=15)
@given(value=_ANY)
def test_a_value_outside_the_domain_is_a_config_error_naming_option_value_and_domain(name, option, value):
    spec = ALGORITHMS[name].option_specs[option]
    if spec.domain.admits(value):
        return
    with pytest.raises(ConfigError) as error:
        algorithms.get(name, **{option: value})
    message = str(error.value)
    assert message.startswith(f"{option} = ") and spec.domain.text() in message, message


@pytest.mark.parametrize("build, message", [
    (lambda: algorithms.get("attention", bias=1), "bias = 1 must be True or False"),
    (lambda: algorithms.get("attention", activation="leaky_relu"),
     "activation = 'leaky_relu' applies to score = 'additive' only, not 'scaled_dot'"),
    (lambda: algorithms.get("conv1d", padding="same", stride=2), "padding = 'same' needs stride = 1, not 2"),
    (lambda: algorithms.get("eloss", inputs="patches"),
     "inputs = 'patches' must be 'tokens'; a masked-token loss masks token ids"),
    (lambda: algorithms.get("mhattention", n_kv_heads=0), "n_kv_heads = 0 must be None, a positive integer or "
                                                          "'symbolic'"),
])
def test_cross_option_rules_and_narrowed_domains_are_named(build, message):
    with pytest.raises(ConfigError) as error:
        build()
    assert str(error.value).startswith(message)


def test_normal_forms():
    """An int where a float is declared is kept as the float (the same variant as written with a point)."""
    assert algorithms.get("layer_norm", eps=0).options["eps"] == 0.0
    assert isinstance(algorithms.get("dinference", tau=2).options["tau"], float)
    assert algorithms.get("layer_norm", eps=0) is algorithms.get("layer_norm", eps=0.0)


# ----------------------------------------------------------------------------------------- -o parsing
@pytest.mark.parametrize("name, texts, parsed", [
    ("attention", ["bias=FALSE", "empty=nan"], {"bias": False, "empty": "nan"}),
    ("mhattention", ["n_kv_heads=2"], {"n_kv_heads": 2}),
    ("mhattention", ["n_kv_heads=none"], {"n_kv_heads": None}),
    ("mhattention", ["n_kv_heads=symbolic"], {"n_kv_heads": "symbolic"}),
    ("conv1d", ["padding=2", "stride=3"], {"padding": 2, "stride": 3}),
    ("conv1d", ["padding=same"], {"padding": "same"}),
    ("dinference", ["tau=2"], {"tau": 2.0}),
    ("layer_norm", ["eps=1e-5"], {"eps": 1e-5}),
    ("dtransformer", ["position=none"], {"position": "none"}),
    ("etransformer", ["patch_order=none"], {"patch_order": None}),
    ("swin", ["mlp_ratio=2"], {"mlp_ratio": 2}),
])
def test_parsing_follows_the_domain(name, texts, parsed):
    """Typed by the declared domain: a float option reads an integer text as a float, a word of a numeric
    option stays a word, ``none`` is None only where the domain holds None (``position=none`` is a word)."""
    got = parse_options(name, texts)
    assert got == parsed and all(type(got[k]) is type(v) for k, v in parsed.items())


@pytest.mark.parametrize("name, text, message", [
    ("attention", "bias=1", "option bias of attention takes true or false, got '1'"),
    ("attention", "empty=NaN", "option empty of attention takes zero, nan, error or uniform, got 'NaN'"),
    ("conv1d", "stride=1.5", "option stride of conv1d takes an integer, got '1.5'"),
    ("conv1d", "padding=valid", "option padding of conv1d takes an integer or same, got 'valid'"),
    ("mhattention", "n_kv_heads=two", "option n_kv_heads of mhattention takes none, an integer or symbolic"),
    ("layer_norm", "eps=small", "option eps of layer_norm takes a number, got 'small'"),
])
def test_a_text_the_domain_cannot_read_names_what_the_option_takes(name, text, message):
    with pytest.raises(ConfigError, match=message):
        parse_options(name, [text])


@pytest.mark.parametrize("name", fast_few(list(ALGORITHMS), keep=in_fast_tier))
def test_every_declared_value_round_trips_through_the_command_line(name):
    """Each choice and each stated example value, written as on the command line, parses back to itself."""
    for option, spec in ALGORITHMS[name].option_specs.items():
        for value in set(spec.domain.values()) | set(spec.examples):
            got = parse_options(name, [f"{option}={_command_line(value)}"])[option]
            assert got == value and type(got) is type(value), (name, option, value, got)


# ----------------------------------------------------------------------------------------- show
@pytest.mark.parametrize("name", fast_few(list(ALGORITHMS), keep=in_fast_tier))
def test_show_lists_every_option_with_domain_default_and_meaning(name):
    a = ALGORITHMS[name]
    text = render.to_text(a)
    for option, spec in a.option_specs.items():
        line = next((ln for ln in text.splitlines() if ln.startswith(f"  {option} = {written(a.options[option])} ")),
                    None)
        assert line is not None, (name, option)
        assert spec.domain.notation() in line and f"(default {written(spec.default)})" in line and spec.doc in line
    data = json.loads(json.dumps(render.to_json(a)))
    assert data["options"] == a.options
    declared = data["option_specs"]["options"]
    assert list(declared) == list(a.options)
    for option, spec in a.option_specs.items():
        assert declared[option]["domain"] == spec.domain.notation() and declared[option]["doc"] == spec.doc
        assert declared[option]["default"] == spec.default and declared[option]["schema"]
    assert data["option_specs"]["rules"] == [rule.text() for rule in a.option_specs.rules]


def test_show_lists_the_rules_and_the_value_shown_is_the_variants():
    text = render.to_text(algorithms.get("conv1d", padding="same"))
    assert "  padding = 'same' " in text and "rule: padding = 'same' needs stride = 1" in text


@pytest.mark.parametrize("name", fast_few(list(ALGORITHMS), keep=in_fast_tier))
def test_show_latex_tabulates_every_option_in_ascii(name):
    a = ALGORITHMS[name]
    table = render.to_latex(a).split(r"\end{algorithm}")[1]
    assert table.isascii()
    if a.options:
        assert table.count(r"\texttt{" + latex_text(next(iter(a.options))) + "}") >= 1
        assert table.count(r" \\") == 1 + len(a.options) + len(a.option_specs.rules)


def test_every_glyph_of_the_declarations_has_a_latex_rendering():
    """An option's meaning in LaTeX writes every glyph as a macro: none falls back to ``?``."""
    for a in ALGORITHMS.values():
        for spec in a.option_specs.values():
            text = spec.meaning()
            assert latex_text(text).count("?") == text.count("?"), (a.name, spec.name)
    assert set(GLYPHS) >= {"τ", "ℓ", "⊙", "√"}


def test_rules_and_applies_are_data_both_validation_and_examples_read():
    specs = algorithms.get("seq2seq").option_specs
    assert specs["score"].applies == ("attention", ("bahdanau", "luong"))
    assert [r.text() for r in specs.rules][0].startswith("score = 'dot' needs encoder = 'forward'")
    assert isinstance(specs.rules[0], Requires)


def test_a_value_that_stands_for_another_is_recorded_as_what_it_means():
    """``patch_order=None`` is an image's channel-first order: where it applies (inputs = image) the object built
    records 'channel-first', so two spellings of one variant are one object; where it does not, None stays."""
    from formal import algorithms
    image = {"inputs": "image", "head": "classifier"}
    built = algorithms.get("etransformer", **image)
    assert built.options["patch_order"] == "channel-first"
    assert built is algorithms.get("etransformer", **image, patch_order="channel-first")
    assert algorithms.get("etransformer").options["patch_order"] is None


def test_what_a_value_stands_for_is_dropped_where_a_narrower_domain_leaves_it_out():
    from formal.engine.declarations import Option, Options
    from formal.engine.domains import Choice
    order = Option("order", None, Choice(None, "a", "b"), "an order", stands_for=(None, "a"))
    assert Options(order).resolve({}, "x") == {"order": "a"}
    narrowed = order.only(None, "b", why="no a here")
    assert narrowed.stands_for == () and Options(narrowed).resolve({}, "x") == {"order": None}
