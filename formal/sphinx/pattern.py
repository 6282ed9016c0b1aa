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
            return self.fail(f"formal:pattern {name}: {error}{_parameters_of(name)}")
        out = self.target(name, [f"{name} (attention pattern)"])
        out.append(build.para(nodes.strong(text=f"{name}: "), _pattern_doc(spec)))
        given = ", ".join(f"{k} = {v}" for k, v in args.items() if k != "file")
        fields = [("Built with", [nodes.literal(text=given or "its defaults"), nodes.Text(
            f": ℓ_z × ℓ_x = {figures['ell_z']:,} × {figures['ell_x']:,} (keys × queries)")])]
        out.append(build.field_list(fields))
        figure = nodes.container(classes=["formal-mask-figure"])
        figure += nodes.raw("", _mask_svg(pattern), format="html")
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
    from ..errors import FormalError
    from ..graphs.schema import schema_of
    try:
        schema = schema_of(name)
    except FormalError:     # an unknown pattern: its error lists the known ones
        return ""
    described = [f"{p.name} ({'required' if p.required else 'default ' + repr(p.default)})"
                 for p in schema.parameters if p.role != "report"]
    return f"; its parameters (:args: KEY=VALUE, …): {', '.join(described)}"


def _pattern_doc(spec) -> str:
    """What a pattern is, in a line: the built-in pattern's own words, or the edge list's parameter."""
    from ..graphs.patterns import PATTERNS
    kind = PATTERNS.get(spec.schema.builder)
    return kind.doc if kind is not None else spec.schema["file"].meaning


#: The picture's side in pixels (about): small masks get big cells, large ones small cells.
SIDE = 320


def _mask_svg(pattern, most: int = 64) -> str:
    """The mask as an SVG picture in the paper's layout — a key (context position t_z) per row, a query t_x per
    column, a filled cell where the query sees the key — with its axes labelled, at most ``most`` of each."""
    rows, cols = min(pattern.ell_z, most), min(pattern.ell_x, most)
    cell = max(4, min(24, SIDE // max(rows, cols)))
    left, top = 56, 40                       # room for the axes' labels
    on = {(int(k), int(q)) for k, q in zip(pattern.keys, pattern.queries) if k < rows and q < cols}
    rects = [f'<rect class="{"on" if (k, q) in on else "off"}" x="{left + q * cell}" y="{top + k * cell}" '
             f'width="{cell - 1}" height="{cell - 1}"/>' for k in range(rows) for q in range(cols)]
    shown = "" if (rows, cols) == (pattern.ell_z, pattern.ell_x) else f" (the first {rows}×{cols})"
    title = (f"mask of {pattern.name}{shown}: Mask[t_z, t_x], a key t_z per row, a query t_x per column; "
             "filled where the query sees the key")
    width, height = left + cols * cell + 8, top + rows * cell + 8
    labels = [f'<text x="{left}" y="14" class="axis">queries t_x → (1 … {pattern.ell_x})</text>',
              f'<text x="14" y="{top}" class="axis" transform="rotate(90 14 {top})">keys t_z → (1 … '
              f'{pattern.ell_z})</text>',
              f'<text x="{left - 4}" y="{top + cell - 2}" class="tick" text-anchor="end">1</text>',
              f'<text x="{left + 1}" y="{top - 4}" class="tick">1</text>']
    return (f'<svg class="formal-mask" role="img" aria-label="{title}" width="{width}" height="{height}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{title}</title>{"".join(labels)}{"".join(rects)}</svg>')
