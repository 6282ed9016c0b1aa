"""Show, Attend and Tell as the common PyTorch image-captioning tutorial writes it, ported line for line to
numpy, and the adapter that lets ``conform`` call it.

The tutorial's decoder is not Xu et al.'s model: f_att is ``full_att(relu(encoder_att(a) + decoder_att(h)))``
(every ``nn.Linear`` with a bias), the gate ``sigmoid(f_beta(h))`` has the encoder's width, ``init_h`` and
``init_c`` are linear maps of the mean encoder output, the word scores are ``fc(dropout(h))`` and the cell is
``nn.LSTMCell`` (two biases, gates packed i, f, g, o).  Its encoder output is the channel-last grid
``(enc_size, enc_size, D)`` flattened by ``view(-1, D)``: row-major.  It is the spec's variant
:data:`TUTORIAL_OPTIONS`, checked in the rows layout::

    formal-transformers conform reference/catalogue/captioning_tutorial.py:show_attend_tell \\
        --algorithm show_attend_tell --layout rows -o inputs=grid -o gate=vector -o activation=relu \\
        -o score_bias=true -o init=linear -o output=state -o bias=double

This module declares no catalogue entries (the catalogue runs the column layout); a test runs it.
"""

from __future__ import annotations

import numpy as np

from .numerics import softmax
from .recurrent import TORCH_ORDER, sigmoid

__all__ = ["TUTORIAL_OPTIONS", "decoder", "state_dict", "show_attend_tell"]

#: The spec's options that make it the tutorial's model.
TUTORIAL_OPTIONS = {"inputs": "grid", "gate": "vector", "activation": "relu", "score_bias": True,
                    "init": "linear", "output": "state", "bias": "double"}


def _linear(x, layer):
    """``nn.Linear``: ``x Wᵀ + b``."""
    return x @ layer["weight"].T + layer["bias"]


def _attention(encoder_out, decoder_hidden, m):
    """The tutorial's ``Attention.forward``: encoder_out (L, D), decoder_hidden (d_h,) ↦ (awe (D,), α (L,))."""
    att1 = _linear(encoder_out, m["encoder_att"])                                   # (L, d_a)
    att2 = _linear(decoder_hidden, m["decoder_att"])                                # (d_a,)
    att = _linear(np.maximum(att1 + att2[None, :], 0.0), m["full_att"])[:, 0]       # (L,)
    alpha = softmax(att)
    return (encoder_out * alpha[:, None]).sum(axis=0), alpha


def _lstm_cell(x, h, c, m):
    """``nn.LSTMCell``: the packed gates i, f, g, o of ``x W_ihᵀ + b_ih + h W_hhᵀ + b_hh``."""
    gates = x @ m["weight_ih"].T + m["bias_ih"] + h @ m["weight_hh"].T + m["bias_hh"]
    i, f, g, o = np.split(gates, 4)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


def decoder(encoder_out, captions, m):
    """The tutorial's ``DecoderWithAttention.forward`` for one image and its caption (teacher forcing, dropout
    off): the grid (enc, enc, D) and the words (ℓ,) ↦ (predictions (ℓ, N_V), the word scores; alphas (ℓ, L))."""
    encoder_out = encoder_out.reshape(-1, encoder_out.shape[-1])                     # view(batch, -1, D)
    embeddings = m["embedding"]["weight"][captions]                                 # (ℓ, d_e)
    mean_encoder_out = encoder_out.mean(axis=0)
    h, c = _linear(mean_encoder_out, m["init_h"]), _linear(mean_encoder_out, m["init_c"])
    predictions, alphas = [], []
    for t in range(len(captions)):
        attention_weighted_encoding, alpha = _attention(encoder_out, h, m)
        gate = sigmoid(_linear(h, m["f_beta"]))
        attention_weighted_encoding = gate * attention_weighted_encoding
        h, c = _lstm_cell(np.concatenate([embeddings[t], attention_weighted_encoding]), h, c, m["decode_step"])
        predictions.append(_linear(h, m["fc"]))
        alphas.append(alpha)
    return np.stack(predictions), np.stack(alphas)


def _layer(p, weight, bias):
    return {"weight": p[weight], "bias": p[bias]}


def state_dict(p):
    """The tutorial's modules' weights from the spec's parameters: renamed, ``nn.Embedding``'s table stored
    a word per row, and the LSTM's gates packed in torch's order — what loading its ``state_dict`` does."""
    packed = {f"{kind}_{side}": np.concatenate([p[f"{name}{spec}{g}"] for g in TORCH_ORDER])
              for kind, name in (("weight", "W_"), ("bias", "b_")) for side, spec in (("ih", "x"), ("hh", "h"))}
    return {"embedding": {"weight": p["E"].T},
            "encoder_att": _layer(p, "U_a", "b_k"), "decoder_att": _layer(p, "W_a", "b_a"),
            "full_att": {"weight": p["v_a"][None, :], "bias": np.zeros(1)},
            "init_h": _layer(p, "W_init_h", "b_init_h"), "init_c": _layer(p, "W_init_c", "b_init_c"),
            "f_beta": _layer(p, "W_beta", "b_beta"), "fc": _layer(p, "W_out", "b_out"),
            "decode_step": {"weight_ih": packed["weight_ih"], "weight_hh": packed["weight_hh"],
                            "bias_ih": packed["bias_ih"], "bias_hh": packed["bias_hh"]}}


def show_attend_tell(F, x, params):
    """What ``conform`` calls: the tutorial's decoder on the spec's parameters, its word scores turned into
    the distributions P (ℓ×N_V, rows) that its cross-entropy loss reads."""
    predictions, alphas = decoder(F, x, state_dict(params))
    return softmax(predictions.T).T, alphas
