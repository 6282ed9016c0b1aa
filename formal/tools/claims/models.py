"""Claims about a model (``model = "PRESET"``): a figure of ``complexity --json`` for the preset with the claim's
``options``, ``sizes`` (numbers or formulas), ``seq_len``, ``batch`` (a number, a formula, or a growing size),
``dtype`` and ``convention``, from the same cost formulas (:func:`formal.models.complexity.figure_formulas`),
evaluated exactly; with ``tokens``, the compute of training on that many tokens (``training.flops``); with
``kv_window``, a KV cache that holds the last W tokens (a rolling buffer); and with ``paged``, a figure of its KV
cache in blocks.  The preset is overridden as if the variant were built from scratch
(:meth:`formal.models.presets.Preset.variant`).  No model is instantiated and, for a preset's own options,
sympy is not even imported."""

from __future__ import annotations

from fractions import Fraction

from ...core.formula import parse
from ...costs.conventions import check_convention
from ...errors import one_of, shown
from .claim import ClaimError
from .figures import figure, is_figure
from .values import Value, check_expansion, formula_value, numbers_at, only, size_value

__all__ = ["model_value", "PAGED_FIGURES", "TRAINING_FIGURES", "FIELDS"]

#: The fields a model claim takes.
FIELDS = ("model", "options", "sizes", "seq_len", "batch", "dtype", "convention", "paged", "tokens", "kv_window")
#: What ``tokens = D`` adds: the FLOPs of training on D tokens, ``flops.training_step_per_token × D`` — the
#: per-token cost of a training step on sequences of the claim's length (the preset's context by default).
TRAINING_FIGURES = ("flops",)


def model_value(subject, quantity, formula, growing) -> Value:
    from ...models import complexity, presets
    only(subject, FIELDS, "a model")
    preset = presets.get(subject["model"])
    fixed = {**subject.get("sizes", {}), **{k: subject[k] for k in ("seq_len", "batch") if k in subject}}
    for name in growing:        # the claim's own sizes are fixed (but L = "L" keeps L free); the preset's may grow
        if name in fixed and not (isinstance(fixed[name], str) and name in size_value(name, fixed[name]).names):
            raise ClaimError(f"in names {name!r}, which the claim binds to {shown(fixed[name])}: a size that grows "
                             "cannot also be fixed")
    if "paged" in subject:
        return _paged(subject, quantity, formula or bool(growing))
    convention = subject.get("convention", "matmul")
    one_of("dtype", subject.get("dtype", "fp32"), tuple(complexity.DTYPES))
    models = complexity.model_formulas(preset.algorithm, {**preset.options, **subject.get("options", {})})
    figures = complexity.figure_formulas(models, check_convention(convention))
    section, key = _figure(quantity, figures, preset, subject)
    given, seq_len = _variant(preset, models, subject, growing)
    window = _window(subject, section)
    if section == "training":       # the compute of D tokens: a training step per token, times D
        section, key = "flops", "training_step_per_token"
    what = f"{preset.name} {quantity}"
    tokens = subject.get("tokens")
    if formula or isinstance(seq_len, str) or isinstance(subject.get("batch"), str) or any(
            isinstance(v, str) for v in given.values()) or (isinstance(tokens, str) and not is_figure(tokens)):
        bound, formulas = _bindings(models, given, seq_len, growing, preset.name, _free_names(subject))
        return _formula(figures[section][key], bound, formulas, subject, window, growing, models, what)
    batch = subject.get("batch", 1)
    _check_batch(batch)
    report = complexity.numeric_report(preset.name, models, given, seq_len=seq_len, default_len=seq_len,
                                       batch=batch, convention=convention, dtype=subject.get("dtype", "fp32"),
                                       exact=True, kv_window=window)
    value = report[section][key] * (_tokens(subject) if "tokens" in subject else 1)
    return Value("number", _whole(value), dict(report["sizes"]), what)


def _formula(figure, bound, formulas, subject, window, growing, models, what) -> Value:
    """A figure (``(polynomial, in_bytes, per)`` of :func:`~formal.models.complexity.figure_formulas`) at the
    bound sizes, as sympy: bytes at the dtype (int4's half byte exactly in a formula; where every size is a
    number, whole FLOPs and whole bytes, as the numeric figures count them), times
    the batch, per token, times the tokens; a windowed cache at min(ℓ, W) tokens."""
    import sympy as sp

    from ...models.complexity import DTYPES
    polynomial, in_bytes, per = figure
    check_expansion(polynomial.to_sympy(), formulas)
    at = bound if window is None or "ell" not in bound else {**bound, "ell": _cached(bound["ell"], window, growing)}
    expr = polynomial.to_sympy(at)
    width = _width(DTYPES[subject.get("dtype", "fp32")]) if in_bytes else 1
    if expr.free_symbols:
        expr *= width
    else:       # a number: whole FLOPs and whole bytes, as `complexity` counts them (an odd int4 count's last byte)
        expr = sp.ceiling(sp.ceiling(expr) * width)
    if per == "batch":
        expr *= _batch(subject.get("batch", 1), growing)
    elif per == "token":
        expr /= bound["ell"] if "ell" in bound else _length(models, bound)
    if "tokens" in subject:
        expr *= _tokens(subject)
    return formula_value(expr, what, bound=dict(bound))   # the claimed formula may name any size it binds


def _figure(quantity, figures, preset, subject) -> tuple:
    """``(section, key)`` of the quantity: a figure of ``complexity --json``, or ``training.flops`` (which needs
    ``tokens``, as ``tokens`` needs it); ``kv_window`` goes with the KV cache's figures only."""
    section, _, key = (quantity or "").partition(".")
    known = [f"{s}.{k}" for s, keys in figures.items() if keys for k in keys]
    if section == "training" and key in TRAINING_FIGURES:
        if "tokens" not in subject:
            raise ClaimError(f"{quantity} is the compute of training on a number of tokens: give tokens = "
                             "\"300B\" (or an integer)")
        if "batch" in subject:
            raise ClaimError(f"batch does not apply to {quantity}: tokens counts every token trained on")
        return section, key
    if "tokens" in subject:
        training = ", ".join(f"training.{k}" for k in TRAINING_FIGURES)
        raise ClaimError(f"tokens goes with the training figures ({training}), not with {shown(quantity)}")
    if section not in figures or "." in key:
        raise ClaimError(f"quantity {shown(quantity)} is not a figure of a model; known: "
                         + ", ".join(known + [f"training.{k}" for k in TRAINING_FIGURES]))
    if figures[section] is None:
        raise ClaimError(f"{preset.name} ({preset.algorithm}) has no {section}: only decoder-only models decode "
                         "with a cache here")
    if key not in figures[section]:
        raise ClaimError(f"quantity {shown(quantity)}: {section} has {', '.join(figures[section])}")
    return section, key


def _variant(preset, models, subject, growing) -> tuple:
    """The claim's sizes and sequence length: the preset overridden as if built from scratch (its sizes the
    variant has, the claim's, the preset's derived sizes recomputed: :meth:`Preset.variant`).  A growing size
    is its own name, so that a size derived from it grows with it (GPT-2's d_mlp = 4·d_e as d_e grows)."""
    sizes = subject.get("sizes", {})
    for name, value in sizes.items():
        size_value(name, value)                      # a clear error before any arithmetic on it
    from ...models.presets import LENGTHS
    sizes = {**sizes, **{g: g for g in growing if g in models.symbols and g not in LENGTHS}}
    return preset.variant(models.symbols, sizes, subject.get("seq_len"))


def _window(subject, section):
    """``kv_window`` (W): the cache keeps each layer's last W tokens; only the KV cache's figures take it."""
    if "kv_window" not in subject:
        return None
    window = subject["kv_window"]
    if section != "kv_cache":
        raise ClaimError(f"kv_window goes with the KV cache's figures (kv_cache.*), not with {section}: a sliding "
                         "window's attention FLOPs are not derived here")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ClaimError(f"kv_window = {shown(window)} must be a positive integer (tokens the cache keeps)")
    return size_value("kv_window", window)


def _tokens(subject):
    """``tokens``: an integer, a count such as ``"300B"`` or ``"1.4T"`` (a whole number of tokens: ``B`` is a
    billion here, never bytes), or a formula (``"D"``, for growth in it)."""
    import re

    raw = subject["tokens"]
    if isinstance(raw, str) and is_figure(raw):
        value = figure(raw, "tokens").value
        if value.denominator != 1 or value < 1 or re.search(r"(?:[KMGT]i?B|kB)\s*$", raw):
            raise ClaimError(f"tokens = {shown(raw)} must be a whole number of tokens (e.g. \"300B\", \"1.4T\")")
        raw = int(value)
    value = size_value("tokens", raw)
    return value if isinstance(value, int) else value.sympy()


def _free_names(subject) -> set:
    """The names the claim's formulas introduce — in its sizes (``d_e = "D"``), seq_len, batch and tokens: sizes
    ``in`` may grow besides the model's."""
    names = set()
    raws = [(f"size {k}", v) for k, v in subject.get("sizes", {}).items()]
    raws += [(field, subject.get(field)) for field in ("seq_len", "batch", "tokens")]
    for what, raw in raws:
        if isinstance(raw, str) and not (what == "tokens" and is_figure(raw)):
            names |= set(parse(raw, what=what).names)
    return names


def _check_batch(batch):
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ClaimError(f"batch = {shown(batch)} must be a positive integer or a formula (\"b\")")


def _batch(batch, growing):
    """The batch as a sympy value: a number, a formula (``"b"``), or the size ``batch`` where it grows."""
    import sympy as sp

    from ...core.symbols import by_name
    if "batch" in growing:
        return by_name("batch")
    if isinstance(batch, str):
        return parse(batch, what="batch").sympy()
    _check_batch(batch)
    return sp.Integer(batch)


def _cached(length, window, growing):
    """The tokens a rolling cache of ``window`` holds of a sequence of ``length``: min(ℓ, W); W itself where the
    length grows (past W the cache stops growing: its growth in ℓ is that of the constant)."""
    import sympy as sp
    return sp.Integer(window) if {"ell", "seq_len"} & set(growing) else sp.Min(length, window)


def _width(width):
    """Bytes per scalar as sympy: an int, or a Fraction (int4's half byte)."""
    import sympy as sp
    return sp.Rational(width.numerator, width.denominator) if hasattr(width, "denominator") else width


def _whole(value):
    """A Fraction that is whole as an int."""
    from fractions import Fraction
    return value.numerator if isinstance(value, Fraction) and value.denominator == 1 else value


#: What ``paged = { block = B, samples = n, reservation = ℓ_max }`` adds to a decoder's figures: the cache
#: kept in blocks (``complexity --kv paged``), as numbers — a block count has a ceiling, no polynomial.
PAGED_FIGURES = ("blocks", "bytes_per_block", "wasted_slots", "wasted_bytes", "waste_fraction", "reserved_waste",
                 "reserved_waste_bytes", "reserved_waste_fraction", "shared_prompt_blocks", "unshared_prompt_blocks",
                 "sharing_saving")


def _paged(subject, quantity, formula) -> Value:
    """A figure of a decoder's KV cache in blocks (:func:`formal.models.complexity.paged_report`, exact fractions)
    at the claim's sizes: numbers only."""
    from fractions import Fraction

    from ...models import complexity, presets
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
    only(subject, tuple(f for f in FIELDS if f not in ("tokens", "kv_window")), "a paged cache's figures")
    preset = presets.get(subject["model"])
    models = complexity.model_formulas(preset.algorithm, {**preset.options, **subject.get("options", {})})
    sizes, seq_len = _variant(preset, models, subject, ())
    if any(isinstance(v, str) for v in sizes.values()) or isinstance(seq_len, str):
        raise ClaimError("paged figures take numbers for every size, not formulas")
    report = complexity.numeric_report(preset.name, models, sizes, seq_len=seq_len, default_len=seq_len,
                                       dtype=subject.get("dtype", "fp32"))
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


def _bindings(models, given, seq_len, growing, name, extra=frozenset()) -> dict:
    """The model's size names → sympy values: numbers, formulas, the growing sizes as themselves, and the
    defaults ``complexity`` applies (d_attn = d_mid = d_e/H, d_f = d_e, every length = seq_len); and the
    sizes given as formulas (name → Formula)."""
    import sympy as sp

    from ...core.symbols import by_name
    from ...models.presets import LENGTHS
    known = set(models.symbols)
    unknown = sorted((set(given) | set(growing)) - known - {"seq_len", "batch"} - set(extra))
    if unknown:
        raise ClaimError(f"{models.label} has no size {shown(unknown[0])}; its sizes: {', '.join(sorted(known))}")
    bound, formulas = {}, {}
    for k, v in given.items():
        if k in growing:
            continue
        v = size_value(k, v)
        bound[k] = v.sympy() if not isinstance(v, int) else sp.Integer(v)
        if not isinstance(v, int):
            formulas[k] = v
    length_formula = parse(seq_len, what="seq_len") if isinstance(seq_len, str) and "seq_len" not in growing else None
    length = by_name("seq_len") if "seq_len" in growing else (
        length_formula.sympy() if length_formula is not None else sp.Integer(size_value("seq_len", seq_len)))
    for k in LENGTHS:
        if k in known and k not in growing:
            bound[k] = length
            if length_formula is not None:
                formulas[k] = length_formula
    for k in growing:
        if k in known:
            bound[k] = by_name(k)
    for head in ("d_attn", "d_mid"):
        if head in known and head not in bound:
            bound[head] = bound.get("d_e", by_name("d_e")) / bound.get("H", by_name("H"))
            if {"d_e", "H"} <= set(bound):
                formulas[head] = parse("d_e/H", what=f"the default {head}")
    if "d_f" in known and "d_f" not in bound:
        bound["d_f"] = bound.get("d_e", by_name("d_e"))
    missing = sorted(known - set(bound))
    if missing:
        raise ClaimError(f"{name} needs the size {missing[0]}")
    _check_numbers(models, bound, formulas)
    return bound, formulas


def _check_numbers(models, bound, formulas) -> None:
    """The sizes a formula claim binds to numbers, checked as the numeric path checks them: a formula whose
    sizes are all numbers is the number it is there (``d_mlp = "4*d_e"``), every size that is a number is a
    positive integer (the default head width d_e/H included), and every stated size constraint whose sizes are
    all numbers holds (ℓ ≤ ℓ_max)."""
    import sympy as sp

    from ...guards.numbers import whole
    numbers = {k: int(v) for k, v in bound.items() if isinstance(v, sp.Integer)}
    for k, v in numbers_at({k: f for k, f in formulas.items() if k not in numbers}, numbers).items():
        bound[k], numbers[k] = sp.Integer(v), v
    for k, v in bound.items():
        if k not in numbers and not v.free_symbols:
            if not v.is_Rational:
                raise ClaimError(f"size {k} is {v} here, which is not a positive integer")
            numbers[k] = whole(Fraction(int(v.p), int(v.q)), f"size {k}", raw=str(v))
            bound[k] = sp.Integer(numbers[k])
    for condition in models.size_constraints:
        if condition.names <= set(numbers) and not condition.holds(numbers):
            raise ClaimError(f"{models.label}: {condition.explain(numbers)}")
