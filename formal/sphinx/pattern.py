"""``.. formal:pattern::`` — an attention pattern's mask as a picture, its edge count and its analysis."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives

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
