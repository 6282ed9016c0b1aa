"""Rotary position embeddings in torch (the spec's ``rope`` options, :mod:`formal.ops.rotary`), written apart from
the spec: the frequencies of every scaling rule, and queries and keys rotated as rows (…, ℓ, d) of a head.

The angles and their cos and sin are computed in float64 (float32 on a device without it), and the rotation in
the working precision's wider type, rounded once to the head's dtype at the end — what a correct low-precision
kernel does.
"""

from __future__ import annotations

import math

from formal.algorithms.attention import ROPE_OPTIONS
from formal.errors import ConfigError

from .. import require_torch

__all__ = ["settings", "frequencies", "rotate"]

torch = require_torch()

#: The rotary options and their defaults, from their declarations (:data:`formal.algorithms.attention.ROPE_OPTIONS`).
_DEFAULTS = {o.name: o.default for o in ROPE_OPTIONS if o.name != "rope"}
_NAMES = ("rope", *_DEFAULTS)


def settings(options) -> dict | None:
    """The rotary settings among an algorithm's ``options`` (unnamed ones at their defaults), or None without
    ``rope``."""
    if not options or options.get("rope") is None:
        return None
    return {**_DEFAULTS, **{k: options[k] for k in _NAMES if k in options}}


def _rows(width: int, fraction: float) -> int:
    rows = round(width * fraction)
    if abs(rows - width * fraction) > 1e-9 or rows % 2:
        raise ConfigError(f"rope_fraction = {fraction} of a head {width} wide is not an even number of rows")
    return rows


def frequencies(rope: dict, rows: int, length: int, *, dtype=torch.float64, device=None):
    """The angular frequencies (rows/2,) of ``rows`` rotated rows at a sequence ``length`` (the dynamic rule's)."""
    theta, kind, s, N = rope["rope_theta"], rope["rope_scaling"], rope["rope_factor"], rope["rope_original"]
    if kind == "dynamic" and length > N and rows > 2:
        theta = theta * ((s * length / N) - (s - 1)) ** (rows / (rows - 2))
    index = torch.arange(0, rows, 2, dtype=dtype, device=device)
    inv = 1.0 / theta ** (index / rows)
    if kind == "linear":
        inv = inv / s
    elif kind == "llama3":
        low_wave, high_wave = N / rope["rope_low"], N / rope["rope_high"]
        wave = 2 * math.pi / inv
        scaled = torch.where(wave > low_wave, inv / s, inv)
        smooth = (N / wave - rope["rope_low"]) / (rope["rope_high"] - rope["rope_low"])
        middle = (wave >= high_wave) & (wave <= low_wave)
        inv = torch.where(middle, (1 - smooth) * scaled / s + smooth * scaled, scaled)
    elif kind == "yarn":
        def dim(turns):
            return rows * math.log(N / (turns * 2 * math.pi)) / (2 * math.log(theta))
        lo, hi = max(math.floor(dim(rope["rope_beta_fast"])), 0), min(math.ceil(dim(rope["rope_beta_slow"])), rows - 1)
        hi = hi + 0.001 if lo == hi else hi
        ramp = ((torch.arange(rows // 2, dtype=dtype, device=device) - lo) / (hi - lo)).clamp(0, 1)
        inv = inv / s * ramp + inv * (1 - ramp)
    return inv


def rotate(X, positions, rope: dict | None, length: int | None = None):
    """X (…, ℓ, d): each row t rotated for ``positions[t]`` (ℓ,), by the ``rope`` settings (:func:`settings`);
    X itself without them.  ``length``: the sequence length the dynamic rule reads (default: the last position
    + 1)."""
    if rope is None:
        return X
    rows = _rows(X.shape[-1], rope["rope_fraction"])
    exact = torch.float32 if X.device.type == "mps" else torch.float64       # MPS has no float64
    wide = torch.float64 if X.dtype == torch.float64 else torch.float32
    if length is None:
        length = int(positions.max()) + 1 if positions.numel() else 0
    inv = frequencies(rope, rows, length, dtype=exact, device=X.device)
    angle = positions.to(inv.dtype)[:, None] * inv[None, :]                   # (ℓ, rows/2)
    scale = 0.1 * math.log(rope["rope_factor"]) + 1.0 if rope["rope_scaling"] == "yarn" and \
        rope["rope_factor"] > 1 else 1.0
    cos, sin = (torch.cos(angle) * scale).to(wide), (torch.sin(angle) * scale).to(wide)
    x = X.to(wide)
    if rope["rope"] == "half":
        a, b = x[..., :rows // 2], x[..., rows // 2:rows]
        turned = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    else:
        a, b = x[..., 0:rows:2], x[..., 1:rows:2]
        turned = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    return torch.cat((turned, x[..., rows:]), dim=-1).to(X.dtype)
