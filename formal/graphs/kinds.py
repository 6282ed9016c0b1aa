"""The types a pattern's parameter may have (:mod:`formal.graphs.schema`): an integer in a range, True or False,
a word of a list, a grid ``HxW``, a file path.  Each checks a value given as data (a ConfigError naming the
parameter, its value and what it must be), says in words what it takes, and says whether it admits every value
of another (a pattern may narrow a parameter, never widen it past its flag).  No numpy: the command line reads
these to declare its flags (:mod:`formal.tools.commands.graph` gives each kind its ``argparse`` form)."""

from __future__ import annotations

import numbers
import re

from ..errors import ConfigError, integers, shown

__all__ = ["Integer", "Flag", "Choice", "Grid", "File"]


class Integer:
    """An integer from ``minimum`` to ``maximum`` (None: no upper bound)."""

    def __init__(self, minimum: int, maximum: int | None = None):
        self.minimum, self.maximum = minimum, maximum

    def check(self, name, value, spelled=None):
        """``value`` as an int in range; a string or a float passes the gate every number passes
        (:func:`formal.guards.numbers.exact`): ``"1000"``, ``"2**10"`` and ``1000.0`` are the integers they are."""
        written = value
        if isinstance(value, (str, float)):
            from ..guards.numbers import exact
            try:
                value = exact(value, name)
            except ConfigError:
                raise ConfigError(f"{name} = {shown(written)} must be {self.describe()}") from None
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                or value < self.minimum or (self.maximum is not None and value > self.maximum)):
            evaluated = f" (it is {value})" if written is not value and not isinstance(value, bool) else ""
            raise ConfigError(f"{name} = {shown(written)}{evaluated} must be {self.describe()}")
        return int(value)

    def describe(self) -> str:
        return integers(self.minimum, self.maximum)


    def admits(self, other) -> bool:
        """Whether every value ``other`` accepts, this accepts too."""
        return (isinstance(other, Integer) and other.minimum >= self.minimum
                and (self.maximum is None or (other.maximum is not None and other.maximum <= self.maximum)))


class Flag:
    """True or False."""

    def check(self, name, value, spelled=None):
        from .edges import flag
        return flag(name, value)

    def describe(self) -> str:
        return "True or False"


    def admits(self, other) -> bool:
        return isinstance(other, Flag)


class Choice:
    """One of the words ``words``."""

    def __init__(self, words: tuple):
        self.words = tuple(words)

    def check(self, name, value, spelled=None):
        if not isinstance(value, str) or value not in self.words:
            raise ConfigError(f"{name} = {shown(value)}; known: {', '.join(self.words)}")
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(self.words)


    def admits(self, other) -> bool:
        return isinstance(other, Choice) and set(other.words) <= set(self.words)


class Grid:
    """A grid of tokens ``HxW`` (two positive integers, e.g. ``8x8``), read as ``(H, W)``."""

    PATTERN = re.compile(r"([0-9]{1,30})[xX×]([0-9]{1,30})")

    def check(self, name, value, spelled=None):
        spelled = spelled or name
        if not isinstance(value, str):
            raise ConfigError(f"{name} = {shown(value)} must be a string HxW, two positive integers, e.g. '8x8'")
        match = self.PATTERN.fullmatch(value.strip())
        if match is None:
            text = value if len(value) <= 40 else value[:36] + "…"
            raise ConfigError(f"{spelled} {text!r} must be HxW, two positive integers, e.g. 8x8")
        height, width = int(match.group(1)), int(match.group(2))
        if not height or not width:
            raise ConfigError(f"{spelled} {value!r} has a side of 0: the grid needs at least one row and one column")
        return height, width

    def describe(self) -> str:
        return "HxW, two positive integers"


    def admits(self, other) -> bool:
        return isinstance(other, Grid)


class File:
    """The path of a file (relative to the working directory)."""

    def check(self, name, value, spelled=None):
        if not isinstance(value, str):
            raise ConfigError(f"{name} = {shown(value)} must be the path of a file (a string)")
        return value

    def describe(self) -> str:
        return "a file path"


    def admits(self, other) -> bool:
        return isinstance(other, File)
