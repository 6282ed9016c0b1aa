"""formal-transformers: Phuong & Hutter's *Formal Algorithms for Transformers* as executable objects.

Each algorithm is written once, as data at the level of the paper's pseudocode; its shapes, costs,
numeric execution and rendering are derived from that one definition.

>>> import formal
>>> formal.attention.output_shape
(d_out, ell_x)
>>> formal.attention.cost("matmul").evaluate({"d_x": 8, "d_z": 8, "ell_x": 5, "ell_z": 5, "d_attn": 4, "d_out": 8})
{'params': 144, 'flops': 1880, 'memory': 300, 'depth': 6}
"""

from . import masks, symbols
from .algorithm import Algorithm
from .algorithms import (ALGORITHMS, attention, get, layer_norm, mhattention, positional_embedding,
                         single_query_attention, token_embedding, unembedding)
from .asymptotics import big_theta, leading_term
from .cost import CONVENTIONS, Cost
from .errors import ConfigError, DomainError, FormalError, ShapeError

__version__ = "0.1.0"

__all__ = ["Algorithm", "ALGORITHMS", "get", "token_embedding", "positional_embedding",
           "single_query_attention", "attention", "mhattention", "layer_norm", "unembedding", "Cost",
           "CONVENTIONS", "leading_term", "big_theta", "FormalError", "ShapeError", "ConfigError", "DomainError",
           "masks", "symbols", "__version__"]
