"""What the graph code allocates, estimated before it allocates it: bytes per edge, per position, per layer.

Every step of :mod:`formal.graphs` that makes arrays growing with ``|E|`` or ``ℓ²`` — a pattern's edges, a
dense mask, a networkx graph, the bit sets of the layered analysis, the command's report — first passes
its estimate (a function below) to :func:`require`, which refuses the step with a one-line
:class:`~formal.errors.ResourceError` giving the estimate and the limit when it exceeds
:func:`formal.guards.limits.max_memory`.  Estimates are computed with Python integers from exact counts, so
``ℓ = 10**30`` is refused, never an overflow inside numpy.

**How the constants were measured.**  ``python benchmarks/bench_graphs.py --peaks`` runs each step under
tracemalloc (numpy reports every array it allocates to it) at ℓ = 1,024 … 32,768 with several parameter
choices — where the edges dominate and where the positions do — and prints the peak beyond what was held
before the step, beside the estimate.  Each constant is the largest measured ratio rounded up by about a
tenth; ``tests/graphs/test_limits.py`` checks that the estimates stay above the measured peaks.

Examples
--------
>>> number(1_000_000), number(10**40)
('1,000,000', '≈1.00e+40')
>>> build_bytes("full", edges=10**12, positions=10**6) > 2**40
True
"""

from __future__ import annotations

import math

from ..guards import limits
from ..guards.numbers import count_text as number

__all__ = ["require", "number", "build_bytes", "pairs_bytes", "mask_bytes", "networkx_bytes", "stack_bytes",
           "attention_bytes", "draw_bytes", "edgelist_bytes", "report_bytes"]

#: Peak bytes per edge while a built-in pattern is built, the 16 of the returned key and query included.
#: :func:`~formal.graphs.edges.ranges` holds about two more int64 per edge while it works (measured 34 for
#: full, causal, sliding and dilated windows); a bipartite causal or cross pattern is copied once more (49);
#: Swin sorts its tokens by window (43); a pattern of several parts (global + local, strided, fixed, random)
#: concatenates them and merges their duplicates with a sort (73 to 83).
BUILD_PER_EDGE = {"full": 40, "causal": 56, "cross": 56, "sliding_window": 40, "dilated": 40,
                  "global_local": 88, "strided": 96, "fixed": 96, "random": 96, "swin": 48}
#: Peak bytes per position while a pattern is built: window bounds, in-degrees, ``indptr`` (measured with one
#: edge per position, where they dominate: at most about 90 beyond the edges).
BUILD_PER_POSITION = 96
#: :func:`~formal.graphs.pattern.from_pairs`, beyond the arrays it is given: checking positions and order
#: (three booleans, the linear index and its steps), 16 more to copy arrays it does not own (measured 33 in
#: all); for edges not already in order, the sort: its order, the sorted copy, the result (measured 41 to
#: 57).  Per position: ``indptr`` and the in-degrees it is made from.
PAIRS_CHECK_PER_EDGE = 24
PAIRS_SORT_PER_EDGE = 80
PAIRS_PER_POSITION = 40
#: A pattern from a dense boolean mask: its nonzero entries as two int64 (measured 32).
MASK_PER_EDGE = 40
#: A networkx ``DiGraph``: an entry per edge in two adjacency dicts, a dict of attributes per node
#: (measured 180 to 305 per edge, the most for cross-attention's tuple nodes, and about 650 per node).
NETWORKX_PER_EDGE = 360
NETWORKX_PER_NODE = 800
#: The layered analysis' table of each query's runs of consecutive keys (at most 40 per edge: a flag, and
#: four int64 per run).
RUNS_PER_EDGE = 48
#: :func:`~formal.graphs.draw.mask_image`: the block of each edge and their linear index (measured 25).
DRAW_PER_EDGE = 40
#: Parsing an edge list, per byte of the file: the copy with comments blanked, the character classes,
#: each number's offsets, line and value (measured 26 on short lines, the densest file in numbers).
EDGELIST_PER_BYTE = 32
#: One row per layer of the command's report: its dict of five numbers, its line of text or JSON (measured
#: 530 to 560 per row).
REPORT_PER_LAYER = 800

_CEILING = 2**80   # estimates above 1 YiB are passed on as 1 YiB: formal.guards.limits formats them as floats


def require(nbytes, what: str) -> None:
    """:func:`formal.guards.limits.require`, for estimates of any size (Python ints beyond a float included)."""
    limits.require(min(int(math.ceil(nbytes)), _CEILING), what)


def build_bytes(name: str, *, edges: int, positions: int) -> int:
    """Building the built-in pattern ``name`` with ``edges`` edges over ``positions`` positions."""
    return BUILD_PER_EDGE[name] * edges + BUILD_PER_POSITION * positions


def pairs_bytes(edges: int, ell_x: int, *, sort: bool, owned: bool = False) -> int:
    """:func:`~formal.graphs.pattern.from_pairs` beyond its inputs: the checks, or the sort (``sort=True``)."""
    per_edge = PAIRS_SORT_PER_EDGE if sort else PAIRS_CHECK_PER_EDGE + 16 * (not owned)
    return per_edge * edges + PAIRS_PER_POSITION * (ell_x + 1)


def mask_bytes(ell_z: int, ell_x: int, *, edges: int = 0, copies: int = 1) -> int:
    """A dense ``ℓ_z×ℓ_x`` boolean mask (``copies`` of it at once) and, with ``edges``, the pattern made of it."""
    return copies * ell_z * ell_x + 8 * (ell_z + ell_x) + MASK_PER_EDGE * edges + PAIRS_PER_POSITION * (ell_x + 1)


def networkx_bytes(edges: int, nodes: int) -> int:
    """A networkx ``DiGraph`` with ``edges`` edges and ``nodes`` nodes, each with its attributes."""
    return NETWORKX_PER_EDGE * edges + NETWORKX_PER_NODE * nodes


def state_bytes(ell: int) -> int:
    """One bit-set state of the layered analysis: ``ℓ`` rows of ``⌈ℓ/64⌉`` words."""
    return ell * (-(-ell // 64)) * 8


def stack_bytes(ell: int, edges: int) -> int:
    """The layered analysis over ``ℓ`` positions: a step holds the state, its successor, a temporary and the
    table of ORs (a state per level, at most ``⌊log₂ ℓ⌋ + 1`` levels); the coverage target and the
    receptive-field mask are ℓ² booleans, unpacked twice; each pattern's table of runs."""
    return state_bytes(ell) * (max(ell.bit_length(), 1) + 4) + 2 * ell**2 + RUNS_PER_EDGE * edges


def attention_bytes(chunk: int, ell_z: int, ell_x: int, d_attn: int, d_v: int) -> int:
    """The vectorised executor in float64: per edge of a chunk its query and key rows, its value row and the
    weighted value, a few scalars; per token the transposed copies of Q, K, V and the result."""
    return 8 * (chunk * (2 * d_attn + 2 * d_v + 8) + (ell_z + ell_x) * (d_attn + d_v))


def draw_bytes(edges: int, positions: int) -> int:
    """The picture's mask image: per edge its block and their linear index, per position its block."""
    return DRAW_PER_EDGE * edges + 16 * positions


def edgelist_bytes(size: int) -> int:
    """Parsing an edge list of ``size`` bytes."""
    return EDGELIST_PER_BYTE * size


def report_bytes(layers: int) -> int:
    """The command's report with a row per layer for ``layers`` layers."""
    return REPORT_PER_LAYER * layers
