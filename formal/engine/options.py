"""Options on the command line and in ``show``: ``-o KEY=VALUE`` read by the option's declared domain
(:mod:`.declarations`), never by the default's Python type — ``empty=nan`` is the word, ``eps=1e-5`` a number,
``n_kv_heads=2`` an int, ``padding=same`` a word; values are parsed, never evaluated, and the builder then
checks each value's range — and the listing of every option of an algorithm with its value, domain, default
and meaning (text, JSON, ASCII LaTeX; the docs render the same :class:`OptionView`).

Examples
--------
>>> parse_options("attention", ["empty=nan", "bias=false"])
{'empty': 'nan', 'bias': False}
>>> parse_options("layer_norm", ["eps=1e-5"])
{'eps': 1e-05}
>>> parse_options("mhattention", ["n_kv_heads=2"]), parse_options("mhattention", ["n_kv_heads=symbolic"])
({'n_kv_heads': 2}, {'n_kv_heads': 'symbolic'})
>>> parse_options("conv1d", ["padding=same"])
{'padding': 'same'}
>>> parse_options("attention", ["bias=1"])
Traceback (most recent call last):
...
formal.errors.ConfigError: option bias of attention takes true or false, got '1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError
from .declarations import Option, Options, Requires
from .domains import written
from .latex_text import code, latex_text

__all__ = ["parse_options", "split_option", "option_rows", "OptionView", "option_views", "options_text",
           "options_json", "options_latex", "Option", "Options", "Requires"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:36] + "…")


def split_option(text: str):
    """``"KEY=VALUE"`` → ``(key, value)``, both text; a ConfigError unless KEY is a name and ``=`` is there."""
    key, sep, raw = text.partition("=")
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(f"option {_shown(text)} must be KEY=VALUE, with KEY a name such as bias or n_kv_heads")
    return key, raw


def parse_options(algorithm, texts) -> dict:
    """The options ``texts`` (``["KEY=VALUE", ...]``) of ``algorithm`` (an object or a registry name), each
    typed by its declared domain; an unknown or repeated key is a ConfigError."""
    if isinstance(algorithm, str):
        from ..algorithms import get
        algorithm = get(algorithm)
    options = {}
    for text in texts:
        key, raw = split_option(text)
        if key not in algorithm.option_specs:
            known = ", ".join(algorithm.option_specs) or "none"
            raise ConfigError(f"{algorithm.name} has no option {_shown(key)}; its options: {known}")
        if key in options:
            raise ConfigError(f"option {_shown(key)} is given twice")
        options[key] = algorithm.option_specs[key].parse(raw, algorithm.name)
    return options


# ------------------------------------------------------------------------------------------- rendering
def option_rows(algorithm) -> list:
    """``(name, value, option)`` for every option of ``algorithm``, in declaration order."""
    return [(name, algorithm.options[name], option) for name, option in algorithm.option_specs.items()]


@dataclass(frozen=True)
class OptionView:
    """One option as the renderings (``show --latex``'s model, the docs) show it: its name, its value and
    default as written, its domain's notation, and its meaning."""

    name: str
    value: str
    domain: str
    default: str
    meaning: str


def option_views(algorithm) -> tuple:
    """An :class:`OptionView` of every option of ``algorithm``."""
    return tuple(OptionView(name, written(value), option.domain.notation(), written(option.default),
                            option.meaning()) for name, value, option in option_rows(algorithm))


def options_text(algorithm) -> list:
    """``show``'s listing: one line per option — ``name = value``, then its domain, default and meaning —
    and one per rule between options."""
    rows = [(f"{name} = {written(value)}", option.describe()) for name, value, option in option_rows(algorithm)]
    if not rows:
        return []
    width = max(len(left) for left, _ in rows)
    lines = ["Options:     name = value, its domain (default): meaning"]
    lines += [f"  {left:<{width}}  {right}" for left, right in rows]
    lines += [f"  rule: {rule.text()}" for rule in algorithm.option_specs.rules]
    return lines


def options_latex(algorithm) -> str:
    """The listing as an ASCII LaTeX ``tabular`` (empty without options): option, value, domain (default),
    meaning; then the rules."""
    rows = option_rows(algorithm)
    if not rows:
        return ""
    out = [r"\begin{tabular}{lllp{0.45\linewidth}}", r"option & value & domain (default) & meaning \\", r"\hline"]
    for name, value, option in rows:
        out.append(rf"{code(name)} & {code(written(value))} & {option.domain.latex()} "
                   rf"(default {code(written(option.default))}) & {latex_text(option.meaning())} \\")
    rules = algorithm.option_specs.rules
    if rules:
        out.append(r"\hline")
        out += [rf"\multicolumn{{4}}{{l}}{{rule: {latex_text(rule.text())}}} \\" for rule in rules]
    out.append(r"\end{tabular}")
    return "\n".join(out) + "\n"


def options_json(algorithm) -> dict:
    """The declarations as JSON: ``{"options": {name: declaration}, "rules": [text, …]}``."""
    return {"options": {name: option.as_json() for name, _, option in option_rows(algorithm)},
            "rules": [rule.text() for rule in algorithm.option_specs.rules]}

