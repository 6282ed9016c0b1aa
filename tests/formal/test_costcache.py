"""The shipped cost formulas (formal/models/data/cost_formulas.json, :mod:`formal.models.costcache`): current,
complete, and giving ``complexity`` exactly the numbers of a fresh sympy derivation; the exact polynomials they
are made of."""

import datetime
import json
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal.core.symbols import by_name, ell
from formal.costs.conventions import CONVENTIONS
from formal.costs.polynomials import Polynomial
from formal.errors import ConfigError
from formal.models import complexity, costcache
from formal.models.complexity import Model
from formal.models.presets import PRESETS, resolve_sizes
from formal.tools.cli import main
from tests.tiers import fast_few

HOW = f"the cost formula cache is stale: regenerate it with {costcache.REGENERATE}"


@pytest.fixture(scope="module")
def fresh():
    """The cache's content derived afresh (sympy), once for the module."""
    return costcache.derive_all()


@pytest.fixture(scope="module")
def derived(fresh):
    """Each preset model's formulas from a fresh derivation, by cache key."""
    return {costcache.key(m["algorithm"], m["options"]): costcache.CostFormulas.from_data(
        m["algorithm"], m["options"], m["formulas"]) for m in fresh["models"]}


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# ------------------------------------------------------------------------------------ the shipped file
def test_the_shipped_file_is_a_fresh_derivation_written_as_write_writes_it(fresh):
    with open(costcache.PATH, encoding="utf-8") as handle:
        shipped = handle.read()
    if shipped != costcache._text(fresh):
        pytest.fail(HOW + "\n" + "\n".join(costcache.stale() or ["(only the layout of the file differs)"]))


def test_every_preset_is_served_from_the_shipped_file():
    for p in PRESETS.values():
        assert costcache.lookup(p.algorithm, p.options) is not None, f"{p.name}: {HOW}"


def test_check_says_how_to_regenerate_a_stale_file(tmp_path, capsys, fresh):
    path = tmp_path / "cost_formulas.json"
    data = json.loads(costcache._text(fresh))
    data["models"][0]["formulas"]["params"]["total"][0][0] += 1
    path.write_text(json.dumps(data))
    assert costcache.main(["--check", "--path", str(path)]) == 1
    out = capsys.readouterr().out
    assert "differs in params" in out and out.rstrip().endswith(HOW)
    assert costcache.main(["--write", "--path", str(path)]) == 0
    assert path.read_text() == costcache._text(fresh)
    assert costcache.main(["--check", "--path", str(path)]) == 0


@pytest.mark.parametrize("edit", [
    lambda d: d.update(version="0.0.0"),                      # derived by another version: never trusted
    lambda d: d.update(format=0),
    lambda d: d["models"][0]["formulas"].update(params={"total": [["x", {}]]}),  # a damaged entry
    lambda d: d.clear(),
])
def test_a_stale_or_damaged_file_is_skipped(tmp_path, fresh, edit):
    data = json.loads(costcache._text(fresh))
    edit(data)
    path = tmp_path / "cost_formulas.json"
    path.write_text(json.dumps(data))
    p = PRESETS["gpt2"]
    assert costcache.lookup(p.algorithm, p.options, path=str(path)) is None
    assert costcache.lookup(p.algorithm, p.options, path=str(tmp_path / "missing.json")) is None


# ------------------------------------------------------------------------------------ the keys
def test_a_configuration_with_a_presets_options_in_any_order_is_served_from_the_file():
    options = dict(reversed(list(PRESETS["llama-2-7b"].options.items())))
    assert costcache.lookup("dtransformer", options) is not None


@pytest.mark.parametrize("options", [
    {"eps": 0},                                   # an int is not the float 0.0: another key, derived
    {"n_kv_heads": 4, "norm": "rms"},
    {"eps": float("nan")},                        # JSON cannot write NaN exactly: no key
    {"eps": datetime.date(2024, 1, 1)},           # a TOML date: no key
])
def test_other_options_are_not_in_the_file(options):
    assert costcache.lookup("dtransformer", options) is None


def test_options_the_file_does_not_hold_are_derived_and_still_checked():
    assert complexity.model_formulas("dtransformer", {"n_kv_heads": 4}).label == "Algorithm 10 (dtransformer)"
    with pytest.raises(ConfigError, match="complexity needs a model"):
        complexity.model_formulas("attention", {})
    with pytest.raises(ConfigError):
        complexity.model_formulas("dtransformer", {"eps": datetime.date(2024, 1, 1)})


# ------------------------------------------------------------------------------------ same numbers
FLAGS = [[], ["--json"], ["--seq-len", "100"], ["--seq-len", "1", "--json"], ["--batch", "8", "--dtype", "bf16"],
         ["--convention", "full", "--dtype", "fp16", "--json"], ["--convention", "kaplan"],
         ["--convention", "chinchilla", "--seq-len", "77", "--batch", "3", "--json"], ["--seq-len", "3000"]]


@pytest.mark.parametrize("preset", fast_few(list(PRESETS), keep=3))
def test_complexity_prints_the_same_from_the_file_as_from_a_fresh_derivation(preset, capsys, monkeypatch, derived):
    """Byte for byte, text and --json, under every flag of ``complexity``: the shipped formulas and a fresh
    derivation (substituted for the file's entry) give the same output, errors included."""
    cached = [_run(capsys, "complexity", preset, *flags) for flags in FLAGS]
    monkeypatch.setattr(costcache, "lookup", lambda a, o, **_: derived[costcache.key(a, o)])
    assert [_run(capsys, "complexity", preset, *flags) for flags in FLAGS] == cached


@pytest.mark.parametrize("preset", ["gpt2", "bert-base", "llama-2-7b", "vit-b16", "transformer-base"])
def test_without_the_file_complexity_derives_the_same(preset, capsys, monkeypatch):
    """The sympy path of a model the file does not hold (here: none) prints what the file's formulas give."""
    cached = [_run(capsys, "complexity", preset, *flags) for flags in (["--json"], ["--seq-len", "100"])]
    monkeypatch.setattr(costcache, "lookup", lambda a, o, **_: None)
    assert [_run(capsys, "complexity", preset, *flags) for flags in (["--json"], ["--seq-len", "100"])] == cached


_MODELS = {}


def _model(preset):
    p = PRESETS[preset]
    k = costcache.key(p.algorithm, p.options)
    if k not in _MODELS:
        _MODELS[k] = Model(p.algorithm, p.options)
    return _MODELS[k]


@pytest.mark.parametrize("preset", fast_few(list(PRESETS), keep=3))
def test_the_figures_are_sympys_evaluation_of_the_derived_formulas(preset):
    """The oracle for the polynomials: each figure of ``report`` equals the Model's sympy expression evaluated
    by sympy (``xreplace``, rounded up when not whole) at the resolved sizes, under every convention."""
    p, model = PRESETS[preset], _model(preset)

    def value(expr, sizes):
        v = expr.xreplace({by_name(k): n for k, n in sizes.items()})
        return int(v) if v.is_integer else int(sp.ceiling(v))

    from formal.models.presets import LENGTHS
    lengthless = not {str(s) for s in model.algorithm.symbols} & set(LENGTHS)   # Swin: its tokens are its grid
    for convention in CONVENTIONS:
        for seq_len in ((p.seq_len,) if lengthless else (1, 7, p.seq_len or 16)):
            r = complexity.preset_report(preset, seq_len=seq_len, convention=convention)
            sizes = resolve_sizes(model.algorithm, p.sizes, seq_len)
            assert r["params"] == {k: value(v, sizes) for k, v in model.params().items()}
            assert r["flops"]["forward_per_sequence"] == value(model.forward(convention).flops, sizes)
            assert r["flops"]["training_step_per_sequence"] == value(model.training_step(convention), sizes)
            assert r["memory"]["activations_bytes_per_sequence"] == 4 * value(model.forward(convention).memory, sizes)
            cache = model.kv_cache_scalars()
            if cache is None:
                assert r["kv_cache"] is None
            else:
                assert r["kv_cache"]["bytes_per_token"] == 4 * value(cache.xreplace({ell: 1}), sizes)
                assert r["kv_cache"]["bytes_per_sequence"] == 4 * value(cache, sizes)


def test_preset_report_is_what_complexity_json_prints(capsys):
    assert json.loads(_run(capsys, "complexity", "vit-b16", "--seq-len", "50", "--json")[1]) == \
        complexity.preset_report("vit-b16", seq_len=50)


# ------------------------------------------------------------------------------------ size conditions
@pytest.mark.parametrize("algorithm, options", [
    *{(p.algorithm, json.dumps(p.options)) for p in PRESETS.values()},
    ("dtransformer", json.dumps({"n_kv_heads": 2})),
    ("dtransformer", json.dumps({"position": "sinusoidal-vaswani", "norm": "layer", "eps": 0.0})),
    ("edtransformer", json.dumps({"n_kv_heads": "symbolic"})),
])
def test_size_conditions_say_what_the_constraints_say(algorithm, options):
    """Each :class:`SizeCondition` holds where its Constraint holds and explains a failure in the same words."""
    constraints = Model(algorithm, json.loads(options)).algorithm.size_constraints
    for values in ({}, {"d_e": 7, "ell": 3000, "H": 3, "n_kv_heads": 2}, {"d_e": 1, "ell_max": 1, "H": 4}):
        for c in constraints:
            sizes = {str(s): values.get(str(s), 5) for s in c.symbols}
            condition = costcache.SizeCondition.of(c)
            bound = {by_name(k): v for k, v in sizes.items()}
            assert (condition.holds(sizes), condition.explain(sizes)) == (c.holds(bound), c.explain(bound))


# ------------------------------------------------------------------------------------ polynomials
_NAMES = ("d_e", "L", "ell", "H")
_terms = st.lists(st.tuples(st.fractions(max_denominator=12).filter(bool),
                            st.dictionaries(st.sampled_from(_NAMES), st.integers(-2, 3), max_size=3)), max_size=6)


@given(_terms, st.fixed_dictionaries({n: st.integers(1, 10**6) for n in _NAMES}))
def test_a_polynomial_evaluates_exactly_as_sympy_does(terms, values):
    expr = sp.Add(*(sp.Rational(c.numerator, c.denominator)
                    * sp.Mul(*(by_name(n) ** k for n, k in powers.items())) for c, powers in terms))
    p = Polynomial.from_sympy(expr)
    exact = sp.sympify(expr.xreplace({by_name(n): sp.Integer(v) for n, v in values.items()}))  # a bare symbol too
    assert p.value(values) == Fraction(int(exact.p), int(exact.q))
    assert Polynomial.from_data(json.loads(json.dumps(p.to_data()))) == p


@pytest.mark.parametrize("data", [
    "2*d_e", [[True, {}]], [[[1, 0], {}]], [[1.5, {}]], [[1, {"d_e": "2"}]], [[1, {"d_e": 1.0}]], [[1]], [{"c": 1}],
])
def test_a_malformed_polynomial_is_refused(data):
    with pytest.raises(ValueError):
        Polynomial.from_data(data)


@pytest.mark.parametrize("expr", [sp.Min(by_name("ell"), by_name("ell_max")), sp.Float(0.5) * by_name("d_e"),
                                  sp.sqrt(by_name("d_e"))])
def test_what_is_not_a_polynomial_is_refused(expr):
    with pytest.raises(TypeError):
        Polynomial.from_sympy(expr)


def test_a_missing_size_is_named():
    with pytest.raises(ConfigError, match="no value for L"):
        Polynomial.from_data([[2, {"L": 1, "d_e": 1}]]).value({"d_e": 3})
