"""The ``sergeant-major`` command line (sm_cli)."""

from __future__ import annotations

import json
import os
import re

import pytest

from sm_cli import build_parser, main, parse_rules
from sm_env.core.rules import PRESETS
from sm_env.records import load_record, replay


def test_random_game_prints_the_final_table_and_a_summary(capsys):
    assert main(["random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Random game: rules standard, seed 3, max hands 100")
    assert "(whole table)" in out and "phase: over" in out
    assert "Game won by player_" in out or "Game stopped after 100 hands with no winner (truncated); scores" in out
    assert out.count("Sergeant Major [") == 1  # only the final table without --verbose


def test_random_game_is_reproducible_from_its_seed(capsys):
    main(["random", "--seed", "8", "--max-hands", "3"])
    first = capsys.readouterr().out
    main(["random", "--seed", "8", "--max-hands", "3"])
    assert capsys.readouterr().out == first


def test_random_without_seed_prints_the_seed_it_used(capsys):
    assert main(["random", "--max-hands", "1"]) == 0
    out = capsys.readouterr().out
    seed = int(out.split("seed ")[1].split(",")[0])
    main(["random", "--max-hands", "1", "--seed", str(seed)])
    assert capsys.readouterr().out == out


def test_random_verbose_shows_every_hand(capsys):
    assert main(["random", "--seed", "5", "--max-hands", "3", "--verbose", "--unicode"]) == 0
    out = capsys.readouterr().out
    hands = out.count("\nHand ")
    assert 1 <= hands <= 3
    assert out.count("Sergeant Major [") == hands + 1  # the table at the start of each hand's play, and the end
    assert "\u2660" in out  # unicode suits


def test_random_save_writes_a_record_that_replays(tmp_path, capsys):
    path = tmp_path / "game.json"
    assert main(["random", "--seed", "4", "--rules", "woburn", "--max-hands", "5", "--save", str(path)]) == 0
    assert f"Record saved to {path}" in capsys.readouterr().out
    record = load_record(path)
    assert record["seed"] == 4 and record["rules"]["name"] == "woburn" and record["max_hands"] == 5
    replay(record)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "replays OK" in out and "rules woburn" in out and "seed 4" in out


def test_random_rules_as_json(capsys):
    rules = '{"max_exchange": 2, "no_kitty_51": true}'
    assert main(["random", "--seed", "1", "--max-hands", "2", "--rules", rules]) == 0
    out = capsys.readouterr().out
    assert "rules custom (quotas=8-6-3, max_exchange=2, no_kitty_51=on)" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["random", "--rules", "nope"], "unknown rule preset 'nope'"),
        (["random", "--rules", "{bad json"], "not a valid JSON object"),
        (["random", "--rules", '{"max_exchang": 3}'], "unknown rule option"),
        (["random", "--rules", '{"quotas": [8, 5, 4]}'], "sum to 17"),
    ],
)
def test_bad_rules_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major random: error: ") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [[], ["nope"], ["random", "--seed", "x"], ["random", "--max-hands", "0"], ["replay"], ["rules", "--bogus"]],
)
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: sergeant-major" in err and "Traceback" not in err


def test_save_to_a_bad_path_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "missing-dir" / "game.json"
    assert main(["random", "--seed", "1", "--max-hands", "1", "--save", str(target)]) == 2
    assert "cannot write the record" in capsys.readouterr().err


def test_replay_missing_file_and_bad_json(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "no such record file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["replay", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["replay", str(tmp_path)]) == 2
    assert "error" in capsys.readouterr().err


def test_replay_refuses_a_record_file_over_the_size_cap(tmp_path, capsys, monkeypatch):
    import sm_env.records.format as record_format

    path = tmp_path / "game.json"
    main(["random", "--seed", "2", "--max-hands", "2", "--save", str(path)])
    capsys.readouterr()
    monkeypatch.setattr(record_format, "MAX_RECORD_BYTES", 100)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major replay: error: ") and "larger than 100 bytes" in err
    assert "Traceback" not in err


def test_replay_reports_an_illegal_action_with_status_1(tmp_path, capsys):
    path = tmp_path / "game.json"
    main(["random", "--seed", "2", "--max-hands", "2", "--save", str(path)])
    capsys.readouterr()
    record = json.loads(path.read_text())
    trick = record["hands"][0]["tricks"][3]
    trick["cards"][0], trick["cards"][1] = trick["cards"][1], trick["cards"][0]  # out of turn: someone else's card
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert "does not replay" in out and "hand 1" in out


def test_replay_verbose_lists_hands(tmp_path, capsys):
    path = tmp_path / "game.json"
    main(["random", "--seed", "6", "--max-hands", "3", "--save", str(path)])
    capsys.readouterr()
    assert main(["replay", "-v", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("Hand ") == len(load_record(path)["hands"])


def test_rules_lists_every_preset(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS:
        assert name in out
    assert "max_exchange=3" in out  # woburn
    assert "dealer_makes_quota=up" in out and "fixed_hands=12, chips=on" in out  # section 10
    assert main(["rules", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(listed) == set(PRESETS)
    assert listed["woburn"]["max_exchange"] == 3
    assert listed["chips-12"]["chips"] is True and listed["dealer-makes-quota-up"]["dealer_makes_quota"] == "up"


def test_parse_rules_and_parser_are_reusable():
    assert parse_rules("Woburn") is PRESETS["woburn"]
    assert parse_rules('{"win_tricks": 16}').win_tricks == 16
    parser = build_parser()
    args = parser.parse_args(["random", "--seed", "1"])
    assert args.command == "random" and args.seed == 1 and args.max_hands == 100


def test_console_script_is_declared():
    from pathlib import Path

    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["sergeant-major"] == "sm_cli.cli:main"


def test_delegated_commands_pass_their_options_on(tmp_path, capsys):
    status = main(
        ["eval", "--agents", "heuristic", "random", "--deals", "3", "--workers", "1", "--out", str(tmp_path / "ev")]
    )
    assert status == 0
    assert "heuristic" in capsys.readouterr().out
    assert (tmp_path / "ev" / "result.json").exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["play", "--help"])
    assert exit_info.value.code == 0


def test_python_dash_m_sm_cli_runs_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "sm_cli", "rules"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "standard" in done.stdout and "woburn" in done.stdout


def test_the_core_commands_do_not_load_training(capsys):
    import subprocess
    import sys

    code = (
        "import sys; from sm_cli import main; main(['rules']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('training', 'torch')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--agents", "heuristic", "random", "--start-balances", "20,-20,0"],
        ["eval", "--agents", "random", "heuristic", "--start-balances", "1000000,-1000000,0"],
        ["eval", "--agents", "random", "heuristic", "--start-balances", f"{10**400},-{10**400},0"],
        ["eval", "--agents", "heuristic", "nobody"],
        ["tournament", "--agents", "heuristic", "nobody"],
        ["tournament", "--agents", "heuristic", "random", "--deals", "0"],
        ["play", "--opponents", "heuristic", "nobody"],
        ["analyse", "no/such/record.json"],
        ["train", "--config", "no/such/config.yaml"],
    ],
)
def test_every_subcommand_reports_bad_input_as_one_prefixed_line(argv, tmp_path, capsys):
    """One style for every subcommand: 'sergeant-major COMMAND: error: ...' on one line, exit 2, no traceback."""
    if argv[0] in ("eval", "tournament"):
        argv = argv + ["--workers", "1", "--no-progress", "--out", str(tmp_path / "ev")]
        argv += [] if "--deals" in argv else ["--deals", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sergeant-major {argv[0]}: error: "), err


OUTPUT_COMMANDS = {  # the cheapest command line of each command that writes an output path (PATH)
    "tournament": ["tournament", "--agents", "random", "heuristic", "--deals", "1", "--out", "PATH"],
    "leaderboard runs": ["leaderboard", "--config", "CONFIG", "--set", "runs=PATH"],
    "leaderboard out": ["leaderboard", "--config", "CONFIG", "--set", "out=PATH"],
    "improve label": ["improve", "label", "--hands", "1", "--out", "PATH"],
    "distill": ["distill", "--fit-data", "DATA", "--out", "PATH"],
    "eval": ["eval", "--agents", "random", "heuristic", "--deals", "1", "--out", "PATH"],
    "analyse": ["analyse", "RECORD", "--out", "PATH"],
    "random": ["random", "--max-hands", "1", "--save", "PATH"],
    "train": ["train", "--config", "QUICKSTART", "--run-dir", "PATH"],
    "play": ["play", "--record", "PATH"],
}


@pytest.mark.parametrize("where", ["under a file", "in /proc"])
@pytest.mark.parametrize("command", list(OUTPUT_COMMANDS))
def test_an_output_path_that_cannot_be_written_is_one_line_before_any_work(command, where, tmp_path, capsys):
    """A path under a regular file or in /proc: exit 2, one line naming the path and why, nothing written."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    config = tmp_path / "board.yaml"
    config.write_text("kind: leaderboard\nsections:\n  - {rules: standard, deals: 1, agents: [random, heuristic]}\n")
    record = tmp_path / "game.json"
    assert main(["random", "--seed", "1", "--max-hands", "1", "--save", str(record)]) == 0
    capsys.readouterr()
    path = str(afile / "sub") if where == "under a file" else "/proc/self/sm-out"
    quickstart = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "quickstart.yaml")
    fill = {"PATH": path, "CONFIG": str(config), "RECORD": str(record), "DATA": str(tmp_path), "QUICKSTART": quickstart}
    argv = [re.sub("|".join(fill), lambda m: fill[m.group()], a) for a in OUTPUT_COMMANDS[command]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sergeant-major {command.split()[0]}"), err
    assert ": error: " in lines[0] and path in lines[0] and "Traceback" not in err
    reason = f"cannot be made: {afile} is a file, not a folder" if where == "under a file" else "lies in /proc"
    assert reason in lines[0], err
    assert afile.read_text() == "x" and sorted(os.listdir(tmp_path)) == ["afile", "board.yaml", "game.json"]


@pytest.mark.parametrize("command", ["play", "analyse", "eval", "tournament", "train"])
def test_help_names_the_sergeant_major_command(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: sergeant-major {command}") and "python -m" not in out
    if command == "eval":
        assert "(default 1000)" in " ".join(out.split())
        assert "rllib:PATH loads a pickle: only load policies you trust" in " ".join(out.split())


def test_config_lists_the_fields_and_resolves_a_file(capsys):
    pytest.importorskip("yaml")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "ppo.learning_rate" in out and "train.total_timesteps" in out
    from pathlib import Path

    quickstart = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
    assert main(["config", str(quickstart), "ppo.learning_rate=0.5"]) == 0
    assert "learning_rate: 0.5" in capsys.readouterr().out
    assert main(["config", "no/such.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major config: error: ") and len(err.strip().splitlines()) == 1


def test_version_is_pyproject_s_and_the_readme_s_latest_change(capsys):
    """``--version`` prints the package's version, which is that of the README's latest Changes entry."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as handle:
        (declared,) = re.findall(r'^version = "([^"]+)"$', handle.read(), re.M)
    with open(os.path.join(root, "README.md"), encoding="utf-8") as handle:
        changes = handle.read().split("\n## Changes\n", 1)[1]
    latest = re.search(r"^- (\d+\.\d+(?:\.\d+)?):", changes, re.M).group(1)
    assert declared == latest or declared.startswith(latest + "."), (declared, latest)
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"sergeant-major {declared}\n"


def test_version_without_a_source_checkout_is_the_installed_metadata(tmp_path, monkeypatch):
    import importlib.metadata

    from sm_cli import cli

    monkeypatch.setattr(cli, "SOURCE_PYPROJECT", str(tmp_path / "pyproject.toml"))  # an installed wheel: none
    monkeypatch.setattr(importlib.metadata, "version", lambda name: {"sergeant-major-rl": "7.8.9"}[name])
    assert cli.package_version() == "7.8.9"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1.0"\n')  # not this package's
    assert cli.package_version() == "7.8.9"

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cli.package_version() == "unknown"
