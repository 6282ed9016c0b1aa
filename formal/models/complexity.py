"""What a model costs: parameters, FLOPs, activation memory and KV cache, from the algorithm objects.

Every number is the derived formula of an algorithm object evaluated at a configuration: the forward pass
is Algorithm 8, 9 or 10 with the configuration's options; a training step adds the gradient step of
:func:`formal.costs.cost.gradient_step` (the convention's backward rule); the KV cache is the size of the key and
value caches :mod:`formal.algorithms.kv_cache` returns.  ``batch`` sequences cost ``batch`` times one.

The figures are polynomials evaluated exactly (:class:`~formal.models.costcache.CostFormulas`): those of a preset's
model come from the file shipped with the package, so :func:`preset_report` and ``complexity PRESET`` import
no sympy; any other model is derived (:class:`Model`) and gives the same numbers, later.

>>> preset_report("gpt2", seq_len=64)["flops"]["forward_per_sequence"]
15963095040
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from ..costs.conventions import check_convention
from ..costs.polynomials import Polynomial
from ..errors import ConfigError, one_of, shown
from .model import MODELS, Model
from .presets import resolve_sizes

__all__ = ["DTYPES", "MODELS", "Model", "model_formulas", "cost_formulas", "report", "numeric_report",
           "preset_report", "formulas", "paged_report", "grouped", "figure_formulas", "PER"]

#: Bytes per scalar: int4 packs two scalars in a byte (a count of bytes is rounded up to whole bytes).
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1, "int4": Fraction(1, 2)}


@lru_cache(maxsize=64)
def _derived(model: Model):
    from .costcache import CostFormulas
    return CostFormulas.derive(model)


def cost_formulas(model):
    """The :class:`~formal.models.costcache.CostFormulas` of ``model``: derived from a :class:`Model` (once per
    model: a derivation takes sympy), or ``model`` itself when it is already the formulas."""
    return _derived(model) if isinstance(model, Model) else model

def model_formulas(algorithm_name: str, options: dict):
    """The :class:`~formal.models.costcache.CostFormulas` of a model stack built with ``options``: from the cache
    shipped with the package when it holds them (no sympy), else derived (a :class:`Model`, sympy).  A
    ConfigError for an algorithm that is not a model stack, or an option it does not take."""
    from .costcache import lookup
    cached = lookup(algorithm_name, options) if algorithm_name in MODELS else None
    return cached if cached is not None else cost_formulas(Model(algorithm_name, options))


def _number(polynomial, values) -> int:
    """The polynomial's value, rounded up when it is not whole (a fraction of a FLOP is still work)."""
    value = polynomial.value(values)
    return value if isinstance(value, int) else -(-value.numerator // value.denominator)


def _bytes(scalars: int, width) -> int:
    """The bytes ``scalars`` take at ``width`` bytes each, whole bytes (an odd number of int4 values needs the
    last byte)."""
    total = scalars * width
    return total if isinstance(total, int) else -(-total.numerator // total.denominator)


def _per_token(total: int, tokens: int, exact: bool = False) -> int | float:
    """``total / tokens``: an integer when it divides evenly, else a float (rounded: the text marks it ≈), or
    with ``exact`` a Fraction."""
    quotient, remainder = divmod(total, tokens)
    if remainder == 0:
        return quotient
    return Fraction(total, tokens) if exact else total / tokens


#: How a figure of :func:`report` scales its formula: once per model, per sequence, times the batch, or
#: divided by the sequence length (per token).
PER = ("model", "sequence", "batch", "token")


def figure_formulas(formulas, convention: str) -> dict:
    """Every figure :func:`report` gives, as ``{section: {key: (polynomial, in_bytes, per)}}``: the
    :class:`~formal.costs.polynomials.Polynomial` of one sequence (or of the model), whether it counts scalars
    that the dtype turns into bytes, and how it scales (:data:`PER`).  :func:`report` evaluates these, and
    the claims checker (:mod:`formal.tools.claims`) reads them as formulas: one table for both."""
    flops = formulas.flops[convention]
    out = {"params": {k: (v, False, "model") for k, v in formulas.params.items()},
           "weights": {"bytes": (formulas.params["total"], True, "model")},      # the parameters at the dtype
           "flops": {}}
    for name in ("forward", "training_step"):
        out["flops"].update({name: (flops[name], False, "batch"),
                             f"{name}_per_sequence": (flops[name], False, "sequence"),
                             f"{name}_per_token": (flops[name], False, "token")})
    if convention == "matmul":   # 2 FLOPs per multiply–add: multiply–accumulates, the unit of Swin's paper
        half = Polynomial([(Fraction(c) / 2, powers) for c, powers in flops["forward"].terms])
        out["flops"]["forward_macs_per_sequence"] = (half, False, "sequence")
    memory = formulas.memory[convention]
    out["memory"] = {"activations_bytes": (memory, True, "batch"),
                     "activations_bytes_per_sequence": (memory, True, "sequence"),
                     "activations_bytes_per_token": (memory, True, "token")}
    cache = formulas.kv_cache
    out["kv_cache"] = None if cache is None else {
        "bytes_per_token": (cache["scalars_per_token"], True, "model"),
        "bytes_per_sequence": (cache["scalars_per_sequence"], True, "sequence"),
        "bytes": (cache["scalars_per_sequence"], True, "batch")}
    return out


def report(model, sizes: dict, *, seq_len: int, batch: int = 1, convention: str = "matmul",
           dtype: str = "fp32", exact: bool = False, kv_window: int | None = None) -> dict:
    """Every figure of ``complexity`` (bytes for memory and weights): integers, except a per-token figure that
    does not divide evenly, a float (with ``exact``: a Fraction).  ``model`` is a :class:`Model` or the
    :class:`~formal.models.costcache.CostFormulas` of one (:func:`model_formulas`); the figures are the same.
    With ``kv_window`` W the KV cache is a rolling buffer of each layer's last W tokens (Mistral's sliding
    window): its per-sequence figures are the cache's formula at min(ℓ, W) tokens."""
    check_convention(convention)
    one_of("dtype", dtype, tuple(DTYPES))
    if isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0:
        raise ConfigError(f"batch = {shown(batch)} must be a positive integer")
    formulas = cost_formulas(model)
    resolved = resolve_sizes(formulas, sizes, seq_len)
    width = DTYPES[dtype]
    cached = _windowed(resolved, kv_window)

    def figure(polynomial, in_bytes, per, at=resolved):
        value = _number(polynomial, at)
        value = _bytes(value, width) if in_bytes else value
        if per == "batch":
            return value * batch
        return _per_token(value, seq_len, exact) if per == "token" else value

    out = {"algorithm": formulas.algorithm, "options": formulas.options, "sizes": resolved, "seq_len": seq_len,
           "batch": batch, "convention": convention, "dtype": dtype}
    for section, figures in figure_formulas(formulas, convention).items():
        at = cached if section == "kv_cache" else resolved
        out[section] = None if figures is None else {k: figure(*v, at=at) for k, v in figures.items()}
    if kv_window is not None and out["kv_cache"] is not None:
        out["kv_cache"]["window"] = kv_window
    return out


def _windowed(resolved: dict, window: int | None) -> dict:
    """The sizes the KV cache is evaluated at: a window of W tokens keeps min(ℓ, W) of a sequence's ℓ."""
    if window is None:
        return resolved
    from .presets import check_size
    check_size("kv_window", window)
    return {**resolved, "ell": min(resolved["ell"], window)} if "ell" in resolved else resolved


def numeric_report(name: str, model, sizes: dict, *, seq_len: int | None = None, default_len: int | None = None,
                   batch: int = 1, convention: str = "matmul", dtype: str = "fp32", exact: bool = False,
                   kv_window: int | None = None) -> dict:
    """What ``complexity`` prints of the configuration ``name`` (``--json``): :func:`report` at ``seq_len``
    (default ``default_len``, the configuration's own), under ``name``, with a ``note`` when the parameters
    grow with the sequence length and ``seq_len`` is not the configuration's.  ``model`` is a :class:`Model`
    or :class:`~formal.models.costcache.CostFormulas` (:func:`model_formulas`: then no sympy for a cached model);
    ``exact``: per-token figures as Fractions where they do not divide evenly; ``kv_window``: a rolling KV
    cache (:func:`report`)."""
    formulas = cost_formulas(model)
    seq_len = _grid_tokens(name, formulas, sizes, seq_len, default_len)
    seq_len = default_len if seq_len is None else seq_len
    if seq_len is None:
        raise ConfigError(f"{name} has no default sequence length: give seq_len")
    result = {"name": name, **report(formulas, sizes, seq_len=seq_len, batch=batch, convention=convention,
                                     dtype=dtype, exact=exact, kv_window=kv_window)}
    grows = formulas.length_dependent_params
    if grows and default_len is not None and seq_len != default_len:
        base = report(formulas, sizes, seq_len=default_len)["params"]["total"]
        result["note"] = (f"the parameters change with the sequence length ({', '.join(grows)} has a column per "
                          f"position): {grouped(base)} at {name}'s {default_len}, "
                          f"{grouped(result['params']['total'])} at {seq_len}")
    return result


def _grid_tokens(name, formulas, sizes, seq_len, default_len):
    """A model with no sequence length (Swin: its tokens are the n_h·n_w patches of its grid) has its "per
    token" figures per patch: the length is the grid's, and another is refused rather than divided by."""
    from .presets import LENGTHS
    symbols = set(formulas.symbols)
    if symbols & set(LENGTHS) or not {"height", "width"} <= symbols:
        return seq_len
    height, width = sizes.get("height"), sizes.get("width")
    if not isinstance(height, int) or not isinstance(width, int):
        return seq_len
    tokens = height * width
    if seq_len is not None and seq_len != tokens:
        raise ConfigError(f"{name} has no sequence length: its tokens are the {height}×{width} = {tokens} patches "
                          f"of its grid (set height and width), so a sequence length of {shown(seq_len)} does "
                          "not apply")
    return tokens


def preset_report(name: str, *, seq_len: int | None = None, batch: int = 1, convention: str = "matmul",
                  dtype: str = "fp32") -> dict:
    """:func:`numeric_report` of the preset ``name`` (:mod:`formal.models.presets`), at its context length unless
    ``seq_len`` is given; no sympy is imported for a preset whose model the shipped cache holds (all do)."""
    from .presets import get
    preset = get(name)
    return numeric_report(preset.name, model_formulas(preset.algorithm, preset.options), preset.sizes,
                          seq_len=seq_len, default_len=preset.seq_len, batch=batch, convention=convention,
                          dtype=dtype)


def paged_report(result: dict, *, block: int = 16, samples: int = 1, reservation: int | None = None,
                 exact: bool = False) -> dict:
    """The KV cache of ``result`` (a :func:`numeric_report` of a decoder-only model) kept in blocks of
    ``block`` tokens (PagedAttention): blocks per sequence, bytes per block (every layer's keys and values
    of ``block`` tokens), slots wasted in the last block against a contiguous cache reserved for
    ``reservation`` tokens (default: the model's ℓ_max), and with ``samples`` > 1 the blocks of the prompt
    (the sequence) shared by that many samples forked from it; and the waste as fractions — of the blocks'
    slots, of the reservation — and the share of the prompt's blocks sharing saves (floats; with ``exact``
    Fractions).  The formulas are :func:`formal.algorithms.paged.memory`'s."""
    from ..algorithms.paged import memory
    from ..core.symbols import block as B, ell_c, ell_max
    if result.get("kv_cache") is None:
        raise ConfigError(f"{result['name']} has no KV cache here: paging needs a decoder-only model")
    from .presets import check_size
    block, samples = (check_size(name, value) for name, value in (("block", block), ("samples", samples)))
    ell = result["seq_len"]                 # each a positive integer at most 2**50, however spelled, as every size
    reservation = result["sizes"].get("ell_max", ell) if reservation is None else check_size("reservation",
                                                                                             reservation)
    if reservation < ell:
        raise ConfigError(f"a reservation of {reservation} tokens cannot hold the sequence's {ell}")
    m = memory(samples=samples, prompt=ell)
    at = {ell_c: ell, B: block, ell_max: reservation}
    figures = {k: int(v.xreplace(at)) for k, v in m.items()}
    per_token = result["kv_cache"]["bytes_per_token"]

    def ratio(a, b):
        value = Fraction(a, b) if b else Fraction(0)
        return value if exact else float(value)
    return {"block": block, "samples": samples, "reservation": reservation, "bytes_per_block": per_token * block,
            **figures, "wasted_bytes": figures["wasted_slots"] * per_token,
            "reserved_waste_bytes": figures["reserved_waste"] * per_token,
            "waste_fraction": ratio(figures["wasted_slots"], figures["blocks"] * block),
            "reserved_waste_fraction": ratio(figures["reserved_waste"], reservation),
            "sharing_saving": ratio(figures["unshared_prompt_blocks"] - figures["shared_prompt_blocks"],
                                    figures["unshared_prompt_blocks"])}


def grouped(n) -> str:
    """``1,234,567``; a figure that is not a whole number is rounded, and marked so: ``≈208,158,130.2``."""
    return f"{n:,}" if isinstance(n, int) else f"≈{n:,.1f}"


def formulas(model: Model, convention: str = "matmul") -> dict:
    """The same figures as formulas in the size symbols (paper glyphs)."""
    from ..core.symbols import ell, text
    check_convention(convention)
    forward = model.forward(convention)
    out = {"params": {k: text(v) for k, v in model.params().items()},
           "flops": {"forward_per_sequence": text(forward.flops),
                     "training_step_per_sequence": text(model.training_step(convention))},
           "memory": {"activations_scalars_per_sequence": text(forward.memory)},
           "kv_cache": None}
    cache = model.kv_cache_scalars()
    if cache is not None:
        out["kv_cache"] = {"scalars_per_token": text(cache.xreplace({ell: 1})),
                           "scalars_per_sequence": text(cache)}
    return out
