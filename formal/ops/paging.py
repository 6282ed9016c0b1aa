"""Reading a key/value cache stored in blocks (PagedAttention, Kwon et al. 2023): the cached columns of a
sequence gathered, block after block, through its block table."""

from __future__ import annotations

import numpy as np

from ..errors import DomainError
from ..shapes import numel
from ..symbols import latex as sym_latex, text as sym_text
from .base import ATOM, Op, _rank

__all__ = ["GatherBlocks", "read_blocks"]


def read_blocks(pool, table, count: int):
    """The first ``count`` columns of the blocks ``pool[b]`` (heads×d×B each) for b in ``table``, side by side:
    heads×d×count."""
    if len(table) == 0:
        return np.zeros(pool.shape[1:3] + (0,))
    return np.concatenate(list(pool[np.asarray(table)]), axis=-1)[..., :count]


class GatherBlocks(Op):
    """``K_c = [K_pool[table[1]], …, K_pool[table[n_b]]][…, :ℓ_c]``: a sequence's cached keys (or values)
    read from a pool of physical blocks (n_pool×H_kv×d×B: a block holds B tokens' columns per head) in the
    order of its block table (n_b physical block ids, 0-based), the last block filled up to ℓ_c.  Any
    physical order — blocks anywhere in the pool, shared with other sequences — gives the same columns.
    No FLOPs; the gathered cache is materialised (a kernel reading the blocks in place would not)."""

    name = "gather_blocks"
    free = True
    prec = ATOM

    def __init__(self, count):
        self.count = count

    def shape(self, shapes):
        pool, table = shapes
        _rank(pool, (4,), "a pool of key/value blocks (blocks × heads × width × block size)")
        _rank(table, (1,), "a block table")
        return (pool[1], pool[2], self.count)

    def memory(self, out):
        return numel(out)

    def numpy(self, ctx, pool, table):
        table = np.asarray(table)
        bad = (table < 0) | (table >= pool.shape[0])
        if np.any(bad):
            raise DomainError(f"{ctx.where()}: block table entries {table[bad].tolist()} are outside the pool's "
                              f"[0, {pool.shape[0]})")
        return read_blocks(pool, table, ctx.evaluate(self.count))

    def text(self, args):
        return f"blocks({args[0].text}, {args[1].text})[…, :{sym_text(self.count)}]"

    def latex(self, args):
        return (rf"\operatorname{{blocks}}\left({args[0].text}, {args[1].text}\right)"
                rf"_{{[\dots, 1:{sym_latex(self.count)}]}}")
