"""``formal-transformers show NAME --latex`` compiles: its ``algorithm`` float and ``algorithmic`` environment
(algpseudocode's ``\\State``, ``\\For`` … ``\\EndFor``, ``\\Require``, ``\\Ensure``, ``\\Statex``, ``\\Comment``)
wrapped in a minimal article and run through ``pdflatex``. Skipped where no LaTeX is installed
(``apt-get install -y --no-install-recommends texlive-latex-base texlive-latex-recommended texlive-science``).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess

import pytest

from formal.algorithms import ALGORITHMS
from formal.tools import cli

INSTALL = ("apt-get install -y --no-install-recommends texlive-latex-base texlive-latex-recommended "
           "texlive-science")
PACKAGES = ("amsmath", "amssymb", "algorithm", "algpseudocode")

PREAMBLE = r"""\documentclass{article}
\usepackage{amsmath,amssymb}  % \operatorname, \frac, \sqrt; \mathbb
\usepackage{algorithm}        % the algorithm float, \caption
\usepackage{algpseudocode}    % the algorithmic environment: \State, \For ... \EndFor, \Require, \Comment
\begin{document}
"""
END = "\\end{document}\n"

NAMES = ("attention", "mhattention", "layer_norm", "dtransformer", "window_mhattention")


def _missing_packages() -> list[str]:
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich is None:
        return []  # cannot tell: let pdflatex say
    found = subprocess.run([kpsewhich, *(f"{p}.sty" for p in PACKAGES)], capture_output=True, text=True)
    return [p for p in PACKAGES if f"/{p}.sty" not in found.stdout]


@pytest.fixture(scope="module")
def pdflatex():
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip(f"no pdflatex on PATH: {INSTALL}")
    missing = _missing_packages()
    if missing:
        pytest.skip(f"LaTeX packages {', '.join(missing)} are not installed: {INSTALL}")
    return pdflatex


def show_latex(name: str) -> str:
    """What ``formal-transformers show NAME --latex`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["show", name, "--latex"])
    assert status == 0, f"show {name} --latex exited {status}"
    return out.getvalue()


def compile_latex(pdflatex: str, body: str, directory) -> tuple[int, str, str]:
    """``body`` in the minimal document, through pdflatex: (exit status, the errors, the whole document)."""
    document = PREAMBLE + body + END
    (directory / "doc.tex").write_text(document, encoding="utf-8")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                         cwd=directory, capture_output=True, text=True, errors="replace", timeout=300)
    return run.returncode, _errors(run.stdout) or run.stdout[-3000:], document


def _errors(output: str) -> str:
    """TeX's error messages in ``output``: each ``! ...`` line through its ``l.NNN`` context line."""
    lines, blocks = output.splitlines(), []
    for i, line in enumerate(lines):
        if not line.startswith("!") or "Fatal error occurred" in line:
            continue
        block = []
        for j in range(i, min(i + 14, len(lines))):
            if lines[j].strip():
                block.append(lines[j].rstrip())
            if lines[j].startswith("l.") and j + 1 < len(lines):
                block.append(lines[j + 1].rstrip())  # the rest of the line TeX stopped in
                break
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


@pytest.mark.parametrize("name", NAMES)
def test_show_latex_compiles(pdflatex, name, tmp_path):
    latex = show_latex(name)
    assert r"\begin{algorithmic}" in latex
    status, errors, document = compile_latex(pdflatex, latex, tmp_path)
    assert status == 0, f"show {name} --latex does not compile (pdflatex exit {status}):\n{errors}\n\n{document}"
    assert (tmp_path / "doc.pdf").is_file()


def test_every_algorithm_compiles(pdflatex, tmp_path):
    """All the registry's algorithms in one document (one pdflatex run); a failure names its algorithm."""
    parts, owner, line = [], [], PREAMBLE.count("\n") + 1
    for name in ALGORITHMS:
        latex = show_latex(name)
        parts.append(latex)
        owner += [name] * latex.count("\n")
    status, errors, _ = compile_latex(pdflatex, "".join(parts), tmp_path)
    if status:
        numbers = [int(n) for n in re.findall(r"\bl\.(\d+)\b", errors)]
        culprits = sorted({owner[n - line] for n in numbers if 0 <= n - line < len(owner)})
        pytest.fail(f"show --latex of {', '.join(culprits) or '?'} does not compile (pdflatex exit {status}):\n"
                    f"{errors}", pytrace=False)
