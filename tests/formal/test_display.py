"""In a notebook the objects display as sympy objects do: an algorithm as its numbered pseudocode (HTML with its
math for the notebook to typeset, or one LaTeX array), a cost as its formulas, a pattern as a picture of its
mask."""

import re
import xml.etree.ElementTree as ET

import pytest

from formal import algorithms
from formal.core.symbols import latex
from formal.engine.display import algorithm_html, algorithm_latex
from formal.engine.render import view
from formal.graphs import patterns


@pytest.mark.parametrize("name", ["layer_norm", "mhattention", "dtransformer", "swin"])
def test_an_algorithm_displays_as_its_numbered_lines(name):
    """Every line of the object, in order and numbered as ``show`` numbers it, with its shape and FLOPs."""
    a = algorithms.get(name)
    v = view(a)
    page = algorithm_html(a)
    rows = re.findall(r"<tr><td[^>]*>(\d+)</td><td[^>]*>\$(.*?)\$</td>", page)
    assert [int(n) for n, _ in rows] == [line.number for line in v.lines]
    for (_, shown), line in zip(rows, v.lines):
        assert shown.endswith(line.latex + (":" if line.loop else "")), (shown, line.latex)
        assert f"${line.flops_latex['matmul']}$" in page
    assert f"${v.totals['matmul']['flops']}$" in page
    text = algorithm_latex(a)
    assert text.startswith("$$") and text.endswith("$$")
    assert all(line.latex in text for line in v.lines)


def test_a_cost_displays_as_its_formulas():
    cost = algorithms.get("attention").cost("kaplan")
    shown = cost._repr_latex_()
    for value in (cost.params, cost.flops, cost.memory, cost.depth):
        assert latex(value) in shown
    assert r"\text{FLOPs (kaplan)}" in shown


@pytest.mark.parametrize("pattern", [patterns.causal(7), patterns.sliding_window(12, 3), patterns.cross(5, 9),
                                     patterns.strided(16, 4)])
def test_a_pattern_displays_as_a_picture_of_its_mask(pattern):
    """The SVG is well-formed, has one cell per (key, query) pair and fills exactly the pattern's edges: cell
    (row t_z, column t_x) is filled when query t_x sees key t_z."""
    svg = ET.fromstring(pattern._repr_svg_())
    cells = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect")]
    assert len(cells) == pattern.ell_z * pattern.ell_x
    filled = {(int(c.get("y")), int(c.get("x"))) for c in cells if c.get("class") == "on"}
    assert len(filled) == pattern.n_edges
    xs = sorted({int(c.get("x")) for c in cells})
    ys = sorted({int(c.get("y")) for c in cells})
    expected = {(ys[k], xs[q]) for k, q in zip(pattern.keys.tolist(), pattern.queries.tolist())}
    assert filled == expected


def test_import_formal_registers_the_algorithms_display_with_ipython(monkeypatch):
    """In an IPython session ``import formal`` registers the algorithm's HTML and LaTeX with the shell's display
    formatters, by class name (IPython's ``for_type_by_name``); outside one it registers nothing."""
    import sys
    import types

    import formal

    registered = {}

    class Formatter:
        def __init__(self, mime):
            self.mime = mime

        def for_type_by_name(self, module, name, function):
            registered[self.mime] = (module, name, function)

    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(
        formatters={m: Formatter(m) for m in ("text/html", "text/latex")}))
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    formal._notebook()
    assert registered == {}
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    formal._notebook()
    assert registered["text/html"] == ("formal.engine.algorithm", "Algorithm", algorithm_html)
    assert registered["text/latex"] == ("formal.engine.algorithm", "Algorithm", algorithm_latex)
    a = algorithms.get("attention")
    assert (a.__class__.__module__, a.__class__.__name__) == registered["text/html"][:2]
