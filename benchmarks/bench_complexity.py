"""Speed of ``complexity``, and its counts beside HF transformers', printed as tables.

    python benchmarks/bench_complexity.py [--repeats N] [--no-hf]

- whole processes, interleaved so that the machine's noise falls on all alike: ``python -c pass`` and
  ``python -c "import numpy"`` (the floor and a yardstick), ``formal-transformers complexity P`` for presets
  small and large, decoder-only, encoder-only and encoder–decoder (budget 0.3 s: the shipped formulas of
  :mod:`formal.models.costcache`, no sympy), and for contrast ``--symbolic`` and a configuration whose options the
  cache does not hold (both derive with sympy);
- GPT-2 small built by HF transformers from its configuration (random weights, nothing downloaded): the
  parameter count against ``sum(numel)`` and the forward FLOPs at a short length against torch's
  ``FlopCounterMode``, with HF's SDPA attention and with its eager (explicit matmul) attention.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

from bench_core import _table

PRESETS = ("gpt2", "llama-2-7b", "gpt3-175b", "bert-large", "vit-h14", "transformer-base")
BUDGET = 0.3  # seconds per whole process: the budget of complexity and check

#: A configuration the cache does not hold (grouped-query attention): derived with sympy.
UNCACHED = """algorithm = "dtransformer"
seq_len = 2048
[options]
n_kv_heads = 8
norm = "rms"
activation = "swiglu"
bias = false
position = "none"
[sizes]
N_V = 32000
d_e = 4096
L = 32
H = 32
d_mlp = 11008
"""


def _processes(commands: dict, repeats: int) -> dict:
    """Median seconds of each whole process (name → argv), run interleaved after one warm-up run each."""
    times = {name: [] for name in commands}
    for round_ in range(repeats + 1):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            if round_:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def _speed(repeats: int) -> None:
    py = sys.executable
    cli = [py, "-m", "formal", "complexity"]
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "gqa.toml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(UNCACHED)
        commands = {"python -c pass": [py, "-c", "pass"], "python -c 'import numpy'": [py, "-c", "import numpy"],
                    **{f"complexity {p}": cli + [p] for p in PRESETS},
                    "complexity gpt3-175b --json --seq-len 2000 --batch 8 --convention full":
                        cli + ["gpt3-175b", "--json", "--seq-len", "2000", "--batch", "8", "--convention", "full"],
                    "complexity gpt2 --symbolic (sympy)": cli + ["gpt2", "--symbolic"],
                    "complexity --config (options not cached: sympy)": cli + ["--config", config]}
        medians = _processes(commands, repeats)
    _table([(name, t, BUDGET if name.startswith("complexity") and "sympy" not in name else None)
            for name, t in medians.items()], repeats)


def _gpt2_counts(seq_len: int) -> None:
    """GPT-2 small: the package's parameters and forward FLOPs (matmul convention) against HF's model."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import torch
        import transformers
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError as exc:
        print(f"(HF comparison skipped: {exc.name} is not installed)")
        return
    from formal.models.complexity import preset_report
    report = preset_report("gpt2", seq_len=seq_len)
    sizes = report["sizes"]
    # the score products KᵀQ (2·ℓ²·d_attn a head) and value products V·A (2·ℓ²·d_mid a head) of every layer
    attention = 2 * sizes["L"] * sizes["H"] * seq_len ** 2 * (sizes["d_attn"] + sizes["d_mid"])
    ours = report["flops"]["forward_per_sequence"]
    print(f"\nGPT-2 small (HF transformers {transformers.__version__}, GPT2LMHeadModel from GPT2Config(), random "
          f"weights, torch {torch.__version__}), batch 1, ℓ = {seq_len}, matmul convention:")
    rows = []
    for implementation in ("sdpa", "eager"):
        torch.manual_seed(0)
        config = transformers.GPT2Config(attn_implementation=implementation)
        model = transformers.GPT2LMHeadModel(config).eval()
        if implementation == "sdpa":  # parameters() yields the tied wte / lm_head matrix once
            rows.append(("parameters", report["params"]["total"], sum(p.numel() for p in model.parameters()), ""))
        x = torch.randint(0, config.vocab_size, (1, seq_len))
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(x)
        theirs = counter.get_total_flops()
        note = ("equal" if theirs == ours else
                f"HF lower by {ours - theirs:,}" + (" = the attention products" if ours - theirs == attention else ""))
        rows.append((f"forward FLOPs, {implementation} attention", ours, theirs, note))
    print(f"  {'figure':<30} {'formal-transformers':>20} {'HF / FlopCounterMode':>21}")
    for name, a, b, note in rows:
        print(f"  {name:<30} {a:>20,} {b:>21,}  {note or ('equal' if a == b else 'differ')}")
    print(textwrap.fill(
        "FlopCounterMode counts no FLOPs for scaled_dot_product_attention on the CPU, so with HF's SDPA attention "
        "its count is lower than the package's by the attention score and value products, "
        f"2·L·H·ℓ²·(d_attn + d_mid) = {attention:,}; with eager attention (explicit matmuls, which it counts) the "
        "two agree. The package's count is the right one: the matmul convention counts those products.", 110))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--seq-len", type=int, default=64, help="length of the HF FLOP comparison (default 64)")
    parser.add_argument("--no-hf", action="store_true", help="skip the comparison with HF transformers")
    args = parser.parse_args(argv)
    _speed(args.repeats)
    if not args.no_hf:
        _gpt2_counts(args.seq_len)


if __name__ == "__main__":
    main()
