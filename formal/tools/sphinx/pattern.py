"""``.. formal:pattern::`` — an attention pattern's mask as a picture, its edge count and its analysis."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives

from ...graphs.svg import mask_svg
from . import nodes as build
from .entry import Entry

__all__ = ["PatternDirective"]


class PatternDirective(Entry):
    """``.. formal:pattern:: NAME`` (``:args: KEY=VALUE, …``, the pattern's parameters as ``graph`` takes them:
    :mod:`formal.graphs.schema`) — a pattern's mask as a picture, its edge count as a formula and its
    analysis, from :func:`formal.graphs.report`'s figures.  An edge list's ``file`` is relative to the page."""

    kind = "pattern"
    option_spec = {"args": directives.unchanged, "noindex": directives.flag}

    def run(self):
        from ...core.symbols import latex
        from ...errors import FormalError
        from ...graphs import analysis, as_pattern
        from ...graphs.specs import GraphSpec
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
            return self.fail(f"formal:pattern {name}: {error}{_parameters_of(name)}")
        out = self.target(name, [f"{name} (attention pattern)"])
        out.append(build.para(nodes.strong(text=f"{name}: "), _pattern_doc(spec)))
        given = ", ".join(f"{k} = {v}" for k, v in args.items() if k != "file")
        fields = [("Built with", [nodes.literal(text=given or "its defaults"), nodes.Text(
            f": ℓ_z × ℓ_x = {figures['ell_z']:,} × {figures['ell_x']:,} (keys × queries)")])]
        out.append(build.field_list(fields))
        figure = nodes.container(classes=["formal-mask-figure"])
        figure += nodes.raw("", mask_svg(pattern), format="html")
        figure += build.para(nodes.emphasis(text="Mask[t_z, t_x] in the paper's layout: a key t_z per row, a query t_x "
                                             "per column, filled where the query sees the key (a causal mask is "
                                             "upper-triangular in it)."))
        out.append(figure)
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


def _parameters_of(name: str) -> str:
    """``; its parameters: n (required), window (required), …`` — what to write in ``:args:``."""
    from ...errors import FormalError
    from ...graphs.schema import schema_of
    try:
        schema = schema_of(name)
    except FormalError:     # an unknown pattern: its error lists the known ones
        return ""
    described = [f"{p.name} ({'required' if p.required else 'default ' + repr(p.default)})"
                 for p in schema.parameters if p.role != "report"]
    return f"; its parameters (:args: KEY=VALUE, …): {', '.join(described)}"


def _pattern_doc(spec) -> str:
    """What a pattern is, in a line: the built-in pattern's own words, or the edge list's parameter."""
    from ...graphs.patterns import PATTERNS
    kind = PATTERNS.get(spec.schema.builder)
    return kind.doc if kind is not None else spec.schema["file"].meaning
