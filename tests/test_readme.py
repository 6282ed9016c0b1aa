"""The README's Python snippets run, and each ``# → VALUE`` comment is what its statement evaluates to (its
``repr``; ``...`` stands for the rest): a comment cannot drift from what the code prints."""

import ast
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
#: Snippets that configure another program (a Sphinx conf.py) rather than run.
NOT_RUN = ("extensions = [",)


def _snippets() -> list:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return [b for b in blocks if not b.lstrip().startswith(NOT_RUN)]


def _expected(lines, node) -> str | None:
    """The ``# → VALUE`` ending the statement's last line, or on the comment line right after it."""
    last = lines[node.end_lineno - 1]
    if "# →" in last:
        return last.split("# →", 1)[1].strip()
    following = lines[node.end_lineno].strip() if node.end_lineno < len(lines) else ""
    return following[len("# →"):].strip() if following.startswith("# →") else None


def _matches(expected: str, got: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, got, re.S) is not None


def test_the_readme_has_checked_results():
    assert sum(len(re.findall("# →", b)) for b in _snippets()) >= 5


@pytest.mark.parametrize("snippet", _snippets(), ids=lambda s: s.strip().splitlines()[0][:40])
def test_every_result_comment_is_what_the_snippet_prints(snippet):
    lines, namespace, checked = snippet.splitlines(), {}, 0
    for node in ast.parse(snippet).body:
        expected = _expected(lines, node)
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "README", "eval"), namespace)
            if expected is not None:
                assert _matches(expected, repr(value)), (ast.unparse(node), expected, repr(value))
                checked += 1
        else:
            assert expected is None, f"a result comment on a statement that has no value: {ast.unparse(node)}"
            exec(compile(ast.Module([node], []), "README", "exec"), namespace)
    assert checked == sum("# →" in line for line in lines)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens kept), spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_within_the_readme_names_a_heading():
    text = README.read_text(encoding="utf-8")
    anchors = {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links and set(links) <= anchors, sorted(set(links) - anchors)


def test_the_contents_list_every_section():
    text = README.read_text(encoding="utf-8")
    contents = text[:text.index("\n## ")]
    assert {_slug(h) for h in re.findall(r"^## (.+)$", text, re.M)} <= set(re.findall(r"\]\(#([^)]+)\)", contents))
