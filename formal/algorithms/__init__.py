"""The paper's algorithms as objects, one module per section of the paper, and the systems the lecture notes
teach beside them (recurrent cells and layers), one module per family.

``ALGORITHMS`` maps each registry name to the default object; :func:`get` builds a variant.
"""

from __future__ import annotations

from ..errors import ConfigError, shown
from .architectures import dtransformer, edtransformer, etransformer
from .attention import attention, mhattention, single_query_attention
from .embedding import positional_embedding, token_embedding
from .inference import dinference, edinference
from .kv_cache import kv_dtransformer, kv_mhattention
from .paged import paged_mhattention
from .normalization import layer_norm
from .recurrent import gru_cell, lstm_cell, rnn, rnn_cell, rnn_layer
from .seq2seq import seq2seq
from .captioning import show_attend_tell, show_attend_tell_loss
from .hierarchical import han
from .convolution import conv1d, graph_conv
from .pooling import attention_pooling
from .training import dloss, dtraining, edloss, edtraining, eloss, etraining
from .unembedding import unembedding
from .vision import patch_merging, swin, swin_block, swin_stage, window_mhattention

__all__ = ["ALGORITHMS", "get", "token_embedding", "positional_embedding", "single_query_attention",
           "attention", "mhattention", "layer_norm", "unembedding", "edtransformer", "etransformer", "dtransformer",
           "edtraining", "etraining", "dtraining", "edloss", "eloss", "dloss", "dinference", "edinference",
           "kv_mhattention", "kv_dtransformer", "rnn_cell", "gru_cell", "lstm_cell", "rnn_layer", "rnn",
           "seq2seq", "show_attend_tell", "show_attend_tell_loss", "han", "conv1d", "graph_conv",
           "attention_pooling", "paged_mhattention", "window_mhattention", "swin_block", "patch_merging",
           "swin_stage", "swin"]

#: Registry name → algorithm object with default options, in the paper's order (variants after the
#: algorithm they vary), then the systems outside the paper.
ALGORITHMS = {a.name: a for a in (
    token_embedding, positional_embedding, single_query_attention, attention, mhattention, kv_mhattention,
    layer_norm, unembedding, edtransformer, etransformer, dtransformer, kv_dtransformer, edloss, edtraining,
    eloss, etraining, dloss, dtraining, dinference, edinference,
    rnn_cell, gru_cell, lstm_cell, rnn_layer, rnn, seq2seq, show_attend_tell, show_attend_tell_loss, han,
    conv1d, graph_conv, attention_pooling, paged_mhattention, window_mhattention, swin_block, patch_merging,
    swin_stage, swin)}


def get(name: str, **options):
    """The algorithm called ``name``, built with ``options`` (``get("mhattention", n_kv_heads=2)``)."""
    try:
        algorithm = ALGORITHMS[name]
    except KeyError:
        raise ConfigError(f"unknown algorithm {shown(name)}; known: {', '.join(ALGORITHMS)}") from None
    return algorithm.variant(**options) if options else algorithm
