"""Edge lists: a pattern from a text file of ``key query`` pairs, read with array operations (no networkx).

The format, one edge ``key → query`` (query ``query`` attends to key ``key``) per line::

    # a comment, to the end of the line; blank lines are allowed
    0 1
    1 2    # blanks are spaces or tabs

Positions are non-negative integers below ``ℓ``.  Anything else is a :class:`~formal.errors.ConfigError`
that names the line and shows it: a third column, a float, a negative or out-of-range position, any other
character.  An edge given twice names both lines: attention has no edge weights to sum.

The file is read as a regular file of UTF-8 text (:func:`formal.guards.files.read_text`; a directory, a FIFO or
``/dev/zero`` is refused) of at most :func:`max_bytes` — a 32nd of the memory limit, 128 MiB by default —
and parsed with numpy over its bytes (a loop over the at most 18 digits of a number, never over lines), so
a file of millions of edges takes about a second.

Examples
--------
>>> keys, queries = parse("0 1\\n# the second edge\\n1 2  # a comment\\n", 3)
>>> keys.tolist(), queries.tolist()
([0, 1], [1, 2])
>>> parse("0 1\\n1 2 3\\n", 3)
Traceback (most recent call last):
...
formal.errors.ConfigError: edge list, line 2 is not 'key query' (two non-negative integers): '1 2 3'
"""

from __future__ import annotations

import os
import re
import stat

import numpy as np

from ..errors import ConfigError
from ..guards import files, limits
from . import memory
from .edges import integer
from .pattern import Pattern, check_pairs, from_pairs

__all__ = ["read", "parse", "max_bytes", "MAX_DIGITS"]

MAX_DIGITS = 18          # a position of more digits is beyond int64, and beyond any sequence
_NEWLINE, _HASH, _SPACE = ord("\n"), ord("#"), ord(" ")
_PAIR = re.compile(r"[ \t\r]*([-+]?[0-9]+)[ \t\r]+([-+]?[0-9]+)[ \t\r]*")


def max_bytes() -> int:
    """The largest edge list read: a 32nd of the memory limit (:func:`formal.guards.limits.max_memory`), since
    parsing takes up to :data:`~formal.graphs.memory.EDGELIST_PER_BYTE` (28) bytes per byte of file."""
    return limits.max_memory() // 32


def read(path, ell, *, name: str = "edgelist") -> Pattern:
    """The self-attention pattern over ``ell`` positions whose edges the file ``path`` lists."""
    ell = integer("ell", ell, 0)
    memory.require(memory.pairs_bytes(0, ell, sort=False), f"a pattern over ℓ = {memory.number(ell)} positions")
    _check_size(path)
    text = files.read_text(path, what="edge list", max_bytes=max_bytes())
    keys, queries = parse(text, ell, source=f"edge list {str(path)!r}")
    return from_pairs(keys, queries, ell_z=ell, name=name, owned=True)


def _check_size(path):
    """Say why a regular file over :func:`max_bytes` is refused (formal.guards.files only says that it is)."""
    try:
        info = os.stat(path)
    except (OSError, TypeError, ValueError):
        return                                                             # formal.guards.files names the problem
    if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes():
        raise ConfigError(f"edge list {str(path)!r} has {info.st_size:,} bytes, more than the {max_bytes():,} read "
                          f"under a memory limit of {limits.format_size(limits.max_memory())} (a 32nd of it: parsing "
                          "takes up to 32 bytes per byte; raise it with --max-memory SIZE)")


def parse(text: str, ell: int, *, source: str = "edge list"):
    """``(keys, queries)``: the edges of an edge list (see the module), sorted by query then key.

    ``source`` names the text in errors (``"edge list 'graph.txt'"``).  Edges are sorted by ``q·ℓ + k`` in int64,
    so an ``ell`` whose ℓ² pairs int64 cannot number is refused first (it would wrap, silently).
    """
    check_pairs(ell, ell)
    data = np.frombuffer(text.removeprefix("\ufeff").encode("utf-8"), dtype=np.uint8)
    memory.require(memory.edgelist_bytes(data.size), f"parsing the {source} ({data.size:,} bytes)")
    lines = _Lines(data, source, ell)
    data = _without_comments(data, lines.newlines)
    digit = (data >= ord("0")) & (data <= ord("9"))
    other = ~(digit | (data == _SPACE) | (data == ord("\t")) | (data == ord("\r")) | (data == _NEWLINE))
    if other.any():
        lines.fail(lines.of(np.flatnonzero(other)[:1])[0])
    after = np.concatenate((digit[1:], [False]))
    starts = np.flatnonzero(digit & ~np.concatenate(([False], digit[:-1])))   # each number's first digit
    stops = np.flatnonzero(digit & ~after) + 1
    del digit, after, other
    line = lines.of(starts)                                                    # 0-based line of each number
    first = np.flatnonzero(np.diff(line, prepend=-1))                          # first number of each line
    per_line = np.diff(first, append=line.size)
    wrong = line[first[per_line != 2]]
    long = line[stops - starts > MAX_DIGITS]
    if wrong.size or long.size:
        lines.fail(min(wrong[:1].tolist() + long[:1].tolist()))
    values = _values(data, starts, stops - starts)
    keys, queries, where = values[0::2], values[1::2], line[0::2]
    outside = np.flatnonzero((keys >= ell) | (queries >= ell))
    if outside.size:
        lines.fail(where[outside[0]])
    return _sorted(keys, queries, where, ell, lines)


def _values(data, starts, lengths):
    """The numbers at ``starts`` of ``lengths`` digits, by Horner's rule: one pass per digit position."""
    values = np.zeros(starts.size, dtype=np.int64)
    for j in range(int(lengths.max(initial=0))):
        live = lengths > j
        digit = data[np.minimum(starts + j, data.size - 1)].astype(np.int64) - ord("0")
        values = np.where(live, values * 10 + digit, values)
    return values


def _without_comments(data, newlines):
    """A copy of ``data`` with each line's text from its first ``#`` to its end blanked."""
    hashes = np.flatnonzero(data == _HASH)
    if not hashes.size:
        return data
    line = np.searchsorted(newlines, hashes)
    first = np.flatnonzero(np.diff(line, prepend=-1))                         # the first '#' of each line
    ends = np.append(newlines, data.size)[line[first]]
    inside = np.zeros(data.size + 1, dtype=np.int8)
    inside[hashes[first]] = 1
    inside[ends] -= 1
    return np.where(np.cumsum(inside[:-1], dtype=np.int8) > 0, np.uint8(_SPACE), data)


def _sorted(keys, queries, where, ell, lines):
    """The edges sorted by query then key, each once; an edge given twice names both of its lines."""
    linear = queries * max(ell, 1) + keys
    order = np.argsort(linear, kind="stable")                                 # equal edges keep file order
    linear = linear[order]
    repeats = np.flatnonzero(np.diff(linear) == 0)
    if repeats.size:
        i = repeats[np.argmin(order[repeats + 1])]                            # the earliest repeat in the file
        first, again = where[order[i]] + 1, where[order[i + 1]] + 1
        raise ConfigError(f"{lines.source}, line {again} repeats the edge {int(keys[order[i]])} → "
                          f"{int(queries[order[i]])} of line {first}: attention has no edge weights to sum; give "
                          "each edge once")
    return linear % max(ell, 1), linear // max(ell, 1)


class _Lines:
    """Line numbers of byte offsets, and the error that names a line and says what is wrong with it."""

    def __init__(self, data, source, ell):
        self.data, self.source, self.ell = data, source, ell
        self.newlines = np.flatnonzero(data == _NEWLINE)

    def of(self, offsets):
        return np.searchsorted(self.newlines, offsets)

    def fail(self, index):
        """Raise the ConfigError for line ``index`` (0-based), found wrong by the array checks."""
        index = int(index)
        start = int(self.newlines[index - 1]) + 1 if index else 0
        stop = int(self.newlines[index]) if index < self.newlines.size else self.data.size
        text = self.data[start:stop].tobytes().decode("utf-8", errors="replace")
        shown = text.rstrip("\r") if len(text) <= 60 else text[:57] + "…"
        raise ConfigError(f"{self.source}, line {index + 1} {_problem(text.partition('#')[0], self.ell)}: {shown!r}")


def _problem(code: str, ell: int) -> str:
    """What is wrong with a line's text before its comment."""
    match = _PAIR.fullmatch(code)
    if match is None:
        return "is not 'key query' (two non-negative integers)"
    for role, token in zip(("key", "query"), match.groups()):
        shown = token if len(token) <= 24 else token[:20] + "…"
        if token.startswith("-") and token.strip("-0"):
            return f"has a negative {role} position {shown}"
        if len(token.lstrip("+0")) > MAX_DIGITS or int(token) >= ell:
            return f"has a {role} position {shown} outside the sequence 0..{ell - 1} (ell = {ell})"
    return "is not 'key query' (two non-negative integers)"                   # '+1', '-0': not plain digits
