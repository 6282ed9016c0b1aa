"""The torch reference of the convolutions (reference/model/convolution.py) against the spec's numpy execution, and
torch.nn.Conv1d — an implementation nobody here wrote — read into the spec's names by
``reference.model.convolution.from_conv1d``: equal in float64 (≤ 1e-10 relative) for any stride, padding, dilation
and bias, the options explaining every difference."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from formal.algorithms.convolution import conv1d, graph_conv
from formal.core.symbols import d_in, d_out, k
from formal.errors import ConfigError
from reference.model.convolution import from_conv1d, run_conv1d, run_graph_conv
from reference.model.execute import Call
from tests.reference.model.torch_modules import randomise
from tests.strategies.cases import SEED
from tests.strategies.convolution import conv1d_cases, geometries, graph_conv_cases, shortest
from tests.tiers import slow

FLOAT64 = 1e-10

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")


def _close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=FLOAT64, atol=FLOAT64 * max(1.0, np.max(np.abs(expected))))


@given(case=conv1d_cases())
def test_conv1d_reference_equals_the_spec(case):
    """reference.model.convolution.conv1d (torch.nn.functional.conv1d on the spec's W, k×d_out×d_in) = the spec's
    numpy execution, every stride, padding, dilation, bias and activation."""
    _close(run_conv1d(Call(case.algorithm, case.kwargs, device="cpu")), case.algorithm(**case.kwargs))


@given(case=graph_conv_cases())
def test_graph_conv_reference_equals_the_spec(case):
    """reference.model.convolution.graph_conv (plain tensor ops, a dense normalised adjacency) = the spec's numpy
    execution, every norm (sum, mean, gcn), bias and activation, with or without an adjacency."""
    _close(run_graph_conv(Call(case.algorithm, case.kwargs, device="cpu")), case.algorithm(**case.kwargs))



@given(geometry=geometries(), sizes=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)),
       bias=st.booleans(), slack=st.integers(0, 8), batch=st.integers(1, 3), seed=SEED,
       spelled=st.sampled_from(["int", "tuple", "valid"]))
def test_torch_conv1d_read_by_from_conv1d_equals_the_spec(geometry, sizes, bias, slack, batch, seed, spelled):
    """torch.nn.Conv1d(d_in, d_out, k, stride, padding, dilation, bias) — built by torch, read by from_conv1d —
    equals conv1d.variant(**options) on every sequence of a batch, in float64 (torch.nn.Conv1d docs)."""
    stride, padding, dilation = geometry
    n_in, n_out, kernel = sizes
    if spelled == "valid" and padding == 0:
        padding_arg = "valid"
    elif spelled == "tuple" and padding != "same":
        padding_arg = (padding,)
    else:
        padding_arg = padding
    module = randomise(torch.nn.Conv1d(n_in, n_out, kernel, stride=stride, padding=padding_arg,
                                        dilation=dilation, bias=bias), seed)
    params, options = from_conv1d(module)
    assert options == {"stride": stride, "padding": padding, "dilation": dilation, "bias": bias}
    ell = shortest(kernel, padding, dilation) + slack
    X = torch.randn(batch, n_in, ell, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    with torch.no_grad():
        expected = module(X).numpy()                                   # (B, d_out, ℓ_out)
    algorithm = conv1d.variant(**options)
    for b in range(batch):
        _close(algorithm(X=X[b].numpy(), **params), expected[b])


def test_conv1d_8_16_3_is_read_with_its_400_parameters():
    """torch.nn.Conv1d(8, 16, 3) has 400 parameters; read, they are the spec's W
    (3×16×8) and b (16), and the derived count agrees."""
    params, options = from_conv1d(torch.nn.Conv1d(8, 16, 3))
    assert params["W"].shape == (3, 16, 8) and params["b"].shape == (16,)
    assert sum(p.size for p in params.values()) == 400
    assert conv1d.variant(**options).param_count().xreplace({d_in: 8, d_out: 16, k: 3}) == 400


@pytest.mark.parametrize("module, message", [
    (torch.nn.Conv1d(4, 4, 3, groups=2), "Conv1d(groups=2) has no counterpart"),
    (torch.nn.Conv1d(4, 4, 3, groups=4), "Conv1d(groups=4) has no counterpart"),
    (torch.nn.Conv1d(2, 3, 3, padding=1, padding_mode="reflect"), "Conv1d(padding_mode='reflect') has no counterpart"),
    (torch.nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular"), "Conv1d(padding_mode='circular')"),
    (torch.nn.Conv2d(2, 3, 3), "Conv2d is not a torch.nn.Conv1d"),
])
def test_from_conv1d_refuses_what_the_spec_lacks(module, message):
    """A grouped convolution or padding other than zeros is refused with a ConfigError naming the value."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        from_conv1d(module)


@pytest.mark.parametrize("norm", ["gcn", "sum", "mean"])
@pytest.mark.parametrize("seed", range(6))
def test_pyg_graph_convolutions_equal_the_spec(norm, seed):
    """PyTorch Geometric, nobody here wrote: ``GCNConv`` (Kipf & Welling's D̂^{-1/2}(A + I)D̂^{-1/2}, self-loops
    added where missing, in-degrees) is ``graph_conv(norm="gcn")``; ``SimpleConv(aggr="sum"|"mean")`` followed by
    the same linear map is ``norm="sum"|"mean"`` (an isolated node gets 0).  Edges j → i are the spec's
    A[j, i] = 1, PyG's ``edge_index`` columns (j, i)."""
    pyg = pytest.importorskip("torch_geometric.nn")
    rng = np.random.default_rng(seed)
    n, d_in, d_out = int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    A = rng.random((n, n)) < 0.4
    if seed % 2:
        A[:, rng.integers(n)] = False                                     # a node with no in-neighbour
    X = rng.normal(size=(d_in, n))
    W, b = rng.normal(size=(d_out, d_in)), rng.normal(size=d_out)
    edges = torch.tensor(np.argwhere(A).T.copy(), dtype=torch.long).reshape(2, -1)   # (source j, target i)
    x = torch.tensor(X.T.copy())
    with torch.no_grad():
        if norm == "gcn":
            layer = pyg.GCNConv(d_in, d_out).double()
            layer.lin.weight.copy_(torch.tensor(W))
            layer.bias.copy_(torch.tensor(b))
            want = layer(x, edges).numpy().T
        else:
            aggregated = pyg.SimpleConv(aggr=norm)(x, edges)             # Σ (or mean) of x_j over j → i
            want = (aggregated @ torch.tensor(W).T + torch.tensor(b)).numpy().T
    got = graph_conv.variant(norm=norm)(X=X, A=A.astype(float), W=W, b=b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@slow
def test_conv1d_in_bfloat16_on_one_thread_survives_the_padding_torch_crashes_on():
    """torch 2.13's CPU bfloat16 convolution, padding by itself, ends the process on one thread (the
    configuration below: stride 2, padding 1, dilation 2 over one token), as verify's workers run it; the
    reference pads first, so the configuration runs and equals the spec within the bfloat16 tolerance.  In a
    subprocess, so that a crash fails this test instead of ending the test run."""
    import subprocess
    import sys
    code = """
import numpy as np, torch
torch.set_num_threads(1)
from formal.algorithms.convolution import conv1d
from reference.model.execute import execute
algorithm = conv1d.variant(stride=2, padding=1, dilation=2)
rng = np.random.default_rng(0)
args = dict(X=rng.normal(size=(2, 1)), W=rng.normal(size=(1, 2, 2)), b=rng.normal(size=2))
got = execute(algorithm, dtype="bfloat16", device="cpu", **args)
want = algorithm(**args)
assert got.shape == want.shape and np.abs(got - want).max() < 0.05 * max(1, np.abs(want).max()), (got, want)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-2000:])
