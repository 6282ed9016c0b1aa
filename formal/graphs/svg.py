"""A pattern's mask as an SVG picture, in the paper's layout — what the docs' pattern entries and a notebook
(``Pattern._repr_svg_``) show.  Plain text, no drawing library."""

from __future__ import annotations

from html import escape

__all__ = ["mask_svg", "SIDE"]

#: The picture's side in pixels (about): small masks get big cells, large ones small cells.
SIDE = 320


def mask_svg(pattern, *, most: int = 64) -> str:
    """``pattern``'s mask as an SVG picture: a key (context position t_z) per row, a query t_x per column, a
    filled cell where the query sees the key, the axes labelled; at most ``most`` of each."""
    rows, cols = min(pattern.ell_z, most), min(pattern.ell_x, most)
    cell = max(4, min(24, SIDE // max(rows, cols)))
    left, top = 56, 40                       # room for the axes' labels
    on = {(int(k), int(q)) for k, q in zip(pattern.keys, pattern.queries) if k < rows and q < cols}
    rects = [f'<rect class="{"on" if (k, q) in on else "off"}" x="{left + q * cell}" y="{top + k * cell}" '
             f'width="{cell - 1}" height="{cell - 1}" fill="{"#2a6fdb" if (k, q) in on else "#eef1f6"}"/>'
             for k in range(rows) for q in range(cols)]
    shown = "" if (rows, cols) == (pattern.ell_z, pattern.ell_x) else f" (the first {rows}×{cols})"
    title = escape(f"mask of {pattern.name}{shown}: Mask[t_z, t_x], a key t_z per row, a query t_x per column; "
                   "filled where the query sees the key")
    width, height = left + cols * cell + 8, top + rows * cell + 8
    style = 'font-family="sans-serif" font-size="12" fill="#555"'
    labels = [f'<text x="{left}" y="14" {style}>queries t_x → (1 … {pattern.ell_x})</text>',
              f'<text x="14" y="{top}" {style} transform="rotate(90 14 {top})">keys t_z → (1 … '
              f'{pattern.ell_z})</text>',
              f'<text x="{left - 4}" y="{top + cell - 2}" {style} text-anchor="end">1</text>',
              f'<text x="{left + 1}" y="{top - 4}" {style}>1</text>']
    return (f'<svg class="formal-mask" role="img" aria-label="{title}" width="{width}" height="{height}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{title}</title>{"".join(labels)}{"".join(rects)}</svg>')
