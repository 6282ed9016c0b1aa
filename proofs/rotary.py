"""Rotary position embeddings (:mod:`formal.ops.rotary`): with them, attention scores depend on the positions only
through their difference — for the Rotary op itself, and end to end in attention, multi-head and grouped-query
attention and cached decoding.

``rope-relative-position`` is about the op.  Each rotated pair (x_a, x_b) turns by the angle t·ω_i and is scaled by
σ_i (YaRN's 0.1·ln s + 1, else 1): (x_a, x_b) ↦ σ_i(x_a cos tω_i − x_b sin tω_i, x_b cos tω_i + x_a sin tω_i).  For a
generic pair, sympy proves (σR_m q)ᵀ(σR_n k) = σ² qᵀR_{n−m} k and that shifting both positions by c changes nothing
— exactly, for every angle, entry, position and shift, once cos and sin are written as exponentials.  That the op
*is* this map — rows paired as its style says, the rows past d_rot passed through, the angle t·ω_i with ω_i and σ_i
the same at every position — is checked on its execution: σ_i and ω_i are read off the op at position 1, and the
op's columns at positions past the scaling rules' N must be that map.  A head's score is then a sum of pair scores
(and of the passed-through rows' products), each a function of n − m.  Dynamic NTK is left out, and the statement
says why, which the check shows by a counterexample: past N its frequencies follow the last position rotated, and
the scores move with a shift.

``rope-shift-invariance`` is end to end, on the algorithms' execution: their positions are 0 … ℓ − 1 inside
(ℓ_c … for a cache's new tokens), so a shift of every position by c is c tokens put in front, which the mask hides
from every query.

Why the end-to-end statement is property-tested: it is about every input, mask and shift, and the spec executes
attention's loops over heads and its masked softmax numerically; the ops' symbolic meaning covers per-column ops,
and the Rotary op has none.
"""

from __future__ import annotations

import itertools

import numpy as np

from .checks import gap as gap_of, seeded
from .theorem import Outcome, Theorem

#: |Δ| allowed between two float64 computations of one score or output.
TOL = 1e-9
#: The rows of the head the op is checked on: rope_fraction 1, 1/2 and 1/4 rotate 16, 8 and 4 of them.
WIDTH = 16
FRACTIONS = (1.0, 0.5, 0.25)
#: The scaling rules whose frequencies do not depend on the positions (None: ω_i = θ^(−2i/d_rot)).
STATIC = (None, "linear", "yarn", "llama3")
#: The scaling rules' original context length N (and factor s): the positions drawn go past N, to 4N.
N, FACTOR = 16, 4.0
#: Seeds of the op's execution checked for each rotation.
OP_SEEDS = 3


def _rotations(scalings=STATIC):
    """Every rotation the op-level theorem is checked on: both pairings, each fraction, each scaling rule of
    ``scalings``, at θ = 10 (every pair turns visibly within a few positions) and θ = 10000."""
    from formal.ops.rotary import ROTARY_STYLES, Rotation
    return [Rotation(style, theta=theta, fraction=fraction, scaling=scaling, factor=FACTOR, original=N)
            for style, fraction, scaling, theta in itertools.product(ROTARY_STYLES, FRACTIONS, scalings,
                                                                     (10.0, 10000.0))]


def _turn(a, b, angle, cos, sin):
    """The pair (a, b) turned by ``angle``, as the module docstring of :mod:`formal.ops.rotary` writes it (``cos``
    and ``sin`` sympy's or numpy's)."""
    return a * cos(angle) - b * sin(angle), b * cos(angle) + a * sin(angle)


def _pairs(style, rows):
    """The rows of every rotated pair, as the style declares them: (i, i + rows/2) or (2i, 2i + 1)."""
    half = rows // 2
    return [(i, i + half) if style == "half" else (2 * i, 2 * i + 1) for i in range(half)]


# ---------------------------------------------------------------------------------------------- the pair, symbolic
def _pair_identity(angle) -> Outcome:
    """For a generic pair turned by ``angle(t, ω)`` and scaled by σ: R_aᵀR_b = R_{b−a} (any angles), and the score
    at (m + c, n + c) equals the score at (m, n).  Each difference is rewritten in exponentials and expanded: 0 is
    an exact proof; otherwise the first assignment of small integers where it is nonzero is the counterexample."""
    import sympy as sp
    q_a, q_b, k_a, k_b, m, n, c, omega, sigma = sp.symbols("q_a q_b k_a k_b m n c omega sigma", real=True)

    def score(s, t):
        (qa, qb), (ka, kb) = (_turn(q_a, q_b, angle(s, omega), sp.cos, sp.sin),
                              _turn(k_a, k_b, angle(t, omega), sp.cos, sp.sin))
        return sigma**2 * (qa * ka + qb * kb)

    turned = _turn(k_a, k_b, angle(n, omega) - angle(m, omega), sp.cos, sp.sin)
    steps = (("(σR_m q)ᵀ(σR_n k) = σ² qᵀR_{n−m} k", score(m, n), sigma**2 * (q_a * turned[0] + q_b * turned[1])),
             ("the score at (m + c, n + c) = the score at (m, n)", score(m + c, n + c), score(m, n)))
    for what, lhs, rhs in steps:
        if sp.expand((lhs - rhs).rewrite(sp.exp)) == 0:
            continue
        for values in itertools.product(range(3), range(3), range(1, 3), ((1, 0), (0, 1)), ((1, 0), (0, 1))):
            (mv, nv, cv, (qa, qb), (ka, kb)) = values
            at = {m: mv, n: nv, c: cv, omega: 1, sigma: 1, q_a: qa, q_b: qb, k_a: ka, k_b: kb}
            gap = sp.simplify((lhs - rhs).xreplace(at))
            if abs(sp.N(gap)) > 1e-9:
                return Outcome(False, f"{what}: at m = {mv}, n = {nv}, c = {cv}, ω = 1, σ = 1, q = ({qa}, {qb}), "
                                      f"k = ({ka}, {kb}) the sides differ by {gap} ≈ {float(sp.N(gap)):.3g}")
        return Outcome.undecided(f"{what}: the difference does not expand to 0, and no small assignment makes it "
                                 "nonzero")
    return Outcome(True, "for a generic pair (sympy, exact: cos and sin as exponentials), R_mᵀR_n = R_{n−m} and the "
                         "score is the same at (m + c, n + c) as at (m, n), for every angle, entry, position and shift")


# ---------------------------------------------------------------------------------------------- the op, executed
def _op(rotation):
    """The algorithm ``Y ← RoPE(X, t)``: the Rotary op on its own over a head of :data:`WIDTH` rows."""
    from formal.core.shapes import TensorSpec
    from formal.core.symbols import d_attn, ell, ell_max
    from formal.engine.algorithm import Algorithm, Assign
    from formal.ops.rotary import rotate
    return Algorithm(number=0, name="rope", display="RoPE", summary="the spec's Rotary op on its own",
                     inputs=[TensorSpec("X", (d_attn, ell), doc="one column per token"),
                             TensorSpec("t", (ell,), "index", "the columns' positions", bound=ell_max)],
                     params=[], output=TensorSpec("Y", (d_attn, ell), doc="RoPE(X, t)"),
                     lines=[Assign("Y", rotate("X", "t", rotation), returns=True)])


def _rope(op, x, t):
    """The op's execution on the columns ``x`` at the positions ``t``."""
    t = np.asarray(t, dtype=np.int64)
    return op(X=x, t=t, ell_max=int(t.max()) + 1)


def _read(op, rotation):
    """σ_i and ω_i (mod 2π) of every pair, read off the op at position 1: where it sends the pair's first row."""
    y = _rope(op, np.eye(WIDTH), np.ones(WIDTH))
    a, b = (list(rows) for rows in zip(*_pairs(rotation.style, rotation.rotated(WIDTH))))
    return np.hypot(y[a, a], y[b, a]), np.arctan2(y[b, a], y[a, a])


def _tie(op, rotation, rng) -> str | None:
    """None when the op's columns at random positions (0 … 4N) are the per-pair map with the σ_i and ω_i read at
    position 1 and the other rows passed through; else where they are not."""
    sigma, omega = _read(op, rotation)
    x, t = rng.normal(size=(WIDTH, 6)), rng.integers(0, 4 * N, size=6)
    want = x.copy()
    for (a, b), s, w in zip(_pairs(rotation.style, rotation.rotated(WIDTH)), sigma, omega):
        want[a], want[b] = (s * v for v in _turn(x[a], x[b], t * w, np.cos, np.sin))
    gap = gap_of(_rope(op, x, t), want)
    if gap > TOL:
        return (f"{rotation.describe()}: at positions {t.tolist()} the op's columns differ by {gap:.3g} from its pairs "
                "turned by t·ω_i, ω_i as it turns them at position 1")
    return None


def _scores_move(op, rotation, rng, square=False) -> str | None:
    """Where RoPE(K, t_k + c)ᵀ RoPE(Q, t_q + c) differs from RoPE(K, t_k)ᵀ RoPE(Q, t_q) (positions 0 … 4N, a shift
    1 … 4N); with ``square`` every position p is rotated as p² (the twin's angle t²·ω)."""
    q, k = rng.normal(size=(WIDTH, 3)), rng.normal(size=(WIDTH, 4))
    t_q, t_k, c = rng.integers(0, 4 * N, size=3), rng.integers(0, 4 * N, size=4), int(rng.integers(1, 4 * N))

    def scores(shift):
        at = (lambda t: (t + shift) ** 2) if square else (lambda t: t + shift)
        return _rope(op, k, at(t_k)).T @ _rope(op, q, at(t_q))
    gap = gap_of(scores(c), scores(0))
    if gap > TOL:
        return (f"{rotation.describe()}: queries at {t_q.tolist()}, keys at {t_k.tolist()}, shifted by c = {c}"
                f"{' (rotated by the squares)' if square else ''}: the scores move by {gap:.3g}")
    return None


def _dynamic_moves() -> str | None:
    """The first rotation with dynamic NTK scaling whose scores move with a shift (a seed of :func:`_scores_move`),
    or None."""
    for rotation in _rotations(("dynamic",)):
        op = _op(rotation)
        for seed in range(OP_SEEDS):
            moved = _scores_move(op, rotation, np.random.default_rng([seed, 1]))
            if moved:
                return f"{moved} (seed {seed})"
    return None


def _relative(perturbed: bool) -> Outcome:
    """The pair identity (sympy), the op's execution tied to the pair map, the scores of the op under a shift, and
    dynamic NTK's scores moving.  The twin: the same with the angle t²·ω (the pair identity, and the op fed the
    squares of the positions)."""
    if perturbed:
        pair = _pair_identity(lambda t, omega: t**2 * omega)
        if pair.holds is not False:
            return pair
        for rotation in _rotations()[:4]:
            moved = _scores_move(_op(rotation), rotation, np.random.default_rng(0), square=True)
            if moved:
                return Outcome(False, f"{pair.detail}; and the op: {moved}")
        return Outcome(True, f"{pair.detail}; but the op's scores at the squares of the positions do not move")
    pair = _pair_identity(lambda t, omega: t * omega)
    if pair.holds is not True:
        return pair
    rotations = _rotations()
    for rotation in rotations:
        op = _op(rotation)
        for seed in range(OP_SEEDS):
            rng = np.random.default_rng([seed, 0])
            failure = _tie(op, rotation, rng) or _scores_move(op, rotation, rng)
            if failure:
                return Outcome(False, f"{failure} (seed {seed})")
    dynamic = _dynamic_moves()
    if dynamic is None:
        return Outcome.undecided("dynamic NTK's scores did not move with any shift tried, though past N its "
                                 "frequencies follow the last position")
    return Outcome(True, f"{pair.detail}; the op executes that map, pair by pair, for {len(rotations)} rotations "
                         f"(both pairings, fractions {', '.join(f'{f:g}' for f in FRACTIONS)}, no scaling, linear, "
                         f"YaRN, llama3, θ = 10 and 10000), {OP_SEEDS} seeds each, and its scores do not move with a "
                         f"shift (|Δ| ≤ {TOL:g}); dynamic NTK's do: {dynamic}")


# ---------------------------------------------------------------------------------------------- end to end
#: The rotary options of the end-to-end theorem, one set per seed in turn: both pairings, whole and partial heads,
#: each static scaling rule at N = 16 (so that the shifted positions pass N).  Fixed, not drawn: each set costs a
#: derivation of every algorithm it builds.
OPTIONS = ({"rope": "half"},
           {"rope": "interleaved", "rope_fraction": 0.5, "rope_theta": 10.0, "rope_scaling": "linear",
            "rope_factor": FACTOR},
           {"rope": "half", "rope_fraction": 0.5, "rope_scaling": "yarn", "rope_factor": FACTOR, "rope_original": N},
           {"rope": "interleaved", "rope_theta": 100.0, "rope_scaling": "llama3", "rope_factor": 8.0,
            "rope_original": N})
#: The sizes: token width d_x = d_z, heads H, d_attn (even: the fraction 1/2 rotates 4 rows of 8), d_mid.
D, HEADS, D_ATTN, D_MID = 3, 2, 8, 2
#: The end-to-end theorem's seeds at each number ℓ_x of real tokens (of X; of the cache).
SEEDS, SIZES = 8, (1, 2, 3, 5)


def _weights(rng, name, kv=None):
    """Seeded weights and biases of Algorithm 4 (``attention``) or of Algorithm 5 with ``kv`` key/value heads
    (None: one per head; the cached decoder's are Algorithm 5's)."""
    if name == "attention":
        shapes = {"W_q": (D_ATTN, D), "W_k": (D_ATTN, D), "W_v": (D_MID, D), "b_q": (D_ATTN,), "b_k": (D_ATTN,),
                  "b_v": (D_MID,)}
    else:
        g = HEADS if kv is None else kv
        shapes = {"W_q": (HEADS, D_ATTN, D), "W_k": (g, D_ATTN, D), "W_v": (g, D_MID, D), "W_o": (D, HEADS * D_MID),
                  "b_q": (HEADS, D_ATTN), "b_k": (g, D_ATTN), "b_v": (g, D_MID), "b_o": (D,)}
    return {k: rng.normal(size=s) for k, s in shapes.items()}


def _hidden(c, mask, c_x=None):
    """``mask`` (keys × queries) after ``c`` keys and ``c_x`` queries (default ``c``) put in front: no query sees
    the keys put in front, and the queries put in front see nothing."""
    c_x = c if c_x is None else c_x
    out = np.zeros((c + mask.shape[0], c_x + mask.shape[1]))
    out[c:, c_x:] = mask
    return out


def _masks(rng, n_z, n_x):
    """The all-ones mask and a random 0/1 mask over the real tokens."""
    return [("the all-ones mask", np.ones((n_z, n_x))), ("a random mask", (rng.random((n_z, n_x)) < 0.6) * 1.0)]


#: The algorithms without a cache the end-to-end theorem executes: Algorithm 4 with a context Z of its own (cross),
#: Algorithm 5 and its multi-query form as self-attention (Z = X).
CASES = (("attention", {}, "cross"), ("mhattention", {}, "self"), ("mhattention", {"n_kv_heads": 1}, "self"))


def _attention_moves(options, rng, n, c, keys_only, cases=CASES):
    """Each of ``cases`` (X of n tokens; a Z of its own has n + 1): c tokens before X and before Z (``keys_only``:
    before Z only, the twin's), hidden by the mask, against none."""
    from formal import algorithms
    X, Z = rng.normal(size=(D, n)), rng.normal(size=(D, n + 1))
    P_x, P_z = rng.normal(size=(D, c)), rng.normal(size=(D, c))
    c_x = 0 if keys_only else c
    for name, extra, kind in cases:
        context = Z if kind == "cross" else None
        algorithm = algorithms.get(name, **options, **extra)
        weights = _weights(rng, name, extra.get("n_kv_heads"))
        real_z = X if context is None else context
        for what, mask in _masks(rng, real_z.shape[1], n):
            base = algorithm(X=X, **({} if context is None else {"Z": context}), mask=mask, **weights)
            if context is None and not keys_only:      # self-attention: Z = X, the same c tokens before both
                moved = algorithm(X=np.concatenate([P_x, X], axis=1), mask=_hidden(c, mask), **weights)
            else:
                moved = algorithm(X=np.concatenate([P_x[:, :c_x], X], axis=1),
                                  Z=np.concatenate([P_z, real_z], axis=1), mask=_hidden(c, mask, c_x), **weights)
            gap = gap_of(moved[:, c_x:], base)
            if gap > TOL:
                return (f"{algorithm.label} ({_said(options)}) with {what}: {c} tokens put before "
                        f"{'Z only' if keys_only else 'X and Z'} moved the output by {gap:.3g}")
    return None


def _cache_moves(options, rng, n, c, keys_only):
    """Algorithm 5 with a KV cache: the prefill of c hidden tokens and n real ones, then an extend of 1 or 2 new
    tokens over the cache (the c tokens hidden by the mask), against Algorithm 5 on the n + new real tokens.  The
    twin drops the c tokens from the cache after the prefill: its keys sit c positions after the new queries'."""
    from formal import algorithms
    new = int(rng.integers(1, 3))
    whole = rng.normal(size=(D, n + new))
    pad = rng.normal(size=(D, c))
    weights = _weights(rng, "mhattention")
    plain = algorithms.get("mhattention", **options)
    prefill = algorithms.get("kv_mhattention", step="prefill", **options)
    extend = algorithms.get("kv_mhattention", step="extend", **options)
    cached = np.concatenate([pad, whole[:, :n]], axis=1)
    _, K, V = prefill(X=cached, mask=np.ones((c + n, c + n)), **weights)
    if keys_only:
        K, V = K[..., c:], V[..., c:]
    for what, mask in _masks(rng, n + new, new):
        full = np.ones((n + new, n + new))
        full[:, n:] = mask
        want = plain(X=whole, mask=full, **weights)[:, n:]
        got, _, _ = extend(X=whole[:, n:], K_c=K, V_c=V, mask=mask if keys_only else _hidden(c, mask, 0), **weights)
        gap = gap_of(got, want)
        if gap > TOL:
            return (f"{extend.label} ({_said(options)}) with {what}: {c} hidden tokens"
                    f"{' (dropped from the cache after the prefill)' if keys_only else ''}, then {n} real, {new} "
                    f"new: the output differs from Algorithm 5's on the real tokens by {gap:.3g}")
    return None


def _said(options) -> str:
    return ", ".join(f"{k} = {v}" for k, v in options.items())


def _shift(perturbed: bool) -> Outcome:
    """Every algorithm, the options of :data:`OPTIONS` in turn, a shift c of 1 … 4N: the outputs equal the
    unshifted ones.  The twin shifts the keys only."""
    def check(rng, n):
        seed = int(rng.integers(2**31))
        options, c = OPTIONS[seed % len(OPTIONS)], int(rng.integers(1, 4 * N))
        return _attention_moves(options, rng, n, c, perturbed) or _cache_moves(options, rng, n, c, perturbed)
    return seeded(check, seeds=SEEDS, sizes=SIZES, label="ℓ_x")


_STATIC_WORDS = "either pairing, a whole or partial head, any θ, and no scaling or the linear, YaRN or llama3 rule"

THEOREMS = [
    Theorem("rope-relative-position",
            "With rotary embeddings, a query at position m and a key at position n score (R_m q)ᵀ(R_n k) = "
            "qᵀ(R_mᵀR_n)k, and R_mᵀR_n depends on the positions only through n − m (on each rotated pair it is "
            "σ²R_{n−m}, σ YaRN's factor or 1; on the other rows the identity): shifting both positions by any c "
            f"changes no score — for the Rotary op with {_STATIC_WORDS}.  Dynamic NTK scaling is not: past N its "
            "frequencies follow the last position rotated.",
            r"\mathrm{RoPE}(q, m)^\top \mathrm{RoPE}(k, n) = q^\top R_m^\top R_n\, k = "
            r"\mathrm{RoPE}(q, m + c)^\top \mathrm{RoPE}(k, n + c), \quad "
            r"R_m^\top R_n = \sigma^2 R_{n - m}\ \text{on each pair}",
            ("attention", "mhattention"), "symbolic",
            "sympy, for a generic pair (x_a, x_b) turned by t·ω and scaled by σ as the op's docstring writes it: "
            "R_mᵀR_n = R_{n−m} and the shifted score's difference expand to 0 exactly once cos and sin are "
            "exponentials, for every angle, entry, position and shift; the op's execution (float64) is that map "
            "pair by pair — σ_i and ω_i read off it at position 1, its columns at random positions up to 4N "
            "equal to the pairs (as the style pairs the rows) turned by t·ω_i, the other rows passed through — "
            f"and its scores do not move with a random shift, |Δ| ≤ {TOL:g}, for "
            f"{2 * len(FRACTIONS) * len(STATIC) * 2} rotations (both pairings, fractions 1, 1/2, 1/4 of a head of "
            f"{WIDTH}, no scaling, linear, YaRN, llama3 at N = {N}, s = {FACTOR:g}, θ = 10 and 10000), {OP_SEEDS} "
            "seeds each; dynamic NTK's scores move with a shift past N (a counterexample found)",
            "The same holds when the angle grows as the square of the position (t²·ω_i).", _relative),
    Theorem("rope-shift-invariance",
            f"With rotary embeddings ({_STATIC_WORDS}), attention is invariant under shifting every position by "
            "the same c: c tokens put before X and Z, hidden from every query by the mask, leave the outputs of the "
            "real tokens as they are — for Algorithm 4, Algorithm 5 and its multi-query form, and Algorithm 5 with "
            "a KV cache (c hidden tokens first in the cache, so that the new tokens sit at ℓ_c = c + n …): its "
            "outputs depend on the cache's keys, not on ℓ_c.",
            r"\mathrm{Attention}\big([P\ X] \mid [P'\ Z],\ 0_c \oplus \mathrm{Mask}\big)_{:,\,c:} = "
            r"\mathrm{Attention}(X \mid Z, \mathrm{Mask})",
            ("attention", "mhattention", "kv_mhattention"), "property-tested",
            "the spec's execution (float64, seeded weights with biases, d_attn = 8, H = 2) of Algorithm 4 (ℓ_z = "
            "ℓ_x + 1), Algorithm 5, its multi-query form and kv_mhattention (a prefill, then an extend of 1 or 2 "
            "tokens, against Algorithm 5 on the real tokens), the all-ones mask and a random one, the rope options "
            f"of {len(OPTIONS)} sets in turn (both pairings, fractions 1 and 1/2, no scaling, linear, YaRN, llama3 "
            f"at N = {N}), a random shift c of 1 … {4 * N - 1}; {SEEDS} seeds at each of ℓ_x = "
            f"{', '.join(map(str, SIZES))} real tokens, |Δ| ≤ {TOL:g}; no symbolic proof: the statement is about "
            "every input, mask and shift, and the spec executes the heads' loops and the masked softmax numerically",
            "Shifting the keys' positions by c but not the queries' (c tokens put before Z only; the hidden tokens "
            "dropped from the cache after the prefill) leaves the outputs as they are.", _shift),
]
