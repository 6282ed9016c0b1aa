"""The recurrent objects against torch's own modules, nobody here wrote: ``torch.nn.RNN``, ``GRU`` and ``LSTM``
(any layer count, one or both directions, with or without biases) and their cells, read into the spec's
names by :func:`reference.model.third_party.from_torch_rnn`, equal the spec's numpy execution in float64; their
parameter counts equal ``numel``."""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from formal import algorithms
from formal.core.symbols import L, d_h, d_x
from formal.errors import ConfigError
from reference.model import third_party

MODULES = {"rnn": torch.nn.RNN, "gru": torch.nn.GRU, "lstm": torch.nn.LSTM}
CELLS = {"rnn": torch.nn.RNNCell, "gru": torch.nn.GRUCell, "lstm": torch.nn.LSTMCell}


@st.composite
def torch_stacks(draw):
    kind = draw(st.sampled_from(sorted(MODULES)))
    extra = {"nonlinearity": draw(st.sampled_from(["tanh", "relu"]))} if kind == "rnn" else {}
    sizes = {"d_x": draw(st.integers(1, 6)), "d_h": draw(st.integers(1, 6)), "L": draw(st.integers(1, 3)),
             "ell": draw(st.integers(1, 7))}
    torch.manual_seed(draw(st.integers(0, 2**16)))
    module = MODULES[kind](sizes["d_x"], sizes["d_h"], num_layers=sizes["L"], bias=draw(st.booleans()),
                           bidirectional=draw(st.booleans()), batch_first=True, **extra).double()
    return module, sizes


@given(torch_stacks(), st.integers(0, 2**16))
def test_torch_recurrent_modules_equal_the_spec_stack(case, seed):
    """torch.nn.RNN/GRU/LSTM = the spec's ``rnn`` with two biases per gate (and the GRU's reset after the
    recurrent product): the outputs agree to float64 rounding, the parameter counts exactly."""
    module, sizes = case
    params, options = third_party.from_torch_rnn(module)
    stack = algorithms.get("rnn", **options)
    X = np.random.default_rng(seed).normal(size=(sizes["d_x"], sizes["ell"]))
    with torch.no_grad():
        want = module(torch.tensor(X.T[None]))[0][0].numpy().T
    np.testing.assert_allclose(stack(X=X, **params), want, rtol=0, atol=1e-12)
    count = stack.param_count().xreplace({d_x: sizes["d_x"], d_h: sizes["d_h"], L: sizes["L"]})
    assert count == sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("kind", sorted(CELLS))
@pytest.mark.parametrize("bias", [True, False])
def test_torch_cells_equal_the_spec_cells(kind, bias):
    """torch.nn.RNNCell/GRUCell/LSTMCell = rnn_cell, gru_cell, lstm_cell with torch's conventions."""
    torch.manual_seed(0)
    module = CELLS[kind](5, 7, bias=bias).double()
    params, options = third_party.from_torch_rnn(module)
    cell = algorithms.get(f"{kind}_cell", **options)
    rng = np.random.default_rng(1)
    x, h, c = rng.normal(size=5), rng.normal(size=7), rng.normal(size=7)
    with torch.no_grad():
        if kind == "lstm":
            want = tuple(t[0].numpy() for t in module(torch.tensor(x[None]), (torch.tensor(h[None]),
                                                                             torch.tensor(c[None]))))
            got = cell(x=x, h=h, c=c, **params)
        else:
            want, got = (module(torch.tensor(x[None]), torch.tensor(h[None]))[0].numpy(),), (cell(x=x, h=h, **params),)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
    assert cell.param_count().xreplace({d_x: 5, d_h: 7}) == sum(p.numel() for p in module.parameters())


def test_torch_modules_have_the_counts_the_objects_derive():
    """numel of torch's modules at d_x = 10, d_h = 20: RNN 640, GRU 1920, LSTM 2560; a 2-layer
    bidirectional LSTM 15040 — the figures tests/formal/test_recurrent.py reads from the objects."""
    counts = {k: sum(p.numel() for p in m(10, 20).parameters()) for k, m in MODULES.items()}
    assert counts == {"rnn": 640, "gru": 1920, "lstm": 2560}
    assert sum(p.numel() for p in torch.nn.LSTM(10, 20, num_layers=2, bidirectional=True).parameters()) == 15040


@pytest.mark.parametrize("module, message", [
    (torch.nn.LSTM(3, 4, proj_size=2), "proj_size=2"),
    (torch.nn.Linear(3, 4), "Linear is not a torch recurrent module"),
])
def test_modules_without_a_counterpart_are_refused(module, message):
    with pytest.raises(ConfigError, match=message):
        third_party.from_torch_rnn(module)


def test_show_attend_tell_coco_preset_counts_the_equations_modules():
    """Xu et al. 2015 built from torch modules, one per term of §3.1.2 (eqs. 1–7, the deep output and f_β):
    E, f_init,h and f_init,c (one affine layer each), f_att's W_a, U_a and v_a (no biases: a bias on the
    score is cancelled by the softmax), the gate's w_β and b_β, an LSTM cell on [E y; ẑ] with one bias per
    gate (torch's LSTMCell adds two: its bias_hh is left out), and L_h, L_z, L_o.  Their ``numel`` is the
    preset's derived count; the preset's sizes are the authors' MS COCO script's."""
    from formal.models import presets
    preset = presets.get("show-attend-tell-coco")
    s = preset.sizes
    D, L_ = s["d_z"], s["height"] * s["width"]
    nn = torch.nn
    with torch.device("meta"):
        lstm = nn.LSTMCell(s["d_e"] + D, s["d_h"])
        modules = [nn.Embedding(s["N_V"], s["d_e"]), nn.Linear(D, s["d_h"]), nn.Linear(D, s["d_h"]),
                   nn.Linear(s["d_h"], s["d_a"], bias=False), nn.Linear(D, s["d_a"], bias=False),
                   nn.Linear(s["d_a"], 1, bias=False), nn.Linear(s["d_h"], 1), lstm,
                   nn.Linear(s["d_h"], s["d_e"], bias=False), nn.Linear(D, s["d_e"], bias=False),
                   nn.Linear(s["d_e"], s["N_V"], bias=False)]
    count = sum(p.numel() for m in modules for p in m.parameters()) - lstm.bias_hh.numel()
    assert L_ == 196 and D == 512
    for caption in (1, 16, 50):      # the count does not depend on the caption's length
        assert preset.evaluate(seq_len=caption)["params"] == count
