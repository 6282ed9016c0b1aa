"""Speed of ``formal-transformers check``: whole processes, interleaved, medians.

    python benchmarks/bench_check.py [--repeats N]

- the floor: ``python -c pass`` and ``formal-transformers complexity gpt2`` (budget 0.3 s);
- one model claim at a preset's options (budget 0.3 s per process: the shipped formulas, no sympy);
- 100 generated claims, a mix of what users write (budget 2 s): 40 model figures (approx, equals, ratios,
  formulas at the model's sizes), 20 formula identities and inequalities of algorithms, 20 asymptotic claims,
  10 graph claims (5 of them at long context or measured growth), 10 executed ops;
- the shipped catalogue (``check --catalogue``), which adds property claims that execute the spec on
  seeded examples.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_core import _table

PRESETS = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large", "gpt3-125m", "gpt3-175b",
           "llama-2-7b", "vit-b16")


def _claims() -> str:
    out = []

    def add(**fields):
        body = "\n".join(f"{k} = {v}" for k, v in fields.items())
        out.append(f"[[claim]]\nid = \"c{len(out)}\"\n{body}\n")
    for i in range(40):
        p = PRESETS[i % len(PRESETS)]
        kind = i // len(PRESETS)
        if kind == 0:
            add(model=f'"{p}"', quantity='"params.total"', approx='"100M"')
        elif kind == 1:
            add(model=f'"{p}"', quantity='"flops.forward_per_token"', at_least='"2*L*d_e**2"')
        elif kind == 2:
            add(model=f'"{p}"', quantity='"memory.activations_bytes"', at_most='"1 TB"')
        else:
            add(model=f'"{p}"', quantity='"params.non_embedding"', equals='"12*L*d_e**2"')
    for i in range(10):
        add(algorithm='"mhattention"', options="{ bias = false }", sizes='{ d_x = "d", d_z = "d", d_out = "d" }',
            quantity='"params"', equals=f'"{2 + i % 3}*H*d_attn*d + 2*H*d_mid*d"')
        add(algorithm='"attention"', quantity='"flops"', at_least=f'"{1 + i}*d_attn*ell_x*ell_z"')
    for i in range(10):
        add(algorithm='"attention"', quantity='"flops"', theta='"ell_x*ell_z"', **{"in": '["ell_x", "ell_z"]'})
        add(algorithm='"dinference"', options="{ kv_cache = true }", quantity='"flops"',
            big_o=f'"ell_gen**{2 + i % 2}"', **{"in": '["ell_gen"]'})
    for i in range(5):
        add(graph='"sliding-window"', args=f"{{ n = {140000 + i}, window = 4096, layers = 32 }}",
            quantity='"layers.receptive_field.max"', approx='"131K"')
        add(graph='"sliding-window"', args=f"{{ n = 1000, window = {2 + i} }}", quantity='"layers.max_path_length"',
            theta='"n"', **{"in": '["n"]'})
    for i in range(10):
        add(op='"softmax"', inputs=f"{{ x = [1, 2, {3 + i}] }}", approx="[0.1, 0.2, 0.7]", abs_tol="1")
    return "\n".join(out)


def _processes(commands: dict, repeats: int) -> dict:
    times = {name: [] for name in commands}
    for round_ in range(repeats + 1):
        for name, argv in commands.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{name} failed: {done.stderr.decode()[-500:]}")
            if round_:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    cli = [sys.executable, "-m", "formal"]
    with tempfile.TemporaryDirectory() as folder:
        hundred, one = os.path.join(folder, "hundred.toml"), os.path.join(folder, "one.toml")
        with open(hundred, "w") as f:
            f.write(_claims())
        with open(one, "w") as f:
            f.write('[[claim]]\nid = "gpt2"\nmodel = "gpt2"\nquantity = "params.total"\napprox = "124M"\n')
        commands = {"python -c pass": [sys.executable, "-c", "pass"],
                    "complexity gpt2": [*cli, "complexity", "gpt2"],
                    "check: 1 model claim": [*cli, "check", one],
                    "check: 100 mixed claims": [*cli, "check", hundred],
                    "check --catalogue": [*cli, "check", "--catalogue"]}
        medians = _processes(commands, args.repeats)
    budgets = {"complexity gpt2": 0.3, "check: 1 model claim": 0.3, "check: 100 mixed claims": 2.0}
    print("whole processes, interleaved; python -c pass is the floor")
    _table([(name, t, budgets.get(name)) for name, t in medians.items()], args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
