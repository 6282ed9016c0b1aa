"""The numeric claims of ``formal-transformers check`` (:mod:`formal.tools.claims`), decided on ``reference``'s
conformance checks (:func:`formal.tools.claims.decide.decide` imports this module only for them):

``property``
    a property of the spec itself on seeded examples (numpy, float64): ``permutation_equivariant`` —
    permuting the tokens permutes the output columns alike (self-attention: Z = X);
    ``permutation_invariant`` — permuting the tokens leaves the output as it was; ``causal`` — output
    column t does not move when only tokens after t change.  The tokens are the input the algorithm object
    gives the role ``"tokens"`` (:mod:`reference.records`); an algorithm without one, or with several
    outputs, has no property claims.  The examples grow from the smallest sizes, so the first counterexample
    found is the smallest tried; it is reported with its sizes and seed.
``implementation``
    ``conform``'s verdict on the user's function (a ``path.py:function`` relative to the claims file), with
    the sizes it fixes and ties (``sizes = {H = 4, d_attn = "d_x/H"}``, as ``conform --size``).

Each returns ``(holds, derived, reason)``.  Neither needs torch.
"""

from __future__ import annotations

import os

import numpy as np

from reference.records import permute, record, records

from ... import algorithms
from ...core import masks
from ...errors import ConfigError, FormalError, shown
from .claim import ClaimError

__all__ = ["check_property", "check_implementation", "SIZES", "SEEDS"]

#: The size bounds of the examples, smallest first, and the seeds tried at each.
SIZES = (2, 3, 4, 6, 8)
SEEDS = 4
#: The masks a property claim may name: "full" and the spec's named masks (formal.core.masks.NAMED).
MASKS = ("full",) + masks.NAMED


def _claimable(subject) -> bool:
    """Whether a property claim can be decided on a record: one output, and an input of role "tokens"."""
    return subject.tokens is not None and len(subject.algorithm.outputs) == 1


def _with_tokens() -> str:
    """The algorithms property claims apply to, said in words."""
    return ", ".join(r.name for r in records() if _claimable(r))


def _masked() -> str:
    """The algorithms property claims apply to that take a mask, said in words."""
    names = [r.name for r in records() if _claimable(r) and any(s.kind == "mask" for s in r.algorithm.inputs)]
    return " and ".join(names) if len(names) <= 2 else ", ".join(names)


#: The largest size a property claim may pin (its examples run in float64 on this machine).
MAX_PINNED = 64


def _pins(claim, subject) -> dict:
    """The sizes the claim fixes (``sizes = {ell_x = 1}``): positive integers up to :data:`MAX_PINNED`, each a
    size of the algorithm; the examples draw the others."""
    sizes = claim.subject.get("sizes", {})
    known = {str(s) for s in subject.algorithm.symbols}
    pins = {}
    from ...guards.numbers import size
    for name, value in sizes.items():
        if name not in known:
            raise ClaimError(f"{subject.name} has no size {shown(name)}; its sizes: {', '.join(sorted(known))}")
        if isinstance(value, (str, float)):     # the gate: "4", "2**2" and 4.0 are 4
            try:
                value = size(value, f"size {name}", names=())
            except ConfigError as error:
                raise ClaimError(f"size {name} = {shown(value)}: a property claim runs examples, so it binds sizes "
                                 f"to integers from 1 to {MAX_PINNED} ({error})") from None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PINNED:
            raise ClaimError(f"size {name} = {shown(value)}: a property claim runs examples, so it binds sizes to "
                             f"integers from 1 to {MAX_PINNED}")
        pins[name] = value
    return pins


def _self_attention(algorithm, pins) -> bool:
    """Whether the examples feed the tokens as their own context (Z = X): unless the claim pins a size of the
    context (ℓ_z, d_z) that its source (ℓ_x, d_x) is not pinned to as well; then the context is an input of its
    own, which the property leaves in place while the tokens move."""
    for default, source in algorithm.defaults.items():
        for d, s in zip(algorithm.spec(default).shape, algorithm.spec(source).shape):
            if str(d) in pins and pins[str(d)] != pins.get(str(s)):
                return False
    return True


def _examples(claim, subject, pins):
    from ...sampling.examples import example
    name, token = subject.name, subject.tokens
    mask = claim.subject.get("mask", "full")
    if mask not in MASKS:
        raise ClaimError(f"mask = {shown(mask)} is not one of {', '.join(MASKS)}")
    mask_inputs = [s.name for s in subject.algorithm.inputs if s.kind == "mask"]
    if mask != "full" and not mask_inputs:
        raise ClaimError(f"mask applies to {_masked()}; {name} sets its own")
    seed = claim.subject.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ClaimError(f"seed = {shown(seed)} must be an integer from 0 to 2**32 - 1")
    self_attention = _self_attention(subject.algorithm, pins)
    for small in SIZES:
        for s in range(seed, seed + SEEDS):
            ex = example(subject.algorithm, s, small=small, pins={**pins, "cross": not self_attention})
            if any(ex.sizes.get(k) != v for k, v in pins.items()):
                continue        # the algorithm's constraints moved a pinned size: not an example of the claim
            arguments = dict(ex.arguments)
            for default, source in ex.algorithm.defaults.items():  # self-attention: the context is the tokens
                if default in arguments and self_attention:
                    del arguments[default]
                    ex.sizes.update({str(d): ex.sizes[str(e)] for d, e in zip(ex.algorithm.spec(default).shape,
                                                                              ex.algorithm.spec(source).shape)})
            for name_of_mask in mask_inputs:
                arguments[name_of_mask] = None if mask in ("full", "bidirectional") else mask
            if arguments[token].shape[-1] >= 2:
                yield ex, arguments, s


def _token_count(subject, pins):
    """The number of tokens the pinned sizes fix, or None where they leave it free."""
    axis = subject.algorithm.spec(subject.tokens).shape[-1]
    names = {str(f) for f in getattr(axis, "free_symbols", ())}
    if not names <= set(pins):
        return None
    return int(axis.subs({f: pins[str(f)] for f in axis.free_symbols})) if names else int(axis)


def _token_axis(subject, prop, pins) -> None:
    """A property that compares the output token by token needs an output whose last axis runs over the tokens
    at the claim's sizes (``pins``): a convolution's ``ℓ − k + 3`` columns are its ℓ tokens' at ``k = 3``."""
    if prop == "permutation_invariant":
        return
    import sympy as sp
    out = subject.algorithm.outputs[0].shape
    axis = subject.algorithm.spec(subject.tokens).shape[-1]
    at = {s: pins[str(s)] for s in set().union(*(sp.sympify(d).free_symbols for d in (*out, axis)))
          if str(s) in pins}
    if not out or sp.simplify(sp.sympify(out[-1]).xreplace(at) - sp.sympify(axis).xreplace(at)) != 0:
        shape = "a scalar" if not out else f"of shape ({', '.join(map(str, out))})"
        raise ClaimError(f"{prop} compares the output token by token, and {subject.name}'s output is {shape}, with "
                         f"no axis over its tokens {subject.tokens}: only permutation_invariant applies to it")


def _subject(claim):
    """The record of the claim's algorithm (its variant), which must have tokens for a property to act on."""
    name = claim.subject["algorithm"]
    if name not in {r.name for r in records()}:
        raise ClaimError(f"property claims are checked for {_with_tokens()}; not {shown(name)}")
    subject = record(algorithms.get(name, **claim.subject.get("options", {})))
    if subject.tokens is None:
        raise ClaimError(f"{name} has no input of role \"tokens\" for a property to permute or perturb; property "
                         f"claims are checked for {_with_tokens()}")
    if not _claimable(subject):
        raise ClaimError(f"{name} has several outputs, which a property does not compare; property claims are "
                         f"checked for {_with_tokens()}")
    return subject


def _tolerance(out) -> float:
    return 1e-9 * max(1.0, float(np.max(np.abs(out)))) if out.size else 1e-9


def check_property(claim):
    prop = claim.assertion[1]
    subject = _subject(claim)
    pins = _pins(claim, subject)
    _token_axis(subject, prop, pins)
    name, token = subject.name, subject.tokens
    if _token_count(subject, pins) == 1:
        return (True, "holds vacuously",
                f"the sizes give {name} a single token: a permutation of one token is the identity, and no token "
                "comes after it")
    tried = 0
    for ex, arguments, seed in _examples(claim, subject, pins):
        try:
            base = np.asarray(ex.algorithm(**arguments), dtype=np.float64)
        except FormalError:
            continue
        tried += 1
        rng = np.random.default_rng([seed, 7])
        x = arguments[token]
        n = x.shape[-1]
        sizes = ", ".join(f"{k} = {v}" for k, v in sorted(ex.sizes.items()))
        if prop in ("permutation_equivariant", "permutation_invariant"):
            perm = np.roll(np.arange(n), 1)
            moved = np.asarray(ex.algorithm(**permute(ex.algorithm, arguments, token, perm)), dtype=np.float64)
            want = base[..., perm] if prop == "permutation_equivariant" else base
            gap = float(np.max(np.abs(moved - want)))
            if gap > _tolerance(base):
                return (False, f"counterexample at {sizes} (seed {seed})",
                        f"permuting the tokens by {perm.tolist()} moved the output by {gap:.3g} from the "
                        f"{'permuted' if prop == 'permutation_equivariant' else 'unpermuted'} output: the smallest "
                        f"counterexample tried, at {sizes}, example seed {seed}")
        else:
            t = int(rng.integers(n - 1))
            later = x.copy()
            if later.dtype.kind in "iu":
                vocab = ex.sizes["N_V"]
                later[t + 1:] = (later[t + 1:] + 1) % vocab if vocab > 1 else later[t + 1:]
            else:
                later[..., t + 1:] += rng.normal(size=later[..., t + 1:].shape)
            moved = np.asarray(ex.algorithm(**dict(arguments, **{token: later})), dtype=np.float64)
            gap = float(np.max(np.abs(moved[..., :t + 1] - base[..., :t + 1])))
            if gap > _tolerance(base):
                return (False, f"counterexample at {sizes} (seed {seed})",
                        f"output columns 0…{t} moved by {gap:.3g} when only tokens after {t} changed: the smallest "
                        f"counterexample tried, at {sizes}, example seed {seed}")
    if not tried:
        raise ClaimError(f"no example of {name} could be run for the property"
                         + (f" at {', '.join(f'{k} = {v}' for k, v in sorted(pins.items()))}" if pins else ""))
    at = f"at {', '.join(f'{k} = {v}' for k, v in sorted(pins.items()))}, the other sizes" if pins else "with sizes"
    return (True, f"held on {tried} examples",
            f"held on {tried} seeded examples {at} up to {SIZES[-1]} (float64, tolerance 1e-9 × max |output|); "
            "a check on examples, not a proof")


def check_implementation(claim):
    from reference.conformance.conform import conform
    target = claim.subject["implementation"]
    if not isinstance(target, str) or ":" not in target:
        raise ClaimError(f"implementation = {shown(target)} must be \"path/to/file.py:function\"")
    path, _, function = target.rpartition(":")
    if path.endswith(".py") and not os.path.isabs(path):
        target = f"{os.path.join(claim.base_dir, path)}:{function}"
    seed = claim.subject.get("seed", 0)
    try:
        report = conform(target, claim.subject["algorithm"], options=claim.subject.get("options") or None,
                         seed=seed, sizes=claim.subject.get("sizes") or None)
    except FormalError as exc:
        raise ClaimError(str(exc)) from None
    total = report.examples + report.boundary - len(report.undefined)
    if report.ok:
        return True, f"conform: pass on {total} examples", f"every property of conform held on {total} examples"
    f = report.failure
    return (False, f"conform: {f['property']} fails",
            f"{f['property']}: {f['message']}; smallest failing configuration: {f['example']} (example seed "
            f"{f['example_seed']}, seed {report.seed})")
