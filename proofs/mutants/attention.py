"""Realistic bugs in attention and KV-cache decoding — the grouping of heads, the causal mask, the positions
of cached decoding, the cache update — and the theorems each must make fail.

``mask-rolled`` shifts the mask by one key with ``np.roll``, which wraps around: it commutes with a cyclic shift
of the tokens, so permuting tokens and mask cyclically still permutes the output, but not with a general
permutation — only the random permutations of ``attention-permutation-equivariant`` catch it there.
"""

from __future__ import annotations

from .entry import SpecMutant, patch, rebuild

__all__ = ["MUTANTS"]

_KV = ("kv-cache-equals-recomputation", "kv-cache-greedy-decoding")


def _heads_interleaved():
    """Query head h reads key/value head h mod n_kv (interleaved groups) instead of ⌊h/(H/n_kv)⌋."""
    from formal.ops.indexing import KVGroup
    patch(KVGroup, "value", lambda self, ctx: ctx.loop[self.var] % ctx.evaluate(self.n_kv))


def _causal_off_by_one():
    """The causal mask admits one key too many: ``t_z ≤ t_x + s + 1`` (``np.tril(..., k=1)`` for ``k=0``)."""
    import numpy as np

    from formal.core import masks

    def causal(ell_z, ell_x, *, align=None):
        shift = masks.causal_shift(ell_z, ell_x, align)
        return np.arange(ell_z)[:, None] <= np.arange(ell_x)[None, :] + shift + 1
    patch(masks, "causal", causal)


def _mask_rolled():
    """The mask is moved one key down before it is applied, with ``np.roll`` (meant to make room for a key
    prepended in front, e.g. an attention sink); np.roll wraps the last key's row around to the top."""
    import numpy as np

    from formal.ops.reductions import MaskFill
    patch(MaskFill, "numpy", lambda self, ctx, s, mask: np.where(np.roll(mask, 1, axis=0), s, -np.inf))


def _positions_from_zero():
    """The new tokens' positions start at 0, not at the cache's length ℓ_c (the offset forgotten)."""
    import numpy as np

    from formal.ops.sequences import Positions
    patch(Positions, "numpy", lambda self, ctx, *values: np.arange(ctx.evaluate(self.count)))


def _cache_written_one_early():
    """The extend attends over ``[K_c, K_new]`` as it should, but writes the cache it returns into a buffer of
    ℓ_c + ℓ_x columns at index ℓ_c − 1 instead of ℓ_c (a 1-based length used as a 0-based index): the last
    cached column is overwritten and the buffer's last column stays 0.  The first extend's outputs are right;
    the next extend reads the broken cache."""
    from dataclasses import replace

    import numpy as np

    from formal.algorithms import kv_cache
    from formal.engine.algorithm import Algorithm, Assign
    from formal.ops.sequences import Concat

    class WriteOneEarly(Concat):
        def numpy(self, ctx, a, b):
            out = np.zeros(a.shape[:-1] + (a.shape[-1] + b.shape[-1],))
            out[..., :a.shape[-1]] = a
            out[..., a.shape[-1] - 1:a.shape[-1] - 1 + b.shape[-1]] = b
            return out

    correct = kv_cache.build_kv_mhattention

    @correct.declared.builds                                             # every option of the correct builder
    def build_kv_mhattention(*, step, **options):
        built = correct(step=step, **options)
        if step != "extend":
            return built
        kv_loop, q_loop, *rest = built.lines
        keys, values = (line.expr.args[1] for line in kv_loop.body)         # [K_c^g, keys]: the new keys
        kv_loop = replace(kv_loop, body=(*kv_loop.body, Assign("K_n", keys), Assign("V_n", values)),
                          stack=(*kv_loop.stack, "K_n", "V_n"))
        written = [Assign("K_g", WriteOneEarly()("K_c", "K_n")), Assign("V_g", WriteOneEarly()("V_c", "V_n"))]
        return Algorithm(number=built.number, name=built.name, display=built.display, summary=built.summary,
                         inputs=built.inputs, params=built.params, output=built.outputs,
                         lines=(kv_loop, q_loop, *written, *rest), params_label=built.params_label,
                         constraints=built.constraints, options=built.options, builder=build_kv_mhattention)
    patch(kv_cache, "build_kv_mhattention", build_kv_mhattention)
    rebuild("kv_mhattention", build_kv_mhattention)
    rebuild("kv_dtransformer", kv_cache.build_kv_dtransformer)


MUTANTS = (
    SpecMutant("gqa-heads-interleaved", "grouped-query attention maps query head h to key/value head h mod n_kv "
               "instead of ⌊h/(H/n_kv)⌋", ("gqa-repeats-kv-heads",), "op", _heads_interleaved),
    SpecMutant("causal-mask-off-by-one", "the causal mask admits the next position too (t_z ≤ t_x + 1)",
               ("causal-masking",), "op", _causal_off_by_one),
    SpecMutant("mask-rolled", "the mask is shifted one key down with np.roll before it is applied (the last key's "
               "row wraps to the top)",
               ("attention-permutation-equivariant", "attention-context-order", "causal-masking"), "op", _mask_rolled),
    SpecMutant("extend-positions-from-zero", "the KV-cache extend numbers its new tokens' positions from 0, not "
               "from the cache's length", _KV, "op", _positions_from_zero),
    SpecMutant("cache-written-one-early", "the KV-cache extend attends over the right keys but writes the cache "
               "it returns one position early, overwriting the last cached column",
               ("kv-cache-equals-recomputation",), "algorithm", _cache_written_one_early),
)
