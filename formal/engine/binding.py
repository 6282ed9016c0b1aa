"""Binding an execution's arguments to the algorithm's sizes: the inputs bound first (an input whose sizes its
own shape cannot tell, once the parameters have told what they can; a mask once the sizes it spans are bound),
a parameter on the line that first reads it, and each size constraint as soon as its sizes are bound — so a
mismatch names the line, and the symbol, where it is met.

:class:`ArgumentBinding` is the part of the executor (:mod:`.execution`) that does this; the column and batched
executors (:mod:`.columns`, :mod:`.batches`) bind a column's or a trip's slice of an argument by overriding
:meth:`ArgumentBinding._bind`.
"""

from __future__ import annotations

from ..core import masks
from ..core.numeric import free
from ..core.shapes import Mismatch
from ..errors import ConfigError, FormalError, ShapeError
from ..guards.arrays import index_array, real_array

__all__ = ["ArgumentBinding"]


class ArgumentBinding:
    """The arguments of one execution bound to sizes.  The executor holds the state: ``algorithm``, ``binding``
    (symbol → int, and where each came from), ``values`` (name → array), ``unchecked`` (the parameters not read
    yet), ``consumed`` (those read, in order) and ``pending`` (the size constraints not checked yet)."""

    def _mismatch(self, m: Mismatch, line):
        return ShapeError(algorithm=self.algorithm.label, line=line, symbol=m.symbol, expected=m.expected,
                          got=m.got, detail=m.detail)

    def _bind(self, spec, array, line):
        try:
            self.binding.bind(spec.shape, array.shape, spec.name)
        except Mismatch as m:
            raise self._mismatch(m, line) from None

    def _bind_inputs(self, raw):
        masks_pending, undetermined = [], []
        for spec in self.algorithm.inputs:
            if spec.kind == "mask":
                masks_pending.append(spec)
                continue
            check = index_array if spec.kind == "index" else real_array
            array = check(spec.name, raw[spec.name])
            try:
                self.binding.bind(spec.shape, array.shape, spec.name)
            except Mismatch as m:
                if not m.undetermined:
                    raise self._mismatch(m, "signature") from None
                undetermined.append((spec, array))
            self.values[spec.name] = array
        if undetermined:
            self._bind_from_params(undetermined, raw)
        for spec in masks_pending:
            missing = sorted(str(s) for d in spec.shape for s in d.free_symbols if s not in self.binding.values)
            if missing:   # a size only the mask's shape mentions (the cache length of a paged cache)
                raise ConfigError(f"{self.algorithm.label}, signature: the size {missing[0]} of {spec.name} is "
                                  f"determined by no argument: pass {missing[0]}=<int>")
            ell_z, ell_x = (self.binding.evaluate(d) for d in spec.shape)
            self.values[spec.name] = masks.resolve(raw[spec.name], ell_z, ell_x)

    def _bind_from_params(self, undetermined, raw):
        """Inputs whose sizes their own shape cannot tell (an image of P·n_h × P·n_w pixels: which is P?),
        bound once the parameters have told what they can (W_patch's C·P², once Swin's weights have told
        H and d_attn of its H·d_attn rows).  A parameter that does not fit leaves the binding as it was: it
        is reported when a line reads it."""
        misfits, unreadable, pending = [], [], [p for p in self.algorithm.params if p.name in raw]
        while pending:            # again while a parameter bound tells what another needs (Swin's H·d_attn)
            waiting = []
            for p in pending:
                try:
                    array = real_array(p.name, raw[p.name])
                except FormalError as error:
                    unreadable.append(error)
                    continue
                saved = dict(self.binding.values), dict(self.binding.sources)
                try:
                    self.binding.bind(p.shape, array.shape, p.name)
                except Mismatch as m:
                    self.binding.values, self.binding.sources = saved
                    misfits.append(m)
                    if m.undetermined:
                        waiting.append(p)
            if len(waiting) == len(pending):
                break
            pending = waiting
        for spec, array in undetermined:
            try:
                self.binding.bind(spec.shape, array.shape, spec.name)
            except Mismatch as m:   # still undetermined: a parameter that did not fit says why
                if m.undetermined and unreadable:   # a parameter that is no real array cannot tell a size
                    raise unreadable[0] from None
                told = next((x for x in misfits if not x.undetermined), misfits[0]) if misfits else m
                raise self._mismatch(told if m.undetermined else m, "signature") from None

    def _check_constraints(self):
        """Check each size constraint once, as soon as its sizes are bound (bound sizes never change)."""
        values, waiting = self.binding.values, []
        for c, symbols in self.pending:
            if not symbols <= values.keys():
                waiting.append((c, symbols))
            elif not c.holds(values):
                raise ConfigError(f"{self.algorithm.label}: {c.explain(values)}")
        self.pending = waiting

    def _read(self, name, line):
        if name in self.unchecked:
            spec = self.algorithm.spec(name)
            array = real_array(name, self.unchecked.pop(name))
            self._bind(spec, array, line)
            self._check_constraints()
            self.values[name] = array
            self.consumed.append(name)
        return self.values[name]

    def _require(self, expr, line):
        """Bind the symbols of ``expr`` by checking the parameters that carry them (a loop's trip count)."""
        for name in list(self.unchecked):
            if not self.binding.is_bound(expr) and free(expr) & set().union(
                    *(free(d) for d in self.algorithm.spec(name).shape)):
                self._read(name, line)
