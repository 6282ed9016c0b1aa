"""Algorithm 4 in torch with one row per token, as most code writes it, for `formal-transformers conform`.

    formal-transformers conform examples/attention_rows_torch.py:attention --algorithm attention --layout rows

With `--layout rows` the inputs arrive transposed: X is ℓ_x×d_x, Z is ℓ_z×d_z, the mask ℓ_x×ℓ_z
(mask[t_x, t_z] = 1 where t_x may attend to t_z); the weights keep the spec's shapes (W_q is d_attn×d_x).
Z has a default here, so self-attention examples leave it out.  The function may return a torch tensor on
any device; it is given `device=` because it takes one.
"""

import math

import torch


def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None, device="cpu"):
    t = {k: torch.as_tensor(v, device=device) for k, v in dict(W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k,
                                                                b_v=b_v).items()}
    X = torch.as_tensor(X, device=device)
    Z = X if Z is None else torch.as_tensor(Z, device=device)
    Q, K, V = X @ t["W_q"].T + t["b_q"], Z @ t["W_k"].T + t["b_k"], Z @ t["W_v"].T + t["b_v"]
    admitted = torch.as_tensor(mask, device=device) == 1           # ℓ_x×ℓ_z
    S = (Q @ K.T / math.sqrt(Q.shape[1])).masked_fill(~admitted, -math.inf)
    empty = ~admitted.any(dim=1, keepdim=True)                     # queries with no admitted key
    A = torch.softmax(S.masked_fill(empty, 0.0), dim=1).masked_fill(empty, 0.0)
    return A @ V                                                   # ℓ_x×d_out
