"""An algorithm's options, declared once where its builder is defined.

Each option is an :class:`Option`: its name, default, domain (:mod:`.domains`: ``bias: True | False``,
``eps: float ≥ 0``, ``n_kv_heads: None | int ≥ 1 | 'symbolic'``), a one-line meaning, and, where it has
an effect only together with another option's value, that value (``activation`` of the additive score
only, ``reset`` with the GRU cell only).  An algorithm's :class:`Options` hold its declarations in order and
the :class:`Requires` rules between them (``padding = 'same'`` needs ``stride = 1``).  Everything else is
derived from them:

- validation: :meth:`Options.builds` wraps a builder so that it receives every option checked, in normal
  form, defaults filled — a value outside its domain is a ConfigError naming the option, the value and the
  domain;
- ``-o KEY=VALUE`` parsing, typed by the domain, and ``show``'s listing of every option with its domain,
  default and meaning (:mod:`.options`);
- the examples ``verify`` draws (``formal.sampling.variants``): from each option's ``examples``, mended
  by the same ``applies`` and :class:`Requires` data that validation reads.

A condition that involves sizes (``n_kv_heads`` divides H) is a size constraint of the algorithm, not an
option rule; the option's meaning says so in words.

Examples
--------
>>> from formal.engine.domains import BOOL, Choice
>>> score = Option("score", "dot", Choice("dot", "additive"), "how a query meets a key")
>>> tanh = Option("tanh", True, BOOL, "tanh in the additive score").when("score", "additive")
>>> Options(score, tanh).resolve({"score": "additive", "tanh": False}, "demo")
{'score': 'additive', 'tanh': False}
>>> Options(score, tanh).resolve({"tanh": False}, "demo")
Traceback (most recent call last):
...
formal.errors.ConfigError: tanh = False applies to score = 'additive' only, not 'dot'
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..errors import ConfigError, shown
from .domains import Choice, Domain, either, written

__all__ = ["Option", "Requires", "Options", "same_value"]


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
    searched : tuple
        The values ``conform --identify`` tries when it searches for the variant an implementation is: the
        values real code uses (``eps``: 0, 1e-12, 1e-6, 1e-5); by default the default and the ``examples``.
    stands_for : tuple
        ``(value, meant)``: where the option applies, ``value`` is resolved to ``meant`` (``patch_order=None``
        is the channel-first order of an image's patches), so the object built records what it means.
    group : str
        A family of options varied together and apart from the others when every variant is enumerated
        (``verify --variants all``, :func:`formal.sampling.variants.every_variant`): ``"rope"`` for the rotary
        settings.  The product of every option's values with every other's would be millions of variants; a
        group's combinations are taken with the other options at their defaults, unless the run fixes one of
        its options (then it joins the product).  ``""``: an option of the product.
    """

    name: str
    default: object
    domain: Domain
    doc: str
    applies: tuple = ()
    examples: tuple = ()
    unexampled: tuple = ()
    hint: str = ""
    searched: tuple = ()
    stands_for: tuple = ()
    group: str = ""

    def __post_init__(self):
        if not self.domain.admits(self.default):
            raise ValueError(f"option {self.name}: its default {self.default!r} is not in {self.domain.text()}")
        skipped = [v for v, _ in self.unexampled]
        if not self.examples:
            drawn = tuple(v for v in self.domain.values() if not any(same_value(v, s) for s in skipped))
            if not drawn:
                raise ValueError(f"option {self.name}: a range states the values examples draw")
            object.__setattr__(self, "examples", drawn)
        if not self.searched:
            known = (*self.examples, *skipped)        # an unexampled default cannot be compared either
            extra = () if any(same_value(self.default, v) for v in known) else (self.default,)
            object.__setattr__(self, "searched", extra + tuple(self.examples))
        if not all(self.domain.admits(v) for v in (*self.examples, *skipped, *self.searched)):
            raise ValueError(f"option {self.name}: an example, unexampled or searched value is outside "
                             f"{self.domain.text()}")

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
            return self.domain.parse(text)
        except ValueError:
            hint = f"; {self.hint}" if self.hint else ""
            raise ConfigError(f"option {self.name} of {owner} takes {self.domain.words()}, got {_shown(text)}{hint}") \
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
        examples, unexampled and searched values of the old one unless it gives its own, and what a value stands
        for where the new domain leaves either out."""
        if "domain" in changes:
            kept = self.stands_for if self.stands_for and all(changes["domain"].admits(v)
                                                              for v in self.stands_for) else ()
            changes = {"examples": (), "unexampled": (), "searched": (), "stands_for": kept, **changes}
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
                "unexampled": [{"value": v, "why": why} for v, why in self.unexampled], "hint": self.hint}


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
        for name, option in self._options.items():
            if option.stands_for and self.applies(name, values) and same_value(values[name], option.stands_for[0]):
                values[name] = option.stands_for[1]
        return values

    def applies(self, name: str, values: dict) -> bool:
        """Whether option ``name`` has an effect under ``values``."""
        applies = self._options[name].applies
        return not applies or any(same_value(values[applies[0]], v) for v in applies[1])

    def builds(self, build):
        """Decorate the builder ``build(*, option, …)``: it is called with every option resolved
        (:meth:`resolve`), and the algorithm object it returns is told who built it and with which options
        (:meth:`formal.engine.algorithm.Algorithm.built_by`), so that it finds these declarations
        (``builder.declared``: :attr:`formal.engine.algorithm.Algorithm.option_specs`) and its options without the
        builder stating them again."""
        owner = build.__name__.removeprefix("build_")

        @functools.wraps(build)
        def builder(**given):
            resolved = self.resolve(given, owner)
            built = build(**resolved)
            attach = getattr(built, "built_by", None)
            return attach(builder, resolved) if attach is not None else built

        builder.declared = self
        builder.__signature__ = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option.default)
             for name, option in self._options.items()], return_annotation="Algorithm")
        return builder
