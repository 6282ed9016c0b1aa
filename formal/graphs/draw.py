"""Pictures of attention patterns (needs matplotlib: ``pip install 'formal-transformers[draw]'``).

:func:`draw` writes the pattern's mask as an image — keys ``t_z`` down, queries ``t_x`` across, the spec's
``Mask`` layout — and, for short sequences, the graph itself as an arc diagram: tokens on a line, an arc
from each key to each query that attends to it; for a token grid (Swin), the grid coloured by window.
Long sequences are shown as the density of admitted pairs per block of the mask, so the picture is never
ℓ² pixels.  The path is checked before any work (:func:`check_picture`) and the picture written atomically:
to a temporary file beside it, then renamed, so a failed run leaves no partial file.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ..errors import ConfigError
from ..guards import files
from . import memory
from .pattern import as_pattern

__all__ = ["draw", "check_picture", "mask_image", "ARC_LIMIT", "PIXELS"]

ARC_LIMIT = 48   # positions up to which the arc diagram is drawn beside the mask
PIXELS = 512     # the mask image's largest side; longer sequences are shown per block


def mask_image(pattern, pixels: int = PIXELS) -> np.ndarray:
    """The mask (ℓ_z×ℓ_x) as floats in [0, 1]; above ``pixels`` positions, the fraction of admitted pairs in
    each block, computed from the edges (no ℓ² array)."""
    p = as_pattern(pattern)
    memory.require(memory.draw_bytes(p.n_edges, p.ell_z + p.ell_x), f"the picture of {p!r}")
    rows, cols = min(p.ell_z, pixels), min(p.ell_x, pixels)
    r = p.keys * rows // max(p.ell_z, 1)                                  # block of each edge
    c = p.queries * cols // max(p.ell_x, 1)
    hits = np.bincount(r * cols + c, minlength=rows * cols).reshape(rows, cols)
    size_r = np.bincount(np.arange(p.ell_z) * rows // max(p.ell_z, 1), minlength=rows)
    size_c = np.bincount(np.arange(p.ell_x) * cols // max(p.ell_x, 1), minlength=cols)
    return hits / np.maximum(np.outer(size_r, size_c), 1)


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ConfigError("drawing needs matplotlib: pip install 'formal-transformers[draw]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _arcs(ax, p):
    """Tokens on a line; an arc above the line for each edge k → q (a loop mark for k = q)."""
    from matplotlib.patches import Arc
    if p.self_attention:
        keys_y = queries_y = 0.0
    else:
        keys_y, queries_y = 0.0, 1.0
    for k, q in zip(p.keys.tolist(), p.queries.tolist()):
        if p.self_attention and k != q:
            centre, width = (k + q) / 2, abs(q - k)
            ax.add_patch(Arc((centre, 0), width, width * 0.8, theta1=0 if q > k else 180,
                             theta2=180 if q > k else 360, lw=0.6, alpha=0.5,
                             color="tab:blue" if q > k else "tab:orange"))
        elif not p.self_attention:
            ax.plot([k, q], [keys_y, queries_y], lw=0.5, alpha=0.4, color="tab:blue")
    loops = p.keys[p.keys == p.queries] if p.self_attention else np.array([], dtype=int)
    ax.scatter(np.arange(p.ell_z), np.full(p.ell_z, keys_y), s=14, color="black", zorder=3)
    if not p.self_attention:
        ax.scatter(np.arange(p.ell_x), np.full(p.ell_x, queries_y), s=14, color="tab:red", zorder=3)
        ax.set_yticks([keys_y, queries_y], ["keys (Z)", "queries (X)"])
    else:
        ax.scatter(loops, np.zeros(loops.size), s=40, facecolors="none", edgecolors="tab:green", zorder=4,
                   label="attends to itself")
        widest = int(np.abs(p.queries - p.keys).max(initial=1))
        span = 0.4 * widest + 0.5                                         # an arc over w positions is 0.8·w tall
        ax.set_ylim(-span, span)
        ax.set_yticks([])
        ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.set_xlim(-1, max(p.ell_z, p.ell_x))
    ax.set_xlabel("position (arcs above: from an earlier key; below: from a later key)" if p.self_attention
                  else "position")
    ax.set_title("as a graph: key → query", fontsize=9)


def _grid(ax, p):
    """A token grid (Swin): each token coloured by the window it attends within.  A window is a clique, so
    its smallest key (each query's first) names it; windows are numbered in the order of those keys, as the
    graph's components are found.  Grids wider than PIXELS are shown one token in every few."""
    height, width = p.params["height"], p.params["width"]
    smallest = np.where(p.in_degree > 0, p.keys[np.minimum(p.indptr[:-1], max(p.n_edges - 1, 0))], -1)
    label = np.unique(smallest, return_inverse=True)[1].reshape(height, width)
    step_y, step_x = -(-height // PIXELS), -(-width // PIXELS)
    ax.imshow(label[::step_y, ::step_x] % 20, cmap="tab20", vmin=0, vmax=19, interpolation="nearest",
              extent=(-0.5, width - 0.5, height - 0.5, -0.5))
    if height * width <= 256:
        for t in range(p.ell_x):
            ax.text(t % width, t // width, str(t), ha="center", va="center", fontsize=6)
    ax.set_xlabel("grid column")
    ax.set_ylabel("grid row")
    ax.set_title(f"token grid {height}×{width}: colour = the window a token attends within", fontsize=9)


def check_picture(path) -> tuple:
    """``(folder, format)`` of a picture to write at ``path``, checked before any work: the folder exists and
    can be written, the path is not a directory or a special file (:func:`formal.guards.files.destination`), and
    matplotlib can write its suffix (no suffix: PNG).  A ConfigError otherwise."""
    folder = files.destination(path, what="picture")                     # first: no import for a bad path
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase
    suffix = os.path.splitext(os.fspath(path))[1][1:].lower() or "png"
    known = FigureCanvasBase.get_supported_filetypes()
    if suffix not in known:
        raise ConfigError(f"cannot write the picture {os.fspath(path)!r}: matplotlib does not write .{suffix} "
                          f"files (known: {', '.join(sorted(known))})")
    return folder, suffix


def draw(pattern, path, *, title: str | None = None) -> None:
    """Write a PNG (or any format matplotlib knows from ``path``'s suffix) of ``pattern``, atomically."""
    folder, suffix = check_picture(path)
    plt = _pyplot()
    p = as_pattern(pattern)
    grid = p.self_attention and {"height", "width"} <= set(p.params)
    arcs = not grid and max(p.ell_z, p.ell_x) <= ARC_LIMIT
    fig, axes = plt.subplots(1, 2 if arcs or grid else 1, figsize=(11 if arcs or grid else 6, 5.2), squeeze=False)
    ax = axes[0, 0]
    image = mask_image(p)
    blocked = image.shape != (p.ell_z, p.ell_x)
    shown = ax.imshow(image, cmap="Greys", vmin=0, vmax=1, interpolation="nearest", aspect="auto",
                      extent=(-0.5, p.ell_x - 0.5, p.ell_z - 0.5, -0.5))
    ax.set_xlabel("query position t_x")
    ax.set_ylabel("key position t_z")
    ax.set_title("Mask[t_z, t_x]" + (" (fraction admitted per block)" if blocked else " (black: attends)"),
                 fontsize=9)
    if blocked:
        fig.colorbar(shown, ax=ax, fraction=0.046)
    if arcs:
        _arcs(axes[0, 1], p)
    elif grid:
        _grid(axes[0, 1], p)
    from matplotlib.ticker import MaxNLocator
    for axis in (ax.xaxis, ax.yaxis, axes[0, -1].xaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title or repr(p), fontsize=10)
    fig.tight_layout()
    try:
        _save(fig, path, folder, suffix)
    finally:
        plt.close(fig)


def _save(fig, path, folder, suffix):
    """Save to a temporary file beside ``path`` (the suffix kept for matplotlib), then rename it over ``path``."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".formal-", suffix="." + suffix)
        os.close(fd)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)                                     # as open() would have made it
    except OSError as exc:
        raise ConfigError(f"cannot write the picture to {os.fspath(path)!r}: {exc.strerror}") from None
    try:
        fig.savefig(tmp, dpi=120, format=suffix)
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot write the picture to {os.fspath(path)!r}: {exc}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
