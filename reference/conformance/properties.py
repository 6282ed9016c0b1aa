"""The properties ``conform`` checks on one example beside the spec comparison — ``shape``, ``finite`` and
``spec`` of the outputs, and those the algorithm's object declares (its record,
:mod:`reference.records`): ``masks`` (hidden context columns do not move a query's output),
``causality`` (output column t reads only one side of its tokens) and ``equivariance`` (a permutation of the
tokens permutes the output columns, one of a context leaves them).  Each measures a deviation; a property
that does not hold raises :class:`~reference.conformance.outputs.Failed` naming it.
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError

from .. import tolerances
from ..records import permute, record
from .targets import Failed, Target

__all__ = ["Checker"]


class Checker:
    """The properties the algorithm's record declares (:mod:`reference.records`), run on one example at
    a time; each returns the deviation it measured, or None where the example gives it nothing to check."""

    def __init__(self, target: Target, relative: float, seed: int):
        self.target, self.relative = target, relative
        self.bounds = None   # lower precision: id(example) → its own relative bound (conform sets it per example)
        self.precision = "float64"   # the precision the bounds are of
        self.rng = np.random.default_rng(seed)
        self.record = record(target.algorithm)

    def applies(self) -> dict:
        """Property → whether the algorithm has it: a mask that hides a context, a causal order of its
        tokens, a permutation its outputs answer."""
        r = self.record
        return {"masks": bool(r.hidden), "causality": r.causal is not None, "equivariance": bool(r.permutation)}

    def allowed(self, reference) -> float:
        return self.relative * max(tolerances.scale(r) for r in reference)

    def compare_spec(self, want: tuple, got: tuple, arguments: dict | None = None, *, values: bool = True) -> float:
        """``shape``, ``finite`` and ``spec`` on one example, in that order over every output (``arguments``: its
        inputs, to say when a failing column is a query that admits no key); returns the largest ``|Δ|`` over the
        outputs, and a failure of ``spec`` carries it (``measured``), so the report's max error includes the
        failing example; the message names the output and entry where ``|Δ|`` is largest.  ``values=False`` checks
        only shape and finiteness (the large-score case: there a near tie of scores ~10⁸ may go either way after
        rounding below float64, and a finite mask such as Swin's −100 no longer hides a key, so no tolerance
        bounds a correct implementation's values)."""
        t = self.target
        outputs = tuple(zip(want, got, t.algorithm.outputs))
        for w, g, spec in outputs:
            if w.shape != g.shape:
                raise Failed("shape", f"output {spec.name} has shape {t.shape(g.shape, spec.name)}, the spec's is "
                                      f"{t.shape(w.shape, spec.name)}")
        for w, g, spec in outputs:
            for bad, word in ((np.isnan(g) & ~np.isnan(w), "NaN"), (np.isinf(g) & np.isfinite(w), "inf")):
                if bad.any():
                    where = t.index(tuple(int(i) for i in np.argwhere(bad)[0]), spec.name)
                    raise Failed("finite", f"{word} in output {spec.name} at {list(where)} (the spec's value there "
                                           f"is {w[tuple(np.argwhere(bad)[0])]:.6g})")
        for w, g, spec in outputs:
            if not np.array_equal(np.isnan(w), np.isnan(g)):     # a number where the spec's is NaN: |Δ| = inf
                where = t.index(tuple(int(i) for i in np.argwhere(np.isnan(w) != np.isnan(g))[0]), spec.name)
                raise Failed("spec", f"output {spec.name} at {list(where)} is a number where the spec gives NaN "
                                     f"(an empty neighbourhood under empty='nan')", measured=float("inf"))
        if not values:
            return 0.0
        worst, at, allowed = 0.0, None, self.allowed(want)
        for w, g, spec in outputs:
            if not w.size:
                continue
            diff = tolerances.differences(w, g)      # never NaN: the same infinity agrees, another is inf
            i = np.unravel_index(int(np.argmax(diff)), diff.shape)
            if at is None or diff[i] > worst:
                worst, at = float(diff[i]), (w, g, spec, i)
        if worst > allowed:
            w, g, spec, i = at
            where = list(t.index(tuple(int(k) for k in i), spec.name))
            what, empty = f"output {spec.name} at {where} is {g[i]:.6g}, the spec's is {w[i]:.6g}", \
                self._empty_query(arguments, i)
            raise Failed("spec", f"{what} (|Δ| = {worst:.3g} > allowed {allowed:.3g}){empty}", measured=worst,
                         what=what + empty)
        return worst

    def _empty_query(self, arguments, at) -> str:
        """``"; query t admits no key …"`` when the failing column ``at[-1]`` is a query whose mask column is all 0
        (:ref:`decision-empty-neighbourhood`), else ``""``."""
        for mask in self.record.hidden if arguments else ():
            M = arguments.get(mask)
            if M is not None and M.ndim == 2 and at and at[-1] < M.shape[1] and not M[:, at[-1]].any():
                policy = self.target.algorithm.options.get("empty")
                return (f"; query {at[-1]} admits no key, and its column follows empty={policy!r} (code that masks "
                        "with a large negative fill such as -1e9 averages every value there: -o empty=uniform)")
        return ""

    def _moved(self, prop, before, after, columns, what) -> float:
        """Fail ``prop`` when output columns ``columns`` moved between two runs of the function."""
        b, a = before[0][..., columns], after[0][..., columns]
        diff = tolerances.differences(b, a)      # a column turned NaN moved by inf, not by nothing
        allowed = self.allowed((before[0],))
        if diff.size and diff.max() > allowed:
            raise Failed(prop, f"{what} (|Δ| = {diff.max():.3g} > allowed {allowed:.3g})",
                         measured=float(diff.max()), what=what)
        return float(diff.max()) if diff.size else 0.0

    def masks(self, arguments, got) -> float | None:
        """Perturb the context columns hidden from the query that hides the most; its column must stay
        (Algorithm 4, line 5).  Under ``empty="uniform"`` a query that admits no key averages every value by
        design, so it is not the one chosen."""
        worst = None
        for mask, context in self.record.hidden.items():
            if arguments.get(context) is None:  # self-attention: the hidden keys are queries too
                continue
            M = arguments[mask]
            hidden = (M == 0).sum(axis=0)
            if self.target.algorithm.options.get("empty") == "uniform":  # a query with no key reads every one
                hidden = np.where(hidden == M.shape[0], 0, hidden)
            if not hidden.any():
                continue
            t = int(np.argmax(hidden))
            keys = np.flatnonzero(M[:, t] == 0)
            moved = dict(arguments, **{context: arguments[context].copy()})
            moved[context][:, keys] += self.rng.normal(size=(moved[context].shape[0], len(keys)))
            measured = self._moved("masks", got, self.target(moved), [t],
                                   f"output column {t} moved when context columns {keys.tolist()}, which its mask "
                                   "hides, changed")
            worst = measured if worst is None else max(worst, measured)
        return worst

    def causality(self, arguments, got) -> float | None:
        """Change the tokens on one side of a random position t: output columns on the other side, the ones the
        algorithm says read only up to t (forward) or from t + 1 (backward), must stay."""
        spec = self.target.algorithm.spec(self.record.tokens)
        x = arguments[spec.name]
        n = x.shape[-1]
        if n < 2:
            return None
        t = int(self.rng.integers(n - 1))
        backward = self.record.causal == "backward"
        changed = slice(None, t + 1) if backward else slice(t + 1, None)
        moved = x.copy()
        if spec.kind == "index":
            vocabulary = self._size(spec.bound, arguments)
            moved[changed] = (moved[changed] + 1 + self.rng.integers(vocabulary - 1, size=len(moved[changed]))) \
                % vocabulary
            where = f"tokens at positions ≤ {t}" if backward else f"tokens after position {t}"
        else:
            moved[..., changed] += self.rng.normal(size=moved[..., changed].shape)
            where = f"inputs {'≤' if backward else 'after'} {t}"
        columns = list(range(t + 1, n)) if backward else list(range(t + 1))
        what = f"output columns {f'{t + 1}…' if backward else f'0…{t}'} moved when only {where} changed"
        if spec.kind != "index":
            what += f" (a {self.record.causal} recurrence reads one side)"
        return self._moved("causality", got, self.target(dict(arguments, **{spec.name: moved})), columns, what)

    def _size(self, symbol, arguments) -> int:
        """The size ``symbol`` stands for in these arguments: an axis of the first argument it measures."""
        for spec in self.target.algorithm.signature:
            if symbol in spec.shape and spec.name in arguments:
                return int(np.shape(arguments[spec.name])[spec.shape.index(symbol)])
        raise ConfigError(f"no argument of {self.target.algorithm.label} tells {symbol}")

    def permutation(self, n: int) -> np.ndarray:
        """A random permutation of n ≥ 2 items that moves at least one."""
        perm = self.rng.permutation(n)
        return np.roll(perm, 1) if np.array_equal(perm, np.arange(n)) else perm

    def equivariance(self, arguments, got=None) -> float | None:
        """Permuting an invariant input (a context) leaves the output, permuting an equivariant one (the tokens)
        permutes the output columns alike — with every mask's axes over the same positions permuted along (a
        graph's adjacency with its nodes, a mask's columns with its queries and its rows with its keys): the
        same computation, renumbered."""
        algorithm = self.target.algorithm
        args = arguments
        base = got if got is not None else self.target(args)
        worst = 0.0
        for answer in ("invariant", "equivariant"):
            for name in (n for n, a in self.record.permutation.items() if a == answer):
                if args.get(name) is None or args[name].shape[-1] < 2:
                    continue
                perm = self.permutation(args[name].shape[-1])
                after = self.target(permute(algorithm, args, name, perm, masks=True))
                role = algorithm.spec(name).role or "input"
                if answer == "invariant":
                    measured = self._moved("equivariance", base, after, slice(None),
                                           f"the output moved when the {role} {name} was permuted by {perm.tolist()}")
                else:
                    measured = self._moved("equivariance", tuple(b[..., perm] for b in base), after, slice(None),
                                           f"permuting the {role} {name} by {perm.tolist()} did not permute the "
                                           "output columns alike")
                worst = max(worst, measured)
        return worst
