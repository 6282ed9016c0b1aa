"""Files the user names: read with a size cap and only when they are regular files, written only where asked.

Every reader and writer of the command line goes through here, so each hostile path gets one clear error
(a :class:`~formal.errors.ConfigError`, exit status 2) before any work: a directory, a FIFO or a device
(``/dev/zero`` would be read forever), a file over the size cap, bytes that are not UTF-8, TOML that nests
deeper than any configuration needs, an output path in a folder that does not exist or cannot be written.
Outputs are written atomically (a temporary file beside the destination, then one rename), so an
interrupted run leaves the old file or the new one and nothing else.

Examples
--------
>>> read_text("/dev/zero", what="config file")
Traceback (most recent call last):
...
formal.errors.ConfigError: config file '/dev/zero' is not a regular file (a character device)
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import stat
import sys

from ..errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["MAX_TEXT_BYTES", "MAX_NESTING", "read_bytes", "read_text", "read_toml", "parse_toml", "destination",
           "write_text", "json_text", "finite_json", "NON_FINITE"]

#: Largest text file read by default (a configuration or a claims file is a few KiB).
MAX_TEXT_BYTES = 16 * 2**20
#: Deepest nesting of arrays and tables accepted in a TOML file.
MAX_NESTING = 32

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _os_error(path, what, exc) -> ConfigError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT:
        reason = "no such file"
    return ConfigError(f"cannot read {what} {os.fspath(path)!r}: {reason}")


def read_bytes(path, *, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Opened without blocking (a FIFO with no writer would block ``open``), checked with ``fstat`` on the
    open descriptor (no race with a rename), read up to one byte past the cap.
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _os_error(path, what, exc) from None
    except (TypeError, ValueError) as exc:  # an embedded NUL, a non-path
        raise ConfigError(f"{what} {path!r} is not a usable path: {exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{what} {os.fspath(path)!r} is not a regular file ({_kind(mode)})")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise ConfigError(f"{what} {os.fspath(path)!r} is larger than {max_bytes:,} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise _os_error(path, what, exc) from None
    finally:
        os.close(fd)


def read_text(path, *, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (see :func:`read_bytes`); other bytes are a ConfigError
    that gives the offset of the first bad one."""
    data = read_bytes(path, what=what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {os.fspath(path)!r} is not UTF-8 text (byte {exc.start} is "
                          f"{data[exc.start:exc.start + 1]!r})") from None


def _depth(value, limit, level=0) -> int:
    """The nesting depth of parsed TOML (arrays and tables), stopping past ``limit``."""
    if level > limit or not isinstance(value, (dict, list)):
        return level
    items = value.values() if isinstance(value, dict) else value
    return max((_depth(v, limit, level + 1) for v in items), default=level + 1)


def read_toml(path, *, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> dict:
    """A TOML file parsed as data (never executed): the top-level table.

    Raises ConfigError for an unreadable or irregular file, non-UTF-8 bytes, malformed TOML (with the
    parser's line and column), or nesting deeper than :data:`MAX_NESTING`.
    """
    return parse_toml(read_text(path, what=what, max_bytes=max_bytes), f"{what} {os.fspath(path)!r}")


def parse_toml(text: str, what: str = "TOML text") -> dict:
    """TOML text parsed as data, with :func:`read_toml`'s errors (``what`` names the text in them).  A float
    keeps the decimal it was written as (:class:`formal.guards.numbers.Written`): a claimed
    ``124439808.0000000001`` is not 124,439,808."""
    from .numbers import Written
    try:
        data = tomllib.loads(text, parse_float=Written)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{what} nests arrays or tables deeper than {MAX_NESTING} levels") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4300 by default)
        raise ConfigError(f"{what} holds a number that cannot be read: {str(exc).split(';')[0]}") from None
    if _depth(data, MAX_NESTING) > MAX_NESTING:
        raise ConfigError(f"{what} nests arrays or tables deeper than {MAX_NESTING} levels")
    return data


def destination(path, *, what: str = "output file") -> str:
    """Check, before any work, that ``path`` can be written: its folder exists and is writable, and the path
    is not a directory or a special file.  Returns the folder.  Nothing is created."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise ConfigError(f"{what} {path!r} is not a path") from None
    if not path or "\0" in path:
        raise ConfigError(f"{what} {path!r} is not a usable path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"cannot write {what} {path!r}: folder {folder!r} does not exist")
    if os.path.isdir(path):
        raise ConfigError(f"cannot write {what} {path!r}: it is a directory")
    if os.path.lexists(path):
        mode = os.stat(path).st_mode if os.path.exists(path) else 0
        if not stat.S_ISREG(mode):
            raise ConfigError(f"cannot write {what} {path!r}: it exists and is not a regular file "
                              f"({_kind(mode) if mode else 'a dangling link'})")
    if not os.access(folder, os.W_OK | os.X_OK) or _pseudo(folder):
        raise ConfigError(f"cannot write {what} {path!r}: folder {folder!r} is not writable")
    return folder


def _pseudo(folder) -> bool:
    """Whether ``folder`` is on a kernel pseudo file system (/proc, /sys): root may 'write' there, and must not."""
    real = os.path.realpath(folder)
    return any(real == top or real.startswith(top + os.sep) for top in ("/proc", "/sys", "/dev"))


def write_text(path, text: str, *, what: str = "output file") -> None:
    """Write ``text`` to ``path`` atomically (a temporary file beside it, then one rename)."""
    folder = destination(path, what=what)
    tmp = os.path.join(folder, f".{os.path.basename(os.fspath(path))}.{secrets.token_hex(6)}.tmp")
    try:  # created as open() creates files (the umask applies: mkstemp's would be 0600)
        handle = open(tmp, "x", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {what} {os.fspath(path)!r}: {exc.strerror}") from None
    try:
        with handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        _unlink(tmp)
        raise ConfigError(f"cannot write {what} {os.fspath(path)!r}: {exc.strerror}") from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


#: How a non-finite float is written in JSON, which has no number for it: as these strings.
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def finite_json(obj):
    """``obj`` with every non-finite float replaced by its name in :data:`NON_FINITE` (strict JSON has no
    NaN or Infinity, and parsers other than Python's refuse them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else NON_FINITE[repr(obj)]
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    return obj


def json_text(obj) -> str:
    """``obj`` as indented, strict JSON text (non-ASCII kept; a non-finite float written as the string
    ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``) that is always valid UTF-8: a string holding bytes that
    were not UTF-8 (a file name, read with Python's surrogate escapes) has them written as ``\\udcXX``
    escapes instead of raw bytes."""
    text = json.dumps(finite_json(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if any("\ud800" <= c <= "\udfff" for c in text):
        text = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text
