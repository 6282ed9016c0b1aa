"""A model stack with its options, and the quantities ``complexity`` derives from it with sympy.

:class:`Model` builds Algorithm 8, 9 or 10 (or a model of the lecture notes with a configuration of its own)
with the configuration's options and derives its parameters, the FLOPs and memory of a forward pass, of a
training step, and the scalars of its KV cache, as sympy expressions.  Their polynomials, shipped as data
(:mod:`formal.models.costcache`), let :mod:`formal.models.complexity` evaluate them without sympy.
"""

from __future__ import annotations

from ..errors import ConfigError, shown

__all__ = ["MODELS", "Model"]

#: The algorithms ``complexity`` accepts: the three model stacks and the models with presets or
#: configurations of their own (an encoder–decoder, a captioner, a document classifier, Swin).
MODELS = ("edtransformer", "etransformer", "dtransformer", "seq2seq", "show_attend_tell", "han", "swin")


class Model:
    """A model stack with its options, and the derived quantities ``complexity`` reports (sympy expressions)."""

    def __init__(self, algorithm_name: str, options: dict):
        from ..algorithms import get
        if algorithm_name not in MODELS:
            raise ConfigError(f"complexity needs a model, one of {', '.join(MODELS)}; got {shown(algorithm_name)}")
        self.name, self.options = algorithm_name, dict(options)
        self.algorithm = get(algorithm_name, **options)

    def params(self) -> dict:
        import sympy as sp
        total = self.algorithm.param_count()
        embedding = sp.expand(sp.Add(*(p.size() for p in self.algorithm.params if p.embedding)))
        return {"total": total, "embedding": embedding, "non_embedding": sp.expand(total - embedding)}

    def length_dependent_params(self) -> list:
        """The parameters whose size grows with the sequence length (ViT's position table has one column per
        patch), as ``"W_p (d_e×(ℓ + 1))"``: with them a different sequence length is a different model."""
        from ..core.shapes import shape_text
        from ..core.symbols import by_name
        from .presets import LENGTHS
        lengths = {by_name(n) for n in LENGTHS}
        return [f"{p.name} ({shape_text(p.shape)})" for p in self.algorithm.params
                if p.size().free_symbols & lengths]

    def forward(self, convention: str):
        return self.algorithm.cost(convention)

    def training_step(self, convention: str):
        import sympy as sp

        from ..costs.cost import gradient_step
        work = self.algorithm.derivation.work
        step = gradient_step(work.flops, self.algorithm.param_count())
        return sp.expand(work.flops[convention] + step[convention])

    def kv_cache_scalars(self):
        """Scalars held in the key/value cache for a sequence of ℓ tokens (decoder-only models), or None."""
        if self.name != "dtransformer":
            return None
        import sympy as sp

        from ..algorithms.kv_cache import build_kv_dtransformer
        from ..core.shapes import numel
        cached = build_kv_dtransformer(**self.options, step="prefill")
        shapes = cached.derivation.output_shapes[1:]
        return sp.expand(sum(numel(s) for s in shapes))
