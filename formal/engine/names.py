"""One naming scheme from a value's ASCII name to its symbol, in text and in LaTeX.

Every rendering — ``show``, ``show --latex``, the docs' parameter lists and lines — writes a name through
:func:`symbol`, so a parameter reads the same in the parameter list and in the lines that use it.  A name is
read as ``[prefixes_]stem[digits][_sub…][_back]``:

- prefixes name a stack or stage (``enc_``, ``dec_``, ``cross_`` — the paper's ``e/d`` —, Swin's ``s1_``, ``sw_``,
  HAN's ``w_``/``s_``) and become upright superscript tags: ``enc_W_mlp1`` → ``W^enc_mlp1``;
- a Greek stem is its letter (``gamma`` → γ), and trailing digits are the layer-norm index, a superscript:
  ``gamma1`` → ``γ^1``; a layer index then goes below: ``γ^1_l``, as the paper writes it;
- ``_hat``, ``_tilde``, ``_bar`` accent the stem (``B_hat`` → B̂); ``_back`` marks a backward recurrence (←);
- the other parts are subscripts, words of several letters upright (``W_mlp1`` → ``W_{\\mathrm{mlp1}}``);
- a loop index (``index``: a per-layer slice) is a superscript, as the paper's ``W^l_mlp1``.
"""

from __future__ import annotations

import re

__all__ = ["symbol", "GREEK", "WORDS"]

#: Greek stems → (text, LaTeX).
GREEK = {"alpha": ("α", r"\alpha"), "beta": ("β", r"\beta"), "gamma": ("γ", r"\gamma"), "theta": ("θ", r"\theta"),
         "eta": ("η", r"\eta"), "tau": ("τ", r"\tau"), "delta": ("δ", r"\delta"), "sigma": ("σ", r"\sigma")}

#: Whole names the scheme does not derive → (text, LaTeX).
SPECIAL = {
    "V_tilde": ("Ṽ", r"\tilde{V}"), "v_tilde": ("ṽ", r"\tilde{v}"), "e_hat": ("ê", r"\hat{e}"),
    "mask": ("Mask", r"\mathrm{Mask}"), "Z_final": ("Z", "Z"), "alpha_map": ("α", r"\alpha"),
    "w_beta": ("w_β", r"w_{\beta}"), "W_beta": ("W_β", r"W_{\beta}"), "b_beta": ("b_β", r"b_{\beta}"),
    "loss": ("loss", r"\mathrm{loss}"), "data": ("data", r"\mathrm{data}"), "types": ("types", r"\mathrm{types}"),
    "sources": ("sources", r"\mathrm{sources}"), "targets": ("targets", r"\mathrm{targets}"),
}

#: Prefix tags → (text, LaTeX) of the superscript they become.
_TAGS = {"enc": ("enc", r"\mathrm{enc}"), "dec": ("dec", r"\mathrm{dec}"), "cross": ("e/d", r"\mathrm{e/d}"),
         "sw": ("sw", r"\mathrm{sw}"), "w": ("w", r"\mathrm{w}"), "s": ("s", r"\mathrm{s}")}
_STAGE = re.compile(r"s(\d+)$")
_ACCENTS = {"hat": ("\u0302", r"\hat"), "tilde": ("\u0303", r"\tilde"), "bar": ("\u0304", r"\bar")}
#: Subscript words written upright in LaTeX (a word, not a product of indices).
WORDS = frozenset({"head", "patch", "class", "init", "pool", "img", "src", "gate", "mlp", "mlp1", "mlp2", "mlp3",
                   "mlp4", "enc", "dec", "attn", "max", "gen", "out", "final", "data", "epochs", "mask"})
_PER_HEAD = ("Y", "K", "V")  # the values a head loop computes (K_g, V_g per key/value head)


def _tag(part: str):
    stage = _STAGE.match(part)
    if stage:
        return (f"s{stage.group(1)}", rf"\mathrm{{s{stage.group(1)}}}")
    return _TAGS.get(part)


def _is_param_stem(rest: list) -> bool:
    """Whether the parts after a prefix still name a parameter (``W_q``, ``b_k``, ``gamma1``, ``sw_…``)."""
    head = rest[0]
    return head[:1].isupper() or head == "b" or re.sub(r"\d+$", "", head) in GREEK or _tag(head) is not None


def _sub_latex(part: str) -> str:
    return rf"\mathrm{{{part}}}" if part in WORDS or (len(part) > 2 and not part.isdigit()) else part


def _join(items, latex):
    if latex:
        return ",".join(items)
    return items[0] if len(items) == 1 else "(" + ",".join(items) + ")"


def symbol(name: str, *, latex: bool = False, index: str | None = None) -> str:
    """The symbol of ``name`` (text, or LaTeX with ``latex``); ``index`` is a loop index it is sliced at."""
    if name in SPECIAL:
        written = SPECIAL[name][latex]
        return written if index is None else (f"{written}^{{{index}}}" if latex else f"{written}^{index}")
    parts = name.split("_")
    tags = []
    while len(parts) > 1 and _tag(parts[0]) is not None and _is_param_stem(parts[1:]):
        tags.append(_tag(parts.pop(0))[latex])
    back = len(parts) > 1 and parts[-1] == "back"
    if back:
        parts.pop()
    stem, subs = parts[0], parts[1:]
    digits = re.search(r"\d+$", stem) if re.sub(r"\d+$", "", stem) in GREEK else None
    sups = [digits.group()] if digits else []
    stem = stem[:digits.start()] if digits else stem
    base = GREEK[stem][latex] if stem in GREEK else stem
    if subs and subs[-1] in _ACCENTS:
        mark = _ACCENTS[subs.pop()]
        base = f"{mark[1]}{{{base}}}" if latex else base + mark[0]
    if len(subs) == 1 and subs[0] in ("h", "g") and stem in _PER_HEAD:
        sups, subs = [index or subs[0]], []   # a per-head value: Y_h → Y^h, its slice K^⌈2h/H⌉ (b_h is not)
    elif index is not None:
        (subs if digits else sups).insert(0, index)  # γ^1_l, W^l_mlp1: as the paper writes them
    sups += tags
    if back:
        sups.append(r"\leftarrow" if latex else "←")
    if latex:
        subs = [_sub_latex(s) for s in subs]
        sub = f"_{{{_join(subs, True)}}}" if subs else ""
        sup = f"^{{{_join(sups, True)}}}" if sups else ""
        return base + sup + sub
    return base + (f"^{_join(sups, False)}" if sups else "") + (f"_{_join(subs, False)}" if subs else "")
