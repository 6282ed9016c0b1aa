"""A module that raises KeyboardInterrupt while it is imported."""
raise KeyboardInterrupt


def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return X
