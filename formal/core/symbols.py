"""Dimension symbols with the paper's names.

Every size in the package is a positive-integer sympy ``Symbol`` made by :func:`dim`, named in ASCII after
the paper's notation (``ell_x`` for ℓ_x, ``d_attn`` for d_attn).  One factory means one symbol per name, so
``dim("d_e") is d_e`` and expressions built in different modules compare equal.

Examples
--------
>>> from formal.core.symbols import d_e, ell, text
>>> text(2 * d_e * ell)
'2·d_e·ℓ'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..errors import ConfigError

__all__ = [
    "SymbolInfo", "dim", "real", "by_name", "info", "text", "latex", "is_length",
    "N_V", "ell_max", "ell", "ell_x", "ell_z", "d_e", "d_x", "d_z", "d_in", "d_attn", "d_mid", "d_out",
    "d_mlp", "d_f", "H", "n_kv_heads", "L", "L_enc", "L_dec", "ell_gen", "T", "ell_c", "ell_out", "n_steps", "i",
    "d_patch", "n_classes", "n_types", "d_h", "d_a", "k", "n_sent", "patch", "channels", "block", "n_blocks",
    "n_pool",
    "tau", "p_mask", "eta", "N_data", "N_epochs",
]


@dataclass(frozen=True)
class SymbolInfo:
    """How a symbol is written and what it means."""

    name: str       # ASCII, used in code and JSON
    glyph: str      # unicode, used in the text view
    tex: str        # LaTeX
    meaning: str
    kind: str = "size"  # "size", "length" (a sequence length) or "real"


_TABLE = [
    SymbolInfo("N_V", "N_V", r"N_{\mathrm{V}}", "vocabulary size"),
    SymbolInfo("ell_max", "ℓ_max", r"\ell_{\mathrm{max}}", "maximum context length", "length"),
    SymbolInfo("ell", "ℓ", r"\ell", "sequence length", "length"),
    SymbolInfo("ell_x", "ℓ_x", r"\ell_{x}", "length of the primary sequence", "length"),
    SymbolInfo("ell_z", "ℓ_z", r"\ell_{z}", "length of the context sequence", "length"),
    SymbolInfo("T", "T", "T", "number of context tokens (Algorithm 3)", "length"),
    SymbolInfo("ell_gen", "ℓ_gen", r"\ell_{\mathrm{gen}}", "number of generated tokens", "length"),
    SymbolInfo("ell_c", "ℓ_c", r"\ell_{c}", "number of tokens held in the key/value cache", "length"),
    SymbolInfo("ell_out", "ℓ_out", r"\ell_{\mathrm{out}}", "number of tokens returned (known when it runs)",
               "length"),
    SymbolInfo("n_steps", "n_steps", r"n_{\mathrm{steps}}", "number of decoding steps taken (known when it runs)",
               "length"),
    SymbolInfo("i", "i", "i", "the iteration of a generation loop (1, 2, …)"),
    SymbolInfo("d_e", "d_e", r"d_{\mathrm{e}}", "embedding width"),
    SymbolInfo("d_x", "d_x", r"d_{x}", "width of the primary sequence"),
    SymbolInfo("d_z", "d_z", r"d_{z}", "width of the context sequence"),
    SymbolInfo("d_in", "d_in", r"d_{\mathrm{in}}", "input width (Algorithm 3)"),
    SymbolInfo("d_attn", "d_attn", r"d_{\mathrm{attn}}", "query/key width"),
    SymbolInfo("d_mid", "d_mid", r"d_{\mathrm{mid}}", "value width of one head"),
    SymbolInfo("d_out", "d_out", r"d_{\mathrm{out}}", "output width"),
    SymbolInfo("d_mlp", "d_mlp", r"d_{\mathrm{mlp}}", "hidden width of the MLP"),
    SymbolInfo("d_f", "d_f", r"d_{\mathrm{f}}", "width of the final projection (Algorithm 9)"),
    SymbolInfo("d_patch", "d_patch", r"d_{\mathrm{patch}}", "width of a flattened image patch (channels·p²)"),
    SymbolInfo("n_classes", "N_C", r"N_{\mathrm{C}}", "number of classes (ViT)"),
    SymbolInfo("n_types", "N_S", r"N_{\mathrm{S}}", "number of token types, or segments (BERT)"),
    SymbolInfo("H", "H", "H", "number of attention heads"),
    SymbolInfo("d_h", "d_h", r"d_{h}", "width of a recurrent cell's state h"),
    SymbolInfo("d_a", "d_a", r"d_{a}", "hidden width of an additive attention score (Bahdanau et al.'s n')"),
    SymbolInfo("k", "k", "k", "kernel width of a convolution"),
    SymbolInfo("n_sent", "n_s", r"n_{s}", "number of sentences in a document (HAN)", "length"),
    SymbolInfo("patch", "P", "P", "side of a square image patch, in pixels (ViT)"),
    SymbolInfo("channels", "C", "C", "channels of an image (3 for RGB)"),
    SymbolInfo("block", "B", "B", "tokens per key/value block (PagedAttention; vLLM's block size)"),
    SymbolInfo("n_blocks", "n_b", r"n_{b}", "blocks in a sequence's block table"),
    SymbolInfo("n_pool", "N_pool", r"N_{\mathrm{pool}}", "physical key/value blocks in the pool"),
    SymbolInfo("n_kv_heads", "H_kv", r"H_{\mathrm{kv}}", "number of key/value heads"),
    SymbolInfo("L", "L", "L", "number of layers"),
    SymbolInfo("L_enc", "L_enc", r"L_{\mathrm{enc}}", "number of encoder layers"),
    SymbolInfo("L_dec", "L_dec", r"L_{\mathrm{dec}}", "number of decoder layers"),
    SymbolInfo("N_data", "N_data", r"N_{\mathrm{data}}", "number of training sequences"),
    SymbolInfo("N_epochs", "N_epochs", r"N_{\mathrm{epochs}}", "number of passes over the data"),
    SymbolInfo("tau", "τ", r"\tau", "sampling temperature", "real"),
    SymbolInfo("p_mask", "p_mask", r"p_{\mathrm{mask}}", "masking probability", "real"),
    SymbolInfo("eta", "η", r"\eta", "learning rate", "real"),
]
# the parameters of sparse attention patterns (formal.graphs); made on demand by by_name
_PATTERN_TABLE = [
    SymbolInfo("window", "w", "w", "keys per query of a sliding window, the query itself included"),
    SymbolInfo("dilation", "δ", r"\delta", "distance between the keys of a dilated window"),
    SymbolInfo("n_global", "g", "g", "number of global positions (the first g)"),
    SymbolInfo("stride", "s", "s", "stride of a Sparse Transformer pattern (Child et al.'s l)"),
    SymbolInfo("summary", "c", "c", "summary positions per block of the fixed pattern"),
    SymbolInfo("n_random", "r", "r", "random keys per query (BigBird)"),
    SymbolInfo("height", "n_h", r"n_{h}", "rows of a token grid"),
    SymbolInfo("width", "n_w", r"n_{w}", "columns of a token grid"),
    SymbolInfo("swin_window", "M", "M", "side of a Swin window (M×M tokens)"),
    SymbolInfo("shift", "σ", r"\sigma", "offset of Swin's shifted windows"),
    *(SymbolInfo(f"L_{i}", f"L_{i}", f"L_{{{i}}}", f"blocks in stage {i} of a Swin Transformer") for i in range(1, 5)),
    SymbolInfo("n_edges", "|E|", r"|E|", "edges of an attention pattern: the score computations of one head"),
]
_INFO = {row.name: row for row in _TABLE + _PATTERN_TABLE}


@lru_cache(maxsize=None)
def dim(name: str) -> sp.Symbol:
    """The positive-integer size symbol called ``name`` (one object per name)."""
    if not name.isidentifier():
        raise ConfigError(f"a dimension name must be an identifier, got {name!r}")
    return sp.Symbol(name, positive=True, integer=True)


@lru_cache(maxsize=None)
def real(name: str) -> sp.Symbol:
    """The positive real symbol called ``name`` (τ, η, p_mask)."""
    return sp.Symbol(name, positive=True)


def info(symbol: sp.Symbol) -> SymbolInfo:
    """The :class:`SymbolInfo` of ``symbol`` (a plain one for names the paper does not use)."""
    name = str(symbol)
    return _INFO.get(name) or SymbolInfo(name, name, name.replace("_", r"\_"), name)


def is_length(symbol: sp.Symbol) -> bool:
    """Whether ``symbol`` is a sequence length (ℓ, ℓ_x, ℓ_z, T, ...)."""
    return info(symbol).kind == "length"


def _expr(expr) -> sp.Expr:
    # Only numbers and sympy objects: text is never parsed (sympify would evaluate it).
    if isinstance(expr, (int, sp.Basic)):
        return sp.sympify(expr)
    raise TypeError(f"expected a sympy expression or an int, got {type(expr).__name__}")


def text(expr) -> str:
    """``expr`` in the text view's notation: paper glyphs, ``·`` for products, ``^`` for powers."""
    expr = _expr(expr)
    glyphs = {s: sp.Symbol(info(s).glyph) for s in expr.free_symbols}
    return sp.sstr(expr.xreplace(glyphs)).replace("**", "^").replace("*", "·")


def latex(expr) -> str:
    """``expr`` as LaTeX with the paper's symbols."""
    expr = _expr(expr)
    return sp.latex(expr, symbol_names={s: info(s).tex for s in expr.free_symbols}, mul_symbol="dot")


def by_name(name: str) -> sp.Symbol:
    """The symbol called ``name``: a real one for τ, η, p_mask, a size otherwise."""
    return real(name) if info(sp.Symbol(name)).kind == "real" else dim(name)


def _make(row: SymbolInfo) -> sp.Symbol:
    return by_name(row.name)


(N_V, ell_max, ell, ell_x, ell_z, T, ell_gen, ell_c, ell_out, n_steps, i, d_e, d_x, d_z, d_in, d_attn, d_mid,
 d_out, d_mlp, d_f, d_patch, n_classes, n_types, H, d_h, d_a, k, n_sent, patch, channels, block, n_blocks, n_pool,
 n_kv_heads, L, L_enc, L_dec, N_data, N_epochs, tau, p_mask, eta) = (_make(row) for row in _TABLE)
