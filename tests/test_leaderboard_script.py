"""benchmarks/leaderboard.py: its sections are spliced into an existing docs file by ``--only``."""

from __future__ import annotations

import os

from helpers import benchmark_script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _script():
    return benchmark_script("leaderboard")


def test_the_docs_file_splits_into_one_section_per_preset_and_joins_back():
    script = _script()
    with open(os.path.join(ROOT, "docs", "leaderboard.md"), encoding="utf-8") as handle:
        text = handle.read()
    found = script.sections(text)
    assert list(found) == [p for p, _, _ in script.SECTIONS]
    assert all(part.startswith(f"## `{p}`\n") for p, part in found.items())
    first = text.index("## `")
    assert text[first:] == "\n".join(found.values())  # nothing lost or doubled between the sections


def test_only_replaces_its_own_section_and_records_the_whole_command(tmp_path, monkeypatch):
    script = _script()
    docs = tmp_path / "board.md"
    docs.write_text(
        "# Leaderboard\n\nold header\n\n" + "\n".join(f"## `{p}`\n\nold {p}\n" for p, _, _ in script.SECTIONS)
    )

    class Result:
        board = {"preset": "four-5-3-2-2"}

    monkeypatch.setattr(script, "tournament", lambda *a, **k: Result())
    monkeypatch.setattr(script, "markdown", lambda board, title, command: f"## {title}\n\nnew, made by {command}\n")
    args = ["--deals", "3", "--only", "four-5-3-2-2", "--workers", "1", "--docs", str(docs), "--runs", str(tmp_path)]
    assert script.main(args) == 0
    text = docs.read_text()
    kept = script.sections(text)
    assert kept["standard"] == "## `standard`\n\nold standard\n" and kept["3-5-9"] == "## `3-5-9`\n\nold 3-5-9\n"
    assert "new, made by sergeant-major tournament" in kept["four-5-3-2-2"]
    assert "python benchmarks/leaderboard.py --deals 3 --workers 1 --docs" in text  # --only left out
    assert "old header" not in text


def test_only_leaves_a_missing_file_unwritten(tmp_path, monkeypatch):
    script = _script()

    class Result:
        board = {}

    monkeypatch.setattr(script, "tournament", lambda *a, **k: Result())
    monkeypatch.setattr(script, "markdown", lambda board, title, command: f"## {title}\n")
    docs = tmp_path / "none.md"
    assert script.main(["--only", "standard", "--docs", str(docs), "--runs", str(tmp_path)]) == 0
    assert not docs.exists()
