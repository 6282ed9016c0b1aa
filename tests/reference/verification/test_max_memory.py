"""``verify --max-memory``: the limit each task's examples are estimated against, carried by the task to whichever
process runs it (the estimate's message tells the user to raise it with this flag)."""

from __future__ import annotations

import pytest

from formal.errors import ResourceError
from formal.guards import limits


def _prepare(**kwargs):
    pytest.importorskip("torch")
    from reference.verification.verify import prepare
    return prepare(**kwargs)


def test_a_tasks_examples_are_estimated_against_the_runs_limit():
    _, plan = _prepare(only=["mhattention"], variants="n_kv_heads=1000", max_memory="1M", device="cpu")
    assert plan.tasks and all(t.max_memory == 2**20 for t in plan.tasks)
    task = plan.tasks[0].parts()[0]
    assert task.max_memory == 2**20
    with limits.memory_limit("64G"), pytest.raises(ResourceError, match="memory limit of 1 MiB"):
        task.run()                                      # the task's own limit, not the caller's


def test_without_the_flag_the_default_limit_holds():
    _, plan = _prepare(only=["mhattention"], variants="n_kv_heads=1000000", device="cpu")
    assert all(t.max_memory is None for t in plan.tasks)
    with pytest.raises(ResourceError, match="memory limit of 4 GiB"):
        plan.tasks[0].parts()[0].run()


def test_the_flag_is_refused_with_mutants(capsys):
    from formal.tools.cli import main
    assert main(["verify", "--mutants", "--max-memory", "8G"]) == 2
    assert "--max-memory" in capsys.readouterr().err
