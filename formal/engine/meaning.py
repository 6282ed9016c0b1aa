"""The symbolic meaning of an algorithm: its lines evaluated over symbolic values, and tied to its execution.

Each op states what it computes mathematically (:meth:`formal.ops.Op.meaning`, over the values of
:mod:`formal.core.symbolic`); :func:`evaluate` runs an algorithm's assignments in order over symbolic inputs
whose shapes are the algorithm's own (declared, or derived for an intermediate name), so that the range of a
sum is the derived inner size, never one typed by hand.  :func:`execution_mismatch` instantiates a symbolic
result at concrete sizes and entries and compares it with the numpy execution: a meaning that a theorem
reasons about is the one the package runs.

Examples
--------
>>> import sympy as sp
>>> from formal import algorithms
>>> norm = algorithms.get("layer_norm", norm="rms")
>>> e_hat = evaluate(norm, inputs(norm)).values["e_hat"]
>>> e_hat.shape
(d_e,)
>>> [s.limits[0][2] for s in e_hat.expr.atoms(sp.Sum)]      # the sum runs over the derived width
[d_e - 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..core.symbolic import Value, constant, entries
from ..errors import ConfigError, FormalError
from ..ops import Apply, Ref

__all__ = ["Context", "Meaning", "evaluate", "evaluate_node", "inputs", "intermediate", "exact", "instantiate",
           "concrete", "execution_mismatch"]


def exact(number) -> sp.Rational:
    """The exact rational a float (or int) denotes as written: ``1e-05`` is 1/100000, ``0.25`` is 1/4."""
    return sp.Rational(repr(float(number))) if not isinstance(number, (int, np.integer)) else sp.Integer(number)


class Context:
    """What an op's meaning may ask: a named constant (ε) — the symbol ``constants`` binds to its glyph, else
    its exact value — and where it runs (for messages)."""

    def __init__(self, algorithm, constants=None):
        self.algorithm, self.constants = algorithm, dict(constants or {})
        self.used: dict = {}   # symbol → the op's own value, for instantiating against the execution
        self.line = "signature"

    def constant(self, value, glyph: str):
        symbol = self.constants.get(glyph)
        if symbol is None:
            return exact(value)
        self.used[symbol] = exact(value)
        return symbol

    def where(self) -> str:
        return f"{self.algorithm.label}, line {self.line}"


@dataclass(frozen=True)
class Meaning:
    """The values after a symbolic run (name → :class:`~formal.core.symbolic.Value`), and the constants the
    ops bound to symbols (symbol → the op's own value)."""

    values: dict
    constants: dict = field(default_factory=dict)


def inputs(algorithm, *, fixed=None) -> dict:
    """Every input and parameter as a value of independent entries of its declared shape, named as the
    algorithm names it; ``fixed`` gives some a constant entry instead (``{"mask": 1, "beta": 0}``)."""
    fixed = fixed or {}
    return {s.name: constant(fixed[s.name], s.shape) if s.name in fixed else entries(s.name, s.shape)
            for s in algorithm.signature}


def intermediate(algorithm, name: str, label: str | None = None) -> Value:
    """Independent entries ``label[…]`` in the derived shape of the algorithm's value ``name``."""
    shapes = algorithm.derivation.shapes
    if name not in shapes:
        raise ConfigError(f"{algorithm.label} has no value {name!r}; its values: {', '.join(shapes)}")
    return entries(label or name, shapes[name])


def evaluate(algorithm, values: dict, *, start: str | None = None, constants=None) -> Meaning:
    """Run ``algorithm``'s assignments in order over the symbolic ``values`` (name → Value), from the first line
    that assigns ``start`` (all lines by default).  A loop or an op without a meaning is a :class:`FormalError`
    naming it."""
    ctx = Context(algorithm, constants)
    env = dict(values)
    started = start is None
    for number, line in enumerate(algorithm.lines, 1):
        if hasattr(line, "body"):
            raise FormalError(f"{algorithm.label}, line {number}: a loop has no symbolic meaning here")
        if not hasattr(line, "expr"):  # a line that computes nothing (ℓ ← length(x))
            continue
        names = line.target if isinstance(line.target, tuple) else (line.target,)
        started = started or start in names
        if not started:
            continue
        ctx.line = number
        if len(names) != 1:
            raise FormalError(f"{ctx.where()}: a line with several targets has no symbolic meaning here")
        env[names[0]] = evaluate_node(ctx, line.expr, env)
    if not started:
        raise ConfigError(f"{algorithm.label} has no line assigning {start!r}")
    return Meaning(env, dict(ctx.used))


def evaluate_node(ctx: Context, node, env: dict) -> Value:
    """The symbolic value of one expression of a line."""
    if isinstance(node, Ref):
        if node.name not in env:
            raise FormalError(f"{ctx.where()} reads {node.name}, which has no symbolic value: bind it")
        return env[node.name]
    if not isinstance(node, Apply):
        raise FormalError(f"{ctx.where()}: {node!r} is not an expression of ops")
    if node.op.meaning is None:
        raise FormalError(f"{ctx.where()}: the op {node.op.name} ({type(node.op).__name__}) has no symbolic "
                          "meaning")
    return node.op.meaning(ctx, *(evaluate_node(ctx, a, env) for a in node.args))


def instantiate(expr, sizes: dict, arrays: dict, scalars=None) -> sp.Expr:
    """``expr`` at concrete ``sizes`` (symbol → int), its sums expanded and its entries ``name[…]`` read from
    ``arrays`` (name → numpy array, each entry taken as the exact rational it is), its other symbols from
    ``scalars``: an exact sympy number."""
    done = sp.sympify(expr).xreplace({s: sp.Integer(v) for s, v in sizes.items()}).doit()
    table = {}
    for atom in done.atoms(sp.Indexed):
        index = tuple(int(i) for i in atom.indices)
        table[atom] = exact(np.asarray(arrays[str(atom.base.label)])[index])
    return done.xreplace(table).xreplace(dict(scalars or {}))


def concrete(value: Value, sizes: dict, arrays: dict, scalars=None) -> np.ndarray:
    """A symbolic value at concrete sizes and entries, as float64 (each entry exact first, rounded once)."""
    shape = tuple(int(sp.sympify(s).xreplace({k: sp.Integer(v) for k, v in sizes.items()})) for s in value.shape)
    out = np.empty(shape)
    for index in np.ndindex(*shape):
        out[index] = float(sp.N(instantiate(value.at(*index), sizes, arrays, scalars), 30))
    return out


def execution_mismatch(algorithm, symbolic: dict, meaning: Meaning, output: str, sizes: dict, rng,
                       *, rtol: float = 1e-12) -> str | None:
    """Where the symbolic value ``output`` and the numpy execution of ``algorithm`` disagree, at ``sizes`` on
    entries drawn from ``rng`` (distinct quarters in [−4, 4], exact in float64) for the ``symbolic`` inputs of
    independent entries; a constant input is passed as its constant.  None when they agree (float64, ``rtol``)."""
    arrays, named = {}, {}
    for name, value in symbolic.items():
        shape = tuple(int(sp.sympify(s).xreplace({k: sp.Integer(v) for k, v in sizes.items()})) for s in value.shape)
        if isinstance(value.expr, sp.Indexed):
            count = int(np.prod(shape))     # distinct where they fit: no constant column for a norm to refuse
            drawn = rng.choice(np.arange(-16, 17), size=shape, replace=count > 33) / 4
            arrays[str(value.expr.base.label)] = named[name] = drawn
        else:
            named[name] = np.full(shape, float(value.expr))
    executed = np.asarray(algorithm(**named), dtype=float)
    meant = concrete(meaning.values[output], sizes, arrays, meaning.constants)
    if executed.shape == meant.shape and np.allclose(executed, meant, rtol=rtol, atol=rtol):
        return None
    at = ", ".join(f"{k} = {v}" for k, v in sizes.items())
    if executed.shape != meant.shape:
        return f"at {at} the execution has shape {executed.shape}, the meaning {meant.shape}"
    worst = np.unravel_index(np.argmax(np.abs(executed - meant)), meant.shape)
    return (f"at {at} the execution and the ops' meaning differ: entry {tuple(map(int, worst))} is "
            f"{executed[worst]:.6g} executed, {meant[worst]:.6g} meant")
