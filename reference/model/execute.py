"""Run any of the spec's algorithms on the reference, with the spec's arguments.

:func:`execute` takes what ``algorithm(**arguments)`` takes — keyword arguments named as the spec names its
inputs, parameters and sizes, numpy arrays in the paper's column layout — converts them (:mod:`.convert`),
runs the torch implementation of that algorithm and variant, and converts the result back.  The formal ↔
reference properties compare the two results directly.
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError

from . import captioning, convolution, layers, pooling, recurrent, seq2seq, stacks, vision
from .. import require_torch
from .convert import columns_to_rows, mask_to_rows, params_to_torch, rows_to_columns, to_numpy, tokens_to_torch
from .decoding import dinference, edinference, kv_dtransformer
from .device import device as resolve_device, dtype as resolve_dtype
from .training import dloss, draw_mask, edloss, eloss

__all__ = ["execute", "Call", "SUPPORTED"]

torch = require_torch()


class Call:
    """One call's arguments, converted on demand: parameters, inputs as rows, masks, sizes, options."""

    def __init__(self, algorithm, arguments: dict, *, dtype="float64", device="auto", path="explicit"):
        self.algorithm, self.options, self.path = algorithm, algorithm.options, path
        self.dtype, self.device = resolve_dtype(dtype), resolve_device(device) if isinstance(device, str) else device
        names = {s.name for s in algorithm.signature} | {str(s) for s in algorithm.symbols} | {"seed", "eta"}
        unknown = sorted(set(arguments) - names)
        if unknown:
            raise ConfigError(f"{algorithm.label} got an unexpected argument {unknown[0]!r}")
        self.arguments = arguments
        given = {p.name for p in algorithm.params if p.name in arguments}
        self.params = params_to_torch({k: arguments[k] for k in given}, dtype=self.dtype, device=self.device)

    def __getitem__(self, name):
        try:
            return self.arguments[name]
        except KeyError:
            raise ConfigError(f"{self.algorithm.label} is missing argument {name!r}") from None

    def get(self, name, default=None):
        return self.arguments.get(name, default)

    def rows(self, name):
        return columns_to_rows(self[name], dtype=self.dtype, device=self.device)

    def tokens(self, name):
        return tokens_to_torch(self[name], device=self.device)

    def tensor(self, name):
        return torch.tensor(np.asarray(self[name], dtype=np.float64), dtype=self.dtype, device=self.device)

    def weights(self, *names):
        return {n: self.params[n] for n in names if n in self.params}

    def rng(self):
        return np.random.default_rng(self.get("seed"))

    def kwargs(self):
        """Keyword arguments every stack takes: the attention path and ℓ_max for fixed tables."""
        return {"path": self.path, "ell_max": self.get("ell_max")}


_QKV = ("W_q", "W_k", "W_v", "b_q", "b_k", "b_v")
_MHA = _QKV + ("W_o", "b_o")


def _vector(result) -> np.ndarray:
    return to_numpy(result[0])


def _attention(c: Call, fn, names):
    X = c.rows("X")
    Z = X if c.get("Z") is None else c.rows("Z")
    mask = mask_to_rows(c.get("mask"), Z.shape[1], X.shape[1], device=c.device)
    bias = {"B": c.tensor("B").transpose(-1, -2)} if c.options["score_bias"] else {}   # the spec's ℓ_z×ℓ_x as rows
    return rows_to_columns(fn(X, Z, mask, empty=c.options["empty"], path=c.path, **_score(c), **bias,
                              **c.weights(*names)))


def _score(c: Call) -> dict:
    """Algorithms 3 and 4's score options, with v_a when additive (Algorithm 5 has none)."""
    if "score" not in c.options:
        return {}
    return {"score": c.options["score"], "activation": c.options["activation"], "v_a": c.params.get("v_a")}


def _kv_mhattention(c: Call):
    X = c.rows("X")
    cache = (None, None)
    if c.options["step"] == "extend":  # the spec's cache is H_kv×d×ℓ_c per head; the reference's (1, H_kv, ℓ_c, d)
        cache = (c.tensor("K_c").transpose(-1, -2)[None], c.tensor("V_c").transpose(-1, -2)[None])
    total = X.shape[1] + (0 if cache[0] is None else cache[0].shape[2])
    mask = mask_to_rows(c.get("mask"), total, X.shape[1], device=c.device)
    Y, K, V = layers.mhattention_kv(X, *cache, mask, path=c.path, **c.weights(*_MHA))
    return rows_to_columns(Y), to_numpy(K[0].transpose(-1, -2)), to_numpy(V[0].transpose(-1, -2))


def _paged_mhattention(c: Call):
    """The blocks of the table, in its order, concatenated along the token axis and cut at ℓ_c (torch's
    ``index_select``), then Algorithm 5 with that cache."""
    def gathered(name):
        pool = c.tensor(name)                                                 # (N_pool, H_kv, d, B)
        blocks = pool.index_select(0, torch.as_tensor(np.asarray(c["table"]), device=c.device))
        columns = blocks.permute(1, 0, 3, 2).reshape(pool.shape[1], -1, pool.shape[2])   # (H_kv, n_b·B, d)
        return columns[:, :c["ell_c"]][None]
    X = c.rows("X")
    total = X.shape[1] + c["ell_c"]
    mask = mask_to_rows(c.get("mask"), total, X.shape[1], device=c.device)
    Y, K, V = layers.mhattention_kv(X, gathered("K_pool"), gathered("V_pool"), mask, path=c.path,
                                    **c.weights(*_MHA))
    return rows_to_columns(Y), to_numpy(K[0].transpose(-1, -2)), to_numpy(V[0].transpose(-1, -2))


def _kv_dtransformer(c: Call):
    cache = None
    if c.options["step"] == "extend":  # the spec's L×H_kv×d×ℓ_c ↦ one (1, H_kv, ℓ_c, d) pair per layer
        K_c, V_c = c.tensor("K_c").transpose(-1, -2), c.tensor("V_c").transpose(-1, -2)
        cache = [(K_c[l][None], V_c[l][None]) for l in range(K_c.shape[0])]
    logits, grown = kv_dtransformer(c.tokens("x"), cache, c.params, c.options, **c.kwargs())
    K = torch.stack([k[0] for k, _ in grown]).transpose(-1, -2)
    V = torch.stack([v[0] for _, v in grown]).transpose(-1, -2)
    return rows_to_columns(stacks.probabilities(logits)), to_numpy(K), to_numpy(V)


def _etransformer(c: Call):
    if c.options["inputs"] == "patches":
        logits = stacks.etransformer(c.params, c.options, X_p=c.rows("X_p"), **c.kwargs())
        return _vector(stacks.probabilities(logits))
    if c.options["inputs"] == "image":   # the patch side: W_patch is d_e×(P²·C), the image has C channels
        C = c["X_img"].shape[-1]
        P = c.get("patch") or round((c.params["W_patch"].shape[1] // C) ** 0.5)
        logits = stacks.etransformer(c.params, c.options, X_img=c.tensor("X_img")[None], P=P, **c.kwargs())
        return _vector(stacks.probabilities(logits))
    s = c.tokens("s") if c.options["token_types"] else None
    logits = stacks.etransformer(c.params, c.options, x=c.tokens("x"), s=s, **c.kwargs())
    if c.options["head"] == "classifier":   # the class distribution of the first token
        return _vector(stacks.probabilities(logits))
    return rows_to_columns(stacks.probabilities(logits))


def _eloss(c: Call):
    x = c.tokens("x")
    m = torch.tensor(draw_mask(x.shape[-1], c.options["p_mask"], c.rng()), dtype=c.dtype, device=c.device)[None]
    s = c.tokens("s") if c.options["token_types"] else None
    return _vector(eloss(x, m, c.params, c.options, s=s, **c.kwargs()))


def _positional(c: Call):
    t = torch.as_tensor(c["t"], device=c.device)
    encoding = c.options["encoding"]
    if encoding == "learned":
        return to_numpy(layers.positional_embedding(t, W_p=c.params["W_p"]))
    return to_numpy(layers.positional_embedding(t, encoding, d_e=c["d_e"], ell_max=c["ell_max"], dtype=c.dtype,
                                                device=c.device))


def _norm(c: Call):
    e = c.tensor("e")
    return to_numpy(layers.layer_norm(e, c.params["gamma"], c.params.get("beta"), norm=c.options["norm"],
                                      eps=c.options["eps"]))


def _cell(kind):
    def run(c: Call):
        options = {"cell": kind, "nonlinearity": "tanh", "reset": "before", "update": "cho", **c.options}
        state = c.tensor("h")[None]
        memory = c.tensor("c")[None] if kind == "lstm" else None
        h, cell = recurrent.cell(c.tensor("x")[None], state, memory, c.params, options)
        return (to_numpy(h[0]), to_numpy(cell[0])) if kind == "lstm" else to_numpy(h[0])
    return run


def _annotations(c: Call):
    """Show-Attend-Tell's annotations as (1, L, D) rows: A's columns, or the grid F (n_h, n_w, D) read
    row-major by torch's reshape."""
    if c.options["inputs"] == "grid":
        return captioning.grid_rows(c.tensor("F")[None])
    return c.rows("A")


def _show_attend_tell_loss(c: Call):
    P, alpha = captioning.show_attend_tell(_annotations(c), c.tokens("x"), c.params, c.options)
    x = c.tokens("x")
    nll = -torch.log(P[0, torch.arange(x.shape[1] - 1), x[0, 1:]]).sum()
    return to_numpy(nll + captioning.doubly_stochastic(alpha, c.options["penalty"])[0])


def _grid(c: Call, name="X"):
    """A channel-last grid input (n_h, n_w, C) as a batch of one, (1, n_h, n_w, C): not transposed."""
    return c.tensor(name)[None]


def _window_mhattention(c: Call):
    Y = vision.window_mhattention(_grid(c), shifted=c.options["shifted"], path=c.path,
                                  **c.weights(*_MHA, "B_hat"))
    return to_numpy(Y[0])


def _swin(c: Call):
    """Swin from a channel-last image; the patch side from W_patch (C × P²·C_in) and the image's C_in."""
    C_in = c["X_img"].shape[-1]
    P = c.get("patch") or round((c.params["W_patch"].shape[1] // C_in) ** 0.5)
    logits = vision.swin(_grid(c, "X_img"), c.params, P=P, eps=c.options["eps"], path=c.path)
    return _vector(stacks.probabilities(logits))


#: Algorithm name → the reference run on a :class:`Call`, returning the spec's layout.
_RUNNERS = {
    "token_embedding": lambda c: to_numpy(layers.token_embedding(torch.as_tensor(c["v"], device=c.device),
                                                                 c.params["W_e"])),
    "positional_embedding": _positional,
    "single_query_attention": lambda c: _vector(layers.single_query_attention(
        c.tensor("e")[None], c.rows("e_t"), **_score(c), **c.weights(*_QKV))),
    "attention": lambda c: _attention(c, layers.attention, _QKV),
    "mhattention": lambda c: _attention(c, layers.mhattention, _MHA),
    "kv_mhattention": _kv_mhattention,
    "paged_mhattention": _paged_mhattention,
    "layer_norm": _norm,
    "unembedding": lambda c: to_numpy(layers.unembedding(c.tensor("e"), c.params["W_u"], c.params.get("b_u"))),
    "dtransformer": lambda c: rows_to_columns(stacks.probabilities(
        stacks.dtransformer(c.tokens("x"), c.params, c.options, **c.kwargs()))),
    "etransformer": _etransformer,
    "edtransformer": lambda c: rows_to_columns(stacks.probabilities(
        stacks.edtransformer(c.tokens("z"), c.tokens("x"), c.params, c.options, **c.kwargs()))),
    "kv_dtransformer": _kv_dtransformer,
    "dloss": lambda c: _vector(dloss(c.tokens("x"), c.params, c.options, **c.kwargs())),
    "edloss": lambda c: _vector(edloss(c.tokens("z"), c.tokens("x"), c.params, c.options, **c.kwargs())),
    "eloss": _eloss,
    "dinference": lambda c: to_numpy(dinference(c.tokens("x"), c.params, c.options, ell_gen=c["ell_gen"],
                                                rng=c.rng(), **c.kwargs())[0]),
    "edinference": lambda c: to_numpy(edinference(c.tokens("z"), c.params, c.options, ell_gen=c["ell_gen"],
                                                  rng=c.rng(), **c.kwargs())[0]),
    "rnn_cell": _cell("rnn"),
    "gru_cell": _cell("gru"),
    "lstm_cell": _cell("lstm"),
    "rnn_layer": lambda c: rows_to_columns(recurrent.layer(c.rows("X"), c.params, c.options)),
    "rnn": lambda c: rows_to_columns(recurrent.stack(c.rows("X"), c.params, c.options)),
    "seq2seq": lambda c: rows_to_columns(seq2seq.seq2seq(c.tokens("z"), c.tokens("x"), c.params, c.options)),
    "show_attend_tell": lambda c: tuple(rows_to_columns(v) for v in captioning.show_attend_tell(
        _annotations(c), c.tokens("x"), c.params, c.options)),
    "show_attend_tell_loss": _show_attend_tell_loss,
    "han": lambda c: _vector(captioning.han(c.tokens("x"), c.params, c.options)),
    "conv1d": convolution.run_conv1d,
    "graph_conv": convolution.run_graph_conv,
    "attention_pooling": lambda c: _vector(pooling.attention_pooling(
        c.rows("Z"), score=c.options["score"], **c.weights("q", "W", "b", "u_w"))),
    "window_mhattention": _window_mhattention,
    "swin_block": lambda c: to_numpy(vision.swin_block(_grid(c), c.params, shifted=c.options["shifted"],
                                                       eps=c.options["eps"], path=c.path)[0]),
    "patch_merging": lambda c: to_numpy(vision.patch_merging(_grid(c), eps=c.options["eps"],
                                                             **c.weights("gamma_m", "beta_m", "W_m"))[0]),
    "swin_stage": lambda c: to_numpy(vision.swin_stage(_grid(c), c.params, merge=c.options["merge"],
                                                       eps=c.options["eps"], path=c.path)[0]),
    "swin": _swin,
}

#: The algorithms :func:`execute` runs (training is :func:`reference.model.training.train`).
SUPPORTED = tuple(_RUNNERS)


def execute(algorithm, *, dtype="float64", device="auto", path="explicit", **arguments):
    """The reference's result for ``algorithm(**arguments)``, in the spec's layout (numpy float64).

    >>> import numpy as np, formal
    >>> W_e = np.arange(6.0).reshape(2, 3)
    >>> execute(formal.token_embedding, v=2, W_e=W_e, device="cpu")
    array([2., 5.])
    """
    try:
        runner = _RUNNERS[algorithm.name]
    except KeyError:
        raise ConfigError(f"the reference runs {', '.join(SUPPORTED)}; {algorithm.name} is trained with "
                          "reference.model.training.train") from None
    with torch.no_grad():
        return runner(Call(algorithm, arguments, dtype=dtype, device=device, path=path))
