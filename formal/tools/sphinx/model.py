"""``.. formal:model::`` — a model's figures and formulas (a preset, or a configuration file of one's own), and
``.. formal:models::`` — the presets of a family side by side."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from . import nodes as build
from .entry import Entry

__all__ = ["ModelDirective", "ModelsDirective", "human", "human_bytes"]

_UNITS = ((10 ** 12, "T"), (10 ** 9, "B"), (10 ** 6, "M"), (10 ** 3, "K"))


def human(n) -> str:
    """``124,439,808 (124.4 M)``: the exact figure, and its size in thousands (K), millions (M), billions (B)
    or trillions (T) where it has one."""
    from ...models.complexity import grouped
    short = next((f"{n / size:,.1f} {unit}" for size, unit in _UNITS if abs(n) >= size), None)
    return grouped(n) + (f" ({short})" if short else "")


def human_bytes(n) -> str:
    """``4,253,048,832 B (3.96 GiB)``: the exact figure, and its size in binary units
    (:func:`formal.guards.limits.format_size`, as the memory limits are written)."""
    from ...guards.limits import format_size
    from ...models.complexity import grouped
    return f"{grouped(n)} B" + (f" ({format_size(n)})" if abs(n) >= 1024 else "")


def _sizes_math(sizes: dict, stated) -> list:
    """Each size as ``d_e = 768`` in the paper's glyphs, the derived ones (not stated) marked so."""
    import sympy as sp

    from ...core.symbols import info
    out = []
    for name, value in sizes.items():
        symbol = info(sp.Symbol(name))
        tex = symbol.tex if symbol is not None else name
        group = nodes.inline()
        group += build.math(f"{tex} = {value:,}".replace(",", r"\,"))
        if name not in stated:
            group += nodes.emphasis(text=" (derived)")
        out.append(group)
    return build.joined(out)


def _figures(figures: dict, seq_len) -> list:
    f, p = figures["flops"], figures["params"]
    rows = [["parameters", human(p["total"])], ["  embedding", human(p["embedding"])],
            ["  non-embedding", human(p["non_embedding"])]]
    if seq_len is not None:
        rows += [[f"FLOPs forward (matmul, {seq_len:,} tokens)", human(f["forward_per_sequence"])],
                 ["FLOPs forward per token", human(f["forward_per_token"])],
                 ["multiply–accumulates forward", human(f["forward_macs_per_sequence"])],
                 ["FLOPs of a training step", human(f["training_step_per_sequence"])],
                 ["activation memory (fp32)", human_bytes(figures["memory"]["activations_bytes"])]]
        if figures["kv_cache"]:
            rows.append(["KV cache per token (fp32)", human_bytes(figures["kv_cache"]["bytes_per_token"])])
    return rows


def _model(name: str, path: str | None):
    """(label, algorithm, options, stated sizes, seq_len, doc, figures) of a preset or a config file."""
    from ...models.complexity import Model, preset_report, report
    from ...models.config import load_config
    from ...models.presets import get
    if path is None:
        preset = get(name)
        figures = preset_report(name, seq_len=preset.seq_len or 1)
        stated = {k for k in preset.sizes if k not in preset.derived}
        return name, preset.algorithm, preset.options, stated, preset.seq_len, preset.doc, figures
    label, algorithm, options, sizes, seq_len = load_config(path)
    figures = report(Model(algorithm, options), sizes, seq_len=seq_len or 1)
    return name or label, algorithm, options, set(sizes), seq_len, f"the configuration in {label}", figures


class ModelDirective(Entry):
    """``.. formal:model:: PRESET`` — what ``complexity PRESET`` prints, and the formulas behind it; with
    ``:file: PATH.toml`` (relative to the page) a configuration file of one's own, as ``complexity --config``
    reads it (the argument, optional, then names it)."""

    kind = "model"
    required_arguments = 0
    optional_arguments = 1
    option_spec = {"file": directives.unchanged_required, "noindex": directives.flag}

    def run(self):
        from ...core.symbols import latex
        from ...errors import FormalError
        from ...models.complexity import Model
        where = self.options.get("file")
        name = self.arguments[0] if self.arguments else None
        if name is None and where is None:
            return self.fail("formal:model needs a preset name or :file: PATH.toml")
        try:
            path = self.env.relfn2path(where)[1] if where else None
            label, algorithm, options, stated, seq_len, doc, figures = _model(name, path)
            model = Model(algorithm, options)
            params, flops = latex(model.params()["total"]), latex(model.forward("matmul").flops)
        except FormalError as error:
            return self.fail(f"formal:model {name or where}: {error}")
        out = self.target(label, [f"{label} (model)" if where else f"{label} (preset)"])
        out.append(build.para(nodes.strong(text="Algorithm: "), build.xref("alg", algorithm), f" — {doc}"))
        shown = ", ".join(f"{k}={v!r}" for k, v in options.items())
        out.append(build.field_list([("Options", [nodes.literal(text=shown)] if shown else "the algorithm's defaults"),
                                     ("Sizes", _sizes_math(figures["sizes"], stated))]))
        out.append(build.table(["figure", "value"], _figures(figures, seq_len), classes=("formal-figures",),
                               widths=[45, 55]))
        out.append(build.field_list([("Parameters", [build.math(params)]),
                                     ("FLOPs forward (matmul)", [build.math(flops)])]))
        return out


class ModelsDirective(SphinxDirective):
    """``.. formal:models:: PRESET PRESET …`` — presets side by side (HF's configuration tables): the sizes
    that tell them apart, parameters, forward FLOPs per token and the KV cache per token."""

    required_arguments = 1
    optional_arguments = 100
    has_content = False

    def run(self):
        from ...errors import FormalError
        from ...models.complexity import preset_report
        from ...models.presets import get
        rows, sizes = [], ("L", "d_e", "H", "d_mlp", "ell_max")
        for name in self.arguments:
            try:
                preset = get(name)
                r = preset_report(name, seq_len=preset.seq_len or 1)
            except FormalError as error:
                from sphinx.util import logging
                logging.getLogger(__name__).warning(f"formal:models {name}: {error}", location=self.get_location())
                continue
            kv = r["kv_cache"]["bytes_per_token"] if r["kv_cache"] else None
            per_token = r["flops"]["forward_per_token"] if preset.seq_len is not None else None
            rows.append([[build.xref("model", name)], *(f"{r['sizes'][k]:,}" if k in r["sizes"] else "—"
                                                        for k in sizes),
                         human(r["params"]["total"]), "—" if per_token is None else human(per_token),
                         "—" if kv is None else human_bytes(kv)])
        header = ["preset", *_size_headers(sizes), "parameters", "FLOPs/token (forward, at its context)",
                  "KV cache/token (fp32)"]
        return [build.table(header, rows, classes=("formal-family",), widths=[12, 5, 7, 5, 7, 7, 19, 19, 19])]


def _size_headers(names) -> list:
    import sympy as sp

    from ...core.symbols import info
    return [[build.math(info(sp.Symbol(n)).tex)] for n in names]
