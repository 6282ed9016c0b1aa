"""``prove --mutants``: the shipped catalogue of bugs planted in the spec is well formed and every bug is caught by
the theorems it is about (each planted in a fresh process); the runner reports caught, survived, broken and
about-no-theorem bugs as they are, and a bug planted in one process never reaches the next; the command's report,
JSON and exit statuses."""

import json
import re
import subprocess
import sys

import pytest

from proofs.mutants import catalogue, families
from proofs.mutants.entry import WHERE
from proofs.mutation import campaign
from proofs.registry import theorems
from tests.reference.verification.process_tree import ctrl_c, descendants, ended, interruptible, needs_proc, running
from tests.tiers import slow

PLANTED = "tests.proofs.planted"   # a test catalogue: one bug caught, one survivor, one broken, one about nothing


def test_the_catalogue_is_well_formed():
    """Unique names; every `about` names a registered theorem; every place is one of WHERE, and each has bugs; every
    family declares some."""
    mutants = catalogue()
    known = {t.name for t in theorems()}
    assert len(mutants) >= 20 and len({m.name for m in mutants}) == len(mutants)
    for m in mutants:
        assert m.where in WHERE and m.bug and callable(m.apply), m.name
        assert set(m.about) <= known, f"{m.name} is about unknown theorems {set(m.about) - known}"
    assert all(module.MUTANTS for module in families())
    assert {m.where for m in mutants} == set(WHERE), "bugs in ops, algorithms, cost rules and pattern builders"


@slow
def test_every_bug_is_caught_by_the_theorems_it_is_about():
    """The requirement: planted one at a time, each in a fresh process, every catalogued bug makes every theorem
    it is about fail (its statement, not its twin) — decidedly, with a counterexample, not by a crash."""
    report = campaign(about=True, jobs=2)
    assert not [r.mutant.name for r in report.results if r.broken], [r.broken for r in report.results if r.broken]
    missed = {r.mutant.name: r.missed for r in report.results if r.missed}
    assert not missed, f"bugs their theorems do not catch: {missed}"
    undecided = {(r.mutant.name, name): r.verdicts[name][1] for r in report.results for name in r.mutant.about
                 if r.verdicts[name][0] != "failed"}
    assert not undecided, f"caught by an undecided check or a crash, not by the statement failing: {undecided}"
    assert report.ok and report.summary["caught"] == sum(bool(m.about) for m in catalogue())


def test_the_runner_reports_each_outcome_as_it_is():
    """A bug its theorem catches is caught; one it cannot see survives (so the report is not ok); one whose planting
    raises is broken, never caught; one about no theorem is listed as such.  The survivor runs after the caught
    bug in the same single worker: its theorem is proved there, so the first bug did not leak into its process."""
    report = campaign(source=PLANTED, only=["kaplan-mlp-five", "harmless", "unplantable", "about-nothing"],
                      about=True, jobs=1)
    status = {r.mutant.name: r.status for r in report.results}
    assert status == {"kaplan-mlp-five": "caught", "harmless": "survived", "unplantable": "broken",
                      "about-nothing": "about no theorem"}
    caught, harmless, broken, _ = report.results
    assert caught.failed == ["kaplan-n"] and "differ" in caught.verdicts["kaplan-n"][1]
    assert harmless.verdicts["kaplan-n"][0] == "proved" and harmless.missed == ["kaplan-n"]
    assert "RuntimeError" in broken.broken and not broken.caught
    assert not report.ok
    assert report.summary == {**report.summary, "bugs": 4, "caught": 1, "survived": 1, "about_no_theorem": 1,
                              "broken": 1, "theorems_checked": "about"}


@slow
def test_a_process_that_dies_or_hangs_costs_its_own_bug_only():
    """A bug whose process dies while planting, or hangs there past the timeout, is broken; one whose process dies
    while checking leaves its theorem undecided, saying why; the bug planted after them in the same single worker is
    checked as usual."""
    report = campaign(source=PLANTED, only=["dies-planting", "hangs-planting", "dies-checking", "kaplan-mlp-five"],
                      about=True, jobs=1, timeout=4)
    dies, hangs, dies_checking, caught = report.results
    assert dies.status == "broken" and "exit status 3" in dies.broken
    assert hangs.status == "broken" and "stopped after 4 s" in hangs.broken
    assert dies_checking.verdicts["kaplan-n"][0] == "undecided" and "exit status 3" in dies_checking.verdicts[
        "kaplan-n"][1]
    assert caught.status == "caught" and caught.verdicts["kaplan-n"][0] == "failed"


def test_a_bug_is_planted_before_anything_is_computed():
    """In a bug's process nothing of the theorems is imported and no algorithm variant built before the bug is
    planted (the planting raises if anything was), though this process has built them: the bug planted there
    plants nothing, so it survives, with kaplan-n proved — not broken."""
    theorems()
    result, = campaign(source=PLANTED, only=["sees-a-fresh-process"], about=True, jobs=1).results
    assert not result.broken and result.status == "survived" and result.verdicts["kaplan-n"][0] == "proved"


@slow
def test_every_theorem_is_checked_without_about():
    """Without `about`, every theorem's statement is checked under the bug, and those it is not about that fail are
    its collateral."""
    report = campaign(source=PLANTED, only=["kaplan-mlp-five"], jobs=1)
    result, = report.results
    assert list(result.verdicts) == [t.name for t in theorems()]
    assert "kaplan-n" in result.failed and result.collateral == [n for n in result.failed if n != "kaplan-n"]


@slow
def test_the_command(capsys, monkeypatch):
    from formal.tools.cli import main
    assert main(["prove", "--mutants", "--about", "--only", "div-sqrt-by-d", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    entry, = report["mutants"]
    assert entry["name"] == "div-sqrt-by-d" and entry["caught"] and entry["status"] == "caught"
    assert set(entry) >= {"where", "bug", "about", "failed", "missed", "collateral", "details", "verdicts",
                          "seconds"}
    assert set(entry["details"]) == set(entry["failed"]) >= {"sqrt-d-scaling"}
    assert report["ok"] and report["summary"]["bugs"] == 1
    assert main(["prove", "--mutants", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(m.name in listed for m in catalogue())
    assert main(["prove", "--mutants", "--list", "--only", "div-sqrt-by-d"]) == 0   # --only chooses what is listed
    assert capsys.readouterr().out.startswith("div-sqrt-by-d ") and len(listed.splitlines()) == len(catalogue())
    import proofs.mutation as mutation
    real = mutation.campaign
    monkeypatch.setattr(mutation, "campaign", lambda **kw: real(**{**kw, "source": PLANTED}))
    assert main(["prove", "--mutants", "--about", "--only", "harmless,kaplan-mlp-five"]) == 1   # one survives
    text = capsys.readouterr().out
    assert "SURVIVED" in text and "MISSED (still proved)" in text
    assert "2 bugs: 1 caught by the theorems they are about, 0 about no theorem, 1 survived, 0 broken" in text


@pytest.mark.parametrize("argv, message", [
    (["prove", "--mutants", "kaplan-n"], "give no theorem names"),
    (["prove", "--mutants", "--only", "nosuch"], "no spec mutant 'nosuch'"),
    (["prove", "--mutants", "--only", " , "], "names no bug"),
    (["prove", "--mutants", "--jobs", "0"], "--jobs 0 must be at least 1"),
    (["prove", "--about"], "go with --mutants"),
    (["prove", "--mutants", "--list", "--about"], "--about has no meaning with it"),
    (["prove", "--mutants", "--list", "--timeout", "5"], "--timeout has no meaning with it"),
    (["prove", "--mutants", "--list", "--scheduler", "local:2"], "--scheduler has no meaning with it"),
    (["prove", "--mutants", "--jobs", "2", "--scheduler", "local:2"], "give one of them"),
    (["prove", "--mutants", "--scheduler", "local:0"], "the workers must number 1 to"),
    (["prove", "--mutants", "--scheduler", "not a scheduler"], "is neither local:N"),
    (["prove", "--scheduler", "local:2"], "go with --mutants"),
    (["prove", "kaplan-n", "--only", "div-sqrt-by-d"], "go with --mutants"),
    (["prove", "--timeout", "5"], "go with --mutants"),
    (["prove", "--mutants", "--timeout", "0"], "--timeout 0 must be a positive, finite number"),
    (["prove", "--mutants", "--timeout", "nan"], "must be a positive, finite number"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    from formal.tools.cli import main
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


@slow
def test_the_executors_give_the_same_report():
    """The bugs are tasks of the execution layer: planted from this process, from worker processes or from a Dask
    cluster, the report is the same (but for the seconds and the processes)."""
    pytest.importorskip("distributed")
    from reference.execution.executors import parse_scheduler

    def stable(report):
        return [{k: v for k, v in m.items() if k != "seconds"} for m in report.as_json()["mutants"]]
    only = ["kaplan-mlp-five", "harmless", "unplantable", "about-nothing"]
    here = campaign(source=PLANTED, only=only, about=True, jobs=1)
    assert stable(campaign(source=PLANTED, only=only, about=True, jobs=2)) == stable(here)
    assert stable(campaign(source=PLANTED, only=only, about=True, scheduler=parse_scheduler("local:2", 4))) == \
        stable(here)


@slow
@needs_proc
def test_ctrl_c_ends_every_process_with_the_partial_report(tmp_path):
    """SIGINT to the whole process group, as a terminal sends it, while bugs are planted in worker processes'
    children: exit 130, the report of the bugs planted so far and one line on stderr, no traceback, and no
    process left — not the workers, not the children planting the bugs (each in a session of its own)."""
    process = subprocess.Popen([sys.executable, "-m", "formal", "prove", "--mutants", "--jobs", "2"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=interruptible)
    started = []

    def both_workers_plant():                  # two workers, each with a bug's child
        started[:] = descendants(process.pid)
        return len(started) >= 4
    out, err = ctrl_c(process, both_workers_plant, settle=2)
    assert process.returncode == 130, err
    assert re.fullmatch(r"formal-transformers: prove --mutants interrupted after \d+ of \d+ bugs; the report above "
                        r"is partial\n", err), err
    assert re.fullmatch(r"interrupted: \d+ of \d+ bugs planted — a partial report", out.splitlines()[-1]), out
    assert ended(started), [p for p in started if running(p)]
