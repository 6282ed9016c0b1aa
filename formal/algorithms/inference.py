"""Algorithms 14 and 15: generating tokens with a trained transformer (Phuong & Hutter, §8), and
decoding with a key/value cache.

Sampling draws ``y ∝ p^{1/τ}`` with τ ∈ (0, ∞) from the execution's seeded generator; ``decoding="greedy"`` takes
``argmax p`` instead (τ → 0, :ref:`decision-temperature`).  DInference keeps at most the last ℓ_max tokens as
context (:ref:`decision-inference-context`).  Costs are derived for a whole generation: the generation loop's body
grows with its iteration i and is summed over i in closed form, so the cost with and without the cache — and their
difference — are polynomials in ℓ and ℓ_gen.
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, L, d_attn, d_mid, ell, ell_gen, ell_max, ell_out, ell_z, i, n_steps
from ..engine.algorithm import Algorithm, Assign, Loop, Step, call
from ..engine.declarations import Option, Options, Requires
from ..engine.domains import BOOL, Choice, Real
from ..ops import concat, drop, greedy, last_column, sample, special_token, start_token, strip, truncate
from .architectures import DTRANSFORMER_OPTIONS, EDTRANSFORMER_OPTIONS, build_dtransformer, build_edtransformer
from .blocks import length_line
from .kv_cache import build_kv_dtransformer

__all__ = ["ALGORITHMS", "build_dinference", "build_edinference", "dinference", "edinference", "DECODINGS", "TAU",
           "DECODING", "KV_CACHE"]

DECODINGS = ("sample", "greedy")

#: The sampling temperature (:ref:`decision-temperature`: τ → 0 is greedy decoding, an option of its own).
TAU = Option("tau", 1.0, Real(0, open_low=True), "sampling temperature τ: y ∝ p^(1/τ) (τ → 0 is decoding=greedy)",
             examples=(0.5, 1.0, 2.0), hint="for tau → 0 use decoding='greedy'")
DECODING = Option("decoding", "sample", Choice(*DECODINGS), "sample (y ∝ p^(1/τ)) or greedy (argmax p)")
KV_CACHE = Option("kv_cache", False, BOOL, "decode with a key/value cache: a prefill, then one token per step")


def _draw(p, tau, decoding):
    return greedy(p) if decoding == "greedy" else sample(p, tau)


@Options(TAU, DECODING, KV_CACHE, *DTRANSFORMER_OPTIONS.values(),
         rules=(*DTRANSFORMER_OPTIONS.rules,
                Requires("rope_scaling", ("dynamic",), "kv_cache", (False,),
                         "dynamic NTK rescales every rotation with the length, and a cache holds keys rotated at an "
                         "earlier length"))).builds
def build_dinference(*, tau, decoding, kv_cache, **model_options) -> Algorithm:
    """Algorithm 14: ``ℓ_gen`` tokens continuing the prompt ``x``, sampled one at a time from Algorithm 10.

    Without the cache each step runs Algorithm 10 on the whole context (at most the last ℓ_max tokens).
    With ``kv_cache=True`` a prefill runs the prompt once and every later step runs only the newest token
    against the cached keys and values; it returns the same tokens for the same seed.  A cache cannot
    re-window absolute positions, so it requires ℓ + ℓ_gen − 1 ≤ ℓ_max instead of truncating (derived: the
    last step's call needs it, see ``size_constraints``).
    """
    model = build_dtransformer(**model_options)
    theta = {p.name: p.name for p in model.params}
    label = ("θ̂", r"\hat{\theta}")
    if not kv_cache:
        lines = [Loop("i", ell_gen, (
            Assign("P", call(model, label=label, x=truncate("x", ell_max), **theta)),
            Assign("p", last_column("P", ("ℓ+i−1", r"\ell+i-1"))),
            Assign("y", _draw("p", tau, decoding)),
            Assign("x", concat("x", "y")),
        ), sequential=True, index=i, carry=(("x", (ell + i - 1,)),))]
    else:
        prefill = build_kv_dtransformer(**model_options, step="prefill")
        extend = build_kv_dtransformer(**model_options, step="extend")
        kv = extend.spec("K_c").shape[1]  # key/value heads: H, or n_kv_heads
        lines = [
            Assign(("P", "K", "V"), call(prefill, label=label, x="x", **theta)),
            Assign("y", _draw(last_column("P", ("ℓ", r"\ell")), tau, decoding)),
            Assign("x", concat("x", "y")),
            Loop("i", ell_gen - 1, (
                Assign(("P", "K", "V"), call(extend, label=label, x="y", K_c="K", V_c="V", **theta)),
                Assign("y", _draw(last_column("P", "1"), tau, decoding)),
                Assign("x", concat("x", "y")),
            ), sequential=True, index=i,
                carry=(("x", (ell + i,)), ("K", (L, kv, d_attn, ell + i - 1)), ("V", (L, kv, d_mid, ell + i - 1)))),
        ]
    lines = [length_line(ell, "x"), *lines, Assign("y_gen", drop("x", ell), returns=True)]
    return Algorithm(
        number=14, name="dinference", display="DInference" + ("KV" if kv_cache else ""),
        summary="Algorithm 14: continue a prompt by sampling ℓ_gen tokens from a decoder-only transformer"
                + (", with a key/value cache." if kv_cache else "."),
        inputs=[TensorSpec("x", (ell,), "index", "the prompt, token ids, 0-based", bound=N_V)],
        params=model.params, output=TensorSpec("y_gen", (ell_gen,), doc="the generated tokens", role="tokens"),
        lines=lines, params_label="θ̂",
        random=decoding == "sample",
        notes=["ℓ_gen is a size: pass it as ell_gen=<int>"],
    )


@Options(TAU, DECODING, *EDTRANSFORMER_OPTIONS.values(), rules=EDTRANSFORMER_OPTIONS.rules).builds
def build_edinference(*, tau, decoding, **model_options) -> Algorithm:
    """Algorithm 15: a target sequence for the source ``z``, from ``[bos_token]`` until ``eos_token`` is drawn
    or ℓ_gen tokens are (the length cap); returned without bos and eos (:ref:`decision-inference-context`).  Costs are
    those of the longest run, ℓ_gen steps."""
    model = build_edtransformer(**model_options)
    theta = {p.name: p.name for p in model.params}

    def eos_drawn(values, ctx):
        return int(values["y"][-1]) == special_token("eos", ctx.evaluate(N_V))

    lines = [
        Assign("x_hat", start_token("bos", N_V)),
        Step("y ← 0", r"y \gets 0", shape=()),  # the paper's: any y that is not eos_token starts the loop
        Loop("i", ell_gen, (
            Assign("P", call(model, label=("θ̂", r"\hat{\theta}"), z="z", x="x_hat", **theta)),
            Assign("p", last_column("P", ("length(x̂)", r"\mathrm{length}(\hat{x})"))),  # column i: x̂ has i tokens
            Assign("y", _draw("p", tau, decoding)),
            Assign("x_hat", concat("x_hat", "y")),
        ), sequential=True, index=i, carry=(("x_hat", (i,)),), until=eos_drawn, until_text="y = eos_token",
            trips=n_steps),
        Assign("y_gen", strip("x_hat", ell_out, N_V), returns=True),
    ]
    return Algorithm(
        number=15, name="edinference", display="EDInference",
        summary="Algorithm 15: generate a target sequence for a source sequence with an encoder–decoder transformer.",
        inputs=[TensorSpec("z", (ell_z,), "index", "the source sequence, token ids, 0-based", bound=N_V)],
        params=model.params, output=TensorSpec("y_gen", (ell_out,), doc="the generated tokens, without bos and eos",
                                               role="tokens"),
        lines=lines, params_label="θ̂",
        random=decoding == "sample",
        notes=["ℓ_gen is the length cap: pass it as ell_gen=<int>; costs are for ℓ_gen steps (no early eos)"],
    )


dinference = build_dinference()
edinference = build_edinference()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (dinference, edinference)
