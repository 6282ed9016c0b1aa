"""The sizes of an example: drawn for every symbol an algorithm uses, then mended until every constraint it
states holds — its own and those of the algorithms it calls (``Algorithm.size_constraints``: ``d_e`` even
under sinusoidal positions, ``n_kv_heads | H``, ``ℓ ≤ ℓ_max``, ``2 ≤ d_e`` under layer norm with eps = 0) —
so a new constraint is honoured without this module knowing it; and the boundary cases, as sizes to pin.
"""

from __future__ import annotations

import math

import sympy as sp

from ..errors import ConfigError
from .profiles import MAX_SIZE

__all__ = ["evaluate", "evaluate_shape", "draw_sizes", "mend_sizes", "boundary_cases", "largest_cases", "largest_pins",
           "LENGTHS", "LAYERS", "RUN_SIZES", "LARGE_SCORES", "MAX_SIZE"]

LENGTHS = ("ell", "ell_x", "ell_z", "T", "ell_c")
_WIDTHS = ("d_x", "d_z", "d_in", "d_out", "d_attn", "d_mid", "d_mlp", "d_f", "d_patch", "d_e", "d_a")
#: The boundary case whose softmax inputs reach far past 709, where exp overflows in float64.
LARGE_SCORES = "scores past exp's range (|s| ≫ 709)"
LAYERS = ("L", "L_enc", "L_dec", "L_1", "L_2", "L_3", "L_4")
RUN_SIZES = ("ell_out", "n_steps")  # bound by the run itself (eos may come early): never drawn
#: At their largest in cases of their own: S heads each S wide would cost S times a width case; blocks of S
#: tokens leave one block of a cache of S (n_b = ⌈ℓ_c/B⌉ reaches S where B = 1, in the width case); an image of
#: S×S patches each S pixels wide, in S channels, is S⁵ numbers (10⁹ at S = 65), and S patch pixels beside S
#: heads make Swin's last stage 8·S wide: the patch side goes with the layers.
_COUNTS = ("H", "block")
_DEPTHS = LAYERS + ("patch",)
_WIDEST = 24   # widths stop growing here: width bugs show by then, and a model's cost grows with its square
_MIN_STACK_WIDTH = 4  # in a stack, d_e = 2 makes layer norm map every column to ±γ + β: bugs before it vanish


def evaluate(expr, sizes: dict) -> int:
    """A derived size, count or cost (a sympy expression) at sizes given by symbol name."""
    expr = sp.sympify(expr)
    return int(expr.xreplace({s: sizes[str(s)] for s in expr.free_symbols}))


def evaluate_shape(shape, sizes) -> tuple:
    """A shape (sympy expressions) at sizes given by symbol name."""
    return tuple(evaluate(d, sizes) for d in shape)


def draw_sizes(algorithm, symbols, rng, cap) -> dict:
    """Sizes for ``symbols`` at most ``cap`` (widths at most ``_WIDEST``), before the constraints."""
    def draw(lo, hi):
        return int(rng.integers(lo, max(lo, hi) + 1))
    stack = algorithm.is_model
    s = {}
    for k in sorted(symbols):  # a fixed order: the same seed gives the same sizes in every process
        if k in LENGTHS:
            s[k] = draw(1, cap)
        elif k in _WIDTHS:
            lo = _MIN_STACK_WIDTH if stack and k in ("d_e", "d_f") else 2
            s[k] = draw(lo, min(cap, _WIDEST))
        elif k in LAYERS:
            s[k] = draw(1, min(3, cap))
        elif k == "H":
            s[k] = draw(1, min(4, cap))
        elif k == "N_V":
            s[k] = draw(4, 4 + min(cap, _WIDEST))  # the last three ids are mask, bos and eos
        elif k == "n_types":
            s[k] = draw(1, 3)
        elif k == "n_classes":
            s[k] = draw(2, 4)
        elif k == "ell_gen":
            s[k] = draw(1, min(4, cap))
        elif k != "ell_max":
            s[k] = draw(1, min(cap, _WIDEST))
    if "L_1" in symbols:   # Swin: the grid is 8·M·k (three halvings, whole windows): keep M, P and k small, and
        # the heads (2^{i−1}·H in stage i) and the depths (pairs) few — a whole Swin runs window by window
        s.update(swin_window=draw(1, 2), patch=draw(1, 2), height=draw(1, min(cap, 8)), width=draw(1, min(cap, 8)),
                 H=draw(1, 2), **{f"L_{i}": 2 for i in range(1, 5)})
    elif "swin_window" in symbols:   # windows of 2 or 3 more often than 1, and grids of several: σ > 0
        s["swin_window"] = (1, 2, 2, 3, 3)[draw(0, 4)]
        for side in ("height", "width"):
            s[side] = s["swin_window"] * draw(1, max(1, min(3, cap // s["swin_window"])))
    if "ell_max" in symbols:
        s["ell_max"] = max([s[k] for k in LENGTHS if k in s] + [1]) + draw(0, 1)
    return s


def _adjustable(expr, pinned):
    return isinstance(expr, sp.Symbol) and str(expr) not in pinned


def _scaled_symbol(expr):
    """``(s, c)`` for an expression ``c·s`` (one symbol, a rational c: ``n_h/2``), else None."""
    coefficient, rest = sp.sympify(expr).as_coeff_Mul()
    return (rest, sp.Rational(coefficient)) if isinstance(rest, sp.Symbol) and coefficient.is_Rational else None


def _raise_linear(sizes: dict, expr, divisor: int, pinned) -> bool:
    """Raise one size that ``expr`` is linear in (``d_x`` of ``d_x/H`` or of ``d_x − 10``; an unpinned one first,
    then by name) to the least value at which ``expr`` is a positive multiple of ``divisor``, the other sizes as
    they are.  False where no size is linear in it, or no value within a period does."""
    expr = sp.sympify(expr)
    linear = [s for s in sorted(expr.free_symbols, key=lambda s: (str(s) in pinned, str(s)))
              if sp.degree(sp.numer(sp.together(expr)), s) == 1 and s not in sp.denom(sp.together(expr)).free_symbols]
    for symbol in linear:
        others = {s: sp.Integer(sizes[str(s)]) for s in expr.free_symbols if s != symbol}
        at = sp.expand(expr.xreplace(others))
        slope, rest = at.coeff(symbol, 1), at.coeff(symbol, 0)
        if not (slope.is_Rational and rest.is_Rational and slope > 0):
            continue
        period = divisor * slope.q * rest.q
        start = max(sizes[str(symbol)], int(sp.floor(-rest / slope)) + 1)      # where expr is positive
        for value in range(start, start + period + 1):
            got = slope * value + rest
            if got > 0 and got.is_integer and int(got) % divisor == 0:
                sizes[str(symbol)] = value
                return True
    return False


def _raise_any(sizes: dict, constraint, pinned, steps: int = 64) -> bool:
    """Raise one size the ``constraint`` reads (an unpinned one first, then by name) by the least step, up to
    ``steps``, at which it holds, the other sizes as they are: the last resort for a side no rule above solves."""
    for symbol in sorted(constraint.symbols, key=lambda s: (str(s) in pinned, str(s))):
        start = sizes[str(symbol)]
        for value in range(start + 1, start + steps + 1):
            trial = {s: (value if s == symbol else sizes[str(s)]) for s in constraint.symbols}
            if constraint.holds(trial):
                sizes[str(symbol)] = value
                return True
    return False


def mend_sizes(algorithm, sizes: dict, pinned=frozenset(), *, constraints=None) -> dict:
    """Raise sizes until every size constraint of ``algorithm`` holds (``a ≤ b``: raise b, or lower a;
    ``a | b``: raise b to a multiple of a).  Pinned sizes move only when nothing else can.  A block table
    has the blocks its cache needs, n_b = ⌈ℓ_c/B⌉ (two constraints no single move satisfies).
    ``constraints`` replaces the algorithm's (tied sizes: its constraints in the free sizes, and what the
    ties need, :class:`.ties.Ties`)."""
    stated = algorithm.size_constraints if constraints is None else constraints
    constraints = [c for c in stated if all(str(s) in sizes for s in c.symbols)]
    for _ in range(10 * len(constraints) + 1):
        if {"n_blocks", "block", "ell_c"} <= set(sizes):      # again after a move that raised ℓ_c
            sizes["n_blocks"] = -(-sizes["ell_c"] // sizes["block"])
        broken = [c for c in constraints if not c.holds({s: sizes[str(s)] for s in c.symbols})]
        if not broken:
            return sizes
        for c in broken:
            a, b = c.args
            va, vb = evaluate(a, sizes), evaluate(b, sizes)
            if c.relation == "<=":
                if _adjustable(b, pinned) or not _adjustable(a, pinned) and isinstance(b, sp.Symbol):
                    sizes[str(b)] = va
                elif isinstance(a, sp.Symbol):
                    sizes[str(a)] = max(1, sizes[str(a)] - (va - vb))
                else:  # a sum: lower its first adjustable term
                    term = next((t for t in sp.Add.make_args(a) if _adjustable(t, pinned)), None)
                    if term is None:
                        break
                    sizes[str(term)] = max(1, sizes[str(term)] - (va - vb))
            elif c.relation == "divides" and isinstance(b, sp.Symbol):
                sizes[str(b)] = va * -(-vb // va)   # exact: a float quotient of large sizes rounds
            elif c.relation == "divides" and _scaled_symbol(b):   # a | s·p/q (Swin's M | n_h/2): a step of s
                symbol, coefficient = _scaled_symbol(b)
                p, q = coefficient.p, coefficient.q
                step = va * q // math.gcd(va * q, p)
                sizes[str(symbol)] = step * -(-sizes[str(symbol)] // step)
            elif c.relation == "divides" and (_raise_linear(sizes, b, va, pinned)      # 2 | d_x/H, 4 | d_x − 10
                                              or _raise_any(sizes, c, pinned)):          # 2 | d_x⁶⁴
                pass
            else:
                break
    broken = [c for c in constraints if not c.holds({s: sizes[str(s)] for s in c.symbols})]
    if broken:
        raise ConfigError(f"no sizes satisfy {algorithm.label}'s constraint {broken[0].text} "
                          f"({broken[0].explain({s: sizes[str(s)] for s in broken[0].symbols})})")
    return sizes


# ---------------------------------------------------------------------------------------- boundary cases
def boundary_cases(algorithm, max_size: int) -> list:
    """The boundary cases of ``algorithm``'s sizes, as ``(label, pins)``: ``pins`` maps symbol names to
    values (``"full"`` for ``ell_max``: the longest sequence's length, or as much more as the constraints
    ask, so that the context is full); ``"large"`` scales the parameters that make a softmax's input
    (:func:`formal.sampling.softmaxes.scaled_params`); ``"cross"`` in pins asks for a context Z of its
    own, ``"empty"`` for a mask with a query column that admits no key."""
    have = {str(s) for s in algorithm.symbols}
    lengths = [k for k in LENGTHS if k in have and k != "ell_c"]
    layers = [k for k in LAYERS if k in have]
    cases = []
    if lengths:
        cases.append(("every sequence of length 1", {k: 1 for k in lengths}))
    if "ell_max" in have and lengths:
        cases.append(("ℓ = ℓ_max (the context full)", {"ell_max": "full"}))
    if {"ell_x", "ell_z"} <= have:
        cases += [("ℓ_z > ℓ_x", {"ell_x": 2, "ell_z": 5, "cross": True}),
                  ("ℓ_z < ℓ_x", {"ell_x": 5, "ell_z": 2, "cross": True})]
    if any(spec.kind == "mask" for spec in algorithm.inputs):
        cases.append(("a query with no admitted key", {"empty": True, **{k: 4 for k in lengths}}))
    if "H" in have or layers:
        cases.append(("one head, one layer", {**({"H": 1} if "H" in have else {}), **{k: 1 for k in layers}}))
        cases.append(("several heads and layers", {**({"H": 3} if "H" in have else {}), **{k: 2 for k in layers}}))
    from .softmaxes import scaled_params
    if scaled_params(algorithm):   # a softmax that does not subtract the maximum overflows here
        cases.append((LARGE_SCORES, {"large": True, **{k: 4 for k in lengths}}))
    power = 2
    while lengths and power + 1 <= max_size:
        full = {"ell_max": "full"} if "ell_max" in have else {}
        cases.append((f"ℓ = {power + 1}, past {power}", {**{k: power + 1 for k in lengths}, **full}))
        power *= 2
    return cases + largest_cases(algorithm, max_size)


def largest_cases(algorithm, max_size: int) -> list:
    """Cases that take every size to ``max_size`` (a bug that shows only at the largest width shows there):
    every length and width at once, then the heads and blocks, then the layers and the patch side — three
    groups, so that no case costs more than the largest width times one count.  Their pins are ``{"largest": (group,
    max_size)}``: the sizes are those of the variant each example draws (:func:`largest_pins`)."""
    have = {str(s) for s in algorithm.symbols}
    return [(f"{what} at the largest, {max_size}", {"largest": (what, max_size)}) for what, group in _LARGEST.items()
            if any(group(k) for k in have - set(RUN_SIZES))]


#: The groups of sizes taken to the largest together, by what they are.
_LARGEST = {"every length and width": lambda k: k not in _DEPTHS + _COUNTS,
            "heads and blocks": lambda k: k in _COUNTS, "layers and patches": lambda k: k in _DEPTHS}


def largest_pins(algorithm, what: str, max_size: int) -> tuple:
    """``(pins, note)``: the sizes of group ``what`` (see :func:`largest_cases`) at ``max_size``, or where the
    algorithm's divisibility constraints keep one below it (Swin's grid is 8·M·k; L even) the largest value
    they allow (:func:`_within`); ``note`` names those, for the case's label."""
    have = sorted({str(s) for s in algorithm.symbols} - set(RUN_SIZES))
    group = [k for k in have if _LARGEST[what](k)]
    pins = _within(algorithm, {k: max_size for k in group}, max_size)
    lowered = ", ".join(f"{k} = {v}" for k, v in sorted(pins.items()) if v != max_size)
    if "ell_max" in pins and any(k in LENGTHS for k in pins):  # the longest sequence fills the table
        pins["ell_max"] = "full"
    if "block" in have and "block" not in group:  # n_b = ⌈ℓ_c/B⌉ reaches the largest with B = 1
        pins["block"] = 1
    if "patch" in have and "patch" not in group:  # an S×S grid of one-pixel patches: an image of S³ numbers
        pins["patch"] = 1
    return pins, f" ({lowered}, as the constraints allow)" if lowered else ""


def _within(algorithm, pins: dict, top: int) -> dict:
    """``pins`` (all at ``top``) lowered until every divisibility ``a | c·s`` the algorithm states among them
    holds: s is the largest multiple of its step at most ``top``, and where no multiple is (Swin: M | n_h/8
    with M = 17), the divisor is lowered by one and the steps computed again."""
    rules = [c for c in algorithm.size_constraints
             if c.relation == "divides" and all(str(s) in pins for s in c.symbols) and _scaled_symbol(c.args[1])]
    for _ in range(top * len(rules) + 1):
        steps = {}
        for c in rules:
            symbol, coefficient = _scaled_symbol(c.args[1])
            va = evaluate(c.args[0], pins)
            step = va * coefficient.q // math.gcd(va * coefficient.q, coefficient.p)
            steps[str(symbol)] = math.lcm(steps.get(str(symbol), 1), step)
        too_large = {k for k, step in steps.items() if step > top}
        if not too_large:
            pins.update({k: top // step * step for k, step in steps.items()})
            if all(c.holds({s: pins[str(s)] for s in c.symbols}) for c in rules):
                return pins
            continue
        divisors = [str(s) for c in rules if str(_scaled_symbol(c.args[1])[0]) in too_large
                    for s in c.args[0].free_symbols if pins[str(s)] > 1]
        if not divisors:
            break
        pins[max(divisors, key=lambda k: pins[k])] -= 1
    return pins  # the mend that follows says which constraint no sizes satisfy
