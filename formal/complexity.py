"""What a model costs: parameters, FLOPs, activation memory and KV cache, from the algorithm objects.

Every number is the derived formula of an algorithm object evaluated at a configuration: the forward pass
is Algorithm 8, 9 or 10 with the configuration's options; a training step adds the gradient step of
:func:`formal.cost.gradient_step` (the convention's backward rule); the KV cache is the size of the key and
value caches :mod:`formal.algorithms.kv_cache` returns.  ``batch`` sequences cost ``batch`` times one.
"""

from __future__ import annotations

import sympy as sp

from .cost import check_convention, gradient_step
from .errors import ConfigError, shown
from .presets import resolve_sizes
from .shapes import numel, shape_text
from .symbols import by_name, ell, text

__all__ = ["DTYPES", "MODELS", "Model", "report", "formulas"]

#: Bytes per scalar.
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}

#: The algorithms ``complexity`` accepts: the three model stacks.
MODELS = ("edtransformer", "etransformer", "dtransformer")


class Model:
    """A model stack with its options, and the derived quantities ``complexity`` reports."""

    def __init__(self, algorithm_name: str, options: dict):
        from .algorithms import get
        if algorithm_name not in MODELS:
            raise ConfigError(f"complexity needs a model, one of {', '.join(MODELS)}; got {shown(algorithm_name)}")
        self.name, self.options = algorithm_name, dict(options)
        self.algorithm = get(algorithm_name, **options)

    def params(self) -> dict:
        total = self.algorithm.param_count()
        embedding = sp.expand(sp.Add(*(p.size() for p in self.algorithm.params if p.embedding)))
        return {"total": total, "embedding": embedding, "non_embedding": sp.expand(total - embedding)}

    def length_dependent_params(self) -> list:
        """The parameters whose size grows with the sequence length (ViT's position table has one column per
        patch), as ``"W_p (d_e×(ℓ + 1))"``: with them a different sequence length is a different model."""
        from .presets import LENGTHS
        lengths = {by_name(n) for n in LENGTHS}
        return [f"{p.name} ({shape_text(p.shape)})" for p in self.algorithm.params
                if p.size().free_symbols & lengths]

    def forward(self, convention: str):
        return self.algorithm.cost(convention)

    def training_step(self, convention: str) -> sp.Expr:
        work = self.algorithm.derivation.work
        step = gradient_step(work.flops, self.algorithm.param_count())
        return sp.expand(work.flops[convention] + step[convention])

    def kv_cache_scalars(self) -> sp.Expr | None:
        """Scalars held in the key/value cache for a sequence of ℓ tokens (decoder-only models)."""
        if self.name != "dtransformer":
            return None
        from .algorithms.kv_cache import build_kv_dtransformer
        cached = build_kv_dtransformer(**self.options, step="prefill")
        shapes = cached.derivation.output_shapes[1:]
        return sp.expand(sum(numel(s) for s in shapes))


def _number(expr, values) -> int:
    value = expr.xreplace(values)
    if value.free_symbols:
        raise ConfigError(f"cannot evaluate {expr}: no value for {', '.join(sorted(map(str, value.free_symbols)))}")
    return int(value) if value.is_integer else int(sp.ceiling(value))


def _per_token(total: int, tokens: int) -> int | float:
    """``total / tokens``: an integer when it divides evenly, else a float (rounded: the text marks it ≈)."""
    quotient, remainder = divmod(total, tokens)
    return quotient if remainder == 0 else total / tokens


def report(model: Model, sizes: dict, *, seq_len: int, batch: int = 1, convention: str = "matmul",
           dtype: str = "fp32") -> dict:
    """Every figure of ``complexity`` (bytes for memory): integers, except a per-token figure that does not
    divide evenly, a float."""
    check_convention(convention)
    if dtype not in DTYPES:
        raise ConfigError(f"unknown dtype {shown(dtype)}; known: {', '.join(DTYPES)}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0:
        raise ConfigError(f"batch = {shown(batch)} must be a positive integer")
    resolved = resolve_sizes(model.algorithm, sizes, seq_len)
    values = {by_name(k): v for k, v in resolved.items()}
    width = DTYPES[dtype]
    tokens = seq_len
    forward = model.forward(convention)
    per_sequence = _number(forward.flops, values)
    step = _number(model.training_step(convention), values)
    memory = _number(forward.memory, values) * width
    out = {
        "algorithm": model.name, "options": model.options, "sizes": resolved, "seq_len": seq_len,
        "batch": batch, "convention": convention, "dtype": dtype,
        "params": {k: _number(v, values) for k, v in model.params().items()},
        "flops": {"forward": per_sequence * batch, "forward_per_sequence": per_sequence,
                  "forward_per_token": _per_token(per_sequence, tokens),
                  "training_step": step * batch, "training_step_per_sequence": step,
                  "training_step_per_token": _per_token(step, tokens)},
        "memory": {"activations_bytes": memory * batch, "activations_bytes_per_sequence": memory,
                   "activations_bytes_per_token": _per_token(memory, tokens)},
        "kv_cache": None,
    }
    cache = model.kv_cache_scalars()
    if cache is not None:
        per_token = _number(cache.xreplace({ell: 1}), values) * width
        out["kv_cache"] = {"bytes_per_token": per_token,
                           "bytes_per_sequence": _number(cache, values) * width,
                           "bytes": _number(cache, values) * width * batch}
    return out


def formulas(model: Model, convention: str = "matmul") -> dict:
    """The same figures as formulas in the size symbols (paper glyphs)."""
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


