"""Where the reference runs and in which precision: ``cuda`` when available, else the CPU; float64,
float32 or bfloat16."""

from __future__ import annotations

from formal.errors import ConfigError

from .. import require_torch

__all__ = ["DEVICES", "DTYPES", "device", "dtype"]

torch = require_torch()

DEVICES = ("auto", "cpu", "cuda")

#: The precisions the reference runs in, by name.
DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16}


def device(name: str = "auto") -> "torch.device":
    """``auto`` → ``cuda`` when a GPU is at hand, else ``cpu``; ``cuda`` without a GPU is a ConfigError."""
    if name not in DEVICES:
        raise ConfigError(f"unknown device {name!r}; known: {', '.join(DEVICES)}")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device 'cuda' was asked for, but torch sees no CUDA GPU here")
    return torch.device(name)


def dtype(name) -> "torch.dtype":
    """A precision by name (``"float64"``), or a torch dtype the reference supports."""
    if isinstance(name, torch.dtype) and name in DTYPES.values():
        return name
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown dtype {name!r}; known: {', '.join(DTYPES)}") from None
