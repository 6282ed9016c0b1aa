"""The numeric claims of ``formal-transformers check`` (:mod:`formal.claims`), registered through the
``formal_transformers.claims`` entry points so that ``formal`` imports nothing of ``reference``:

``property``
    a property of the spec itself on seeded examples (numpy, float64): ``permutation_equivariant`` —
    permuting the tokens permutes the output columns alike (self-attention: Z = X);
    ``permutation_invariant`` — permuting the tokens leaves the output as it was; ``causal`` — output
    column t does not move when only tokens after t change.  The examples grow from the smallest sizes, so
    the first counterexample found is the smallest tried; it is reported with its sizes and seed.
``implementation``
    ``conform``'s verdict on the user's function (a ``path.py:function`` relative to the claims file).

Each returns ``(holds, derived, reason)``.  Neither needs torch.
"""

from __future__ import annotations

import os

import numpy as np

from formal import algorithms
from formal.core import masks
from formal.claims.claim import ClaimError
from formal.errors import FormalError, shown

__all__ = ["check_property", "check_implementation", "TOKEN_INPUTS", "SIZES", "SEEDS"]

#: The argument whose columns are the tokens, per algorithm a property claim may name.
TOKEN_INPUTS = {"attention": "X", "mhattention": "X", "etransformer": "x", "dtransformer": "x",
                "attention_pooling": "Z", "rnn_layer": "X", "rnn": "X", "seq2seq": "x",
                "show_attend_tell_loss": "A"}
#: The size bounds of the examples, smallest first, and the seeds tried at each.
SIZES = (2, 3, 4, 6, 8)
SEEDS = 4
#: The masks a property claim may name: "full" and the spec's named masks (formal.core.masks.NAMED).
MASKS = ("full",) + masks.NAMED


def _examples(claim):
    from .examples import example
    name = claim.subject["algorithm"]
    if name not in TOKEN_INPUTS:
        raise ClaimError(f"property claims are checked for {', '.join(TOKEN_INPUTS)}; not {shown(name)}")
    mask = claim.subject.get("mask", "full")
    if mask not in MASKS:
        raise ClaimError(f"mask = {shown(mask)} is not one of {', '.join(MASKS)}")
    if mask != "full" and name not in ("attention", "mhattention"):
        raise ClaimError(f"mask applies to attention and mhattention; {name} sets its own")
    seed = claim.subject.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ClaimError(f"seed = {shown(seed)} must be an integer from 0 to 2**32 - 1")
    algorithm = algorithms.get(name, **claim.subject.get("options", {}))
    for small in SIZES:
        for s in range(seed, seed + SEEDS):
            ex = example(algorithm, s, small=small)
            arguments = dict(ex.arguments)
            if "Z" in ex.algorithm.defaults and "Z" in arguments:  # self-attention: the context is the tokens
                del arguments["Z"]
                ex.sizes.update(d_z=ex.sizes["d_x"], ell_z=ex.sizes["ell_x"])
            if "mask" in arguments:
                arguments["mask"] = None if mask in ("full", "bidirectional") else mask
            if arguments[TOKEN_INPUTS[name]].shape[-1] >= 2:
                yield ex, arguments, s


def _tolerance(out) -> float:
    return 1e-9 * max(1.0, float(np.max(np.abs(out)))) if out.size else 1e-9


def check_property(claim):
    prop = claim.assertion[1]
    name = claim.subject["algorithm"]
    token = TOKEN_INPUTS[name] if name in TOKEN_INPUTS else None
    tried = 0
    for ex, arguments, seed in _examples(claim):
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
            moved = np.asarray(ex.algorithm(**dict(arguments, **{token: x[..., perm]})), dtype=np.float64)
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
        raise ClaimError(f"no example of {name} could be run for the property")
    return (True, f"held on {tried} examples",
            f"held on {tried} seeded examples with sizes up to {SIZES[-1]} (float64, tolerance 1e-9 × max |output|); "
            "a check on examples, not a proof")


def check_implementation(claim):
    from .conform import conform
    target = claim.subject["implementation"]
    if not isinstance(target, str) or ":" not in target:
        raise ClaimError(f"implementation = {shown(target)} must be \"path/to/file.py:function\"")
    path, _, function = target.rpartition(":")
    if path.endswith(".py") and not os.path.isabs(path):
        target = f"{os.path.join(claim.base_dir, path)}:{function}"
    seed = claim.subject.get("seed", 0)
    try:
        report = conform(target, claim.subject["algorithm"], options=claim.subject.get("options") or None,
                         seed=seed)
    except FormalError as exc:
        raise ClaimError(str(exc)) from None
    total = report.examples + report.boundary - len(report.undefined)
    if report.ok:
        return True, f"conform: pass on {total} examples", f"every property of conform held on {total} examples"
    f = report.failure
    return (False, f"conform: {f['property']} fails",
            f"{f['property']}: {f['message']}; smallest failing configuration: {f['example']} (example seed "
            f"{f['example_seed']}, seed {report.seed})")
