"""The ``formal`` domain: directives that render the package's objects as docutils nodes, and roles that
link to them.  Every node is built from the objects when the docs build: an algorithm from its
:class:`~formal.engine.render.View` (the model ``show --latex`` renders too), a model from the figures
``complexity`` prints, a claim from its verdict, decided then."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.domains import Domain, ObjType
from sphinx.roles import XRefRole
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.nodes import make_id, make_refnode

from . import nodes as build

__all__ = ["FormalDomain", "AlgorithmDirective", "ModelDirective", "PatternDirective", "TheoremDirective",
           "ClaimDirective"]

logger = logging.getLogger(__name__)


class _Entry(SphinxDirective):
    """A directive that documents one object: a target, index entries, and its body."""

    has_content = False
    required_arguments = 1
    kind = ""
    option_spec = {"noindex": directives.flag}

    def target(self, name: str, index: list) -> list:
        """A target for links to this entry, and its index entries (none with ``:noindex:``: the same
        object shown a second time)."""
        if "noindex" in self.options:
            return []
        anchor = make_id(self.env, self.state.document, f"formal-{self.kind}", name)
        target = nodes.target("", "", ids=[anchor])
        self.state.document.note_explicit_target(target)
        self.env.get_domain("formal").note_object(self.kind, name, anchor, self.env.docname)
        entries = [("single", text, anchor, "", None) for text in index]
        return [addnodes.index(entries=entries), target]

    def fail(self, message: str) -> list:
        logger.warning(message, location=self.get_location())
        return [nodes.paragraph(text=f"[{message}]")]


# ----------------------------------------------------------------------------------------------- algorithm
class AlgorithmDirective(_Entry):
    """``.. formal:algorithm:: NAME`` — an algorithm of ``list`` (built with ``:options:``), rendered."""

    kind = "algorithm"
    option_spec = {"options": directives.unchanged, "convention": directives.unchanged, "noindex": directives.flag}

    def run(self):
        from .. import algorithms
        from ..costs.cost import CONVENTIONS
        from ..engine.options import parse_options as typed
        from ..engine.render import view
        from ..errors import FormalError
        name = self.arguments[0]
        try:
            options = typed(name, build.items(self.options.get("options", "")))
            algorithm = algorithms.get(name, **options)
            v = view(algorithm)
        except (FormalError, ValueError) as error:
            return self.fail(f"formal:algorithm {name}: {error}")
        convention = self.options.get("convention", self.config.formal_convention)
        conventions = tuple(CONVENTIONS) if convention == "all" else (convention,)
        if any(c not in CONVENTIONS for c in conventions):
            return self.fail(f"formal:algorithm {name}: unknown convention {convention!r}; known: "
                             f"{', '.join(CONVENTIONS)}, all")
        index = [algorithm.label, f"{algorithm.name} (algorithm)"]
        first = next((n for n, a in algorithms.ALGORITHMS.items() if a.number == algorithm.number), None)
        if algorithm.number is not None and first == name and not options:   # the paper's own, not a variant
            index.append(f"Algorithm {algorithm.number}")
        out = self.target(name if not options else f"{name}({self.options['options']})", index)
        out.append(build.para(nodes.strong(text=f"{v.heading}: "), build.math(v.header_latex)))
        out.append(build.para(v.summary))
        out.append(self._signature(v))
        out.append(self._lines(v, conventions))
        if any(line.level for line in v.lines):
            out.append(build.para(nodes.emphasis(text="Inside a loop the cost is per iteration; the loop's line holds "
                                                 "the whole loop's.")))
        out.append(self._totals(v, conventions))
        if v.options:
            out += [nodes.rubric(text="Options"), *self._options(v)]
        if v.calls:
            out.append(build.para("Calls: ", *build.joined([build.xref("alg", c) for c in v.calls]), "."))
        return out

    @staticmethod
    def _signature(v) -> nodes.field_list:
        fields = [("Input", build.joined([build.math(e) for e in v.inputs]))]
        if v.hyperparameters:
            fields.append(("Hyperparameters", build.joined([build.math(e) for e in v.hyperparameters])))
        fields.append(("Output", build.joined([build.math(e) for e in v.outputs])))
        if v.params:
            fields.append(("Parameters", build.joined([build.math(e) for e, _ in v.params])))
        if v.constraints:
            fields.append(("Requires", build.joined([build.math(c) for c in v.constraints])))
        for note in v.notes:
            fields.append(("Note", note))
        return build.field_list(fields)

    @staticmethod
    def _lines(v, conventions) -> nodes.table:
        rows = []
        for line in v.lines:
            code = r"\quad " * line.level + (rf"\textbf{{for}}\ {line.latex}:" if line.loop else line.latex)
            rows.append([str(line.number), build.Cell([build.math(code)], ("formal-line",)),
                         [build.math(line.shape_latex)] if line.shape_latex else "",
                         *[[build.math(line.flops_latex[c])] for c in conventions]])
        header = ["#", "line", "shape", *[f"FLOPs ({c})" for c in conventions]]
        return build.table(header, rows, classes=("formal-lines",), widths=[3, 40, 17] + [40] * len(conventions))

    @staticmethod
    def _options(v) -> list:
        """Every option's value, domain, default and meaning (``show``'s listing), then the rules between them."""
        rows = [[[nodes.literal(text=o.name)], [nodes.literal(text=o.value)], [nodes.literal(text=o.domain)],
                 [nodes.literal(text=o.default)], o.meaning] for o in v.options]
        table = build.table(["option", "value", "domain", "default", "meaning"], rows, classes=("formal-options",),
                            widths=[15, 12, 25, 10, 38])
        rules = [build.para("Rule: ", nodes.literal(text=rule)) for rule in v.option_rules]
        return [table, *rules]

    @staticmethod
    def _totals(v, conventions) -> nodes.table:
        first = v.totals[conventions[0]]
        rows = [["parameters", [build.math(first["params"])]]]
        rows += [[f"FLOPs ({c})", [build.math(v.totals[c]["flops"])]] for c in conventions]
        rows += [["memory (scalars materialised)", [build.math(first["memory"])]],
                 ["depth (sequential lines)", [build.math(first["depth"])]]]
        for c in conventions:
            if v.leading[c]:
                rows.append([f"leading order ({c})", v.leading[c]])
        if v.assumptions:
            rows.append(["assuming", ", ".join(v.assumptions)])
        return build.table(["total", "derived"], rows, classes=("formal-totals",), widths=[25, 75])


# --------------------------------------------------------------------------------------------------- model
class ModelDirective(_Entry):
    """``.. formal:model:: PRESET`` — what ``complexity PRESET`` prints, and the formulas behind it."""

    kind = "model"

    def run(self):
        from ..core.symbols import latex
        from ..errors import FormalError
        from ..models.complexity import Model, grouped, preset_report
        from ..models.presets import get
        name = self.arguments[0]
        try:
            preset = get(name)
            figures = preset_report(name, seq_len=preset.seq_len or 1)
            model = Model(preset.algorithm, preset.options)
        except FormalError as error:
            return self.fail(f"formal:model {name}: {error}")
        out = self.target(name, [f"{name} (preset)"])
        out.append(build.para(nodes.strong(text=f"{name}: "), build.xref("alg", preset.algorithm), f" — {preset.doc}"))
        sizes = ", ".join(f"{k} = {v}" for k, v in preset.sizes.items())
        options = ", ".join(f"{k}={v!r}" for k, v in preset.options.items())
        f, p = figures["flops"], figures["params"]
        rows = [["parameters", grouped(p["total"])], ["  embedding", grouped(p["embedding"])],
                ["  non-embedding", grouped(p["non_embedding"])]]
        if preset.seq_len is not None:
            rows += [[f"FLOPs forward (matmul, {preset.seq_len} tokens)", grouped(f["forward_per_sequence"])],
                     ["FLOPs forward per token", grouped(f["forward_per_token"])],
                     ["multiply–accumulates forward", grouped(f["forward_macs_per_sequence"])],
                     ["FLOPs of a training step", grouped(f["training_step_per_sequence"])],
                     ["activation memory (fp32 bytes)", grouped(figures["memory"]["activations_bytes"])]]
            if figures["kv_cache"]:
                rows.append(["KV cache (fp32 bytes per token)", grouped(figures["kv_cache"]["bytes_per_token"])])
        out.append(build.field_list([("Options", options or "the algorithm's defaults"), ("Sizes", sizes)]))
        out.append(build.table(["figure", "value"], rows, classes=("formal-figures",), widths=[45, 55]))
        out.append(build.field_list([("Parameters", [build.math(latex(model.params()["total"]))]),
                                ("FLOPs forward (matmul)", [build.math(latex(model.forward("matmul").flops))])]))
        return out


# ------------------------------------------------------------------------------------------------- pattern
class PatternDirective(_Entry):
    """``.. formal:pattern:: NAME`` (``:args: KEY=VALUE, …``, the pattern's parameters as ``graph`` takes them:
    :mod:`formal.graphs.schema`) — a pattern's mask as a picture, its edge count as a formula and its
    analysis, from :func:`formal.graphs.report`'s figures.  An edge list's ``file`` is relative to the page."""

    kind = "pattern"
    option_spec = {"args": directives.unchanged, "noindex": directives.flag}

    def run(self):
        from ..core.symbols import latex
        from ..errors import FormalError
        from ..graphs import analysis, as_pattern
        from ..graphs.specs import GraphSpec
        name = self.arguments[0]
        try:
            args = build.parse_options(self.options.get("args", ""), f"formal:pattern {name} :args:")
            if isinstance(args.get("file"), str):
                args["file"] = self.env.relfn2path(args["file"])[1]
            spec = GraphSpec.checked(name, args)
            built = spec.build()
            figures = spec.report(built)
            pattern = as_pattern(built)
            formula = analysis.edge_count_regime(built)[:2] if "formula" in figures else None
        except (FormalError, ValueError, TypeError) as error:
            return self.fail(f"formal:pattern {name}: {error}")
        out = self.target(name, [f"{name} (attention pattern)"])
        out.append(build.para(nodes.strong(text=f"{name}: "), _pattern_doc(spec)))
        out.append(nodes.raw("", _mask_svg(pattern), format="html"))
        fields = []
        if formula is not None:
            regime, conditions = formula
            fields += [("Edges |E|", [build.math(latex(regime))]),
                       ("Valid when", build.joined([build.math(rf"{latex(c)} \ge 0") for c in conditions]) or "always")]
        pairs = figures["ell_z"] * figures["ell_x"]
        fields.append(("Here", f"{figures['edges']:,} edges of {pairs:,} pairs ({figures['density']:.1%})"))
        if figures["self_attention"]:
            covered = figures["layers"]["layers_to_coverage"]
            fields.append(("Layers to full coverage", "never" if covered is None else str(covered)))
        out.append(build.field_list(fields))
        return out


def _pattern_doc(spec) -> str:
    """What a pattern is, in a line: the built-in pattern's own words, or the edge list's parameter."""
    from ..graphs.patterns import PATTERNS
    kind = PATTERNS.get(spec.schema.builder)
    return kind.doc if kind is not None else spec.schema["file"].meaning


def _mask_svg(pattern, cell: int = 6, most: int = 64) -> str:
    """The mask as an SVG picture (a key per row, a query per column), at most ``most`` of each."""
    rows, cols = min(pattern.ell_z, most), min(pattern.ell_x, most)
    on = {(int(k), int(q)) for k, q in zip(pattern.keys, pattern.queries) if k < rows and q < cols}
    rects = [f'<rect class="{"on" if (k, q) in on else "off"}" x="{q * cell}" y="{k * cell}" width="{cell - 1}" '
             f'height="{cell - 1}"/>' for k in range(rows) for q in range(cols)]
    title = f"mask of {pattern.name}: keys down, queries across"
    return (f'<svg class="formal-mask" role="img" aria-label="{title}" width="{cols * cell}" height="{rows * cell}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{title}</title>{"".join(rects)}</svg>')


# ------------------------------------------------------------------------------------------ theorem, claim
class TheoremDirective(_Entry):
    """``.. formal:theorem:: NAME`` — a theorem of ``proofs/``: its statement, evidence level, method and twin, and
    (unless ``:no-result:``) its result when the docs were built: the proof's verdict and detail, the twin's
    verdict and counterexample.  The theorems are found through the ``formal_transformers.theorems`` entry points
    (:func:`formal.sphinx.theorems.declared`)."""

    kind = "theorem"
    option_spec = {"noindex": directives.flag, "no-result": directives.flag}

    def run(self):
        from .theorems import checked, declared, result_fields
        name = self.arguments[0]
        try:
            found = {t.name: t for t in declared()}
        except LookupError as error:
            return self.fail(f"formal:theorem {name}: {error}")
        if name not in found:
            return self.fail(f"formal:theorem {name}: unknown; known: {', '.join(found)}")
        t = found[name]
        out = self.target(name, [f"{name} (theorem)"])
        box = nodes.container(classes=["formal-theorem"])
        box += build.para(nodes.strong(text=f"Theorem ({name}). "), t.statement, " ", build.math(t.latex))
        fields = [("Evidence", t.level), ("Method", t.method), ("Perturbed twin", t.twin),
                  ("About", build.joined([build.xref("alg", a) for a in t.about]))]
        if "no-result" not in self.options:
            fields += result_fields(checked(t))
        box += build.field_list(fields)
        out.append(box)
        return out


class ClaimDirective(_Entry):
    """``.. formal:claim:: ID`` — a claim of the catalogue with the verdict it gets when the docs build."""

    kind = "claim"

    def run(self):
        claim_id = self.arguments[0]
        verdicts = [v for v in _catalogue() if v.claim.id == claim_id]
        if not verdicts:
            return self.fail(f"formal:claim {claim_id}: not in the catalogue")
        v = verdicts[0]
        out = self.target(claim_id, [f"{claim_id} (claim)"])
        unexpected = v.as_expected is False
        verdict = nodes.inline(text=v.verdict + (" (unexpected)" if unexpected else ""),
                               classes=[f"formal-verdict-{v.verdict}"] + (["formal-verdict-unexpected"]
                                                                           if unexpected else []))
        box = nodes.container(classes=["formal-claim"])
        box += build.para(nodes.strong(text=f"Claim {claim_id}: "), f"“{v.claim.says}”")
        box += build.field_list([("Source", v.claim.source), ("Verdict", [verdict]), ("Why", v.reason or "—")])
        out.append(box)
        return out


_VERDICTS: list = []


def _catalogue() -> list:
    """The catalogue's verdicts, decided once per build."""
    if not _VERDICTS:
        from ..claims.command import run_files
        _VERDICTS.extend(run_files([], catalogue=True))
    return _VERDICTS


# ---------------------------------------------------------------------------------------------------- roles
class SymbolRole(SphinxRole):
    """``:formal:sym:`d_attn``` — a size symbol as the paper writes it (its meaning as the hover text)."""

    def run(self):
        import sympy as sp

        from ..core.symbols import info
        name = self.text.strip()
        symbol = info(sp.Symbol(name)) if name.isidentifier() else None
        if symbol is None or symbol.meaning == name:     # info() of a name the package does not use
            logger.warning(f"formal:sym: {name!r} is not a size symbol of the package (d_attn, ell_x, H, …)",
                           location=self.get_location())
            return [nodes.literal(name, name)], []
        node = nodes.math(symbol.tex, symbol.tex)
        wrapper = nodes.inline(classes=["formal-sym"], title=symbol.meaning)
        wrapper += node
        return [wrapper], []


# --------------------------------------------------------------------------------------------------- domain
class FormalDomain(Domain):
    """The objects of formal-transformers: algorithms, models (presets), patterns, theorems and claims."""

    name = "formal"
    label = "formal-transformers"
    object_types = {"algorithm": ObjType("algorithm", "alg"), "model": ObjType("model", "model"),
                    "pattern": ObjType("pattern", "pattern"), "theorem": ObjType("theorem", "theorem"),
                    "claim": ObjType("claim", "claim")}
    directives = {"algorithm": AlgorithmDirective, "model": ModelDirective, "pattern": PatternDirective,
                  "theorem": TheoremDirective, "claim": ClaimDirective}
    roles = {"alg": XRefRole(), "model": XRefRole(), "pattern": XRefRole(), "theorem": XRefRole(),
             "claim": XRefRole(), "sym": SymbolRole()}
    initial_data = {"objects": {}}   # (kind, name) → (docname, anchor)
    _ROLE_KIND = {"alg": "algorithm", "model": "model", "pattern": "pattern", "theorem": "theorem",
                  "claim": "claim"}

    def note_object(self, kind, name, anchor, docname):
        objects = self.data["objects"]
        if (kind, name) in objects and objects[(kind, name)][0] != docname:
            logger.warning(f"formal:{kind} {name} is documented twice: in {objects[(kind, name)][0]} and "
                           f"{docname}")
        objects.setdefault((kind, name), (docname, anchor))

    def clear_doc(self, docname):
        for key, (doc, _) in list(self.data["objects"].items()):
            if doc == docname:
                del self.data["objects"][key]

    def merge_domaindata(self, docnames, otherdata):
        for key, value in otherdata["objects"].items():
            if value[0] in docnames:
                self.data["objects"][key] = value

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        found = self.data["objects"].get((self._ROLE_KIND.get(typ, typ), target))
        if found is None:
            return None
        docname, anchor = found
        return make_refnode(builder, fromdocname, docname, anchor, contnode, target)

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        out = []
        for (kind, name), (docname, anchor) in self.data["objects"].items():
            if name == target:
                role = next(r for r, k in self._ROLE_KIND.items() if k == kind)
                out.append((f"formal:{role}", make_refnode(builder, fromdocname, docname, anchor, contnode, name)))
        return out

    def get_objects(self):
        for (kind, name), (docname, anchor) in self.data["objects"].items():
            yield name, name, kind, docname, anchor, 1
