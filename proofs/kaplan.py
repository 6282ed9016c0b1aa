"""Kaplan et al. 2020, Table 1, from the objects: the non-embedding parameter count N = 12·L·d² + O(L·d), and
the forward pass C_forward = 2N + 2·L·ℓ·H·d_attn FLOPs per token; and, under the matmul convention, a forward
pass that is nothing but matrix products (whence a training step of 3 forward passes) — each decided by sympy
for all sizes, on Algorithm 10 (Kaplan's setting: no biases, no position table)."""

from __future__ import annotations

from .checks import identity
from .theorem import Outcome, Theorem

#: Kaplan's setting of Algorithm 10: no biases, no position table (Kaplan et al. count neither).
KAPLAN_OPTIONS = {"bias": False, "position": "none"}


def _s(*names):
    from formal.core.symbols import by_name
    return [by_name(n) for n in names]


def _kaplan_model():
    from formal.models.complexity import Model
    return Model("dtransformer", KAPLAN_OPTIONS)


def _one_width():
    """Kaplan's shape of a layer: H·d_attn = H·d_mid = d_e = d and d_mlp = 4d."""
    d, H, d_attn, d_mid, d_mlp, d_e = _s("d", "H", "d_attn", "d_mid", "d_mlp", "d_e")
    return {d_attn: d / H, d_mid: d / H, d_mlp: 4 * d, d_e: d}


def _kaplan_n(perturbed):
    """The leading term in d, then the remainder O(L·d) in every size it contains."""
    import sympy as sp

    from formal.costs.asymptotics import leading_term
    d, L = _s("d", "L")
    n = sp.expand(_kaplan_model().params()["non_embedding"].xreplace(_one_width()))
    lead = sp.expand(leading_term(n, [d]))
    outcome = identity(lead, (13 if perturbed else 12) * L * d**2, "leading term in d: ")
    if not outcome.holds:
        return outcome
    return _remainder_is_o(sp.expand(n - 12 * L * d**2), L * d)


def _remainder_is_o(remainder, bound):
    """``remainder = O(bound)`` as every size in either grows (:func:`formal.costs.orders.big_o`, exact);
    a term that is not names itself, with sizes where it exceeds ``bound``."""
    import sympy as sp

    from formal.core.symbols import text
    from formal.costs.orders import Undecided, big_o
    sizes = sorted(remainder.free_symbols | bound.free_symbols, key=str)
    if remainder == 0:
        return Outcome(True, f"the remainder is 0 = O({text(bound)})")
    try:
        if big_o(remainder, bound, sizes, "the remainder"):
            return Outcome(True, f"12·L·d², and the remainder {text(remainder)} = O({text(bound)}) as each of "
                                 f"{', '.join(map(text, sizes))} grows")
    except Undecided as exc:
        return Outcome.undecided(f"the remainder {text(remainder)}: {exc}")
    for term in sp.Add.make_args(remainder):
        if term.could_extract_minus_sign() or big_o(term, bound, sizes, "the term"):
            continue
        grow = {s: 10 for s in sizes if sp.degree(term, s) > sp.degree(bound, s)}
        at = {s: grow.get(s, 1) for s in sizes}
        return Outcome(False, f"the remainder {text(remainder)} has the term {text(term)}, not O({text(bound)}): "
                              f"at {', '.join(f'{s} = {v}' for s, v in at.items())} it is {term.xreplace(at)}, "
                              f"{text(bound)} is {bound.xreplace(at)}")
    return Outcome(False, f"the remainder {text(remainder)} is not O({text(bound)})")


def _c_forward(perturbed):
    """C_forward(ℓ)/ℓ under the kaplan convention against 2N + 2·L·ℓ·H·d_attn, N from the lines."""
    import sympy as sp

    from .products import weight_matrices
    L, ell, H, d_attn = _s("L", "ell", "H", "d_attn")
    model = _kaplan_model()
    n = sp.expand(sum(p.size() for p in weight_matrices(model.algorithm)))
    per_token = sp.expand(model.forward("kaplan").flops / ell)
    claimed = 2 * n if perturbed else 2 * n + 2 * L * ell * H * d_attn
    outcome = identity(per_token, claimed, "C_forward / ℓ: ")
    if not outcome.holds:
        return outcome
    return Outcome(True, f"{outcome.detail}, N = {sp.factor(n)} (the entries of the weight matrices the "
                         "lines multiply)")


def _products(perturbed):
    """The matmul-convention FLOPs of the lines' products (all of them; the twin: the weight products alone)
    against the derived forward pass, then the training step as forward + 2 × the products."""
    import sympy as sp

    from formal.models.complexity import Model

    from .products import product_flops
    model = Model("dtransformer", {})
    forward = model.forward("matmul").flops
    products = product_flops(model.algorithm, "matmul", roles=("weight",) if perturbed else None)
    outcome = identity(products, forward, "the products' FLOPs against the forward pass: ")
    if not outcome.holds:
        return outcome
    step = identity(model.training_step("matmul"), sp.expand(forward + 2 * products), "training step: ")
    if not step.holds:
        return step
    return Outcome(True, "every FLOP of the forward pass is a product's (sympy: the lines' products sum to the "
                         "derived cost), and the training step is forward + 2 × those products = 3 × forward")


THEOREMS = [
    Theorem("kaplan-n",
            "Kaplan's N = 12·L·d² + O(L·d): with H·d_attn = H·d_mid = d and d_mlp = 4d (no biases, no position "
            "table), the non-embedding parameters have the leading term 12·L·d² in d, and what remains is O(L·d) "
            "as every size in it grows.",
            r"N = 12\,L\,d^2 + O(L\,d)", ("dtransformer",), "symbolic",
            "formal.costs.asymptotics.leading_term of the derived count, in d; the remainder (count − 12·L·d²) "
            "against L·d by formal.costs.orders.big_o, every size in it growing (exact, from the terms)",
            "The leading term is 13·L·d².", _kaplan_n),
    Theorem("kaplan-c-forward",
            "Kaplan's C_forward: under the kaplan convention Algorithm 10's forward pass over ℓ tokens (no biases, "
            "no position table) costs ℓ·(2N + 2·L·ℓ·H·d_attn) FLOPs, i.e. 2N + 2·L·ℓ·H·d_attn per token, ℓ the "
            "context length (n_ctx: every query's scores are counted against all ℓ keys) and N the entries of "
            "the non-embedding weight matrices — for all sizes.",
            r"\frac{C_{\mathrm{forward}}(\ell)}{\ell} = 2N + 2\,L\,\ell\,H\,d_{\mathrm{attn}}", ("dtransformer",),
            "symbolic",
            "sympy: the derived kaplan-convention FLOPs divided by ℓ minus 2N + 2·L·ℓ·H·d_attn, N summed over the "
            "parameters the lines multiply as weight matrices (walked through the calls), embeddings excluded",
            "C_forward = 2N per token (the attention scores cost nothing).", _c_forward),
    Theorem("training-step-3x-forward",
            "Under the matmul convention every FLOP of Algorithm 10's forward pass is a matrix product's, so a "
            "training step costs 3 forward passes: the backward pass needs two products of the same size per "
            "product, one per operand gradient.",
            r"C_{\mathrm{forward}} = \sum_{\text{products}} 2\,m\,k\,n,\quad "
            r"C_{\mathrm{step}} = 3\,C_{\mathrm{forward}}",
            ("dtransformer",), "symbolic",
            "sympy: the matmul-convention FLOPs of the MatMul nodes of the lines (the calls' included, loops "
            "times their counts, as the derivation sums them) minus the derived forward pass; then the derived "
            "training step minus forward + 2 × those products (the product rule)",
            "Every FLOP of the forward pass is a product with a weight matrix.", _products),
]
