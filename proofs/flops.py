"""Each op's own FLOP count: the ``full`` convention's count of every op equals the operations its numpy
semantics perform, counted independently (:mod:`proofs.counting`) on the spec's own executions.

Every registered algorithm is executed on seeded examples (:func:`reference.checking.examples.example`, its
options drawn from their declared domains); each op application of its lines is re-run on counting arrays, in the
context it ran in, and the count is compared with the op's rule (``op.work(shapes, out)`` under ``full``) at the
shapes and sizes of that application.  A call's ops are counted when its callee runs (every callee is an algorithm
of the registry).
"""

from __future__ import annotations

from .theorem import Outcome, Theorem

__all__ = ["THEOREMS", "observer", "examples", "on_their_own", "unchecked"]

#: Seeds per algorithm and the largest size of the examples.
SEEDS, SMALL = 3, 3

#: Why no symbolic proof is given.
WHY = ("not symbolic: the counter counts what one concrete execution performs, so the statement is checked at the "
       "shapes the examples give, not for all sizes")


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


def _rule(op, args, value, binding, convention):
    """The op's count under ``convention`` at the shapes of this application, its sizes bound."""
    import sympy as sp
    count = op.work([_shape(a) for a in args], _shape(value)).flops[convention]
    return sp.sympify(count).xreplace({s: sp.Integer(v) for s, v in binding.items()})


def observer(found, convention):
    """``observe(op, ctx, args, value)`` for :func:`formal.engine.execution.execute`: the first application whose
    rule differs from the count is kept in ``found["mismatch"]``; every op type seen in ``found["ops"]``."""
    from formal.engine.calls import CallOp

    from .counting import counted

    def observe(op, ctx, args, value):
        if isinstance(op, CallOp) or isinstance(value, tuple) or found["mismatch"]:
            return
        kind = type(op).__name__
        tally = counted(lambda *values: op.numpy(_Context(ctx), *values), *args)
        rule = _rule(op, args, value, ctx.binding.values, convention)
        found["ops"][kind] = found["ops"].get(kind, 0) + 1
        if rule != tally.total:
            shapes = ", ".join("×".join(map(str, _shape(a))) or "scalar" for a in args)
            performed = ", ".join(f"{k} {v}" for k, v in tally.by.items())
            found["mismatch"] = (f"{kind} ({ctx.where()}) on {shapes}: its {convention} count is {rule}, its numpy "
                                 f"semantics perform {tally.total} ({performed})")
    return observe


def examples():
    """``(name, example)`` for every algorithm the examples cover, ``SEEDS`` each."""
    from reference.checking.examples import EXAMPLE_ALGORITHMS, example
    for name in EXAMPLE_ALGORITHMS:
        for seed in range(SEEDS):
            yield name, example(name, seed, small=SMALL)


class _Bare:
    """The context of an op run on its own: no sizes bound, no loop, no random numbers."""

    binding = type("Binding", (), {"values": {}})()
    loop: dict = {}

    def __init__(self, op):
        self.op = op

    def where(self) -> str:
        return f"{type(self.op).__name__} on its own"


def on_their_own(seen) -> list:
    """``(op, args)`` for the ops of :mod:`formal.ops` that no registered algorithm's default lines or drawn variants
    happened to run here, each on seeded arrays of 3×2 (entries in [0.5, 2), shifted by −1 for the leaky ReLUs)."""
    import numpy as np

    from formal.ops import AddConstant, Div, Dot, Sqrt
    from formal.ops.graph_attention import SlopedLeakyReLU
    from formal.ops.scores import LeakyReLU
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, (3, 2)), rng.uniform(0.5, 2.0, (3, 2))
    cases = [(AddConstant(0.5, "ε", r"\epsilon"), (a,)), (Div(), (a, b)), (Sqrt(), (a,)), (Dot(), (a[:, 0], b[:, 0])),
             (LeakyReLU(), (a - 1,)), (SlopedLeakyReLU(), (a - 1,))]
    return [(op, args) for op, args in cases if type(op).__name__ not in seen]


def unchecked(seen) -> list:
    """The concrete op classes of :mod:`formal.ops` and the algorithms' modules that neither an execution nor
    :func:`on_their_own` counted (a call's ops are its callee's; the gradient step executes no numpy)."""
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
    found = {"mismatch": None, "ops": {}}
    runs = 0
    for name, ex in examples():
        execute(ex.algorithm, dict(ex.arguments), observe=observer(found, convention))
        runs += 1
        if found["mismatch"]:
            return Outcome(False, f"{found['mismatch']} (example {name}, options {ex.algorithm.options})")
    exercised = len(found["ops"])
    observe = observer(found, convention)
    for op, args in on_their_own(found["ops"]):
        observe(op, _Bare(op), args, op.numpy(_Bare(op), *args))
        if found["mismatch"]:
            return Outcome(False, found["mismatch"])
    missing = unchecked(found["ops"])
    if missing:
        return Outcome.undecided(f"no count was taken of {', '.join(missing)}: no example runs them")
    applications = sum(found["ops"].values())
    return Outcome(True, f"{applications} applications of {len(found['ops'])} ops, {exercised} of them in {runs} "
                         f"executions of the registry's algorithms and the rest on their own "
                         f"({', '.join(sorted(found['ops']))}): each op's full count equals the operations counted")


THEOREMS = [
    Theorem("op-flop-counts",
            "Every op's full-convention FLOP count equals the floating-point operations its numpy semantics "
            "perform: one per element of an elementwise operation, n − 1 per reduction of n elements, 2mkn per "
            "matrix product, nothing for selections, views and constants computed from sizes.",
            r"\mathrm{FLOPs}_{\mathrm{full}}(\mathrm{op}) = \#\{\text{operations numpy performs}\}",
            ("attention", "layer_norm", "dtransformer"), "property-tested",
            f"every algorithm of the registry executed on {SEEDS} seeded examples (sizes ≤ {SMALL}, options drawn "
            "from their declared domains); each op application re-run on counting arrays (proofs.counting: the "
            "convention's rules applied to the ufuncs numpy is asked to run, never the op's rule) and compared with "
            f"op.work under full at its shapes; {WHY}",
            "Every op's matmul-convention count equals the operations its numpy semantics perform.", _counts),
]
