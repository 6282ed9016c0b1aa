"""Speed figures of the model stack, printed as a table of medians.

    python benchmarks/bench_stack.py [--repeats N]

- ``formal-transformers complexity gpt3-175b --json`` as a whole process;
- deriving the symbolic cost (every convention) of ``dtransformer``, warm, on a freshly built object (its
  attention, norm and unembedding callees are built afresh with it; the token embedding object is shared);
- evaluating every preset (parameters, FLOPs, memory at its context length), all together, warm.
"""

from __future__ import annotations

import argparse
import sys

from bench_core import _median, _process, _table


def _derive_dtransformer():
    from formal.algorithms.architectures import build_dtransformer
    from formal.costs.cost import CONVENTIONS
    fresh = build_dtransformer()
    for convention in CONVENTIONS:
        fresh.cost(convention)


def _evaluate_presets():
    from formal.models.presets import PRESETS
    for preset in PRESETS.values():   # a captioner has no context length: a caption of 16 words
        preset.evaluate(seq_len=16 if preset.seq_len is None else None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    py = sys.executable
    rows = [
        ("formal-transformers complexity gpt3-175b --json (process)",
         _process([py, "-m", "formal", "complexity", "gpt3-175b", "--json"], args.repeats), 2.0),
        ("derive dtransformer's symbolic cost, all conventions (warm)",
         _median(_derive_dtransformer, args.repeats), 0.3),
        ("evaluate all presets together (warm)", _median(_evaluate_presets, args.repeats), 1.0),
    ]
    _table(rows, args.repeats)


if __name__ == "__main__":
    main()
