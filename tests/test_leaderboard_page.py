"""``sergeant-major leaderboard``: docs/leaderboard.md from configs/leaderboard.yaml, one resumable tournament per
section; ``--only`` replaces only its sections of an existing page."""

from __future__ import annotations

import os

import pytest

from sm_cli.cli import main
from training.evaluation.leaderboard_page import load_leaderboard_config, one_pair, page, section_run, sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("name", ["leaderboard", "presets"])
def test_the_page_is_the_configs_sections_and_splits_into_them(name):
    """Each section of docs/leaderboard.md (docs/presets.md) quotes the tournament the config plays for it (so
    the config remakes the page as it is), and the page splits into its sections and joins back."""
    cfg = load_leaderboard_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
    assert cfg.out == f"docs/{name}.md"
    with open(os.path.join(ROOT, "docs", f"{name}.md"), encoding="utf-8") as handle:
        text = handle.read()
    found = sections(text)
    summary = found.pop("Summary", None)  # a config of one pair opens with it
    assert (summary is not None) == (one_pair(cfg) is not None)
    assert list(found) == [section.rules for section in cfg.sections]
    for section in cfg.sections:
        assert section_run(cfg, section)[1] in found[section.rules], section.rules
    assert all(part.startswith(f"## `{p}`\n") for p, part in found.items())
    first = text.index("## `")
    assert text[first:] == "\n".join(found.values())  # nothing lost or doubled between the sections
    # and the whole page, header included, is what the command writes from these sections
    lines = None if summary is None else summary.splitlines() + [""]
    assert page(cfg, f"sergeant-major leaderboard --config configs/{name}.yaml", found, lines) == text


def _config(tmp_path) -> str:
    path = tmp_path / "board.yaml"
    path.write_text(
        f"kind: leaderboard\nout: {tmp_path / 'board.md'}\nruns: {tmp_path / 'runs'}\nworkers: 1\ndesign: pairs\n"
        "sections:\n  - {rules: standard, deals: 2, agents: [random, heuristic]}\n"
        "  - {rules: 3-5-9, deals: 1, agents: [heuristic, random]}\n"
    )
    return str(path)


def test_a_tiny_config_writes_the_page_and_only_replaces_its_own_section(tmp_path, capsys):
    config = _config(tmp_path)
    assert main(["leaderboard", "--config", config]) == 0
    page = (tmp_path / "board.md").read_text()
    found = sections(page)
    assert list(found) == ["standard", "3-5-9"]
    assert f"sergeant-major leaderboard --config {config}" in page
    assert "| `heuristic` |" in found["standard"] and "--deals 2 --design pairs" in found["standard"]
    assert os.path.isdir(tmp_path / "runs" / "standard-seed0-2deals" / "tables")
    capsys.readouterr()
    # --only: that section is played (here: read back from its run folder), the other kept as it is
    (tmp_path / "board.md").write_text(page.replace(found["3-5-9"], "## `3-5-9`\n\nkept by hand\n"))
    assert main(["leaderboard", "--config", config, "--only", "standard", "--set", "workers=1"]) == 0
    again = sections((tmp_path / "board.md").read_text())
    assert again["3-5-9"] == "## `3-5-9`\n\nkept by hand\n" and again["standard"] == found["standard"]
    assert "--only" not in (tmp_path / "board.md").read_text()  # the header quotes the command of the whole page
    assert "1 tables (pairs)" not in capsys.readouterr().err  # pairs of two agents: 2 tables, both stored
    # --only with no page there writes nothing
    assert main(["leaderboard", "--config", config, "--set", f"out={tmp_path / 'none.md'}", "--only", "3-5-9"]) == 0
    assert not (tmp_path / "none.md").exists() and "needs every section" in capsys.readouterr().err


def test_a_bad_config_or_section_is_one_line(tmp_path, capsys):
    config = _config(tmp_path)
    for argv, words in [
        (["--set", "kind=playouts"], "this is a 'playouts' config, not 'leaderboard'"),
        (["--set", "sections=[{rules: nine, agents: [random, heuristic]}]"], "sections[0].rules"),
        (["--set", "sections=[{agents: [random]}]"], "a tournament takes 2-12 agents, got 1"),
        (["--set", "sections=[{agents: [random, heuristic]}, {agents: [heuristic, random]}]"], "one section a preset"),
        (["--only", "calls"], "--only calls: the config's sections are standard, 3-5-9"),
        (["--set", "sections=[{agents: [random, nobody]}]"], "nobody"),
    ]:
        assert main(["leaderboard", "--config", config, *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("sergeant-major leaderboard: error: ") and err.count("\n") == 1, err
        assert words in err, err
    assert not (tmp_path / "board.md").exists()


def test_a_config_of_one_pair_opens_with_a_summary_row_per_preset(tmp_path, capsys):
    import json

    path = tmp_path / "pair.yaml"
    path.write_text(
        f"kind: leaderboard\ntitle: Pair\nout: {tmp_path / 'pair.md'}\nruns: {tmp_path / 'runs'}\nworkers: 1\n"
        "design: pairs\nsections:\n  - {rules: standard, deals: 2, agents: [heuristic, random]}\n"
        "  - {rules: four-5-3-2-2, deals: 1, agents: [heuristic, random]}\n"
    )
    assert main(["leaderboard", "--config", str(path)]) == 0
    text = (tmp_path / "pair.md").read_text()
    assert text.startswith("# Pair\n") and "## Summary" in text and "`heuristic` minus `random` per hand" in text
    rows = [line for line in text.splitlines() if line.startswith("| [`")]
    assert [row.split("`")[1] for row in rows] == ["standard", "four-5-3-2-2"]
    for row, (rules, deals) in zip(rows, [("standard", 2), ("four-5-3-2-2", 1)], strict=True):
        board = json.loads((tmp_path / "runs" / f"{rules}-seed0-{deals}deals" / "leaderboard.json").read_text())
        pair = board["pairwise"][0]
        assert (pair["a"], pair["b"]) == ("heuristic", "random")
        assert f"| {pair['balance_difference']['mean']:+.3f} [" in row
        cells = row.strip("|").split("|")
        assert (cells[-1].strip() == "-") == (len(board["roles"]) == 3)  # the fourth seat only with four players
    # --only: the kept section's row comes from its run folder, the same as before
    assert main(["leaderboard", "--config", str(path), "--only", "standard"]) == 0
    assert (tmp_path / "pair.md").read_text() == text
    capsys.readouterr()
