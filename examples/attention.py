"""Algorithm 4 of Phuong & Hutter, written as the paper writes it, for `formal-transformers conform`.

    formal-transformers conform examples/attention.py:attention --algorithm attention

Arrays arrive in the paper's layout, one column per token: X is d_x×ℓ_x, Z is d_z×ℓ_z, and the mask is an
explicit 0/1 array ℓ_z×ℓ_x (Mask[t_z, t_x] = 1 where token t_x may attend to token t_z).  In self-attention
examples Z is X.  A query with no admitted key returns zeros (the spec's default, `-o empty=zero`).
"""

import numpy as np


def attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
    Q = W_q @ X + b_q[:, None]                         # d_attn×ℓ_x  (query)
    K = W_k @ Z + b_k[:, None]                         # d_attn×ℓ_z  (key)
    V = W_v @ Z + b_v[:, None]                         # d_out×ℓ_z   (value)
    S = K.T @ Q / np.sqrt(Q.shape[0])                  # ℓ_z×ℓ_x     (score)
    S = np.where(mask == 1, S, -np.inf)
    seen = mask.any(axis=0)                            # queries with at least one admitted key
    S = S - np.where(seen, S.max(axis=0, where=mask == 1, initial=-np.inf), 0.0)
    A = np.where(mask == 1, np.exp(S), 0.0)            # softmax over the keys, column by column
    A = A / np.where(seen, A.sum(axis=0), 1.0)
    return V @ A                                       # d_out×ℓ_x
