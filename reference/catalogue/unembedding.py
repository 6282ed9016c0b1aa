"""Algorithm 7: unembedding, a token's vector to a distribution over the vocabulary; its planted bugs."""

from __future__ import annotations

from .attention import soft_cap, unstable_softmax
from .entry import Implementation, makers
from .numerics import affine, softmax

__all__ = ["unembed", "unembedding", "IMPLEMENTATIONS", "MUTANTS"]


def unembed(W_u, X, b_u=None, cap=None):
    """``softmax(W_u X + b_u 1ᵀ)`` per column: N_V×ℓ for X d×ℓ (N_V for one column); a ``cap`` c soft-caps the
    logits first, ``c·tanh(z/c)``."""
    return softmax(soft_cap(affine(W_u, X, b_u), cap))


def _cap_after_softmax(W_u, X, b_u=None, cap=None):
    """A planted bug: the probabilities soft-capped after the softmax, not the logits before it."""
    return soft_cap(softmax(affine(W_u, X, b_u)), cap)


def unembedding(*, bias=False, cap=None, _unembed=unembed):
    """Algorithm 7 as conform calls it: ``p = softmax(W_u e (+ b_u))``, the logits soft-capped with a ``cap``."""
    def unembedding(e, W_u, b_u=None):
        if cap is None:
            return _unembed(W_u, e, b_u if bias else None)
        return _unembed(W_u, e, b_u if bias else None, cap=cap)
    return unembedding


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("unembedding", unembedding,
                   seconds={"quick": (0.05, 0.01), "thorough": (0.4, 0.08)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _variant("unembedding_ignores_bias", "unembedding", {"bias": True}, {"bias": False},
             "drops the bias b_u of the logits"),
    _seam("unembedding_without_softmax", "unembedding", {},
          "returns the logits W_u e, not their softmax", "review", _unembed=affine),
    _seam("unembedding_softmax_without_max", "unembedding", {},
          "takes exp(W_u e)/Σexp(W_u e) without subtracting the maximum: NaN once a logit passes 709", "review",
          _unembed=lambda W_u, X, b_u=None: unstable_softmax(affine(W_u, X, b_u))),
    _variant("unembedding_cap_ignored", "unembedding", {"cap": 2.0}, {"cap": None},
             "leaves the logits uncapped under cap=2"),
    _seam("unembedding_cap_after_softmax", "unembedding", {"cap": 2.0},
          "soft-caps the probabilities after the softmax instead of the logits before it", "variant option cap",
          _unembed=_cap_after_softmax),
)
