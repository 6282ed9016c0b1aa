"""Code written the way widely copied implementations write it, for ``conform`` to load by path — each with its
own idiom (sizes computed inside, its own asserts, its own activation), none naming an option of the spec —
and copies with one bug planted.  Arrays arrive in the paper's layout, one column per token."""

import math

import numpy as np


def _new_gelu(x):
    """GPT-2's ``gelu_new``: the tanh approximation."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _gpt_mlp(X, W_mlp1, b_mlp1, W_mlp2, b_mlp2, *, bias_after=False):
    n_embd = X.shape[0]
    assert W_mlp1.shape == (4 * n_embd, n_embd), f"c_fc is {W_mlp1.shape}, not (4 * n_embd, n_embd)"
    assert W_mlp2.shape == (n_embd, 4 * n_embd), f"c_proj is {W_mlp2.shape}, not (n_embd, 4 * n_embd)"
    if bias_after:
        h = _new_gelu(W_mlp1 @ X) + b_mlp1[:, None]
    else:
        h = _new_gelu(W_mlp1 @ X + b_mlp1[:, None])                  # c_fc, then the activation
    return W_mlp2 @ h + b_mlp2[:, None]                                # c_proj


def gpt_mlp(X, W_mlp1, b_mlp1, W_mlp2, b_mlp2):
    """GPT-2's MLP block: a hidden width of 4·n_embd (asserted), GELU's tanh approximation."""
    return _gpt_mlp(X, W_mlp1, b_mlp1, W_mlp2, b_mlp2)


def gpt_mlp_bias_after_activation(X, W_mlp1, b_mlp1, W_mlp2, b_mlp2):
    """A planted bug: c_fc's bias added after the activation."""
    return _gpt_mlp(X, W_mlp1, b_mlp1, W_mlp2, b_mlp2, bias_after=True)
