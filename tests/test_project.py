"""The project's own promises: the README's commands and CI run the same test command."""

import re
from pathlib import Path

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
    from formal.cost import CONVENTIONS
    from formal.presets import PRESETS

    spec = importlib.util.spec_from_file_location("docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    conventions, options, presets = conf._conventions(), conf._options(), conf._presets()
    assert all(f"``{name}``" in conventions for name in CONVENTIONS)
    assert all(f"``{option}``" in options for option in algorithms.etransformer.options)
    for preset in PRESETS.values():
        assert f"``{preset.name}``" in presets and f"{preset.evaluate()['params']:,}" in presets


def test_readme_states_the_catalogue_it_ships():
    """The README's kill-rate paragraph names the number of mutants the catalogue holds (the tests require
    every one killed), so the figure cannot go stale."""
    import pytest
    pytest.importorskip("torch")
    from reference.mutants import CONTROLS, MUTANTS
    readme = (ROOT / "README.md").read_text()
    assert f"{len(MUTANTS)} planted bugs" in readme
    assert f"({len(MUTANTS)} of {len(MUTANTS)} killed), {len(CONTROLS)} of\n{len(CONTROLS)} correct" in readme


def test_readme_points_nowhere_into_shared():
    """Users do not have ../shared: the README names none of its files."""
    readme = (ROOT / "README.md").read_text()
    assert "../shared" not in readme and "SPEC.md" not in readme and "DESIGN.md" not in readme
