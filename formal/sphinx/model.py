"""``.. formal:model::`` — a preset's figures and formulas."""

from __future__ import annotations

from docutils import nodes

from . import nodes as build
from .entry import Entry

__all__ = ["ModelDirective"]


class ModelDirective(Entry):
    """``.. formal:model:: PRESET`` — what ``complexity PRESET`` prints, and the formulas behind it."""

    kind = "model"

    def run(self):
        from ..core.symbols import latex
        from ..errors import FormalError
        from ..models.complexity import Model, grouped, preset_report
        from ..models.presets import get
        name = self.arguments[0]
        try:
            preset = get(name)
            figures = preset_report(name, seq_len=preset.seq_len or 1)
            model = Model(preset.algorithm, preset.options)
        except FormalError as error:
            return self.fail(f"formal:model {name}: {error}")
        out = self.target(name, [f"{name} (preset)"])
        out.append(build.para(nodes.strong(text=f"{name}: "), build.xref("alg", preset.algorithm), f" — {preset.doc}"))
        sizes = ", ".join(f"{k} = {v}" for k, v in preset.sizes.items())
        options = ", ".join(f"{k}={v!r}" for k, v in preset.options.items())
        f, p = figures["flops"], figures["params"]
        rows = [["parameters", grouped(p["total"])], ["  embedding", grouped(p["embedding"])],
                ["  non-embedding", grouped(p["non_embedding"])]]
        if preset.seq_len is not None:
            rows += [[f"FLOPs forward (matmul, {preset.seq_len} tokens)", grouped(f["forward_per_sequence"])],
                     ["FLOPs forward per token", grouped(f["forward_per_token"])],
                     ["multiply–accumulates forward", grouped(f["forward_macs_per_sequence"])],
                     ["FLOPs of a training step", grouped(f["training_step_per_sequence"])],
                     ["activation memory (fp32 bytes)", grouped(figures["memory"]["activations_bytes"])]]
            if figures["kv_cache"]:
                rows.append(["KV cache (fp32 bytes per token)", grouped(figures["kv_cache"]["bytes_per_token"])])
        out.append(build.field_list([("Options", options or "the algorithm's defaults"), ("Sizes", sizes)]))
        out.append(build.table(["figure", "value"], rows, classes=("formal-figures",), widths=[45, 55]))
        out.append(build.field_list([("Parameters", [build.math(latex(model.params()["total"]))]),
                                ("FLOPs forward (matmul)", [build.math(latex(model.forward("matmul").flops))])]))
        return out
