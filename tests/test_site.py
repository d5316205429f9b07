"""The documentation site (mkdocs.yml) works offline and renders cleanly: built with ``mkdocs build --strict``
(once, into a temporary folder), it names no file on another host (no highlight.js from a CDN), its API reference
shows no raw reST role (``:func:`name```), no heading id starts with a digit, and, in a headless Chromium that
loads every page from 127.0.0.1, no page logs an error, asks another host for anything, or runs past its column.

Needs the docs extra (mkdocs, mkdocstrings); the browser test also the web extra (Playwright) and a Chromium
(Debian's ``chromium``, Playwright's own, or ``SM_CHROMIUM``), else it is skipped and says why.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("mkdocs", reason="the site needs the docs extra (mkdocs)")
pytest.importorskip("mkdocstrings", reason="the site needs the docs extra (mkdocstrings)")

ROOT = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(?:py:)?(?:mod|func|class|data|meth|attr|exc|obj|const):")
SOURCE = re.compile(r"<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)=\"([^\"]*)\"")
HEADING_ID = re.compile(r"<h[1-6][^>]*\bid=\"([^\"]*)\"")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as CI builds it (``mkdocs build --strict``), in a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"site built in {time.monotonic() - start:.1f} s")
    return out


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_no_page_names_a_file_on_another_host(site):
    found = []
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        found += [f"{page.relative_to(site)}: {url}" for url in SOURCE.findall(text) if urlsplit(url).netloc]
        if "cdnjs" in text:
            found.append(f"{page.relative_to(site)}: cdnjs")
    assert len(pages(site)) > 10 and found == []


def test_the_api_reference_shows_no_raw_rest_role(site):
    """The docstrings' roles are rendered as code (docs/hooks.py), a dotted name linked to its entry when the
    reference has one; no page, and not the search index, keeps the role's text."""
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "sm_env.core.rules" in api
    left = [f"{p.relative_to(site)}: {m}" for p in pages(site) for m in ROLE.findall(p.read_text(encoding="utf-8"))]
    left += [f"search index: {m}" for m in ROLE.findall((site / "search" / "search_index.json").read_text("utf-8"))]
    assert left == []
    # :mod:`sm_env.core.rules` (in sm_env.envs.aec's docstring) links to the module's own entry
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#sm_env\.core\.rules"[^>]*><code>', api)


def test_no_heading_id_starts_with_a_digit(site):
    """The theme's scrollspy looks each id of a page's table of contents up as a CSS selector: ``#3-5-9`` is
    none, and the page's script stopped there (docs/hooks.py gives such a heading ``section-...``). Not checked:
    the theme's own 404 page (its ``404-page-not-found`` is in its template, and it has no table of contents)."""
    ours = [p for p in pages(site) if p.name != "404.html"]
    found = [f"{p.relative_to(site)}: {i}" for p in ours for i in HEADING_ID.findall(p.read_text("utf-8"))]
    assert len(found) > 100
    assert [f for f in found if f.rsplit(": ", 1)[1][:1].isdigit()] == []


def _chromium() -> str | None:
    """A Chromium executable: $SM_CHROMIUM, Debian's chromium, or None (Playwright's own, if installed)."""
    if os.environ.get("SM_CHROMIUM"):
        return os.environ["SM_CHROMIUM"]
    return shutil.which("chromium") or shutil.which("chromium-browser")


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a page left before its search index came: no traceback
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _serving(folder: Path):
    """``folder`` over HTTP on 127.0.0.1 at a free port, in a thread; yields the base URL."""
    server = _QuietServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# the theme's search runs in a Web Worker, which loads its index after the page's load event: a page is done once
# the worker says it is ready (leaving the page before would cut its loading short, an error of its own)
SEARCH_READY = """(() => {
    const Base = window.Worker;
    window.Worker = class extends Base {
        constructor(...args) {
            super(...args);
            this.addEventListener('message', e => { if (e.data && e.data.allowSearch) window.searchReady = true; });
        }
    };
})();"""
# every page shares one search (the theme's script and one index): it is checked, loaded to the end, on these pages;
# on the others the search worker is not started (a stand-in that never answers), so each loads in a fraction of
# the time, and its own scripts, requests and layout are checked
NO_SEARCH_WORKER = """(() => {
    window.Worker = class { constructor() {} postMessage() {} addEventListener() {} terminate() {} };
})();"""
SEARCHED = ("index.html", "api/index.html", "training/index.html", "results/index.html")

# the main column's right edge, and what sticks out of it (a scrolling table block or code block may be wider
# inside; it scrolls, the column does not)
OVERFLOW = """() => {
    const main = document.querySelector('[role=main]');
    if (!main) return [];
    const right = main.getBoundingClientRect().right + 1;
    return [...main.querySelectorAll('*')]
        .filter(e => !e.parentElement.closest('.table-scroll, pre') && e.getBoundingClientRect().right > right)
        .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ': ' + (e.textContent || '').slice(0, 40));
}"""


def test_every_page_loads_offline_without_an_error_in_a_browser(site):
    """Every page, one after the other at 1280x900 (those of SEARCHED until their search is ready): no console
    error or uncaught exception (before: ``hljs is not defined`` everywhere, ``'#3-5-9' is not a valid selector``
    and what followed it on the leaderboard, presets and rules pages), no request to a host other than 127.0.0.1
    (before: highlight.js from cdnjs), and nothing wider than the page's column but inside a scrolling block
    (before: the leaderboard's first table ran past it)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser check needs the web extra (playwright)")
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        except sync_api.Error as err:
            pytest.skip(
                "no Chromium for Playwright: install Debian's chromium (apt-get install chromium) or run "
                f"'playwright install chromium', or set SM_CHROMIUM ({str(err).splitlines()[0]})"
            )
        errors: list[str] = []
        elsewhere: list[str] = []
        overflow: list[str] = []
        current = [""]
        try:
            with _serving(site) as base:

                def request(r):
                    url = urlsplit(r.url)
                    if url.scheme not in ("data", "blob", "about") and url.hostname != "127.0.0.1":
                        elsewhere.append(f"{current[0]}: {r.url}")

                def watched(script: str):
                    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                    page.add_init_script(script)
                    page.on("console", lambda m: m.type == "error" and errors.append(f"{current[0]}: {m.text}"))
                    page.on("pageerror", lambda e: errors.append(f"{current[0]}: {e}"))
                    page.on("request", request)
                    return page

                searching, plain = watched(SEARCH_READY), watched(NO_SEARCH_WORKER)
                names = [str(path.relative_to(site)).replace(os.sep, "/") for path in pages(site)]
                for name in names:
                    current[0] = name
                    page = searching if name in SEARCHED else plain
                    page.goto(base + name, wait_until="load")  # the page's scripts have run
                    if page is searching:
                        page.wait_for_function("window.searchReady === true", timeout=15_000)  # and its search's
                    overflow += [f"{name}: {what}" for what in page.evaluate(OVERFLOW)]
                print(f"{len(names)} pages checked")
                # closed before the server stops: the last page still fetches after its load event (the browser's
                # icon request), and the server stopping under it read as that page's error (twice in CI; the
                # server stopped right after a page's load gave it 5 times in 5)
                searching.context.close()
                plain.context.close()
        finally:
            browser.close()
    assert len(names) > 10 and set(SEARCHED) <= set(names)
    assert errors == []
    assert elsewhere == []
    assert overflow == []
