"""The gate every number passes (:mod:`formal.guards.numbers`), on its own: each spelling of a number is that
number, exactly; a size is checked after evaluation; a float from a file keeps its decimal text."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from formal.core.formula import parse
from formal.errors import ConfigError
from formal.guards.files import parse_toml
from formal.guards.limits import MAX_SIZE
from formal.guards.numbers import Written, at, count_text, exact, integer, size


@settings(max_examples=200, deadline=None)
@given(st.integers(1, MAX_SIZE), st.integers(1, 9))
def test_every_spelling_of_a_size_is_that_size(n, k):
    spellings = [n, str(n), f"{n}.0", f"{n * k}/{k}", f"({n} - {k}) + {k}", float(n) if n < 2**53 else n]
    assert {size(s, "size") for s in spellings} == {n}
    assert integer(f"{n}e0") == n and exact(f"{n}.5") == Fraction(2 * n + 1, 2)


@pytest.mark.parametrize("raw, words", [
    ("0 - 300", "is -300, which is not a positive integer"), ("1/2", "is 1/2"), (0, "must be a positive integer"),
    (2**50 + 1, "at most 2**50"), ("2**60", "is more than 2**50"), (7.5, "is 15/2"), (True, "positive integer"),
    ("sqrt(2)", "irrational"), ("-d", "not positive for any positive sizes"), ("0*n", "not positive"),
    ("__import__('os')", "not part of a formula"),
])
def test_a_size_that_is_not_one_is_refused_naming_it(raw, words):
    with pytest.raises(ConfigError, match=words.replace("*", r"\*").replace("(", r"\(")):
        size(raw, "size d")


def test_a_formula_with_names_stays_a_formula_and_is_checked_where_they_are_numbers():
    kept = size("d_x/H", "size d_attn")
    assert kept.names == {"d_x", "H"}
    assert at(kept, {"d_x": 8, "H": 2}, "size d_attn") == 4 and at(kept, {"d_x": 8}, "size d_attn") is None
    with pytest.raises(ConfigError, match=r"is 8/3, which is not a positive integer \(at H = 3, d_x = 8\)"):
        at(kept, {"d_x": 8, "H": 3}, "size d_attn")


def test_a_toml_float_is_the_decimal_written():
    data = parse_toml("a = 124439808.0000000001\nb = 0.1\nc = 1_000.5\n")
    assert isinstance(data["a"], Written) and isinstance(data["a"], float)
    assert exact(data["a"]) == Fraction(1244398080000000001, 10**10) != 124439808
    assert exact(data["b"]) == Fraction(1, 10) and exact(data["c"]) == Fraction(2001, 2)
    assert exact(0.1) == Fraction(1, 10)                          # a Python float: the shortest decimal
    back = pickle.loads(pickle.dumps(data["a"]))
    assert back.text == "124439808.0000000001" and repr(back) == "124439808.0000000001"
    with pytest.raises(ConfigError, match="not a finite number"):
        exact(parse_toml("x = inf\n")["x"])


def test_integer_refuses_a_fraction_and_a_name():
    for raw, words in (("1.5", "is 3/2, which is not an integer"), ("n", "names 'n'")):
        with pytest.raises(ConfigError, match=words):
            integer(raw, "value")


def test_a_huge_count_is_shown_without_a_float():
    assert count_text(10**19 - 1) == "≈1.00e+19" and count_text(999_499) == "999,499"
    assert count_text(2**200) == "≈1.61e+60" and count_text(-(10**20)) == "≈-1.00e+20"
    assert parse("1e1000").value() == 10**1000       # a number written with 1,000 digits is read
