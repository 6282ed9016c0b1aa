"""The claims' formula grammar (formal.core.formula): what it reads, exactly, and that anything else —
hostile text included — is a FormulaError, never executed."""

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal.core.formula import MAX_LENGTH, FormulaError, parse
from formal.core.symbols import by_name
from tests.tiers import slow


@pytest.mark.parametrize("text, value", [
    ("1/8", Fraction(1, 8)), ("2**3**2", 2**9), ("-2**2", -4), ("(1+2)*3", 9), ("0.1", Fraction(1, 10)),
    ("1e3", 1000), ("2^10", 1024), ("max(1, 7, 3)", 7), ("min(4, 2)", 2), ("3·4", 12), ("5 − 7", -2),
    (12, 12), (0.5, Fraction(1, 2)),
])
def test_numbers_evaluate_exactly(text, value):
    assert parse(text).value() == value


def test_names_become_the_spec_symbols():
    f = parse("4*H*d_attn*d")
    assert f.names == {"H", "d_attn", "d"}
    assert f.sympy() == 4 * by_name("H") * by_name("d_attn") * by_name("d")
    assert f.value({"H": 2, "d_attn": 3, "d": 5}) == 120


def test_irrational_values_go_through_sympy():
    f = parse("sqrt(d_k)")
    assert f.value({"d_k": 64}) is None
    assert f.sympy({"d_k": sp.Integer(64)}) == 8


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('touch pwned')", "not part of a formula"),
    ("exec(1)", "not a function"),
    ("exec('1')", "not part of a formula"),
    ("lambda: 1", "not part of a formula"),
    ("a.b", "not part of a formula"),
    ("x[0]", "not part of a formula"),
    ("2**L", "exponent must be a number"),
    ("2**65", "larger than 64"),
    ("1e1001", "too large"),
    ("(" * 60 + "1" + ")" * 60, "deeper than"),
    ("1 +", "ends too early"),
    ("1 2", "unexpected"),
    ("", "empty"),
    ("sqrt", "is a function"),
    ("max(1)", "takes 2 to 16 arguments"),
    ("x" * (MAX_LENGTH + 1), "longer than"),
    ("1/0", "divides by zero"),
])
def test_hostile_and_malformed_text_is_refused(text, fragment):
    with pytest.raises(FormulaError) as error:
        parse(text).value()
    assert fragment in str(error.value)
    assert len(str(error.value)) < 400


def test_a_number_past_the_bit_limit_is_refused_not_computed():
    with pytest.raises(FormulaError, match="larger than"):
        parse("((10**64)**64)**64").value()


def test_unknown_names_are_listed():
    with pytest.raises(FormulaError, match="names 'zz', which is not a size here; known: H, d_e"):
        parse("zz*H", names={"H", "d_e"})


@slow
@given(st.text(max_size=80))
def test_arbitrary_text_is_a_formula_or_a_formula_error(text):
    """Property: parse never raises anything but FormulaError, and never runs code (a file named by the
    text is never created: the grammar has no calls but sqrt/log/max/min)."""
    try:
        f = parse(text)
    except FormulaError:
        return
    try:
        f.value({n: 2 for n in f.names})
    except FormulaError:
        pass


@given(st.recursive(st.integers(0, 99).map(str) | st.sampled_from(["H", "d_e", "ell"]),
                    lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
                        lambda t: f"({t[0]} {t[1]} {t[2]})"), max_leaves=12))
def test_value_agrees_with_sympy(text):
    """Property: the exact evaluation and sympy's agree on +, -, * trees (two independent evaluators)."""
    f = parse(text)
    values = {"H": 3, "d_e": 5, "ell": 7}
    assert f.value(values) == f.sympy().xreplace({by_name(k): v for k, v in values.items()})
