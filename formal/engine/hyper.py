"""An algorithm's hyperparameters, derived from the object as the paper lists them in each algorithm's header.

The sizes it is built at that are not the lengths or alphabets of its inputs: for a whole model with its own
parameters (Algorithms 8–10), every size of its parameters and loops (L, H, d_e, d_mlp, d_attn, d_mid, ℓ_max);
for a building block (Algorithms 1–7) or an algorithm that runs a model as a whole (θ: Algorithms 11–15), only
its own loops' counts (H of Algorithm 5, N_epochs, ℓ_gen) — a block's widths are its parameters' shapes, and a
model's are the model's.  Then the scalars it is run with: the learning rate η of its parameters label, the
sampling temperature τ and the masking probability p_mask of its options.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hyperparameters", "hyperparameters", "SCALAR_OPTIONS", "param_groups", "param_group_entries",
           "hyperparameter_entries"]

#: Options that are the paper's scalar hyperparameters → (text, LaTeX).
SCALAR_OPTIONS = {"tau": ("τ", r"\tau"), "p_mask": ("p_mask", r"p_{\mathrm{mask}}")}
_LABEL_SCALARS = {"η": ("η", r"\eta")}


@dataclass(frozen=True)
class Hyperparameters:
    """``sizes``: size symbols, sorted by name; ``scalars``: (text, LaTeX) of each scalar hyperparameter."""

    sizes: tuple
    scalars: tuple

    def text(self) -> tuple:
        from ..core.symbols import text
        return tuple(text(s) for s in self.sizes) + tuple(t for t, _ in self.scalars)

    def latex(self) -> tuple:
        from ..core.symbols import latex
        return tuple(latex(s) for s in self.sizes) + tuple(x for _, x in self.scalars)


def _runs_a_model(algorithm) -> bool:
    """Whether every parameter of ``algorithm`` goes to one call of a model (θ of a training or inference)."""
    from .calls import calls_in
    mine = {p.name for p in algorithm.params}
    found = [bool(mine) and mine <= {a.name for a in node.args if hasattr(a, "name")}
             for node in calls_in(algorithm.lines) if node.op.callee.is_model]
    return any(found)


def _loops(lines):
    """Every loop of ``lines``, outer ones first (a loop before those in its body)."""
    for line in lines:
        if hasattr(line, "body"):
            yield line
            yield from _loops(line.body)


def _loop_counts(lines) -> set:
    import sympy as sp
    return {s for loop in _loops(lines) for s in sp.sympify(loop.count).free_symbols}


def hyperparameters(algorithm) -> Hyperparameters:
    """The :class:`Hyperparameters` of ``algorithm``, derived from its signature, lines and options."""
    inputs = set()
    for spec in algorithm.inputs:
        for d in spec.shape + ((spec.bound,) if spec.bound is not None else ()):
            inputs |= d.free_symbols
    sizes = _loop_counts(algorithm.lines)
    if algorithm.is_model and not _runs_a_model(algorithm):
        for spec in algorithm.params:
            for d in spec.shape:
                sizes |= d.free_symbols
    indices = _indices(algorithm.lines)
    sizes = tuple(sorted(sizes - inputs - indices, key=str))
    scalars = tuple(_LABEL_SCALARS[part] for part in algorithm.params_label.split(", ") if part in _LABEL_SCALARS)
    scalars += tuple(written for name, written in SCALAR_OPTIONS.items() if name in algorithm.options)
    return Hyperparameters(sizes, scalars)


def _indices(lines) -> set:
    """The size symbols that index growing loops (their iteration, not a size of the algorithm)."""
    return {s for loop in _loops(lines) for s in (loop.index, loop.trips) if s is not None}


def _layer_loops(lines) -> dict:
    """Layer-loop count → its variable (``L`` → ``l``): the loops whose count leads stacked parameters."""
    found = {}
    for loop in _loops(lines):
        found.setdefault(loop.count, loop.var)
    return found


def param_groups(algorithm, entry) -> tuple:
    """The parameters grouped as the paper lists them: ``(heading, entries)`` in order, a run of parameters
    stacked on a layer loop's count under ``for l ∈ [L]`` (each entry its slice: ``γ^1_l ∈ ℝ^(d_e)``), a run
    of one stage's (Swin's ``s1_…``) under ``stage 1``, the others under an empty heading.  ``entry(spec,
    index)`` writes one parameter (``index``: the slice's)."""
    import re
    loops = _layer_loops(algorithm.lines)
    groups = []
    for spec in algorithm.params:
        lead = spec.shape[0] if spec.shape else None
        var = loops.get(lead) if lead is not None and spec.shape and len(spec.shape) > 1 else None
        stage = re.match(r"s(\d+)_", spec.name)
        heading = (lead, var) if var is not None else (("stage", stage.group(1)) if stage else None)
        if not groups or groups[-1][0] != heading:
            groups.append((heading, []))
        groups[-1][1].append(entry(spec, var))
    return tuple((heading, tuple(entries)) for heading, entries in groups)


def param_group_entries(algorithm, latex=False) -> tuple:
    """(heading, entries) of :func:`param_groups`, written: ``for l ∈ [L]`` and ``γ^1_l ∈ ℝ^(d_e)``."""
    from dataclasses import replace

    from ..core.symbols import latex as sym_latex, text as sym_text
    from .names import symbol
    from .signature import signature_entry as _signature_entry

    def entry(spec, index):
        if index is None:
            return _signature_entry(spec, latex)
        sliced = replace(spec, shape=spec.shape[1:])
        return _signature_entry(sliced, latex).replace(symbol(spec.name, latex=latex),
                                                       symbol(spec.name, latex=latex, index=index), 1)
    out = []
    for heading, entries in param_groups(algorithm, entry):
        if heading is None:
            out.append(("", entries))
        elif heading[0] == "stage":
            out.append((rf"\text{{stage {heading[1]}}}" if latex else f"stage {heading[1]}", entries))
        else:
            count, var = heading
            out.append((rf"\text{{for }} {var} \in [{sym_latex(count)}]" if latex
                        else f"for {var} ∈ [{sym_text(count)}]", entries))
    return tuple(out)


def hyperparameter_entries(algorithm, latex=False) -> tuple:
    """The masks, then the sizes as one entry (``H, L, d_e ∈ ℕ``), then each scalar."""
    from .signature import signature_entry as _signature_entry
    found = hyperparameters(algorithm)
    entries = tuple(_signature_entry(s, latex) for s in algorithm.inputs if s.kind == "mask")
    sizes = found.latex()[:len(found.sizes)] if latex else found.text()[:len(found.sizes)]
    if sizes:
        entries += (", ".join(sizes) + (r" \in \mathbb{N}" if latex else " ∈ ℕ"),)
    return entries + tuple(x if latex else t for t, x in found.scalars)
