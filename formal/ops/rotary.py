"""Rotary position embeddings (Su et al. 2021): queries and keys rotated by angles proportional to their positions.

A head's width d splits into its first ``d_rot = fraction·d`` rows, rotated, and the rest, passed through (partial
rotary: GPT-NeoX's ``rotary_pct``, Phi's ``partial_rotary_factor``).  The rotated rows form d_rot/2 pairs; pair i
turns by the angle ``t·ω_i`` at position t, ``ω_i = θ^(−2i/d_rot)`` (i = 0 … d_rot/2 − 1, base θ):

    (x_a, x_b) ↦ (x_a cos tω_i − x_b sin tω_i,  x_b cos tω_i + x_a sin tω_i).

Two layouts pair the rows differently (:data:`ROTARY_STYLES`):

- ``half`` — row i with row i + d_rot/2 (*rotate-half*: GPT-NeoX, HF's Llama, Mistral, Qwen, Gemma, Phi, OLMo);
- ``interleaved`` — row 2i with row 2i + 1 (GPT-J, and Meta's Llama code, which multiplies the rows as complex
  numbers ``x_{2i} + i·x_{2i+1}`` by ``e^{i tω_i}``).

The scaling rules of long-context models change the frequencies ω_i (:data:`ROTARY_SCALINGS`, HF's
``rope_scaling``/``rope_parameters``, with ``s`` the factor and ``N`` the original context length):

- ``linear`` (position interpolation, Chen et al. 2023): ``ω_i / s``;
- ``dynamic`` (dynamic NTK): the base becomes ``θ·(s·n/N − (s − 1))^(d_rot/(d_rot − 2))`` where
  ``n = max(N, t_max + 1)`` and t_max is the last position rotated — past N the frequencies depend on the length;
- ``yarn`` (Peng et al. 2023): each ω_i blends ω_i (extrapolation) and ω_i/s (interpolation) by a ramp over
  the pair index between the pairs that turn β_fast and β_slow times over N, and the rotated rows are multiplied
  by ``0.1·ln s + 1``;
- ``llama3`` (Meta's Llama 3.1): wavelengths ``2π/ω_i`` shorter than N/high are kept, longer than N/low are
  divided by s, and those between are interpolated smoothly.

The rotation is linear in x, so it is a map ``x ↦ R_t x`` with R_t orthogonal (times YaRN's factor) and
``R_mᵀ R_n = R_{n−m}``: a query at position m and a key at position n score ``(R_m q)ᵀ(R_n k) = qᵀ R_{n−m} k``,
which depends on the positions only through n − m.

Costs: the table of cos and sin is a constant of the model (free, as a sinusoidal table is); the rotation is
two products and a sum per rotated entry — 3·d_rot·ℓ FLOPs under the ``full`` convention, none under those that
count matrix products only.

References
----------
- J. Su et al., "RoFormer: enhanced transformer with rotary position embedding", arXiv 2104.09864, 2021, §3.4.
- S. Chen et al., "Extending context window of large language models via positional interpolation", 2023.
- B. Peng et al., "YaRN: efficient context window extension of large language models", ICLR 2024, §3.
- Meta, "The Llama 3 herd of models", arXiv 2407.21783, 2024 (the llama3 rule: Meta's ``apply_scaling``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from fractions import Fraction

import numpy as np
import sympy as sp

from ..core.shapes import Mismatch, numel
from ..errors import ConfigError, DomainError, shown
from .base import Op, rank

__all__ = ["ROTARY_STYLES", "ROTARY_SCALINGS", "Rotation", "Rotary", "rotate", "rotary_width", "fraction_of"]

#: How the rotated rows are paired (the module docstring).
ROTARY_STYLES = ("half", "interleaved")
#: The frequency scaling rules (the module docstring); None: the frequencies θ^(−2i/d_rot) as they are.
ROTARY_SCALINGS = ("linear", "dynamic", "yarn", "llama3")


def fraction_of(value) -> Fraction:
    """A rotary fraction as the exact rational it is written as (0.4 is 2/5, not the binary float 0.4)."""
    return Fraction(str(value)).limit_denominator(10 ** 6)


def rotary_width(fraction, width):
    """The number of rotated rows of a head ``width`` wide (a size symbol or int): ``fraction·width``."""
    f = fraction_of(fraction)
    return sp.Rational(f.numerator, f.denominator) * sp.sympify(width)


@dataclass(frozen=True)
class Rotation:
    """One rotary embedding's settings: the pairing ``style``, the share of a head's rows it rotates
    (``fraction``), the base ``theta`` and a scaling rule with its parameters (``scaling`` None leaves the others
    unread).  :meth:`frequencies` and :meth:`rotate` compute it; :meth:`describe` says it in words."""

    style: str = "half"
    theta: float = 10000.0
    fraction: float = 1.0
    scaling: str | None = None
    factor: float = 1.0
    original: int = 8192
    low: float = 1.0
    high: float = 4.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0

    def __post_init__(self):
        if self.style not in ROTARY_STYLES:
            raise ConfigError(f"unknown rotary style {shown(self.style)}; known: {', '.join(ROTARY_STYLES)}")
        if self.scaling is not None and self.scaling not in ROTARY_SCALINGS:
            raise ConfigError(f"unknown rotary scaling {shown(self.scaling)}; known: {', '.join(ROTARY_SCALINGS)}")
        if not (isinstance(self.theta, (int, float)) and math.isfinite(self.theta) and self.theta > 0):
            raise ConfigError(f"rope_theta = {shown(self.theta)} must be a finite number > 0")
        if not 0 < self.fraction <= 1:
            raise ConfigError(f"rope_fraction = {shown(self.fraction)} must be in (0, 1]")
        if self.scaling is not None and not self.factor >= 1:
            raise ConfigError(f"rope_factor = {shown(self.factor)} must be ≥ 1 (a context extended, not shrunk)")
        if self.scaling == "llama3" and not self.high > self.low:
            raise ConfigError(f"rope_low = {self.low} and rope_high = {self.high}: the llama3 rule needs "
                              "rope_high > rope_low (the band of wavelengths it interpolates)")
        if self.scaling == "yarn" and not self.beta_fast > self.beta_slow:
            raise ConfigError(f"rope_beta_fast = {self.beta_fast} and rope_beta_slow = {self.beta_slow}: YaRN "
                              "needs rope_beta_fast > rope_beta_slow")

    @classmethod
    def of(cls, options: dict) -> "Rotation | None":
        """The rotation an algorithm's options declare (``rope``, ``rope_theta`` … by :data:`OPTION_NAMES`), or
        None where ``rope`` is None."""
        style = options.get("rope")
        if style is None:
            return None
        return cls(style=style, **{f.name: options[OPTION_NAMES[f.name]] for f in fields(cls)
                                   if f.name != "style" and OPTION_NAMES[f.name] in options})

    def rotated(self, width: int) -> int:
        """The rotated rows of a head ``width`` wide; a ConfigError unless it is an even whole number."""
        rows = fraction_of(self.fraction) * width
        if rows.denominator != 1 or rows.numerator % 2:
            raise ConfigError(f"rope_fraction = {self.fraction} of a head {width} wide rotates {float(rows):g} rows: "
                              "rotary pairs need an even whole number")
        return int(rows)

    @property
    def scale(self) -> float:
        """What the rotated rows are multiplied by: YaRN's 0.1·ln s + 1, 1 otherwise."""
        return 0.1 * math.log(self.factor) + 1.0 if self.scaling == "yarn" and self.factor > 1 else 1.0

    def frequencies(self, rows: int, length: int | None = None) -> np.ndarray:
        """ω_0 … ω_{rows/2 − 1} (float64) for ``rows`` rotated rows; ``length`` (t_max + 1) is read by the
        dynamic rule only."""
        exponents = np.arange(0, rows, 2, dtype=np.float64) / rows
        base = float(self.theta)
        if self.scaling == "dynamic":
            n = max(self.original, length or 0)
            if rows > 2:
                base *= (self.factor * n / self.original - (self.factor - 1)) ** (rows / (rows - 2))
        omega = base ** -exponents
        if self.scaling == "linear":
            return omega / self.factor
        if self.scaling == "yarn":
            return self._yarn(omega, rows)
        if self.scaling == "llama3":
            return self._llama3(omega)
        return omega

    def _yarn(self, omega, rows):
        def pair(turns):      # the (fractional) pair index whose wavelength fits `turns` times into N
            return rows * math.log(self.original / (turns * 2 * math.pi)) / (2 * math.log(self.theta))
        low = max(math.floor(pair(self.beta_fast)), 0)
        high = min(math.ceil(pair(self.beta_slow)), rows - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(rows // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        kept = 1 - ramp       # 1: extrapolate (keep ω_i), 0: interpolate (ω_i / s)
        return omega / self.factor * (1 - kept) + omega * kept

    def _llama3(self, omega):
        wavelength = 2 * math.pi / omega
        long, short = self.original / self.low, self.original / self.high
        smooth = (self.original / wavelength - self.low) / (self.high - self.low)
        scaled = np.where(wavelength > long, omega / self.factor, omega)
        between = (wavelength >= short) & (wavelength <= long)
        return np.where(between, (1 - smooth) * scaled / self.factor + smooth * scaled, scaled)

    def rotate(self, x, positions, length: int | None = None) -> np.ndarray:
        """``x`` (…, d, ℓ: one column per token) with column j rotated for position ``positions[j]``; ``length`` is
        the sequence length the dynamic rule reads (default: the last position + 1)."""
        x = np.asanyarray(x)             # any subclass (an op-counting array) stays one
        t = np.asarray(positions)
        rows = self.rotated(x.shape[-2])
        if length is None:
            length = int(np.max(t)) + 1 if t.size else 0
        angle = self.frequencies(rows, length)[:, None] * t.astype(np.float64)[..., None, :]   # (…, rows/2, ℓ)
        cos, sin = np.cos(angle) * self.scale, np.sin(angle) * self.scale
        a, b = _pairs(x, rows, self.style)
        out = x.copy()
        first, second = a * cos - b * sin, b * cos + a * sin
        if self.style == "half":
            out[..., :rows // 2, :], out[..., rows // 2:rows, :] = first, second
        else:
            out[..., 0:rows:2, :], out[..., 1:rows:2, :] = first, second
        return out

    def describe(self) -> str:
        """The rotation in words: ``rotate-half RoPE, θ = 10000, on 1/2 of each head, llama3 scaling (s = 8, …)``."""
        parts = [f"{'rotate-half' if self.style == 'half' else 'interleaved'} RoPE, θ = {self.theta:g}"]
        if self.fraction != 1:
            parts.append(f"on {fraction_of(self.fraction)} of each head")
        if self.scaling == "llama3":
            parts.append(f"llama3 scaling (s = {self.factor:g}, N = {self.original}, low = {self.low:g}, "
                         f"high = {self.high:g})")
        elif self.scaling == "yarn":
            parts.append(f"YaRN scaling (s = {self.factor:g}, N = {self.original}, β = {self.beta_fast:g}/"
                         f"{self.beta_slow:g})")
        elif self.scaling == "dynamic":
            parts.append(f"dynamic NTK scaling (s = {self.factor:g}, N = {self.original})")
        elif self.scaling == "linear":
            parts.append(f"linear scaling (s = {self.factor:g})")
        return ", ".join(parts)


#: The option that sets each :class:`Rotation` field (``formal.algorithms.attention``'s ``ROPE_OPTIONS``).
OPTION_NAMES = {"style": "rope", "theta": "rope_theta", "fraction": "rope_fraction", "scaling": "rope_scaling",
                "factor": "rope_factor", "original": "rope_original", "low": "rope_low", "high": "rope_high",
                "beta_fast": "rope_beta_fast", "beta_slow": "rope_beta_slow"}


def _pairs(x, rows, style):
    """The two rows of every rotated pair: ``(x[:rows/2], x[rows/2:rows])`` or ``(x[0:rows:2], x[1:rows:2])``."""
    if style == "half":
        return x[..., :rows // 2, :], x[..., rows // 2:rows, :]
    return x[..., 0:rows:2, :], x[..., 1:rows:2, :]


class Rotary(Op):
    """``RoPE(X, t)``: every column j of X (d×ℓ) rotated for position t[j] (:class:`Rotation`).  3 FLOPs per
    rotated entry under ``full``; the cos/sin table is free.  ``length`` (a size expression) is the sequence length
    the dynamic rule reads — one for a sequence's queries and keys alike, as a model computes one table per
    sequence — and by default the last position + 1."""

    name = "rope"

    def __init__(self, rotation: Rotation, length=None):
        self.rotation, self.length = rotation, length

    def shape(self, shapes):
        x, t = shapes
        rank(x, (2,), "a rotated matrix (one column per token)")
        rank(t, (1,), "a vector of positions")
        if sp.sympify(x[1] - t[0]) != 0:
            raise Mismatch("positions (one per column)", x[1], t[0])
        return tuple(x)

    def flops(self, shapes, out):
        rotated = rotary_width(self.rotation.fraction, out[0]) * out[1]
        return {"full": 3 * rotated}

    def memory(self, out):
        return numel(out)

    def numpy(self, ctx, x, t):
        t = np.asarray(t)
        if t.size and np.min(t) < 0:
            raise DomainError(f"{ctx.where()}: a rotary position is negative ({int(np.min(t))})")
        length = None if self.length is None else int(ctx.evaluate(self.length))
        try:
            return self.rotation.rotate(x, t, length)
        except ConfigError as error:
            raise ConfigError(f"{ctx.where()}: {error}") from None

    def leading(self, ctx, values, lead):
        return self.numpy(ctx, *values)

    def text(self, args):
        return f"RoPE({args[0].text}, {args[1].text})"

    def latex(self, args):
        return rf"\operatorname{{RoPE}}\left({args[0].text}, {args[1].text}\right)"


def rotate(x, positions, rotation: Rotation, length=None):
    """``RoPE(x, positions)``: the columns of ``x`` rotated for their ``positions`` (an expression node); ``length``
    as :class:`Rotary` takes it."""
    return Rotary(rotation, length)(x, positions)

