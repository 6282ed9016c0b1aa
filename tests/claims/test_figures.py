"""Figures with their stated precision (formal.tools.claims.figures)."""

from fractions import Fraction

import pytest

from formal.core.formula import FormulaError
from formal.tools.claims.figures import figure, is_figure


@pytest.mark.parametrize("text, low, high", [
    ("117M", 116 * 10**6, 118 * 10**6),
    ("800 KB", 700 * 10**3, 900 * 10**3),
    ("1.6 GB", Fraction(15, 10) * 10**9, Fraction(17, 10) * 10**9),
    ("1.60 GB", Fraction(159, 100) * 10**9, Fraction(161, 100) * 10**9),
    ("110M", 100 * 10**6, 120 * 10**6),
    ("131K", 130_000, 132_000),
    ("1.5B", Fraction(14, 10) * 10**9, Fraction(16, 10) * 10**9),
    ("2 GiB", 2**31 - 2**30, 2**31 + 2**30),
    ("0.09", Fraction(8, 100), Fraction(10, 100)),
    ("1542M", 1541 * 10**6, 1543 * 10**6),
    ("500,000", 400_000, 600_000),
    ("1,542M", 1541 * 10**6, 1543 * 10**6),
])
def test_the_precision_a_figure_states(text, low, high):
    """The issue's rule: within one unit of the last significant digit; an integer's trailing zeros are not
    significant."""
    f = figure(text)
    assert (f.low, f.high) == (low, high)


@pytest.mark.parametrize("text", ["117 megabytes", "1,00", "1,0000", "12 XB", "", "1e5000", "M", "1..2", "ten"])
def test_not_figures(text):
    assert not is_figure(text)
    with pytest.raises(FormulaError):
        figure(text)
