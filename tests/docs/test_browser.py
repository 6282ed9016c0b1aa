"""The built documentation as a reader sees it: pages opened from disk (``file://``) in a headless Chromium.

The page of Algorithm 5 shows its numbered lines and its math rendered by the browser (MathML written at
build time: no TeX left in the visible text, no JavaScript renderer fetched from a CDN); Sphinx's search
finds layer norm; and no page makes a request that leaves the machine. Skipped, never failed, where no
Chromium is installed (``apt-get install -y chromium chromium-driver; pip install selenium``).
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest

from formal import algorithms
from tests.tiers import slow

# the browser fixture first: where there is none the tests are skipped before the docs are built
pytestmark = [pytest.mark.usefixtures("browser"), slow]

ALGORITHM_PAGE = "algorithms/mhattention.html"
LAYER_NORM_PAGE = "algorithms/layer_norm.html"
SEARCH_PAGE = "search.html"
SEARCH_QUERY = "?q=layer+norm"
LOCAL_SCHEMES = ("file", "data", "blob", "about", "chrome")  # blob: and data: hold bytes of the page itself
TEX_LEFT = ("\\sqrt", "\\mathrm", "\\frac", "$")
SEARCH_TIMEOUT = 20  # seconds

MATHML = "http://www.w3.org/1998/Math/MathML"


def _open(driver, built_docs, page, query=""):
    """Load ``page`` of the built site (``file://``) and wait for its load event."""
    path = built_docs / page
    assert path.is_file(), f"the docs build wrote no {page} (in {built_docs})"
    driver.get(path.as_uri() + query)
    return path


def _network(driver):
    """The network events since the last call: ``(urls requested, [(url, error) of requests that failed])``."""
    urls, by_id, failed = [], {}, []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls.append(url)
            by_id[params.get("requestId")] = url
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            failed.append((by_id.get(params.get("requestId"), "?"), params.get("errorText", "")))
    return urls, failed


def _wait_for_search(driver):
    """Wait until Sphinx's search has finished (its summary line is written last); the result links."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    summary = "const s = document.querySelector('#search-results p.search-summary'); return s ? s.innerText : ''"
    try:
        WebDriverWait(driver, SEARCH_TIMEOUT, poll_frequency=0.1).until(lambda d: d.execute_script(summary))
    except TimeoutException:
        shown = driver.execute_script(
            "const r = document.getElementById('search-results'); return r ? r.innerText : null")
        pytest.fail(f"the search for 'layer norm' did not finish within {SEARCH_TIMEOUT} s; #search-results "
                    f"shows: {shown!r}", pytrace=False)
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#search-results a'))"
        ".map(a => [a.href, a.innerText])"), driver.execute_script(summary)


def test_algorithm_page_shows_its_numbered_lines(browser, built_docs):
    _open(browser, built_docs, ALGORITHM_PAGE)
    assert "Algorithm 5" in browser.title, f"title of {ALGORITHM_PAGE}: {browser.title!r}"
    tables = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.formal-lines')).map(t =>"
        " Array.from(t.rows).filter(r => r.cells.length && r.cells[0].tagName === 'TD')"
        "  .map(r => r.cells[0].innerText.trim()))")
    assert tables, f"{ALGORITHM_PAGE} has no table.formal-lines"
    for cells in tables:  # every numbered listing on the page counts 1, 2, 3, … with no gap
        assert cells == [str(n) for n in range(1, len(cells) + 1)], (
            f"the first cells of a table.formal-lines rows read {cells}, not 1…{len(cells)}")
    lines = len(algorithms.get("mhattention").derivation.records)  # `show mhattention` numbers as many
    assert len(tables[0]) == lines, (
        f"the first table.formal-lines has {len(tables[0])} numbered rows; mhattention derives {lines} lines")


def test_algorithm_page_math_is_rendered(browser, built_docs):
    """No TeX in the page's text outside its code blocks (the commands to copy start with a ``$`` prompt)."""
    _open(browser, built_docs, ALGORITHM_PAGE)
    text = browser.execute_script("const c = document.body.cloneNode(true); c.querySelectorAll('pre')"
                                  ".forEach(e => e.remove()); document.documentElement.appendChild(c);"
                                  "const t = c.innerText; c.remove(); return t")
    for tex in TEX_LEFT:
        at = text.find(tex)
        assert at < 0, (f"the visible text of {ALGORITHM_PAGE} still shows {tex!r}: "
                        f"…{text[max(0, at - 80):at + 80]!r}…")
    maths = browser.execute_script(
        "return Array.from(document.getElementsByTagNameNS(arguments[0], 'math')).map(m => {"
        " const r = m.getBoundingClientRect();"
        " return {width: r.width, height: r.height, mathml: m instanceof MathMLElement,"
        "         display: getComputedStyle(m).display}; })", MATHML)
    assert maths, f"{ALGORITHM_PAGE} has no <math> element (MathML written at build time)"
    assert all(m["mathml"] for m in maths), "the browser does not treat <math> as MathML"
    rendered = [m for m in maths if m["width"] > 0 and m["height"] > 0]
    assert rendered, f"no <math> element of {ALGORITHM_PAGE} has a rendered size: {maths[:5]}"
    assert any("math" in m["display"] for m in rendered), (
        f"no <math> element is laid out as math (computed display): {rendered[:5]}")


def test_search_finds_layer_norm(browser, built_docs):
    _open(browser, built_docs, SEARCH_PAGE, SEARCH_QUERY)
    links, summary = _wait_for_search(browser)
    assert links, f"the search for 'layer norm' found nothing: {summary!r}"
    wanted = [href for href, text in links
              if urlsplit(href).path.endswith("/" + LAYER_NORM_PAGE) or re.search(r"layer[\s_-]*norm", text, re.I)]
    assert wanted, f"no result of the search for 'layer norm' is the layer norm page: {links}"


def test_no_request_leaves_the_machine(browser, built_docs):
    """Every request the pages make (stylesheets, scripts, fonts, the search index) is for a local file, and
    those of the algorithm page all succeed."""
    _network(browser)  # forget earlier pages' events
    _open(browser, built_docs, ALGORITHM_PAGE)
    algorithm_urls, failed = _network(browser)
    _open(browser, built_docs, SEARCH_PAGE, SEARCH_QUERY)
    _wait_for_search(browser)
    search_urls, _ = _network(browser)  # (the search's page summaries are fetch()es, refused from file://)
    urls = algorithm_urls + search_urls
    assert any(u.startswith("file:") and u.split("?")[0].endswith(ALGORITHM_PAGE) for u in urls), (
        f"the performance log recorded no request for {ALGORITHM_PAGE}: {urls}")
    remote = sorted({u for u in urls if urlsplit(u).scheme not in LOCAL_SCHEMES})
    assert not remote, f"requests that would leave the machine: {remote}"
    assert not failed, f"requests of {ALGORITHM_PAGE} that failed: {failed}"
