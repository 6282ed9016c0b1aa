"""How an algorithm displays in a notebook (Jupyter, IPython): its numbered pseudocode with the shape and cost of
each line — the same :class:`View` ``show`` and the docs render; the math is LaTeX, which the notebook typesets.
``import formal`` registers these with IPython's display formatters (:func:`register`) by class name, so the
algorithm module does not import this renderer, which imports it.  (A cost shows its formulas, and a pattern a
picture of its mask, through their own ``_repr_latex_`` and ``_repr_svg_``.)"""

from __future__ import annotations

from html import escape

__all__ = ["algorithm_html", "algorithm_latex", "register"]


def algorithm_html(algorithm, convention: str = "matmul") -> str:
    """The algorithm as an HTML table: its heading and summary, then one row per line (number, the line, its
    shape, its FLOPs under ``convention``), then the totals; each formula ``$…$`` for the notebook to typeset."""
    from .render import view
    v = view(algorithm)
    rows = "".join(
        f'<tr><td style="text-align:right">{line.number}</td>'
        f'<td style="text-align:left">${_indented(line)}$</td>'
        f'<td style="text-align:left">{"$" + line.shape_latex + "$" if line.shape_latex else ""}</td>'
        f'<td style="text-align:left">${line.flops_latex[convention]}$</td></tr>' for line in v.lines)
    totals = v.totals[convention]
    summary = "".join(f'<tr><th style="text-align:left">{escape(name)}</th><td style="text-align:left" colspan="3">'
                      f"${totals[key]}$</td></tr>"
                      for name, key in (("parameters", "params"), (f"FLOPs ({convention})", "flops"),
                                        ("memory", "memory"), ("depth", "depth")))
    return (f'<div class="formal-algorithm"><p><b>{escape(v.heading)}:</b> ${v.header_latex}$</p>'
            f"<p>{escape(v.summary)}</p><table><thead><tr><th>#</th><th>line</th><th>shape</th>"
            f"<th>FLOPs ({escape(convention)})</th></tr></thead><tbody>{rows}{summary}</tbody></table></div>")


def algorithm_latex(algorithm) -> str:
    """The numbered lines as one displayed array (``$$…$$``), for frontends that take LaTeX only."""
    from .render import view
    v = view(algorithm)
    lines = r" \\ ".join(f"{line.number} & {_indented(line)}" for line in v.lines)
    return rf"$$\begin{{array}}{{rl}} \multicolumn{{2}}{{l}}{{{v.header_latex}}} \\ {lines} \end{{array}}$$"


def _indented(line) -> str:
    """A line's LaTeX as the pseudocode sets it: indented by its loop level, a loop's header in bold."""
    code = rf"\textbf{{for}}\ {line.latex}:" if line.loop else line.latex
    return QUAD * line.level + code


QUAD = r"\quad "


def register(shell) -> None:
    """Show :class:`~formal.engine.algorithm.Algorithm` objects in ``shell`` (an IPython shell) as HTML and LaTeX."""
    formatters = shell.display_formatter.formatters
    formatters["text/html"].for_type_by_name("formal.engine.algorithm", "Algorithm", algorithm_html)
    formatters["text/latex"].for_type_by_name("formal.engine.algorithm", "Algorithm", algorithm_latex)
