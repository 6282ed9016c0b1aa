"""Claims about a model (``model = "PRESET"``): a figure of ``complexity --json`` for the preset with the claim's
``options``, ``sizes`` (numbers or formulas), ``seq_len``, ``batch``, ``dtype`` and ``convention``, from the same
cost formulas (:func:`formal.models.complexity.figure_formulas`), evaluated exactly; and with ``paged``, a
figure of its KV cache in blocks.  No model is instantiated and, for a preset's own options, sympy is not
even imported."""

from __future__ import annotations

from ..costs.conventions import check_convention
from ..errors import one_of, shown
from .claim import ClaimError
from .formula import parse
from .values import Value, check_expansion, formula_value, only, size_value

__all__ = ["model_value", "PAGED_FIGURES"]


def model_value(subject, quantity, formula, growing) -> Value:
    from ..models import complexity, presets
    only(subject, ("model", "options", "sizes", "seq_len", "batch", "dtype", "convention", "paged"), "a model")
    preset = presets.get(subject["model"])
    if "paged" in subject:
        return _paged(subject, quantity, formula or bool(growing))
    options = {**preset.options, **subject.get("options", {})}
    convention = subject.get("convention", "matmul")
    dtype, batch = subject.get("dtype", "fp32"), subject.get("batch", 1)
    one_of("dtype", dtype, tuple(complexity.DTYPES))
    models = complexity.model_formulas(preset.algorithm, options)
    figures = complexity.figure_formulas(models, check_convention(convention))
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
    check_expansion(polynomial.to_sympy(), formulas)
    expr = polynomial.to_sympy(bound) * (complexity.DTYPES[dtype] if in_bytes else 1)
    if per == "batch":
        expr *= batch
    elif per == "token":
        expr /= bound["ell"] if "ell" in bound else _length(models, bound)
    return formula_value(expr, what)


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

    from ..core.symbols import by_name
    from ..models.presets import LENGTHS
    known = set(models.symbols)
    unknown = sorted((set(given) | set(growing)) - known - {"seq_len"})
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
