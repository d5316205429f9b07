"""The documents a user reads: links between them resolve, and nothing points at files the project
does not ship (the rule book and the interface are docs/rules.md and docs/interface.md)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "results").glob("*.md")),
    ROOT / "notebooks" / "README.md",
]


def test_relative_links_resolve():
    broken = []
    for doc in DOCUMENTS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if "://" not in target and not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_no_reference_to_documents_outside_the_project():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if not files:  # not a git checkout (an sdist): check the documents and the sources by walking
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.suffix in (".py", ".md", ".yaml", ".ipynb")]
    pattern = re.compile(r"(?<![\w/.])(RULES|INTERFACE|ARCHITECTURE)\.md")
    found = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".yaml", ".ipynb", ".toml") or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{name}:{number}")
    assert found == []


def test_rule_book_sections_are_the_ones_the_code_cites():
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+)\. ", text, flags=re.M)
    assert headings[:9] == [str(n) for n in range(1, 10)]  # "docs/rules.md section 9" and the like


def test_training_page_states_the_observation_sizes_the_code_gives():
    """docs/training.md's list of observation sizes is the code's: every preset's size, each option's block with
    the size it gives (calls 816 and woburn-auction 809 were once missing there)."""
    from sm_env.core.rules import PRESETS
    from sm_env.observation import observation_size

    text = " ".join((ROOT / "docs" / "training.md").read_text(encoding="utf-8").split())
    stated = text.split("observation_size(rules)`:", 1)[1].split("), the actions", 1)[0]
    assert {int(n) for n in re.findall(r"\b\d{3,4}\b", stated)} == {observation_size(r) for r in PRESETS.values()}
    for option in ("one_card_kitty", "auction", "calls"):
        size = observation_size(next(r for r in PRESETS.values() if getattr(r, option)))
        assert f"{size} with `{option}`" in stated, option


def count_test_functions() -> tuple[int, int]:
    """The test functions pytest collects from tests/ (``test*`` at module level and in ``Test*`` classes), counted
    from the source without importing it, and the files that hold them; a parametrised function counts once."""
    functions = files = 0
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")]
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        functions += sum(isinstance(n, defs) and n.name.startswith("test") for body in bodies for n in body)
        files += 1
    return functions, files


def test_the_size_of_the_suite_is_stated_in_one_place_and_is_the_suites():
    """docs/install.md states the suite's size, within a tenth of the test functions in tests/ (so it is updated when
    the suite has grown or shrunk by a tenth, not at every change), and no other document states a count of tests
    (README, docs/, docs/results/, notebooks/README.md): figures that change at every stop live in one place."""
    install = " ".join((ROOT / "docs" / "install.md").read_text(encoding="utf-8").split())
    stated = re.search(r"([\d,]+) test functions in (\d+) files", install)
    assert stated, "docs/install.md states the suite's size as 'N test functions in M files'"
    functions, files = count_test_functions()
    assert abs(int(stated[1].replace(",", "")) - functions) <= functions / 10, (stated[0], functions)
    assert abs(int(stated[2]) - files) <= files / 10, (stated[0], files)
    count = re.compile(r"\b\d[\d,]* (?:tests|test functions|test cases|passed|skipped)\b")
    elsewhere = [
        f"{doc.relative_to(ROOT)}: {m[0]}"
        for doc in DOCUMENTS
        if doc.name != "install.md"
        for m in count.finditer(" ".join(doc.read_text(encoding="utf-8").split()))
    ]
    assert elsewhere == []
