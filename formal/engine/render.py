"""Rendering of algorithm objects: the numbered pseudocode as text (paper glyphs) and as LaTeX
(``algorithmic``), each line with its derived result shape and cost, and a JSON view."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.shapes import shape_json, shape_latex, shape_text
from ..core.symbols import is_length, latex as sym_latex, text as sym_text
from ..costs.asymptotics import big_theta
from ..costs.cost import CONVENTIONS, check_convention
from ..ops import Apply, Ref, Rendered
from ..ops.indexing import Pick
from .algorithm import Several
from .hyper import hyperparameter_entries, hyperparameters, param_group_entries
from .names import symbol
from .options import option_views, options_json, options_latex, options_text
from .signature import signature_entry as _signature_entry

__all__ = ["display", "render_node", "line_text", "to_text", "to_latex", "to_json", "params_text",
           "params_json", "leading_order", "view", "View", "LineView", "callees", "LATEX_PACKAGES"]

#: What a LaTeX document needs for :func:`to_latex`'s environment: ``algorithm`` (the float) and
#: ``algpseudocode`` (algorithmicx's ``algorithmic`` with ``\State``, ``\Comment``), and AMS math.
LATEX_PACKAGES = r"% \usepackage{amsmath,amssymb,algorithm,algpseudocode}"

def display(name: str, latex: bool = False) -> str:
    """How a value's ASCII name is written (:func:`formal.engine.names.symbol`): ``V_tilde`` → ``Ṽ``, ``gamma1``
    → ``γ^1``, ``W_mlp1`` → ``W_{\\mathrm{mlp1}}`` in LaTeX, ``enc_W_q`` → ``W^enc_q``."""
    return symbol(name, latex=latex)


def render_node(node, latex: bool = False) -> Rendered:
    if isinstance(node, Ref):
        return Rendered(display(node.name, latex))
    if isinstance(node.op, Pick) and isinstance(node.args[0], Ref):  # a slice of a parameter: W^l_mlp1, γ^1_l
        index = node.op.index.latex() if latex else node.op.index.text()
        return Rendered(symbol(node.args[0].name, latex=latex, index=index), node.op.prec)
    args = [render_node(a, latex) for a in node.args]
    op = node.op
    return Rendered(op.latex(args) if latex else op.text(args), op.prec)


def _target(line, latex):
    if isinstance(line.target, tuple):
        return "(" + ", ".join(display(t, latex) for t in line.target) + ")"
    shown = line.shown or line.target
    name = display(shown, latex)
    if line.forall and shown[:1].isupper():  # a matrix built column by column: X[:, t]
        return f"{name}[:, {line.forall}]"
    return f"{name}_{{{line.forall}}}" if latex and line.forall else (f"{name}_{line.forall}" if line.forall else name)


def line_text(line, latex: bool = False) -> str:
    """One line as the paper writes it (``Q ← W_q X + b_q1ᵀ``, ``for h ∈ [H]:``)."""
    if not hasattr(line, "expr") and not hasattr(line, "body"):  # a Step: written as it is
        return line.latex if latex else line.text
    if hasattr(line, "body"):
        count = sym_latex(line.count) if latex else sym_text(line.count)
        until = f" until {line.until_text}" if line.until_text else ""
        return rf"{line.var} \in [{count}]{until}" if latex else f"for {line.var} ∈ [{count}]{until}:"
    expr = line.expr
    if isinstance(expr, Apply):
        args = [render_node(a, latex) for a in expr.args]
        whole = expr.op.line_latex(line.target, args) if latex else expr.op.line_text(line.target, args)
        if whole:
            return whole
    rhs, target = render_node(expr, latex).text, _target(line, latex)
    arrow = r"\gets" if latex else "←"
    body = rf"\textbf{{return}}\ {target} = {rhs}" if (latex and line.returns) else (
        f"return {target} = {rhs}" if line.returns else f"{target} {arrow} {rhs}")
    if line.forall:
        body = (rf"\forall {line.forall}:\ " if latex else f"∀{line.forall}: ") + body
    return body


_LABEL_TEX = {"θ": r"\theta", "θ̂": r"\hat{\theta}", "γ": r"\gamma", "β": r"\beta", "η": r"\eta"}


def _label(label: str, latex: bool) -> str:
    """A parameters label (``θ``, ``W_qkv``, ``γ, β``) as the header writes it: in LaTeX each part as a
    symbol (``\\theta``, ``W_{qkv}``), never a raw Unicode letter."""
    if not latex:
        return label
    return ", ".join(_LABEL_TEX.get(part, display(part, True)) for part in label.split(", "))


def header(algorithm, latex=False) -> str:
    """``Ṽ ← Attention(X, Z | W_qkv, Mask)``."""
    data = [display(s.name, latex) for s in algorithm.inputs if s.kind != "mask"]
    rest = ([_label(algorithm.params_label, latex)] if algorithm.params_label else [])
    rest += [display(s.name, latex) for s in algorithm.inputs if s.kind == "mask"]
    args = ", ".join(data) + ((r" \mid " if latex else " | ") + ", ".join(rest) if rest else "")
    out = ", ".join(display(o.name, latex) for o in algorithm.outputs)
    out = f"({out})" if len(algorithm.outputs) > 1 else out
    name = rf"\mathrm{{{algorithm.display}}}".replace("_", r"\_") if latex else algorithm.display
    return rf"{out} \gets {name}({args})" if latex else f"{out} ← {name}({args})"


def leading_order(algorithm, convention="matmul", *, latex: bool = False) -> str | None:
    """Θ of the FLOPs in the algorithm's sequence lengths (``latex``: as LaTeX), or None when it has none."""
    flops = algorithm.cost(convention).flops
    lengths = sorted((s for s in flops.free_symbols if is_length(s)), key=str)
    if not lengths or flops == 0:
        return None
    if latex:
        import sympy as sp

        from ..costs.asymptotics import leading_term
        _, primitive = leading_term(flops, lengths).as_content_primitive()
        names = ", ".join(sym_latex(s) for s in lengths)
        return rf"\Theta\left({sym_latex(sp.factor_terms(primitive))}\right) \text{{ in }} {names}"
    names = ", ".join(sym_text(s) for s in lengths)
    return f"{big_theta(flops, lengths)} in {names}"


def params_text(algorithm) -> str:
    rows = [(display(p.name), p.name, shape_text(p.shape), sym_text(p.size()), p.doc) for p in algorithm.params]
    if not rows:
        return f"{algorithm.label} has no parameters.\n"
    widths = [max(len(r[i]) for r in rows + [("paper", "name", "shape", "size", "")]) for i in range(4)]
    lines = [f"Parameters of {algorithm.label} (canonical names; per-head parameters stacked on a leading "
             "head axis):"]
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(("paper", "name", "shape", "size"), widths)))
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + f"  {r[4]}" for r in rows]
    lines.append(f"  total: {sym_text(algorithm.param_count())}")
    return "\n".join(lines) + "\n"


def params_json(algorithm) -> dict:
    return {"number": algorithm.number, "name": algorithm.name,
            "params": {p.name: {"shape": shape_json(p.shape), "size": str(p.size()), "doc": p.doc}
                       for p in algorithm.params},
            "total": str(algorithm.param_count())}


def params_latex(algorithm) -> str:
    """The parameters as a ``tabular``: each one's paper name, shape, size and meaning, and the total."""
    if not algorithm.params:
        return rf"% {algorithm.label} has no parameters." + "\n"
    out = [r"\begin{tabular}{llll}", r"parameter & shape & size & \\", r"\hline"]
    for p in algorithm.params:
        out.append(rf"${display(p.name, True)}$ & ${shape_latex(p.shape) or '1'}$ & ${sym_latex(p.size())}$ & "
                   rf"{_latex_text(p.doc)} \\")
    out += [r"\hline", rf"total & & ${sym_latex(algorithm.param_count())}$ & \\", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def _latex_text(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(special.get(c, c) for c in text)


def to_text(algorithm, convention="matmul") -> str:
    """The numbered pseudocode with each line's result shape and cost, then the totals."""
    check_convention(convention)
    d = algorithm.derivation
    out = [f"{algorithm.heading}: {header(algorithm)}", f"  {algorithm.summary}"]
    out.append("Input:       " + ", ".join(_signature_entry(s) for s in algorithm.inputs if s.kind != "mask"))
    hyper = hyperparameter_entries(algorithm)
    if hyper:
        out.append("Hyperparams: " + ", ".join(hyper))
    out.append("Output:      " + ", ".join(_signature_entry(o) for o in algorithm.outputs))
    for heading, entries in param_group_entries(algorithm):
        out.append("Parameters:  " + (f"{heading}: " if heading else "") + ", ".join(entries))
    if algorithm.size_constraints:
        out.append("Requires:    " + ", ".join(c.text for c in algorithm.size_constraints))
    for note in algorithm.notes:
        out.append("Note:        " + note)
    out += options_text(algorithm)
    rows = []
    for r in d.records:
        code = "  " * r.level + line_text(r.line)
        rows.append((str(r.number), code, _shapes_text(r.shape), sym_text(r.work.flops[convention])))
    heads = ("#", "line", "shape", f"FLOPs ({convention})")
    widths = [max(len(x[i]) for x in rows + [heads]) for i in range(3)]
    out.append("")
    out.append(f"{heads[0]:>{widths[0]}}  {heads[1]:<{widths[1]}}  {heads[2]:<{widths[2]}}  {heads[3]}")
    out += [f"{n:>{widths[0]}}  {c:<{widths[1]}}  {s:<{widths[2]}}  {f}" for n, c, s, f in rows]
    if any(r.level for r in d.records):
        out.append("(inside a loop the cost is per iteration; the loop line holds the whole loop's)")
    cost = algorithm.cost(convention)
    out += ["", f"Totals ({convention} convention):",
            f"  parameters  {sym_text(cost.params)}",
            f"  FLOPs       {sym_text(cost.flops)}",
            f"  memory      {sym_text(cost.memory)}  (scalars materialised)",
            f"  depth       {sym_text(cost.depth)}  (sequential lines)"]
    lead = leading_order(algorithm, convention)
    if lead:
        out.append(f"  leading     {lead}")
    if d.assumptions:
        out.append(f"  assuming    {', '.join(d.assumptions)}  (no truncation; past it each step costs no more)")
    return "\n".join(out) + "\n"


def _shapes_text(shape) -> str:
    if shape is None:
        return ""
    if isinstance(shape, Several):
        return ", ".join(shape_text(s) for s in shape)
    return shape_text(shape)


def _shapes_json(shape):
    if shape is None:
        return None
    if isinstance(shape, Several):
        return [shape_json(s) for s in shape]
    return shape_json(shape)


@dataclass(frozen=True)
class LineView:
    """One numbered line as every rendering shows it: LaTeX and text, its result shape, its cost per
    convention (the loop header holds the whole loop's), and whether it opens a loop."""

    number: int
    level: int
    loop: bool
    latex: str
    text: str
    shape_latex: str
    shape_text: str
    flops_latex: dict      # convention → LaTeX
    memory_latex: str
    tensor: bool = False   # one result of rank ≥ 1 (``show --latex`` comments its shape)


@dataclass(frozen=True)
class View:
    """An algorithm object as its renderings show it — the one model that ``show --latex`` and the Sphinx
    extension (:mod:`formal.tools.sphinx`) both render, each in its own markup."""

    name: str
    heading: str
    summary: str
    header_latex: str
    header_text: str
    inputs: tuple           # LaTeX of each signature entry
    hyperparameters: tuple  # LaTeX: the masks, the sizes (``H, L, d_e \\in \\mathbb{N}``), the scalars (τ, η)
    outputs: tuple
    params: tuple           # (LaTeX entry, doc) per parameter
    param_groups: tuple     # (LaTeX heading or "", LaTeX entries) as the paper groups them: for l ∈ [L]: W^l_mlp1, …
    constraints: tuple      # LaTeX
    notes: tuple
    options: tuple          # an OptionView per option
    option_rules: tuple     # each rule between options, as text
    calls: tuple            # registry names of the algorithms its lines call
    lines: tuple            # LineView
    totals: dict            # convention → {"params", "flops", "memory", "depth": LaTeX}
    leading: dict           # convention → text or None
    leading_latex: dict     # convention → LaTeX or None (the same Θ as math)
    assumptions: tuple


def callees(algorithm) -> tuple:
    """The names of the algorithms ``algorithm``'s lines call, in the order first called."""
    from .calls import calls_in
    found = []
    for node in calls_in(algorithm.lines):
        if node.op.callee.name not in found:
            found.append(node.op.callee.name)
    return tuple(found)


def view(algorithm) -> View:
    """The :class:`View` of ``algorithm``: every line and total derived, under every FLOP convention."""
    d = algorithm.derivation
    lines = tuple(LineView(r.number, r.level, hasattr(r.line, "body"), line_text(r.line, True), line_text(r.line),
                           _shapes_latex(r.shape), _shapes_text(r.shape),
                           {c: sym_latex(r.work.flops[c]) for c in CONVENTIONS}, sym_latex(r.work.memory),
                           bool(r.shape) and not isinstance(r.shape, Several))
                  for r in d.records)
    totals, leading, leading_latex = {}, {}, {}
    for convention in CONVENTIONS:
        cost = algorithm.cost(convention)
        totals[convention] = {"params": sym_latex(cost.params), "flops": sym_latex(cost.flops),
                              "memory": sym_latex(cost.memory), "depth": sym_latex(cost.depth)}
        leading[convention] = leading_order(algorithm, convention)
        leading_latex[convention] = leading_order(algorithm, convention, latex=True)
    return View(
        name=algorithm.name, heading=algorithm.heading, summary=algorithm.summary,
        header_latex=header(algorithm, True), header_text=header(algorithm),
        inputs=tuple(_signature_entry(s, True) for s in algorithm.inputs if s.kind != "mask"),
        hyperparameters=hyperparameter_entries(algorithm, True),
        outputs=tuple(_signature_entry(o, True) for o in algorithm.outputs),
        params=tuple((_signature_entry(p, True), p.doc) for p in algorithm.params),
        param_groups=param_group_entries(algorithm, True),
        constraints=tuple(c.latex for c in algorithm.size_constraints), notes=tuple(algorithm.notes),
        options=option_views(algorithm),
        option_rules=tuple(rule.text() for rule in algorithm.option_specs.rules),
        calls=callees(algorithm), lines=lines, totals=totals, leading=leading, leading_latex=leading_latex,
        assumptions=tuple(d.assumptions))


def _shapes_latex(shape) -> str:
    if shape is None:
        return ""
    if isinstance(shape, Several):
        return ", ".join(shape_latex(s) for s in shape)
    return shape_latex(shape)


def to_latex(algorithm) -> str:
    """An ``algorithm``/``algorithmic`` (algpseudocode) environment, each line commented with its shape —
    rendered from the :class:`View`.  Every line, loop headers and ``end for`` included, is one numbered
    ``\\State`` (a body indented by ``\\algorithmicindent``): algpseudocode's ``\\EndFor`` is not numbered,
    and the paper numbers its ``end for`` lines."""
    v = view(algorithm)
    out = [r"\begin{algorithm}", rf"\caption{{${v.header_latex}$}}", r"\begin{algorithmic}[1]"]
    inputs = ", ".join(f"${entry}$" for entry in v.inputs + v.hyperparameters)
    out.append(rf"\Require {inputs}")
    out.append(rf"\Ensure ${v.outputs[0]}$")
    for heading, entries in v.param_groups:  # as the paper groups them: for l ∈ [L]: W^l_q, …
        out.append(r"\Statex \textbf{Parameters:} " + (f"${heading}$: " if heading else "")
                   + ", ".join(f"${entry}$" for entry in entries))
    for line in v.lines:  # every line one numbered \State, so that LaTeX numbers them as the paper does
        state = "  " * line.level + r"\State " + r"\hskip\algorithmicindent " * line.level
        if line.loop:
            out.append(state + rf"\textbf{{for}} ${line.latex}$ \textbf{{do}}")
        else:
            comment = rf" \Comment{{$\in \mathbb{{R}}^{{{line.shape_latex}}}$}}" if line.tensor else ""
            out.append(state + f"${line.latex}$" + comment)
    out += [r"\end{algorithmic}", r"\end{algorithm}"]
    return "\n".join(out) + "\n" + options_latex(algorithm)


def to_json(algorithm, convention="matmul") -> dict:
    """The JSON view: signature shapes and costs as sympy expression strings over the ASCII symbols."""
    check_convention(convention)
    d, cost = algorithm.derivation, algorithm.cost(convention)
    return {
        "number": algorithm.number,
        "name": algorithm.name,
        "source": algorithm.source,
        "display": algorithm.display,
        "summary": algorithm.summary,
        "options": algorithm.options,
        "option_specs": options_json(algorithm),
        "convention": convention,
        "inputs": {s.name: shape_json(s.shape) for s in algorithm.inputs},
        "params": {s.name: shape_json(s.shape) for s in algorithm.params},
        "outputs": {o.name: shape_json(shape) for o, shape in zip(algorithm.outputs, d.output_shapes)},
        "assumptions": list(d.assumptions),
        "notes": list(algorithm.notes),
        "index_bounds": {s.name: str(s.bound) for s in algorithm.inputs if s.kind == "index"},
        "hyperparameters": {"sizes": [str(s) for s in hyperparameters(algorithm).sizes],
                            "scalars": [t for t, _ in hyperparameters(algorithm).scalars]},
        "constraints": [c.text for c in algorithm.size_constraints],
        "cost": {k: str(v) for k, v in cost.as_dict().items()},
        "flops": {c: str(d.work.flops[c]) for c in CONVENTIONS},
        "lines": [{"number": r.number, "level": r.level, "text": line_text(r.line),
                   "shape": _shapes_json(r.shape),
                   "flops": str(r.work.flops[convention]), "memory": str(r.work.memory)}
                  for r in d.records],
    }


