"""The parameters of the attention patterns, declared once: what ``graph``, the claims and the docs accept.

A pattern (:data:`SCHEMAS`, by its ``graph`` name) takes its sizes (``n``, ``n_z``, ``grid``, ``file``), its
own options (``window``, ``stride``, …) and the report's (``layers``, ``heads``, ``d_head``).  Every
parameter is declared once in :data:`PARAMETERS` — its name (a Python identifier), type and range
(:mod:`formal.graphs.kinds`), meaning, the flag that gives it on the command line and any other spelling it
is given by in data — and a pattern's schema takes it as it is or narrows it (a BigBird window may be 0, a
sliding window may not), required or with its default.

:func:`check` validates a mapping of parameters against a pattern's schema and completes it with the
defaults: an unknown parameter, a value of the wrong type or range, or a missing required one is a
ConfigError naming it (in the caller's spelling: the names of data, or the flags of the command line).  The
``graph`` command derives its flags from :data:`PARAMETERS`, and the builders of
:mod:`formal.graphs.patterns` check their options with :func:`option`.  Neither the memory limit (the
caller's: :func:`formal.guards.limits.memory_limit`) nor an output option (``--draw``, ``--json``) is a
parameter of a pattern.

This module imports no numpy: the command line reads it to declare its flags.

Examples
--------
>>> name, values = check("sliding-window", {"n": 64, "window": 8})
>>> name, values["causal"], values["layers"]
('sliding-window', True, 4)
>>> check("full", {"n": 64, "window": 8})
Traceback (most recent call last):
...
formal.errors.ConfigError: window does not apply to the full pattern; it takes n, layers, heads, d_head
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError, one_of, shown
from ..guards.limits import MAX_SIZE
from .kinds import Choice, File, Flag, Grid, Integer

__all__ = ["Parameter", "Schema", "PARAMETERS", "SCHEMAS", "PARTS", "ALIGNMENTS", "NOT_PARAMETERS", "REQUIRED",
           "check", "option", "schema_of"]


# ------------------------------------------------------------------------------------------- parameters
class _Required:
    """The default of a required parameter."""

    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()
ROLES = ("size", "option", "report")


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter: ``name`` (a Python identifier) with its ``kind`` (type and range), ``meaning``, ``role``
    (a size of the sequences, an option of the pattern, or one of the report's), ``default``
    (:data:`REQUIRED`, or the value used when it is not given; None: the pattern decides), the command
    line's ``flag`` and ``metavar``, other spellings in data (``aliases``), a ``negation``: the word and
    meaning of a flag that gives the opposite (``bidirectional`` for ``causal``), and the flags it was once
    given by (``deprecated``: they still work, with a note)."""

    name: str
    kind: object
    meaning: str
    role: str = "option"
    default: object = None
    flag: str = ""
    metavar: str | None = None
    aliases: tuple = ()
    negation: tuple | None = None
    deprecated: tuple = ()

    def __post_init__(self):
        if not self.name.isidentifier() or self.role not in ROLES:
            raise ConfigError(f"parameter {self.name!r} ({self.role}) must be an identifier with a role in {ROLES}")
        if not self.flag:
            object.__setattr__(self, "flag", "--" + self.name.replace("_", "-"))

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def spelled(self, flags: bool) -> str:
        """How a message names it: its name, or its flag(s) on the command line."""
        if not flags:
            return self.name
        return f"{self.flag}/--{self.negation[0]}" if self.negation else self.flag

    def but(self, **changes) -> "Parameter":
        """The same parameter narrowed for one pattern (``kind``), or required or defaulted (``default``)."""
        return dataclasses.replace(self, **changes)

    def check(self, value, *, spelled=None):
        return self.kind.check(self.name, value, spelled)


#: Every parameter of a pattern or of its report, in the command line's order.
PARAMETERS = (
    Parameter("n", Integer(1), "sequence length (the queries; the keys too, except cross)", "size",
              flag="--seq-len", metavar="LENGTH", aliases=("ell",), deprecated=("--n",)),
    Parameter("n_z", Integer(1), "context length, the keys (cross; causal with ℓ_z ≠ ℓ_x)", "size",
              flag="--context-len", metavar="CONTEXT", deprecated=("--n-z",)),
    Parameter("align", Choice(("top-left", "bottom-right")), "causal alignment when ℓ_z ≠ ℓ_x", metavar="ALIGN"),
    Parameter("window", Integer(0), "window size (keys per query, itself included; Swin: the side M)",
              metavar="WINDOW"),
    Parameter("dilation", Integer(1), "distance between a dilated window's keys", metavar="DILATION"),
    Parameter("n_global", Integer(0), "global positions (the first GLOBAL)", flag="--global", metavar="GLOBAL",
              aliases=("global",)),
    Parameter("stride", Integer(1), "Sparse Transformer stride", metavar="STRIDE"),
    Parameter("summary", Integer(1), "fixed pattern: summary positions per block", metavar="SUMMARY"),
    Parameter("part", Choice(("both", "local", "stride", "summary")), "Sparse Transformer head(s) to take",
              metavar="PART"),
    Parameter("n_random", Integer(1), "random keys per query (BigBird)", flag="--random", metavar="RANDOM",
              aliases=("random",)),
    Parameter("seed", Integer(0), "seed of the random pattern", metavar="SEED"),
    Parameter("grid", Grid(), "Swin token grid, e.g. 8x8 (N = H·W)", "size", metavar="HxW"),
    Parameter("shifted", Flag(), "Swin's shifted windows"),
    Parameter("shift", Integer(1), "offset of the shifted windows (default: M/2)", metavar="SHIFT"),
    Parameter("causal", Flag(), "keys at or before the query only", negation=("bidirectional", "keys on both sides")),
    Parameter("file", File(), "edgelist: one 'key query' pair of positions per line", "size", metavar="FILE"),
    Parameter("layers", Integer(0), "layers of receptive field to show", "report", 4, metavar="LAYERS"),
    Parameter("heads", Integer(1, MAX_SIZE), "heads, for the FLOPs", "report", 1, metavar="HEADS"),
    Parameter("d_head", Integer(1, MAX_SIZE), "width of a head, for the FLOPs", "report", 64, metavar="WIDTH"),
)
_BY_NAME = {p.name: p for p in PARAMETERS}
#: Every other spelling data may use → (the parameter, whether it means the opposite).
_SPELLINGS = {**{a: (p, False) for p in PARAMETERS for a in p.aliases},
              **{p.negation[0]: (p, True) for p in PARAMETERS if p.negation}}
#: The Sparse Transformer's heads (``part``), and the causal alignments (``align``: those of
#: :data:`formal.core.masks.ALIGNMENTS`, which imports numpy).
PARTS = _BY_NAME["part"].kind.words
ALIGNMENTS = _BY_NAME["align"].kind.words
#: Names that are not parameters of a pattern, and why.
NOT_PARAMETERS = {
    "draw": "draw is not a parameter of a pattern: it only changes what the graph command writes (--draw)",
    "json": "json is not a parameter of a pattern: it only changes what the graph command prints (--json)",
    "max_memory": "max_memory is not a parameter of a pattern: the memory limit is the caller's (--max-memory of "
                  "graph, formal.guards.limits.memory_limit in Python)",
}


def _use(name, default=None, kind=None) -> Parameter:
    """The declared parameter ``name`` as a pattern takes it."""
    p = _BY_NAME[name]
    return p.but(default=default, **({"kind": kind} if kind is not None else {}))


_POSITIVE = Integer(1)
_REPORT = tuple(p for p in PARAMETERS if p.role == "report")


@dataclasses.dataclass(frozen=True)
class Schema:
    """A pattern's parameters: its ``name`` (as ``graph`` takes it), the ``builder`` that makes it (a name of
    :data:`formal.graphs.patterns.PATTERNS`, or ``"edgelist"``), and its ``parameters`` — sizes, options,
    then the report's."""

    name: str
    builder: str
    parameters: tuple

    def __getitem__(self, name) -> Parameter:
        return next(p for p in self.parameters if p.name == name)

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.parameters)


def _schema(name, builder, *parameters) -> Schema:
    return Schema(name, builder, tuple(parameters) + _REPORT)


#: Every pattern of ``graph``, by its name there, with its parameters.
SCHEMAS = {s.name: s for s in (
    _schema("full", "full", _use("n", REQUIRED)),
    _schema("causal", "causal", _use("n", REQUIRED), _use("n_z"), _use("align")),
    _schema("cross", "cross", _use("n", REQUIRED), _use("n_z")),
    _schema("sliding-window", "sliding_window", _use("n", REQUIRED), _use("window", REQUIRED, _POSITIVE),
            _use("causal", True)),
    _schema("dilated", "dilated", _use("n", REQUIRED), _use("window", REQUIRED, _POSITIVE), _use("dilation", REQUIRED),
            _use("causal", True)),
    _schema("global-local", "global_local", _use("n", REQUIRED), _use("window", REQUIRED, _POSITIVE),
            _use("n_global", REQUIRED), _use("causal", False)),
    _schema("strided", "strided", _use("n", REQUIRED), _use("stride", REQUIRED),
            _use("part", "both", Choice(("both", "local", "stride")))),
    _schema("fixed", "fixed", _use("n", REQUIRED), _use("stride", REQUIRED), _use("summary", 1),
            _use("part", "both", Choice(("both", "local", "summary")))),
    _schema("random", "random", _use("n", REQUIRED), _use("n_random", REQUIRED), _use("window", 0),
            _use("n_global", 0), _use("seed", 0)),
    _schema("swin", "swin", _use("grid", REQUIRED), _use("n"), _use("window", REQUIRED, _POSITIVE),
            _use("shifted", False), _use("shift")),
    _schema("edgelist", "edgelist", _use("n", REQUIRED), _use("file", REQUIRED)),
)}
_BY_BUILDER = {s.builder: s for s in SCHEMAS.values()}


def schema_of(pattern) -> Schema:
    """The schema of ``pattern``: its ``graph`` name (``"sliding-window"``) or its builder's
    (``"sliding_window"``)."""
    if isinstance(pattern, str) and pattern in _BY_BUILDER:
        return _BY_BUILDER[pattern]
    return SCHEMAS[one_of("pattern", pattern, tuple(SCHEMAS))]


def option(builder: str, name: str, value):
    """``value`` of the option ``name`` of the builder ``builder``, checked as its schema declares it (the
    builders of :mod:`formal.graphs.patterns` check their arguments with this)."""
    return _BY_BUILDER[builder][name].check(value)


# ------------------------------------------------------------------------------------------- checking
def check(pattern, given, *, flags: bool = False) -> tuple:
    """``(name, values)``: the ``graph`` name of ``pattern`` and its parameters ``given`` (a mapping)
    checked against its schema and completed with the defaults — every parameter of the schema, by name.

    ``flags``: ``given`` comes from the command line (by parameter name, values already typed by the flags),
    and messages name the flags.  Otherwise ``given`` is data: a parameter may be given by another spelling
    (``ell`` for ``n``, ``global`` for ``n_global``, ``bidirectional = true`` for ``causal = false``), and
    one given as None is not given.

    Raises ConfigError for a parameter the pattern does not take (naming the ones it does), a required one
    missing, or a value of the wrong type or range (naming the parameter, its value and what it must be).
    """
    schema = schema_of(pattern)
    given, written = _spellings(schema, given) if not flags else (dict(given), {})
    _applies(schema, given, written, flags)
    _needed(schema, given, flags)
    values = {}
    for p in schema.parameters:                                    # sizes, options, report: in that order
        if p.name in given:
            values[p.name] = p.check(given[p.name], spelled=p.spelled(flags))
            if p.name == "n" and "grid" in values:
                _agree(schema, values, given, flags)
        else:
            values[p.name] = None if p.required else p.default
    return schema.name, values


def _spellings(schema, given) -> tuple:
    """Data's parameters by their names, other spellings resolved (a name given twice refused); and how each
    was written."""
    out, spelled = {}, {}
    for key, value in dict(given).items():
        if value is None:                                          # Python's "not given"
            continue
        if not isinstance(key, str):
            raise ConfigError(f"parameter {shown(key)} is not a name; the {schema.name} pattern takes "
                              f"{', '.join(schema.names)}")
        name = key
        if key in _SPELLINGS:
            p, opposite = _SPELLINGS[key]
            name = p.name
            if opposite:
                value = not p.kind.check(key, value)
        if name in out:
            raise ConfigError(f"{spelled[name]} and {key} give the same parameter: give one")
        out[name], spelled[name] = value, key
    return out, spelled


def _applies(schema, given, written, flags):
    """Refuse a parameter the pattern does not take (the first by name), as the caller ``written`` it."""
    extra = sorted(set(given) - set(schema.names))
    if not extra:
        return
    name = extra[0]
    if flags:
        raise ConfigError(f"{_BY_NAME[name].spelled(True)} does not apply to the {schema.name} pattern")
    takes = f"{', '.join(schema.names)}"
    if name in NOT_PARAMETERS:
        raise ConfigError(f"{NOT_PARAMETERS[name]}; the {schema.name} pattern takes {takes}")
    if name in _BY_NAME:
        raise ConfigError(f"{written[name]} does not apply to the {schema.name} pattern; it takes {takes}")
    raise ConfigError(f"the {schema.name} pattern has no parameter {shown(name)}; it takes {takes}")


def _needed(schema, given, flags):
    """Refuse a missing required parameter: the pattern's options first, then its sizes."""
    for role in ("option", "size"):
        for p in schema.parameters:
            if p.role == role and p.required and p.name not in given:
                say = p.spelled(flags) + (f" {p.metavar}" if flags and role == "size" else "")
                raise ConfigError(f"the {schema.name} pattern needs {say}")


def _agree(schema, values, given, flags):
    """A grid of H×W tokens and ``n``, both given, must agree (n = H·W)."""
    height, width = values["grid"]
    if values["n"] != height * width:
        said = {k: f"--{k} {given[k]}" if flags else f"{k} = {shown(given[k])}" for k in ("n", "grid")}
        raise ConfigError(f"{said['n']} disagrees with {said['grid']} ({height * width} tokens)")
