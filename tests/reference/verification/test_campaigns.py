"""``verify --variants``: the variants are exactly the combinations the declarations allow, each a task; the
tasks are planned, estimated (``--dry-run``) and run the same whatever executes them — this process, worker
processes, a Dask cluster — and a worker that dies loses no row.

The executors' fault tests run tasks that misbehave on purpose (:mod:`tests.reference.verification.campaign_tasks`)."""

from __future__ import annotations

import io
import itertools
import json

import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.errors import ConfigError
from formal.sampling.variants import EXAMPLE_ALGORITHMS, every_variant
from formal.tools.cli import main
from reference.execution import executors
from reference.verification import campaigns, estimates as costs
from tests.tiers import fast_few

#: A few algorithms of each kind of declaration: rules (seq2seq, conv1d, etransformer), options that apply only
#: with another's value (attention, rnn, seq2seq), chains of them (seq2seq: align_bias ← score ← attention).
DECLARED = ["attention", "seq2seq", "conv1d", "rnn", "show_attend_tell", "mhattention", "swin", "gru_cell"]


def _frozen(options) -> frozenset:
    return frozenset((k, repr(v)) for k, v in options.items())


def _oracle(name, fixed=None):
    """The variants and the skipped combinations, from raw products of the options' examples, each judged by the
    builders' own validation (:meth:`Options.resolve`) once every option without effect under its control holds its
    default: accepted — a variant; refused for a rule — skipped.  The products: of every option of no group
    (and of a group the run fixes) with the other groups at their defaults, and of each other group's options
    with everything else at its default (what ``Option.group`` declares)."""
    specs = algorithms.get(name).option_specs
    fixed = fixed or {}
    groups: dict = {}
    for n, option in specs.items():
        if option.group and not any(specs[m].group == option.group and m in fixed for m in specs):
            groups.setdefault(option.group, set()).add(n)
    apart = set().union(*groups.values()) if groups else set()
    products = [set(specs) - apart] + list(groups.values())
    variants, skipped = set(), set()
    for varied in products:
        values = [(fixed[n],) if n in fixed else specs[n].examples if n in varied else (specs[n].default,)
                  for n in specs]
        for combo in itertools.product(*values):
            options = dict(zip(specs, combo))
            for _ in specs:   # an option without effect under its control holds its default (chains settle)
                options.update({n: specs[n].default for n in specs if n not in fixed and not specs.applies(n, options)})
            try:
                specs.resolve(options, name)
                variants.add(_frozen(options))
            except ConfigError as exc:
                if " applies to " not in str(exc):
                    skipped.add(_frozen(options))
    return variants, skipped


@pytest.mark.parametrize("name", fast_few(DECLARED, keep=3))
def test_the_variants_are_every_combination_the_declarations_allow(name):
    """Every combination of the options' example values that validation accepts, once each; those a rule
    refuses are skipped, each with the rule's text (an option without effect is no combination)."""
    variants, skipped = every_variant(name)
    want_variants, want_skipped = _oracle(name)
    assert len(variants) == len({_frozen(v) for v in variants})
    assert {_frozen(v) for v in variants} == want_variants
    assert {_frozen(o) for o, _ in skipped} == want_skipped
    rules = {r.text() for r in algorithms.get(name).option_specs.rules}
    assert {why for _, why in skipped} <= rules


def test_fixed_options_narrow_the_variants():
    """``bias = False`` of attention: exactly the variants with it; a fixed option that applies only with
    another's value narrows that one (``activation = 'relu'``: the additive score only)."""
    every, _ = every_variant("attention")
    fixed, _ = every_variant("attention", {"bias": False})
    assert all(v["bias"] is False for v in fixed) and {_frozen(v) for v in fixed} == _oracle("attention",
                                                                                             {"bias": False})[0]
    # every variant of the product with bias = False, and the groups varied at bias = False rather than its default
    assert {_frozen(v) for v in every if v["bias"] is False} <= {_frozen(v) for v in fixed}
    relu, _ = every_variant("attention", {"activation": "relu"})
    assert relu and all(v["score"] == "additive" for v in relu)
    assert {_frozen(v) for v in relu} == _oracle("attention", {"activation": "relu"})[0]


def test_the_variants_of_every_algorithm_are_counted_in_seconds():
    """The whole cross product (90,000 variants) is enumerated without building one algorithm object; today's
    option groups (rotary, QK-norm, the caps) are varied apart from it, or the product would be millions."""
    total = sum(len(every_variant(name)[0]) for name in EXAMPLE_ALGORITHMS)
    assert 10_000 < total < 1_000_000


def test_a_group_joins_the_product_when_the_run_fixes_one_of_its_options():
    """--variants rope=half: every combination of the other options with the rotation on; without it, the rotary
    settings vary with the other options at their defaults."""
    apart, _ = every_variant("mhattention")
    rotary = [v for v in apart if v["rope"] is not None]
    assert rotary and all(v["bias"] is True and v["n_kv_heads"] is None for v in rotary)
    joined, _ = every_variant("mhattention", {"rope": "half"})
    assert {v["bias"] for v in joined} == {True, False} and all(v["rope"] == "half" for v in joined)
    assert {v["rope_scaling"] for v in joined} == {None, "linear", "dynamic", "yarn", "llama3"}


@pytest.mark.parametrize("text, only, message", [
    ("", None, "names nothing"),
    ("bias", None, "must be KEY=VALUE"),
    ("nope=1", None, "none has the option nope"),
    ("bias=true,bias=false", None, "gives option bias twice"),
    ("bias=2", ["attention"], "option bias of attention takes true or false, got '2'"),
    ("n_kv_heads=0", ["mhattention"], "n_kv_heads = 0 must be"),
    ("bias=false", ["attention", "layer_norm"], "layer_norm has no option 'bias'"),
    ("padding=same,stride=2", ["conv1d"], "leaves no variant: every combination breaks a rule"),
    ("empty=error", ["attention"], "empty = 'error' of attention has no example: it raises by design"),
    ("empty=error", None, "selects no algorithm: empty = 'error' of attention has no example"),
])
def test_bad_variants_are_one_clear_error(text, only, message):
    with pytest.raises(ConfigError, match=None) as caught:
        campaigns.campaign(text, only, lambda name: ["float64"], "quick", 0, "cpu")
    assert message in str(caught.value), str(caught.value)


def test_a_selection_takes_the_algorithms_that_declare_its_options():
    """Without --only, ``bias=false`` takes every algorithm whose bias is True or False, not the recurrent ones
    whose bias is 'single', 'double' or 'none'."""
    selected, left_out = campaigns.select("bias=false", None)
    assert "attention" in selected and "rnn" not in selected and "layer_norm" not in selected
    assert all(fixed == {"bias": False} for fixed in selected.values())
    assert "rnn" in left_out and "layer_norm" not in left_out and "takes single, double or none" in left_out["rnn"]


@pytest.mark.parametrize("text, want", [
    ("local:2", ("local", 2)), (" local:16 ", ("local", 16)), ("tcp://10.0.0.5:8786", ("address", "tcp://10.0.0.5:8786")),
    ("scheduler.example.org:8786", ("address", "scheduler.example.org:8786")),
    ("localhost:8786", ("address", "localhost:8786")), ("LOCAL:3", ("local", 3)),
    ("[::1]:8786", ("address", "[::1]:8786")), ("ws://[2001:db8::1]:8786/", ("address", "ws://[2001:db8::1]:8786/")),
])
def test_scheduler_values(text, want):
    if want[0] == "address":     # its scheme is checked against Dask's transports
        pytest.importorskip("distributed")
    assert executors.parse_scheduler(text, 256) == want


@pytest.mark.parametrize("text", ["local:0", "local:257", "local:", "local:two", "local", "a b", "", "tcp://",
                                  "x" * 300 + " y", "x" * 100_000, "scheduler.example.org", "tcp://10.0.0.5",
                                  "host:port"])
def test_bad_scheduler_values_are_one_line(capsys, text):
    assert main(["verify", "--scheduler", text, "--dry-run", "--only", "attention"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--scheduler" in err


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "2", "--scheduler", "local:2"], "give one of them"),
    (["--mutants", "--variants", "all"], "--variants chooses the reference's variants"),
    (["--variants", "all", "--dry-run", "--json", "-"], "--dry-run prints the plan as text"),
])
def test_conflicting_flags_are_one_line(capsys, argv, message):
    assert main(["verify", "--only", "attention", *argv]) == 2
    assert message in capsys.readouterr().err


def test_without_dask_the_scheduler_says_how_to_install_it(capsys, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("no distributed")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    assert main(["verify", "--only", "attention", "--variants", "bias=true", "--scheduler", "local:2",
                 "--quiet"]) == 2
    assert "pip install 'formal-transformers[dask]'" in capsys.readouterr().err


def test_the_dry_run_counts_the_tasks_and_estimates_the_time(capsys):
    """The variants per algorithm are its enumeration's; the estimates are those of
    :func:`~reference.verification.estimates.estimate` on the planned tasks' costs, for 1, 8, 64 and the run's
    workers."""
    assert main(["verify", "--variants", "all", "--only", "attention,conv1d", "--dry-run", "--jobs", "3"]) == 0
    out = capsys.readouterr().out
    variants = {name: len(every_variant(name)[0]) for name in ("attention", "conv1d")}
    skipped = len(every_variant("conv1d")[1])
    plan = campaigns.campaign("all", ["attention", "conv1d"], None, "quick", 0, "cpu")
    assert f"{sum(variants.values()):,} variants in {len(plan.tasks):,} tasks, {skipped:,} combinations skipped" in out
    for name, n in variants.items():
        assert any(line.split()[:3] == [name, f"{n:,}", f"{skipped if name == 'conv1d' else 0:,}"]
                   for line in out.splitlines())
    for workers in (1, 3, 8, 64):
        line = next(line for line in out.splitlines() if line.split()[:1] == [str(workers)])
        assert costs.duration(costs.estimate([t.cost for t in plan.tasks], workers)) in line
    assert "(this run)" in next(line for line in out.splitlines() if line.split()[:1] == ["3"])


@pytest.mark.parametrize("name", ["attention", "conv1d", "swin", "etransformer"])
def test_variants_are_sent_in_groups_of_enough_work(name):
    """A task holds variants worth at least GROUP_SECONDS of measured cost (but the last of an algorithm, or
    a single variant worth more), every variant once, in the enumeration's order; its cost is theirs."""
    fixed = {"inputs": "tokens", "norm": "layer"} if name == "etransformer" else {}
    text = ",".join(f"{k}={v}" for k, v in fixed.items()) or "all"
    plan = campaigns.campaign(text, [name], None, "quick", 0, "cpu")
    each = costs.task_cost(name, "quick", variant=True)
    assert [dict(v) for t in plan.tasks for v in t.variants] == every_variant(name, fixed)[0]
    for task in plan.tasks[:-1]:
        assert task.cost == pytest.approx(each * len(task.variants))
        assert task.cost >= campaigns.GROUP_SECONDS or len(task.variants) == 1
        assert task.cost - each < campaigns.GROUP_SECONDS


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 50.0), min_size=1, max_size=40), st.integers(1, 70))
def test_the_estimate_lies_within_list_scheduling_s_bounds(task_costs, workers):
    """Longest-first list scheduling (Graham): the busiest worker carries at least the mean load and the
    longest task, and at most the mean load plus the longest task; one worker carries all."""
    start, per = costs.START["processes"], costs.PER_TASK["processes"]
    padded = [c + per for c in task_costs]
    n = min(workers, len(task_costs))
    got = costs.estimate(task_costs, workers) - start
    assert got >= max(sum(padded) / n, max(padded)) - 1e-9
    assert got <= sum(padded) / n + max(padded) + 1e-9
    if workers == 1:
        assert got == pytest.approx(sum(padded))


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_progress_bar_says_tasks_done_and_time_left():
    """Done/total counts tasks; the time left weighs them by cost (a task of cost 3 done of 4 in all: ¾)."""
    from tests.reference.verification.campaign_tasks import Square
    stream = _Terminal()
    tasks = [Square(1, cost=3.0), Square(2, cost=1.0)]
    bar = executors.Progress(tasks, stream, "verify")
    bar.start -= 30.0                    # 30 s have passed
    bar.advance(tasks[0])
    line = stream.getvalue().rsplit("\r\033[K", 1)[1]
    assert "1/2 tasks" in line and "0:10 left" in line and "square 1" in line
    bar.close()
    assert stream.getvalue().endswith("\r\033[K")
    quiet = io.StringIO()                # not a terminal: nothing
    executors.Progress(tasks, quiet, "verify").advance(tasks[0])
    assert quiet.getvalue() == ""


def test_the_campaign_report_groups_by_option(tmp_path):
    """A campaign's JSON report: every row names its variant; ``by_option`` counts per option value the variants
    checked and failed; the skipped combinations are grouped by reason with their count."""
    pytest.importorskip("torch")
    path = tmp_path / "r.json"
    assert main(["verify", "--variants", "stride=2,dilation=1,bias=true", "--only", "conv1d", "--jobs", "1",
                 "--json", str(path), "--quiet"]) == 0
    report = json.loads(path.read_text())
    variants = every_variant("conv1d", {"stride": 2, "dilation": 1, "bias": True})
    assert report["tasks"] == report["done"] >= 1
    assert {_frozen(r["variant"]) for r in report["rows"]} == {_frozen(v) for v in variants[0]}
    padding = [e for e in report["by_option"] if e["option"] == "padding"]
    assert sum(e["variants"] for e in padding) == len(variants[0]) and all(e["failed"] == 0 for e in padding)
    assert report["skipped"] == [{"algorithm": "conv1d", "reason": variants[1][0][1],
                                  "combinations": len(variants[1]), "first": variants[1][0][0]}]


def test_an_option_counts_only_where_it_has_an_effect():
    """``by_option``: attention's activation is counted in the additive score's variants only — a failure of
    the dot score is not laid at tanh's door."""
    from reference.verification.checks import Row
    from reference.verification.verify import by_option
    variants, _ = every_variant("attention", {"bias": False, "empty": "zero", "score_bias": True})
    rows = [Row("attention", "float64", 1, 1.0 if v["score"] == "dot" else 0.0, 1e-10,
                "FAIL" if v["score"] == "dot" else "pass", "", v) for v in variants]
    table = {(e["option"], e["value"]): (e["variants"], e["failed"]) for e in by_option(rows)}
    assert table[("score", "dot")] == (1, 1) and table[("score", "additive")] == (3, 0)
    assert table[("activation", "tanh")] == (1, 0)            # the additive score's only: no failure there
    assert sum(n for (option, _), (n, _) in table.items() if option == "activation") == 3


def test_the_watch_stops_a_run_whose_cluster_has_no_worker(monkeypatch):
    """A cluster without a worker for CONNECT_TIMEOUT seconds: the watch gives up (the run's futures are
    cancelled, and the run stops with one line) — never a wait for ever."""
    import threading

    from reference.execution import clusters

    class NoWorkers:
        def scheduler_info(self):
            return {"workers": {}}

    monkeypatch.setattr(clusters, "CONNECT_TIMEOUT", 0)
    gave_up = threading.Event()
    watch = clusters._Watch(NoWorkers())
    watch.start(gave_up.set)
    assert gave_up.wait(10) and watch.lost
