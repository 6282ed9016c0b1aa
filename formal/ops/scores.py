"""Attention scores other than the dot product: the additive score of Bahdanau et al. (2015) and, with a
leaky ReLU in place of tanh, of graph attention networks (Veličković et al. 2018).

References
----------
- D. Bahdanau, K. Cho, Y. Bengio, "Neural machine translation by jointly learning to align and
  translate", ICLR 2015, §3.1 and Appendix A.2.2: ``e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j)``.
- P. Veličković et al., "Graph attention networks", ICLR 2018, eq. (3) (LeakyReLU, negative slope 0.2);
  S. Brody, U. Alon, E. Yahav, "How attentive are graph attention networks?", ICLR 2022 (GATv2: the
  nonlinearity between the sum and ``a``, as here).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.shapes import Mismatch, numel, same_dim
from ..costs.cost import CONVENTIONS, Work
from ..errors import ConfigError, shown
from .activations import Activation, ReLU, Tanh
from .base import Op, rank

__all__ = ["LeakyReLU", "AdditiveScore", "SCORE_ACTIVATIONS", "additive_score", "check_score_activation"]


class LeakyReLU(Activation):
    """``max(x, s·x)`` with negative slope ``s`` (0.2 in GAT; 0 < s < 1): 2 FLOPs per entry (full), the
    product ``s·x`` and the maximum."""

    name, glyph, tex, per_element = "leaky_relu", "LeakyReLU", "LeakyReLU", 2

    def __init__(self, slope: float = 0.2):
        self.slope = slope

    def numpy(self, ctx, a):
        return np.maximum(a, np.multiply(a, self.slope))


#: The nonlinearities an additive score takes, by option name: Bahdanau's tanh, GAT's leaky ReLU (0.2), and the
#: ReLU of the image-captioning code most implementations of Show, Attend and Tell copy.
SCORE_ACTIVATIONS = {"tanh": Tanh, "leaky_relu": LeakyReLU, "relu": ReLU}


def check_score_activation(activation) -> str:
    """``activation`` if it names one of :data:`SCORE_ACTIVATIONS`, else a ConfigError naming it."""
    if not isinstance(activation, str) or activation not in SCORE_ACTIVATIONS:
        raise ConfigError(f"unknown score activation {shown(activation)}; known: {', '.join(SCORE_ACTIVATIONS)}")
    return activation


class AdditiveScore(Op):
    """``S[t_z, t_x] = vᵀ φ(Q[:, t_x] + K[:, t_z])``: the additive score of every key against every query.

    Q is d×ℓ_x (or one query, a d-vector: the result is then an ℓ_z-vector, as ``KᵀQ`` would be), K is
    d×ℓ_z, v a d-vector, φ tanh (Bahdanau et al.), a leaky ReLU (GAT) or a ReLU.  The numpy semantics materialise
    the d×ℓ_z×ℓ_x tensor of sums by broadcasting, apply φ to it, and contract it with v in one matrix
    product (``v (d×ℓ_zℓ_x)``), which is how it is counted:

    - FLOPs under ``matmul``, ``chinchilla`` and ``kaplan`` (a score product): 2·d·ℓ_z·ℓ_x, the product
      with v;
    - under ``full`` additionally d·ℓ_z·ℓ_x additions and φ's count per entry (tanh 1, leaky ReLU 2, ReLU 1);
    - memory: the sums and their images under φ (d·ℓ_z·ℓ_x each, as the separate ops would store them),
      and the ℓ_z·ℓ_x scores.
    """

    name = "additive_score"

    def __init__(self, activation: str = "tanh", *, single: bool = False):
        self.activation = SCORE_ACTIVATIONS[check_score_activation(activation)]()
        self.single = single

    def shape(self, shapes):
        q, k, v = shapes
        rank(q, (1, 2), "the queries of an additive score")
        rank(k, (2,), "the keys of an additive score")
        rank(v, (1,), "the vector v of an additive score")
        if not same_dim(q[0], k[0]):
            raise Mismatch(str(q[0]), q[0], k[0], "widths of the queries and keys of an additive score")
        if not same_dim(k[0], v[0]):
            raise Mismatch(str(k[0]), k[0], v[0], "length of v against the width of the keys")
        return (k[1],) + tuple(q[1:])

    def _tensor(self, shapes, out):
        """The number of entries of the broadcast tensor: d·ℓ_z·ℓ_x (d·ℓ_z for one query)."""
        return shapes[1][0] * numel(out)

    def work(self, shapes, out):
        tensor = self._tensor(shapes, out)
        product = 2 * tensor
        counts = {c: product for c in CONVENTIONS}
        counts["full"] = product + tensor * (1 + self.activation.per_element)
        return Work(counts, 2 * tensor + numel(out), sp.Integer(0))

    def numpy(self, ctx, q, k, v):
        d = k.shape[0]
        sums = (q[:, None, :] + k[:, :, None]) if q.ndim == 2 else (q[:, None] + k)  # d×ℓ_z×ℓ_x (d×ℓ_z)
        activated = self.activation.numpy(ctx, sums)
        scores = v @ activated.reshape(d, -1)                                          # (ℓ_z·ℓ_x,)
        return scores.reshape(activated.shape[1:])

    def _parts(self, args, latex=False):
        q, k, v = (a.text for a in args)
        phi = self.activation
        if latex:
            name = r"\tanh" if isinstance(phi, Tanh) else rf"\mathrm{{{phi.tex}}}"
            return q, k, rf"{v}^{{\top}} {name}"
        return q, k, f"{v}ᵀ {phi.glyph}"

    def text(self, args):
        q, k, head = self._parts(args)
        if self.single:
            return f"[{head}({q} + {k}_t)]_t"
        return f"[{head}({q}[:, t_x] + {k}[:, t_z])]_(t_z, t_x)"

    def latex(self, args):
        q, k, head = self._parts(args, latex=True)
        if self.single:
            return rf"\left[{head}\left({q} + {k}_{{t}}\right)\right]_{{t}}"
        return rf"\left[{head}\left({q}[:, t_x] + {k}[:, t_z]\right)\right]_{{t_z, t_x}}"

    def line_text(self, target, args):
        """``∀t_z, t_x: S[t_z, t_x] ← vᵀ tanh(Q[:, t_x] + K[:, t_z])``, as the paper writes masking."""
        if self.single:
            return None
        q, k, head = self._parts(args)
        return f"∀t_z, t_x: {target}[t_z, t_x] ← {head}({q}[:, t_x] + {k}[:, t_z])"

    def line_latex(self, target, args):
        if self.single:
            return None
        q, k, head = self._parts(args, latex=True)
        return rf"\forall t_z, t_x:\ {target}[t_z, t_x] \gets {head}\left({q}[:, t_x] + {k}[:, t_z]\right)"


def additive_score(q, k, v, activation: str = "tanh", *, single: bool = False):
    """``[vᵀ φ(q_{t_x} + k_{t_z})]_{t_z, t_x}`` (:class:`AdditiveScore`); ``single`` for one query q against
    the columns k_t (Algorithm 3), rendered ``[vᵀ φ(q + k_t)]_t``."""
    return AdditiveScore(activation, single=single)(q, k, v)
