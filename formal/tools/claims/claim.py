"""A claims file, read as data: each ``[[claim]]`` table checked field by field into a :class:`Claim`.

Reading never evaluates anything: formulas are parsed by :mod:`formal.core.formula` later, when the
subject's sizes are known.  A file that cannot be read is a :class:`~formal.errors.ConfigError` (the
command's exit 2); a claim that is malformed becomes an *invalid* claim, with one line naming the field, so
the other claims of the file are still checked.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ...errors import ConfigError, one_of, shown
from ...guards.files import read_toml
from ...guards.numbers import exact, is_number

__all__ = ["Claim", "ClaimError", "load", "parse_claims", "ASSERTIONS", "SUBJECTS", "KEYS", "PROPERTIES",
           "VERDICTS"]

#: What a claim may assert, exactly one each (``property`` is both a subject's question and its assertion).
ASSERTIONS = ("equals", "approx", "rounds_to", "at_most", "at_least", "theta", "big_o", "leading", "property")
#: What a claim may be about (``implementation`` goes with ``algorithm``).
SUBJECTS = ("model", "algorithm", "op", "graph", "implementation")
#: Properties a ``property`` claim may name.
PROPERTIES = ("permutation_equivariant", "permutation_invariant", "causal")
#: The verdicts; ``expect`` may name the first two.
VERDICTS = ("holds", "fails", "undecided", "invalid")

_ABOUT = ("id", "says", "source", "note", "expect")
_SUBJECT_FIELDS = ("options", "sizes", "seq_len", "batch", "dtype", "convention", "args", "inputs", "mask", "seed",
                   "paged", "tokens", "kv_window")
KEYS = _ABOUT + SUBJECTS + _SUBJECT_FIELDS + ("quantity",) + ASSERTIONS + ("rel_tol", "abs_tol", "in", "ratio_to")
_RATIO_KEYS = ("model", "algorithm", "graph") + _SUBJECT_FIELDS + ("quantity",)
ROWS = re.compile(r"(\d{1,9}):(\d{1,9})")  # rows START:STOP of an executed output
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,99}")
MAX_CLAIMS = 10_000


class ClaimError(ConfigError):
    """A claim that is wrong in itself: the verdict *invalid*."""


@dataclass
class Claim:
    """One claim: what it is about (``subject``: the subject fields), the ``quantity`` asked, the one
    ``assertion`` (name, value) and its modifiers, and where it comes from.  ``error`` is set for a claim
    that could not be read (it is then invalid)."""

    id: str
    index: int
    file: str
    data: dict
    subject: dict = field(default_factory=dict)
    quantity: str | None = None
    assertion: tuple | None = None
    rel_tol: Fraction | int | None = None
    abs_tol: Fraction | int | None = None
    growing: tuple = ()
    ratio_to: dict | None = None
    expect: str | None = None
    says: str = ""
    source: str = ""
    error: str | None = None

    @property
    def base_dir(self) -> str:
        return os.path.dirname(os.path.abspath(self.file)) if self.file else os.getcwd()

    @property
    def kind(self) -> str:
        """``model``, ``algorithm``, ``op``, ``graph`` or ``implementation``."""
        if "implementation" in self.subject:
            return "implementation"
        return next(k for k in ("model", "op", "graph", "algorithm") if k in self.subject)


def load(path) -> list:
    """The claims of the TOML file at ``path``, in order (invalid ones carry their ``error``)."""
    data = read_toml(path, what="claims file")
    return parse_claims(data, str(path))


def parse_claims(data: dict, file: str = "") -> list:
    """The claims of a parsed TOML document: a file-level error is a ConfigError."""
    where = f"claims file {shown(file)}" if file else "claims"
    unknown = sorted(set(data) - {"claim"})
    if unknown:
        raise ConfigError(f"{where} has an unknown top-level key {shown(unknown[0])}: write each claim as a "
                          "[[claim]] table")
    tables = data.get("claim")
    if tables is None:
        raise ConfigError(f"{where} holds no [[claim]] table")
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{where}: 'claim' must be an array of tables ([[claim]]), got {shown(tables)}")
    if len(tables) > MAX_CLAIMS:
        raise ConfigError(f"{where} holds {len(tables):,} claims, more than {MAX_CLAIMS:,}")
    claims, seen = [], {}
    for index, table in enumerate(tables):
        claim = _claim(table, index, file)
        if claim.error is None and claim.id in seen:
            claim.error = f"id {claim.id!r} is also the id of claim {seen[claim.id] + 1}: ids are unique in a file"
        seen.setdefault(claim.id, index)
        claims.append(claim)
    return claims


def _claim(table: dict, index: int, file: str) -> Claim:
    raw_id = table.get("id")
    ident = raw_id if isinstance(raw_id, str) and _ID.fullmatch(raw_id) else f"#{index + 1}"
    claim = Claim(ident, index, file, table)
    try:
        _fill(claim, table, raw_id)
    except ConfigError as exc:          # a ClaimError, or a word outside its list (errors.one_of)
        claim.error = str(exc)
    return claim


def _text(table, key, limit=2000) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise ClaimError(f"{key} must be a string, got {shown(value)}")
    if len(value) > limit:
        raise ClaimError(f"{key} is longer than {limit} characters")
    return value


def _fill(claim: Claim, table: dict, raw_id) -> None:
    """Check every field of ``table`` into ``claim``, by what it says: about, subject, assertion, modifiers."""
    _about(claim, table, raw_id)
    _subject(claim, table)
    _assertion(claim, table)
    _quantity(claim, table)
    _modifiers(claim, table)


def _about(claim: Claim, table: dict, raw_id) -> None:
    """The id, the known fields, says/source/note and expect."""
    if raw_id is None:
        raise ClaimError("id is missing: every claim needs id = \"…\", unique in the file")
    if not isinstance(raw_id, str) or not _ID.fullmatch(raw_id):
        raise ClaimError(f"id {shown(raw_id)} must be a string of letters, digits and _ . : + - (at most 100)")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ClaimError(f"unknown field {shown(unknown[0])}; known: {', '.join(KEYS)}")
    claim.says, claim.source = _text(table, "says"), _text(table, "source")
    _text(table, "note")
    expect = table.get("expect")
    claim.expect = None if expect is None else one_of("expect", expect, ("holds", "fails"))


def _subject(claim: Claim, table: dict) -> None:
    """Exactly one subject, and its fields of the right kinds."""
    subjects = [k for k in ("model", "algorithm", "op", "graph") if k in table]
    if "implementation" in table:
        if "algorithm" not in table:
            raise ClaimError("an implementation claim needs algorithm = \"…\": the algorithm it implements")
        subjects = ["implementation"] + [s for s in subjects if s != "algorithm"]
    if len(subjects) != 1:
        raise ClaimError("a claim is about exactly one of model, algorithm, op, graph, implementation; "
                         + (f"got {', '.join(subjects)}" if subjects else "it names none"))
    claim.subject = {k: table[k] for k in SUBJECTS + _SUBJECT_FIELDS if k in table}
    for key in SUBJECTS:
        if key in table and not isinstance(table[key], str):
            raise ClaimError(f"{key} must be a string, got {shown(table[key])}")
    for key in ("options", "sizes", "args", "inputs", "paged"):
        if key in table and not isinstance(table[key], dict):
            raise ClaimError(f"{key} must be a table, e.g. {key} = {{ … }}, got {shown(table[key])}")


def _assertion(claim: Claim, table: dict) -> None:
    """Exactly one assertion (none for an implementation, whose verdict is conform's)."""
    asserted = [k for k in ASSERTIONS if k in table]
    if claim.kind == "implementation":
        if asserted:
            raise ClaimError(f"an implementation claim takes no assertion ({asserted[0]}): its verdict is "
                             "conform's")
        return
    if len(asserted) != 1:
        raise ClaimError("a claim makes exactly one assertion of " + ", ".join(ASSERTIONS)
                         + (f"; got {', '.join(asserted)}" if asserted else "; it makes none"))
    claim.assertion = (asserted[0], table[asserted[0]])
    if asserted[0] == "property":
        one_of("property", table["property"], PROPERTIES)
        if claim.kind != "algorithm":
            raise ClaimError("a property claim is about an algorithm (algorithm = \"attention\", …)")


def _quantity(claim: Claim, table: dict) -> None:
    """What the claim asks of its subject: none for a property or an implementation, rows of an executed
    output, else a dotted key or a cost's name."""
    quantity = table.get("quantity")
    executed = claim.kind == "op" or "inputs" in table
    if claim.kind == "implementation" or (claim.assertion and claim.assertion[0] == "property"):
        if quantity is not None:
            raise ClaimError(f"a{'n implementation' if claim.kind == 'implementation' else ' property'} claim "
                             "takes no quantity")
    elif executed:
        if quantity is not None and not (isinstance(quantity, str) and ROWS.fullmatch(quantity)):
            raise ClaimError(f"quantity = {shown(quantity)}: a claim with inputs compares the output, or rows of it "
                             "given as \"START:STOP\" (e.g. \"0:4\")")
        claim.quantity = quantity
    else:
        if not isinstance(quantity, str) or not quantity:
            raise ClaimError(f"quantity is missing or not a string (got {shown(quantity)}): name what the claim "
                             "is about, e.g. quantity = \"params.total\"")
        claim.quantity = quantity


def _modifiers(claim: Claim, table: dict) -> None:
    """rel_tol/abs_tol (with approx), in (with the asymptotic assertions), ratio_to."""
    name = claim.assertion[0] if claim.assertion else None
    for key in ("rel_tol", "abs_tol"):
        if key in table:
            value = table[key]
            if name != "approx":
                raise ClaimError(f"{key} goes with approx, not with {name}")
            try:        # the gate: the decimal as written (0.1 is 1/10), or a formula of numbers ("1/100")
                tolerance = exact(value, key) if is_number(value) or isinstance(value, str) else None
            except ConfigError:
                tolerance = None
            if tolerance is None or tolerance < 0:
                raise ClaimError(f"{key} = {shown(value)} must be a finite number ≥ 0")
            setattr(claim, key, tolerance)
    if "in" in table:
        grows = table["in"]
        if name not in ("theta", "big_o", "leading"):
            raise ClaimError(f"in (the sizes that grow) goes with theta, big_o or leading, not with {name}")
        if (not isinstance(grows, list) or not grows or len(grows) > 16
                or not all(isinstance(g, str) and g.isidentifier() for g in grows)):
            raise ClaimError(f"in = {shown(grows)} must be a list of 1 to 16 size names, e.g. in = [\"ell\"]")
        if len(set(grows)) != len(grows):
            raise ClaimError(f"in = {shown(grows)} names a size twice")
        claim.growing = tuple(grows)
    if "ratio_to" in table:
        ratio = table["ratio_to"]
        if not isinstance(ratio, dict):
            raise ClaimError(f"ratio_to must be a table naming a subject, e.g. ratio_to = {{ model = \"gpt2\" }}, "
                             f"got {shown(ratio)}")
        bad = sorted(set(ratio) - set(_RATIO_KEYS))
        if bad:
            raise ClaimError(f"ratio_to has an unknown field {shown(bad[0])}; known: {', '.join(_RATIO_KEYS)}")
        kinds = [k for k in ("model", "algorithm", "graph") if k in ratio]
        if len(kinds) > 1:
            raise ClaimError(f"ratio_to names one subject (model, algorithm or graph), not {', '.join(kinds)}")
        if not ratio:
            raise ClaimError("ratio_to is empty: name another subject, e.g. ratio_to = { model = \"gpt2\" }, or "
                             "another quantity of this one, e.g. ratio_to = { quantity = \"flops.forward\" }")
        if name == "property" or claim.kind in ("implementation", "op") or "inputs" in table:
            raise ClaimError("ratio_to compares two quantities: it does not apply here")
        if "quantity" in ratio and not (isinstance(ratio["quantity"], str) and ratio["quantity"]):
            raise ClaimError(f"ratio_to's quantity = {shown(ratio['quantity'])} must name a quantity, e.g. "
                             "\"flops.forward\"")
        claim.ratio_to = dict(ratio)
