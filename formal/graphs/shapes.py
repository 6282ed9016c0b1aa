"""How the receptive fields of each built-in pattern grow, in closed form: the shapes
:class:`~formal.graphs.structure.Structure` answers from.

A self-attention pattern is one of a few shapes — a band of keys around each query in one or δ classes of
positions (:class:`Band`: windows, dilated and strided windows, causal, full), a partition into blocks
(:class:`Blocks`: the fixed pattern's, Swin's windows), a causal window with global positions
(:class:`CausalHub`), patterns whose second layer reaches everything through a hub (:class:`FirstLayer`),
the fixed pattern's summary keys (:class:`Summaries`) — and each gives, with Python integers, the minimum,
total and maximum of the receptive-field sizes after any number of layers, the largest span of a field
(:meth:`Shape.span`), the layers to full coverage and the maximum path length.  :func:`shape_of` picks a
pattern's shape from its checked arguments.
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["Shape", "Band", "Blocks", "CausalHub", "FirstLayer", "Summaries", "shape_of", "sum_min"]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def sum_min(n: int, r: int) -> int:
    """``Σ_{i<n} min(i, r)`` for ``r ≥ 0``."""
    if n <= 0:
        return 0
    if r >= n - 1:
        return n * (n - 1) // 2
    return r * (r + 1) // 2 + r * (n - 1 - r)


# ------------------------------------------------------------------------------------------ the shapes
class Shape:
    """How a self-attention pattern's receptive fields grow: subclasses give :meth:`spread` (min, total,
    max of the sizes after ``L`` layers), :meth:`coverage` and :meth:`changed` (the last layer that changes
    a field: the maximum path length)."""

    ell: int
    causal: bool

    def spread(self, layers: int, residual: bool) -> tuple:
        raise NotImplementedError

    def span(self, layers: int) -> int:
        """The largest span of a receptive field after ``layers`` layers with the residual path: over the
        positions, the last input position the field holds minus the first, plus one — the positions between
        its ends, reached or not (a dilated window's field reaches every δ-th of its span)."""
        raise NotImplementedError

    def empty(self) -> int:
        """Queries with no key: the patterns with a self-loop at every position have none."""
        return 0

    def coverage(self, residual: bool):
        raise NotImplementedError

    def changed(self) -> int:
        raise NotImplementedError

    def _target(self) -> tuple:
        """(min, total, max) of the sizes at full coverage: every earlier position, or every position."""
        n = self.ell
        return (1, n * (n + 1) // 2, n) if self.causal else (n, n * n, n)


class Band(Shape):
    """Positions in ``classes`` residue classes (``q mod δ``); in its class, position ``i`` (its index there)
    sees the indices ``i − left … i + right``.  With a self-loop everywhere, the residual path changes
    nothing, and after ``L`` layers the field is the indices ``i − L·left … i + L·right``."""

    def __init__(self, ell, left, right, classes=1):
        self.ell, self.left, self.right, self.classes = ell, left, right, max(1, min(classes, ell or 1))
        n, r = divmod(ell, self.classes)
        self.groups = [(size, count) for size, count in ((n + 1, r), (n, self.classes - r)) if size and count]
        self.largest = max((size for size, _ in self.groups), default=0)
        self.causal = right == 0 or self.largest <= 1

    def spread(self, layers, residual):
        if not self.ell:
            return 0, 0, 0
        a, b = layers * self.left, layers * self.right
        least = min(min(n - 1, a, b) + 1 for n, _ in self.groups)        # at an end of its class
        most = max(min(n - 1, a + b) + 1 for n, _ in self.groups)
        total = sum(c * (sum_min(n, a) + sum_min(n, b) + n) for n, c in self.groups)
        return least, total, most

    def span(self, layers):
        if not self.ell:
            return 0
        return min(self.largest - 1, layers * (self.left + self.right)) * self.classes + 1

    def coverage(self, residual):
        if self.ell <= 1:
            return 0
        reach = [self.left] if self.causal else [self.left, self.right]
        if self.classes > 1 or min(reach) == 0:
            return None
        return _ceil_div(self.ell - 1, min(reach))

    def changed(self):
        steps = [d for d in (self.left, self.right) if d > 0]
        if self.largest <= 1 or not steps:
            return 0
        return max(_ceil_div(self.largest - 1, d) for d in steps)


class Blocks(Shape):
    """A partition into groups that see each other: every member (``causal=False``, Swin's windows) or the
    members at or before the query (the fixed pattern's blocks).  Groups are products of per-axis sizes,
    each axis a list of ``(size, count)``.  A group is closed, so one layer reaches all it ever will."""

    def __init__(self, axes, causal_inside=False):
        self.axes = [[(n, c) for n, c in axis if n and c] for axis in axes]
        self.ell = 1
        for axis in self.axes:
            self.ell *= sum(n * c for n, c in axis)
        self.groups = 1
        for axis in self.axes:
            self.groups *= sum(c for _, c in axis)
        self.largest = self._product(max)
        self.causal_inside = causal_inside
        self.causal = causal_inside or self.largest <= 1

    def _product(self, pick):
        value = 1
        for axis in self.axes:
            value *= pick((n for n, _ in axis), default=0)
        return value

    def spread(self, layers, residual):
        if not self.ell:
            return 0, 0, 0
        if layers == 0:
            return 1, self.ell, 1
        if self.causal_inside:                                            # one axis: 1 … n in a block of n
            (axis,) = self.axes
            return 1, sum(c * n * (n + 1) // 2 for n, c in axis), self.largest
        total = 1
        for axis in self.axes:
            total *= sum(c * n * n for n, c in axis)
        return self._product(min), total, self.largest

    def span(self, layers):
        """A group's first to last member, positions numbered row-major along the axes."""
        if not self.ell:
            return 0
        if layers == 0:
            return 1
        span = 1
        for axis in self.axes:
            width = sum(n * c for n, c in axis)
            span = (span - 1) * width + max((n for n, _ in axis), default=0)
        return span

    def coverage(self, residual):
        if self.ell <= 1:
            return 0
        return 1 if self.groups == 1 else None

    def changed(self):
        return int(self.largest >= 2)


class CausalHub(Shape):
    """Longformer's causal window ``q − a … q`` with ``g ≥ 1`` global positions first: after ``L`` layers
    the field of ``q`` is ``[0, min(g, q + 1))`` ∪ ``[q − La, q]`` (a global position sees only keys before
    it, so nothing travels further through it)."""

    causal = True

    def __init__(self, ell, a, g):
        self.ell, self.a, self.g = ell, a, g

    def spread(self, layers, residual):
        n, g = self.ell, self.g
        if not n:
            return 0, 0, 0
        if layers == 0:
            return 1, n, 1
        r = layers * self.a
        m = n - 1 - r                                                     # positions past the window's reach
        hub = 0 if m <= 0 else m * (m + 1) // 2 if m <= g else g * (g + 1) // 2 + g * (m - g)
        last = min(n - 1, r) + 1 + max(0, min(g, n - 1 - r))              # the sizes grow with q
        return 1, sum_min(n, r) + n + hub, last

    def span(self, layers):
        """Position 0 is global: every field after a layer runs from it to the query."""
        return min(self.ell, 1) if layers == 0 else self.ell

    def coverage(self, residual):
        if self.ell <= 1:
            return 0
        rest = self.ell - 1 - self.g                                     # positions the window must reach
        if rest <= 0:
            return 1
        return None if self.a == 0 else max(1, _ceil_div(rest, self.a))

    def changed(self):
        if self.ell <= 1:
            return 0
        return 1 if self.a == 0 else self.coverage(True)


class FirstLayer(Shape):
    """Patterns whose second layer reaches every position it ever will (through a hub): the first layer's
    field is the in-neighbourhood, whose sizes' (min, total, max) ``first`` gives in closed form; from the
    second on, every allowed position.

    Longformer's bidirectional window with global positions (each query sees a global position, which sees
    every key), and the Sparse Transformer's strided and fixed patterns with both heads (the strided keys
    ``q − js`` each bring their local window; the fixed pattern's summaries include the last position of every
    block, whose local window is the whole block)."""

    def __init__(self, ell, causal, first, first_span):
        self.ell, self.causal, self.first, self.first_span = ell, causal, first, first_span

    def spread(self, layers, residual):
        if not self.ell:
            return 0, 0, 0
        if layers == 0:
            return 1, self.ell, 1
        return self._target() if layers >= 2 else self.first()

    def span(self, layers):
        if not self.ell or layers == 0:
            return min(self.ell, 1)
        return self.ell if layers >= 2 else self.first_span

    def coverage(self, residual):
        if self.ell <= 1:
            return 0
        return 1 if self.first() == self._target() else 2

    def changed(self):
        return self.coverage(True)


def _floors(n: int, s: int) -> int:
    """``Σ_{q<n} ⌊q/s⌋``."""
    m, r = divmod(n, s)
    return s * m * (m - 1) // 2 + m * r


def _residues(n: int, s: int) -> int:
    """``Σ_{q<n} (q mod s)``."""
    m, r = divmod(n, s)
    return m * s * (s - 1) // 2 + r * (r - 1) // 2


def _triangle(m: int) -> int:
    """``1 + 2 + … + m`` (0 for m ≤ 0)."""
    return m * (m + 1) // 2 if m > 0 else 0


def _hub(m: int, g: int) -> int:
    """``Σ_{t=1}^{m} min(g, t)`` (0 for m ≤ 0)."""
    if m <= 0:
        return 0
    return _triangle(m) if m <= g else _triangle(g) + g * (m - g)


def _strided_first(ell, s):
    """Window ∪ strides: ``min(q, s) + ⌊q/s⌋ + 1 − [q ≥ s]`` keys (q and q − s are in both), growing with q."""
    def f(q):
        return min(q, s) + q // s + 1 - (q >= s)
    return lambda: (1, sum_min(ell, s) + _floors(ell, s) + ell - max(ell - s, 0), f(ell - 1))


def _fixed_first(ell, s, c):
    """Own block ∪ earlier summaries: ``(q mod s) + 1 + c⌊q/s⌋`` keys, largest at the end of a block."""
    def f(q):
        return q % s + 1 + c * (q // s)
    ends = [ell - 1] + ([ell // s * s - 1] if ell >= s else [])
    return lambda: (1, _residues(ell, s) + ell + c * _floors(ell, s), max(f(q) for q in ends))


def _strided_span(ell, s):
    """The first layer's largest span: query q < s sees 0 … q; q ≥ s reaches down to q mod s (its strided
    keys), largest at the last multiple of s."""
    return max(min(s, ell), s * ((ell - 1) // s) + 1) if ell else 0


def _fixed_span(ell, s, c):
    """The first layer's largest span: a query of the first block sees 0 … q; a later one reaches down to the
    first summary, s − c, largest at the last position."""
    return max(min(s, ell), ell - s + c if ell > s else 0) if ell else 0


def _global_first(ell, a, g):
    """A global query sees all ℓ keys; another its window (``a`` keys a side) and the g global positions left
    of it: a piecewise-linear size, whose extremes are at its corners."""
    def f(q):
        if q < g:
            return ell
        return min(q, a) + min(ell - 1 - q, a) + 1 + max(0, min(g, q - a))

    def first():
        corners = {q for q in (0, g, a, a + g, ell - 1 - a, ell - 1) if 0 <= q < ell}
        hub = _hub(ell - 1 - a, g) - _hub(g - 1 - a, g)                    # globals left of the window
        total = g * ell + sum_min(ell, a) - sum_min(g, a) + sum_min(ell - g, a) + (ell - g) + hub
        return min(map(f, corners)), total, max(map(f, corners))
    return first


class Summaries(Shape):
    """The fixed pattern's summary head alone: query ``q`` sees the summary positions ``k ≤ q``, those with
    ``k mod s ≥ s − c``; a summary sees the summaries before it, so after one layer nothing changes.  A
    position that is not a summary does not see itself: only the residual path adds it.  Both sizes grow
    with q, so their extremes are at the ends."""

    causal = True

    def __init__(self, ell, stride, summary):
        self.ell, self.summary = ell, summary
        self.s = min(stride, ell + 1)                                      # q mod s is q for any s > ℓ
        self.threshold = min(stride - summary, ell)                        # a summary: q mod s ≥ threshold

    def _count(self, q):
        """Summaries at or before q."""
        return self.summary * (q // self.s) + max(0, q % self.s - self.threshold + 1)

    def spread(self, layers, residual):
        n, s, th = self.ell, self.s, self.threshold
        if not n:
            return 0, 0, 0
        if layers == 0:
            return 1, n, 1
        m, r = divmod(n, s)
        total = self.summary * _floors(n, s) + m * _triangle(s - th) + _triangle(r - th)
        last = self._count(n - 1)
        if residual:                                                       # and itself, if not a summary
            return 1, total + n - last, last + ((n - 1) % s < th)
        return self._count(0), total, last

    def span(self, layers):
        """A field holds the summaries at or before the query and (the residual path) the query itself."""
        n = self.ell
        if not n or layers == 0:
            return min(n, 1)
        return n - self.threshold if n - 1 >= self.threshold else 1

    def empty(self):
        return self.threshold                                              # the first block before its summaries

    def coverage(self, residual):
        if self.ell <= 1:
            return 0
        return 1 if self.spread(1, residual) == self._target() else None

    def changed(self):
        return int(self.ell > 0 and self.spread(1, True) != (1, self.ell, 1))


# ------------------------------------------------------------------------------------ the shape of each
def _swin_axis(side, window, shift):
    """The sizes of the groups along one axis: windows of M, split at the border when shifted."""
    if shift is None:
        return [(window, side // window)]
    return [(shift, 1), (window, side // window - 1), (window - shift, 1)]


def shape_of(name, a) -> Shape | None:
    """The shape of a self-attention pattern from its checked arguments ``a`` (None: cross-attention)."""
    if name == "full":
        return Band(a["ell"], a["ell"], a["ell"])
    if name == "causal":
        return Band(a["ell_z"], a["ell_z"], 0) if a["ell_z"] == a["ell_x"] else None
    if name == "cross":
        return None
    if name == "swin":
        return Blocks([_swin_axis(a["height"], a["window"], a["shift"]),
                        _swin_axis(a["width"], a["window"], a["shift"])])
    ell = a["ell"]
    if name in ("sliding_window", "dilated", "global_local"):
        w = min(a["window"], max(ell, 1)) - 1                             # keys on each side, the query aside
        g = a.get("n_global", 0)
        if g:
            return CausalHub(ell, w, g) if a["causal"] else FirstLayer(ell, ell <= 1, _global_first(ell, w, g), ell)
        return Band(ell, w, 0 if a["causal"] else w, a.get("dilation", 1))
    if name == "strided":
        s = min(a["stride"], max(ell, 1))
        return {"local": lambda: Band(ell, s, 0), "stride": lambda: Band(ell, ell, 0, s),
                "both": lambda: FirstLayer(ell, True, _strided_first(ell, s), _strided_span(ell, s))}[a["part"]]()
    if name == "fixed":
        s, c = a["stride"], a["summary"]
        if a["part"] == "local":
            blocks, rest = divmod(ell, s)
            return Blocks([[(s, blocks), (rest, 1)]], causal_inside=True)
        if a["part"] == "summary":
            return Summaries(ell, s, c)
        return FirstLayer(ell, True, _fixed_first(ell, min(s, ell + 1), c), _fixed_span(ell, min(s, ell + 1), c))
    raise ConfigError(f"the {name!r} pattern has no structure to analyse; build it (formal.graphs.patterns)")
