"""docs/results.md is a page a reader can take in: at most 40 KB of tables (the headline, the shipped agents,
speed, the curves from scratch, every experiment), each row linking to the page of its experiment under
docs/results/, and every such page has a date, a command and what it showed, and is in the site's navigation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.md"
PAGES = sorted((ROOT / "docs" / "results").glob("*.md"))
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def test_results_page_is_short_and_links_every_experiment_page():
    text = RESULTS.read_text(encoding="utf-8")
    assert len(text.encode()) <= 40_000
    assert len(PAGES) >= 40
    linked = {target for target, _ in LINK.findall(text) if target.startswith("results/")}
    assert linked == {f"results/{page.name}" for page in PAGES}
    for table in ("## Headline", "## The shipped agents", "## Speed", "## From scratch", "## Every experiment"):
        assert table in text


def test_every_experiment_page_says_when_how_and_what_it_showed():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert text.startswith("# "), page.name
        assert re.search(r"^\*Recorded \d{4}-\d{2}-\d{2} \(commit `[0-9a-f]{7,}`\)", text, re.M), page.name
        assert "**What it showed:**" in text and "**Command:**\n\n```bash\n" in text, page.name
        assert "](../results.md)" in text, page.name


def test_every_results_page_is_in_the_site_navigation():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s+- .*: (results/[\w.-]+\.md)$", config, re.M))
    assert nav == {f"results/{page.name}" for page in PAGES}


def test_links_into_results_pages_name_headings_they_have():
    """A link ``results.md#x`` or ``results/page.md#x`` from any document of docs/ names a heading of that page
    (mkdocs build --strict checks the same, with the docs extra)."""
    markdown = pytest.importorskip("markdown", reason="heading ids need markdown (the docs extra)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)

    def anchors(path: Path) -> set[str]:
        md = markdown.Markdown(extensions=["toc"], extension_configs={"toc": {"slugify": hooks.heading_slug}})
        md.convert(path.read_text(encoding="utf-8"))
        found, todo = set(), list(md.toc_tokens)
        while todo:
            token = todo.pop()
            found.add(token["id"])
            todo += token["children"]
        return found

    broken = []
    for doc in [*sorted((ROOT / "docs").glob("*.md")), *PAGES]:
        for target, anchor in LINK.findall(doc.read_text(encoding="utf-8")):
            path = (doc.parent / target).resolve()
            if anchor and "://" not in target and (path == RESULTS or path.parent == RESULTS.with_suffix("")):
                if anchor[1:] not in anchors(path):
                    broken.append(f"{doc.relative_to(ROOT)} -> {target}{anchor}")
    assert broken == []
