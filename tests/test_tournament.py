"""sergeant-major tournament: the tables, resuming, adding an agent, the leaderboard's figures, bad input."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import tracemalloc

import numpy as np
import pytest

from sm_cli.cli import main as cli_main
from sm_env.files.json_files import count_values, read_json
from training.evaluation import tournament as tournament_module
from training.evaluation.evaluate import evaluate
from training.evaluation.leaderboard import TIMING_HEADING, markdown
from training.evaluation.statistics import bradley_terry
from training.evaluation.tournament import MAX_AGENTS, MAX_DEALS, fingerprint, tables_for, tournament

THIRD = "ppo:agents/policies/standard_v0.pt"  # a third and a fourth agent, cheap to play
FOURTH = "ppo:agents/policies/standard_v1.pt"
POLICY = THIRD.removeprefix("ppo:")


def _run(agents, out, **kwargs):
    kwargs.setdefault("deals", 3)
    kwargs.setdefault("workers", 1)
    kwargs.setdefault("bootstrap", 200)
    return tournament(agents, str(out), progress=False, **kwargs)


def _deterministic(board):
    """The leaderboard without its wall-clock figures."""
    return {k: v for k, v in board.items() if k != "timing"}


def _above_timing(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().split(TIMING_HEADING)[0]


def test_sets_cover_every_pair_in_every_seat_and_ignore_the_order_named():
    agents = ["random", "heuristic", "pimc", "ismcts", "trained"]
    design, tables = tables_for(agents, 3)
    assert design == "sets" and len(tables) == math.comb(5, 3)
    for a in agents:
        for b in agents:
            if a != b:
                assert sum(a in t and b in t for t in tables) == 3  # n - 2 tables per pair
    assert tables_for(list(reversed(agents)), 3)[1] == tables
    assert tables_for(agents[:4], 4) == ("sets", [tuple(sorted(agents[:4]))])


@pytest.mark.parametrize(("players", "count"), [(3, 3), (3, 7), (3, 12), (4, 4), (4, 5), (4, 12)])
def test_cover_seats_every_pair_together_with_fewer_tables(players, count):
    agents = [f"a{i:02d}" for i in range(count)]
    design, tables = tables_for(agents, players, "cover")
    assert design == "cover"
    assert all(len(set(t)) == players and list(t) == sorted(t) for t in tables)
    assert len(set(tables)) == len(tables)
    for a, b in itertools.combinations(agents, 2):
        assert any(a in t and b in t for t in tables), (a, b)
    # the first agents' tables do not move when one is appended, and the newcomer sits at ceil(k / (p - 1))
    grown = tables_for([*agents, "zz"], players, "cover")[1]
    assert grown[: len(tables)] == tables
    assert all("zz" in t for t in grown[len(tables) :])
    assert len(grown) - len(tables) == math.ceil(count / (players - 1))
    assert set(tables) <= set(tables_for(agents, players, "sets")[1])  # a sets folder holds every cover table
    if (players, count) == (3, 7):
        assert len(tables) == 11  # against 35 sets


def test_cover_puts_the_last_named_agents_at_the_fewest_tables():
    agents = ["random", "heuristic", "v0", "v1", "v2", "pimc", "ismcts"]
    tables = tables_for(agents, 3, "cover")[1]
    seats = {a: sum(a in t for t in tables) for a in agents}
    assert seats["ismcts"] == 3 and seats["pimc"] == 4 and seats["random"] == max(seats.values())
    with pytest.raises(ValueError, match="design 'cover' needs at least 3 agents"):
        tables_for(agents[:2], 3, "cover")


def test_pairs_when_too_few_agents_for_a_set():
    assert tables_for(["a", "b"], 3) == ("pairs", [("a", "b"), ("b", "a")])
    design, tables = tables_for(["a", "b", "c"], 4)
    assert design == "pairs" and len(tables) == 6
    with pytest.raises(ValueError, match="needs at least 4 agents"):
        tables_for(["a", "b", "c"], 4, "sets")


@pytest.mark.parametrize(
    ("agents", "kwargs", "message"),
    [
        (["random"], {}, "2-12 agents, got 1"),
        ([f"pimc:samples={i}" for i in range(1, MAX_AGENTS + 2)], {}, f"2-{MAX_AGENTS} agents, got 13"),
        (["random", "random"], {}, "named more than once: random"),
        (["random", "heuristic"], {"deals": 0}, f"deals must be 1-{MAX_DEALS}, got 0"),
        (["random", "heuristic"], {"deals": MAX_DEALS + 1}, "deals must be"),
        (["random", "heuristic"], {"bootstrap": 5}, "bootstrap must be"),
        (["random", "heuristic"], {"mode": "match"}, "mode must be 'hand' or 'game'"),
        (["random", "nobody"], {}, "unknown agent 'nobody'"),
        (["random", "heuristic"], {"design": "swiss"}, "design must be one of"),
        (["random", "heuristic"], {"workers": 0}, "workers must be"),
        (["random", "heuristic"], {"dealer": 3}, "dealer must be a seat 0-2"),
    ],
)
def test_bad_input_is_one_clear_error_and_writes_nothing(tmp_path, agents, kwargs, message):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=message):
        _run(agents, out, **kwargs)
    assert not out.exists()


def test_a_table_gives_the_figures_of_eval_on_the_same_deals(tmp_path):
    agents = ["random", "heuristic", THIRD]
    board = _run(agents, tmp_path / "run", deals=4, bootstrap=300).board
    result = evaluate(sorted(agents), deals=4, seed=0, workers=1, bootstrap=300, progress=False)
    for row in board["ranking"]:
        mine, theirs = row["balance"], result.stats[row["agent"]]["all"]["balance"]
        assert (mine["mean"], mine["lo"], mine["hi"]) == (theirs.mean, theirs.lo, theirs.hi)
        for role in board["roles"]:
            assert row["by_role"][role]["balance"]["mean"] == result.stats[row["agent"]][role]["balance"].mean


def test_an_interrupted_tournament_resumes_to_the_same_leaderboard(tmp_path):
    agents = ["random", "heuristic", THIRD]
    whole = _run(agents, tmp_path / "whole", design="pairs")
    assert len(whole.played) == 6 and whole.reused == 0

    seen = []

    def stop_after_two(table):
        seen.append(table)
        if len(seen) == 2:
            raise KeyboardInterrupt  # as a kill after two tables were stored

    with pytest.raises(KeyboardInterrupt):
        _run(agents, tmp_path / "part", design="pairs", on_table=stop_after_two)
    assert len(os.listdir(tmp_path / "part" / "tables")) == 2
    assert not (tmp_path / "part" / "leaderboard.json").exists()
    resumed = _run(agents, tmp_path / "part", design="pairs")
    assert resumed.reused == 2 and sorted(resumed.played) == sorted(set(whole.played) - set(seen))
    assert _deterministic(resumed.board) == _deterministic(whole.board)
    with open(tmp_path / "whole" / "leaderboard.json") as a, open(tmp_path / "part" / "leaderboard.json") as b:
        assert _deterministic(json.load(a)) == _deterministic(json.load(b))
    assert _above_timing(tmp_path / "whole" / "leaderboard.md") == _above_timing(tmp_path / "part" / "leaderboard.md")
    again = _run(agents, tmp_path / "part", design="pairs")  # nothing left to play
    assert again.played == [] and again.reused == 6


def test_adding_an_agent_plays_only_its_tables(tmp_path):
    out = tmp_path / "run"
    first = _run(["random", "heuristic", THIRD], out)
    assert first.played == [tuple(sorted(["random", "heuristic", THIRD]))]
    added = _run(["random", "heuristic", THIRD, FOURTH], out)
    assert added.reused == 1 and len(added.played) == 3
    assert all(FOURTH in t for t in added.played)
    assert [r["agent"] for r in added.board["ranking"]][-1] == "random"
    fresh = _run(["random", "heuristic", THIRD, FOURTH], tmp_path / "fresh")
    assert _deterministic(fresh.board) == _deterministic(added.board)


def test_other_settings_in_the_same_folder_are_an_error(tmp_path):
    out = tmp_path / "run"
    _run(["random", "heuristic"], out)
    with pytest.raises(ValueError, match="other settings.*deals 3 there, 4 here"):
        _run(["random", "heuristic"], out, deals=4)


def test_a_table_file_that_is_not_its_table_is_an_error(tmp_path):
    out = tmp_path / "run"
    _run(["random", "heuristic"], out)
    path = out / "tables" / sorted(os.listdir(out / "tables"))[0]
    stored = json.loads(path.read_text())
    stored["key"] = "0" * 16
    path.write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="does not hold the table its name says"):
        _run(["random", "heuristic"], out)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    """A finished run folder of two agents (two tables, two deals each), copied by each test that damages it."""
    out = tmp_path_factory.mktemp("stored") / "run"
    _run(["random", "heuristic"], out, deals=2)
    return out


def _damaged(stored_run, tmp_path, change):
    """A copy of ``stored_run`` whose first table file ``change(path, stored)`` damaged; the run on it refused."""
    out = tmp_path / "run"
    shutil.copytree(stored_run, out)
    path = out / "tables" / sorted(os.listdir(out / "tables"))[0]
    change(path, json.loads(path.read_text()))
    with pytest.raises(ValueError) as err:
        _run(["random", "heuristic"], out, deals=2)
    assert "\n" not in str(err.value)
    return path, str(err.value)


def _edit(edit):
    def change(path, stored):
        edit(stored)
        path.write_text(json.dumps(stored))

    return change


def _seating(stored):
    return stored["deals"][0]["seatings"][0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda p, s: p.write_text("[]"), "does not hold the table its name says"),
        (lambda p, s: p.write_text("[" * 5_000 + "]" * 5_000), "nested more than 32 levels deep"),
        (
            lambda p, s: p.write_text(json.dumps(s).replace('"deals": [', '"deals": [' + "[" * 40 + "]" * 40 + ",")),
            "nested more than 32 levels deep",
        ),
        (_edit(lambda s: s["deals"][0].pop("seatings")), r"deals\[0\]: seatings must be a list of 3 seatings"),
        (_edit(lambda s: s.pop("agents")), r"agents must be \['heuristic', 'random'\]"),
        (_edit(lambda s: s.pop("elapsed_seconds")), "elapsed_seconds must be a number of seconds"),
        (_edit(lambda s: s.update(elapsed_seconds="12")), "elapsed_seconds must be a number of seconds"),
        (_edit(lambda s: s.update(elapsed_seconds=-1)), "elapsed_seconds must be a number of seconds"),
        (
            lambda p, s: p.write_text(
                json.dumps(s).replace('"elapsed_seconds": ', '"elapsed_seconds": ' + "9" * 400 + ', "x": ')
            ),
            "a whole number of 400 digits; at most 100",
        ),
        (_edit(lambda s: s["deals"].__setitem__(0, "deal")), r"deals\[0\] must be an object with index 0"),
        (_edit(lambda s: _seating(s).update(seating=[0, 1, 5])), r"seatings\[0\]: seating must be 3 agent numbers 0-1"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(2, ["1", 0, 0])), r"hands\[0\] must be \[dealer"),
        (
            _edit(lambda s: _seating(s)["hands"][0].__setitem__(2, [1e308, 0, 0])),
            r"hands\[0\] must be \[dealer 0-2, 3 tricks won 0-16, 3 balances -16 to 16\] \(a hand has 16 tricks\): "
            r"balances holds 1e\+308",
        ),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(2, [-17, 9, 8])), "balances holds -17"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(2, [0.5, 0, 0])), "balances holds 0.5"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(1, [17, 0, 0])), "tricks won holds 17"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(1, [-1, 9, 8])), "tricks won holds -1"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(1, [8, 8])), r"hands\[0\] must be \[dealer"),
        (_edit(lambda s: _seating(s)["hands"][0].__setitem__(0, 7)), r"hands\[0\] must be \[dealer 0-2"),
        (_edit(lambda s: _seating(s).update(winners=None)), "winners must be a list of seats"),
        (_edit(lambda s: s["deals"][1].update(seconds=[0.1])), r"deals\[1\]: seconds and decisions must be 2"),
        (_edit(lambda s: s["deals"][1].update(seconds=[1e308, 0.1])), r"must be 2 numbers from 0 to 1000000000"),
        (_edit(lambda s: s["deals"][0].update(decisions=[1e308, 1])), r"deals\[0\]: seconds and decisions"),
        (_edit(lambda s: s.update(elapsed_seconds=1e308)), "elapsed_seconds must be a number of seconds from 0 to"),
        (
            lambda p, s: p.write_text(json.dumps(s).replace(json.dumps(_seating(s)["hands"][0][2]), "[NaN, 0, 0]", 1)),
            "NaN is not a JSON value",
        ),
        (
            lambda p, s: p.write_text(
                json.dumps(s).replace(json.dumps(_seating(s)["hands"][0][2]), "[1e999, 0, 0]", 1)
            ),
            "too large for a float",
        ),
        (lambda p, s: (p.unlink(), p.mkdir()), "is a folder, not a table file"),
        (lambda p, s: (p.unlink(), p.symlink_to("/dev/zero")), "larger than 65536 bytes"),
        (lambda p, s: p.write_bytes(b"\xff\xfe"), "not UTF-8 text"),
    ],
)
def test_a_damaged_table_file_is_one_line_naming_it(stored_run, tmp_path, monkeypatch, change, words):
    monkeypatch.setattr(tournament_module, "MAX_TABLE_BYTES", 1 << 16)  # /dev/zero: read no further than this
    path, message = _damaged(stored_run, tmp_path, change)
    assert message.startswith(str(path)) and re.search(words, message), message
    assert "delete it to play the table again" in message


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda out: ((out / "tournament.json").unlink(), (out / "tournament.json").symlink_to("/dev/zero")),
            "tournament.json: larger than 1048576 bytes",
        ),
        (
            lambda out: ((out / "tournament.json").unlink(), (out / "tournament.json").symlink_to("/dev/urandom")),
            "tournament.json: larger than 1048576 bytes",
        ),
        (lambda out: (out / "tournament.json").write_text("[" * 5000 + "]" * 5000), "nested more than 32 levels"),
        (lambda out: (out / "tournament.json").write_text("[]"), "is not a tournament's settings file"),
        (
            lambda out: (out / "tournament.json").write_text(
                '{"format": "sergeant-major-tournament/1", "settings": 3}'
            ),
            "its settings are not an object",
        ),
        (lambda out: (shutil.rmtree(out / "tables"), (out / "tables").write_text("")), "tables is not a folder"),
    ],
)
def test_damaged_settings_or_tables_folder_is_one_line(stored_run, tmp_path, change, words):
    out = tmp_path / "run"
    shutil.copytree(stored_run, out)
    change(out)
    with pytest.raises(ValueError, match=words) as err:
        _run(["random", "heuristic"], out, deals=2)
    assert "\n" not in str(err.value)


def test_out_naming_a_file_is_one_line(tmp_path, capsys):
    out = tmp_path / "afile"
    out.write_text("x")
    assert cli_main(["tournament", "--agents", "random", "heuristic", "--deals", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {out} is a file, not a folder" in err
    assert out.read_text() == "x"


def test_a_table_of_too_many_values_is_refused_before_it_is_parsed(stored_run, tmp_path):
    """A table file of many small values (here 200,000 empty lists, 600 kB, that take 13 MB parsed) is refused
    by their count, within a small multiple of its size; a larger one by its size. Both limits follow from the
    deals the table holds (:func:`table_limits`)."""
    out = tmp_path / "run"
    shutil.copytree(stored_run, out)
    path = out / "tables" / sorted(os.listdir(out / "tables"))[0]
    size_limit, value_limit = tournament_module.table_limits(2, 2, 3, 1)
    path.write_text("[" + "[]," * 199_999 + "[]]")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as err:
            _run(["random", "heuristic"], out, deals=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(err.value) == (
        f"{path}: too many values (400000 commas and opening brackets); at most {value_limit} are read; "
        "delete it to play the table again"
    )
    assert peak < 3 * path.stat().st_size, peak
    path.write_text("[" + "0," * size_limit + "0]")
    with pytest.raises(ValueError, match=rf"^{path}: larger than {size_limit} bytes, the most a table file may hold"):
        _run(["random", "heuristic"], out, deals=2)


@pytest.mark.parametrize(
    ("agents", "kwargs"),
    [
        (["random", "heuristic", THIRD], {}),
        (["random", "heuristic"], {"mode": "game", "max_hands": 4}),
        (["random", "heuristic"], {"rules": "four-5-3-2-2"}),
    ],
)
def test_real_tables_fit_the_limits_they_are_read_with_twice_over(tmp_path, agents, kwargs):
    """:func:`table_limits` is twice what the layout written takes: a real table of those settings holds at
    most half of it (and a few hundred values of settings), so a change of the layout fails here first."""
    out = tmp_path / "run"
    _run(agents, out, deals=2, **kwargs)
    settings = json.loads((out / "tournament.json").read_text())["settings"]
    for name in os.listdir(out / "tables"):
        data = (out / "tables" / name).read_bytes()
        table = json.loads(data)
        players = len(table["seatings"][0])
        _, values = tournament_module.table_limits(len(table["agents"]), 2, players, settings["max_hands"])
        deal_values = values - tournament_module.TABLE_HEADER_VALUES
        assert count_values(data) <= 500 + deal_values // 2, name
        assert len(data) <= tournament_module.TABLE_VALUE_BYTES * (500 + deal_values // 2), name


def test_a_figure_that_cannot_be_computed_is_written_as_null(tmp_path):
    """Under the auction a single deal leaves some role unheld by an agent: its balance there has no hand to
    be computed from, and the leaderboard holds null (JSON has no NaN), which the project's reader takes back."""
    out = tmp_path / "run"
    result = _run(["random", "heuristic"], out, deals=1, rules="woburn-auction")
    board = read_json(out / "leaderboard.json", max_bytes=1 << 22)
    assert board == json.loads(json.dumps(result.board))
    by_role = [row["by_role"][role]["balance"] for row in board["ranking"] for role in board["roles"]]
    assert any(figure["mean"] is None for figure in by_role)
    assert "+nan [+nan, +nan]" in (out / "leaderboard.md").read_text()  # shown as before


def test_a_changed_policy_file_is_another_agent(tmp_path):
    copy = tmp_path / "policy.pt"
    shutil.copyfile(POLICY, copy)
    assert fingerprint(f"ppo:{copy}") == fingerprint(f"ppo:{POLICY}") == fingerprint(f"ppo:{POLICY}")
    with open(copy, "ab") as handle:
        handle.write(b"\0")
    assert fingerprint(f"ppo:{copy}") != fingerprint(f"ppo:{POLICY}")
    assert fingerprint("heuristic") is None
    assert fingerprint("trained") not in (None, fingerprint(f"ppo:{POLICY}"))


def test_bradley_terry_gives_the_odds_of_the_wins():
    wins = np.array([[0.0, 75.0], [25.0, 0.0]])
    rating = bradley_terry(wins)
    assert rating[0] == pytest.approx(-rating[1])
    assert rating[0] - rating[1] == pytest.approx(400 * math.log10(75.5 / 25.5), abs=1e-6)  # one tie added
    truth = np.array([200.0, 0.0, -50.0, -150.0])
    odds = 1 / (1 + 10 ** ((truth[None, :] - truth[:, None]) / 400))
    fitted = bradley_terry(1e6 * odds * (1 - np.eye(4)))
    assert fitted == pytest.approx(truth - truth.mean(), abs=0.5)


def test_game_mode_and_four_players(tmp_path):
    game = _run(["random", "heuristic"], tmp_path / "game", deals=2, mode="game", max_hands=2).board
    assert game["settings"]["mode"] == "game" and game["ranking"][0]["games"] > 0
    four = _run(["random", "heuristic"], tmp_path / "four", deals=1, rules="four-5-3-2-2").board
    assert four["roles"] == ["dealer", "eldest", "third", "fourth"] and four["settings"]["design"] == "pairs"
    assert sum(r["hands"] for r in four["ranking"]) == 2 * 4 * 4  # 2 tables x 4 rotations x 4 seats
    assert "as fourth" in markdown(four)


def test_the_command_line_writes_the_leaderboard(tmp_path, capsys):
    out = tmp_path / "run"
    status = cli_main(
        [
            "tournament",
            "--agents",
            "random",
            "heuristic",
            "--deals",
            "2",
            "--workers",
            "1",
            "--bootstrap",
            "100",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    assert {"leaderboard.json", "leaderboard.md", "leaderboard.png", "tournament.json"} <= set(os.listdir(out))
    text = (out / "leaderboard.md").read_text()
    assert "sergeant-major tournament --agents random heuristic --deals 2" in text
    assert "| 1 | `heuristic` |" in capsys.readouterr().out
    assert cli_main(["tournament", "--agents", "random", "--no-progress", "--out", str(tmp_path / "x")]) == 2
    assert "error: a tournament takes 2-12 agents, got 1" in capsys.readouterr().err


def test_workers_and_ray_give_the_leaderboard_of_one_process(tmp_path, local_ray):
    agents = ["random", "heuristic"]
    one = _run(agents, tmp_path / "one").board
    two = _run(agents, tmp_path / "two", workers=2).board
    on_ray = _run(agents, tmp_path / "ray", ray="").board
    assert _deterministic(two) == _deterministic(one) == _deterministic(on_ray)


def test_a_killed_tournament_resumes_to_the_same_leaderboard(tmp_path):
    """A real kill (SIGKILL) once the first table is stored, then the same command again."""
    import signal
    import subprocess
    import sys
    import time

    agents = ["random", "heuristic", THIRD]
    out = tmp_path / "killed"
    argv = [
        sys.executable,
        "-m",
        "sm_cli",
        "tournament",
        "--agents",
        *agents,
        "--design",
        "pairs",
        "--deals",
        "30",
        "--workers",
        "1",
        "--bootstrap",
        "200",
        "--no-progress",
        "--out",
        str(out),
    ]
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if (out / "tables").is_dir() and any(n.endswith(".json") for n in os.listdir(out / "tables")):
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    stored = [n for n in os.listdir(out / "tables") if n.endswith(".json")]
    assert 1 <= len(stored) < 6 and not (out / "leaderboard.json").exists()
    assert subprocess.run(argv, env=env, capture_output=True, timeout=300).returncode == 0
    whole = _run(agents, tmp_path / "whole", design="pairs", deals=30)
    with open(out / "leaderboard.json") as handle:
        assert _deterministic(json.load(handle)) == _deterministic(whole.board)
    assert sorted(n for n in os.listdir(out / "tables")) == sorted(os.listdir(tmp_path / "whole" / "tables"))
