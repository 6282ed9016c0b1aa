"""Multi-head attention (Algorithm 5) written the way widely copied GPT code writes it, for
`formal-transformers conform`: one model width n_embd, a head width computed inside as n_embd // n_head, the
heads fused into one n_embd×n_embd matrix per projection, and the code's own shape asserts.  So it
implements Algorithm 5 only where d_attn = d_mid = d_x/H and d_z = d_out = d_x — sizes the spec lets vary
on their own.  Say so with --size, and conform draws only examples that meet the ties:

    formal-transformers conform examples/gpt_tied.py:mhattention --algorithm mhattention \\
        --size d_attn=d_x/H --size d_mid=d_x/H --size d_z=d_x --size d_out=d_x

Without the --size options its own asserts fail on the first example whose sizes are not tied (a FAIL of
`runs` that says nothing about the attention).  Arrays arrive in the paper's layout, one column per token;
the mask is an explicit 0/1 array ℓ_z×ℓ_x, and a query with no admitted key returns zeros (the spec's default).
"""

import numpy as np


def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, Z=None):
    Z = X if Z is None else Z
    n_embd, n_head = X.shape[0], W_q.shape[0]
    assert n_embd % n_head == 0, "n_embd must be divisible by n_head"
    head = n_embd // n_head
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        assert W.shape == (n_head, head, n_embd), f"{name} is {W.shape}, not (n_head, n_embd // n_head, n_embd)"
    assert Z.shape[0] == n_embd and W_o.shape == (n_embd, n_embd), "one width n_embd throughout"
    c_q, c_k, c_v = (W.reshape(n_embd, n_embd) for W in (W_q, W_k, W_v))   # the heads fused, as GPT stores them
    q = (c_q @ X + b_q.reshape(-1, 1)).reshape(n_head, head, -1)           # n_head×head×ℓ_x
    k = (c_k @ Z + b_k.reshape(-1, 1)).reshape(n_head, head, -1)           # n_head×head×ℓ_z
    v = (c_v @ Z + b_v.reshape(-1, 1)).reshape(n_head, head, -1)
    att = np.einsum("hdz,hdx->hzx", k, q) / np.sqrt(head)                  # scores, ℓ_z×ℓ_x per head
    admitted = mask == 1
    seen = admitted.any(axis=0)                                            # queries with an admitted key
    att = np.where(admitted, att, -np.inf)
    att = att - np.where(seen, att.max(axis=1, keepdims=True, where=admitted, initial=-np.inf), 0.0)
    att = np.where(admitted, np.exp(att), 0.0)
    att = att / np.where(seen, att.sum(axis=1, keepdims=True), 1.0)         # softmax over the keys
    y = np.einsum("hdz,hzx->hdx", v, att).reshape(n_embd, -1)              # heads side by side: n_embd×ℓ_x
    return c_proj(y, W_o, b_o)


def c_proj(y, W_o, b_o):
    """The output projection."""
    return W_o @ y + b_o[:, None]
