"""A Llama written the way Meta's reference code (``llama/model.py``) writes it — our own code, in its idiom and
with its names: the rotary table as complex numbers (``precompute_freqs_cis``, ``torch.polar``), queries and keys
turned by viewing each pair of rows (2i, 2i + 1) as one complex number (``apply_rotary_emb``,
``torch.view_as_complex``), an ``Attention`` with ``wq``/``wk``/``wv``/``wo`` (no biases), grouped key/value heads
repeated by ``repeat_kv`` and a key/value cache written at ``start_pos``, ``RMSNorm``, a SwiGLU ``FeedForward``
(``w2(silu(w1 x) ⊙ w3 x)``) whose width comes from ``multiple_of`` and ``ffn_dim_multiplier``, and a
``Transformer`` with ``tok_embeddings``, ``layers``, ``norm`` and ``output``.

Nothing here names an option of the spec: :mod:`.llama_adapters` hands it the spec's arrays by name only, and
``conform`` has to find that its rotation is the interleaved one.

One departure from Meta's code: Meta computes the rotary table and the softmax in float32 (``.float()``) whatever
the weights' dtype; here they are computed in the weights' dtype (``ModelArgs.dtype``, at least float32), so that a
float64 model can be held to float64's tolerance.  A float32 model computes what Meta's does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    n_kv_heads: int | None = None
    vocab_size: int = -1
    multiple_of: int = 256            # the SwiGLU width is rounded up to a multiple of this
    ffn_dim_multiplier: float | None = None
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    max_batch_size: int = 32
    max_seq_len: int = 2048
    dtype: torch.dtype = torch.float32


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6, dtype=torch.float32):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x) * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0, dtype=torch.float32):
    """``e^{i·t·ω_k}`` for t < ``end`` and ω_k = θ^(−2k/dim), k < dim/2: an (end, dim/2) complex table."""
    exponents = torch.arange(0, dim, 2, dtype=dtype)[: dim // 2] / dim
    omega = 1.0 / (theta ** exponents)
    angles = torch.outer(torch.arange(end, dtype=dtype), omega)
    return torch.polar(torch.ones_like(angles), angles)


def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    """The (seqlen, dim/2) table shaped (1, seqlen, 1, dim/2), to multiply x (bsz, seqlen, heads, dim/2)."""
    assert freqs_cis.shape == (x.shape[1], x.shape[-1]), (freqs_cis.shape, x.shape)
    return freqs_cis.view(*[d if i in (1, x.ndim - 1) else 1 for i, d in enumerate(x.shape)])


def _complex_pairs(x: torch.Tensor, real_dtype):
    """(…, dim) → (…, dim/2) complex: rows 2k and 2k + 1 as ``x_{2k} + i·x_{2k+1}``."""
    return torch.view_as_complex(x.to(real_dtype).reshape(*x.shape[:-1], -1, 2))


def apply_rotary_emb(xq: torch.Tensor, xk: torch.Tensor, freqs_cis: torch.Tensor):
    real = freqs_cis.real.dtype
    xq_, xk_ = _complex_pairs(xq, real), _complex_pairs(xk, real)
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(bsz, seqlen, n_kv_heads, head_dim) → (bsz, seqlen, n_kv_heads·n_rep, head_dim): each key/value head
    repeated for the n_rep query heads that read it."""
    if n_rep == 1:
        return x
    bs, slen, n_kv_heads, head_dim = x.shape
    return x.unsqueeze(3).expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(bs, slen, n_kv_heads * n_rep,
                                                                                 head_dim)


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        self.n_local_heads = args.n_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = args.dim // args.n_heads

        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False, dtype=args.dtype)
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False, dtype=args.dtype)
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False, dtype=args.dtype)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False, dtype=args.dtype)

        cache = (args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim)
        self.cache_k = torch.zeros(cache, dtype=args.dtype)
        self.cache_v = torch.zeros(cache, dtype=args.dtype)

    def forward(self, x: torch.Tensor, start_pos: int, freqs_cis: torch.Tensor, mask: torch.Tensor | None):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

        self.cache_k = self.cache_k.to(xq)
        self.cache_v = self.cache_v.to(xq)
        self.cache_k[:bsz, start_pos:start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos:start_pos + seqlen] = xv

        keys = repeat_kv(self.cache_k[:bsz, :start_pos + seqlen], self.n_rep)      # (bs, cache + seqlen, heads, hd)
        values = repeat_kv(self.cache_v[:bsz, :start_pos + seqlen], self.n_rep)

        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask                       # (bs, heads, seqlen, cache + seqlen)
        wide = torch.promote_types(scores.dtype, torch.float32)
        scores = F.softmax(scores.to(wide), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)            # (bs, heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int, multiple_of: int, ffn_dim_multiplier: float | None,
                 dtype=torch.float32):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        if ffn_dim_multiplier is not None:
            hidden_dim = int(ffn_dim_multiplier * hidden_dim)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)

        self.w1 = nn.Linear(dim, hidden_dim, bias=False, dtype=dtype)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False, dtype=dtype)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False, dtype=dtype)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, layer_id: int, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.head_dim = args.dim // args.n_heads
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, 4 * args.dim, args.multiple_of, args.ffn_dim_multiplier,
                                        dtype=args.dtype)
        self.layer_id = layer_id
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps, dtype=args.dtype)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps, dtype=args.dtype)

    def forward(self, x, start_pos: int, freqs_cis: torch.Tensor, mask: torch.Tensor | None):
        h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, params: ModelArgs):
        super().__init__()
        self.params = params
        self.vocab_size = params.vocab_size
        self.n_layers = params.n_layers

        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim, dtype=params.dtype)
        self.layers = nn.ModuleList([TransformerBlock(i, params) for i in range(params.n_layers)])
        self.norm = RMSNorm(params.dim, eps=params.norm_eps, dtype=params.dtype)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False, dtype=params.dtype)

        wide = torch.promote_types(params.dtype, torch.float32)
        self.freqs_cis = precompute_freqs_cis(params.dim // params.n_heads, params.max_seq_len * 2,
                                              params.rope_theta, dtype=wide)

    @torch.inference_mode()
    def forward(self, tokens: torch.Tensor, start_pos: int):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        self.freqs_cis = self.freqs_cis.to(h.device)
        freqs_cis = self.freqs_cis[start_pos:start_pos + seqlen]

        mask = None
        if seqlen > 1:      # token t sees the cache and the new tokens up to itself
            mask = torch.full((seqlen, start_pos + seqlen), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)

        for layer in self.layers:
            h = layer(h, start_pos, freqs_cis, mask)
        h = self.norm(h)
        return self.output(h).to(torch.promote_types(h.dtype, torch.float32))
