"""Strategies for the model stacks (Algorithms 8–15) on small random configurations.

Parameter shapes are written here by hand from the paper (per-layer parameters stacked on a leading layer
axis, per-head ones on a head axis), never read from the algorithm objects, so that the derived parameter
count is checked against an independent statement of the architecture.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, Case

SMALL = st.integers(1, 3)


def _layer_shapes(prefix, L, s, opts, attention=("",)):
    H, kv, da, dm, de, dmlp = s["H"], opts.get("n_kv_heads") or s["H"], s["d_attn"], s["d_mid"], s["d_e"], s["d_mlp"]
    shapes = {}
    for a in attention:
        shapes.update({f"{a}W_q": (L, H, da, de), f"{a}W_k": (L, kv, da, de), f"{a}W_v": (L, kv, dm, de),
                       f"{a}W_o": (L, de, H * dm)})
        if opts.get("bias", True):
            shapes.update({f"{a}b_q": (L, H, da), f"{a}b_k": (L, kv, da), f"{a}b_v": (L, kv, dm), f"{a}b_o": (L, de)})
    shapes.update({f"{prefix}W_mlp1": (L, dmlp, de), f"{prefix}W_mlp2": (L, de, dmlp)})
    if opts.get("activation") == "swiglu":
        shapes[f"{prefix}W_gate"] = (L, dmlp, de)
    if opts.get("bias", True):
        shapes.update({f"{prefix}b_mlp1": (L, dmlp), f"{prefix}b_mlp2": (L, de)})
    return shapes


def _norms(names, s, opts, layers=None, width=None):
    shape = ((layers,) if layers else ()) + (width or s["d_e"],)
    out = {}
    for n in names:
        out[f"gamma{n}"] = shape
        if opts.get("norm", "layer") == "layer":
            out[f"beta{n}"] = shape
    return out


def _draw_options(draw, *, decoder=True):
    opts = {"norm": draw(st.sampled_from(["layer", "rms"])),
            "eps": draw(st.sampled_from([1e-5, 0.1])),
            "activation": draw(st.sampled_from(["relu", "gelu", "gelu-tanh", "swiglu"])),
            "bias": draw(st.booleans()), "tied": draw(st.booleans()),
            "norm_position": draw(st.sampled_from(["pre", "post"]))}
    if decoder:
        opts["position"] = draw(st.sampled_from(["learned", "sinusoidal-paper", "sinusoidal-vaswani", "none"]))
    return opts


def _sizes(draw, **extra):
    H = draw(SMALL)
    kv = draw(st.sampled_from([d for d in range(1, H + 1) if H % d == 0]))
    s = {"N_V": draw(st.integers(4, 7)), "d_e": 2 * draw(SMALL), "H": H, "d_attn": draw(SMALL),
         "d_mid": draw(SMALL), "d_mlp": draw(SMALL), **extra}
    return s, kv


def _arrays(rng, shapes):
    return {name: rng.normal(scale=0.5, size=shape) for name, shape in shapes.items()}


@st.composite
def dtransformer_cases(draw, algorithm=None, loss=False):
    s, kv = _sizes(draw, L=draw(SMALL))
    opts = _draw_options(draw)
    opts["n_kv_heads"] = draw(st.sampled_from([None, kv]))
    ell = draw(st.integers(2 if loss else 1, 5))
    s["ell"] = ell
    shapes = {"W_e": (s["d_e"], s["N_V"])}
    extra = {}
    if opts["position"] != "none":
        s["ell_max"] = ell + draw(st.integers(0, 2))
        if opts["position"] == "learned":
            shapes["W_p"] = (s["d_e"], s["ell_max"])
        else:
            extra["ell_max"] = s["ell_max"]
    shapes.update(_layer_shapes("", s["L"], s, opts))
    shapes.update(_norms(("1", "2"), s, opts, s["L"]))
    if opts["norm_position"] == "pre":
        shapes.update(_norms(("",), s, opts))
    if not opts["tied"]:
        shapes["W_u"] = (s["N_V"], s["d_e"])
    rng = np.random.default_rng(draw(SEED))
    params = _arrays(rng, shapes)
    x = rng.integers(0, s["N_V"], size=ell)
    base = algorithms.dloss if loss else algorithms.dtransformer
    return Case((algorithm or base).variant(**opts), {"x": x, **params, **extra}, s, tuple(params))


@st.composite
def etransformer_cases(draw, loss=False):
    s, kv = _sizes(draw, L=draw(SMALL))
    opts = _draw_options(draw, decoder=False)
    opts["n_kv_heads"] = draw(st.sampled_from([None, kv]))
    vit = not loss and draw(st.booleans())
    rng = np.random.default_rng(draw(SEED))
    ell = draw(st.integers(1, 4))
    s["ell"] = ell
    if vit and draw(st.booleans()):   # ViT from the image: P·n_h × P·n_w × C pixels, cut into patches
        order = draw(st.sampled_from(["channel-first", "channel-last"]))
        opts.update(inputs="image", head="classifier", tied=False, patch_order=order)
        del s["N_V"], s["ell"]
        s.update(patch=draw(st.integers(1, 3)), height=draw(st.integers(1, 2)), width=draw(st.integers(1, 2)),
                 channels=draw(st.integers(1, 3)), n_classes=draw(st.integers(2, 4)))
        tokens = s["height"] * s["width"]
        shapes = {"W_patch": (s["d_e"], s["patch"] ** 2 * s["channels"]), "x_class": (s["d_e"], 1),
                  "W_p": (s["d_e"], tokens + 1)}
        if opts["bias"]:
            shapes["b_patch"] = (s["d_e"],)
        inputs = {"X_img": rng.normal(size=(s["patch"] * s["height"], s["patch"] * s["width"], s["channels"]))}
    elif vit:
        opts.update(inputs="patches", head="classifier", tied=False)
        s.update(d_patch=draw(SMALL), n_classes=draw(st.integers(2, 4)))
        del s["N_V"]
        shapes = {"W_patch": (s["d_e"], s["d_patch"]), "x_class": (s["d_e"], 1), "W_p": (s["d_e"], ell + 1)}
        if opts["bias"]:
            shapes["b_patch"] = (s["d_e"],)
        inputs = {"X_p": rng.normal(size=(s["d_patch"], ell))}
    else:
        opts.update(token_types=draw(st.booleans()), embedding_norm=draw(st.booleans()),
                    unembedding_bias=draw(st.booleans()))
        s["ell_max"] = ell + draw(st.integers(0, 2))
        shapes = {"W_e": (s["d_e"], s["N_V"]), "W_p": (s["d_e"], s["ell_max"])}
        inputs = {"x": rng.integers(0, s["N_V"], size=ell)}
        if opts["token_types"]:
            s["n_types"] = draw(st.integers(1, 3))
            shapes["W_s"] = (s["d_e"], s["n_types"])
            inputs["s"] = rng.integers(0, s["n_types"], size=ell)
        if opts["embedding_norm"]:
            shapes.update(_norms(("_e",), s, opts))
    shapes.update(_layer_shapes("", s["L"], s, opts))
    shapes.update(_norms(("1", "2"), s, opts, s["L"]))
    if vit:
        shapes.update(_norms(("",), s, opts))
        shapes["W_head"] = (s["n_classes"], s["d_e"])
        if opts["bias"]:
            shapes["b_head"] = (s["n_classes"],)
    else:
        if opts["norm_position"] == "pre":
            shapes.update(_norms(("",), s, opts))
        width = s["d_e"] if opts["tied"] else draw(SMALL)
        if not opts["tied"]:
            s["d_f"] = width
            shapes["W_u"] = (s["N_V"], width)
        shapes["W_f"] = (width, s["d_e"])
        if opts["bias"]:
            shapes["b_f"] = (width,)
        shapes.update(_norms(("_f",), s, opts, width=width))
        if opts["unembedding_bias"]:
            shapes["b_u"] = (s["N_V"],)
    params = _arrays(rng, shapes)
    kwargs = {**inputs, **params}
    algorithm = algorithms.eloss.variant(**opts) if loss else algorithms.etransformer.variant(**opts)
    if loss:
        kwargs["seed"] = draw(SEED)
    return Case(algorithm, kwargs, s, tuple(params))


@st.composite
def edtransformer_cases(draw, loss=False):
    s, kv = _sizes(draw, L_enc=draw(SMALL), L_dec=draw(SMALL))
    opts = _draw_options(draw)
    opts["n_kv_heads"] = draw(st.sampled_from([None, kv]))
    rng = np.random.default_rng(draw(SEED))
    s.update(ell_x=draw(st.integers(2 if loss else 1, 4)), ell_z=draw(st.integers(1, 4)))
    shapes, extra = {"W_e": (s["d_e"], s["N_V"])}, {}
    if opts["position"] != "none":
        s["ell_max"] = max(s["ell_x"], s["ell_z"]) + draw(st.integers(0, 1))
        if opts["position"] == "learned":
            shapes["W_p"] = (s["d_e"], s["ell_max"])
        else:
            extra["ell_max"] = s["ell_max"]
    shapes.update(_layer_shapes("enc_", s["L_enc"], s, opts, ("enc_",)))
    shapes.update(_layer_shapes("dec_", s["L_dec"], s, opts, ("dec_", "cross_")))
    shapes.update(_norms(("1", "2"), s, opts, s["L_enc"]))
    shapes.update(_norms(("3", "4", "5"), s, opts, s["L_dec"]))
    if opts["norm_position"] == "pre":
        shapes.update(_norms(("_enc", "_dec"), s, opts))
    if not opts["tied"]:
        shapes["W_u"] = (s["N_V"], s["d_e"])
    params = _arrays(rng, shapes)
    kwargs = {"z": rng.integers(0, s["N_V"], size=s["ell_z"]), "x": rng.integers(0, s["N_V"], size=s["ell_x"]),
              **params, **extra}
    algorithm = (algorithms.edloss if loss else algorithms.edtransformer).variant(**opts)
    return Case(algorithm, kwargs, s, tuple(params))


@st.composite
def dinference_cases(draw):
    case = draw(dtransformer_cases())
    s, kwargs = dict(case.sizes), dict(case.kwargs)
    ell_gen = draw(st.integers(1, 3))
    decoding = draw(st.sampled_from(["sample", "greedy"]))
    cache = draw(st.booleans())
    if "ell_max" in s:  # no truncation, so that the cost formulas hold exactly
        s["ell_max"] = s["ell"] + ell_gen + draw(st.integers(0, 1))
        if "W_p" in kwargs:
            kwargs["W_p"] = np.random.default_rng(0).normal(size=(s["d_e"], s["ell_max"]))
        elif "ell_max" in kwargs:
            kwargs["ell_max"] = s["ell_max"]
    elif not cache:  # truncation needs ℓ_max even without a position table
        s["ell_max"] = s["ell"] + ell_gen
        kwargs["ell_max"] = s["ell_max"]
    s["ell_gen"] = ell_gen
    kwargs["ell_gen"] = ell_gen
    if decoding == "sample":
        kwargs["seed"] = draw(SEED)
    opts = {**case.algorithm.options, "decoding": decoding, "kv_cache": cache,
            "tau": draw(st.sampled_from([0.5, 1.0, 2.0]))}
    return Case(algorithms.dinference.variant(**opts), kwargs, s, case.params)


@st.composite
def edinference_cases(draw):
    """Algorithm 15 on a random encoder–decoder.  Its sizes lack n_steps and ell_out, which only the run
    knows (eos may be drawn early), so it is not in :data:`STACK_STRATEGIES`."""
    case = draw(edtransformer_cases())
    s, kwargs = dict(case.sizes), dict(case.kwargs)
    del s["ell_x"], kwargs["x"]
    s["ell_gen"] = kwargs["ell_gen"] = draw(st.integers(1, 4))
    if "ell_max" in s:  # the target positions come from the same table
        s["ell_max"] = max(s["ell_z"], s["ell_gen"]) + draw(st.integers(0, 1))
        if "W_p" in kwargs:
            kwargs["W_p"] = np.random.default_rng(0).normal(size=(s["d_e"], s["ell_max"]))
        else:
            kwargs["ell_max"] = s["ell_max"]
    decoding = draw(st.sampled_from(["sample", "greedy"]))
    if decoding == "sample":
        kwargs["seed"] = draw(SEED)
    opts = {**case.algorithm.options, "decoding": decoding, "tau": draw(st.sampled_from([0.5, 1.0, 2.0]))}
    return Case(algorithms.edinference.variant(**opts), kwargs, s, case.params)


STACK_STRATEGIES = {
    "dtransformer": dtransformer_cases(),
    "etransformer": etransformer_cases(),
    "edtransformer": edtransformer_cases(),
    "dloss": dtransformer_cases(loss=True),
    "eloss": etransformer_cases(loss=True),
    "edloss": edtransformer_cases(loss=True),
    "dinference": dinference_cases(),
}
