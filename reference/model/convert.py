"""Conversions between the specification's world and the reference's, both ways.

The spec (:mod:`formal`) holds numpy float64 arrays in the paper's layout — one column per token, masks
``ℓ_z×ℓ_x`` — and parameters under canonical names (per-layer ones stacked on a leading layer axis).  The
reference holds torch tensors, batch-first, one row per token, masks as (ℓ_x, ℓ_z).  Parameters keep
their names and orientation in both: only the array type, precision and device change.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from formal.core import masks
from formal.errors import ConfigError

from .. import require_torch
from .device import device as resolve_device, dtype as resolve_dtype

__all__ = ["params_to_torch", "params_to_numpy", "columns_to_rows", "rows_to_columns", "tokens_to_torch",
           "mask_to_rows", "to_numpy", "single"]

torch = require_torch()


def params_to_torch(params: Mapping, *, dtype="float64", device="auto", requires_grad=False) -> dict:
    """Canonical name → array ↦ canonical name → tensor (copied, in ``dtype`` on ``device``)."""
    dt, dev = resolve_dtype(dtype), resolve_device(device) if isinstance(device, str) else device
    out = {}
    for name, value in params.items():
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"parameter {name} must be a real array, got {type(value).__name__}: {exc}") from None
        out[name] = torch.tensor(array, dtype=dt, device=dev).requires_grad_(requires_grad)
    return out


def to_numpy(tensor) -> np.ndarray:
    """A tensor (any dtype, any device) as a float64 numpy array (integers stay integers)."""
    tensor = tensor.detach().cpu()
    if tensor.is_floating_point():
        tensor = tensor.to(torch.float64)
    return tensor.numpy()


def single(batch) -> np.ndarray:
    """A batch of one, (1, …), as its only entry in numpy: the spec's vector output."""
    return to_numpy(batch[0])


def params_to_numpy(params: Mapping) -> dict:
    """Canonical name → tensor ↦ canonical name → float64 numpy array: the way back."""
    return {name: to_numpy(value) for name, value in params.items()}


def columns_to_rows(X, *, dtype="float64", device="auto"):
    """The spec's (d, ℓ) matrix, one column per token ↦ a batch of one, (1, ℓ, d)."""
    dev = resolve_device(device) if isinstance(device, str) else device
    return torch.tensor(np.asarray(X, dtype=np.float64).T.copy(), dtype=resolve_dtype(dtype), device=dev)[None]


def rows_to_columns(Y) -> np.ndarray:
    """A batch-first (B, ℓ, d) result ↦ the spec's layout: (d, ℓ) for B = 1, else (B, d, ℓ)."""
    columns = to_numpy(Y).swapaxes(-1, -2)
    return columns[0] if columns.shape[0] == 1 else columns


def tokens_to_torch(x, *, device="auto"):
    """0-based token ids (ℓ,) ↦ a batch of one, (1, ℓ), int64."""
    dev = resolve_device(device) if isinstance(device, str) else device
    return torch.as_tensor(np.asarray(x, dtype=np.int64), device=dev)[None]


def mask_to_rows(mask, ell_z: int, ell_x: int, *, device="auto"):
    """A spec mask (a name, ``None`` or a 0/1 array ℓ_z×ℓ_x, resolved by :func:`formal.core.masks.resolve`) ↦ the
    rows' boolean (ℓ_x, ℓ_z), True where admitted."""
    dev = resolve_device(device) if isinstance(device, str) else device
    return torch.as_tensor(masks.resolve(mask, ell_z, ell_x).T.copy(), device=dev)
