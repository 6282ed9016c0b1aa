"""Every page of the built documentation as a reader's browser lays it out (headless Chromium, 1400 px wide): no page
scrolls sideways and no table of the objects runs out of its column, in this site's theme and in a user's project
with Sphinx's default theme; each algorithm page offers its call, its ``conform`` command and its links; the
theorems page shows the results; the claims page shows every note and which failures are expected, and its filter
box works; no page's text shows TeX source or a parameter name spelt out instead of typeset.  Skipped, never
failed, where no Chromium is installed (``apt-get install -y chromium chromium-driver; pip install selenium``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tiers import slow

pytestmark = [pytest.mark.usefixtures("browser"), slow]

WIDTH, HEIGHT = 1400, 1000
#: The tables the extension writes: each must fit the column it is in.
TABLES = "table.formal-lines, table.formal-totals, table.formal-figures, table.formal-claims, table.formal-family"
#: TeX source a reader must not see in a page's text (outside code).
TEX = ("_{", "^{", "\\mathrm", "\\frac", "\\sqrt", "\\ell", "\\cdot")
#: Parameter names spelt out where a symbol belongs: γ¹ written "gamma1", names split by a misread underscore.
MANGLED = re.compile(r"\b(?:gamma|beta)\d|\b\w_[a-z] (?:ar|at|ead|eta)\b|\bs\d_\{")
#: Words that, set in math italic, are a name misread as a product of variables (𝑔𝑎𝑚𝑚𝑎, 𝑚𝑙𝑝, 𝑒𝑛𝑐, ℎ𝑒𝑎𝑑).
ITALIC_WORDS = re.compile(r"gamma|beta|theta|mlp|head|hat|bar|enc|dec|attn|mid|out|patch|sw")


#: Each formula of the page as its italic letters: a single-letter ``<mi>`` (italic unless told otherwise) gives its
#: letter, anything else a separator — so a name set as a product of italic variables spells its word.
ITALIC_RUNS = """
return Array.from(document.getElementsByTagNameNS('http://www.w3.org/1998/Math/MathML', 'math')).map(m => {
  let out = '';
  for (const e of m.querySelectorAll('*')) {
    if (e.children.length) continue;
    const t = e.textContent.trim();
    out += (e.localName === 'mi' && t.length === 1 && /[a-z]/i.test(t) && e.getAttribute('mathvariant') !== 'normal')
      ? t.toLowerCase() : '|';
  }
  return out;
});
"""


OVERFLOW = """
const doc = document.documentElement;
const out = {page: [doc.scrollWidth, doc.clientWidth], tables: []};
for (const t of document.querySelectorAll(arguments[0])) {
  const box = getComputedStyle(t).display === 'block' ? t : t.parentElement;   // the box the table scrolls in
  if (box.scrollWidth > box.clientWidth + 1 || t.getBoundingClientRect().right > doc.clientWidth)
    out.tables.push([t.className, box.scrollWidth, box.clientWidth]);
}
return out;
"""

# the visible text, without code (where names and TeX are what the reader should copy)
VISIBLE_TEXT = """
const clone = document.querySelector('article, div.body, main').cloneNode(true);
clone.querySelectorAll('pre, code, script, style, svg').forEach(e => e.remove());
document.body.appendChild(clone);
const text = clone.innerText;
clone.remove();
return text;
"""


def _plain(text: str) -> str:
    """Text with the typographer's quotes and dashes docutils writes made plain again, spaces collapsed."""
    for fancy, plain in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("—", "---"), ("–", "--")):
        text = text.replace(fancy, plain)
    return re.sub(r"\s+", " ", text).strip()


def _pages(built: Path) -> list:
    return sorted(str(p.relative_to(built)) for p in built.rglob("*.html")
                  if not str(p.relative_to(built)).startswith(("_static", "_sources")))


def _open(driver, path: Path) -> None:
    driver.set_window_size(WIDTH, HEIGHT)
    driver.get(path.as_uri())


def _overflows(driver, built: Path, pages, *, tables: bool = False) -> list:
    """The pages wider than the window (and, with ``tables``, those with a table of the objects cut off in the
    box it scrolls in)."""
    bad = []
    for page in pages:
        _open(driver, built / page)
        found = driver.execute_script(OVERFLOW, TABLES)
        if found["page"][0] > found["page"][1] or (tables and found["tables"]):
            bad.append((page, found))
    return bad


def test_no_page_scrolls_sideways(browser, built_docs):
    """At 1400 px no page of the site is wider than the window: a table too wide for its column scrolls in its own
    box, with a scroll bar."""
    bad = _overflows(browser, built_docs, _pages(built_docs))
    assert not bad, f"pages that overflow at {WIDTH} px (page [scroll, client] widths; tables): {bad[:5]}"


@pytest.mark.parametrize("page", ["algorithms/mhattention.html", "algorithms/dtransformer.html", "models/gpt2.html",
                                  "objects/catalogue.html"])
def test_long_sums_wrap_instead_of_running_off(browser, built_docs, page):
    """Algorithm 5's FLOPs column, Algorithm 10's and GPT-2's formulas and the catalogue's columns are all in view:
    a long sum wraps between its terms, so no table of these pages needs to scroll."""
    bad = _overflows(browser, built_docs, [page], tables=True)
    assert not bad, f"a table is cut off at {WIDTH} px: {bad}"


def test_a_users_project_with_the_default_theme_does_not_overflow(browser, tmp_path):
    """In a project of one's own with Sphinx's default theme, the widest entries — every FLOP convention of
    Algorithms 5 and 10, GPT-2's formulas, a table of claims — stay within the page at 1400 px."""
    from sphinx.cmd.build import build_main
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["formal.tools.sphinx"]\n', encoding="utf-8")
    (source / "index.rst").write_text(
        "Title\n=====\n\n.. formal:algorithm:: mhattention\n   :convention: all\n\n"
        ".. formal:algorithm:: dtransformer\n   :convention: all\n\n.. formal:model:: gpt2\n\n"
        ".. formal:models:: gpt2 gpt2-medium gpt2-large gpt2-xl\n\n.. formal:claims:: models\n", encoding="utf-8")
    assert build_main(["-W", "-q", "-b", "html", str(source), str(tmp_path / "out")]) == 0
    bad = _overflows(browser, tmp_path / "out", ["index.html"])
    assert not bad, f"the user's page overflows at {WIDTH} px: {bad}"


def test_every_algorithm_page_offers_its_call_its_command_and_its_links(browser, built_docs):
    from formal import algorithms
    for name in algorithms.ALGORITHMS:
        _open(browser, built_docs / f"algorithms/{name}.html")
        code = browser.execute_script("return Array.from(document.querySelectorAll('pre')).map(p => p.innerText)"
                                      ".join('\\n')")
        assert f'algorithms.get("{name}")' in code, (name, code[:300])
        assert f"formal-transformers conform path/to/yours.py:FUNCTION --algorithm {name}" in code, name
        related = browser.execute_script(
            "const h = Array.from(document.querySelectorAll('p.rubric')).find(p => p.innerText === 'Related');"
            "const list = h && h.nextElementSibling; return list ? Array.from(list.querySelectorAll('dt'))"
            ".map(d => d.innerText.replace(/:$/, '')) : []")
        assert "Source" in related, (name, related)
        links = browser.execute_script("return document.querySelectorAll('dl.field-list a.reference').length")
        assert links, f"{name}'s page links to nothing"


def test_the_theorems_page_shows_each_result(browser, built_docs):
    from proofs.registry import theorems
    _open(browser, built_docs / "objects/theorems.html")
    text = browser.execute_script("return document.body.innerText")
    n = len(theorems())
    assert f"{n} theorems: {n} proved, {n} twins rejected" in text
    assert len(re.findall(r"Result:?\s*\n?\s*proved:", text)) == n, "every entry shows its proof's verdict"
    assert len(re.findall(r"Twin:?\s*\n?\s*rejected:", text)) == n, "every entry shows its twin's counterexample"


def test_the_claims_page_shows_notes_and_expectations_and_filters(browser, built_docs):
    from selenium.webdriver.common.by import By

    from formal.tools.claims.catalogue import files
    from formal.tools.claims.claim import load
    claims = [c for path in files() for c in load(path)]
    _open(browser, built_docs / "objects/catalogue.html")
    text = re.sub(r"\s+", " ", browser.execute_script("return document.body.innerText"))
    for claim in claims:
        note = claim.data.get("note")
        if note:
            assert _plain(note) in _plain(text), f"the note of {claim.id} is not shown"
    expected_failures = sum(c.expect == "fails" for c in claims)
    verdicts = browser.execute_script("return Array.from(document.querySelectorAll('table.formal-claims "
                                      "[class*=formal-verdict]')).map(e => e.innerText)")
    assert verdicts.count("fails (as expected)") == expected_failures
    box = browser.find_element(By.CSS_SELECTOR, ".formal-filter input")
    box.send_keys(claims[0].id)
    shown = browser.execute_script("return Array.from(document.querySelectorAll('table.formal-claims tbody tr'))"
                                   ".filter(r => !r.hidden).map(r => r.innerText)")
    assert shown and all(claims[0].id in row for row in shown), shown


def test_no_page_shows_tex_source_or_a_mangled_name(browser, built_docs):
    bad = []
    for page in _pages(built_docs):
        if page.startswith("_modules"):     # highlighted source code
            continue
        _open(browser, built_docs / page)
        text = browser.execute_script(VISIBLE_TEXT)
        tex = [t for t in TEX if t in text]
        mangled = []
        if page.startswith(("algorithms/", "models/", "objects/")):
            runs = browser.execute_script(ITALIC_RUNS)
            mangled = MANGLED.findall(text) + [w for run in runs for w in ITALIC_WORDS.findall(run)]
        if tex or mangled:
            at = text.find(tex[0]) if tex else text.find(mangled[0])
            bad.append((page, tex, mangled[:3], text[max(0, at - 60):at + 60]))
    assert not bad, f"TeX source or a mangled name in a page's text: {bad[:5]}"
