"""PagedAttention (Kwon et al. 2023): multi-head attention over a key/value cache stored in fixed-size
blocks, read through the sequence's block table.

vLLM keeps each layer's cache as a pool of physical blocks of B tokens; a sequence owns a list of block ids (its
block table), new blocks are taken only when the last one is full, and sequences with a common prefix share blocks
(reference counts, copy-on-write).  Attention is unchanged: the cache read through the table, block after block, is
the contiguous cache, and Algorithm 5 with a cache (:func:`~formal.algorithms.kv_cache.build_kv_mhattention`,
``step="extend"``) runs on it — so the FLOPs are those of contiguous attention and only the memory differs.  Kwon et
al.'s eq. (4) computes the same softmax block by block, with its normaliser over all ⌈i/B⌉ blocks.

Everything of PagedAttention lives here, one family in one module:

- :class:`PagedCache`, vLLM's block manager for one layer, executable on numpy arrays: a pool of physical
  blocks of B token slots, a block table per sequence (its blocks in order), a block taken from the pool only
  when the sequence's last block is full, sequences forked from a prompt sharing its blocks (reference
  counts) until one of them writes into a shared block, which it first copies (copy-on-write);
- :class:`GatherBlocks`, the op that reads a sequence's cache through its table, and
  :func:`build_paged_mhattention`, Algorithm 5 over a cache read that way;
- :func:`memory`, the allocation rule's consequences as formulas in the cached length ℓ, the block size B,
  the reservation ℓ_max of a contiguous cache and the number n of samples sharing a p-token prompt (the tests
  count the same quantities on a :class:`PagedCache`).

>>> import numpy as np
>>> cache = PagedCache(n_blocks=8, block=4, heads=1, d_k=2, d_v=2)
>>> s = cache.new()
>>> cache.append(s, np.ones((1, 2, 6)), np.ones((1, 2, 6)))
>>> cache.table(s).tolist(), cache.length(s), cache.waste(s)
([0, 1], 6, 2)

References
----------
- W. Kwon et al., "Efficient memory management for large language model serving with PagedAttention",
  SOSP 2023, §4.1 (eq. 4, the block table), §4.3 (copy-on-write sharing).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.shapes import TensorSpec, numel
from ..core.symbols import (
    H,
    block,
    d_attn,
    d_mid,
    d_x,
    ell_c,
    ell_max,
    ell_x,
    latex as sym_latex,
    n_blocks,
    n_pool,
    text as sym_text,
)
from ..engine.algorithm import Algorithm, Assign, at_most, call
from ..engine.declarations import Options
from ..errors import ConfigError, DomainError, shown
from ..ops.base import ATOM, Op, rank
from .attention import BIAS, EMPTY, N_KV_HEADS, QK_EPS, QK_NORM, ROPE_OPTIONS, SCORE_CAP, kv_heads
from .kv_cache import build_kv_mhattention, cached_rope

__all__ = ["ALGORITHMS", "build_paged_mhattention", "paged_mhattention", "PagedCache", "PoolFull", "memory",
           "GatherBlocks", "gather_blocks", "read_blocks"]


# ------------------------------------------------------------------------------------ the block manager
class PoolFull(ConfigError):
    """Every physical block is in use: the sequence cannot grow (vLLM would preempt one)."""


def _count(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{name} = {shown(value)} must be an integer ≥ {minimum}")
    return int(value)


class PagedCache:
    """One layer's key/value cache in ``n_blocks`` physical blocks of ``block`` token slots each: pools
    ``K`` (n_blocks×heads×d_k×B) and ``V`` (n_blocks×heads×d_v×B), a block table per sequence, reference
    counts.  Sequences are named by the ints :meth:`new` and :meth:`fork` return."""

    def __init__(self, n_blocks: int, block: int, heads: int, d_k: int, d_v: int):
        self.B = _count("block", block)
        n = _count("n_blocks", n_blocks)
        heads, d_k, d_v = _count("heads", heads), _count("d_k", d_k), _count("d_v", d_v)
        self.K = np.zeros((n, heads, d_k, self.B))
        self.V = np.zeros((n, heads, d_v, self.B))
        self.refs = np.zeros(n, dtype=int)
        self._free = list(range(n - 1, -1, -1))    # popped from the end: block 0 first
        self._tables: dict = {}
        self._lengths: dict = {}
        self._next = 0

    # -- sequences
    def new(self) -> int:
        """An empty sequence (no blocks yet)."""
        seq, self._next = self._next, self._next + 1
        self._tables[seq], self._lengths[seq] = [], 0
        return seq

    def fork(self, seq: int) -> int:
        """A new sequence sharing every block of ``seq`` (parallel sampling, beam search): no copy now."""
        table = self._table(seq)
        child = self.new()
        self._tables[child], self._lengths[child] = list(table), self._lengths[seq]
        for b in table:
            self.refs[b] += 1
        return child

    def free(self, seq: int) -> None:
        """Drop ``seq``: its blocks no other sequence holds go back to the pool."""
        for b in self._table(seq):
            self.refs[b] -= 1
            if self.refs[b] == 0:
                self._free.append(b)
        del self._tables[seq], self._lengths[seq]

    def append(self, seq: int, K_new, V_new) -> None:
        """Write the keys and values of t new tokens (heads×d_k×t, heads×d_v×t) after ``seq``'s tokens:
        a block is taken when the last is full, a shared last block is copied before the write.  When the
        pool runs out (:class:`PoolFull`) the tokens before the one that found no block are kept."""
        table = self._table(seq)
        K_new, V_new = np.asarray(K_new, dtype=float), np.asarray(V_new, dtype=float)
        if K_new.shape[:-1] != self.K.shape[1:3] or V_new.shape[:-1] != self.V.shape[1:3] \
                or K_new.shape[-1] != V_new.shape[-1]:
            raise ConfigError(f"new keys {K_new.shape} and values {V_new.shape} do not fit blocks of keys "
                              f"{self.K.shape[1:3]}×t and values {self.V.shape[1:3]}×t")
        for t in range(K_new.shape[-1]):
            slot = self._lengths[seq] % self.B
            if slot == 0:
                table.append(self._take())
            elif self.refs[table[-1]] > 1:             # copy-on-write
                fresh = self._take()
                self.K[fresh], self.V[fresh] = self.K[table[-1]], self.V[table[-1]]
                self.refs[table[-1]] -= 1
                table[-1] = fresh
            self.K[table[-1], :, :, slot] = K_new[..., t]
            self.V[table[-1], :, :, slot] = V_new[..., t]
            self._lengths[seq] += 1

    # -- reading
    def table(self, seq: int) -> np.ndarray:
        """``seq``'s block table: its physical block ids in order."""
        return np.array(self._table(seq), dtype=int)

    def length(self, seq: int) -> int:
        """Tokens cached for ``seq``."""
        self._table(seq)
        return self._lengths[seq]

    def gather(self, seq: int) -> tuple:
        """``seq``'s cache as contiguous arrays (heads×d×ℓ), block after block."""
        table, n = self._table(seq), self._lengths[seq]
        return read_blocks(self.K, table, n), read_blocks(self.V, table, n)

    def waste(self, seq: int) -> int:
        """Slots held but unused: B·(blocks) − ℓ (only the last block has any)."""
        return self.B * len(self._table(seq)) - self._lengths[seq]

    @property
    def blocks_in_use(self) -> int:
        return int(np.count_nonzero(self.refs))

    @property
    def free_blocks(self) -> list:
        """The physical blocks no sequence holds, in increasing order."""
        return sorted(self._free)

    @property
    def sequences(self) -> tuple:
        return tuple(self._tables)

    def _table(self, seq):
        try:
            return self._tables[seq]
        except (KeyError, TypeError):
            raise ConfigError(f"no sequence {shown(seq)} in the cache; it holds {sorted(self._tables)}") from None

    def _take(self) -> int:
        if not self._free:
            raise PoolFull(f"all {len(self.refs)} blocks of {self.B} slots are in use")
        b = self._free.pop()
        self.refs[b] = 1
        return b



# ------------------------------------------------------------------------------- reading through a table
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
        rank(pool, (4,), "a pool of key/value blocks (blocks × heads × width × block size)")
        rank(table, (1,), "a block table")
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


def gather_blocks(pool, table, count):
    return GatherBlocks(count)(pool, table)


# ------------------------------------------------------------------------------------- the algorithm
@Options(BIAS, EMPTY, N_KV_HEADS, SCORE_CAP, QK_NORM, QK_EPS, *cached_rope(ROPE_OPTIONS)).builds
def build_paged_mhattention(*, bias, empty, n_kv_heads, **options) -> Algorithm:
    """Algorithm 5 with a paged key/value cache: the new tokens X attend over the ℓ_c cached tokens —
    gathered from the pools ``K_pool``, ``V_pool`` (N_pool×H_kv×d×B) through ``table`` (n_b block ids, the
    last block holding the tokens past B·(n_b − 1)) — and over themselves.  ``empty``, the cap, the QK-norm and the
    rotary options are those of the cached attention it calls
    (:func:`formal.algorithms.kv_cache.build_kv_mhattention`)."""
    cached = build_kv_mhattention(bias=bias, empty=empty, n_kv_heads=n_kv_heads, step="extend", **options)
    kv = H if n_kv_heads is None else kv_heads(n_kv_heads)
    total = ell_c + ell_x
    inputs = [TensorSpec("X", (d_x, ell_x), doc="the new tokens, one column each"),
              TensorSpec("K_pool", (n_pool, kv, d_attn, block), doc="the key blocks of every sequence"),
              TensorSpec("V_pool", (n_pool, kv, d_mid, block), doc="the value blocks of every sequence"),
              TensorSpec("table", (n_blocks,), "index", "this sequence's block table: physical block ids, 0-based",
                         bound=n_pool),
              TensorSpec("mask", (total, ell_x), "mask", "Mask[t_z, t_x] = 1 where new token t_x sees t_z")]
    lines = [Assign("K_c", gather_blocks("K_pool", "table", ell_c), note="Keys, block after block"),
             Assign("V_c", gather_blocks("V_pool", "table", ell_c), note="Values, block after block"),
             Assign(("V_tilde", "K_g", "V_g"), call(cached, label=("W", "W"), X="X", K_c="K_c", V_c="V_c",
                                                     mask="mask", **{p.name: p.name for p in cached.params}),
                    returns=True)]
    constraints = [at_most(ell_c, n_blocks * block, "the block table holds the cached tokens"),
                   at_most(n_blocks * block, ell_c + block - 1,
                           "a block is taken only when the last one is full: n_b = ⌈ℓ_c/B⌉")]
    return Algorithm(
        number=None, source="Kwon et al. 2023", name="paged_mhattention", display="PagedMHAttention",
        summary="Algorithm 5 over a key/value cache in blocks, read through the sequence's block table.",
        inputs=inputs, params=cached.params, output=cached.outputs, lines=lines, params_label="W",
        constraints=constraints,
    )


# ---------------------------------------------------------------------------------------- its memory
def memory(*, samples=None, prompt=None) -> dict:
    """The paged cache's memory in slots (one slot: one token's keys and values of one layer), as sympy
    expressions in ℓ_c (tokens cached), B (the block size) and ℓ_max (a contiguous cache's reservation):

    - ``blocks``: ⌈ℓ_c/B⌉, blocks are taken one at a time as the last fills;
    - ``wasted_slots``: B⌈ℓ_c/B⌉ − ℓ_c, at most B − 1, all in the last block;
    - ``reserved_waste``: ℓ_max − ℓ_c, what a contiguous cache reserved for ℓ_max tokens leaves unused;
    - with ``samples`` n and ``prompt`` p (symbols or ints): ``shared_prompt_blocks``, ⌊p/B⌋ + n·[B ∤ p],
      the prompt's blocks once n samples forked from it have each written a token (the full blocks shared,
      a copy of the partial one each), against ``unshared_prompt_blocks``, n⌈p/B⌉.
    """
    out = {"blocks": sp.ceiling(ell_c / block), "wasted_slots": block * sp.ceiling(ell_c / block) - ell_c,
           "reserved_waste": ell_max - ell_c}
    if samples is not None or prompt is not None:
        n, p = sp.sympify(samples), sp.sympify(prompt)
        partial = sp.ceiling(p / block) - sp.floor(p / block)           # 1 if B does not divide p, else 0
        out["shared_prompt_blocks"] = sp.floor(p / block) + n * partial
        out["unshared_prompt_blocks"] = n * sp.ceiling(p / block)
    return out


paged_mhattention = build_paged_mhattention()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (paged_mhattention,)
