"""``sergeant-major leaderboard``: docs/leaderboard.md from configs/leaderboard.yaml, one resumable tournament per
section; ``--only`` replaces only its sections of an existing page."""

from __future__ import annotations

import os
import re

import pytest

from sm_cli.cli import main
from training.evaluation.leaderboard_page import (
    anchor,
    heading,
    load_leaderboard_config,
    one_pair,
    page,
    section_run,
    sections,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("name", ["leaderboard", "presets"])
def test_the_page_is_the_configs_sections_and_splits_into_them(name):
    """Each section of docs/leaderboard.md (docs/presets.md) quotes the tournament the config plays for it (so
    the config remakes the page as it is), and the page splits into its sections and joins back."""
    cfg = load_leaderboard_config(os.path.join(ROOT, "configs", f"{name}.yaml"), [f"out=docs/{name}.md"])
    with open(os.path.join(ROOT, "docs", f"{name}.md"), encoding="utf-8") as handle:
        text = handle.read()
    found = sections(text)
    summary = found.pop("Summary", None)  # a config of one pair opens with it
    assert (summary is not None) == (one_pair(cfg) is not None)
    assert list(found) == [section.rules for section in cfg.sections]
    for section in cfg.sections:
        assert section_run(cfg, section)[1] in found[section.rules], section.rules
    assert all(part.startswith(f"## {heading(p)}\n") for p, part in found.items())
    first = text.index("## Preset `")
    assert text[first:] == "\n".join(found.values())  # nothing lost or doubled between the sections
    # and the whole page, header included, is what the command writes from these sections
    lines = None if summary is None else summary.splitlines() + [""]
    command = f"sergeant-major leaderboard --config configs/{name}.yaml --set out=docs/{name}.md"
    assert page(cfg, command, found, lines) == text


@pytest.mark.parametrize("name", ["leaderboard", "presets"])
def test_the_shipped_configs_write_into_runs_and_a_docs_page_only_when_named(name):
    """The README's command leaves the user's docs/ alone: the page goes to the runs folder unless --set out names
    it (as the published page's command does)."""
    cfg = load_leaderboard_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
    assert cfg.out == os.path.join(cfg.runs, "leaderboard.md") and cfg.runs.startswith("runs/")
    assert load_leaderboard_config(None).out == os.path.join("runs", "leaderboard", "leaderboard.md")
    assert load_leaderboard_config(None, ["runs=elsewhere"]).out == os.path.join("elsewhere", "leaderboard.md")
    with open(os.path.join(ROOT, "docs", f"{name}.md"), encoding="utf-8") as handle:
        made_with = handle.read().split("```\n", 2)[1]
    assert made_with == f"sergeant-major leaderboard --config configs/{name}.yaml --set out=docs/{name}.md\n"


@pytest.mark.parametrize("name", ["leaderboard", "presets"])
def test_section_ids_start_with_a_letter_and_the_summary_links_to_them(name):
    """Markdown's id of each section heading (the site's and GitHub's) is :func:`anchor`, never starts with a
    digit (the site's scrollspy looks it up as a CSS selector, and ``#3-5-9`` is not one), and every link of the
    page within it (the summary's) lands on a heading."""
    slugify = pytest.importorskip("markdown.extensions.toc").slugify
    cfg = load_leaderboard_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
    with open(os.path.join(ROOT, "docs", f"{name}.md"), encoding="utf-8") as handle:
        text = handle.read()
    ids = [slugify(line.lstrip("#").replace("`", ""), "-") for line in text.splitlines() if line.startswith("## ")]
    assert [i for i in ids if i[:1].isdigit()] == []
    for section in cfg.sections:
        assert slugify(heading(section.rules).replace("`", ""), "-") == anchor(section.rules) in ids
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert set(links) <= set(ids)
    assert len(links) == (len(cfg.sections) if one_pair(cfg) else 0)


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
    # (a kept section of a page written before the "Preset" headings is kept under its heading of today)
    (tmp_path / "board.md").write_text(page.replace(found["3-5-9"], "## `3-5-9`\n\nkept by hand\n"))
    assert main(["leaderboard", "--config", config, "--only", "standard", "--set", "workers=1"]) == 0
    again = sections((tmp_path / "board.md").read_text())
    assert again["3-5-9"] == "## Preset `3-5-9`\n\nkept by hand\n" and again["standard"] == found["standard"]
    assert "--only" not in (tmp_path / "board.md").read_text()  # the header quotes the command of the whole page
    assert "1 tables (pairs)" not in capsys.readouterr().err  # pairs of two agents: 2 tables, both stored
    # --only with no page there, or a page that lacks a section: refused in one line, exit 2, nothing written
    assert main(["leaderboard", "--config", config, "--set", f"out={tmp_path / 'none.md'}", "--only", "3-5-9"]) == 2
    err = capsys.readouterr().err
    assert not (tmp_path / "none.md").exists() and "needs every section" in err and err.count("\n") == 1
    assert err.startswith("sergeant-major leaderboard: error: --only: the page ")
    (tmp_path / "half.md").write_text(page.replace(found["3-5-9"], ""))
    before = (tmp_path / "half.md").read_text()
    assert main(["leaderboard", "--config", config, "--set", f"out={tmp_path / 'half.md'}", "--only", "standard"]) == 2
    err = capsys.readouterr().err
    assert "lacks the sections 3-5-9" in err and err.count("\n") == 1
    assert (tmp_path / "half.md").read_text() == before


def test_a_bad_config_or_section_is_one_line(tmp_path, capsys):
    config = _config(tmp_path)
    for argv, words in [
        (["--set", "kind=playouts"], "this is a 'playouts' config, not 'leaderboard'"),
        (["--set", "sections=[{rules: nine, agents: [random, heuristic]}]"], "sections[0].rules"),
        (["--set", "sections=[{agents: [random]}]"], "a tournament takes 2-12 agents, got 1"),
        (["--set", "sections=[{agents: [random, heuristic]}, {agents: [heuristic, random]}]"], "one section a preset"),
        (["--only", "calls"], "--only calls: the config's sections are standard, 3-5-9"),
        (["--set", "sections=[{agents: [random, nobody]}]"], "nobody"),
        (["--set", "sections.standard.deals=0"], "--set sections.standard.deals=0: sections[0].deals: must be in"),
        (
            ["--set", "sections.1.agents=[random]"],
            "--set sections.1.agents=[random]: sections[1]: agents: a tournament takes",
        ),
        (["--set", "sections.calls.deals=5"], "no section 'calls'; the sections are standard, 3-5-9 (0-1)"),
        (["--set", "sections.standard.seats=5"], "--set takes title, out, runs, seed, workers, design, sections"),
        (["--set", "sections.deals=5"], "--set takes title, out, runs, seed, workers, design, sections"),
        (["--set", "deals=5"], "unknown key 'deals'"),
        (["--deals", "0"], "--deals must be 1 to 10000, got 0"),
        (["--deals", "3", "--quick"], "not allowed with argument"),
    ]:
        try:
            status = main(["leaderboard", "--config", config, *argv])
        except SystemExit as exit_info:  # argparse's refusals: usage, then the one error line
            status = exit_info.code
        assert status == 2, argv
        err = capsys.readouterr().err
        error = err.splitlines()[-1]
        assert error.startswith("sergeant-major leaderboard: error: ") and words in error, err
    assert not (tmp_path / "board.md").exists()


def test_set_reaches_a_section_by_its_preset_or_index_and_deals_sets_every_section(tmp_path):
    config = _config(tmp_path)
    cfg = load_leaderboard_config(config, ["sections.3-5-9.deals=7", "sections.0.agents=[heuristic, pimc]"])
    assert [(s.rules, s.deals, s.agents) for s in cfg.sections] == [
        ("standard", 2, ["heuristic", "pimc"]),
        ("3-5-9", 7, ["heuristic", "random"]),
    ]
    assert [s.deals for s in load_leaderboard_config(config, ["sections.standard.deals=9"], deals=4).sections] == [4, 4]
    assert load_leaderboard_config(None, ["sections.standard.deals=3"]).sections[0].deals == 3  # the default section


def test_quick_plays_every_section_at_a_few_deals_in_its_own_run_folders(tmp_path, capsys, monkeypatch):
    from training.evaluation import leaderboard_page

    monkeypatch.setattr(leaderboard_page, "QUICK_DEALS", 1)  # the test's own short version
    config = _config(tmp_path)
    assert main(["leaderboard", "--config", config, "--quick"]) == 0
    assert sorted(os.listdir(tmp_path / "runs")) == ["3-5-9-seed0-1deals", "standard-seed0-1deals"]
    text = (tmp_path / "board.md").read_text()
    assert f"sergeant-major leaderboard --config {config} --quick" in text and "--deals 1 --design pairs" in text
    assert capsys.readouterr().out == f"wrote {tmp_path / 'board.md'}\n"
    assert main(["leaderboard", "--config", config, "--deals", "2", "--set", f"out={tmp_path / 'two.md'}"]) == 0
    assert "standard-seed0-2deals" in os.listdir(tmp_path / "runs") and (tmp_path / "two.md").is_file()


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


def _board_of(part: str) -> dict:
    """The board a section was made from, as far as its rank note needs it: its ranking table (rank, agent,
    balance per hand) and its tables (those of the tournament command it quotes)."""
    import shlex

    from sm_env.core.rules import RuleSet
    from training.evaluation.tournament import tables_for

    argv = shlex.split(re.search(r"```\n(sergeant-major tournament .*)\n```", part).group(1))
    end = next(i for i, a in enumerate(argv) if i > argv.index("--agents") and a.startswith("--"))
    agents, rules = argv[argv.index("--agents") + 1 : end], argv[argv.index("--rules") + 1]
    tables = tables_for(agents, RuleSet.from_any(rules).num_players, argv[argv.index("--design") + 1])[1]
    ranking = []
    for rank, agent, mean in re.findall(r"^\| (\d+) \| `([^`]+)` \| [^|]+ \| ([+-]\d+\.\d+) \[", part, re.M):
        balance = {"mean": float(mean), "lo": float(mean), "hi": float(mean)}
        ranking.append({"rank": int(rank), "agent": agent, "balance": balance})
    return {"ranking": ranking, "tables": [{"agents": list(t)} for t in tables]}


@pytest.mark.parametrize("name", ["leaderboard", "presets"])
def test_a_section_says_why_its_highest_balance_does_not_rank_first(name):
    """Each section carries the generator's rank note (training.evaluation.leaderboard.rank_note) of its own
    figures and tables, and only where the highest balance per hand is not rank 1 (standard: heuristic, 8th)."""
    from training.evaluation.leaderboard import rank_note

    with open(os.path.join(ROOT, "docs", f"{name}.md"), encoding="utf-8") as handle:
        found = sections(handle.read())
    noted = []
    for rules, part in found.items():
        if "sergeant-major tournament" not in part:
            continue  # the summary
        note = rank_note(_board_of(part))
        assert (note is not None and f"\n\n{note}\n\n" in part) or (note is None and "and ranks" not in part), rules
        noted += [rules] if note else []
    if name == "leaderboard":
        assert noted == ["standard", "woburn-auction"]
        assert "`heuristic` sat with `random` at 7 of its 7 tables" in found["standard"]


def test_the_rank_note_names_the_agent_the_tablemates_and_is_left_out_when_the_top_balance_ranks_first():
    from training.evaluation.leaderboard import markdown, rank_note

    def row(rank, agent, balance):
        return {"rank": rank, "agent": agent, "balance": {"mean": balance, "lo": balance, "hi": balance}}

    board = {
        "ranking": [row(1, "a", 0.5), row(2, "b", 0.9), row(3, "c", -1.4)],
        "tables": [{"agents": ["a", "b"]}, {"agents": ["b", "c"]}, {"agents": ["b", "c"]}, {"agents": ["a", "c"]}],
    }
    note = rank_note(board)
    assert note.startswith("`b` has the highest balance per hand (+0.900) and ranks 2nd: the rank is the rating's")
    assert note.endswith("`b` sat with `c` at 2 of its 3 tables, `a` (rank 1) at 1 of its 2 tables.")
    board["ranking"][1]["balance"] = board["ranking"][0]["balance"] = {"mean": 0.1, "lo": 0.0, "hi": 0.2}
    assert rank_note(board) is None  # a tie: the first ranked holds the highest balance
    board["ranking"][0]["balance"] = {"mean": -2.0, "lo": -2.0, "hi": -2.0}
    note = rank_note(board)
    assert note is not None and note.startswith("`b` has the highest")
    # markdown writes it under the rating's line
    estimate = {"mean": 0.0, "lo": 0.0, "hi": 0.0}
    for r in board["ranking"]:
        r.update(
            rating=estimate, tricks=estimate, win_rate=estimate, hands=1, by_role={"dealer": {"balance": estimate}}
        )
    board.update(
        settings={"rules": "standard", "mode": "hand", "design": "pairs", "deals": 1, "seed": 0, "bootstrap": 1},
        agents=["a", "b", "c"],
        roles=["dealer"],
        pairwise=[],
        timing={"agents": {a: {"ms_per_decision": 0.0, "decisions": 0} for a in "abc"}, "table_seconds": 0.0},
    )
    assert "400 points = 10 to 1 odds.\n\n" + note + "\n\n### Balance per hand by role" in markdown(board)
