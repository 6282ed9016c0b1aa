"""``formal-transformers complexity PRESET|--config FILE.toml [--seq-len LENGTH] [--batch SEQUENCES]
[--convention CONVENTION] [--dtype DTYPE] [--symbolic] [--kv contiguous|paged [--block TOKENS] [--samples SAMPLES]]
[--kv-window WINDOW] [--json]``: what a model costs.

Parameters, FLOPs of a forward pass and of a training step, activation memory and KV cache of a preset or a
configuration file, from the shipped cost formulas (:mod:`formal.models.costcache`, no sympy) or, with
``--symbolic``, as formulas; :func:`text` is the report as the command prints it.
"""

from __future__ import annotations

from ...costs.conventions import CONVENTIONS
from ...guards.files import json_text
from ...guards.limits import MAX_SIZE
from ..arguments import UsageError, bounded_int

__all__ = ["register", "text"]


def register(sub):
    """Add the ``complexity`` subcommand to the parser's subcommands."""
    from ...models.complexity import DTYPES
    from ..helptext import epilog
    p = sub.add_parser("complexity", help="Derive a model's parameters, FLOPs, memory and KV cache",
                       description="Derive what a model costs from its algorithm object: parameters, FLOPs of a "
                                   "forward pass and of a training step, activation memory, KV cache — of a preset "
                                   "or of a model configuration file, as numbers or (--symbolic) as formulas.",
                       epilog=epilog("complexity --list", "complexity llama-2-7b --seq-len 4096 --dtype bf16",
                                     "complexity gpt2 --kv paged --block 16 --json",
                                     "complexity --config mine.toml --symbolic"))
    p.add_argument("preset", nargs="?", metavar="PRESET", help="a preset name (see `complexity --list`)")
    p.add_argument("--config", metavar="FILE.toml", help="a model configuration file instead of a preset")
    p.add_argument("--list", action="store_true", help="list the presets")
    p.add_argument("--seq-len", type=bounded_int(1, MAX_SIZE), metavar="LENGTH",
                   help="sequence length (default: the preset's context)")
    p.add_argument("--batch", type=bounded_int(1, MAX_SIZE), metavar="SEQUENCES", help="sequences per batch "
                   "(default: 1)")
    p.add_argument("--convention", choices=tuple(CONVENTIONS), default="matmul", metavar="CONVENTION",
                   help=f"FLOP convention: {', '.join(CONVENTIONS)}")
    p.add_argument("--dtype", choices=tuple(DTYPES), metavar="DTYPE",
                   help=f"bytes per scalar: {', '.join(DTYPES)} (default: fp32)")
    p.add_argument("--symbolic", action="store_true", help="print the formulas instead of numbers")
    p.add_argument("--kv", choices=("contiguous", "paged"), default="contiguous", metavar="LAYOUT",
                   help="how the KV cache is kept: contiguous, or paged in blocks (PagedAttention: blocks, bytes "
                        "per block, waste against a contiguous reservation)")
    p.add_argument("--block", type=bounded_int(1, MAX_SIZE), metavar="TOKENS",
                   help="with --kv paged: tokens per block (default: 16, vLLM's)")
    p.add_argument("--samples", type=bounded_int(1, MAX_SIZE), metavar="SAMPLES",
                   help="with --kv paged: samples forked from the sequence as a shared prompt (default: 1)")
    p.add_argument("--kv-window", type=bounded_int(1, MAX_SIZE), metavar="WINDOW",
                   help="a KV cache that keeps each layer's last WINDOW tokens (a rolling buffer, as a "
                        "sliding-window decoder's): the per-sequence cache is min(LENGTH, WINDOW) tokens")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run)


def _run(args, out):
    from ...models import complexity, presets
    from ...models.config import load_config, size_names
    if args.list:
        _inapplicable(args, "--list", ("preset", "config", "seq_len", "batch", "dtype", "symbolic", "kv_window"))
        if args.json:
            rows = [{"name": p.name, "algorithm": p.algorithm, "seq_len": p.seq_len, "doc": p.doc}
                    for p in presets.PRESETS.values()]
            out.write(json_text({"presets": rows}))
            return
        names = max(len(p.name) for p in presets.PRESETS.values())
        algorithms = max(len(p.algorithm) for p in presets.PRESETS.values())
        for p in presets.PRESETS.values():
            out.write(f"{p.name:<{names}}  {p.algorithm:<{algorithms}}  {p.doc.split(':')[0]}\n")
        return
    if (args.preset is None) == (args.config is None):
        raise UsageError("give a preset name or --config FILE.toml (one of them)")
    if args.config is not None:
        name, algorithm, options, sizes, default_len = load_config(args.config)
    else:
        preset = presets.get(args.preset)
        name, algorithm, options, sizes, default_len = (preset.name, preset.algorithm, preset.options,
                                                        preset.sizes, preset.seq_len)
    if args.kv != "paged":
        _inapplicable(args, "--kv contiguous", ("block", "samples"))
    elif args.symbolic:
        raise UsageError("--kv paged prints numbers: it has no effect with --symbolic")
    if args.symbolic:  # the formulas as text: sympy
        model = complexity.Model(algorithm, options)
        _inapplicable(args, "--symbolic", ("seq_len", "batch", "dtype", "kv_window"))
        result = {"name": name, "algorithm": algorithm, "options": options, "convention": args.convention,
                  **complexity.formulas(model, args.convention)}
    else:  # numbers: from the formulas shipped with the package when it holds the model's (no sympy)
        model = complexity.model_formulas(algorithm, options)
        if args.config is not None:                   # a size may be named as `show` writes it (N_C, n_s)
            sizes = size_names(sizes, model.symbols, where=f"config file {args.config!r}")
        if args.seq_len is None and default_len is None:
            raise UsageError(f"{name} has no default sequence length: give --seq-len T")
        result = complexity.numeric_report(name, model, sizes, seq_len=args.seq_len, default_len=default_len,
                                           batch=args.batch or 1, convention=args.convention,
                                           dtype=args.dtype or "fp32", kv_window=args.kv_window)
        if args.kv_window is not None and not result["kv_cache"]:
            raise UsageError(f"--kv-window: {name} ({algorithm}) has no KV cache here; only decoder-only models "
                             "decode with one")
        if args.kv == "paged":
            if args.kv_window is not None:
                raise UsageError("--kv-window has no effect with --kv paged: paging keeps every token's blocks")
            if not result["kv_cache"]:
                raise UsageError(f"--kv paged: {name} ({algorithm}) has no KV cache here; only decoder-only "
                                  "models decode with one")
            result["kv_cache"]["paged"] = complexity.paged_report(result, block=args.block or 16,
                                                                  samples=args.samples or 1)
    if args.json:
        out.write(json_text(result))
    else:
        out.write(text(result, args.symbolic))


_FLAGS = {"preset": "a preset name", "config": "--config", "seq_len": "--seq-len", "batch": "--batch",
          "dtype": "--dtype", "symbolic": "--symbolic", "block": "--block", "samples": "--samples",
          "kv_window": "--kv-window"}


def _inapplicable(args, flag, dests):
    """Refuse an option that would be silently ignored beside ``flag``."""
    given = [d for d in dests if getattr(args, d) not in (None, False)]
    if given:
        raise UsageError(f"{_FLAGS[given[0]]} has no effect with {flag}")


def text(r, symbolic) -> str:
    """What ``complexity`` prints of a report (:func:`formal.models.complexity.numeric_report`, or the formulas
    with ``symbolic``)."""
    from ...models.complexity import grouped
    head = f"{r['name']}: {r['algorithm']}"
    if symbolic:
        lines = [head + f" ({r['convention']} convention), as formulas"]
        rows = [("parameters, total", r["params"]["total"]), ("  embedding", r["params"]["embedding"]),
                ("  non-embedding", r["params"]["non_embedding"]),
                ("FLOPs, forward (one sequence)", r["flops"]["forward_per_sequence"]),
                ("FLOPs, training step (one sequence)", r["flops"]["training_step_per_sequence"]),
                ("activations (scalars, one sequence)", r["memory"]["activations_scalars_per_sequence"])]
        if r["kv_cache"]:
            rows += [("KV cache (scalars per token)", r["kv_cache"]["scalars_per_token"])]
        return "\n".join(lines + [f"{k}:\n  {v}" for k, v in rows]) + "\n"
    f, m, p = r["flops"], r["memory"], r["params"]
    lines = [head + f" at sequence length {r['seq_len']}, batch {r['batch']}, {r['convention']} convention, "
                    f"{r['dtype']}",
             f"parameters          {grouped(p['total'])}  (embedding {grouped(p['embedding'])}, "
             f"non-embedding {grouped(p['non_embedding'])})",
             f"weights             {grouped(r['weights']['bytes'])} bytes ({r['weights']['bytes'] / 2**30:.2f} GiB) "
             f"in {r['dtype']}",
             f"FLOPs forward       {grouped(f['forward'])} per batch, {grouped(f['forward_per_sequence'])} per "
             f"sequence, {grouped(f['forward_per_token'])} per token",
             f"FLOPs training step {grouped(f['training_step'])} per batch, "
             f"{grouped(f['training_step_per_sequence'])} per sequence, "
             f"{grouped(f['training_step_per_token'])} per token",
             *([f"MACs forward        {grouped(f['forward_macs_per_sequence'])} per sequence (multiply–accumulates, "
                f"half the matmul FLOPs: the unit of Swin's and many vision papers' \"FLOPs\")"]
               if "forward_macs_per_sequence" in f else []),
             f"activation memory   {grouped(m['activations_bytes'])} bytes per batch "
             f"({m['activations_bytes'] / 2**30:.2f} GiB), {grouped(m['activations_bytes_per_token'])} per token"]
    if r["kv_cache"]:
        k = r["kv_cache"]
        lines.append(f"KV cache            {grouped(k['bytes_per_token'])} bytes per token, "
                     f"{grouped(k['bytes_per_sequence'])} per sequence ({k['bytes_per_sequence'] / 2**20:.1f} MiB)"
                     + (f", a rolling window of {grouped(k['window'])} tokens" if "window" in k else ""))
        if k.get("paged"):
            g = k["paged"]
            lines.append(f"KV paged, B = {g['block']:<4} {grouped(g['blocks'])} blocks per sequence, "
                         f"{grouped(g['bytes_per_block'])} bytes each; {grouped(g['wasted_slots'])} slots unused in "
                         f"the last block "
                         f"({grouped(g['wasted_bytes'])} bytes), where a contiguous reservation of "
                         f"{grouped(g['reservation'])} tokens leaves {grouped(g['reserved_waste'])} "
                         f"({grouped(g['reserved_waste_bytes'])} bytes)")
            if g["samples"] > 1:
                lines.append(f"KV paged, shared   {g['samples']} samples of this prompt hold "
                             f"{grouped(g['shared_prompt_blocks'])} blocks of it, "
                             f"{grouped(g['unshared_prompt_blocks'])} without sharing")
    else:
        lines.append("KV cache            none derived (only decoder-only models decode with a cache here)")
    if r.get("note"):
        lines.append(f"note: {r['note']}")
    return "\n".join(lines) + "\n"
