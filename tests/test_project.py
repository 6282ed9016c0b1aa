"""The project's own promises: the README's commands and CI run the same test command."""

import re
from pathlib import Path

from tests.tiers import slow

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    install_and_test = _readme_commands()[1].split(". .venv/bin/activate && ", 1)[1]
    assert install_and_test.endswith("python -m pytest")
    assert f'. "$venv/bin/activate" && {install_and_test}' in (ROOT / ".ci" / "run").read_text()


def test_readme_main_job_is_verify_with_the_cpu_wheel():
    """The main job needs torch: its install line takes the CPU wheel, as the test command does."""
    main_job = _readme_commands()[0]
    assert main_job.endswith("formal-transformers verify") and "pip install torch==2.13.0 " in main_job


def test_docs_tables_are_generated_from_the_objects():
    """docs/conf.py writes the conventions, options and presets tables from the objects at build time:
    every convention, every preset with its derived parameter count, and every model option appear."""
    import importlib.util

    from formal import algorithms
    from formal.costs.cost import CONVENTIONS
    from formal.models.presets import PRESETS

    spec = importlib.util.spec_from_file_location("docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    conventions, options, presets = conf._conventions(), conf._options(), conf._presets()
    assert all(f"``{name}``" in conventions for name in CONVENTIONS)
    assert all(f"``{option}``" in options for option in algorithms.etransformer.options)
    for preset in PRESETS.values():
        params = preset.evaluate(seq_len=preset.seq_len or 1)["params"]
        assert f"``{preset.name}``" in presets and f"{params:,}" in presets


def test_readme_states_the_catalogue_it_ships():
    """The README's kill-rate paragraph names the number of mutants the catalogue holds (the tests require
    every one killed), so the figure cannot go stale.  The catalogue is numpy: no torch needed."""
    from reference.catalogue import CONTROLS, MUTANTS
    readme = (ROOT / "README.md").read_text()
    assert f"{len(MUTANTS)} planted bugs" in readme
    assert f"({len(MUTANTS)} of {len(MUTANTS)} killed), {len(CONTROLS)} of\n{len(CONTROLS)} correct" in readme


def test_readme_points_nowhere_into_shared():
    """Users do not have ../shared: the README names none of its files."""
    readme = (ROOT / "README.md").read_text()
    assert "../shared" not in readme and "SPEC.md" not in readme and "DESIGN.md" not in readme


def _blocks(kind):
    return re.findall(rf"```{kind}\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_python_examples_run(tmp_path, monkeypatch):
    """Every Python block of the README runs as shown, in a fresh namespace (it defines what it uses)."""
    monkeypatch.chdir(tmp_path)
    blocks = _blocks("python")
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})  # the project's own text


def _shown_commands():
    """The ``formal-transformers`` command lines of the README's bash and console blocks (a line ending in ``\\``
    continued on the next), comments cut."""
    import shlex
    lines = [line.removeprefix("$ ") for kind in ("bash", "console") for block in _blocks(kind)
             for line in re.sub(r"\\\n\s*", " ", block).splitlines()]
    return [shlex.split(line, comments=True)[1:] for line in lines if line.startswith("formal-transformers ")]


@slow
def test_readme_commands_of_the_specification_run(tmp_path, monkeypatch, capsys):
    """Each ``list``/``show``/``complexity``/``graph``/``check``/``prove``/``table1`` command the README shows exits 0
    as written, the configuration file being the README's first TOML block and the claims file its second
    (``verify`` and ``conform`` are run by their tests)."""
    from formal.tools.cli import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-model.toml").write_text(_blocks("toml")[0] + "\n")
    (tmp_path / "my_graph.txt").write_text("0 1\n1 2\n# a comment\n2 0\n")
    (tmp_path / "claims.toml").write_text(_blocks("toml")[1] + "\n")
    run = ("list", "show", "complexity", "graph", "check", "prove", "table1")
    commands = [argv for argv in _shown_commands() if argv[0] in run]
    assert {argv[0] for argv in commands} == set(run)
    for argv in commands:
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 0, (argv, err)
    assert (tmp_path / "swin.png").exists()  # the one command the README says writes a file


def test_readme_names_the_theorems_and_spec_bugs_there_are():
    """The README's theorem paragraphs name the number of theorems the registry holds and the number of planted
    bugs the spec's catalogue holds (the tests require every one caught)."""
    from proofs.mutants import catalogue
    from proofs.registry import theorems
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"The {len(theorems())} theorems:" in readme and f"All {len(theorems())} run in" in readme
    assert f"All {len(catalogue())} bugs are caught by the theorems they are about" in readme.replace("**", "")
