"""The torch reference's planted bugs (:mod:`reference.verification.reference_mutants`) under verify's checks.

The catalogue aims a mutant at every check verify runs on the CPU (and one, CUDA only, at the flex rows); each
bug is planted wherever its function was imported by name and restored when its block ends, an exception
included; verify passes the reference with nothing planted (the controls); every check kills one of the mutants
aimed at it, and each mutant is killed by a check it is aimed at.  The report (:class:`ReferenceReport`) says so
beside conform's, in text and JSON, and ``verify --mutants`` exits 1 when a check kills none of its mutants.

The whole catalogue runs once, in this process, for the slow tests (:func:`catalogue_report`); the fast tier
runs layer_norm's task (its control and three mutants) and the report on made-up outcomes.
"""

import json
import sys

import pytest

from tests.tiers import slow

torch = pytest.importorskip("torch")  # the reference's mutants are torch code

from formal.errors import ConfigError  # noqa: E402
from formal.tools.cli import main  # noqa: E402
from reference.model import architectures, attention, kv_cache, training  # noqa: E402
from reference.records import record  # noqa: E402
from reference.verification import checks, reference_mutants as rm  # noqa: E402
from reference.verification.mutation import ReferenceReport, kill_rate, reference_plan  # noqa: E402

#: The names of verify's checks once its precision rows are split by attention path: what the catalogue aims at.
REWORKED = ("float64", "float64 sdpa", "float64 flex", "float32", "float32 sdpa", "float32 flex", "bfloat16",
            "bfloat16 sdpa", "bfloat16 flex", "matmul FLOPs", "params", "SGD step", "KV cache")
CPU_CHECKS = rm.device_checks("cpu")
ON_CPU = [m for m in rm.MUTANTS if not m.cuda]


def _bindings() -> dict:
    """(module, name) → the object bound there, for every module of :mod:`reference` loaded."""
    rm._reference_modules()   # loads every module of reference.model first
    return {(m.__name__, k): v for name, m in list(sys.modules.items())
            if name == "reference" or name.startswith("reference.") for k, v in list(vars(m).items())}


# ------------------------------------------------------------------------------------------------- the catalogue
def test_the_catalogue_is_well_formed():
    """Unique names; each bug said in one line; targets the reference runs; checks by verify's (reworked) names,
    each applying to one of the mutant's targets where verify has it; a patch of functions that exist."""
    names = [m.name for m in rm.MUTANTS]
    assert len(names) == len(set(names))
    for m in rm.MUTANTS:
        assert m.bug and "\n" not in m.bug, m.name
        assert m.targets and all(record(t).runner is not None for t in m.targets), m.name
        assert m.checks and set(m.checks) <= set(REWORKED), m.name
        for check in filter(None, map(rm.present, m.checks)):
            assert any(checks.CHECKS[check].applies(record(t)) for t in m.targets), (m.name, check)
        for module, function, make in m.patch:
            assert callable(getattr(__import__(f"reference.model.{module}", fromlist=[function]), function))
            assert callable(make)
    assert rm.mutant("bf16-unscaled-scores").name == "bf16-unscaled-scores"
    with pytest.raises(ConfigError, match="no reference mutant 'nope'"):
        rm.mutant("nope")


def test_every_check_has_a_mutant_aimed_at_it():
    """Each check verify runs on the CPU is aimed at by a mutant that runs there; the flex rows (CUDA only) by
    one that runs on CUDA."""
    aimed = {rm.present(c) for m in ON_CPU for c in m.checks}
    assert [c for c in CPU_CHECKS if c not in aimed] == []
    flex = {c for m in rm.MUTANTS if m.cuda for c in m.checks}
    assert {"float64 flex", "float32 flex", "bfloat16 flex"} <= flex


def test_the_issue_s_bugs_are_in_the_catalogue():
    """The precision-path and single-path bugs the issue lists, each aimed at the row that should see it."""
    wanted = {"bf16-unscaled-scores": "bfloat16", "bf16-causal-off-by-one": "bfloat16",
              "bf16-unbiased-variance": "bfloat16", "bf16-post-ln-residual-after-norm": "bfloat16",
              "bf16-softmax-summed-in-bf16": "bfloat16", "bf16-vocabulary-softmax-summed-in-bf16": "bfloat16",
              "bf16-one-pass-variance": "bfloat16", "bf16-sinusoid-angles": "bfloat16",
              "bf16-sdpa-unscaled": "bfloat16 sdpa", "float32-sdpa-half-inputs": "float32 sdpa",
              "sgd-backward-float32": "SGD step", "sdpa-mask-transposed": "float64 sdpa",
              "scores-computed-twice": "matmul FLOPs", "tied-unembedding-copied": "params",
              "kv-cache-top-left": "KV cache", "causal-off-by-one": "float64", "flex-mask-transposed": "float64 flex"}
    assert {name: check for name, check in wanted.items() if check not in rm.mutant(name).checks} == {}


def test_cuda_only_mutants_are_listed_as_skipped_on_the_cpu():
    planned = rm.tasks(None, "quick", 0, "cpu")
    assert not any(rm.mutant(n).cuda for t in planned for n in t.mutants if n is not None)
    assert rm.skipped(None, "cpu") == [("flex-mask-transposed", rm.mutant("flex-mask-transposed").bug, rm.CUDA_ONLY)]
    assert rm.skipped(None, "cuda") == []
    assert any("flex-mask-transposed" in t.mutants for t in rm.tasks(None, "quick", 0, "cuda"))


def test_only_the_target_algorithms_run_each_with_its_control_first():
    planned = rm.tasks(["layer_norm", "attention"], "quick", 0, "cpu")
    assert [t.name for t in planned] == ["attention", "layer_norm"]
    assert all(t.mutants[0] is None and None not in t.mutants[1:] for t in planned)
    assert set(planned[1].mutants[1:]) == {m.name for m in ON_CPU if "layer_norm" in m.targets}
    assert rm.tasks(["rnn"], "quick", 0, "cpu") == []
    assert [t.label for t in planned[1].split()] == [f"layer_norm: {m or 'control'}" for m in planned[1].mutants]


# --------------------------------------------------------------------------------------------------- planting
@pytest.mark.parametrize("subject", rm.MUTANTS, ids=lambda m: m.name)
def test_the_patch_is_planted_everywhere_and_restored(subject):
    """Inside the block every binding of a patched function — its module's and each module that imported it by
    name — is the mutant's; after it, an exception included, every binding of reference is the original."""
    before = _bindings()
    originals = {id(getattr(__import__(f"reference.model.{mod}", fromlist=[fn]), fn)) for mod, fn, _ in subject.patch}
    where = [key for key, value in before.items() if id(value) in originals]
    with pytest.raises(RuntimeError, match="inside"):
        with rm.planted(subject):
            during = _bindings()
            assert where and all(id(during[key]) not in originals for key in where)
            assert all(during[key] is value for key, value in before.items() if key not in where)
            raise RuntimeError("inside the block")
    after = _bindings()
    assert all(after[key] is value for key, value in before.items())


def test_a_function_imported_by_name_is_patched_there_too():
    with rm.planted(rm.mutant("kv-cache-top-left")):
        assert architectures.causal_mask is attention.causal_mask is kv_cache.causal_mask
        assert kv_cache.causal_mask(3, 1, align="bottom-right").tolist() == [[True, False, False]]
    assert kv_cache.causal_mask(3, 1, align="bottom-right").tolist() == [[True, True, True]]
    original = training.sgd_step
    with rm.planted(rm.mutant("sgd-weight-decay")):
        assert checks.training.sgd_step is training.sgd_step is not original
    assert training.sgd_step is original


# ------------------------------------------------------------------------------------------------ the reports
def _outcome(mutant, algorithm, failed=(), passed=("float64", "float32", "bfloat16"), error=""):
    rows = [{"check": c, "examples": 3, "max_error": 0.5 if c in failed else 1e-3, "allowed": 1e-2,
             "verdict": "FAIL" if c in failed else "pass", "detail": ""} for c in (*passed, *failed)]
    return rm.ReferenceOutcome(mutant, algorithm, [] if error else rows, error)


def _made_up(outcomes, complete=False) -> ReferenceReport:
    mutants = [{"name": "a", "bug": "bug a", "targets": ["layer_norm"], "aimed": ["bfloat16"], "missing": []},
               {"name": "b", "bug": "bug b", "targets": ["layer_norm"], "aimed": ["float32"],
                "missing": ["float32 sdpa"]}]
    return ReferenceReport("quick", 0, "cpu", ["float64", "float32", "bfloat16"], mutants, outcomes,
                           skipped=[("f", "bug f", rm.CUDA_ONLY)], complete=complete, tasks=1, done=1)


def test_the_report_gives_each_check_its_kill_rate_and_the_survivors_with_their_errors():
    report = _made_up([_outcome(None, "layer_norm"), _outcome("a", "layer_norm", failed=("bfloat16",)),
                       _outcome("b", "layer_norm")])
    assert [(r["check"], r["mutants"], r["killed"]) for r in report.rows()] == \
        [("float64", [], []), ("float32", ["b"], []), ("bfloat16", ["a"], ["a"])]
    assert report.blind == [("float32", "kills none of its 1 mutant(s)")] and not report.ok
    assert report.rate == 0.5 and [v["name"] for v in report.survivors] == ["b"]
    text = report.text()
    assert "SURVIVED b (layer_norm): bug b — float32 1.0e-03 ≤ 1.0e-02 on layer_norm" in text
    assert "BLIND float32: kills none of its 1 mutant(s)" in text
    assert "float32 sdpa (1 mutant)" in text and f"SKIPPED f: bug f — {rm.CUDA_ONLY}" in text
    assert text.splitlines()[-1].startswith("reference kill rate 50.0% (1 of 2 mutants killed), 1 of 1 controls "
                                            "passed, 1 of 2 checks kill one of theirs")
    data = json.loads(json.dumps(report.as_json()))
    assert data["verdict"] == "fail" and data["blind"] == [{"check": "float32", "why": "kills none of its 1 mutant(s)"}]
    assert data["checks"][2] == {"check": "bfloat16", "mutants": ["a"], "killed": ["a"], "kill_rate": 1.0}


def test_a_false_alarm_an_error_and_a_check_no_mutant_is_aimed_at_fail_the_report():
    killed = [_outcome("a", "layer_norm", failed=("bfloat16",)), _outcome("b", "layer_norm", failed=("float32",))]
    assert _made_up([_outcome(None, "layer_norm"), *killed]).ok
    alarm = _made_up([_outcome(None, "layer_norm", failed=("float64",)), *killed])
    assert not alarm.ok and "FALSE ALARM control layer_norm: float64 5.0e-01 > 1.0e-02" in alarm.text()
    died = _made_up([_outcome(None, "layer_norm"), killed[0], _outcome("b", "layer_norm", error="worker died")])
    assert not died.ok and "ERROR b: worker died" in died.text()
    whole = _made_up([_outcome(None, "layer_norm"), *killed], complete=True)
    assert whole.blind == [("float64", "no mutant is aimed at it")] and not whole.ok
    assert json.loads(json.dumps(_made_up([_outcome("a", "layer_norm", failed=("bfloat16",))]).as_json()))


def test_without_torch_the_report_says_it_did_not_run():
    report = ReferenceReport("quick", 0, not_run="planting bugs in the torch reference needs torch")
    assert report.ok and report.as_json()["verdict"] == "not run"
    assert report.text().endswith("not run: planting bugs in the torch reference needs torch\n")


# ------------------------------------------------------------------------------------------------ running them
def test_layer_norm_s_mutants_are_killed_and_its_control_passes():
    """One task, in this process: the control passes every check; the mutants in float32 and bfloat16 fail the
    rows of their precision and only those (the float64 row cannot see them)."""
    (task,) = rm.tasks(["layer_norm"], "quick", 0, "cpu")
    found = {o.mutant: o for o in task.run()}
    assert found[None].rows and found[None].failed == []
    assert found["float32-norm-eps-dropped"].failed == ["float32"]
    assert "bfloat16" in found["bf16-unbiased-variance"].failed
    assert "float64" not in found["bf16-unbiased-variance"].failed + found["bf16-one-pass-variance"].failed


def test_verify_mutants_reports_the_reference_beside_conform(capsys, tmp_path):
    """The CLI: the reference's half first, conform's after it (its kill rate the last line), both in the JSON."""
    report = tmp_path / "mutants.json"
    status = main(["verify", "--mutants", "--only", "layer_norm", "--jobs", "1", "--quiet", "--json", str(report)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.startswith("verify --mutants: verify's checks against the torch reference's planted bugs")
    assert "conform against the shipped catalogue" in out and out.splitlines()[-1].startswith("kill rate 100.0%")
    data = json.loads(report.read_text())
    assert data["verdict"] == "pass" and data["reference"]["verdict"] == "pass"
    assert {r["check"]: r["killed"] for r in data["reference"]["checks"]}["float32"] == ["float32-norm-eps-dropped"]


def test_the_dry_run_counts_the_reference_s_tasks(capsys):
    from reference.verification.mutation import tasks
    assert main(["verify", "--mutants", "--only", "layer_norm", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "verify on the reference's planted bugs" in out
    assert f"{len(tasks(['layer_norm'], 'quick', 0)) + 1} tasks" in out


@slow
def test_worker_processes_plant_the_bugs_themselves():
    """The tasks in two worker processes give the rows they give here: each worker plants the bug it runs."""
    here = kill_rate(only=["layer_norm", "positional_embedding"], jobs=1).reference
    there = kill_rate(only=["layer_norm", "positional_embedding"], jobs=2).reference
    assert [(o.mutant, o.algorithm, o.rows) for o in there.outcomes] == \
        [(o.mutant, o.algorithm, o.rows) for o in here.outcomes]


@pytest.fixture(scope="module")
def catalogue_report():
    """The whole CPU catalogue, in this process: its report, as ``verify --mutants`` makes it."""
    report, planned = reference_plan(None, "quick", 0, "cpu")
    for task in planned:
        report.outcomes += task.run()
    report.done = len(planned)
    return report


@slow
def test_the_controls_pass(catalogue_report):
    assert [(o.algorithm, o.failed) for o in catalogue_report.false_alarms] == []
    assert {o.algorithm for o in catalogue_report.controls} == {t for m in ON_CPU for t in m.targets}


@slow
@pytest.mark.parametrize("check", CPU_CHECKS)
def test_each_check_kills_one_of_its_mutants(catalogue_report, check):
    (row,) = [r for r in catalogue_report.rows() if r["check"] == check]
    assert row["mutants"], f"no mutant is aimed at {check}"
    assert row["killed"], f"{check} kills none of {row['mutants']}: {_closest(catalogue_report, row['mutants'])}"


@slow
@pytest.mark.parametrize("name", [m.name for m in ON_CPU])
def test_each_mutant_is_killed_by_a_check_it_is_aimed_at(catalogue_report, name):
    (verdict,) = [v for v in catalogue_report.verdicts() if v["name"] == name]
    if not verdict["aimed"]:
        pytest.skip(f"verify has none of {', '.join(verdict['missing'])} yet")
    assert set(verdict["aimed"]) & set(verdict["killed_by"]), \
        f"{name} survives {', '.join(verdict['aimed'])}: {_closest(catalogue_report, [name])}"


def _closest(report, names) -> str:
    """Each named mutant's aimed rows nearest their bounds: error, bound and algorithm."""
    return "; ".join(f"{v['name']}: {w['check']} {w['max_error']:.1e} ≤ {w['allowed']:.1e} on {w['algorithm']}"
                     for v in report.verdicts() if v["name"] in names for w in v["worst"])
