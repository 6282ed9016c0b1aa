"""One signature entry as the renderings write it: ``x ∈ [N_V]^ℓ``, ``W_q ∈ ℝ^(d_attn×d_x)``, ``Mask ∈ {0,1}^…``."""

from __future__ import annotations

from ..core.shapes import shape_latex, shape_text
from ..core.symbols import latex as sym_latex, text as sym_text
from .names import symbol

__all__ = ["signature_entry"]


def signature_entry(spec, latex=False):
    """``spec`` as an entry of the signature, its name as its symbol (text, or LaTeX with ``latex``)."""
    name = symbol(spec.name, latex=latex)
    if spec.kind == "index":
        bound = sym_latex(spec.bound) if latex else sym_text(spec.bound)
        power = "" if not spec.shape else (f"^{{{shape_latex(spec.shape)}}}" if latex
                                           else f"^{shape_text(spec.shape)}")
        return rf"{name} \in [{bound}]{power}" if latex else f"{name} ∈ [{bound}]{power}"
    space = (r"\{0,1\}" if latex else "{0,1}") if spec.kind == "mask" else (r"\mathbb{R}" if latex else "ℝ")
    if not spec.shape:
        return rf"{name} \in {space}" if latex else f"{name} ∈ {space}"
    return (rf"{name} \in {space}^{{{shape_latex(spec.shape)}}}" if latex
            else f"{name} ∈ {space}^({shape_text(spec.shape)})")
