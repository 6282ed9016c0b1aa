"""Speed figures of the torch reference, printed as a table of medians.

    python benchmarks/bench_reference.py [--repeats N] [--device auto|cpu|cuda] [--seq-len T] [--dtype D]
                                         [--skip-verify] [--tiny] [--json FILE]

- ``formal-transformers verify --profile quick`` as a whole process with ``--jobs 1`` and ``--jobs 2``, interleaved:
  wall and CPU seconds (target: under 30 s wall on 2 CPU cores);
- one forward pass of GPT-2 small (124M parameters, random weights, batch 1) through the reference
  (explicit and SDPA attention paths) and through HF ``GPT2LMHeadModel`` on the same weights, measured
  interleaved in the same process, and the ratio reference / HF (the reference's budget on a GPU: ≤ 1.25);
  ``--json FILE`` writes these figures (``benchmarks/gpu_check.py`` reads them), ``--tiny`` times a 2-layer
  GPT-2 of width 64 instead (a test of the benchmark itself, in seconds on a CPU: its figures mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

#: The design's budget for the reference on a GPU: its fast (SDPA) path within this factor of HF's time.
HF_BUDGET = 1.25
#: The path the budget is judged on: the fast one (the explicit path is there to be counted, not to be fast).
BUDGET_PATH = "reference, sdpa path"
#: ``--tiny``: the smallest GPT-2 that takes every code path of the small one.
TINY = {"n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 256}


def _forward_timings(repeats, device, seq_len, dtype, tiny=False):
    import torch
    import transformers

    from reference.model import architectures, third_party
    from reference.model.convert import params_to_torch
    from reference.model.device import device as resolve_device, dtype as resolve_dtype

    dev, dt = resolve_device(device), resolve_dtype(dtype)
    torch.manual_seed(0)
    config = transformers.GPT2Config(bos_token_id=None, eos_token_id=None, attn_implementation="sdpa",
                                     **(TINY if tiny else {}))
    model = transformers.GPT2LMHeadModel(config).eval()                 # GPT-2 small: 12 layers, d_e 768
    params, options = third_party.from_gpt2(model)
    model = model.to(device=dev, dtype=dt)
    theta = params_to_torch(params, dtype=dt, device=dev)
    x = torch.randint(0, config.vocab_size, (1, seq_len), device=dev)
    runs = {"HF GPT2LMHeadModel": lambda: model(x).logits,
            "reference, sdpa path": lambda: architectures.dtransformer(x, theta, options, path="sdpa"),
            "reference, explicit path": lambda: architectures.dtransformer(x, theta, options, path="explicit")}
    times = {name: [] for name in runs}

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    with torch.no_grad():
        err = (runs["HF GPT2LMHeadModel"]() - runs["reference, sdpa path"]()).abs().max().item()
        for f in runs.values():  # warm up
            f()
        for _ in range(repeats):  # interleaved, so that the machine's noise falls on all alike
            for name, f in runs.items():
                sync()
                start = time.perf_counter()
                f()
                sync()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}, err, dev, dt


def _wall_and_cpu(argv):
    """Wall and CPU seconds of one whole process: user + system, its worker processes included (Linux's wait4
    reports a child's usage with that of the children it has reaped)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--dtype", default="float32", choices=("float64", "float32", "bfloat16"))
    parser.add_argument("--skip-verify", action="store_true", help="only the forward-pass timings")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer GPT-2 of width 64 (tests the benchmark)")
    parser.add_argument("--json", metavar="FILE", help="also write the forward-pass figures as JSON to FILE")
    args = parser.parse_args()
    if args.json:    # before anything is measured: a directory or a FIFO there is bad usage, not a lost run
        from gpu_steps import unwritable
        why = unwritable(args.json)
        if why is not None:
            sys.stderr.write(f"bench_reference: --json {args.json!r} cannot be written: {why}\n")
            raise SystemExit(2)
    from formal.errors import ConfigError
    from reference.model.device import device as resolve_device
    try:             # --device cuda where torch sees no GPU: refused, not timed on the CPU nor a traceback later
        resolve_device(args.device)
    except ConfigError as exc:
        sys.stderr.write(f"bench_reference: --device {args.device}: {exc}\n")
        raise SystemExit(2) from None
    if not args.skip_verify:
        runs = {jobs: [] for jobs in (1, 2)}
        for _ in range(max(1, args.repeats // 2)):                        # interleaved: the same load for both
            for jobs in runs:
                runs[jobs].append(_wall_and_cpu([sys.executable, "-m", "formal", "verify", "--quiet", "--device",
                                                 args.device, "--jobs", str(jobs)]))
        for jobs, measured in runs.items():
            wall, cpu = (statistics.median(m[k] for m in measured) for k in (0, 1))
            print(f"verify --profile quick --jobs {jobs}, whole process: median {wall:.1f} s wall, {cpu:.1f} s CPU "
                  f"(target on 2 cores: 30 s wall)")
    medians, err, dev, dt = _forward_timings(args.repeats, args.device, args.seq_len, args.dtype, args.tiny)
    hf = medians["HF GPT2LMHeadModel"]
    model = "tiny GPT-2" if args.tiny else "GPT-2 small"
    print(f"{model} forward, batch 1, ℓ = {args.seq_len}, {dt}, {dev} "
          f"(max |logit difference| reference vs HF: {err:.1e}):")
    for name, t in medians.items():
        print(f"  {name:<26} {t * 1000:9.1f} ms   {t / hf:5.2f} × HF")
    print(f"(median of {args.repeats} interleaved runs; torch {__import__('torch').__version__})")
    if args.json:
        _write_json(args, model, medians, err, dev, dt)


def _write_json(args, model, medians, err, dev, dt):
    """The forward-pass figures, and the budget judged on :data:`BUDGET_PATH`."""
    hf = medians["HF GPT2LMHeadModel"]
    ratio = medians[BUDGET_PATH] / hf
    figures = {"model": model, "batch": 1, "seq_len": args.seq_len, "dtype": str(dt), "device": str(dev),
               "repeats": args.repeats, "torch": __import__("torch").__version__, "max_logit_difference": err,
               "median_s": medians, "ratio_to_hf": {name: t / hf for name, t in medians.items()},
               "budget": {"path": BUDGET_PATH, "ratio": ratio, "at_most": HF_BUDGET, "met": ratio <= HF_BUDGET}}
    with open(args.json, "w") as f:
        json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
