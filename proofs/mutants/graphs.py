"""Realistic bugs in the attention patterns' builders and in the graph analysis, each planted in a fresh process,
with the graph theorems (:mod:`proofs.graphs`) it makes false."""

from __future__ import annotations

from .entry import SpecMutant, patch

__all__ = ["MUTANTS"]


def _window_one_wider():
    """The window's bounds written ``q − w ≤ k ≤ q``: w + 1 keys per query (the query and w before it)."""
    import numpy as np

    from formal.graphs import windows

    def window_span(ell, window, causal):
        q = np.arange(ell, dtype=np.int64)
        start = np.maximum(q - window, 0)
        stop = q + 1 if causal else np.minimum(q + window + 1, ell)
        return start, stop
    patch(windows, "window_span", window_span)


def _causal_strict():
    """The causal pattern built with ``t_z < t_x`` (each query's stop one short): a query does not see itself."""
    import numpy as np

    from formal.graphs import building, edges, patterns

    def causal(ell_z, ell_x=None, *, align=None):
        ell_z, ell_x, align = patterns._causal_args(ell_z, ell_x, align=align).values()
        shift = patterns.masks.causal_shift(ell_z, ell_x, align)
        stops = np.clip(np.arange(ell_x, dtype=np.int64) + shift, 0, ell_z)
        keys, queries = edges.ranges(np.zeros(ell_x, np.int64), stops)
        if ell_z == ell_x:
            return building.self_pattern(keys, queries, ell_z, "causal", {})
        return patterns.from_pairs(keys, queries, ell_z=ell_z, ell_x=ell_x, self_attention=False, name="causal",
                                   params={"align": align})
    patch(patterns, "causal", causal)


def _or_table_shifted():
    """The receptive-field walk's sparse table of ORs built the wrong way round: ``table[j, i]`` holds rows
    ``i − 2^j + 1 … i`` instead of ``i … i + 2^j − 1``, so a run of keys reaches positions before it."""
    from formal.graphs import layered

    def range_or_table(bits, longest):
        import numpy as np
        table = np.empty((max(int(longest).bit_length(), 1), *bits.shape), dtype=bits.dtype)
        table[0] = bits
        for j in range(1, table.shape[0]):
            half = 2 ** (j - 1)
            table[j] = table[j - 1]
            table[j, half:] |= table[j - 1, :-half]
        return table
    patch(layered, "_range_or_table", range_or_table)


def _path_length_counts_quiet_layer():
    """The maximum path length read as the last layer the walk took (the quiet layer that found the fixed point
    included), not the last layer that changed a field."""
    from formal.graphs import layered

    def max_path_length(patterns, *, progress=None):
        return layered._walk(layered._Stack(patterns), 0, True, settle=True, progress=progress).last
    patch(layered, "max_path_length", max_path_length)


def _dilated_inclusive():
    """The dilated window's offsets ``0, δ, …, wδ`` (the range written inclusive): w + 1 keys per query."""
    import numpy as np

    from formal.graphs import patterns, windows

    def dilated(ell, window, dilation, *, causal=True):
        ell, window, dilation, causal = windows._dilated_args(ell, window, dilation, causal=causal).values()
        reach = (ell - 1) // dilation + 1 if ell else 1
        steps = -min(dilation, max(ell, 1)) * np.arange(min(window, reach), -1, -1)
        distances = steps if causal else np.concatenate((steps, -steps[-2::-1]))
        return windows.self_pattern(*windows.offsets(ell, distances), ell, "dilated",
                                    {"window": window, "dilation": dilation, "causal": causal})
    patch(patterns, "dilated", dilated)


def _swin_always_shifted():
    """Swin's default shift ⌊M/2⌋ applied whether or not shifted windows are asked for: plain window attention
    is built with shifted windows."""
    from formal.graphs import windows
    checked = windows._swin_args

    def swin_args(height, width, window, *, shifted=False, shift=None):
        args = checked(height, width, window, shifted=shifted, shift=shift)
        return {**args, "shift": args["window"] // 2 if args["shift"] is None else args["shift"]}
    patch(windows, "_swin_args", swin_args)


MUTANTS = (
    SpecMutant("sliding-window-one-wider", "the sliding window admits q − w ≤ k ≤ q: w + 1 keys per query",
               ("sliding-window-edge-count",), "pattern builder", _window_one_wider),
    SpecMutant("causal-pattern-strict", "the causal builder stops each query's keys one short (t_z < t_x): no "
               "query sees itself", ("causal-edge-count",), "pattern builder", _causal_strict),
    SpecMutant("receptive-field-table-reversed", "the receptive-field walk's table of ORs covers the rows before "
               "each position instead of after it", ("window-receptive-field",), "pattern builder",
               _or_table_shifted),
    SpecMutant("path-length-counts-quiet-layer", "the maximum path length is the last layer walked, the quiet one "
               "that finds the fixed point included", ("table1-path-lengths",), "pattern builder",
               _path_length_counts_quiet_layer),
    SpecMutant("dilated-window-inclusive", "the dilated window's offsets run 0, δ, …, wδ: w + 1 keys per query",
               ("sparse-edge-counts",), "pattern builder", _dilated_inclusive),
    SpecMutant("swin-always-shifted", "Swin's default shift ⌊M/2⌋ is applied when shifted windows are not asked "
               "for", ("swin-edge-count",), "pattern builder", _swin_always_shifted),
)
