"""A Sphinx extension that renders the package's objects: ``extensions = ["formal.tools.sphinx"]``.

Directives (domain ``formal``):

- ``.. formal:algorithm:: NAME`` (``:options: KEY=VALUE, …``, ``:convention: matmul|kaplan|chinchilla|full|all``)
  — the numbered pseudocode as the paper typesets it, the shape and cost of every line, the totals, the
  leading Θ, the options (each with its value, domain, default and meaning), the algorithms it calls (linked);
- ``.. formal:model:: PRESET`` — a preset's figures (what ``complexity`` prints) and its formulas;
- ``.. formal:pattern:: NAME`` (``:args: KEY=VALUE, …``) — an attention pattern's mask, edge count and analysis;
- ``.. formal:theorem:: NAME`` and ``.. formal:claim:: ID`` — a theorem of ``proofs/`` or a claim of the
  catalogue, the claim decided when the docs build (a claim that stops holding shows it).

Roles: ``:formal:alg:`attention``` links to an algorithm's entry, ``:formal:sym:`d_attn``` renders a size
symbol, ``:formal:model:``, ``:formal:claim:`` and ``:formal:theorem:`` link to those.

Modules: :mod:`.domain` (the domain, its directives and roles), :mod:`.entry` (what every entry shares) and
:mod:`.nodes` (the docutils nodes entries are built from); one module per directive — :mod:`.model`,
:mod:`.pattern`, :mod:`.claim`, :mod:`.theorems` (the theorems of :mod:`proofs`, checked once per build);
:mod:`.related` (an algorithm's usage and what it is related to), :mod:`.scripts` (TeX-style sub- and
superscripts), :mod:`.mathml`.

Math is written as MathML when the HTML is built (:mod:`formal.tools.sphinx.mathml`), so pages render offline;
choose another renderer with ``html_math_renderer`` in ``conf.py``.  Everything is derived from the objects
when the docs build: nothing on a page can drift from the code.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["setup"]

STATIC = Path(__file__).parent / "static"


def _static(app):
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))


def setup(app):
    from . import domain, mathml, scripts, theorems
    app.add_domain(domain.FormalDomain)
    mathml.setup(app)
    scripts.setup(app)
    app.add_config_value("formal_convention", "matmul", "env")
    app.connect("builder-inited", _static)
    app.connect("env-before-read-docs", theorems.prefetch)
    app.connect("build-finished", theorems.stop)
    app.connect("doctree-resolved", theorems.resolve)
    app.add_node(theorems.pending_result)
    app.add_css_file("formal.css")
    app.add_js_file("formal-filter.js")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
