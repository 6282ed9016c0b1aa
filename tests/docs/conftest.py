"""Fixtures of the documentation tests, which read the built site as a reader would.

``built_docs``
    the site built once per session (``sphinx-build -W -b html docs OUT``) into a temporary directory; its
    path. The build's output is the failure message when it fails; skipped where Sphinx is not installed.
``browser``
    a headless Chromium driven through selenium, kept from making any network request of its own; skipped —
    never failed — where selenium, Chromium or chromedriver is missing. Chromium comes from the system's
    packages (``apt-get install -y chromium chromium-driver``), never a browser downloaded at run time: the
    driver's path is given, so selenium's own driver manager never runs.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"

NO_BROWSER = "no Chromium/chromedriver: apt-get install -y chromium chromium-driver; pip install selenium"

# Flags that keep Chromium from making requests of its own (updates, sync, metrics, safe browsing, …); the
# host resolver rule makes any name lookup fail, so that nothing can leave the machine even if a page asks.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--window-size=1280,1024",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--metrics-recording-only",
    "--safebrowsing-disable-auto-update",
    "--no-pings",
    "--password-store=basic",
    "--use-mock-keychain",
    "--disable-features=OptimizationHints,OptimizationHintsFetching,Translate,MediaRouter,"
    "DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater,"
    "InterestFeedContentSuggestions,NetworkTimeServiceQuerying,SafeBrowsingEnhancedProtection",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
)


def _which(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_binaries() -> tuple[str, str] | None:
    """The paths of Chromium and chromedriver, or None when either is not on PATH."""
    chromium = _which("chromium", "chromium-browser")
    driver = _which("chromedriver")
    return (chromium, driver) if chromium and driver else None


@pytest.fixture(scope="session")
def built_docs(tmp_path_factory) -> Path:
    """The HTML site built once from ``docs/`` with warnings as errors; its directory."""
    try:
        from sphinx.cmd.build import build_main
    except ImportError:
        pytest.skip("Sphinx is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs_html")
    log = io.StringIO()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        status = build_main(["-W", "-q", "-b", "html", str(DOCS), str(out)])
    if status != 0:
        pytest.fail(f"sphinx-build -W -b html docs failed (exit status {status}):\n{log.getvalue()}",
                    pytrace=False)
    return out


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (selenium WebDriver) that records the network events of the pages it loads
    (performance log, ``goog:loggingPrefs``)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip(f"{NO_BROWSER} (selenium is not importable)")
    binaries = browser_binaries()
    if binaries is None:
        pytest.skip(f"{NO_BROWSER} (chromium or chromedriver is not on PATH)")
    chromium, chromedriver = binaries
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        driver.set_page_load_timeout(30)
        driver.execute_cdp_cmd("Network.enable", {})
        yield driver
    finally:
        driver.quit()
