"""One naming scheme from a value's ASCII name to its symbol, in text and in LaTeX — what ``show``, ``show
--latex``, the docs and a notebook all write for a parameter, in its list and in the lines that use it.

A name is ``[prefix_]*base[_part]*``:

- a base that is a word (``loss``, ``data``, ``table``) is upright; a base that is a Greek letter's name, with a
  number, is that letter with the number as its index: ``gamma1`` → γ¹ (``\\gamma^{1}``), the paper's γ¹_l of
  the first layer norm;
- an accent part puts the accent on the base: ``B_hat`` → B̂, ``x_bar`` → x̄, ``X_tilde`` → X̃;
- a part that is a word (``mlp1``, ``head``, ``patch``, ``init``) is an upright subscript, a part of one or two
  letters (``q``, ``xi``) an italic one: ``W_mlp1`` → W_mlp1 (``W_{\\mathrm{mlp1}}``), ``W_q`` → ``W_{q}``;
- a prefix says which stack, stage or block the parameter belongs to — ``enc``, ``dec``, ``cross`` (the paper's
  e/d), a Swin stage ``s1`` … and its shifted-window block ``sw``, HAN's word and sentence levels ``w`` and ``s``
  — and is an upright superscript: ``enc_W_mlp1`` → ``W_{\\mathrm{mlp1}}^{\\mathrm{enc}}``, ``s1_sw_W_q`` →
  ``W_{q}^{\\mathrm{s1},\\mathrm{sw}}`` (text ``W_q^(s1,sw)``), to which a layer index is added (``^{…, l}``).
"""

from __future__ import annotations

import re

__all__ = ["symbol", "GREEK", "WORDS", "PREFIXES", "with_index"]

GREEK = {"alpha": ("α", r"\alpha"), "beta": ("β", r"\beta"), "gamma": ("γ", r"\gamma"), "delta": ("δ", r"\delta"),
         "epsilon": ("ε", r"\varepsilon"), "eta": ("η", r"\eta"), "theta": ("θ", r"\theta"),
         "lambda": ("λ", r"\lambda"), "mu": ("μ", r"\mu"), "sigma": ("σ", r"\sigma"), "tau": ("τ", r"\tau")}
ACCENTS = {"hat": ("\u0302", r"\hat"), "bar": ("\u0304", r"\bar"), "tilde": ("\u0303", r"\tilde")}
#: Subscripts set upright: words, not indices.
WORDS = {"mlp", "mlp1", "mlp2", "mlp3", "mlp4", "head", "patch", "init", "src", "pool", "class", "img", "out", "gen",
         "gate", "attn", "mid", "max", "final"}
#: Which stack, stage or block a parameter belongs to (``s1`` … are Swin's stages).
PREFIXES = {"enc": "enc", "dec": "dec", "cross": "e/d", "sw": "sw", "s": "s", "w": "w"}
_STAGE = re.compile(r"s\d+")
_GREEK_INDEXED = re.compile(r"(" + "|".join(GREEK) + r")(\d*)")


def _is_prefix(tokens: list) -> bool:
    if len(tokens) < 2 or not (tokens[0] in PREFIXES or _STAGE.fullmatch(tokens[0])):
        return False
    following = tokens[1]
    return following[:1].isupper() or following == "b" or bool(_GREEK_INDEXED.fullmatch(following)) or \
        following in PREFIXES or bool(_STAGE.fullmatch(following))


def symbol(name: str, latex: bool = False) -> str | None:
    """``name`` as a symbol, or None where the scheme has nothing to add (a plain ``W_q`` or ``X`` in text)."""
    tokens = name.split("_")
    prefixes = []
    while _is_prefix(tokens):
        prefixes.append(PREFIXES.get(tokens[0], tokens[0]))
        tokens = tokens[1:]
    base, parts = tokens[0], tokens[1:]
    if not base:
        return None
    greek = _GREEK_INDEXED.fullmatch(base)
    index = ""
    if greek:
        glyph, tex = GREEK[greek.group(1)]
        index, base_text, base_tex = greek.group(2), glyph, tex
    else:
        word = len(base) > 2 and base.isalpha()       # a value named by a word (loss, data, table): upright
        base_text, base_tex = base, (rf"\mathrm{{{base}}}" if word else base)
    subs = []
    for part in parts:
        if part in ACCENTS:
            mark, command = ACCENTS[part]
            base_text, base_tex = base_text + mark, rf"{command}{{{base_tex}}}"
        elif part:
            subs.append(part)
    if not (prefixes or greek or base_tex != base or len(subs) != len(parts) or any(p in WORDS for p in subs)):
        return None
    sups = ([index] if index else []) + prefixes
    if latex:
        sub = ",".join(rf"\mathrm{{{p}}}" if p in WORDS or len(p) > 2 else p for p in subs)
        sup = ",".join(s if s.isdigit() else rf"\mathrm{{{s}}}" for s in sups)
        return base_tex + (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
    sub = ",".join(subs)
    sup = f"({','.join(([index] if index else []) + prefixes)})" if prefixes else index
    return base_text + (f"_{sub}" if sub else "") + (f"^{sup}" if sup else "")


def with_index(name: str, index: str, latex: bool = False) -> str:
    """``name`` (a rendered symbol) with ``index`` (a layer, a head) added to its superscript: a prefix's
    superscript keeps its words (``W^{\\mathrm{enc}}`` → ``W^{\\mathrm{enc},l}``); a loop variable's is replaced
    (``K^{g}`` of a per-head value → ``K^{⌈…⌉}``)."""
    stem, caret, sup = name.partition("^")
    if latex and caret and sup.startswith("{\\mathrm"):
        return f"{stem}^{{{sup[1:-1]},{index}}}"
    if not latex and caret and sup.startswith("(") and sup.endswith(")"):
        return f"{stem}^{sup[:-1]},{index})"
    return f"{stem}^{{{index}}}" if latex else f"{stem}^{index}"
