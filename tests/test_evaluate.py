"""Duplicate evaluation: schedule, determinism, figures and outputs."""

from __future__ import annotations

import csv
import json
import os

import pytest

from training.evaluation import command
from training.evaluation import evaluate as ev
from training.evaluation.result import EvalResult


def _strip(result: EvalResult) -> dict:
    data = result.to_dict()
    data.pop("timing")
    data.pop("elapsed_seconds")
    data["config"].pop("workers")
    return data


@pytest.mark.parametrize("n", [2, 3])
def test_schedule_gives_every_agent_every_seat(n):
    seatings = ev.schedule(n)
    assert len(seatings) == (6 if n == 3 else 3)
    assert len(set(seatings)) == len(seatings)
    for agent in range(n):
        assert {seat for s in seatings for seat in range(3) if s[seat] == agent} == {0, 1, 2}
    if n == 2:
        assert all(sorted(s) == [0, 1, 1] for s in seatings)
    with pytest.raises(ValueError):
        ev.schedule(1)


@pytest.mark.parametrize("mode", ["hand", "game"])
def test_every_deal_is_played_in_every_seating_with_the_same_cards(mode):
    config = ev.DealConfig(("heuristic", "random", "pimc:samples=1"), mode, 4, ev.RuleSet(), 0, None, 3)
    ev.init_worker(config)
    for index in range(3):
        deal = ev.play_deal(index)
        assert [tuple(s["seating"]) for s in deal["seatings"]] == ev.schedule(3)
        for agent in range(3):
            seats = {seat for s in deal["seatings"] for seat in range(3) if s["seating"][seat] == agent}
            assert seats == {0, 1, 2}
        # the same first dealer in every seating (hence the same deal sequence)
        assert len({s["hands"][0][0] for s in deal["seatings"]}) == 1
        if mode == "hand":
            assert all(len(s["hands"]) == 1 and s["hands"][0][0] == 0 for s in deal["seatings"])


def test_same_seed_gives_same_deals():
    from sm_env.core.game import Game

    seed = ev.deal_seed(9, 4)
    assert seed == ev.deal_seed(9, 4) != ev.deal_seed(9, 5)
    a, b = Game(seed=seed, max_hands=3), Game(seed=seed, max_hands=3)
    assert a.log.deal_hands == b.log.deal_hands and a.first_dealer == b.first_dealer


def test_heuristic_beats_random_and_figures_are_consistent():
    result = ev.evaluate(["heuristic", "random"], deals=40, mode="hand", seed=1, workers=1, progress=False)
    h, r = result.stats["heuristic"], result.stats["random"]
    assert result.pairwise[("heuristic", "random")].lo > 1.0
    for stats in (h, r):
        for role in ("all", "dealer", "eldest", "middle"):
            e = stats[role]["balance"]
            assert e.lo <= e.mean <= e.hi
    # two agents: heuristic alone against two randoms, in 3 rotations
    assert result.counts["heuristic"]["all"]["hands"] == 3 * 40
    assert result.counts["random"]["all"]["hands"] == 6 * 40
    for role in ("dealer", "eldest", "middle"):
        assert result.counts["heuristic"][role]["hands"] == 40
    # balances sum to zero over the three seats of every hand
    total = 3 * 40 * h["all"]["balance"].mean + 6 * 40 * r["all"]["balance"].mean
    assert abs(total) < 1e-9
    assert result.ratings["heuristic"]["lo"] > result.ratings["random"]["hi"]  # Bradley-Terry, as the leaderboard's
    assert "heuristic - random" in result.table()
    # the per-role difference is the difference of the per-role means, and the heuristic wins every role
    by_role = result.pairwise_roles[("heuristic", "random")]
    assert set(by_role) == {"dealer", "eldest", "middle"}
    for role, diff in by_role.items():
        assert abs(diff.mean - (h[role]["balance"].mean - r[role]["balance"].mean)) < 1e-9
        assert diff.lo <= diff.mean <= diff.hi and diff.lo > 0
    assert "as dealer" in result.table()
    assert result.to_dict()["pairwise"][0]["by_role"]["middle"]["mean"] == by_role["middle"].mean
    # in hand mode without the auction the seats (from the first dealer's) are the roles
    by_seat = result.pairwise_seats[("heuristic", "random")]
    assert list(by_seat) == ["first", "second", "third"]
    for seat, role in zip(by_seat, by_role, strict=True):
        assert by_seat[seat] == by_role[role]
    assert "at first" not in result.table()


def test_under_the_auction_seats_are_counted_from_the_first_bidder():
    """The auction decides who deals hand 1, so roles follow the bids; seats are fixed by the seating: each
    seat's figure is the agents' mean balance in that seat (counted from the first bidder), recomputed here
    from the deals themselves."""
    rules = ev.RuleSet.from_any("woburn-auction")
    config = ev.DealConfig(("heuristic", "random"), "hand", 3, rules, 1, None, 30)
    ev.init_worker(config)
    deals = [ev.play_deal(i) for i in range(12)]
    assert {s["first_dealer"] for d in deals for s in d["seatings"]} == {1}
    result = ev.evaluate(["heuristic", "random"], deals=12, seed=3, dealer=1, rules=rules, workers=1, progress=False)
    by_seat = result.pairwise_seats[("heuristic", "random")]
    for k, seat in enumerate(("first", "second", "third")):
        sums = {0: [0.0, 0], 1: [0.0, 0]}
        for deal in deals:
            for seating in deal["seatings"]:
                s = (1 + k) % 3  # the seat k places clockwise from the first bidder (seat 1)
                for _dealer, _won, balances in seating["hands"]:
                    sums[seating["seating"][s]][0] += balances[s]
                    sums[seating["seating"][s]][1] += 1
        expected = sums[0][0] / sums[0][1] - sums[1][0] / sums[1][1]
        assert abs(by_seat[seat].mean - expected) < 1e-9
    # hand 1's dealer is the auction's winner, not the first bidder, in some deals
    assert any(s["hands"] and s["hands"][0][0] != 1 for d in deals for s in d["seatings"])
    assert "at second" in result.table()
    assert set(result.to_dict()["pairwise"][0]["by_seat"]) == {"first", "second", "third"}


def test_results_do_not_depend_on_workers():
    kwargs = dict(deals=6, mode="game", seed=5, max_hands=4, progress=False, bootstrap=200)
    one = ev.evaluate(["heuristic", "random", "random"], workers=1, **kwargs)
    two = ev.evaluate(["heuristic", "random", "random"], workers=2, **kwargs)
    assert _strip(one) == _strip(two)
    assert one.agents == ["heuristic", "random", "random#2"]
    again = ev.evaluate(["heuristic", "random", "random"], workers=1, **kwargs)
    assert _strip(again) == _strip(one)


def test_hand_mode_with_an_exchange_and_game_mode_win_rates():
    result = ev.evaluate(
        ["heuristic", "random"], deals=5, mode="hand", seed=2, workers=1, start_balances=(2, -1, -1), progress=False
    )
    assert result.config["start_balances"] == [2, -1, -1]
    game = ev.evaluate(["heuristic", "random"], deals=4, mode="game", seed=2, workers=1, max_hands=30, progress=False)
    win = game.stats["heuristic"]["all"]["win_rate"]
    assert 0.0 <= win.lo <= win.mean <= win.hi <= 1.0
    assert game.counts["heuristic"]["all"]["games"] == 3 * 4


def test_bad_arguments_are_clear():
    with pytest.raises(ValueError, match="known agents"):
        ev.evaluate(["heuristic", "nonsense"], deals=1, workers=1, progress=False)
    with pytest.raises(ValueError, match="2 or 3 agents"):
        ev.evaluate(["heuristic"], deals=1, workers=1, progress=False)
    with pytest.raises(ValueError, match="mode"):
        ev.evaluate(["heuristic", "random"], deals=1, mode="match", workers=1, progress=False)
    with pytest.raises(ValueError, match="human"):
        ev.evaluate(["heuristic", "human"], deals=1, workers=1, progress=False)


def test_cli_prints_a_table_and_saves_json_csv_png(tmp_path, capsys):
    out = tmp_path / "eval"
    code = command.main(
        [
            "--agents",
            "heuristic",
            "random",
            "--deals",
            "8",
            "--mode",
            "hand",
            "--workers",
            "1",
            "--seed",
            "0",
            "--out",
            str(out),
            "--no-progress",
            "--bootstrap",
            "200",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "balance/hand" in printed and "heuristic - random" in printed
    data = json.loads((out / "result.json").read_text())
    assert data["config"]["deals"] == 8 and data["agents"] == ["heuristic", "random"]
    assert set(data["stats"]["heuristic"]) == {"all", "dealer", "eldest", "middle"}
    rows = list(csv.DictReader((out / "result.csv").open()))
    assert (
        len(rows) == 8 and rows[0]["agent"] == "heuristic" and float(rows[0]["balance_lo"]) <= float(rows[0]["balance"])
    )
    assert (out / "balance_by_role.png").read_bytes()[:4] == b"\x89PNG"
    assert (
        command.main(["--agents", "heuristic", "bogus", "--deals", "1", "--no-progress", "--out", str(tmp_path / "b")])
        == 2
    )


def test_a_second_evaluation_gets_a_fresh_folder_and_an_explicit_used_one_is_refused(tmp_path, monkeypatch, capsys):
    """As a new training run: the default folder is never an earlier evaluation's (<name>-2, ...), and an --out
    that holds one is refused in one line before anything is played, leaving it as it was."""
    monkeypatch.chdir(tmp_path)
    quick = ["--agents", "heuristic", "random", "--workers", "1", "--no-progress", "--bootstrap", "20"]
    assert command.main([*quick, "--deals", "2"]) == 0
    assert command.main([*quick, "--deals", "3"]) == 0
    first, second = (
        tmp_path / "runs" / "eval" / "heuristic-random-hand-0",
        tmp_path / "runs" / "eval" / "heuristic-random-hand-0-2",
    )
    assert json.loads((first / "result.json").read_text())["config"]["deals"] == 2
    assert json.loads((second / "result.json").read_text())["config"]["deals"] == 3
    assert f"saved {second}".replace(str(tmp_path) + os.sep, "") in capsys.readouterr().out
    before = (first / "result.json").read_bytes()
    assert command.main([*quick, "--deals", "4", "--out", str(first)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"sergeant-major eval: error: {first} already holds an evaluation (result.json): give another --out, or "
        "leave --out out to write to a fresh folder under runs/eval"
    ]
    assert (first / "result.json").read_bytes() == before


def test_the_command_says_what_it_waits_for_before_each_silent_step(tmp_path, capsys):
    """Loading the agents, starting the workers, the bootstrap and writing the files each take seconds with
    nothing else on screen: a line on stderr says what comes first (none with --no-progress)."""
    argv = ["--agents", "heuristic", "random", "--deals", "2", "--workers", "2", "--bootstrap", "20"]
    assert command.main([*argv, "--out", str(tmp_path / "a")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.strip() and "deals:" not in line]
    assert said == [
        "loading the agents: heuristic, random",
        "starting 2 worker processes (each loads the agents: a few seconds)",
        "95% CIs: 20 bootstrap resamplings of the 2 deals",
        f"writing the results and the plot to {tmp_path / 'a'}",
    ]
    assert command.main([*argv, "--no-progress", "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().err == ""


def test_saved_results_are_written_atomically(tmp_path):
    result = ev.evaluate(["heuristic", "random"], deals=4, seed=1, workers=1, bootstrap=100, progress=False)
    (tmp_path / "result.json.tmp").mkdir()  # a fixed temporary name would collide with this
    (tmp_path / "result.json").write_text("old")
    paths = result.save(tmp_path)
    assert json.loads((tmp_path / "result.json").read_text())["agents"] == result.agents
    assert sorted(os.listdir(tmp_path)) == sorted(["result.json.tmp", *(os.path.basename(p) for p in paths.values())])


@pytest.mark.parametrize(
    "rules", ["9-2-5-variation", "dealer-assigns", "3-5-9", "9-5-3-one-card", "woburn-auction", "calls"]
)
def test_heuristic_beats_random_in_the_section_10_presets(rules):
    """Hands of these presets play differently (phase order, assigned quotas, kitty trick): the heuristic
    must still beat random there (whole-game figures for every new preset are in
    docs/results/presets-heuristic-random.md)."""
    result = ev.evaluate(
        ["heuristic", "random"],
        deals=12,
        mode="hand",
        seed=5,
        workers=1,
        rules=rules,
        start_balances=None if rules == "woburn-auction" else (2, -1, -1),  # the auction opens hand 1: no exchange
        progress=False,
    )
    assert result.pairwise[("heuristic", "random")].lo > 1.0


def _worker_report() -> tuple[int, str | None]:
    """In a worker: torch's thread count and OMP_NUM_THREADS."""
    import torch

    return torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")


def test_a_spawned_evaluation_worker_runs_torch_on_one_thread(monkeypatch):
    from training.common.workers import spawn_pool

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    config = ev.DealConfig(("heuristic", "random"), "hand", 0, ev.RuleSet(), 0, None, 1)
    with spawn_pool(1, ev.init_worker, (config,)) as pool:  # as evaluate() starts its workers
        threads, omp = pool.apply(_worker_report)
        assert pool.apply(ev.play_deal, (0,))["index"] == 0  # the worker's own initializer ran too
    assert (threads, omp) == (1, "1")
    assert "OMP_NUM_THREADS" not in os.environ  # the parent's environment is left as it was


def test_any_agent_spec_is_evaluated_against_the_baselines_as_the_trainers_report_it():
    from training.evaluation.config import EvalConfig

    settings = EvalConfig(opponents=["random"], mode="hand", seed=1, workers=1)
    results = ev.evaluate_against("heuristic", settings, "standard", 4)
    rows = results["random"]
    assert set(rows) == {"dealer", "eldest", "middle", "all"}
    assert {"balance", "balance_ci", "opponent_balance", "win_rate", "hands", "advantage"} <= set(rows["dealer"])
    assert rows["all"]["hands"] == 4 * 3 and "difference_ci" in rows["all"]
    scalars = ev.eval_scalars(results)
    assert scalars["eval/random/all_balance"] == rows["all"]["balance"]
    assert scalars["eval/random/middle_advantage"] == rows["middle"]["advantage"]
    assert scalars["eval/random/difference"] == rows["all"]["difference"]
    assert len(scalars) == 4 + 4 + 2


def test_eval_runs_on_the_core_install(tmp_path):
    """`sergeant-major eval` needs the core requirements and matplotlib only (the wheel check's install): with
    the training extra's packages made unimportable it still plays, prints and saves."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for name in ('yaml', 'pydantic', 'pydantic_core', 'torch', 'tqdm', 'stable_baselines3', 'ray'):\n"
        "    sys.modules[name] = None\n"
        "from sm_cli.cli import main\n"
        "sys.exit(main(['eval', '--agents', 'heuristic', 'random', '--deals', '1', '--workers', '1']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "saved runs/eval/heuristic-random-hand-0/result.json" in done.stdout
