"""Named real-world configurations: the published hyperparameters of models users know.

Each :class:`Preset` names a registry algorithm, the options that make it that architecture, and the sizes
it was published with.  Nothing here states a parameter count: counts are derived from the algorithm
objects; the tests check them against the public implementations (HF transformers models built from a
configuration, a tied matrix counted once) or, where there is none, against an independent formula.  The
tests also compare every option and size with the checkpoint's published HF configuration (or the paper's
table where there is no HF model), and run each preset's options against the HF model at tiny sizes.

Examples
--------
>>> from formal.models.presets import get
>>> get("gpt2").evaluate()["params"]
124439808
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError, shown
from ..guards.limits import MAX_SIZE

__all__ = ["Preset", "PRESETS", "LENGTHS", "MAX_SIZE", "Rule", "check_size", "get", "resolve_sizes"]


@dataclass(frozen=True)
class Rule:
    """A preset size that the architecture defines from other sizes: ``factor`` times the product of the sizes
    named in ``of``, divided by the size ``over`` (exactly: a size that does not divide is an error).
    ``d_mlp = 4·d_e`` is ``Rule(("d_e",), 4)``; the default sequence length of a grid, ``height·width``, is
    ``Rule(("height", "width"))``; a head width ``d_e/H`` is ``Rule(("d_e",), over="H")``."""

    of: tuple
    factor: int = 1
    over: str | None = None

    def __str__(self) -> str:
        text = "·".join(([str(self.factor)] if self.factor != 1 else []) + list(self.of))
        return text + (f"/{self.over}" if self.over else "")

    def value(self, name: str, sizes: dict):
        """The size ``name`` at ``sizes``: an int when the sizes it reads are ints, else a formula (a string:
        the claims checker's sizes may be formulas)."""
        values = [sizes[k] for k in self.of] + ([sizes[self.over]] if self.over else [])
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            product = self.factor
            for k in self.of:
                product *= sizes[k]
            if self.over is None:
                return product
            if product % sizes[self.over]:
                raise ConfigError(f"{name} = {self} needs {' · '.join(f'{k} = {sizes[k]}' for k in self.of)} "
                                  f"divisible by {self.over} = {sizes[self.over]} (or give {name})")
            return product // sizes[self.over]
        text = "*".join([str(self.factor)] + [f"({sizes[k]})" for k in self.of])
        return text + (f"/({sizes[self.over]})" if self.over else "")


@dataclass(frozen=True)
class Preset:
    """A named configuration: ``algorithm`` (a registry name) built with ``options``, at ``sizes``.

    ``seq_len`` is the sequence length costs are quoted at by default (the context length; the number of patches for
    ViT), or None where the model has none (a captioner's caption: then it must be given).  ``derived`` names the
    sizes — and ``seq_len`` — that the architecture defines from others (:class:`Rule`: GPT-2's ``d_mlp = 4·d_e``,
    its context ``ℓ_max``); ``sizes`` and ``seq_len`` hold their values at the published sizes, and
    :meth:`variant` recomputes them when a size they read is overridden.  ``doc`` says where the configuration
    comes from, what implementation its count is checked against, and where the published number differs.
    """

    name: str
    algorithm: str
    options: dict
    sizes: dict
    seq_len: int | None
    doc: str = field(default="", compare=False)
    derived: dict = field(default_factory=dict, compare=False)

    def build(self):
        from ..algorithms import get as get_algorithm
        return get_algorithm(self.algorithm, **self.options)

    def binding(self, seq_len: int | None = None) -> dict:
        """Every size symbol of the algorithm bound to an int, sequence lengths at ``seq_len`` (required
        when the preset has no default length)."""
        seq_len = self.seq_len if seq_len is None else seq_len
        if seq_len is None:
            raise ConfigError(f"{self.name} has no default sequence length: give seq_len")
        return resolve_sizes(self.build(), self.sizes, seq_len)

    def evaluate(self, convention: str = "matmul", seq_len: int | None = None) -> dict:
        """The algorithm's cost at this configuration, as numbers."""
        return self.build().cost(convention).evaluate(self.binding(seq_len))

    def variant(self, symbols, sizes: dict | None = None, seq_len=None) -> tuple:
        """``(sizes, seq_len)`` of this preset with ``sizes`` overridden, as if built from scratch: the published
        sizes the variant's model has (``symbols``: its size names; a size another option set removed, such
        as ℓ_max without a position table, is not imposed), the user's, and every :attr:`derived` size the
        user did not give recomputed from them.  The default sequence length is ``seq_len`` if given, else a
        sequence length the user gave as a size (``ell = 576`` for a ViT on a larger image), else the
        preset's own or its rule's.  A user's size the model does not have is left in for
        :func:`resolve_sizes` to refuse; a sequence length given twice, differently, is a ConfigError."""
        sizes = dict(sizes or {})
        known = set(symbols)
        merged = {k: v for k, v in self.sizes.items() if k in known and k not in self.derived}
        merged.update(sizes)
        for name, rule in self.derived.items():
            if name != "seq_len" and name in known and name not in sizes and all(k in merged for k in rule.of):
                merged[name] = rule.value(name, merged)
        lengths = {sizes[k] for k in LENGTHS if k in sizes}
        if len(lengths) > 1 or (lengths and seq_len is not None and lengths != {seq_len}):
            given = ", ".join(f"{k} = {sizes[k]!r}" for k in LENGTHS if k in sizes)
            raise ConfigError(f"{given}{'' if seq_len is None else f' and seq_len = {seq_len!r}'} disagree: a "
                              "model's sequence lengths are one length")
        if seq_len is None and lengths:
            seq_len = lengths.pop()
        if seq_len is None:
            rule = self.derived.get("seq_len")
            seq_len = (rule.value("seq_len", merged) if rule is not None and all(k in merged for k in rule.of)
                       else self.seq_len)
        return merged, seq_len


LENGTHS = ("ell", "ell_x", "ell_z")


def check_size(name: str, value) -> int:
    """``value`` as an int from 1 to :data:`MAX_SIZE` however it is spelled (``768``, ``"768"``, ``"3*256"``,
    ``768.0``: :func:`formal.guards.numbers.size`, which reads it exactly), else a ConfigError naming ``name``
    (and the value, shortened: a file may hold a 400-digit integer).  A formula naming sizes is refused here:
    these sizes are numbers."""
    from ..guards.numbers import size
    return size(value, name, names=())


def resolve_sizes(algorithm, sizes: dict, seq_len: int | None = None) -> dict:
    """``sizes`` (names → ints) completed with :ref:`decision-head-widths`'s defaults, ``d_attn = d_mid = d_e/H``
    and ``d_f = d_e``, and with every sequence length of ``algorithm`` set to ``seq_len``.  ``algorithm`` is an
    algorithm object, or the :class:`~formal.models.costcache.CostFormulas` of one (which need no sympy).

    Raises :class:`ConfigError` for a size that is not a positive integer, an unknown size name, ``d_e`` not
    divisible by ``H`` when the head sizes are left to their default, or a size constraint that fails (one
    of ``algorithm.size_constraints``: its own and those of the algorithms it calls, ``ℓ ≤ ℓ_max``,
    ``2 ≤ d_e`` under layer norm with eps = 0).
    """
    known = {str(s) for s in algorithm.symbols}
    values = {}
    for name, value in sizes.items():
        values[name] = check_size(name, value)
    for head in ("d_attn", "d_mid"):
        if head in known and head not in values:
            d_e, heads = values.get("d_e"), values.get("H")
            if d_e is None or heads is None:
                raise ConfigError(f"{head} is not given and cannot default to d_e/H without d_e and H")
            if d_e % heads:
                raise ConfigError(f"d_e = {d_e} is not divisible by H = {heads}: the default head size "
                                  f"{head} = d_e/H needs it (or give d_attn and d_mid)")
            values[head] = d_e // heads
    if "d_f" in known and "d_f" not in values and "d_e" in values:
        values["d_f"] = values["d_e"]
    if seq_len is not None:
        check_size("sequence length", seq_len)
        for name in LENGTHS:
            if name in known:
                values[name] = seq_len
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{algorithm.label} has no size {shown(unknown[0])}; its sizes: {', '.join(sorted(known))}")
    missing = sorted(known - set(values))
    if missing:
        raise ConfigError(f"{algorithm.label} needs the size {missing[0]} (sizes given: {', '.join(sorted(values))})")
    bound = values if getattr(algorithm, "sizes_by_name", False) else _by_symbol(values)
    for c in algorithm.size_constraints:
        if not c.holds(bound):
            raise ConfigError(f"{algorithm.label}: {c.explain(bound)}")
    return values


def _by_symbol(values: dict) -> dict:
    """``values`` keyed by the sympy symbols of their names, as an algorithm object's constraints read them."""
    from ..core.symbols import by_name
    return {by_name(k): v for k, v in values.items()}


def _preset(name, algorithm, options, sizes, seq_len, doc) -> Preset:
    """A :class:`Preset` whose ``sizes`` (and ``seq_len``) may hold :class:`Rule` s: their values at the published
    sizes are computed here, in the sizes' order, and the rules kept as :attr:`Preset.derived`."""
    stated = {k: v for k, v in sizes.items() if not isinstance(v, Rule)}
    rules = {k: v for k, v in sizes.items() if isinstance(v, Rule)}
    if isinstance(seq_len, Rule):
        rules["seq_len"] = seq_len
        seq_len = seq_len.value("seq_len", stated)
    values = {k: v.value(k, stated) if isinstance(v, Rule) else v for k, v in sizes.items()}
    return Preset(name, algorithm, options, values, seq_len, doc, rules)


#: The rules the presets share: an MLP four times as wide as the embedding, a head width of d_e/H (where the
#: paper's table gives d_head = d_model/n_heads), and a context length that is the position table's.
_MLP4, _HEAD, _CONTEXT = Rule(("d_e",), 4), Rule(("d_e",), over="H"), Rule(("ell_max",))

# ------------------------------------------------------------------------------------------------ GPT-2/3
_GPT2 = dict(position="learned", activation="gelu-tanh", tied=True, eps=1e-5, norm_position="pre")


def _gpt2(name, d_e, layers, heads, paper):
    return _preset(name, "dtransformer", _GPT2, dict(N_V=50257, ell_max=1024, d_e=d_e, L=layers, H=heads,
                                                     d_mlp=_MLP4), _CONTEXT,
                  f"GPT-2 (Radford et al. 2019): L = {layers}, d_e = {d_e}, H = {heads}, context 1024, "
                  f"vocabulary 50257, tied unembedding, GELU-tanh.  Checked against HF transformers' "
                  f"GPT2LMHeadModel; the paper reports {paper} (it left out the position embeddings and "
                  "counted an older vocabulary).")


def _gpt3(name, layers, d_e, heads, d_head, paper):
    note = ""
    if heads * d_head != d_e:
        note = (f"  Table 2.1 lists H·d_head = {heads * d_head} ≠ d_model = {d_e}; the preset follows the table "
                f"(d_attn = d_mid = {d_head}), so its count differs from the paper's {paper}.")
    head = _HEAD if heads * d_head == d_e else d_head    # the table's d_head, where it is not d_model/n_heads
    return _preset(name, "dtransformer", _GPT2, dict(N_V=50257, ell_max=2048, d_e=d_e, L=layers, H=heads,
                                                     d_attn=head, d_mid=head, d_mlp=_MLP4), _CONTEXT,
                  f"GPT-3 (Brown et al. 2020, Table 2.1): L = {layers}, d_model = {d_e}, H = {heads}, "
                  f"d_head = {d_head}, context 2048, the GPT-2 architecture (tied, GELU-tanh).  The paper "
                  f"reports {paper}.  No public implementation exists; the test counts it with an independent "
                  "formula.  GPT-3's alternating locally banded sparse layers are computed densely here." + note)


# ------------------------------------------------------------------------------------------------ Llama
#: Llama's architecture as HF's LlamaForCausalLM computes it: RMSNorm before each sublayer, SwiGLU, no biases, no
#: position table, rotate-half rotary embeddings in every attention sublayer.
_LLAMA = dict(norm="rms", eps=1e-5, position="none", activation="swiglu", bias=False, tied=False,
              norm_position="pre", rope="half", rope_theta=10000.0)


def _llama3(name, version, size, d_e, d_mlp, layers, heads, factor, tied, paper):
    source = ('Meta, "The Llama 3 herd of models", 2024, Table 3' if version == "3.1" else
              "the Llama 3.2 model card")
    options = dict(_LLAMA, tied=tied, n_kv_heads=8, rope_theta=500000.0, rope_scaling="llama3", rope_factor=factor,
                   rope_original=8192, rope_low=1.0, rope_high=4.0)
    return Preset(name, "dtransformer", options, dict(N_V=128256, d_e=d_e, L=layers, H=heads, d_mlp=d_mlp), 131072,
                  f"Llama {version} {size} (HF config.json of meta-llama/Llama-{version}-{size}; {source}): "
                  f"L = {layers}, d_e = {d_e}, H = {heads} heads of {d_e // heads}, grouped-query attention with "
                  f"8 key/value heads, SwiGLU MLP of width {d_mlp}, RMSNorm (ε = 1e-5), no biases, "
                  f"{'tied' if tied else 'untied'} unembedding, vocabulary 128256, context 131072; rotate-half "
                  f"rotary embeddings with θ = 500000 and the llama3 scaling rule (s = {factor:g}, N = 8192, "
                  "low 1, high 4).  Checked against HF transformers' LlamaForCausalLM.  "
                  f"Meta reports {paper} parameters.")


# ------------------------------------------------------------------------------------------------ presets
PRESETS = {p.name: p for p in [
    _gpt2("gpt2", 768, 12, 12, "117M"),
    _gpt2("gpt2-medium", 1024, 24, 16, "345M"),
    _gpt2("gpt2-large", 1280, 36, 20, "762M"),
    _gpt2("gpt2-xl", 1600, 48, 25, "1542M"),
    *(_preset(name, "etransformer",
              dict(position="learned", activation="gelu", tied=True, eps=1e-12, norm_position="post",
                   token_types=True, embedding_norm=True, unembedding_bias=True),
              dict(N_V=30522, ell_max=512, n_types=2, d_e=d_e, L=layers, H=heads, d_mlp=_MLP4), _CONTEXT,
             f"BERT-{size} (Devlin et al. 2019) as a masked-LM model: L = {layers}, d_e = {d_e}, H = {heads}, "
             "WordPiece vocabulary 30522, 512 positions, two token types, embedding layer norm, MLM head "
             "(W_f, GELU, LN) with the unembedding tied to W_e and an output bias.  Checked against HF "
             f"transformers' BertForMaskedLM (no pooler); the paper reports {paper} with the pooler and "
             "without the MLM head.")
      for name, size, d_e, layers, heads, paper in [("bert-base", "Base", 768, 12, 12, "110M"),
                                                    ("bert-large", "Large", 1024, 24, 16, "340M")]),
    _gpt3("gpt3-125m", 12, 768, 12, 64, "125M"),
    _gpt3("gpt3-350m", 24, 1024, 16, 64, "350M"),
    _gpt3("gpt3-760m", 24, 1536, 16, 96, "760M"),
    _gpt3("gpt3-1.3b", 24, 2048, 24, 128, "1.3B"),
    _gpt3("gpt3-2.7b", 32, 2560, 32, 80, "2.7B"),
    _gpt3("gpt3-6.7b", 32, 4096, 32, 128, "6.7B"),
    _gpt3("gpt3-13b", 40, 5140, 40, 128, "13.0B"),
    _gpt3("gpt3-175b", 96, 12288, 96, 128, "175.0B"),
    Preset("llama-2-7b", "dtransformer", _LLAMA, dict(N_V=32000, d_e=4096, L=32, H=32, d_mlp=11008), 4096,
           "Llama 2 7B (Touvron et al. 2023; HF config.json of meta-llama/Llama-2-7b-hf): L = 32, d_e = 4096, "
           "H = 32 (no grouped-query attention at 7B), SwiGLU MLP of width 11008, RMSNorm (ε = 1e-5), no "
           "biases, untied unembedding, vocabulary 32000, context 4096, rotate-half rotary position embeddings "
           "with θ = 10000 (HF's layout; Meta's code pairs the rows interleaved, the same model with its "
           "projections' rows permuted).  The rotation has no parameters; its FLOPs count under the full "
           "convention only.  Checked against HF transformers' LlamaForCausalLM.  The paper reports 7B."),
    *(_llama3(name, version, size, d_e, d_mlp, layers, heads, factor, tied, paper)
      for name, version, size, d_e, d_mlp, layers, heads, factor, tied, paper in [
          ("llama-3.1-8b", "3.1", "8B", 4096, 14336, 32, 32, 8.0, False, "8B"),
          ("llama-3.1-70b", "3.1", "70B", 8192, 28672, 80, 64, 8.0, False, "70B"),
          ("llama-3.1-405b", "3.1", "405B", 16384, 53248, 126, 128, 8.0, False, "405B"),
          ("llama-3.2-1b", "3.2", "1B", 2048, 8192, 16, 32, 32.0, True, "1.23B"),
          ("llama-3.2-3b", "3.2", "3B", 3072, 8192, 28, 24, 32.0, True, "3.21B")]),
    *(_preset(name, "etransformer",
              dict(position="learned", activation="gelu", eps=1e-12, norm_position="pre", inputs="patches",
                   head="classifier"),
              dict(d_patch=3 * patch * patch, ell=(224 // patch) ** 2, n_classes=1000, d_e=d_e, L=layers, H=heads,
                   d_mlp=_MLP4), Rule(("ell",)),
             f"ViT-{size}/{patch} (Dosovitskiy et al. 2021) on 224×224 images with 1000 classes: "
             f"{(224 // patch) ** 2} patches of 3·{patch}² values, a class token, L = {layers}, d_e = {d_e}, "
             f"H = {heads}, MLP width {d_mlp}, pre-LN, layer-norm ε = 1e-12 as HF's published configs have it "
             "(the authors' JAX code uses Flax's default 1e-6).  Checked against HF transformers' "
             f"ViTForImageClassification (no pooler); the paper reports {paper}.")
      for name, size, patch, d_e, layers, heads, d_mlp, paper in [
          ("vit-b16", "B", 16, 768, 12, 12, 3072, "86M"), ("vit-l16", "L", 16, 1024, 24, 16, 4096, "307M"),
          ("vit-h14", "H", 14, 1280, 32, 16, 5120, "632M")]),
    *(_preset(name, "swin", dict(eps=1e-5, mlp_ratio=4),
              dict(patch=4, channels=3, height=56, width=56, swin_window=7, n_classes=1000, H=heads, d_attn=32,
                   L_1=depths[0], L_2=depths[1], L_3=depths[2], L_4=depths[3]), Rule(("height", "width")),
             f"Swin-{size} (Liu et al. 2021, Table 1 and §3.3) on 224×224 images with 1000 classes: 4×4 patches "
             f"(a 56×56 grid), C = {32 * heads} (H = {heads} heads of 32 in stage 1, doubling), depths "
             f"{'/'.join(map(str, depths))}, windows of 7×7, MLP ratio 4.  Checked against HF transformers' "
             f"SwinForImageClassification, and its FLOPs against FlopCounterMode; the paper reports {paper} "
             f"— its FLOPs are multiply–accumulates, half the matmul convention's count.")
      for name, size, heads, depths, paper in [
          ("swin-t", "T", 3, (2, 2, 6, 2), "28M parameters and 4.5G FLOPs"),
          ("swin-s", "S", 3, (2, 2, 18, 2), "50M parameters and 8.7G FLOPs"),
          ("swin-b", "B", 4, (2, 2, 18, 2), "88M parameters and 15.4G FLOPs"),
          ("swin-l", "L", 6, (2, 2, 18, 2), "197M parameters and 34.5G FLOPs")]),
    _preset("transformer-base", "edtransformer",
            dict(position="sinusoidal-vaswani", activation="relu", tied=True, eps=1e-6, norm_position="post"),
            dict(N_V=37000, ell_max=512, d_e=512, L_enc=6, L_dec=6, H=8, d_mlp=_MLP4), _CONTEXT,
           "The base Transformer (Vaswani et al. 2017, Table 3): 6 + 6 layers, d_model = 512, H = 8, "
           "d_ff = 2048, sinusoidal positions, a shared source–target vocabulary of about 37000 tokens with "
           "one embedding matrix for both stacks and the pre-softmax projection.  No single public "
           "implementation is canonical; the test counts it with an independent formula.  The paper "
           "reports 65M."),
    Preset("show-attend-tell-coco", "show_attend_tell", dict(inputs="grid", gate=True, bias="single"),
           dict(height=14, width=14, d_z=512, d_e=512, d_h=1800, d_a=512, N_V=10000), None,
           "Show, Attend and Tell (Xu et al. 2015) with soft attention, at the sizes of the authors' MS COCO "
           "script (arctic-captions, evaluate_coco.py): VGG's conv5_4 grid of 14×14×512 (L = 196 locations, "
           "D = 512), word embeddings of 512, an LSTM of 1800, an attention MLP of 512 (the context's width), "
           "10000 words, the gate β.  A caption has no fixed length: give --seq-len (words).  The script "
           "deepens the attention MLP and f_init by one layer each and adds a bias inside f_att's tanh, which "
           "the paper's equations do not; no public implementation is canonical, so the test counts the "
           "equations' model with torch modules.  The paper reports no parameter count."),
]}


def get(name: str) -> Preset:
    """The preset called ``name``."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown preset {shown(name)}; known: {', '.join(PRESETS)}") from None
