"""Run any of the spec's algorithms on the reference, with the spec's arguments.

:func:`execute` takes what ``algorithm(**arguments)`` takes — keyword arguments named as the spec names its
inputs, parameters and sizes, numpy arrays in the paper's column layout — and hands them, as a :class:`Call`
that converts them on demand (:mod:`.convert`), to the runner the algorithm's torch module declares
(:func:`reference.model.runners.runs`), which returns the result in the spec's layout.  The formal ↔
reference properties compare the two results directly.
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError

from .. import require_torch
from .convert import columns_to_rows, params_to_torch, tokens_to_torch
from .device import device as resolve_device, dtype as resolve_dtype
from .runners import runner, supported

__all__ = ["execute", "Call", "supported"]

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

    def adjacency(self, name, nodes: int):
        """A graph's nodes×nodes adjacency (an omitted one is the complete graph, as the spec's omitted mask
        is), as a 0/1 tensor in the spec's orientation: ``A[j, i] = 1`` for an edge j → i."""
        from formal.core import masks
        return torch.as_tensor(masks.resolve(self.get(name), nodes, nodes), device=self.device)

    def grid(self, name):
        """A channel-last grid input (n_h, n_w, C) as a batch of one, (1, n_h, n_w, C): not transposed."""
        return self.tensor(name)[None]

    def weights(self, *names):
        return {n: self.params[n] for n in names if n in self.params}

    def rng(self):
        return np.random.default_rng(self.get("seed"))

    def kwargs(self):
        """Keyword arguments every stack takes: the attention path and ℓ_max for fixed tables."""
        return {"path": self.path, "ell_max": self.get("ell_max")}


def execute(algorithm, *, dtype="float64", device="auto", path="explicit", **arguments):
    """The reference's result for ``algorithm(**arguments)``, in the spec's layout (numpy float64).

    >>> import numpy as np, formal
    >>> W_e = np.arange(6.0).reshape(2, 3)
    >>> execute(formal.token_embedding, v=2, W_e=W_e, device="cpu")
    array([2., 5.])
    """
    run = runner(algorithm.name).run
    with torch.no_grad():
        return run(Call(algorithm, arguments, dtype=dtype, device=device, path=path))
