"""Attention (Algorithm 4) gone wrong in what ``conform`` checks before the spec's properties — the output's
shape and type, that the call returns, the signature — and a name that is not a function; and the correct
attention with the paper's signature, every bias required.  Each builds on the catalogue's correct
implementation of the defaults."""

from reference.catalogue import FACTORIES

_correct = FACTORIES["attention"]()


def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct, with the biases required: a variant without biases cannot call it."""
    return _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def attention_wrong_shape(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return _correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z).T


def attention_raises(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    raise ValueError("not implemented yet")


def attention_wrong_signature(X, W_query, W_key, W_value):
    return X


def attention_returns_text(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return "attention"


NOT_A_FUNCTION = 3
