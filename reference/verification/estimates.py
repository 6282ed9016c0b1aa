"""What a campaign's tasks cost, measured, and how long a campaign takes on N workers (``verify --dry-run``).

The figures are CPU seconds of one task in a worker with one torch thread, measured on the 2-core development
machine: one algorithm's checks on examples drawn across its variants (:data:`SECONDS`, ``python
benchmarks/bench_verify.py --profile P``: the examples of many variants, each derived afresh), or on one
variant's examples (:data:`VARIANT_SECONDS`, ``python benchmarks/bench_campaign.py --costs --profile P``).
A task's cost also orders the work: the executors send the longest first, so that no worker is left running
a long one while the others idle at the end.
"""

from __future__ import annotations

import heapq

__all__ = ["SECONDS", "VARIANT_SECONDS", "ENTRY_SECONDS", "DEFAULT", "START", "PER_TASK", "task_cost", "estimate",
           "duration"]

#: profile → algorithm → seconds of its task in a run without ``--variants`` (those under 0.05 s at 0.05).
SECONDS = {
    "quick": {"swin": 7.1, "edloss": 2.1, "edinference": 2.1, "dinference": 2.0, "edtransformer": 1.3,
              "eloss": 1.1, "kv_dtransformer": 1.1, "dloss": 0.9, "etransformer": 0.9, "swin_stage": 0.7,
              "dtransformer": 0.6, "seq2seq": 0.5, "show_attend_tell_loss": 0.5, "han": 0.5,
              "show_attend_tell": 0.4, "rnn": 0.3, "swin_block": 0.3, "paged_mhattention": 0.2,
              "mhattention": 0.2, "kv_mhattention": 0.2, "window_mhattention": 0.2, "conv1d": 0.15,
              "rnn_layer": 0.12, "gat": 0.11, "attention": 0.1, "paged_attention": 0.09,
              "single_query_attention": 0.07, "lstm_cell": 0.06, "gru_cell": 0.05, "graph_conv": 0.05},
    "thorough": {"swin": 10.1, "edloss": 8.1, "edinference": 6.8, "dinference": 6.1, "eloss": 5.0,
                 "edtransformer": 4.8, "kv_dtransformer": 4.3, "dloss": 3.6, "etransformer": 3.0,
                 "swin_stage": 2.8, "show_attend_tell_loss": 2.6, "han": 2.5, "seq2seq": 2.5, "dtransformer": 2.2,
                 "show_attend_tell": 2.1, "swin_block": 1.3, "rnn": 1.1, "window_mhattention": 0.9,
                 "paged_mhattention": 0.7, "kv_mhattention": 0.6, "mhattention": 0.6, "rnn_layer": 0.6,
                 "conv1d": 0.5, "gat": 0.4, "attention": 0.4, "paged_attention": 0.4,
                 "single_query_attention": 0.3, "lstm_cell": 0.3, "patch_merging": 0.2, "gru_cell": 0.2,
                 "graph_conv": 0.2, "attention_pooling": 0.2, "mlp": 0.2, "rnn_cell": 0.1, "unembedding": 0.1,
                 "positional_embedding": 0.1, "layer_norm": 0.1, "token_embedding": 0.1},
}
#: profile → algorithm → seconds of the task of one of its variants (``--variants``; the mean over variants
#: spread across its enumeration — a campaign's time is their sum; those under 0.01 s at 0.01).
VARIANT_SECONDS = {
    "quick": {"swin": 1.54, "edloss": 0.72, "edtransformer": 0.6, "kv_dtransformer": 0.37, "swin_stage": 0.37,
              "eloss": 0.36, "edinference": 0.33, "dloss": 0.32, "dinference": 0.27, "etransformer": 0.26,
              "dtransformer": 0.26, "han": 0.24, "seq2seq": 0.21, "show_attend_tell_loss": 0.21,
              "show_attend_tell": 0.18, "swin_block": 0.15, "rnn": 0.14, "paged_mhattention": 0.12,
              "window_mhattention": 0.12, "mhattention": 0.1, "kv_mhattention": 0.1, "rnn_layer": 0.07,
              "attention": 0.06, "gat": 0.06, "paged_attention": 0.06, "single_query_attention": 0.04,
              "lstm_cell": 0.04, "conv1d": 0.04, "gru_cell": 0.03, "graph_conv": 0.03, "patch_merging": 0.03,
              "positional_embedding": 0.02, "rnn_cell": 0.02, "attention_pooling": 0.02, "mlp": 0.02,
              "token_embedding": 0.01, "layer_norm": 0.01, "unembedding": 0.01},
    "thorough": {"swin": 8.28, "edloss": 3.58, "edtransformer": 2.76, "swin_stage": 2.4, "han": 2.16, "eloss": 1.87,
                 "kv_dtransformer": 1.86, "seq2seq": 1.63, "dloss": 1.53, "show_attend_tell_loss": 1.44,
                 "edinference": 1.37, "show_attend_tell": 1.32, "etransformer": 1.28, "dtransformer": 1.19,
                 "rnn": 1.01, "swin_block": 1.0, "dinference": 0.82, "window_mhattention": 0.72,
                 "paged_mhattention": 0.58, "rnn_layer": 0.52, "kv_mhattention": 0.5, "mhattention": 0.47,
                 "gat": 0.33, "paged_attention": 0.32, "attention": 0.31, "lstm_cell": 0.26,
                 "single_query_attention": 0.25, "gru_cell": 0.21, "conv1d": 0.18, "patch_merging": 0.18,
                 "graph_conv": 0.16, "mlp": 0.13, "rnn_cell": 0.11, "attention_pooling": 0.1, "unembedding": 0.08,
                 "positional_embedding": 0.07, "layer_norm": 0.07, "token_embedding": 0.05},
}
#: profile → seconds of conform on one catalogue entry (``verify --mutants``): the mean over 128 entries of six
#: algorithms, CPU time in one process (``time formal-transformers verify --mutants --only
#: attention,mhattention,layer_norm,dtransformer,rnn,swin_block --jobs 1 --profile P``: 4.3 s and 28.5 s).
ENTRY_SECONDS = {"quick": 0.035, "thorough": 0.22}
#: The cost of a task the tables do not name.
DEFAULT = 0.05
#: Seconds from the command's start to its workers' first task, and of its end, per executor: the command
#: importing torch and the package, and the workers too; Dask's cluster starting and closing (``--compare`` of
#: the benchmark: a run of two tasks of 0.01 s).
START = {"this process": 2.7, "processes": 4.4, "dask": 5.6}
#: Seconds each executor adds per task (sending it, its results back; with Dask, the scheduler's round trip,
#: on 2 cores shared with the workers: ``--compare``, 24 ms).
PER_TASK = {"this process": 0.0, "processes": 0.002, "dask": 0.024}


def task_cost(name: str, profile: str, variant: bool = False) -> float:
    """Seconds of a task of algorithm ``name``'s checks under ``profile``: on one variant's examples
    (``variant``), or on examples drawn across them."""
    return (VARIANT_SECONDS if variant else SECONDS).get(profile, {}).get(name, DEFAULT)


def estimate(costs, workers: int, executor: str = "processes") -> float:
    """Wall seconds of tasks costing ``costs`` on ``workers`` workers, each taking the longest task left when
    it is free (as the executors send them), after the command and its workers start."""
    per_task = PER_TASK[executor]
    free = [START[executor]] * max(1, min(workers, len(costs) or 1))
    for cost in sorted(costs, reverse=True):
        heapq.heapreplace(free, free[0] + cost + per_task)
    return max(free)


def duration(seconds: float) -> str:
    """``"3 s"``, ``"4 min 10 s"``, ``"2 h 05 min"``, ``"3 d 4 h"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {s:02d} s"
    hours, m = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {m:02d} min"
    days, h = divmod(hours, 24)
    return f"{days} d {h} h"
