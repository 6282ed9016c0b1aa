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


def test_readme_main_job_shows_mhattention():
    assert _readme_commands()[0].endswith("formal-transformers show mhattention")
