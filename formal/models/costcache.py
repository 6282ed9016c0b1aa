"""The presets' derived cost formulas, shipped as data so that ``complexity`` needs no sympy.

Deriving a model's costs takes sympy (a third of a second to import) and the derivation itself; the numbers
``complexity`` prints are polynomials in the sizes evaluated at a configuration.  So the formulas of every model the
presets use — parameters, FLOPs of a forward pass and of a training step under each convention, activation memory,
KV cache, and the size constraints with their messages — are derived once, by the command below, and shipped with
the package as data in ``formal/models/data/cost_formulas.json``: polynomials as term lists
(:class:`~formal.costs.polynomials.Polynomial`), evaluated exactly with Python ints and Fractions.  Nothing in the
file is evaluated as code, and nothing is written at run time.

An entry is keyed by the model's registry name and its options as canonical JSON; the file records the
package version it was derived with and is ignored under any other.  A model or option set the file does
not hold is derived with sympy — the same numbers, later.  The tests derive every entry afresh and compare;
after changing an algorithm or a preset, regenerate the file::

    python -m formal.models.costcache --write     # rewrite formal/models/data/cost_formulas.json
    python -m formal.models.costcache --check     # exit 1 if it differs from a fresh derivation
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache

from ..costs.polynomials import Polynomial
from ..errors import condition_failure

__all__ = ["PATH", "CostFormulas", "SizeCondition", "lookup", "key", "derive_all", "stale", "write", "main"]

#: The shipped file.
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cost_formulas.json")
#: How to regenerate it, as a stale-cache message says.
REGENERATE = "python -m formal.models.costcache --write"
_FORMAT = 1  # the file's layout; a reader skips a file of another


@dataclass(frozen=True)
class SizeCondition:
    """A :class:`~formal.core.constraints.Constraint` as data: ``relation`` (``"<="`` or ``"divides"``) between two
    size polynomials, each side as the failure message writes it (``None`` for a number, which the message
    writes as its value), the reason and the wording.  ``holds`` and ``explain`` read sizes by name and say
    what the Constraint's say (the tests compare them)."""

    relation: str
    args: tuple
    written: tuple
    reason: str = ""
    wording: str = ""

    @property
    def names(self) -> frozenset:
        """The size names it reads."""
        return frozenset().union(*(p.names for p in self.args))

    def _values(self, values: dict) -> tuple:
        return tuple(int(p.value(values)) for p in self.args)  # int(): as Constraint's _value truncates

    def holds(self, values: dict) -> bool:
        a, b = self._values(values)
        return a <= b if self.relation == "<=" else b % a == 0

    def explain(self, values: dict) -> str:
        (va, vb), (wa, wb) = self._values(values), self.written
        return condition_failure(self.relation, self.wording == "even", (wa, va), (wb, vb), self.reason)

    @classmethod
    def of(cls, constraint) -> "SizeCondition":
        """The data of a :class:`~formal.core.constraints.Constraint`."""
        return cls(constraint.relation, tuple(Polynomial.from_sympy(a) for a in constraint.args),
                   tuple(None if a.is_number else str(a) for a in constraint.args), constraint.reason,
                   constraint.wording)

    def to_data(self) -> dict:
        return {"relation": self.relation, "args": [p.to_data() for p in self.args], "written": list(self.written),
                "reason": self.reason, "wording": self.wording}

    @classmethod
    def from_data(cls, data: dict) -> "SizeCondition":
        return cls(data["relation"], tuple(Polynomial.from_data(a) for a in data["args"]), tuple(data["written"]),
                   data["reason"], data["wording"])


@dataclass(frozen=True)
class CostFormulas:
    """What ``complexity`` evaluates of a model stack (``algorithm`` built with ``options``), as polynomials
    in the size names: ``params`` (total, embedding, non_embedding), ``flops[convention]`` (forward,
    training_step: one sequence), ``memory[convention]`` (scalars materialised by one forward pass),
    ``kv_cache`` (scalars_per_token, scalars_per_sequence; ``None`` but for decoder-only models), and what
    :func:`formal.models.presets.resolve_sizes` reads of an algorithm: ``label``, ``symbols`` (the size names) and
    ``size_constraints`` (:class:`SizeCondition` s, which read sizes by name).  ``length_dependent_params``
    names the parameters whose size grows with the sequence length (``"W_p (d_e×(ℓ + 1))"``)."""

    algorithm: str
    options: dict
    label: str
    symbols: tuple
    size_constraints: tuple
    params: dict
    flops: dict
    memory: dict
    kv_cache: dict | None
    length_dependent_params: tuple

    sizes_by_name = True  # resolve_sizes binds names, not sympy symbols, for these constraints

    @classmethod
    def derive(cls, model) -> "CostFormulas":
        """The formulas of a :class:`formal.models.model.Model`, from its sympy derivation."""
        from ..core.symbols import ell
        from ..costs.conventions import CONVENTIONS
        poly = Polynomial.from_sympy
        cache = model.kv_cache_scalars()
        return cls(
            model.name, dict(model.options), model.algorithm.label, tuple(str(s) for s in model.algorithm.symbols),
            tuple(SizeCondition.of(c) for c in model.algorithm.size_constraints),
            {k: poly(v) for k, v in model.params().items()},
            {c: {"forward": poly(model.forward(c).flops), "training_step": poly(model.training_step(c))}
             for c in CONVENTIONS},
            {c: poly(model.forward(c).memory) for c in CONVENTIONS},
            None if cache is None else {"scalars_per_token": poly(cache.xreplace({ell: 1})),
                                        "scalars_per_sequence": poly(cache)},
            tuple(model.length_dependent_params()))

    def to_data(self) -> dict:
        """JSON-ready, without ``algorithm`` and ``options`` (the entry's key)."""
        def polys(d):
            return {k: polys(v) if isinstance(v, dict) else v.to_data() for k, v in d.items()}
        return {"label": self.label, "symbols": list(self.symbols),
                "size_constraints": [c.to_data() for c in self.size_constraints],
                "params": polys(self.params), "flops": polys(self.flops), "memory": polys(self.memory),
                "kv_cache": None if self.kv_cache is None else polys(self.kv_cache),
                "length_dependent_params": list(self.length_dependent_params)}

    @classmethod
    def from_data(cls, algorithm: str, options: dict, data: dict) -> "CostFormulas":
        def polys(d):
            return {k: polys(v) if isinstance(v, dict) else Polynomial.from_data(v) for k, v in d.items()}
        return cls(algorithm, dict(options), data["label"], tuple(data["symbols"]),
                   tuple(SizeCondition.from_data(c) for c in data["size_constraints"]), polys(data["params"]),
                   polys(data["flops"]), polys(data["memory"]),
                   None if data["kv_cache"] is None else polys(data["kv_cache"]),
                   tuple(data["length_dependent_params"]))


def key(algorithm: str, options: dict) -> str | None:
    """The entry key: ``{"algorithm": …, "options": …}`` as canonical JSON (sorted keys, no spaces); ``None``
    for options JSON cannot write exactly (a date from a TOML file, NaN), which no entry holds."""
    try:
        return json.dumps({"algorithm": algorithm, "options": options}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


@lru_cache(maxsize=None)
def _entries(path: str = PATH) -> dict:
    """key → entry data of the file at ``path``; empty if it is missing, unreadable, malformed, or derived
    by another version of the package (a stale file is skipped, never trusted)."""
    from .. import __version__
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("format") != _FORMAT or data.get("version") != __version__:
            return {}
        return {key(e["algorithm"], e["options"]): e for e in data["models"]}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def lookup(algorithm: str, options: dict, *, path: str = PATH) -> CostFormulas | None:
    """The shipped formulas of ``algorithm`` built with ``options``, or ``None`` if the file holds none."""
    entry = _entries(path).get(key(algorithm, options))
    if entry is None:
        return None
    try:
        return CostFormulas.from_data(algorithm, options, entry["formulas"])
    except (ValueError, TypeError, KeyError, AttributeError):  # a damaged entry: derive instead
        return None


# ------------------------------------------------------------------------------------- the build step
def _models() -> list:
    """The distinct ``(algorithm, options)`` of the presets, in the presets' order."""
    from .presets import PRESETS
    seen = {}
    for p in PRESETS.values():
        seen.setdefault(key(p.algorithm, p.options), (p.algorithm, p.options))
    return list(seen.values())


def derive_all() -> dict:
    """The file's content, derived afresh (sympy): every preset's model."""
    from .. import __version__
    from .model import Model
    models = [{"algorithm": a, "options": o, "formulas": CostFormulas.derive(Model(a, o)).to_data()}
              for a, o in _models()]
    return {"about": "Derived cost formulas of the presets' models (formal.models.costcache): polynomials as "
                     "[coefficient, {size: power}] terms. Generated; do not edit: " + REGENERATE,
            "format": _FORMAT, "version": __version__, "models": models}


def _text(data: dict) -> str:
    """The file's JSON, a container on one line when it fits (a term, a list of names), else one item a line."""
    return _dumps(data, 0) + "\n"


def _dumps(value, indent: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or not value or indent + len(flat) <= 110:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {_dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + _dumps(v, indent + 1) for v in value) + "\n" + " " * indent + "]"


def stale(path: str = PATH) -> list:
    """What differs between the file at ``path`` and a fresh derivation, one line each; empty if current."""
    fresh = derive_all()
    try:
        with open(path, encoding="utf-8") as handle:
            shipped = json.load(handle)
    except (OSError, ValueError) as exc:
        return [f"{path} cannot be read: {exc}"]
    if not isinstance(shipped, dict):
        return [f"{path} does not hold a JSON object"]
    problems = [f"{field} is {shipped.get(field)!r}, a fresh derivation gives {fresh[field]!r}"
                for field in ("format", "version") if shipped.get(field) != fresh[field]]
    held = {key(e.get("algorithm"), e.get("options")): e for e in shipped.get("models", [])
            if isinstance(e, dict)}
    for entry in fresh["models"]:
        k = key(entry["algorithm"], entry["options"])
        if k not in held:
            problems.append(f"no entry for {k}")
        elif held[k].get("formulas") != entry["formulas"]:
            fields = sorted(f for f in entry["formulas"] if held[k]["formulas"].get(f) != entry["formulas"][f])
            problems.append(f"the entry for {k} differs in {', '.join(fields) or 'its fields'}")
    extra = sorted(set(held) - {key(e["algorithm"], e["options"]) for e in fresh["models"]})
    problems += [f"an entry for {k} that no preset uses" for k in extra]
    return problems


def write(path: str = PATH) -> None:
    """Write a fresh derivation to ``path`` (atomically)."""
    from ..guards.files import write_text
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_text(path, _text(derive_all()), what="cost formula cache")
    _entries.cache_clear()


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m formal.models.costcache", description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="derive the formulas afresh and write the file")
    action.add_argument("--check", action="store_true", help="exit 1 if the file differs from a fresh derivation")
    parser.add_argument("--path", default=PATH, help="the file (default: the one shipped in the package)")
    args = parser.parse_args(argv)
    if args.write:
        write(args.path)
        print(f"wrote {args.path}")
        return 0
    problems = stale(args.path)
    for line in problems:
        print(line)
    if problems:
        print(f"the cost formula cache is stale: regenerate it with {REGENERATE}")
        return 1
    print(f"{args.path} is current")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
