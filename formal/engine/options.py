"""``-o KEY=VALUE`` options from the command line, typed by what the algorithm declares.

An option's value is read as the type of the option's default in the algorithm object — a bool option takes
``true`` or ``false``, an int option an integer, a float option a number, a text option the text as written
— so a documented text value is never turned into a number (``empty=nan`` is the policy ``"nan"``, not a
float; a word the algorithm declares for a numeric option, such as conv1d's ``padding=same``, is kept as
text).  An option whose default is ``None`` (``n_kv_heads``: None, an int or ``symbolic``) takes an integer
when the text is one, and the text otherwise.  Values are parsed, never evaluated; the algorithm's builder
then checks each value's range and names what is wrong.

Examples
--------
>>> parse_options("attention", ["empty=nan", "bias=false"])
{'empty': 'nan', 'bias': False}
>>> parse_options("layer_norm", ["eps=1e-5"])
{'eps': 1e-05}
>>> parse_options("mhattention", ["n_kv_heads=2"]), parse_options("mhattention", ["n_kv_heads=symbolic"])
({'n_kv_heads': 2}, {'n_kv_heads': 'symbolic'})
>>> parse_options("attention", ["bias=1"])
Traceback (most recent call last):
...
formal.errors.ConfigError: option bias of attention takes true or false, got '1'
"""

from __future__ import annotations

import re

from ..errors import ConfigError

__all__ = ["parse_options", "split_option"]

_INT = re.compile(r"[+-]?\d{1,30}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:36] + "…")


def split_option(text: str):
    """``"KEY=VALUE"`` → ``(key, value)``, both text; a ConfigError unless KEY is a name and ``=`` is there."""
    key, sep, raw = text.partition("=")
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(f"option {_shown(text)} must be KEY=VALUE, with KEY a name such as bias or n_kv_heads")
    return key, raw


def _coerce(algorithm, key: str, raw: str):
    default = algorithm.options[key]
    where = f"option {key} of {algorithm.name}"
    text = raw.strip()
    if isinstance(default, bool):
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{where} takes true or false, got {_shown(raw)}")
        return text.lower() == "true"
    if isinstance(default, int):
        words = algorithm.option_words.get(key, ())
        if text in words:
            return text
        if not _INT.fullmatch(text):
            alternatives = "".join(f" or {w}" for w in words)
            raise ConfigError(f"{where} takes an integer{alternatives}, got {_shown(raw)}")
        return int(text)
    if isinstance(default, float):
        try:
            return float(text) if len(text) <= 40 else float("x")
        except ValueError:
            raise ConfigError(f"{where} takes a number, got {_shown(raw)}") from None
    if default is None and _INT.fullmatch(text):
        return int(text)
    return raw


def parse_options(algorithm, texts) -> dict:
    """The options ``texts`` (``["KEY=VALUE", ...]``) of ``algorithm`` (an object or a registry name),
    each typed as its default is; an unknown or repeated key is a ConfigError."""
    if isinstance(algorithm, str):
        from ..algorithms import get
        algorithm = get(algorithm)
    options = {}
    for text in texts:
        key, raw = split_option(text)
        if key not in algorithm.options:
            known = ", ".join(algorithm.options) or "none"
            raise ConfigError(f"{algorithm.name} has no option {_shown(key)}; its options: {known}")
        if key in options:
            raise ConfigError(f"option {_shown(key)} is given twice")
        options[key] = _coerce(algorithm, key, raw)
    return options
