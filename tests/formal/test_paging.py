"""Block tables and paged attention (Kwon et al. 2023): the block manager against a list of the tokens
each sequence was given, its block counts against the derived formulas, and paged attention against
Algorithm 5 on the contiguous cache — for any program of appends, forks and frees, any block size."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import algorithms
from formal.algorithms.paged import PagedCache, PoolFull, memory
from formal.core.symbols import block, ell_c, ell_max
from formal.errors import ConfigError, DomainError

HEADS, D_K, D_V = 2, 3, 2


@st.composite
def programs(draw):
    """A block size and a list of operations: ("new",), ("append", i, t), ("fork", i), ("free", i), where i
    picks a live sequence (modulo their number) and t is a number of tokens."""
    B = draw(st.integers(1, 4))
    ops = draw(st.lists(st.one_of(st.tuples(st.just("new")),
                                  st.tuples(st.just("append"), st.integers(0, 5), st.integers(0, 6)),
                                  st.tuples(st.just("fork"), st.integers(0, 5)),
                                  st.tuples(st.just("free"), st.integers(0, 5))), max_size=14))
    return B, [("new",)] + ops


def _run(B, ops, rng, n_blocks=64):
    """The program on a PagedCache, and the oracle: each sequence's tokens as plain lists of columns."""
    cache, oracle = PagedCache(n_blocks, B, HEADS, D_K, D_V), {}
    for op in ops:
        live = list(oracle)
        if op[0] == "new":
            oracle[cache.new()] = ([], [])
        elif not live:
            continue
        elif op[0] == "append":
            seq, t = live[op[1] % len(live)], op[2]
            K, V = rng.normal(size=(HEADS, D_K, t)), rng.normal(size=(HEADS, D_V, t))
            cache.append(seq, K, V)
            oracle[seq][0].extend(K[..., i] for i in range(t))
            oracle[seq][1].extend(V[..., i] for i in range(t))
        elif op[0] == "fork":
            parent = live[op[1] % len(live)]
            oracle[cache.fork(parent)] = (list(oracle[parent][0]), list(oracle[parent][1]))
        else:
            seq = live[op[1] % len(live)]
            cache.free(seq)
            del oracle[seq]
    return cache, oracle


def _contiguous(columns, width):
    return np.stack(columns, axis=-1) if columns else np.zeros((HEADS, width, 0))


@given(programs(), st.integers(0, 2**16))
def test_every_sequence_reads_back_what_it_was_given(program, seed):
    """Whatever the appends, forks (shared blocks) and frees, a sequence's blocks read in its table's order
    are the tokens it was given — a fork's included, untouched by its siblings' later writes (copy-on-write);
    a block's reference count is the number of tables holding it, and the free blocks are the rest."""
    cache, oracle = _run(*program, np.random.default_rng(seed))
    holders = np.zeros_like(cache.refs)
    for seq, (K, V) in oracle.items():
        got_K, got_V = cache.gather(seq)
        np.testing.assert_array_equal(got_K, _contiguous(K, D_K))
        np.testing.assert_array_equal(got_V, _contiguous(V, D_V))
        for b in cache.table(seq):
            holders[b] += 1
    np.testing.assert_array_equal(cache.refs, holders)
    assert cache.free_blocks == [b for b in range(len(cache.refs)) if holders[b] == 0]


@given(programs(), st.integers(0, 2**16))
def test_a_sequence_holds_the_derived_number_of_blocks(program, seed):
    """Blocks are taken one at a time as the last one fills: a table has ⌈ℓ/B⌉ blocks and wastes
    B⌈ℓ/B⌉ − ℓ ≤ B − 1 slots — memory()'s formulas at the sequence's ℓ and B."""
    B, ops = program
    cache, _ = _run(B, ops, np.random.default_rng(seed))
    m = memory()
    for seq in cache.sequences:
        at = {ell_c: cache.length(seq), block: B}
        assert len(cache.table(seq)) == m["blocks"].xreplace(at)
        assert cache.waste(seq) == m["wasted_slots"].xreplace(at) <= B - 1


@given(st.integers(1, 40), st.integers(1, 6), st.integers(1, 8))
def test_samples_share_the_prompts_full_blocks_and_copy_its_partial_one(p, n, B):
    """n samples forked from a p-token prompt each write a token: the blocks holding prompt tokens are the
    ⌊p/B⌋ full ones, shared, and one private copy of the partial block per sample when B ∤ p —
    ⌊p/B⌋ + n·[B ∤ p], against n⌈p/B⌉ without sharing (memory(samples=n, prompt=p))."""
    rng = np.random.default_rng(0)
    cache = PagedCache(n * (p // B + 2) + 2, B, HEADS, D_K, D_V)
    prompt = cache.new()
    cache.append(prompt, rng.normal(size=(HEADS, D_K, p)), rng.normal(size=(HEADS, D_V, p)))
    samples = [cache.fork(prompt) for _ in range(n)]
    cache.free(prompt)
    for s in samples:
        cache.append(s, rng.normal(size=(HEADS, D_K, 1)), rng.normal(size=(HEADS, D_V, 1)))
    holding_prompt = {b for s in samples for b in cache.table(s)[:-(-p // B)].tolist()}
    m = memory(samples=n, prompt=p)
    assert len(holding_prompt) == m["shared_prompt_blocks"].xreplace({block: B})
    assert n * (-(-p // B)) == m["unshared_prompt_blocks"].xreplace({block: B})


def test_vllms_figures_follow_from_the_formulas():
    """Kwon et al.'s example sizes: 100 tokens in blocks of 16 take 7 blocks and waste 12 slots, where a
    contiguous reservation of 2048 wastes 1948; four samples of a 100-token prompt hold 10 blocks, not 28."""
    m = memory(samples=4, prompt=100)
    at = {ell_c: 100, block: 16, ell_max: 2048}
    assert [m[k].xreplace(at) for k in m] == [7, 12, 1948, 10, 28]


@st.composite
def paged_cases(draw):
    """A program whose last sequence is the cache, new tokens X, weights, and a mask over cache and X."""
    B, ops = draw(programs())
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    cache, oracle = _run(B, ops + [("new",)], rng)
    seq = list(oracle)[draw(st.integers(0, len(oracle) - 1))]       # maybe a fork: its next write copies
    t = draw(st.integers(1, 7))
    K_new, V_new = rng.normal(size=(HEADS, D_K, t)), rng.normal(size=(HEADS, D_V, t))
    cache.append(seq, K_new, V_new)
    oracle[seq][0].extend(K_new[..., i] for i in range(t))
    oracle[seq][1].extend(V_new[..., i] for i in range(t))
    kv = cache.K.shape[1]
    H = kv * draw(st.integers(1, 2))
    ell_x, d_x = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    params = {"W_q": rng.normal(size=(H, D_K, d_x)), "b_q": rng.normal(size=(H, D_K)),
              "W_k": rng.normal(size=(kv, D_K, d_x)), "b_k": rng.normal(size=(kv, D_K)),
              "W_v": rng.normal(size=(kv, D_V, d_x)), "b_v": rng.normal(size=(kv, D_V)),
              "W_o": rng.normal(size=(2, H * D_V)), "b_o": rng.normal(size=2)}
    X = rng.normal(size=(d_x, ell_x))
    mask = rng.random((cache.length(seq) + ell_x, ell_x)) < 0.7
    return cache, seq, oracle[seq], X, mask, params, (None if H == kv else kv)


@given(paged_cases())
def test_paged_attention_is_attention_over_the_contiguous_cache(case):
    """For any block table — blocks anywhere in the pool, shared, any B — PagedMHAttention equals Algorithm
    5 with the contiguous cache of the same tokens (kv_mhattention, step="extend"), exactly: the gather
    changes where the columns live, not which."""
    cache, seq, (K, V), X, mask, params, n_kv = case
    paged = algorithms.get("paged_mhattention", n_kv_heads=n_kv)
    contiguous = algorithms.get("kv_mhattention", n_kv_heads=n_kv, step="extend")
    got = paged(X=X, K_pool=cache.K, V_pool=cache.V, table=cache.table(seq), mask=mask, ell_c=cache.length(seq),
                **params)
    want = contiguous(X=X, K_c=_contiguous(K, D_K), V_c=_contiguous(V, D_V), mask=mask, **params)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_paged_attention_costs_what_contiguous_attention_costs():
    """The gather has no FLOPs: the paged algorithm's FLOPs are Algorithm 5's with a cache, under every
    convention; its memory adds the gathered cache."""
    paged, contiguous = algorithms.get("paged_mhattention"), algorithms.get("kv_mhattention", step="extend")
    for convention in ("matmul", "full", "kaplan", "chinchilla"):
        assert sp.expand(paged.cost(convention).flops - contiguous.cost(convention).flops) == 0


def test_bad_block_tables_are_refused_with_what_is_wrong():
    rng = np.random.default_rng(0)
    cache = PagedCache(4, 2, 1, 1, 1)
    s = cache.new()
    cache.append(s, rng.normal(size=(1, 1, 3)), rng.normal(size=(1, 1, 3)))
    args = dict(X=rng.normal(size=(1, 1)), K_pool=cache.K, V_pool=cache.V, W_q=np.ones((1, 1, 1)),
                W_k=np.ones((1, 1, 1)), W_v=np.ones((1, 1, 1)), W_o=np.ones((1, 1)), b_q=np.zeros((1, 1)),
                b_k=np.zeros((1, 1)), b_v=np.zeros((1, 1)), b_o=np.zeros(1))
    paged = algorithms.paged_mhattention
    with pytest.raises(DomainError, match=r"block table entries \[7\] are outside the pool's \[0, 4\)"):
        paged(table=np.array([0, 7]), ell_c=3, **args)
    with pytest.raises(ConfigError, match="ell_c = 5 exceeds block\\*n_blocks = 4"):
        paged(table=cache.table(s), ell_c=5, **args)
    with pytest.raises(ConfigError, match="a block is taken only when the last one is full"):
        paged(table=np.array([0, 1, 2]), ell_c=3, **args)
    with pytest.raises(PoolFull, match="all 4 blocks of 2 slots are in use"):
        cache.append(s, np.ones((1, 1, 6)), np.ones((1, 1, 6)))
    with pytest.raises(ConfigError, match="no sequence 9 in the cache"):
        cache.fork(9)
    with pytest.raises(ConfigError, match="block = 0 must be an integer ≥ 1"):
        PagedCache(4, 0, 1, 1, 1)
