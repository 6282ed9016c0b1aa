"""Costs derived from the algorithm objects: closed-form parameter counts, grouped-query attention, the FLOP
conventions, and the growth of generation — decided by sympy for all sizes (Kaplan's N and C_forward, and the
training step, are in :mod:`proofs.kaplan`)."""

from __future__ import annotations

from .checks import identity, nonnegative
from .theorem import Outcome, Theorem


def _s(*names):
    from formal.core.symbols import by_name
    return [by_name(n) for n in names]


def _closed_forms():
    """Parameter counts written from the architectures' parts (the oracle the theorem states)."""
    N_V, d_e, ell_max, L, H, d_attn, d_mid, d_mlp, L_enc, L_dec, d_f = _s(
        "N_V", "d_e", "ell_max", "L", "H", "d_attn", "d_mid", "d_mlp", "L_enc", "L_dec", "d_f")
    attention = 2 * H * d_attn * d_e + 2 * H * d_attn + H * d_mid * d_e + H * d_mid + d_e * H * d_mid + d_e
    mlp = 2 * d_mlp * d_e + d_mlp + d_e
    norms = 4 * d_e                     # two layer norms (γ, β) per layer
    decoder_layer = attention + mlp + norms
    cross_layer = 2 * attention + mlp + 6 * d_e  # self- and cross-attention, three layer norms
    head = d_f * d_e + d_f + 2 * d_f + N_V * d_f  # Algorithm 9's W_f, b_f, layer norm, W_u
    return {
        "dtransformer": N_V * d_e + ell_max * d_e + L * decoder_layer + 2 * d_e + N_V * d_e,
        "etransformer": N_V * d_e + ell_max * d_e + L * decoder_layer + head,
        "edtransformer": N_V * d_e + ell_max * d_e + L_enc * decoder_layer + L_dec * cross_layer + N_V * d_e,
    }


def _params(perturbed):
    from formal import algorithms
    forms = _closed_forms()
    d_e, = _s("d_e")
    for name, form in forms.items():
        derived = algorithms.get(name).param_count()
        claimed = form - 2 * d_e if perturbed else form   # the twin forgets a layer norm
        outcome = identity(derived, claimed, f"{name}: ")
        if not outcome.holds:
            return outcome
    return Outcome(True, "Algorithms 8, 9 and 10 (default options): derived = closed form, every size symbolic")


def _kv_ratio(perturbed):
    import sympy as sp

    from formal.models.complexity import Model
    H, n_kv = _s("H", "n_kv_heads")
    from formal import algorithms
    grouped = Model("dtransformer", {"n_kv_heads": "symbolic"}).kv_cache_scalars()
    full = Model("dtransformer", {}).kv_cache_scalars()
    constraints = algorithms.get("mhattention", n_kv_heads="symbolic").size_constraints   # n_kv_heads divides H
    return identity(sp.cancel(grouped / full), H / n_kv if perturbed else n_kv / H, "KV cache ratio: ",
                    constraints=constraints)


def _collapse(perturbed):
    from formal import algorithms
    H, n_kv = _s("H", "n_kv_heads")
    grouped = algorithms.get("mhattention", n_kv_heads="symbolic").cost()
    full = algorithms.get("mhattention").cost()
    value = H / 2 if perturbed else H
    for field in ("params", "flops", "memory"):
        outcome = identity(getattr(grouped, field).xreplace({n_kv: value}), getattr(full, field), f"{field}: ")
        if not outcome.holds:
            return outcome
    return Outcome(True, "params, FLOPs and memory of n_kv_heads = H equal Algorithm 5's, every size symbolic")


def _conventions(perturbed):
    from formal.models.complexity import Model
    model = Model("dtransformer", {})
    flops = {c: model.forward(c).flops for c in ("kaplan", "matmul", "full")}
    pairs = [("full", "matmul")] if perturbed else [("kaplan", "matmul"), ("matmul", "full")]
    for low, high in pairs:  # low ≤ high
        outcome = nonnegative(flops[high] - flops[low], f"{high} − {low}: ")
        if not outcome.holds:
            return outcome
    return Outcome(True, "kaplan ≤ matmul ≤ full for the forward pass of Algorithm 10, every size ≥ 1 "
                         "(all coefficients ≥ 0 after x = 1 + t)")


def _generation(perturbed):
    from formal import algorithms
    from formal.costs.orders import theta, theta_text
    ell_gen, = _s("ell_gen")
    cached = algorithms.get("dinference", kv_cache=True).cost().flops
    recomputed = algorithms.get("dinference", kv_cache=False).cost().flops
    for flops, power, what in ((cached, 2, "with the cache"), (recomputed, 2 if perturbed else 3, "without")):
        upper, lower = theta(flops, ell_gen ** power, [ell_gen], what)
        if not (upper and lower):
            return Outcome(False, f"{what}: the FLOPs are {theta_text(flops, [ell_gen], what)}, not Θ(ℓ_gen^{power})")
    return Outcome(True, "Θ(ℓ_gen²) with the cache, Θ(ℓ_gen³) without (exact, from the polynomials' terms)")


def _cache_saves(perturbed):
    """Recomputation minus the cache: ≥ 0 for every size, and 0 for a single generated token."""
    from formal import algorithms
    from formal.core.symbols import text
    ell_gen, = _s("ell_gen")
    cached = algorithms.get("dinference", kv_cache=True).cost().flops
    recomputed = algorithms.get("dinference", kv_cache=False).cost().flops
    saved = cached - recomputed if perturbed else recomputed - cached
    outcome = nonnegative(saved, "the saving: ")
    if not outcome.holds:
        return outcome
    first = saved.xreplace({ell_gen: 1})
    if first != 0:
        return Outcome(False, f"for one generated token the difference is {text(first)}, not 0")
    return Outcome(True, "recomputation − cache ≥ 0 for every size ≥ 1 (nonnegative after x = 1 + t), and 0 at "
                         "ℓ_gen = 1")


THEOREMS = [
    Theorem("parameter-closed-forms",
            "The parameters of Algorithms 8, 9 and 10 (default options) equal their closed forms, summed over the "
            "architectures' parts, for all sizes.",
            r"|\theta_{10}| = 2 N_V d_e + \ell_{\max} d_e + L\,(\text{attention} + \text{MLP} + 4 d_e) + 2 d_e",
            ("dtransformer", "etransformer", "edtransformer"), "symbolic",
            "sympy: the derived count minus the closed form simplifies to 0",
            "The closed form without one layer norm (2·d_e) equals the derived count.", _params),
    Theorem("gqa-kv-cache-ratio",
            "Grouped-query attention scales the KV cache by n_kv_heads / H.",
            r"\frac{|\mathrm{KV}|_{n_{kv}}}{|\mathrm{KV}|_{H}} = \frac{n_{kv}}{H}", ("kv_dtransformer",), "symbolic",
            "sympy: the ratio of the derived cache sizes (n_kv_heads symbolic) cancels to n_kv/H",
            "It scales the cache by H / n_kv_heads.", _kv_ratio),
    Theorem("gqa-collapses-to-mha",
            "With n_kv_heads = H, grouped-query attention is Algorithm 5: the same parameters, FLOPs and memory.",
            r"\mathrm{GQA}_{n_{kv} = H} = \mathrm{MHAttention}", ("mhattention",), "symbolic",
            "sympy: each derived cost of the n_kv_heads = symbolic variant at n_kv_heads = H minus Algorithm 5's",
            "With n_kv_heads = H/2 it is Algorithm 5.", _collapse),
    Theorem("flop-conventions-ordered",
            "The FLOP conventions are ordered: kaplan ≤ matmul ≤ full, for every size, for Algorithm 10's forward "
            "pass.",
            r"C_{\mathrm{kaplan}} \le C_{\mathrm{matmul}} \le C_{\mathrm{full}}", ("dtransformer",), "symbolic",
            "formal.costs.inequalities.nonnegative on the differences (a sufficient test, exact)",
            "full ≤ matmul.", _conventions),
    Theorem("kv-cache-saves-work",
            "Decoding with the KV cache never costs more FLOPs than recomputing the prefix at each step, for every "
            "size, and costs the same when one token is generated (Algorithm 14).",
            r"C_{\text{recompute}} - C_{\text{cache}} \ge 0,\quad = 0 \text{ at } \ell_{\mathrm{gen}} = 1",
            ("dinference",), "symbolic",
            "formal.costs.inequalities.nonnegative on the difference of the derived polynomials; the difference at "
            "ℓ_gen = 1 by substitution",
            "The cache costs at least as much as recomputation.", _cache_saves),
    Theorem("generation-growth",
            "Generating ℓ_gen tokens costs Θ(ℓ_gen²) FLOPs with the KV cache and Θ(ℓ_gen³) without (Algorithm 14).",
            r"C_{\text{cache}} = \Theta(\ell_{\mathrm{gen}}^2),\quad "
            r"C_{\text{recompute}} = \Theta(\ell_{\mathrm{gen}}^3)",
            ("dinference",), "symbolic",
            "formal.costs.orders.theta on the derived polynomials (exact, from their terms)",
            "Without the cache it is Θ(ℓ_gen²).", _generation),
]
