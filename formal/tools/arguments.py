"""Argument types shared by the commands, and the error of bad usage.

Every command of :mod:`formal.tools.cli` — ``conform``, ``verify`` and ``prove`` too — reads its integers,
sizes and time limits with these ``argparse`` types, so a bad value is one line and exit status 2 wherever it
is given, and refuses usage it cannot honour with :class:`UsageError`.  An integer is read by the gate every
number passes (:mod:`formal.guards.numbers`): ``1024``, ``1e3`` and ``2**10`` are the numbers they are.  This
module imports nothing but ``argparse`` until a value is read: registering a command costs the others nothing.
"""

from __future__ import annotations

import argparse

from ..errors import ConfigError, FormalError, integers, shown

__all__ = ["UsageError", "integers", "bounded_int", "positive_seconds", "memory_size", "progress_line", "name_list",
           "each_once"]


class UsageError(FormalError):
    """A command line that cannot be honoured as written (a missing argument, a flag that would have no
    effect): one line on stderr, exit status 2."""


def bounded_int(minimum: int, maximum: int | None = None):
    """An argparse ``type`` for an integer option: the integer written, if ``minimum ≤ value ≤ maximum``
    (``maximum=None``: no upper bound); anything else is the parser's one-line usage error, exit status 2
    (``argument --seed: -1 must be a non-negative integer``).

    Examples
    --------
    >>> seed = bounded_int(0)
    >>> seed("7")
    7
    >>> seed("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: -1 must be a non-negative integer
    >>> bounded_int(1, 8)("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '1.5' must be an integer from 1 to 8
    """
    for name, bound in (("minimum", minimum), ("maximum", maximum)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
            raise ConfigError(f"bounded_int: {name} = {bound!r} must be an int")
    if maximum is not None and maximum < minimum:
        raise ConfigError(f"bounded_int: maximum = {maximum} is below minimum = {minimum}")
    wanted = integers(minimum, maximum)

    def parse(text: str) -> int:
        from ..guards.numbers import integer
        written = text if len(text) <= 24 else text[:20] + "…"
        try:            # the gate: "1024", "1e3", "2**10" are the numbers they are, read exactly
            value = integer(text.strip(), "value")
        except ConfigError:  # not an integer: '1.5', 'abc', a formula naming sizes, too many digits
            raise argparse.ArgumentTypeError(f"{written!r} must be {wanted}") from None
        if value < minimum or (maximum is not None and value > maximum):
            number = value if len(str(value)) <= 24 else shown(value)
            if not text.strip().lstrip("+-").isdigit():        # "2**60": say the number it is
                number = f"{written!r} is {number}, which"
            raise argparse.ArgumentTypeError(f"{number} must be {wanted}")
        return value

    parse.__name__ = wanted  # what argparse calls the type in its own messages
    return parse


def positive_seconds(text: str, maximum: float = 86400.0) -> float:
    """An argparse ``type`` for a time limit: a finite number of seconds > 0, at most a day."""
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a number of seconds") from None
    if not (0 < value <= maximum and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{shown(text)} must be a number of seconds > 0, at most {maximum:g}")
    return value


def memory_size(text: str) -> int:
    """An argparse ``type`` for ``--max-memory``: bytes from ``4G``, ``512M``, ``1.5GiB`` or a number of bytes
    (:func:`formal.guards.limits.parse_size`); anything else is the parser's one-line usage error."""
    from ..guards.limits import parse_size
    try:
        return parse_size(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def name_list(text: str, flag: str, what: str, see: str) -> list:
    """The names of a comma-separated option (``--only a,b``), stripped, in the order given; a :class:`UsageError`
    when it names none, or names one twice (as ``-o``, ``--size`` and ``--variants`` refuse a key given twice):
    a list that repeats a name would check it twice and count it twice.

    >>> name_list(" a, b ", "--only", "algorithm", "see `list`")
    ['a', 'b']
    >>> name_list("a,b,a", "--only", "algorithm", "see `list`")
    Traceback (most recent call last):
    ...
    formal.tools.arguments.UsageError: --only 'a,b,a' names the algorithm 'a' twice
    """
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError(f"{flag} {shown(text)} names no {what}: give comma-separated names ({see})")
    return each_once(names, f"{flag} {shown(text)}", what)


def each_once(names, where: str, what: str) -> list:
    """``names`` as a list, if none is given twice; else a :class:`UsageError` saying ``where`` names which."""
    names = list(names)
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise UsageError(f"{where} names the {what} {shown(twice)} twice")
    return names


def progress_line(stream, verb: str):
    """``show(i, n, name)``, a live "verb i/n: name" line on ``stream`` when it is a terminal (else None),
    wiped after the last item: for commands that work through a list (``check``, ``prove``)."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def show(i, n, name):
        stream.write(f"\r{verb} {i + 1}/{n}: {name[:50]:<50}")
        stream.flush()
        if i + 1 == n:
            stream.write("\r" + " " * 72 + "\r")
    return show
