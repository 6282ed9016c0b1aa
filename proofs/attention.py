"""Attention (Algorithms 4 and 5): permutation equivariance, the order of the context, causality, and
grouped-query attention's execution — checked on the spec's own execution (numpy, float64).

Why no symbolic proof: each statement is about *every* permutation, every mask or every grouping of heads,
while the spec executes its loops over heads and positions numerically, and the symbolic meaning of the ops
covers per-column ops, not a softmax over a permuted, masked score matrix.  So these are property-tested on
seeded random permutations, masks and weights; each method names its seeds and sizes.
"""

from __future__ import annotations

import numpy as np

from .checks import gap as gap_of, seeded
from .theorem import Outcome, Theorem

TOL = 1e-10

#: Why the theorems here are property-tested, in each method's words.
WHY = ("no symbolic proof: the statement is about every permutation (or mask, or grouping) and the spec executes "
       "its loops over heads and positions numerically; the ops' symbolic meaning covers per-column ops only")


def _attention(name, rng, n, n_z=None, d=3, **options):
    """The spec's algorithm and random arguments at ℓ_x = n (ℓ_z = n_z; Z omitted: Z = X), with biases."""
    from formal import algorithms
    from formal.algorithms.attention import kv_heads
    algorithm = algorithms.get(name, **options)
    shapes = {"X": (d, n), "W_q": (d, d), "W_k": (d, d), "W_v": (d, d), "b_q": (d,), "b_k": (d,), "b_v": (d,)}
    if name == "mhattention":
        heads, kv = 2, kv_heads(options.get("n_kv_heads"))
        kv = heads if kv is None else int(kv)
        shapes = {"X": (d, n), "W_q": (heads, 2, d), "W_k": (kv, 2, d), "W_v": (kv, 2, d), "W_o": (d, heads * 2),
                  "b_q": (heads, 2), "b_k": (kv, 2), "b_v": (kv, 2), "b_o": (d,)}
    if n_z is not None:
        shapes["Z"] = (d, n_z)
    return algorithm, {k: rng.normal(size=s) for k, s in shapes.items()}


def _mask(kind, n_z, n_x, rng=None):
    """The spec's causal mask (formal.core.masks.causal, top-left: t_z ≤ t_x), a random 0/1 mask, or the
    causal mask shifted by one (t_z ≤ t_x + 1, the twin's)."""
    from formal.core import masks
    if kind == "random":
        return (rng.random((n_z, n_x)) < 0.6).astype(float)
    causal = masks.causal(n_z, n_x, align="top-left").astype(float)
    if kind != "shifted":
        return causal
    t_z, t_x = np.arange(n_z)[:, None], np.arange(n_x)[None, :]
    return (t_z <= t_x + 1).astype(float)


def _permutation(rng, n):
    """A random permutation of n ≥ 2 positions other than the identity."""
    while True:
        perm = rng.permutation(n)
        if np.any(perm != np.arange(n)):
            return perm


ALGORITHMS = (("attention", {}), ("mhattention", {}), ("mhattention", {"n_kv_heads": 1}))


def _equivariant(perturbed):
    """Unmasked: A(XP) = A(X)P.  Masked: A(XP | Mask[P, P]) = A(X | Mask) P, for a random and the causal mask.
    The twin keeps a causal mask in place while the tokens move."""
    def check(rng, n):
        perm = _permutation(rng, n)
        for name, options in ALGORITHMS:
            algorithm, args = _attention(name, rng, n, **options)
            causal = _mask("causal", n, n)
            masks = [("the mask kept", causal)] if perturbed else \
                [("no mask", None), ("a random mask", _mask("random", n, n, rng)), ("the causal mask", causal)]
            for what, mask in masks:
                base = algorithm(**args, **({} if mask is None else {"mask": mask}))
                moved_mask = {} if mask is None else {"mask": mask if perturbed else mask[np.ix_(perm, perm)]}
                moved = algorithm(**dict(args, X=args["X"][:, perm]), **moved_mask)
                gap = gap_of(moved, base[:, perm])
                if gap > TOL:
                    return f"{algorithm.label} with {what}: permuting the tokens by {perm.tolist()} moved the " \
                           f"output by {gap:.3g}"
    return seeded(check, seeds=10, sizes=(2, 3, 5, 8))


def _context_order(perturbed):
    """Unmasked: A(X | ZP) = A(X | Z).  Masked: permuting Z and the mask's rows (Mask[P, :]) changes nothing.
    The twin keeps a causal mask in place while the context moves."""
    def check(rng, n):
        perm = _permutation(rng, n)
        for name, options in ALGORITHMS:
            algorithm, args = _attention(name, rng, 3, n_z=n, **options)
            masks = [("the mask kept", _mask("causal", n, 3))] if perturbed else \
                [("no mask", None), ("a random mask", _mask("random", n, 3, rng))]
            for what, mask in masks:
                base = algorithm(**args, **({} if mask is None else {"mask": mask}))
                moved_mask = {} if mask is None else {"mask": mask if perturbed else mask[perm, :]}
                moved = algorithm(**dict(args, Z=args["Z"][:, perm]), **moved_mask)
                gap = gap_of(moved, base)
                if gap > TOL:
                    return f"{algorithm.label} with {what}: permuting the context by {perm.tolist()} moved the " \
                           f"output by {gap:.3g}"
    return seeded(check, seeds=10, sizes=(2, 3, 5, 8), label="ℓ_z")


def _causal(perturbed):
    from formal import algorithms
    from formal.sampling.examples import example

    def check(rng, n):
        t = int(rng.integers(n - 1))
        for name, options in ALGORITHMS:
            algorithm, args = _attention(name, rng, n, **options)
            args["mask"] = _mask("shifted" if perturbed else "causal", n, n)
            later = args["X"].copy()
            later[:, t + 1:] += rng.normal(size=later[:, t + 1:].shape)
            gap = gap_of(algorithm(**dict(args, X=later))[:, :t + 1], algorithm(**args)[:, :t + 1])
            if gap > TOL:
                return f"{algorithm.label}: columns 0…{t} moved by {gap:.3g} when only columns after {t} changed"
        if not perturbed:  # Algorithm 10, whose mask is its own
            ex = example(algorithms.get("dtransformer"), int(rng.integers(2**31)), small=n, pins={"ell": n})
            x = ex.arguments["x"]
            vocab = ex.sizes["N_V"]
            later = x.copy()
            later[t + 1:] = (later[t + 1:] + 1) % vocab
            base, moved = ex.algorithm(**ex.arguments), ex.algorithm(**dict(ex.arguments, x=later))
            gap = gap_of(moved[:, :t + 1], base[:, :t + 1])
            if vocab > 1 and gap > TOL:
                return f"dtransformer: columns 0…{t} moved by {gap:.3g} when only tokens after {t} changed"
    return seeded(check, seeds=10, sizes=(2, 3, 5, 8))


def _groups(heads):
    """Every (H, g) with H ≤ ``heads`` and g dividing H."""
    return [(h, g) for h in range(1, heads + 1) for g in range(1, h + 1) if h % g == 0]


def _gqa(perturbed, *, heads=6, seeds=2):
    """GQAttention(n_kv_heads = g) against Algorithm 5 whose K/V weights and biases repeat each K/V head: head h
    uses group ⌊h/(H/g)⌋ (the twin: h mod g)."""
    from formal import algorithms
    d, n = 3, 4
    for H, g in _groups(heads):
        grouped, full = algorithms.get("mhattention", n_kv_heads=g), algorithms.get("mhattention")
        group = np.arange(H) % g if perturbed else np.arange(H) // (H // g)
        for seed in range(seeds):
            rng = np.random.default_rng([seed, H, g])
            shapes = {"X": (d, n), "W_q": (H, 2, d), "W_k": (g, 2, d), "W_v": (g, 2, d), "W_o": (d, H * 2),
                      "b_q": (H, 2), "b_k": (g, 2), "b_v": (g, 2), "b_o": (d,)}
            args = {k: rng.normal(size=s) for k, s in shapes.items()}
            args["mask"] = _mask("random", n, n, rng)
            repeated = {k: args[k][group] for k in ("W_k", "W_v", "b_k", "b_v")}
            gap = gap_of(grouped(**args), full(**dict(args, **repeated)))
            if gap > TOL:
                return Outcome(False, f"H = {H}, n_kv_heads = {g}, seed {seed}: query head h reading K/V head "
                                      f"{'h mod' if perturbed else '⌊h/(H/g)⌋ of'} g = {group.tolist()} differs "
                                      f"from grouped-query attention by {gap:.3g}")
    return Outcome(True, f"equal (|Δ| ≤ {TOL:g}) at every H ≤ {heads} and every n_kv_heads dividing it, "
                         f"{seeds} seeds each, a random mask")


THEOREMS = [
    Theorem("attention-permutation-equivariant",
            "Self-attention (Algorithms 4 and 5, Z = X) is permutation-equivariant: without a mask, permuting the "
            "tokens permutes the output columns alike; with a mask, permuting the tokens and the mask's rows and "
            "columns alike (Mask[P, P]) does.",
            r"\mathrm{Attention}(X P \mid X P) = \mathrm{Attention}(X \mid X)\,P, \quad "
            r"\mathrm{Attention}(X P \mid X P, \mathrm{Mask}[P, P]) = \mathrm{Attention}(X \mid X, \mathrm{Mask})\,P",
            ("attention", "mhattention"), "property-tested",
            "the spec's execution (float64) of Algorithm 4, Algorithm 5 and its multi-query form, 10 seeds at each of "
            "ℓ = 2, 3, 5, 8: a random permutation (not the identity), no mask, a random mask and the causal mask, "
            f"|Δ| ≤ {TOL:g}; {WHY}",
            "With a causal mask kept in place, self-attention is permutation-equivariant.", _equivariant),
    Theorem("attention-context-order",
            "Attention does not depend on the order of the context Z: without a mask, permuting Z changes nothing; "
            "with a mask, permuting Z and the mask's rows alike (Mask[P, :]) changes nothing.",
            r"\mathrm{Attention}(X \mid Z P) = \mathrm{Attention}(X \mid Z), \quad "
            r"\mathrm{Attention}(X \mid Z P, \mathrm{Mask}[P, :]) = \mathrm{Attention}(X \mid Z, \mathrm{Mask})",
            ("attention", "mhattention"), "property-tested",
            "the spec's execution of Algorithm 4, Algorithm 5 and its multi-query form, 10 seeds at each of "
            f"ℓ_z = 2, 3, 5, 8: a random permutation, no mask and a random mask, |Δ| ≤ {TOL:g}; {WHY}",
            "With a causal mask kept in place, attention does not depend on the order of Z.", _context_order),
    Theorem("causal-masking",
            "With the causal mask, output column t does not depend on input columns after t (Algorithms 4, 5 "
            "and 10).",
            r"\mathrm{Mask}[t_z, t_x] = [t_z \le t_x] \Rightarrow \partial \tilde V_{:, t} / \partial X_{:, t'} = 0"
            r"\ \text{for } t' > t",
            ("attention", "mhattention", "dtransformer"), "property-tested",
            "the spec's execution with the spec's causal mask (formal.core.masks.causal), 10 seeds at each of "
            "ℓ = 2, 3, 5, 8, the columns (tokens) after a random t changed; no symbolic proof: the statement is "
            "about every input, and the spec executes the masked softmax and Algorithm 10's layers numerically",
            "With the mask shifted by one (t_z ≤ t_x + 1), output t does not depend on columns after t.", _causal),
    Theorem("gqa-repeats-kv-heads",
            "Grouped-query attention (Algorithm 5 with n_kv_heads = g) equals Algorithm 5 whose key/value weights "
            "and biases repeat each key/value head H/g times: query head h uses key/value head ⌊h/(H/g)⌋ (Ainslie "
            "et al.; Hugging Face's repeat_kv).",
            r"\mathrm{GQAttention}_g(X \mid W_{kv}) = \mathrm{MHAttention}(X \mid W_{kv}^{\lfloor h/(H/g) \rfloor})",
            ("mhattention",), "property-tested",
            f"the spec's execution at every H ≤ 6 and every g dividing H, 2 seeded weights each, a random mask, "
            f"|Δ| ≤ {TOL:g}; {WHY}",
            "Query head h uses key/value head h mod g.", _gqa),
]
