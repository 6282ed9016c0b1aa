"""Sphinx configuration: `sphinx-build docs docs/_build` (needs the `docs` extra).

The tables of FLOP conventions, model options and presets are written into ``docs/_generated/`` from the
objects themselves at each build, so the documentation cannot drift from the code.
"""

from pathlib import Path

project = "formal-transformers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
html_theme = "alabaster"
exclude_patterns = ["_build", "_generated"]  # included into pages, not pages themselves

GENERATED = Path(__file__).parent / "_generated"


def _cell(text) -> str:
    return str(text).replace("\n", " ").replace("|", r"\|")


def _table(header, rows, widths) -> str:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {' '.join(map(str, widths))}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {_cell(row[0])}")
        lines += [f"     - {_cell(c)}" for c in row[1:]]
    return "\n".join(lines) + "\n"


def _conventions() -> str:
    from formal.cost import BACKWARD, CONVENTIONS
    rows = [(f"``{name}``", text, f"{BACKWARD[name][0]} × forward: {BACKWARD[name][1]}")
            for name, text in CONVENTIONS.items()]
    return _table(("convention", "forward pass counts", "backward pass of a training step"), rows, (12, 55, 33))


def _options() -> str:
    from formal import algorithms
    names = ("edtransformer", "etransformer", "dtransformer", "kv_dtransformer", "eloss", "dinference")
    defaults, docs = {}, {}
    for name in names:
        algorithm = algorithms.get(name)
        for option, doc in algorithm.option_docs.items():
            docs.setdefault(option, doc)
            defaults.setdefault(option, {})[name] = algorithm.options[option]
    rows = []
    for option, by_algorithm in defaults.items():
        models = {n: v for n, v in by_algorithm.items() if n in names[:3]}
        by_algorithm = models or by_algorithm  # a model option is inherited by the algorithms built on it
        values = set(map(repr, by_algorithm.values()))
        default = (f"``{next(iter(values))}``" if len(values) == 1 else
                   "; ".join(f"``{n}``: ``{v!r}``" for n, v in by_algorithm.items()))
        rows.append((f"``{option}``", default, docs[option]))
    return _table(("option", "default", "meaning"), rows, (15, 30, 55))


def _presets() -> str:
    from formal.complexity import Model, report
    from formal.presets import PRESETS
    rows = []
    for p in PRESETS.values():
        figures = report(Model(p.algorithm, p.options), p.sizes, seq_len=p.seq_len)
        per_token = figures["flops"]["forward_per_token"]
        per_token = f"{per_token:,.1f}" if isinstance(per_token, float) else f"{per_token:,}"
        rows.append((f"``{p.name}``", f"``{p.algorithm}``", f"{figures['params']['total']:,}", per_token, p.doc))
    per_token_header = "forward FLOPs per token at its context length (matmul)"
    header = ("preset", "algorithm", "parameters (derived)", per_token_header, "source and checks")
    return _table(header, rows, (12, 12, 14, 14, 48))


def _generate(app):
    GENERATED.mkdir(exist_ok=True)
    for name, make in {"conventions": _conventions, "options": _options, "presets": _presets}.items():
        (GENERATED / f"{name}.rst").write_text(make(), encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _generate)
