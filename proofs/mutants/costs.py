"""Realistic bugs in the cost side of the spec — parameter declarations, cost rules, the cached decoder — each
planted in a fresh process, with the cost theorems (:mod:`proofs.costs`, :mod:`proofs.kaplan`) it makes false.
"""

from __future__ import annotations

import dataclasses

from .entry import SpecMutant, patch, rebuild

__all__ = ["MUTANTS"]


def _unembedding_not_embedding():
    """``W_u`` declared without ``embedding=True``: the unembedding counted among the non-embedding
    parameters (N gains N_V·d)."""
    from formal.algorithms import architectures, kv_cache
    original = architectures.unembed

    def unembed(*args, **kwargs):
        line, params = original(*args, **kwargs)
        return line, [dataclasses.replace(p, embedding=False) if p.name == "W_u" else p for p in params]
    patch(architectures, "unembed", unembed)
    patch(kv_cache, "unembed", unembed)


def _kaplan_counts_values():
    """The kaplan convention counting the value-weighting product V·A as well as the scores KᵀQ."""
    from formal.ops import linalg
    patch(linalg, "_KAPLAN", frozenset({"weight", "score", "mix"}))


def _beta_shared_by_layers():
    """β declared once for the whole stack (``(width,)``, not stacked on the layers): L − 1 of each layer norm's
    β are left out of the parameter count."""
    from formal.algorithms import blocks
    from formal.core.shapes import TensorSpec
    from formal.core.symbols import d_e

    def norm_params(name, opts, layers=(), width=d_e, doc=""):
        specs = [TensorSpec(f"gamma{name}", layers + (width,), doc=f"{doc} scale".strip())]
        if opts.norm == "layer":
            specs.append(TensorSpec(f"beta{name}", (width,), doc=f"{doc} offset".strip()))
        return specs
    patch(blocks, "norm_params", norm_params)
    from formal import algorithms
    for name in ("dtransformer", "etransformer", "edtransformer"):
        rebuild(name, algorithms.ALGORITHMS[name]._builder)


def _gqa_cache_all_heads():
    """The KV cache's size read from a cached decoder built without the ``n_kv_heads`` option: one key and
    value per query head (H), not per key/value head."""
    import sympy as sp

    from formal.algorithms.kv_cache import build_kv_dtransformer
    from formal.core.shapes import numel
    from formal.models.model import Model

    def kv_cache_scalars(self):
        if self.name != "dtransformer":
            return None
        options = {k: v for k, v in self.options.items() if k != "n_kv_heads"}
        cached = build_kv_dtransformer(**options, step="prefill")
        return sp.expand(sum(numel(s) for s in cached.derivation.output_shapes[1:]))
    patch(Model, "kv_cache_scalars", kv_cache_scalars)


def _cache_flag_inverted():
    """Algorithm 14's ``kv_cache`` test inverted: the cached decoder recomputes the whole prefix at every step
    (and the uncached one keeps a cache)."""
    from formal.algorithms import inference
    original = inference.build_dinference
    inner = original.__wrapped__      # the builder its declarations decorate

    @original.declared.builds
    def build_dinference(*, kv_cache, **options):
        return inner(kv_cache=not kv_cache, **options)
    patch(inference, "build_dinference", build_dinference)
    rebuild("dinference", build_dinference)


def _activation_counts_everywhere():
    """An activation's FLOPs counted under every convention (copied from its ``full`` count), so the matmul and
    kaplan conventions count a GELU."""
    from formal.core.shapes import numel
    from formal.costs.conventions import CONVENTIONS
    from formal.ops.activations import Activation

    def flops(self, shapes, out):
        return {c: self.per_element * numel(out) for c in CONVENTIONS}
    patch(Activation, "flops", flops)


MUTANTS = (
    SpecMutant("unembedding-counted-as-non-embedding", "W_u is declared without embedding=True, so N counts the "
               "unembedding's N_V·d entries", ("kaplan-n",), "algorithm", _unembedding_not_embedding),
    SpecMutant("kaplan-counts-value-product", "the kaplan convention counts the value-weighting product V·A",
               ("kaplan-c-forward",), "cost rule", _kaplan_counts_values),
    SpecMutant("layer-norm-beta-uncounted", "a layer norm's β is declared once for the whole stack, not per "
               "layer: L − 1 of them are left out of the parameter count", ("parameter-closed-forms",),
               "algorithm", _beta_shared_by_layers),
    SpecMutant("gqa-cache-counts-all-heads", "a grouped-query decoder's KV cache is sized without n_kv_heads: one "
               "key and value per query head (H)", ("gqa-kv-cache-ratio",), "cost rule", _gqa_cache_all_heads),
    SpecMutant("cached-decoding-recomputes-prefix", "Algorithm 14's kv_cache test is inverted: decoding 'with the "
               "cache' runs the whole prefix through Algorithm 10 at every step",
               ("generation-growth", "kv-cache-saves-work"), "algorithm", _cache_flag_inverted),
    SpecMutant("activation-counts-matmul-flops", "an activation's FLOPs are counted under every convention, the "
               "matmul and kaplan conventions included", ("training-step-3x-forward", "kaplan-c-forward"),
               "cost rule", _activation_counts_everywhere),
)
