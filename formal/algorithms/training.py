"""Algorithms 11–13: training by stochastic gradient descent on the summed log loss (Phuong & Hutter, §7).

Each training algorithm calls a loss algorithm (``edloss``, ``eloss``, ``dloss``: the loss of one
sequence, executable in numpy) and a gradient step.  The step's cost is the convention's backward rule
(:data:`formal.costs.cost.BACKWARD`) applied to the loss's forward cost, plus, under ``full``, the update.  The
gradient itself is not computed in numpy: executing a training algorithm raises; the torch reference
computes it.  Sequences of one dataset share a length ℓ here (the paper allows any).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, N_data, N_epochs, ell, ell_x, ell_z
from ..costs.cost import BACKWARD, Work, gradient_step
from ..engine.algorithm import Algorithm, Assign, CallOp, Loop, Step, call
from ..engine.calls import call_node
from ..engine.declarations import Option, Options
from ..engine.domains import Real
from ..errors import ConfigError
from ..ops import LoopIndex, mask_tokens, masked_nll, masked_positions, next_token_nll, pick
from .architectures import (
    DTRANSFORMER_OPTIONS,
    EDTRANSFORMER_OPTIONS,
    ETRANSFORMER_OPTIONS,
    HEAD,
    INPUTS,
    PATCH_ORDER,
    build_dtransformer,
    build_edtransformer,
    build_etransformer,
)
from .blocks import length_line

__all__ = ["ALGORITHMS", "build_dloss", "build_eloss", "build_edloss", "build_dtraining", "build_etraining",
           "build_edtraining", "dloss", "eloss", "edloss", "dtraining", "etraining", "edtraining", "GradStepOp",
           "P_MASK", "ELOSS_OPTIONS"]

#: Algorithm 12, line 5: each token is masked with probability p_mask (BERT's 15 %).
P_MASK = Option("p_mask", 0.15, Real(0, 1, open_low=True, open_high=True),
                "probability that a token is masked (Algorithm 12, line 5; BERT's 0.15)", examples=(0.15, 0.5))
#: Algorithm 12's: p_mask, and Algorithm 9's with the token inputs and the masked-LM head it needs.
ELOSS_OPTIONS = Options(P_MASK, *ETRANSFORMER_OPTIONS.replaced(
    INPUTS.only("tokens", why="a masked-token loss masks token ids; ViT's patches and images have none"),
    HEAD.only("mlm", why="a masked-token loss needs every token's distribution, which the mlm head gives"),
    PATCH_ORDER.only(None, why="a masked-token loss takes no image")).values(),
    rules=ETRANSFORMER_OPTIONS.rules)


class GradStepOp(CallOp):
    """``θ ← θ − η·∇_θ loss(θ)`` for the loss algorithm called with the same arguments.

    Work: ``BACKWARD[c]`` × the loss's forward FLOPs under each convention c, and under ``full`` 2 FLOPs
    per parameter for the update; memory: the gradient, one scalar per parameter.
    """

    name = "grad_step"

    def shape(self, shapes):
        self._substitution(shapes)  # the arguments must still fit the loss
        return ()

    def work(self, shapes, out):
        forward = super().work(shapes, out)
        params = self.callee.param_count().xreplace(self._substitution(shapes))
        return Work(gradient_step(forward.flops, params), params, forward.depth)

    def numpy(self, ctx, *values):
        raise ConfigError(f"{ctx.where()}: the numpy specification computes losses, not gradients; execute "
                          f"{self.callee.name} for the loss value, and take the gradient from the torch reference")

    def text(self, args):
        return "θ − η·∇loss(θ)"  # the paper's: loss is the line above, the callee's last

    def latex(self, args):
        return r"\theta - \eta \cdot \nabla \mathrm{loss}(\theta)"


def _theta(model):
    return {p.name: p.name for p in model.params}


def _next_token_lines(model, data: dict, tokens):
    """Algorithms 11 and 13, lines 4–5, the one definition of their loss: ``P(θ) ← Transformer(… | θ)``;
    ``loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x[t+1], t]``; ``data`` maps the model's inputs to values."""
    return [Assign("P", call(model, label=("θ", r"\theta"), **data, **_theta(model))),
            Assign("loss", next_token_nll("P", tokens))]


def _masked_lines(model, data: dict, tokens, p_mask):
    """Algorithm 12, lines 4–9, the one definition of its loss: mask each token with probability p_mask
    (``for t ∈ [ℓ]: x̃[t] ← …``, drawn for every t at once), ``T̃ ← {t : x̃[t] = mask_token}``, then
    ``loss(θ) = −Σ_{t∈T̃} log P(θ)[x[t], t]``."""
    masking = Assign("x_tilde", mask_tokens(tokens, p_mask, N_V))
    return [Loop("t", ell, (masking,), columnwise=True, end=True),
            Assign("T_tilde", masked_positions("x_tilde", N_V)),
            Assign("P", call(model, label=("θ", r"\theta"), **{**data, "x": "x_tilde"}, **_theta(model))),
            Assign("loss", masked_nll("P", tokens, "T_tilde"))]


def _returning(lines):
    """``lines`` with the last one returning its value."""
    return [*lines[:-1], replace(lines[-1], returns=True)]


@DTRANSFORMER_OPTIONS.builds
def build_dloss(**model_options) -> Algorithm:
    """Algorithm 13, lines 4–5: the loss of one sequence, ``−Σ_{t=1}^{ℓ−1} log P[x[t+1], t]``."""
    model = build_dtransformer(**model_options)
    return Algorithm(
        number=13, name="dloss", display="DLoss",
        summary="Algorithm 13's loss: the negative log-likelihood of each next token of one sequence.",
        inputs=[TensorSpec("x", (ell,), "index", "a training sequence of token ids, 0-based", bound=N_V)],
        params=model.params, output=TensorSpec("loss", (), doc="the summed negative log-likelihood"),
        lines=_returning(_next_token_lines(model, {"x": "x"}, "x")), params_label="θ",
    )


@EDTRANSFORMER_OPTIONS.builds
def build_edloss(**model_options) -> Algorithm:
    """Algorithm 11, lines 4–5: the loss of one pair, ``−Σ_{t=1}^{ℓ_x−1} log P[x[t+1], t]``."""
    model = build_edtransformer(**model_options)
    return Algorithm(
        number=11, name="edloss", display="EDLoss",
        summary="Algorithm 11's loss: the negative log-likelihood of each next target token, given the source.",
        inputs=[TensorSpec("z", (ell_z,), "index", "source sequence of token ids, 0-based", bound=N_V),
                TensorSpec("x", (ell_x,), "index", "target sequence of token ids, 0-based", bound=N_V)],
        params=model.params, output=TensorSpec("loss", (), doc="the summed negative log-likelihood"),
        lines=_returning(_next_token_lines(model, {"z": "z", "x": "x"}, "x")), params_label="θ",
    )


@ELOSS_OPTIONS.builds
def build_eloss(*, p_mask, **model_options) -> Algorithm:
    """Algorithm 12, lines 4–9: mask each token with probability p_mask, then the loss over the masked ones,
    ``−Σ_{t: m[t]=1} log P[x[t], t]``.  Random: execution takes ``seed``."""
    model = build_etransformer(**model_options)
    extra = {"s": "s"} if model.options["token_types"] else {}
    return Algorithm(
        number=12, name="eloss", display="ELoss",
        summary="Algorithm 12's loss: predict randomly masked tokens from all the others.",
        inputs=model.inputs, params=model.params, output=TensorSpec("loss", (), doc="the masked-token loss"),
        lines=_returning(_masked_lines(model, {"x": "x", **extra}, "x", p_mask)),
        params_label="θ",
        random=True,
    )


def _training(number, name, display, loss, data, pick_args, summary, lines, length):
    """Algorithms 11–13: ``for i ∈ [N_epochs]: for n ∈ [N_data]:`` the loss's lines on the n-th example
    (``lines(args, tokens)``, the loss object's own definition), then the gradient step; ``return θ``."""
    n, theta = LoopIndex("n"), _theta(loss)
    args = {k: pick(v, n) for k, v in pick_args.items()}
    body = (length_line(length, args["x"]), *lines(args, args["x"]),
            Assign("theta", call_node(GradStepOp, loss, (), {**args, **theta})))
    epochs = Loop("i", N_epochs, (Loop("n", N_data, body, sequential=True),), sequential=True, end=True)
    return Algorithm(
        number=number, name=name, display=display, summary=summary,
        inputs=data, params=loss.params, output=TensorSpec("theta", (), doc="the trained parameters θ̂"),
        lines=[epochs, Step("return θ", r"\textbf{return}\ \theta")],
        params_label="θ, η", random=loss.random,
        notes=[f"a gradient step costs the loss's forward FLOPs times {BACKWARD['matmul'][0]} for the backward "
               "pass (rule per convention: formal.costs.cost.BACKWARD), and 2 FLOPs per parameter for the update "
               "under full; the gradient comes from the torch reference"],
    )


@DTRANSFORMER_OPTIONS.builds
def build_dtraining(**options) -> Algorithm:
    """Algorithm 13: N_epochs passes of per-sequence SGD on :func:`build_dloss`."""
    loss = build_dloss(**options)
    return _training(13, "dtraining", "DTraining", loss,
                     [TensorSpec("data", (N_data, ell), "index", "N_data sequences of token ids", bound=N_V)],
                     {"x": "data"}, "Algorithm 13: train a decoder-only transformer by next-token prediction.",
                     lambda args, x: _next_token_lines(build_dtransformer(**options), args, x), ell)


def _model_options(options: dict) -> dict:
    """Algorithm 12's options less its own, p_mask: the model's."""
    return {k: v for k, v in options.items() if k != "p_mask"}


@ELOSS_OPTIONS.builds
def build_etraining(**options) -> Algorithm:
    """Algorithm 12: N_epochs passes of per-sequence SGD on :func:`build_eloss`."""
    loss = build_eloss(**options)
    data = [TensorSpec("data", (N_data, ell), "index", "N_data sequences of token ids", bound=N_V)]
    picks = {"x": "data"}
    if loss.options["token_types"]:
        data.append(TensorSpec("types", (N_data, ell), "index", "their token types",
                               bound=loss.spec("s").bound))
        picks["s"] = "types"
    return _training(12, "etraining", "ETraining", loss, data, picks,
                     "Algorithm 12: train an encoder-only transformer by masked-token prediction.",
                     lambda args, x: _masked_lines(build_etransformer(**_model_options(options)), args, x,
                                                   options["p_mask"]), ell)


@EDTRANSFORMER_OPTIONS.builds
def build_edtraining(**options) -> Algorithm:
    """Algorithm 11: N_epochs passes of per-pair SGD on :func:`build_edloss`."""
    loss = build_edloss(**options)
    return _training(11, "edtraining", "EDTraining", loss,
                     [TensorSpec("sources", (N_data, ell_z), "index", "source sequences", bound=N_V),
                      TensorSpec("targets", (N_data, ell_x), "index", "target sequences", bound=N_V)],
                     {"z": "sources", "x": "targets"},
                     "Algorithm 11: train an encoder–decoder transformer for sequence-to-sequence prediction.",
                     lambda args, x: _next_token_lines(build_edtransformer(**options), args, x), ell_x)


dloss, eloss, edloss = build_dloss(), build_eloss(), build_edloss()
dtraining, etraining, edtraining = build_dtraining(), build_etraining(), build_edtraining()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (edloss, edtraining, eloss, etraining, dloss, dtraining)
