"""Sphinx configuration: `sphinx-build docs docs/_build` (needs the `docs` extra).

The tables of FLOP conventions, model options, presets, attention patterns, Vaswani et al.'s Table 1 and the
claims catalogue's verdicts are
written into ``docs/_generated/`` from the
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
    from formal.graphs import analysis, patterns
    from formal.symbols import latex
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


def _table1() -> str:
    from formal.graphs import analysis
    sizes = (16, 64, 256)
    measured = [analysis.vaswani_table1(n) for n in sizes]
    rows = [(r["layer type"], *(m[i]["max path length"] for m in measured), r["Vaswani et al."])
            for i, r in enumerate(measured[0])]
    return _table(("layer type", *(f"n = {n}" for n in sizes), "Table 1 says"), rows, (40, 12, 12, 12, 24))


def _table1_derived() -> str:
    from formal import table1
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


def _claims() -> str:
    from formal.claims.command import run_files
    verdicts = run_files([], catalogue=True)
    rows = [(f"``{v.claim.id}``", v.claim.says, v.claim.source,
             f"{v.verdict}" + ("" if v.as_expected in (None, True) else " (unexpected)"),
             v.reason or "") for v in verdicts]
    return _table(("claim", "says", "source", "verdict", "why"), rows, (14, 28, 18, 8, 32))


def _theorems() -> str:
    from proofs.registry import theorems
    rows = [(f"``{t.name}``", f"{t.statement} :math:`{t.latex}`", ", ".join(t.about), t.level, t.method, t.twin)
            for t in theorems()]
    return _table(("theorem", "statement", "about", "level", "method", "perturbed twin (rejected)"), rows,
                  (12, 32, 10, 10, 20, 16))


def _generate(app):
    GENERATED.mkdir(exist_ok=True)
    tables = {"conventions": _conventions, "options": _options, "presets": _presets, "patterns": _patterns,
              "table1": _table1, "table1_derived": _table1_derived, "claims": _claims,
              "theorems": _theorems}
    for name, make in tables.items():
        (GENERATED / f"{name}.rst").write_text(make(), encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _generate)
