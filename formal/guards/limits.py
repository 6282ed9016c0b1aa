"""How much memory a computation may take: estimated before anything that grows with ℓ² or |E| is allocated.

A computation that would need more than the limit is refused with a :class:`~formal.errors.ResourceError`
that gives the estimate and the limit, instead of a ``MemoryError`` (or the operating system's OOM killer)
half-way through.  The limit is :data:`DEFAULT_MAX_MEMORY` (4 GiB) unless raised or lowered — on the command
line with ``--max-memory SIZE``, in Python with :func:`memory_limit` (a context manager) or
:func:`set_max_memory`.

Examples
--------
>>> parse_size("512M"), parse_size("4GiB"), parse_size("1.5G")
(536870912, 4294967296, 1610612736)
>>> format_size(7.28 * 2**40)
'7.28 TiB'
>>> with memory_limit("1K"):  # doctest: +ELLIPSIS
...     require(4096, "a 32×16 float64 array")
Traceback (most recent call last):
...
formal.errors.ResourceError: a 32×16 float64 array needs about 4 KiB, more than the memory limit of 1 KiB (raise it ...)
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re

from ..errors import ConfigError, ResourceError

__all__ = ["DEFAULT_MAX_MEMORY", "MAX_SIZE", "max_memory", "set_max_memory", "memory_limit", "require", "parse_size",
           "format_size", "TimeLimit", "time_limit"]

#: The limit when none is set: 4 GiB, a sixth of the 24 GiB the project's machines have.
DEFAULT_MAX_MEMORY = 4 * 2**30
#: The largest size or count a configuration or a command may give (2⁵⁰ ≈ 1.1·10¹⁵): far past any model,
#: small enough that every derived figure prints (Python refuses to print integers of more than 4300 digits).
MAX_SIZE = 2**50

_LIMIT = contextvars.ContextVar("formal_max_memory", default=DEFAULT_MAX_MEMORY)
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtp]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_size(text) -> int:
    """Bytes from ``"4G"``, ``"512MiB"``, ``"1.5GB"``, ``"100000"`` or an int (units are powers of 1024).

    Raises ConfigError for anything else, or for a size below one byte.
    """
    if isinstance(text, bool):
        raise ConfigError(f"memory size {text!r} must be a number of bytes or a size such as 4GiB or 512MiB")
    if isinstance(text, int):
        value = text
    else:
        match = _SIZE.fullmatch(str(text)) if isinstance(text, str) and len(text) < 40 else None
        if match is None:
            shown = text if not isinstance(text, str) or len(text) < 40 else text[:36] + "…"
            raise ConfigError(f"memory size {shown!r} must be a number of bytes or a size such as 4GiB or 512MiB")
        value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if value < 1:
        raise ConfigError(f"memory size {text!r} must be at least 1 byte")
    return value


def format_size(nbytes) -> str:
    """``"7.28 TiB"``: bytes in the largest binary unit that keeps the number at least 1 (past EiB, in
    scientific notation: ``"1.2e+12 EiB"``)."""
    if isinstance(nbytes, int) and nbytes >= 2**70:                      # past float range: by logarithms
        exponent = math.log10(nbytes) - 60 * math.log10(2)
        return f"{10 ** (exponent - int(exponent)):.2g}e+{int(exponent)} EiB"
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(value) < 1024 or unit == "EiB":
            break
        value /= 1024
    if unit == "B":
        return f"{int(value)} B"
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def max_memory() -> int:
    """The current limit, in bytes."""
    return _LIMIT.get()


def set_max_memory(size) -> int:
    """Set the limit (bytes, or a size such as ``"8G"``) for this context; returns the previous one."""
    previous = _LIMIT.get()
    _LIMIT.set(parse_size(size))
    return previous


@contextlib.contextmanager
def memory_limit(size):
    """Within the ``with`` block the limit is ``size`` (bytes, or ``"8G"``)."""
    token = _LIMIT.set(parse_size(size))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def require(nbytes, what: str) -> None:
    """Refuse ``what`` (``"the full pattern at ℓ = 1,000,000"``) if its estimate ``nbytes`` exceeds the limit."""
    limit = _LIMIT.get()
    if not isinstance(nbytes, int) and not math.isfinite(nbytes) or nbytes > limit:
        raise ResourceError(f"{what} needs about {format_size(nbytes)}, more than the memory limit of "
                            f"{format_size(limit)} (raise it with --max-memory SIZE, or "
                            "formal.guards.limits.memory_limit(SIZE) in Python)", needed=nbytes, limit=limit)


class TimeLimit(BaseException):
    """Raised by :func:`time_limit` when the time is up (a BaseException: ``except Exception`` in the code it
    interrupts does not swallow it)."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise :class:`TimeLimit` in this thread after ``seconds`` of wall-clock time — on the main thread of a
    Unix process (an interval timer and SIGALRM); elsewhere, or with ``seconds`` of 0 or None, no limit."""
    import signal
    import threading
    usable = (seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise TimeLimit()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
