"""The torch reference of the graph attention layer (reference/model/graph_attention.py) against the spec's numpy
execution, and PyTorch Geometric's ``GATConv`` and ``GATv2Conv`` — implementations nobody here wrote — read into
the spec's names by ``reference.model.graph_attention.from_pyg``: equal in float64 for both versions, concatenated
and averaged heads, with and without self-loops, and a node without neighbours."""

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from formal.algorithms.graph_attention import gat
from formal.core.symbols import H as H_, d_in as d_in_, d_out as d_out_, ell as ell_
from formal.errors import ConfigError
from formal.tools.cli import main
from reference.model.execute import Call
from reference.model.graph_attention import from_pyg, run_gat

FLOAT64 = 1e-10

VARIANTS = [dict(version=v, heads=h, self_loops=s, bias=b)
            for v, h, s, b in itertools.product((1, 2), ("concat", "mean"), (True, False), (True, False))]


def _close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=FLOAT64, atol=FLOAT64 * max(1.0, np.max(np.abs(expected))))


def _graph(rng, n, *, isolated=True):
    """A random directed adjacency (A[j, i] = 1 for j → i), with one node that has no in-edge."""
    A = rng.random((n, n)) < 0.4
    if isolated:
        A[:, rng.integers(n)] = False
    return A


def _arguments(algorithm, rng, n, d_in, d_out, H):
    """Random inputs and parameters for ``algorithm``, the sizes bound to n nodes, d_in, d_out and H heads."""
    sizes = {H_: H, d_in_: d_in, d_out_: d_out, ell_: n}
    args = {"X": rng.normal(size=(d_in, n)), "A": _graph(rng, n).astype(float)}
    for spec in algorithm.params:
        shape = tuple(int(dim.subs(sizes)) for dim in spec.shape)
        args[spec.name] = rng.normal(size=shape)
    return args


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("seed", range(3))
def test_gat_reference_equals_the_spec(options, seed):
    """reference.model.graph_attention.gat (dense torch: every pair scored, masked, softmax over the sources) = the
    spec's numpy execution, every version, head combination, self-loop and bias option, with a node that has no
    in-edge (its output b alone without self-loops)."""
    rng = np.random.default_rng(seed)
    algorithm = gat.variant(**options, slope=(0.2, 0.01, 0.3)[seed])
    args = _arguments(algorithm, rng, int(rng.integers(2, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 4)),
                      int(rng.integers(1, 4)))
    _close(run_gat(Call(algorithm, args, device="cpu")), algorithm(**args))


def _pyg_layer(pyg, version, d_in, d_out, H, *, concat, self_loops, bias, slope, rng):
    """A PyG GATConv (version 1) or GATv2Conv (version 2) in float64, every parameter random (PyG starts its
    bias at 0, which would hide a bias read wrongly)."""
    cls = pyg.GATConv if version == 1 else pyg.GATv2Conv
    layer = cls(d_in, d_out, heads=H, concat=concat, negative_slope=slope, add_self_loops=self_loops,
                bias=bias).double().eval()
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(torch.tensor(rng.normal(size=tuple(parameter.shape))))
    return layer


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize("self_loops", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_pyg_gat_layers_equal_the_spec(version, concat, self_loops, seed):
    """torch_geometric.nn.GATConv (Veličković et al.) and GATv2Conv(share_weights=False) (Brody et al.), built
    by PyG with random weights and read by from_pyg, equal gat.variant(**options) in float64.  Edges j → i are
    the spec's A[j, i] = 1, PyG's edge_index columns (j, i); a node with no in-edge gets b alone (PyG's sum over
    no edges is 0) when the self-loops are off."""
    pyg = pytest.importorskip("torch_geometric.nn")
    rng = np.random.default_rng(seed)
    n, (d_in, d_out, H) = int(rng.integers(2, 8)), (int(v) for v in rng.integers(1, 4, size=3))
    A = _graph(rng, n)
    np.fill_diagonal(A, seed == 2)                        # PyG drops given self-loops before adding its own
    layer = _pyg_layer(pyg, version, d_in, d_out, H, concat=concat, self_loops=self_loops, bias=seed != 1,
                       slope=(0.2, 0.01, 0.5)[seed], rng=rng)
    X = rng.normal(size=(d_in, n))
    edges = torch.tensor(np.argwhere(A).T.copy(), dtype=torch.long).reshape(2, -1)   # (source j, target i)
    with torch.no_grad():
        want = layer(torch.tensor(X.T.copy()), edges).numpy().T
    params, options = from_pyg(layer)
    got = gat.variant(**options)(X=X, A=A.astype(float), **{k: v.numpy() for k, v in params.items()})
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, np.abs(want).max()))
    derived = gat.variant(**options).param_count().subs({H_: H, d_in_: d_in, d_out_: d_out})
    assert derived == sum(p.numel() for p in layer.parameters())        # the spec's count is PyG's numel


def test_from_pyg_reads_the_options_pyg_was_built_with():
    """from_pyg's options are the layer's: version from the class, heads from concat, self-loops, bias, slope."""
    pyg = pytest.importorskip("torch_geometric.nn")
    layer = pyg.GATv2Conv(3, 2, heads=4, concat=False, negative_slope=0.1, add_self_loops=False, bias=False)
    params, options = from_pyg(layer)
    assert options == {"version": 2, "heads": "mean", "self_loops": False, "bias": False, "slope": 0.1}
    assert {name: tuple(p.shape) for name, p in params.items()} == {"W_s": (4, 2, 3), "W_t": (4, 2, 3),
                                                                     "a": (4, 2)}


@pytest.mark.parametrize("build", [
    lambda pyg: pyg.GATConv(3, 2, residual=True),
    lambda pyg: pyg.GATConv(3, 2, edge_dim=2),
    lambda pyg: pyg.GATConv((3, 4), 2, add_self_loops=False),
    lambda pyg: pyg.GCNConv(3, 2),
], ids=["residual", "edge_dim", "bipartite", "not_gat"])
def test_from_pyg_refuses_what_the_spec_cannot_express(build):
    """A PyG layer with edge features, a residual, bipartite inputs (or not a GAT
    layer at all) is a ConfigError naming it, never a silent misreading."""
    pyg = pytest.importorskip("torch_geometric.nn")
    with pytest.raises(ConfigError, match="GAT|residual|edge_dim|bipartite"):
        from_pyg(build(pyg))


PYG_LIKE = Path(__file__).parents[1] / "conformance" / "targets" / "pyg_gat.py"


@pytest.mark.parametrize("function, status", [("gat", 0), ("gat_softmax_by_source", 1)])
def test_a_pyg_style_layer_conforms_and_its_planted_bug_does_not(capsys, function, status):
    """A GAT layer written as PyG writes GATConv (rows, an edge_index, lin/att_src/att_dst storage, self-loops
    removed and added again, a softmax grouped by target, heads concatenated), behind an adapter that only
    renames, passes ``conform --algorithm gat --layout rows``; the same layer with its softmax grouped by source
    fails the spec property."""
    code = main(["conform", f"{PYG_LIKE}:{function}", "--algorithm", "gat", "-o", "version=1", "-o", "heads=concat",
                 "--layout", "rows"])
    out = capsys.readouterr().out
    assert code == status, out
    if status:
        assert "FAIL spec" in out
