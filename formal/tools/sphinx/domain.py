"""The ``formal`` domain: directives that render the package's objects as docutils nodes, and roles that
link to them.  Every node is built from the objects when the docs build: an algorithm from its
:class:`~formal.engine.render.View` (the model ``show --latex`` renders too), a model from the figures
``complexity`` prints, a claim from its verdict, decided then."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.domains import Domain, ObjType
from sphinx.roles import XRefRole
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole
from sphinx.util.nodes import make_refnode

from . import nodes as build
from .claim import ClaimDirective, ClaimsDirective
from .entry import Entry
from .model import ModelDirective, ModelsDirective
from .pattern import PatternDirective
from .related import related, usage
from .theorems import TheoremDirective, TheoremsDirective

__all__ = ["FormalDomain", "AlgorithmDirective", "ModelDirective", "PatternDirective", "TheoremDirective",
           "ClaimDirective"]

logger = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------- algorithm
class AlgorithmDirective(Entry):
    """``.. formal:algorithm:: NAME`` — an algorithm of ``list`` (built with ``:options:``), rendered."""

    kind = "algorithm"
    option_spec = {"options": directives.unchanged, "convention": directives.unchanged, "noindex": directives.flag}

    def run(self):
        from ... import algorithms
        from ...costs.cost import CONVENTIONS
        from ...engine.options import parse_options as typed
        from ...engine.render import view
        from ...errors import FormalError
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
        out += usage(name, algorithm, options)
        out += related(name, algorithm, v.calls)
        return out

    @staticmethod
    def _signature(v) -> nodes.field_list:
        fields = [("Input", build.joined([build.math(e) for e in v.inputs]))]
        if v.hyperparameters:
            fields.append(("Hyperparameters", build.joined([build.math(e) for e in v.hyperparameters])))
        fields.append(("Output", build.joined([build.math(e) for e in v.outputs])))
        if v.params:  # grouped as the paper does: W_e, W_p; for l ∈ [L]: W^l_q, …, γ^1_l; γ, β; W_u
            groups = [([build.math(heading), nodes.Text(": ")] if heading else [])
                      + build.joined([build.math(e) for e in entries]) for heading, entries in v.param_groups]
            fields.append(("Parameters", [node for i, group in enumerate(groups)
                                          for node in ([nodes.Text("; ")] if i else []) + group]))
        if v.constraints:
            fields.append(("Requires", build.joined([build.math(c) for c in v.constraints])))
        for note in v.notes:
            fields.append(("Note", note))
        return build.field_list(fields)

    @staticmethod
    def _lines(v, conventions) -> nodes.table:
        rows = []
        stacked = len(conventions) > 2    # every convention in one column, one under the other: fits any page
        for line in v.lines:
            code = r"\quad " * line.level + (rf"\textbf{{for}}\ {line.latex}:" if line.loop else line.latex)
            flops = ([build.Cell([build.para(nodes.strong(text=f"{c}: "), build.math(line.flops_latex[c]))
                                  for c in conventions], blocks=True)] if stacked else
                     [[build.math(line.flops_latex[c])] for c in conventions])
            rows.append([str(line.number), build.Cell([build.math(code)], ("formal-line",)),
                         [build.math(line.shape_latex)] if line.shape_latex else "", *flops])
        header = ["#", "line", "shape", *(["FLOPs (" + ", ".join(conventions) + ")"] if stacked else
                                          [f"FLOPs ({c})" for c in conventions])]
        widths = [3, 40, 17] + ([40] if stacked else [40] * len(conventions))
        return build.table(header, rows, classes=("formal-lines",), widths=widths)

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
            if v.leading_latex[c]:
                rows.append([f"leading order ({c})", [build.math(v.leading_latex[c])]])
        if v.assumptions:
            rows.append(["assuming", ", ".join(v.assumptions)])
        return build.table(["total", "derived"], rows, classes=("formal-totals",), widths=[25, 75])


# ---------------------------------------------------------------------------------------------------- roles
class SymbolRole(SphinxRole):
    """``:formal:sym:`d_attn``` — a size symbol as the paper writes it (its meaning as the hover text)."""

    def run(self):
        import sympy as sp

        from ...core.symbols import info
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
    directives = {"algorithm": AlgorithmDirective, "model": ModelDirective, "models": ModelsDirective,
                  "pattern": PatternDirective, "theorem": TheoremDirective, "theorems": TheoremsDirective,
                  "claim": ClaimDirective, "claims": ClaimsDirective}
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
