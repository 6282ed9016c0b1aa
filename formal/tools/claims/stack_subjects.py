"""The receptive field of stacked convolutions as a claim's quantity: ``algorithm = "conv1d"`` with
``quantity = "receptive_field"`` (``L`` stacked stride-1 layers, each dilated by the ``dilation`` of its
``options``) or ``"receptive_field_exponential"`` (layer ``l`` dilated by ``k^(l−1)``: WaveNet's dilations
1, 2, …, 512 with ``k = 2``), in the sizes ``L`` (layers) and ``k`` (the kernel), which ``sizes`` may bind.

The value is :func:`formal.algorithms.convolution.receptive_field`'s, which reads one layer's reach off the
conv1d object (``ℓ − ℓ_out`` without padding): a formula where a size is left free, so ``theta``/``leading``
claims in ``L`` are decided exactly, and a number where both are bound.  A graph pattern does not express
this stack: ``graph = "dilated"`` gives every layer the same dilation.
"""

from __future__ import annotations

from ...errors import shown
from .claim import ClaimError
from .values import Value, check_growing, formula_value, only, size_value

__all__ = ["STACK_QUANTITIES", "stack_value"]

#: The quantities of a stack of convolutions, and how each layer is dilated.
STACK_QUANTITIES = {"receptive_field": "the options' dilation", "receptive_field_exponential": "k^(l−1) at layer l"}
_SIZES = ("L", "k")


def stack_value(subject, quantity, growing=()) -> Value:
    """The receptive field of ``L`` stacked conv1d layers of kernel ``k`` (:data:`STACK_QUANTITIES`)."""
    import sympy as sp

    from ...algorithms import get
    from ...algorithms.convolution import receptive_field
    from ...core.symbols import by_name
    only(subject, ("algorithm", "options", "sizes"), "the receptive field of stacked convolutions")
    if subject["algorithm"] != "conv1d":
        raise ClaimError(f"quantity {shown(quantity)} is the receptive field of stacked convolutions: it goes with "
                         f"algorithm = \"conv1d\", not {shown(subject['algorithm'])}")
    conv = get("conv1d", **subject.get("options", {}))
    if conv.options["stride"] != 1:
        raise ClaimError(f"options stride = {conv.options['stride']}: the receptive field of stacked convolutions "
                         "is derived for stride 1")
    sizes = subject.get("sizes", {})
    unknown = sorted(set(sizes) - set(_SIZES))
    if unknown:
        raise ClaimError(f"the receptive field of stacked convolutions has no size {shown(unknown[0])}; its sizes: "
                         "L (layers), k (the kernel)")
    check_growing(growing, _SIZES, sizes, "the receptive field of stacked convolutions")
    bound, named = {}, {}
    for name in _SIZES:
        value = size_value(name, sizes[name]) if name in sizes else None
        bound[name] = (by_name(name) if value is None else sp.Integer(value) if isinstance(value, int)
                       else value.sympy())
        if value is not None:
            named[name] = value if isinstance(value, int) else bound[name]
    dilation = "exponential" if quantity == "receptive_field_exponential" else conv.options["dilation"]
    field = receptive_field(bound["L"], bound["k"], dilation)
    return formula_value(sp.sympify(field), f"conv1d {quantity} ({STACK_QUANTITIES[quantity]})", bound=named)
