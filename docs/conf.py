"""Sphinx configuration: ``sphinx-build -W -b html docs docs/_build`` (needs the ``docs`` extra).

Everything about the objects is generated from them at each build, so the documentation cannot drift from the
code: a page per algorithm (``algorithms/``), per preset family (``models/``), the attention patterns, the
theorems and the claims catalogue with its verdicts (``objects/``) — each rendered by this package's own
Sphinx extension, ``formal.tools.sphinx`` — and the tables of FLOP conventions, model options, presets and
Vaswani et al.'s Table 1 (``_generated/``, included into the hand-written pages).

The extensions, and what each is for:

- ``formal.tools.sphinx`` — the ``formal`` domain (``formal:algorithm``, ``formal:model``, ``formal:pattern``,
  ``formal:theorem``, ``formal:claim``; the ``:formal:alg:`` and ``:formal:sym:`` roles) and math written as
  MathML when the pages are built, so formulas render offline with no JavaScript and no CDN;
- ``sphinx.ext.autodoc`` and ``sphinx.ext.napoleon`` — the API reference from the NumPy-style docstrings;
- ``sphinx.ext.viewcode`` — a [source] link beside every documented object, to its highlighted source;
- ``sphinxarg.ext`` (sphinx-argparse) — the command-line reference from the parser itself;
- ``sphinx_copybutton`` — a copy button on every code block (the calls and commands to copy);
- the ``furo`` theme — a maintained, accessible theme with search.
"""

from pathlib import Path

from formal import __version__

project = "formal-transformers"
author = "the formal-transformers developers"
copyright = f"2026, {author}"  # noqa: A001 - the name Sphinx reads
version = release = __version__
extensions = ["formal.tools.sphinx", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode",
              "sphinxarg.ext", "sphinx_copybutton"]
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
html_theme = "furo"
html_title = f"formal-transformers {version}"
copybutton_exclude = ".linenos, .gp, .go"   # copy the command, not the prompt or the output
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_show_search_summary = False   # the search works from file:// too: no snippets fetched from other pages
exclude_patterns = ["_build", "_generated"]  # included into pages, not pages themselves

HERE = Path(__file__).parent
GENERATED = HERE / "_generated"


def _cell(text) -> str:
    return str(text).replace("\n", " ").replace("|", r"\|")


def _table(header, rows, widths) -> str:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {' '.join(map(str, widths))}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {_cell(row[0])}")
        lines += [f"     - {_cell(c)}" for c in row[1:]]
    return "\n".join(lines) + "\n"


def _conventions() -> str:
    from formal.costs.cost import BACKWARD, CONVENTIONS
    rows = [(f"``{name}``", text, f"{BACKWARD[name][0]} × forward: {BACKWARD[name][1]}")
            for name, text in CONVENTIONS.items()]
    return _table(("convention", "forward pass counts", "backward pass of a training step"), rows, (12, 55, 33))


def _options() -> str:
    from formal import algorithms
    names = ("edtransformer", "etransformer", "dtransformer", "kv_dtransformer", "eloss", "dinference")
    defaults, specs = {}, {}
    for name in names:
        algorithm = algorithms.get(name)
        for option, spec in algorithm.option_specs.items():
            specs.setdefault(option, spec)
            defaults.setdefault(option, {})[name] = spec.default
    rows = []
    for option, by_algorithm in defaults.items():
        models = {n: v for n, v in by_algorithm.items() if n in names[:3]}
        by_algorithm = models or by_algorithm  # a model option is inherited by the algorithms built on it
        values = set(map(repr, by_algorithm.values()))
        default = (f"``{next(iter(values))}``" if len(values) == 1 else
                   "; ".join(f"``{n}``: ``{v!r}``" for n, v in by_algorithm.items()))
        rows.append((f"``{option}``", f"``{specs[option].domain.notation()}``", default, specs[option].meaning()))
    return _table(("option", "domain", "default", "meaning"), rows, (13, 22, 20, 45))


def _presets() -> str:
    from formal.models.complexity import Model, report
    from formal.models.presets import PRESETS
    rows = []
    for p in PRESETS.values():
        # a model without a default length (a captioner) has its parameters at any length: they do not grow
        figures = report(Model(p.algorithm, p.options), p.sizes, seq_len=p.seq_len or 1)
        per_token = figures["flops"]["forward_per_token"]
        per_token = f"{per_token:,.1f}" if isinstance(per_token, float) else f"{per_token:,}"
        if p.seq_len is None:
            per_token = "— (no fixed length)"
        rows.append((f"``{p.name}``", f"``{p.algorithm}``", f"{figures['params']['total']:,}", per_token, p.doc))
    per_token_header = "forward FLOPs per token at its context length (matmul)"
    header = ("preset", "algorithm", "parameters (derived)", per_token_header, "source and checks")
    return _table(header, rows, (12, 12, 14, 14, 48))


def _patterns() -> str:
    from formal.core.symbols import latex
    from formal.graphs import analysis, patterns
    examples = {"full": patterns.full(64), "causal": patterns.causal(64), "cross": patterns.cross(48, 64),
                "sliding_window": patterns.sliding_window(64, 8), "dilated": patterns.dilated(64, 8, 2),
                "global_local": patterns.global_local(64, 8, 2), "strided": patterns.strided(64, 8),
                "fixed": patterns.fixed(64, 8, 2), "random": patterns.random(64, 2, window=4, n_global=2),
                "swin": patterns.swin(8, 8, 4, shifted=True)}
    rows = []
    for name, kind in patterns.PATTERNS.items():
        p = examples[name]
        regime, conditions, _ = analysis.edge_count_regime(p)
        when = ", ".join(f":math:`{latex(c)} \\ge 0`" for c in conditions) or "always"
        coverage = analysis.layers_to_coverage(p) if p.self_attention else None
        rows.append((f"``{name}``", kind.doc, f":math:`{latex(regime)}`", when, repr(p).split("(", 1)[1][:-1],
                     "—" if not p.self_attention else ("never" if coverage is None else coverage)))
    header = ("pattern", "what", "edges |E|", "formula valid when", "example", "layers to full coverage")
    return _table(header, rows, (10, 18, 30, 14, 20, 8))


def _pattern_parameters() -> str:
    """Every pattern's parameters as its schema declares them (formal.graphs.schema); the report's once."""
    from formal.graphs.schema import PARAMETERS, SCHEMAS

    def row(pattern, p):
        default = "required" if p.required else "optional" if p.default is None else f"``{p.default!r}``"
        spellings = [f"``{a}``" for a in p.aliases] + ([f"``{p.negation[0]}`` (the opposite)"] if p.negation else [])
        return (pattern, f"``{p.name}`` (``{p.flag}``)", p.kind.describe(), default, ", ".join(spellings) or "—",
                p.meaning)
    rows = [row(f"``{s.name}``", p) for s in SCHEMAS.values() for p in s.parameters if p.role != "report"]
    rows += [row("every pattern", p) for p in PARAMETERS if p.role == "report"]
    header = ("pattern", "parameter (flag)", "type", "default", "also written", "meaning")
    return _table(header, rows, (12, 18, 18, 10, 14, 28))


def _table1() -> str:
    from formal.graphs import analysis
    sizes = (16, 64, 256)
    measured = [analysis.vaswani_table1(n) for n in sizes]
    rows = [(r["layer type"], *(m[i]["max path length"] for m in measured), r["Vaswani et al."])
            for i, r in enumerate(measured[0])]
    return _table(("layer type", *(f"n = {n}" for n in sizes), "Table 1 says"), rows, (40, 12, 12, 12, 24))


def _table1_derived() -> str:
    from formal.models import table1
    report = table1.report(n=(64, 256))
    rows = []
    for r in report["rows"]:
        paths = ", ".join(str(v) for v in r["path_lengths"].values())
        rows.append((r["layer"], f"{r['complexity']} (paper: {r['paper'][0]})", f"{r['sequential']} "
                     f"(paper: {r['paper'][1]})", f"{paths} (paper: {r['paper'][2]})", r["flops"], r["source"]))
    header = ("layer", "complexity per layer", "sequential operations", "max path length, n = 64, 256",
              "exact FLOPs (matmul)", "object")
    parity = ", ".join(f"{cell.upper()} " + (f"at n = {n}" if n else "never (always cheaper)")
                       for cell, n in report["parity"].items())
    return _table(header, rows, (14, 20, 14, 16, 24, 16)) + f"\nCost parity with a self-attention layer: {parity}.\n"


def _theorems() -> str:
    from proofs.registry import theorems
    rows = [(f"``{t.name}``", f"{t.statement} :math:`{t.latex}`", ", ".join(t.about), t.level, t.method, t.twin)
            for t in theorems()]
    return _table(("theorem", "statement", "about", "level", "method", "perturbed twin (rejected)"), rows,
                  (12, 32, 10, 10, 20, 16))


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (Sphinx rereads only the pages that changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _title(text: str, mark: str = "=") -> str:
    return f"{text}\n{mark * len(text)}\n"


def _algorithm_pages():
    """One page per algorithm of ``list``: its entry rendered by ``formal:algorithm``."""
    from formal import algorithms
    folder = HERE / "algorithms"
    names = list(algorithms.ALGORITHMS)
    for name, a in algorithms.ALGORITHMS.items():
        title = f"{a.heading}: {a.display}" if a.number is not None else f"{a.display} ({a.source})"
        body = _title(title) + f"\n.. formal:algorithm:: {name}\n"
        if a.options:
            body += ("\nShow a variant with ``formal-transformers show " + name + " -o KEY=VALUE``; the options are "
                     "listed above.\n")
        _write(folder / f"{name}.rst", body)
    paper = [n for n in names if algorithms.get(n).number is not None]
    other = [n for n in names if algorithms.get(n).number is None]
    index = _title("Algorithms") + (
        "\nEvery algorithm of ``formal-transformers list``, one page each, rendered from its object: the numbered "
        "lines, the shape and cost of each, the totals.  The paper's algorithms first (Phuong & Hutter 2022, in "
        "its order, variants after the algorithm they vary), then the systems the lecture notes teach with.\n\n"
        ".. toctree::\n   :caption: Phuong & Hutter's algorithms\n   :maxdepth: 1\n\n"
        + "".join(f"   {n}\n" for n in paper)
        + "\n.. toctree::\n   :caption: Beyond the paper\n   :maxdepth: 1\n\n" + "".join(f"   {n}\n" for n in other))
    _write(folder / "index.rst", index)


_FAMILIES = {"gpt2": "GPT-2", "gpt3": "GPT-3", "bert": "BERT", "llama": "Llama 2", "vit": "ViT", "swin": "Swin",
             "transformer": "The Transformer (Vaswani et al. 2017)", "show": "Show, Attend and Tell"}


def _model_pages():
    """One page per preset family: each preset's figures and formulas, by ``formal:model``."""
    from formal.models.presets import PRESETS
    families = {}
    for name in PRESETS:
        families.setdefault(name.split("-")[0], []).append(name)
    folder = HERE / "models"
    for family, names in families.items():
        body = ":hide-toc:\n\n" + _title(_FAMILIES.get(family, family)) + (
            "\nThe presets side by side, then each with its figures (what ``complexity`` prints) and formulas.\n\n"
            f".. formal:models:: {' '.join(names)}\n")
        body += "".join(f"\n{_title(n, '-')}\n.. formal:model:: {n}\n" for n in names)
        _write(folder / f"{family}.rst", body)
    index = _title("Models (presets)") + (
        "\nThe presets of ``formal-transformers complexity``, by family: the published configurations, their "
        "figures as ``complexity`` prints them, and the formulas behind them.\n\n.. toctree::\n   :maxdepth: 1\n\n"
        + "".join(f"   {f}\n" for f in families))
    _write(folder / "index.rst", index)


def _object_pages():
    """The attention patterns, the theorems and the claims catalogue, each entry by its directive."""
    from formal.tools.claims.catalogue import files
    from proofs.registry import theorems
    folder = HERE / "objects"
    patterns = {"full": "n=16", "causal": "n=16", "cross": "n=16, n_z=12", "sliding_window": "n=16, window=5",
                "dilated": "n=16, window=4, dilation=2", "global_local": "n=16, window=4, n_global=2",
                "strided": "n=16, stride=4", "fixed": "n=16, stride=4, summary=1",
                "random": "n=16, n_random=2, window=3, n_global=1, seed=0",
                "swin": "grid=8x8, window=4, shifted=true"}
    body = _title("Attention patterns") + (
        "\nThe patterns of ``formal-transformers graph``: which keys each query sees (in the paper's layout, "
        "Mask ∈ {0,1}^(ℓ_z×ℓ_x): keys down the rows, queries across the columns), "
        "how many edges the pattern has as a formula in its sizes, and after how many layers every token can "
        "reach every other.\n")
    for name, args in patterns.items():
        body += f"\n{_title(name, '-')}\n.. formal:pattern:: {name}\n   :args: {args}\n"
    _write(folder / "patterns.rst", body)
    body = _title("The theorems, one entry each") + (
        "\nThe theorems of ``proofs/``, machine-checked by ``formal-transformers prove``: "
        "each with its evidence level, its method and the perturbed twin it rejects, and the result of checking "
        "both when these pages were built.\n\n.. formal:theorems::\n")
    for t in theorems():
        body += f"\n{_title(t.name, '-')}\n.. formal:theorem:: {t.name}\n"
    _write(folder / "theorems.rst", body)
    body = ":hide-toc:\n\n" + _title("The claims catalogue") + (
        "\nEvery claim shipped with the package, decided when these pages were built "
        "(``formal-transformers check --catalogue``): what it says, where it comes from, what it is about, the "
        "value claimed and the value derived, its verdict and why.  A claim the literature gets wrong is recorded "
        "with ``expect = \"fails\"``: its verdict reads *fails (as expected)*, and its note says what is "
        "known about it.  Type in the box to keep only the claims containing some words.\n\n"
        ".. formal:claims::\n   :summary-only:\n")
    for path in files():
        stem = Path(path).stem
        body += "\n" + _title(stem.replace("_", " ").capitalize(), "-") + f"\n.. formal:claims:: {stem}\n"
    _write(folder / "catalogue.rst", body)


def _api_algorithms() -> str:
    """The API entries of every module of formal.algorithms, in the registry's order of families (the modules
    that build no algorithm, such as blocks, after them): a new family module is listed by itself."""
    import pkgutil

    import formal.algorithms as package
    families = [m.__name__.rpartition(".")[2] for m in package._families()]
    others = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name not in families)
    return "".join(f".. automodule:: formal.algorithms.{name}\n   :members:\n\n" for name in families + others)


def _generate(app):
    GENERATED.mkdir(exist_ok=True)
    tables = {"conventions": _conventions, "options": _options, "presets": _presets, "patterns": _patterns,
              "pattern_parameters": _pattern_parameters, "table1": _table1, "table1_derived": _table1_derived,
              "theorems": _theorems, "api_algorithms": _api_algorithms}
    for name, make in tables.items():
        _write(GENERATED / f"{name}.rst", make())
    _algorithm_pages()
    _model_pages()
    _object_pages()


def _no_napoleon_for_attributes(app):
    """Napoleon reads an attribute's or property's docstring "Which norm: layer or rms" as a type ("Which
    norm") and a description: keep its NumPy sections for functions and classes, and leave those docstrings as
    written."""
    listeners = app.events.listeners["autodoc-process-docstring"]
    for listener in list(listeners):
        if getattr(listener.handler, "__module__", "").startswith("sphinx.ext.napoleon"):
            napoleon = listener.handler
            app.disconnect(listener.id)

            def process(app, what, name, obj, options, lines, napoleon=napoleon):
                if what not in ("attribute", "property", "data"):
                    napoleon(app, what, name, obj, options, lines)
            app.connect("autodoc-process-docstring", process, priority=listener.priority)


def setup(app):
    app.connect("config-inited", lambda app, config: _generate(app))
    _no_napoleon_for_attributes(app)
