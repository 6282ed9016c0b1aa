"""Each op's own FLOP count: the ``full`` convention's count of every op equals the operations its numpy
semantics perform, counted independently (:mod:`proofs.counting`).

The statement is decided over a grid: every op application in the lines of every registered algorithm, at its
defaults and at every single-option variant (a call's applications are its callee's), is run on counting arrays at
every assignment of the sizes its argument and result shapes (and the op's own size parameters) involve, each size
over the four smallest values its own constraints admit (:data:`GRID`, 1…4, for most; 8, 16, 24, 32 for a size that
must be a multiple of 8), wherever every dimension is a positive integer and the constraints hold; its rule
(``op.work(shapes, out)`` under ``full``) is evaluated at the same sizes.  The arguments are of the kinds the spec's
own executions give them (:func:`formal.sampling.examples.example`, seeded, options drawn from their declared
domains): a float argument is drawn in [0.5, 2), an index is 0, a mask admits everything, a distribution is
uniform.  Those executions are counted too, at their own sizes.  Ops that no algorithm's lines use are run on their
own (:func:`on_their_own`) on the same grid.
"""

from __future__ import annotations

from .theorem import Outcome, Theorem

__all__ = ["THEOREMS", "GRID", "observer", "examples", "variants", "applications", "grid_points", "count_at",
           "on_their_own", "unchecked"]

#: Seeds per algorithm and the largest size of the executions that give the arguments their kinds.
SEEDS, SMALL = 1, 3
#: The values every size takes on the grid.
GRID = (1, 2, 3, 4)

#: Why no symbolic proof is given.
WHY = ("not symbolic: the counter counts what one concrete execution performs, so each count is taken at the sizes "
       "of the grid, not for all sizes")


class _Context:
    """The context an op ran in, with a copy of its random generator, so that counting a random op's numpy
    semantics again draws the same numbers and leaves the execution's stream as it was."""

    def __init__(self, ctx):
        self._ctx = ctx

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    @property
    def rng(self):
        import copy
        return copy.deepcopy(self._ctx.rng)


def _shape(value):
    import numpy as np
    import sympy as sp
    return tuple(sp.Integer(d) for d in np.shape(value))


def _kind(value) -> str:
    """What an argument is, for drawing others like it: ``index``, ``mask`` (a boolean or 0/1 array),
    ``distribution`` (non-negative columns summing to 1) or ``real``."""
    import numpy as np
    a = np.asarray(value)
    if a.dtype.kind in "iu":
        return "index"
    if a.dtype.kind == "b" or a.size and np.isin(a, (0.0, 1.0)).all():
        return "mask"
    if a.ndim and a.size and (a >= 0).all() and np.allclose(a.sum(axis=0), 1.0):
        return "distribution"
    return "real"


def _mismatch(kind, where, args, convention, rule, tally) -> str:
    shapes = ", ".join("×".join(map(str, _shape(a))) or "scalar" for a in args)
    performed = ", ".join(f"{k} {v}" for k, v in tally.by.items()) or "nothing"
    return f"{kind} ({where}) on {shapes}: its {convention} count is {rule}, its numpy semantics perform " \
           f"{tally.total} ({performed})"


def observer(found, convention):
    """``observe(op, ctx, args, value)`` for :func:`formal.engine.execution.execute`: each application's count is
    compared with its rule at the sizes bound (the first that differs kept in ``found["mismatch"]``), and the kinds
    of its arguments kept in ``found["kinds"]`` (op type → kinds)."""
    import sympy as sp

    from formal.engine.calls import CallOp

    from .counting import counted

    def observe(op, ctx, args, value):
        if isinstance(op, CallOp) or isinstance(value, tuple) or found["mismatch"]:
            return
        kind = type(op).__name__
        found["kinds"].setdefault(kind, tuple(_kind(a) for a in args))
        tally = counted(lambda *values: op.numpy(_Context(ctx), *values), *args)
        sizes = {s: sp.Integer(v) for s, v in ctx.binding.values.items()}
        rule = sp.sympify(op.work([_shape(a) for a in args], _shape(value)).flops[convention]).xreplace(sizes)
        _record(found, kind, tally)
        if rule != tally.total:
            found["mismatch"] = _mismatch(kind, ctx.where(), args, convention, rule, tally)
    return observe


def _record(found, kind, tally):
    found["counted"][kind] = found["counted"].get(kind, 0) + 1
    if tally.unseen:
        found["unseen"].setdefault(kind, set()).update(tally.unseen)


def examples():
    """``(name, example)`` for every algorithm the examples cover, ``SEEDS`` each."""
    from formal.sampling.examples import EXAMPLE_ALGORITHMS, example
    for name in EXAMPLE_ALGORITHMS:
        for seed in range(SEEDS):
            yield name, example(name, seed, small=SMALL)


# ------------------------------------------------------------------------------------------ the grid
class _GridContext:
    """The context of an op run at a grid point: its sizes bound, every loop index at 0, a fresh seeded stream."""

    loop = type("Loop", (dict,), {"__missing__": lambda self, key: 0})()
    require = None

    def __init__(self, op, values):
        self.op, self.values = op, values

    @property
    def rng(self):
        import numpy as np
        return np.random.default_rng(0)

    def evaluate(self, expr) -> int:
        import sympy as sp
        return int(sp.sympify(expr).xreplace(self.values))

    def where(self) -> str:
        return _sizes(self.values)


def _sizes(values) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(values.items(), key=lambda kv: str(kv[0]))) or "no sizes"


def variants(name):
    """The algorithm ``name`` at its defaults and at every single-option variant (each example value of one option,
    the others at their defaults; a value that needs another option's is no variant on its own)."""
    from formal import algorithms
    from formal.errors import ConfigError
    yield algorithms.get(name)
    for option in algorithms.get(name).option_specs.values():
        for value in option.examples:
            if value != option.default:
                try:
                    yield algorithms.get(name, **{option.name: value})
                except ConfigError:
                    continue


def applications() -> dict:
    """Every op application in the lines of every registered algorithm and single-option variant (a call's are its
    callee's): ``{key: (op, argument shapes, result shape, algorithm)}``, one per op and shapes."""
    from formal import algorithms
    from formal.costs.cost import Work
    from formal.engine.calls import CallOp
    from formal.engine.derivation import derive
    found = {}

    def noting(algorithm):
        def op_work(op, shapes, out):
            if not isinstance(op, CallOp):
                key = (type(op).__name__, repr(vars(op)), str(shapes), str(out))
                found.setdefault(key, (op, tuple(shapes), out, algorithm))
            return Work()      # the shapes are what is wanted: no cost is summed
        return op_work

    for name in algorithms.ALGORITHMS:
        for algorithm in variants(name):
            derive(algorithm, op_work=noting(algorithm))
    return found


def _free(op, shapes, out) -> list:
    """The sizes an application involves: its shapes' and its op's own size parameters' (in its attributes and
    theirs: a head's key/value group reads H and n_kv)."""
    import sympy as sp
    found = set()
    for dim in (d for shape in (*shapes, out) for d in shape):
        found |= sp.sympify(dim).free_symbols

    def walk(value, depth):
        if isinstance(value, sp.Basic):
            found.update(value.free_symbols)
        elif isinstance(value, (tuple, list)):
            for v in value:
                walk(v, depth)
        elif depth < 3 and hasattr(value, "__dict__") and not callable(value):
            for v in vars(value).values():
                walk(v, depth + 1)
    walk(tuple(vars(op).values()), 0)
    return sorted(found, key=str)


def _domain(symbol, constraints) -> tuple:
    """The values ``symbol`` takes on the grid: the ``len(GRID)`` smallest positive ones the constraints on it
    alone admit (1…4, or 8, 16, 24, 32 for a size that must be a multiple of 8)."""
    own = [c for c in constraints if tuple(c.symbols) == (symbol,)]
    admitted = (v for v in range(1, 1025) if all(c.holds({symbol: v}) for c in own))
    return tuple(v for _, v in zip(GRID, admitted))


def grid_points(op, shapes, out, constraints=()):
    """``(sizes, argument shapes, result shape)`` at every point of the grid (each size over its :func:`_domain`)
    where each dimension is a positive integer (a result may be empty), and the op's constraints and those of
    ``constraints`` (its algorithm's) that read only these sizes hold."""
    from itertools import product

    import sympy as sp
    symbols = _free(op, shapes, out)
    constraints = [*op.constraints(shapes), *(c for c in constraints if set(c.symbols) <= set(symbols))]
    for point in product(*(_domain(s, constraints) for s in symbols)):
        values = dict(zip(symbols, map(sp.Integer, point)))
        dims = [tuple(sp.sympify(d).xreplace(values) for d in s) for s in (*shapes, out)]
        if not all(d.is_Integer and d >= (0 if k == len(shapes) else 1) for k, s in enumerate(dims) for d in s):
            continue
        if all(c.holds({s: values[s] for s in c.symbols}) for c in constraints):
            yield values, dims[:-1], dims[-1]


def _argument(kind, shape, rng):
    import numpy as np
    shape = tuple(int(d) for d in shape)
    if kind == "index":
        return np.zeros(shape, dtype=np.int64)
    if kind == "mask":
        return np.ones(shape)
    if kind == "distribution":
        return np.full(shape, 1.0 / shape[0]) if shape else np.ones(())
    return rng.uniform(0.5, 2.0, shape)


def count_at(op, shapes, out, kinds, convention, found, constraints=()):
    """Count ``op`` at every grid point of its application; the first point whose rule differs from the count is
    kept in ``found["mismatch"]``, an op that fails to run there, or refuses every point as outside its domain (a
    :class:`~formal.errors.FormalError`), in ``found["failed"]``."""
    import numpy as np
    import sympy as sp

    from formal.errors import FormalError

    from .counting import counted
    rule = sp.sympify(op.work(list(shapes), out).flops[convention])
    name = type(op).__name__
    rng, ran, refused = np.random.default_rng(0), False, None
    kinds = kinds if len(kinds) == len(shapes) else ("real",) * len(shapes)
    for values, dims, _ in grid_points(op, shapes, out, constraints):
        args = [_argument(kind, shape, rng) for kind, shape in zip(kinds, dims)]
        ctx = _GridContext(op, values)
        try:
            tally = counted(lambda *v: op.numpy(ctx, *v), *args)
        except FormalError as e:   # sizes outside the op's domain (too few tokens for the special ones)
            refused = refused or f"at {_sizes(values)}: {e}"
            continue
        except Exception as e:   # noqa: BLE001 — an op that cannot run at a point is reported, not skipped
            found["failed"].setdefault(name, f"at {_sizes(values)}: {type(e).__name__}: {e}")
            return
        ran = True
        _record(found, name, tally)
        if rule.xreplace(values) != tally.total:
            found["mismatch"] = _mismatch(name, ctx.where(), args, convention, rule.xreplace(values), tally)
            return
    if not ran:   # no point of the grid is in its domain: the application went uncounted
        why = f"it refused every point, first {refused}" if refused else "no point gives every dimension a size"
        found["failed"].setdefault(name, f"anywhere on the grid ({why})")


def on_their_own() -> list:
    """``(op, shapes)`` for the ops of :mod:`formal.ops` that no registered algorithm's lines use, on arguments of
    m×n (vectors of m for a dot product)."""
    import sympy as sp

    from formal.ops import AddConstant, Div, Dot, Sqrt
    from formal.ops.graph_attention import SlopedLeakyReLU
    from formal.ops.scores import LeakyReLU
    m, n = sp.symbols("m n", positive=True, integer=True)
    return [(AddConstant(0.5, "ε", r"\epsilon"), ((m, n),)), (Div(), ((m, n), (m, n))), (Sqrt(), ((m, n),)),
            (Dot(), ((m,), (m,))), (LeakyReLU(), ((m, n),)), (SlopedLeakyReLU(), ((m, n),))]


def unchecked(seen) -> list:
    """The concrete op classes of :mod:`formal.ops` and the algorithms' modules that no count reached (a call's ops
    are its callee's; the gradient step, a call, executes no numpy)."""
    from formal.engine.calls import CallOp
    from formal.ops import Activation, Elementwise, Op

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    abstract = {Op, Elementwise, Activation}
    return sorted({c.__name__ for c in subclasses(Op) if c not in abstract and not issubclass(c, CallOp)} - set(seen))


def _counts(perturbed):
    from formal.engine.execution import execute
    convention = "matmul" if perturbed else "full"
    found = {"mismatch": None, "kinds": {}, "counted": {}, "unseen": {}, "failed": {}}
    runs = 0
    for name, ex in examples():
        execute(ex.algorithm, dict(ex.arguments), observe=observer(found, convention))
        runs += 1
        if found["mismatch"]:
            return Outcome(False, f"{found['mismatch']} (example {name}, options {ex.algorithm.options})")
    executed = sum(found["counted"].values())
    cases = [(op, shapes, op.shape(list(shapes)), None) for op, shapes in on_their_own()]
    cases += list(applications().values())
    for op, shapes, out, algorithm in cases:
        kinds = found["kinds"].get(type(op).__name__, ("real",) * len(shapes))
        count_at(op, shapes, out, kinds, convention, found, algorithm.size_constraints if algorithm else ())
        if found["mismatch"]:
            where = f"an application in {algorithm.label}" if algorithm else "on its own"
            return Outcome(False, f"{found['mismatch']} ({where})")
    return _verdict(found, runs, executed, len(cases))


def _verdict(found, runs, executed, cases):
    missing = unchecked(found["counted"])
    unseen = [f"{k} (calls {', '.join(sorted(v))}, which the counter does not model)"
              for k, v in sorted(found["unseen"].items())]
    failed = [f"{k} (it failed to run {v})" for k, v in sorted(found["failed"].items())]
    if missing or unseen or failed:
        left = [f"{k} (no algorithm uses it and it is not run on its own)" for k in missing] + unseen + failed
        return Outcome.undecided(f"no count could be compared for {'; '.join(left)}")
    points = sum(found["counted"].values()) - executed
    return Outcome(True, f"{cases} op applications counted at {points} grid points and {executed} "
                         f"applications in {runs} executions, {len(found['counted'])} ops "
                         f"({', '.join(sorted(found['counted']))}): each op's full count equals the operations counted")


THEOREMS = [
    Theorem("op-flop-counts",
            "Every op's full-convention FLOP count equals the floating-point operations its numpy semantics "
            "perform: one per element of an elementwise operation, n − 1 per reduction of n elements, 2·m·k·n per "
            "matrix product, nothing for selections, views and constants computed from sizes.",
            r"\mathrm{FLOPs}_{\mathrm{full}}(\mathrm{op}) = \#\{\text{operations numpy performs}\}",
            ("attention", "layer_norm", "dtransformer"), "exhaustive",
            "every op application in the lines of every registered algorithm, at its defaults and every "
            f"single-option variant, run on counting arrays (proofs.counting: the convention's rules applied to the "
            "ufuncs numpy is asked to run, never the op's rule) at every assignment of the sizes it involves, each "
            f"over the {len(GRID)} smallest values its own constraints admit ({{{', '.join(map(str, GRID))}}} for "
            "most, 8…32 for Swin's multiples of 8), where every dimension is a positive integer and the constraints "
            "hold (a point the op's semantics refuse as outside their domain is left out; an application with no "
            "point left is reported; ops no algorithm uses on m×n arguments), and compared with op.work under full; "
            f"the executions of every algorithm ({SEEDS} seeded example each, sizes ≤ {SMALL}) give the "
            f"arguments their kinds and are counted too; {WHY}",
            "Every op's matmul-convention count equals the operations its numpy semantics perform.", _counts),
]
