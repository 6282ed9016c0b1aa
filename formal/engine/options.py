"""An algorithm's options, declared once where its builder is defined, and everything derived from them.

Each option is an :class:`Option`: its name, default, domain (:mod:`.domains`: ``bias: True | False``,
``eps: float ≥ 0``, ``n_kv_heads: None | int ≥ 1 | 'symbolic'``), a one-line meaning, and, where it has
an effect only together with another option's value, that value (``activation`` of the additive score
only, ``reset`` with the GRU cell only).  An algorithm's :class:`Options` hold its declarations in order and
the :class:`Requires` rules between them (``padding = 'same'`` needs ``stride = 1``).  From them come:

- validation: :meth:`Options.builds` wraps a builder so that it receives every option checked, in normal
  form, defaults filled — a value outside its domain is a ConfigError naming the option, the value and the
  domain;
- ``-o KEY=VALUE`` parsing (:func:`parse_options`), typed by the domain, never by the default's Python
  type: ``empty=nan`` is the word, ``eps=1e-5`` a number, ``n_kv_heads=2`` an int, ``padding=same`` a
  word.  Values are parsed, never evaluated; the builder then checks each value's range;
- ``show NAME``'s option listing (text, JSON, LaTeX) and the docs' option tables (:func:`option_rows`);
- the examples ``verify`` draws (``reference.checking.variants``): from each option's ``examples``, mended
  by the same ``applies`` and :class:`Requires` data that validation reads.

A condition that involves sizes (``n_kv_heads`` divides H) is a size constraint of the algorithm, not an
option rule; the option's meaning says so in words.

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

import functools
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..errors import ConfigError, shown
from .domains import Choice, Domain, either, written
from .latex_text import code, latex_text

__all__ = ["Option", "Requires", "Options", "parse_options", "split_option", "same_value", "option_rows",
           "options_text", "options_json", "options_latex", "OptionView", "option_views"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:36] + "…")


def same_value(a, b) -> bool:
    """Whether two option values are the same value to a builder: ``True`` is not ``1``, ``1`` is not ``1.0``."""
    return type(a) is type(b) and a == b


def _written_all(values) -> str:
    return either([written(v) for v in values])


@dataclass(frozen=True)
class Option:
    """One option of an algorithm.

    Parameters
    ----------
    name, default : the keyword and its value when not given.
    domain : Domain
        The values it takes.
    doc : str
        What it means, in one line (the paper's name or convention where there is one).
    applies : tuple
        ``(option, values)``: it has an effect only while ``option`` is one of ``values``, and otherwise
        must keep its default (it would change nothing); ``()`` when it always applies.
    examples : tuple
        The values the examples draw; by default every value of a finite domain but the ``unexampled``.
        A range states a few (``eps``: 1e-5 and 0.1).
    unexampled : tuple
        ``((value, why), …)``: values of the domain no example draws, each with its reason
        (``empty="error"`` raises by design: there is no output to compare).
    hint : str
        Said after the error for a value outside the domain (``for tau → 0 use decoding='greedy'``).
    """

    name: str
    default: object
    domain: Domain
    doc: str
    applies: tuple = ()
    examples: tuple = ()
    unexampled: tuple = ()
    hint: str = ""

    def __post_init__(self):
        if not self.domain.admits(self.default):
            raise ValueError(f"option {self.name}: its default {self.default!r} is not in {self.domain.text()}")
        skipped = [v for v, _ in self.unexampled]
        if not self.examples:
            drawn = tuple(v for v in self.domain.values() if not any(same_value(v, s) for s in skipped))
            if not drawn:
                raise ValueError(f"option {self.name}: a range states the values examples draw")
            object.__setattr__(self, "examples", drawn)
        if not all(self.domain.admits(v) for v in (*self.examples, *skipped)):
            raise ValueError(f"option {self.name}: an example or unexampled value is outside {self.domain.text()}")

    def check(self, value):
        """``value`` in normal form if the domain has it, else a ConfigError naming the option, the value and
        the domain."""
        if not self.domain.admits(value):
            hint = f"; {self.hint}" if self.hint else ""
            raise ConfigError(f"{self.name} = {shown(value)} must be {self.domain.text()}{hint}")
        return self.domain.normal(value)

    def parse(self, text: str, owner: str):
        """The value the command-line text names, typed by the domain (a range is checked by :meth:`check`)."""
        try:
            return self.domain.parse(text.strip())
        except ValueError:
            raise ConfigError(f"option {self.name} of {owner} takes {self.domain.words()}, got {_shown(text)}") \
                from None

    def when(self, option: str, *values) -> "Option":
        """This option with an effect only while ``option`` is one of ``values``."""
        return replace(self, applies=(option, tuple(values)))

    def only(self, *values, why: str) -> "Option":
        """This option narrowed to ``values``: the others are refused, and ``why`` says why."""
        domain = Choice(*values)
        single = {"applies": ()} if len(values) == 1 else {}        # one value left: nothing depends on another
        return self.but(domain=domain, hint=why, doc=f"only {domain.text()}: {why}", **single)

    def but(self, **changes) -> "Option":
        """This option with other fields (another default, meaning or examples); another domain drops the
        examples and unexampled values of the old one unless it gives its own."""
        if "domain" in changes:
            changes = {"examples": (), "unexampled": (), **changes}
        return replace(self, **changes)

    def meaning(self) -> str:
        """The meaning, with when it applies: ``"… ; only with score = 'additive'"``."""
        applies = f"; only with {self.applies[0]} = {_written_all(self.applies[1])}" if self.applies else ""
        return f"{self.doc}{applies}"

    def describe(self) -> str:
        """``"True | False (default True): whether …"`` for ``show``."""
        return f"{self.domain.notation()} (default {written(self.default)}): {self.meaning()}"

    def as_json(self) -> dict:
        applies = {"option": self.applies[0], "values": list(self.applies[1])} if self.applies else None
        return {"default": self.default, "domain": self.domain.notation(), "schema": self.domain.schema(),
                "doc": self.doc, "applies": applies, "examples": list(self.examples),
                "unexampled": {written(v): why for v, why in self.unexampled}, "hint": self.hint}


@dataclass(frozen=True)
class Requires:
    """A rule between two options: while ``option`` is one of ``values``, ``other`` must be one of ``allowed``.

    ``move`` says which the example generator moves when a draw breaks the rule: ``"other"`` (to the first
    of ``allowed``) or ``"option"`` (to its default) — the side whose values are the rarer case to lose.
    """

    option: str
    values: tuple
    other: str
    allowed: tuple
    reason: str = ""
    move: str = "other"

    def broken(self, values: dict) -> bool:
        hit = any(same_value(values[self.option], v) for v in self.values)
        return hit and not any(same_value(values[self.other], a) for a in self.allowed)

    def text(self) -> str:
        reason = f" ({self.reason})" if self.reason else ""
        return (f"{self.option} = {_written_all(self.values)} needs {self.other} = {_written_all(self.allowed)}"
                f"{reason}")

    def message(self, values: dict) -> str:
        reason = f" ({self.reason})" if self.reason else ""
        return (f"{self.option} = {written(values[self.option])} needs {self.other} = "
                f"{_written_all(self.allowed)}, not {written(values[self.other])}{reason}")


class Options(Mapping):
    """The declarations of an algorithm's options, by name in order, and the rules between them."""

    def __init__(self, *options: Option, rules=()):
        self._options = {}
        for option in options:
            if option.name in self._options:
                raise ValueError(f"option {option.name} is declared twice")
            self._options[option.name] = option
        self.rules = tuple(rules)
        for option in options:
            if option.applies and option.applies[0] not in self._options:
                raise ValueError(f"option {option.name} applies with {option.applies[0]}, which is not declared")
        for rule in self.rules:
            if rule.option not in self._options or rule.other not in self._options:
                raise ValueError(f"rule {rule.text()} names an option that is not declared")

    def __getitem__(self, name) -> Option:
        return self._options[name]

    def __iter__(self):
        return iter(self._options)

    def __len__(self):
        return len(self._options)

    def __repr__(self):
        return f"Options({', '.join(self._options)})"

    def defaults(self) -> dict:
        return {name: option.default for name, option in self._options.items()}

    def replaced(self, *options: Option) -> "Options":
        """These declarations with some replaced by name (the same order and rules)."""
        new = {o.name: o for o in options}
        unknown = set(new) - set(self._options)
        if unknown:
            raise ValueError(f"no option {sorted(unknown)[0]} to replace")
        return Options(*(new.get(name, option) for name, option in self._options.items()), rules=self.rules)

    def resolve(self, given: dict, owner: str) -> dict:
        """Every option's value — given, or its default — checked and in normal form; an unknown option, a
        value outside its domain, an option that does not apply, or a broken rule is a ConfigError."""
        unknown = [k for k in given if k not in self._options]
        if unknown:
            known = ", ".join(self._options) or "none"
            raise ConfigError(f"{owner} has no option {shown(unknown[0])}; its options: {known}")
        values = {name: option.check(given.get(name, option.default)) for name, option in self._options.items()}
        for name, option in self._options.items():
            if option.applies and not self.applies(name, values) and not same_value(values[name], option.default):
                control, allowed = option.applies
                raise ConfigError(f"{name} = {written(values[name])} applies to {control} = "
                                  f"{_written_all(allowed)} only, not {written(values[control])}")
        for rule in self.rules:
            if rule.broken(values):
                raise ConfigError(rule.message(values))
        return values

    def applies(self, name: str, values: dict) -> bool:
        """Whether option ``name`` has an effect under ``values``."""
        applies = self._options[name].applies
        return not applies or any(same_value(values[applies[0]], v) for v in applies[1])

    def builds(self, build):
        """Decorate the builder ``build(*, option, …)``: it is called with every option resolved
        (:meth:`resolve`), and the algorithm objects it builds find these declarations through it
        (``builder.declared``: :attr:`formal.engine.algorithm.Algorithm.option_specs`)."""
        owner = build.__name__.removeprefix("build_")

        @functools.wraps(build)
        def builder(**given):
            return build(**self.resolve(given, owner))

        builder.declared = self
        builder.__signature__ = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option.default)
             for name, option in self._options.items()], return_annotation="Algorithm")
        return builder


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

