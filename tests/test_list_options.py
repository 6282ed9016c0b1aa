"""A comma-separated list option (``--only``) or a list of names on the command line names each thing once: a
name given twice is refused in one line, exit 2, naming it — as ``-o``, ``--size`` and ``--variants`` refuse a key
given twice and a claim's ``in`` a size named twice — instead of checking it twice and counting it twice
(``verify --only attention,attention`` reported 12 checks where there are 6)."""

from __future__ import annotations

import pytest

from formal.tools.arguments import UsageError, each_once, name_list
from formal.tools.cli import main


def test_a_list_names_each_once():
    assert name_list(" attention , mhattention,", "--only", "algorithm", "see `list`") == ["attention", "mhattention"]
    with pytest.raises(UsageError, match=r"^--only 'a,b,a' names the algorithm 'a' twice$"):
        name_list("a,b,a", "--only", "algorithm", "see `list`")
    with pytest.raises(UsageError, match=r"^--only 'a, a' names the bug 'a' twice$"):   # spaces do not hide it
        name_list("a, a", "--only", "bug", "")
    with pytest.raises(UsageError, match=r"names no algorithm"):
        name_list(" , ", "--only", "algorithm", "see `list`")
    assert each_once(("x", "y"), "the command line", "theorem") == ["x", "y"]


@pytest.mark.parametrize("argv, named", [
    (["verify", "--only", "attention,attention", "--dry-run"], "--only 'attention,attention' names the algorithm "
                                                               "'attention' twice"),
    (["verify", "--only", "attention,mhattention, attention", "--jobs", "1"], "names the algorithm 'attention' twice"),
    (["verify", "--mutants", "--only", "attention,attention", "--dry-run"], "names the algorithm 'attention' twice"),
    (["prove", "--mutants", "--only", "div-sqrt-by-d,div-sqrt-by-d"], "names the bug 'div-sqrt-by-d' twice"),
    (["prove", "--mutants", "--list", "--only", "div-sqrt-by-d,div-sqrt-by-d"], "names the bug 'div-sqrt-by-d' twice"),
    (["prove", "kaplan-n", "kaplan-n"], "the command line names the theorem 'kaplan-n' twice"),
])
def test_a_name_given_twice_is_refused_in_one_line(capsys, argv, named):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("formal-transformers: error: ")
    assert named in err


def test_each_name_once_still_runs(capsys):
    assert main(["verify", "--only", "attention,mhattention", "--dry-run"]) == 0
    assert "attention" in capsys.readouterr().out
    assert main(["prove", "--mutants", "--list", "--only", "div-sqrt-by-d"]) == 0
