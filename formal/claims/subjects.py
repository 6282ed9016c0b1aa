"""What a claim is about, derived from the objects: the value of its ``quantity`` for its subject.

- ``model``: a preset (``complexity --list``) with ``options``, ``sizes`` (numbers or formulas), ``seq_len``,
  ``batch``, ``dtype`` and ``convention`` as ``complexity`` takes them; the quantity is a dotted key of
  ``complexity --json`` (``params.total``, ``kv_cache.bytes_per_token``).  The figures come from the same
  cost formulas as ``complexity`` (:func:`formal.models.complexity.figure_formulas`), evaluated exactly; no model
  is instantiated and, for a preset's own options, sympy is not even imported.
- ``algorithm``: any algorithm of ``list`` with ``options``; the quantity ``params``, ``flops``, ``memory``
  or ``depth`` is its derived cost, a formula in its sizes, those ``sizes`` binds replaced.
- ``algorithm`` or ``op`` with ``inputs``: the spec executed on the given arrays.
- ``graph``: a pattern of the ``graph`` command, its flags as ``args``; the quantity is a dotted key of
  ``graph --json`` (the last layer's, where a key holds a list).

A value is a :class:`Value`: a number (int, Fraction or float), a sympy formula, or an array, with the sizes
a claimed formula may name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import FormalError, shown
from .claim import ClaimError
from .formula import parse

__all__ = ["Value", "value_of", "costs", "GROWTH_POINTS"]

def costs() -> tuple:
    """The cost totals of an algorithm a claim may ask for: the fields of :class:`formal.costs.cost.Cost`."""
    import dataclasses
    from ..costs.cost import Cost
    return tuple(f.name for f in dataclasses.fields(Cost) if f.name != "convention")


#: The most terms a quantity may expand to once its sizes are replaced by formulas.
MAX_EXPANSION = 100_000
#: Where a graph quantity's growth is measured: the growing argument at 2^10 … 2^50.
GROWTH_POINTS = tuple(2**k for k in (10, 20, 30, 40, 50))


@dataclass
class Value:
    """A derived value: ``kind`` is ``"number"``, ``"formula"`` (sympy) or ``"array"``; ``sizes`` maps the
    names a claimed formula may use to their numbers (a model's resolved sizes) or symbols; ``measure`` is,
    for a graph, ``(argument, function of it)`` to measure growth."""

    kind: str
    value: object
    sizes: dict = field(default_factory=dict)
    what: str = ""
    measure: tuple | None = None


def value_of(subject: dict, quantity: str | None, *, formula: bool = False, growing=(), base_dir: str = ".") -> Value:
    """The value of ``quantity`` for ``subject`` (a claim's subject fields); ``formula`` asks for a formula
    even where the sizes are numbers (the sizes in ``growing`` are then left free)."""
    try:
        if "model" in subject:
            return _model(subject, quantity, formula or bool(growing), growing)
        if "graph" in subject:
            return _graph(subject, quantity, growing, base_dir)
        if "inputs" in subject or "op" in subject:
            return _executed(subject, quantity)
        return _algorithm(subject, quantity, growing)
    except ClaimError:
        raise
    except FormalError as exc:
        raise ClaimError(str(exc)) from None


def _only(subject, allowed, what):
    extra = sorted(set(subject) - set(allowed))
    if extra:
        raise ClaimError(f"{extra[0]} does not apply to {what}")


def _expansion(expr, formulas: dict) -> None:
    """Refuse, before expanding, a substitution of size formulas (name → Formula) that would expand ``expr``
    (a sympy expression) past :data:`MAX_EXPANSION` terms."""
    import sympy as sp
    from math import comb
    from .formula import _terms
    sizes = {k: _terms(f.tree) for k, f in formulas.items()}
    total = 0
    for term in sp.Add.make_args(sp.expand(expr)):
        count = 1
        for factor in sp.Mul.make_args(term):
            base, k = factor.as_base_exp()
            t = sizes.get(str(base), 1)
            if t > 1 and k.is_Integer:
                count *= comb(t + abs(int(k)) - 1, abs(int(k)))
            elif t > 1:
                count *= t
        total += count
        if total > MAX_EXPANSION:
            raise ClaimError(f"the sizes bound to {', '.join(sorted(formulas))} expand the quantity past "
                             f"{MAX_EXPANSION:,} terms")


def _size_value(name, value):
    """A size bound in a claim: a positive int (at most :data:`formal.guards.limits.MAX_SIZE`), or a formula (a
    string, which may name sizes of its own: ``d_x = "d"``)."""
    from ..guards.limits import MAX_SIZE
    if isinstance(value, bool):
        raise ClaimError(f"size {name} = {shown(value)} must be a positive integer or a formula")
    if isinstance(value, int):
        if not 0 < value <= MAX_SIZE:
            raise ClaimError(f"size {name} = {shown(value)} must be a positive integer at most 2**50")
        return value
    if isinstance(value, str):
        return parse(value, what=f"size {name}")
    raise ClaimError(f"size {name} = {shown(value)} must be a positive integer or a formula (a string)")


# ------------------------------------------------------------------------------------------------ models
def _model(subject, quantity, formula, growing) -> Value:
    from ..models import complexity, presets
    _only(subject, ("model", "options", "sizes", "seq_len", "batch", "dtype", "convention", "paged"), "a model")
    preset = presets.get(subject["model"])
    if "paged" in subject:
        return _paged(subject, quantity, formula or bool(growing))
    options = {**preset.options, **subject.get("options", {})}
    convention = subject.get("convention", "matmul")
    dtype, batch = subject.get("dtype", "fp32"), subject.get("batch", 1)
    if dtype not in complexity.DTYPES:
        raise ClaimError(f"dtype = {shown(dtype)} is not one of {', '.join(complexity.DTYPES)}")
    models = complexity.model_formulas(preset.algorithm, options)
    figures = complexity.figure_formulas(models, _convention(convention))
    section, _, key = (quantity or "").partition(".")
    if section not in figures or "." in key:
        raise ClaimError(f"quantity {shown(quantity)} is not a figure of a model; known: "
                         + ", ".join(f"{s}.{k}" for s, keys in figures.items() if keys for k in keys))
    if figures[section] is None:
        raise ClaimError(f"{preset.name} ({preset.algorithm}) has no {section}: only decoder-only models decode "
                         "with a cache here")
    if key not in figures[section]:
        raise ClaimError(f"quantity {shown(quantity)}: {section} has {', '.join(figures[section])}")
    given = {**preset.sizes, **subject.get("sizes", {})}
    seq_len = subject.get("seq_len", preset.seq_len)
    symbolic = formula or any(isinstance(v, str) for v in given.values()) or isinstance(seq_len, str)
    what = f"{preset.name} {quantity}"
    if not symbolic:
        report = complexity.numeric_report(preset.name, models, given, seq_len=seq_len, default_len=preset.seq_len,
                                           batch=batch, convention=convention, dtype=dtype, exact=True)
        return Value("number", report[section][key], dict(report["sizes"]), what)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ClaimError(f"batch = {shown(batch)} must be a positive integer")
    polynomial, in_bytes, per = figures[section][key]
    bound, formulas = _bindings(models, given, seq_len, growing, preset.name)
    _expansion(polynomial.to_sympy(), formulas)
    expr = polynomial.to_sympy(bound) * (complexity.DTYPES[dtype] if in_bytes else 1)
    if per == "batch":
        expr *= batch
    elif per == "token":
        expr /= bound["ell"] if "ell" in bound else _length(models, bound)
    return _formula(expr, what)


#: What ``paged = { block = B, samples = n, reservation = ℓ_max }`` adds to a decoder's figures: the cache
#: kept in blocks (``complexity --kv paged``), as numbers — a block count has a ceiling, no polynomial.
PAGED_FIGURES = ("blocks", "bytes_per_block", "wasted_slots", "wasted_bytes", "waste_fraction", "reserved_waste",
                 "reserved_waste_bytes", "reserved_waste_fraction", "shared_prompt_blocks", "unshared_prompt_blocks",
                 "sharing_saving")


def _paged(subject, quantity, formula) -> Value:
    """A figure of a decoder's KV cache in blocks (:func:`formal.models.complexity.paged_report`, exact fractions)
    at the claim's sizes: numbers only."""
    from fractions import Fraction
    from ..models import complexity, presets
    if formula:
        raise ClaimError("paged figures are numbers (block counts have ceilings): a growth or formula claim "
                         "does not apply")
    section, _, key = (quantity or "").partition(".")
    if section != "kv_paged" or key not in PAGED_FIGURES:
        raise ClaimError(f"quantity {shown(quantity)} is not a paged figure; known: "
                         + ", ".join(f"kv_paged.{k}" for k in PAGED_FIGURES))
    paged = dict(subject["paged"])
    unknown = sorted(set(paged) - {"block", "samples", "reservation"})
    if unknown:
        raise ClaimError(f"paged has no {shown(unknown[0])}; it takes block, samples and reservation")
    preset = presets.get(subject["model"])
    sizes = {**preset.sizes, **subject.get("sizes", {})}
    if any(isinstance(v, str) for v in sizes.values()) or isinstance(subject.get("seq_len"), str):
        raise ClaimError("paged figures take numbers for every size, not formulas")
    models = complexity.model_formulas(preset.algorithm, {**preset.options, **subject.get("options", {})})
    report = complexity.numeric_report(preset.name, models, sizes, seq_len=subject.get("seq_len", preset.seq_len),
                                       default_len=preset.seq_len, dtype=subject.get("dtype", "fp32"))
    try:
        figures = complexity.paged_report(report, **paged, exact=True)
    except Exception as error:          # a ConfigError (no cache, a bad block) or a TypeError (a bad value)
        raise ClaimError(str(error)) from None
    value = figures[key]
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    return Value("number", value, dict(report["sizes"]), f"{preset.name} paged {key}")


def _length(models, bound):
    for name in ("ell", "ell_x", "ell_z"):
        if name in bound:
            return bound[name]
    raise ClaimError(f"{models.label} has no sequence length to divide by")


def _bindings(models, given, seq_len, growing, name) -> dict:
    """The model's size names → sympy values: numbers, formulas, the growing sizes as themselves, and the
    defaults ``complexity`` applies (d_attn = d_mid = d_e/H, d_f = d_e, every length = seq_len); and the
    sizes given as formulas (name → Formula)."""
    import sympy as sp
    from ..models.presets import LENGTHS
    from ..core.symbols import by_name
    known = set(models.symbols)
    unknown = sorted((set(given) | set(growing)) - known - {"seq_len"})
    if unknown:
        raise ClaimError(f"{models.label} has no size {shown(unknown[0])}; its sizes: {', '.join(sorted(known))}")
    bound, formulas = {}, {}
    for k, v in given.items():
        if k in growing:
            continue
        v = _size_value(k, v)
        bound[k] = v.sympy() if not isinstance(v, int) else sp.Integer(v)
        if not isinstance(v, int):
            formulas[k] = v
    length_formula = parse(seq_len, what="seq_len") if isinstance(seq_len, str) and "seq_len" not in growing else None
    length = by_name("seq_len") if "seq_len" in growing else (
        length_formula.sympy() if length_formula is not None else sp.Integer(_size_value("seq_len", seq_len)))
    for k in LENGTHS:
        if k in known and k not in growing:
            bound[k] = length
            if length_formula is not None:
                formulas[k] = length_formula
    for k in growing:
        if k != "seq_len":
            bound[k] = by_name(k)
    for head in ("d_attn", "d_mid"):
        if head in known and head not in bound:
            bound[head] = bound.get("d_e", by_name("d_e")) / bound.get("H", by_name("H"))
    if "d_f" in known and "d_f" not in bound:
        bound["d_f"] = bound.get("d_e", by_name("d_e"))
    missing = sorted(known - set(bound))
    if missing:
        raise ClaimError(f"{name} needs the size {missing[0]}")
    return bound, formulas


def _convention(convention):
    from ..costs.conventions import check_convention
    return check_convention(convention)


def _formula(expr, what) -> Value:
    import sympy as sp
    expr = sp.expand(expr)
    if not expr.free_symbols:
        number = sp.nsimplify(expr) if not expr.is_Rational else expr
        if number.is_Rational:
            from fractions import Fraction
            value = Fraction(int(number.p), int(number.q))
            return Value("number", value.numerator if value.denominator == 1 else value, {}, what)
    return Value("formula", expr, {str(s): s for s in expr.free_symbols}, what)


# ------------------------------------------------------------------------------------------- algorithms
def _algorithm(subject, quantity, growing) -> Value:
    import sympy as sp
    from ..algorithms import get
    from ..core.symbols import by_name
    _only(subject, ("algorithm", "options", "sizes", "convention"), "an algorithm's cost")
    algorithm = get(subject["algorithm"], **subject.get("options", {}))
    if quantity not in costs():
        raise ClaimError(f"quantity {shown(quantity)} is not a cost of an algorithm; known: {', '.join(costs())}")
    cost = algorithm.cost(_convention(subject.get("convention", "matmul")))
    expr = getattr(cost, quantity)
    known = {str(s) for s in algorithm.symbols}
    sizes = subject.get("sizes", {})
    unknown = sorted(set(sizes) - known)
    if unknown:
        raise ClaimError(f"{algorithm.label} has no size {shown(unknown[0])}; its sizes: {', '.join(sorted(known))}")
    bound, numbers, formulas = {}, {}, {}
    for k, v in sizes.items():
        v = _size_value(k, v)
        bound[by_name(k)] = sp.Integer(v) if isinstance(v, int) else v.sympy()
        if isinstance(v, int):
            numbers[by_name(k)] = v
        else:
            formulas[k] = v
    _expansion(expr, formulas)
    for c in algorithm.size_constraints:
        symbols = set().union(*(sp.sympify(a).free_symbols for a in c.args))
        if symbols <= set(numbers) and not c.holds(numbers):
            raise ClaimError(f"{algorithm.label}: {c.explain(numbers)}")
    return _formula(sp.sympify(expr).xreplace(bound), f"{algorithm.name} {quantity}")


def _executed(subject, rows=None) -> Value:
    import numpy as np
    from .ops import subject_algorithm
    _only(subject, ("algorithm", "op", "options", "sizes", "inputs"), "an executed algorithm or op")
    algorithm = subject_algorithm(subject)
    arguments = {}
    specs = {s.name: s for s in algorithm.signature}
    for name, raw in subject.get("inputs", {}).items():
        if name not in specs:
            raise ClaimError(f"{algorithm.label} has no input {shown(name)}; its inputs: {', '.join(specs)}")
        arguments[name] = _array(name, raw, specs[name].kind == "index")
    for name, raw in subject.get("sizes", {}).items():
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise ClaimError(f"size {name} = {shown(raw)}: an executed claim binds sizes to integers")
        arguments[name] = _size_value(name, raw)
    out = np.asarray(algorithm(**arguments))
    what = f"{algorithm.name} output"
    if rows is not None:
        start, stop = (int(x) for x in rows.split(":"))
        if not start < stop <= len(out):
            raise ClaimError(f"quantity {rows!r}: the output has {len(out)} rows")
        out, what = out[start:stop], f"{what}, rows {rows}"
    return Value("array", out, {}, what)


def _array(name, raw, integer):
    import numpy as np
    try:
        array = np.array(raw, dtype=np.int64 if integer else np.float64)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ClaimError(f"input {name} = {shown(raw)} is not a rectangular array of numbers ({exc})") from None
    if array.size > 1_000_000:
        raise ClaimError(f"input {name} holds {array.size:,} numbers, more than 1,000,000")
    return array


# ------------------------------------------------------------------------------------------------ graphs
def _graph(subject, quantity, growing, base_dir) -> Value:
    import os
    _only(subject, ("graph", "args"), "a graph")
    args = dict(subject.get("args", {}))
    for bad in ("draw", "json"):
        if bad in args:
            raise ClaimError(f"args.{bad} does not apply to a claim (it only changes what the command prints)")
    if isinstance(args.get("file"), str):
        args["file"] = os.path.join(base_dir, args["file"])
    report = _graph_report(subject["graph"], args)
    value = _dotted(report, quantity, "graph --json")
    if growing:
        if len(growing) != 1 or growing[0] not in args:
            raise ClaimError(f"in = {list(growing)}: a graph's growth is measured in one of its args "
                             f"({', '.join(sorted(args))})")
        fixed = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool) and k != growing[0]}
        return Value("number", value, fixed, f"{subject['graph']} {quantity}",
                     measure=(growing[0], lambda x: _dotted(_graph_report(subject["graph"], {**args, growing[0]: x},
                                                                         structured=True),
                                                            quantity, "graph --json")))
    return Value("number", value, dict(args), f"{subject['graph']} {quantity}")


def _graph_report(pattern, args, structured=False) -> dict:
    from .. import cli
    from ..guards import limits
    from ..graphs import command
    argv = ["graph", str(pattern)]
    for key, value in args.items():
        if key == "bidirectional" and isinstance(value, bool):
            key, value = "causal", not value
        flag = "--" + {"n_global": "global", "n_random": "random"}.get(key, key).replace("_", "-")
        if key == "causal":
            argv.append("--causal" if value is True else "--bidirectional" if value is False else
                        f"--causal={shown(value)}")
        elif key == "shifted" and isinstance(value, bool):
            argv += [flag] if value else []
        elif isinstance(value, (int, str)) and not isinstance(value, bool):
            argv += [flag, str(value)]
        else:
            raise ClaimError(f"args.{key} = {shown(value)} must be an integer or a string")
    try:
        parsed = cli.build_parser().parse_args(argv)
    except cli._UsageError as exc:
        raise ClaimError(f"graph args: {exc}") from None
    with limits.memory_limit(parsed.max_memory):
        p = command.build(parsed, cli._UsageError)
        from ..graphs.structure import Structure
        if structured and not isinstance(p, Structure):
            raise ClaimError(f"the growth of a {pattern} pattern is not measured: it has no structure to answer "
                             "large sizes from (only the built-in patterns but random)")
        try:
            return command.report(p, layers=parsed.layers, heads=parsed.heads, d_head=parsed.d_head)
        except cli._UsageError as exc:
            raise ClaimError(f"graph args: {exc}") from None


def _dotted(data, key, what):
    node = data
    for part in (key or "").split("."):
        if isinstance(node, list):
            node = node[-1] if node else None
        if not isinstance(node, dict) or part not in node:
            known = ", ".join(sorted(node)) if isinstance(node, dict) else "nothing further"
            raise ClaimError(f"quantity {shown(key)} is not a key of {what}: at {part!r}, known: {known}")
        node = node[part]
    if isinstance(node, list):
        node = node[-1] if node else None
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ClaimError(f"quantity {shown(key)} of {what} is not a number (it is {shown(node)})")
    return node
