"""agents/analysis.py and ``sergeant-major analyse``: every decision of a record scored, the costly moves flagged."""

from __future__ import annotations

import io
import json
import random

import pytest

import agents.analysis
from agents.advice import advise
from agents.analysis import (
    AnalysisError,
    analyse,
    check_analysis,
    hand_analyses,
    load_analysis,
    main,
    record_fingerprint,
    write_analysis,
)
from agents.players.heuristic import heuristic_action
from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import player_view
from sm_env.records import game_record, record_actions, save_record

GAP = 2.0  # the planted move costs at least this many tricks by the search that chose it


@pytest.fixture(scope="module")
def blunder() -> tuple[dict, int, float, int]:
    """A one-hand game of heuristic play in which the first seat to face a gap of GAP or more between pimc's
    best and worst card plays the worst: the record, that move's step (1-based), its cost by that search and
    the seat."""
    game = Game("standard", seed=25, max_hands=1)
    planted = None
    step = 0
    while not game.is_over:
        view = player_view(game, game.current_player)
        action = heuristic_action(view)
        step += 1
        if planted is None and game.phase == PLAY:
            advice = advise(view, samples=40, seed=7, policy=False)
            if advice.best_value is not None:
                worst = min(advice.moves, key=lambda m: m.value)
                if advice.best_value - worst.value >= GAP:
                    action = worst.action
                    planted = (step, advice.best_value - worst.value, view.seat)
        game.apply(action)
    assert planted is not None, "no position with a gap: choose another seed"
    return (game_record(game), *planted)


def test_a_deliberately_bad_move_is_flagged_with_its_cost(blunder):
    record, step, cost, seat = blunder
    analysis = analyse(record, samples=40, seed=7)
    flagged = [d for d in analysis["decisions"] if d["flagged"]]
    move = next(d for d in analysis["decisions"] if d["step"] == step)
    assert move["flagged"] and move["seat"] == seat and move["cost"] == pytest.approx(cost)
    assert move["played"] not in move["best"] and move["cost"] == pytest.approx(move["best_value"] - move["value"])
    assert move in flagged
    # with another seed (other deals) the blunder still stands out
    again = analyse(record, samples=40, seed=8)
    assert next(d for d in again["decisions"] if d["step"] == step)["flagged"]
    # the table counts it
    row = analysis["seats"][seat]
    assert row["flagged"] == sum(1 for d in flagged if d["seat"] == seat) >= 1
    assert row["total_cost"] >= cost - 1e-9
    assert [d["step"] for d in analysis["decisions"]] == list(range(1, len(analysis["decisions"]) + 1))
    assert sum(r["decisions"] for r in analysis["seats"]) == len(analysis["decisions"])


def test_the_threshold_decides_what_is_flagged(blunder):
    record, step, cost, _seat = blunder
    strict = analyse(record, samples=40, seed=7, threshold=0.0)
    loose = analyse(record, samples=40, seed=7, threshold=cost + 0.01)
    assert not next(d for d in loose["decisions"] if d["step"] == step)["flagged"]
    assert all(d["flagged"] == (d["cost"] is not None and d["cost"] > 0) for d in strict["decisions"])
    assert all(d["flagged"] == (d["cost"] is not None and d["cost"] > cost + 0.01) for d in loose["decisions"])
    assert sum(r["flagged"] for r in strict["seats"]) > sum(r["flagged"] for r in loose["seats"])


def test_same_seed_same_analysis_and_it_names_its_search(blunder):
    record = blunder[0]
    one = analyse(record, samples=10, seed=3)
    assert one == analyse(record, samples=10, seed=3)
    assert one["search"] == {"search": "pimc", "rollouts": "heuristic", "samples": 10, "seed": 3, "bid": True}
    assert one["format"] == "sergeant-major-analysis/1" and one["threshold"] == 0.5
    unscored = [d for d in one["decisions"] if d["cost"] is None]
    assert unscored and all(d["note"] and d["values"] is None and not d["flagged"] for d in unscored)


def test_hands_bound_the_work():
    game = Game("standard", seed=5, max_hands=3)
    rng = random.Random(5)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    record = game_record(game)
    second = analyse(record, samples=2, first_hand=2, hands=1)
    assert second["hands"] == [2, 2] and {d["hand"] for d in second["decisions"]} == {2}
    assert analyse(record, samples=2, first_hand=3)["hands"] == [3, 3]
    with pytest.raises(AnalysisError, match="the first hand must be a whole number from 1 to 3"):
        analyse(record, first_hand=4)
    with pytest.raises(AnalysisError, match="threshold must be a number from 0 to 100"):
        analyse(record, threshold=-1)
    with pytest.raises(AnalysisError, match="samples must be a whole number from 1 to 10000"):
        analyse(record, samples=0)


def test_a_bad_record_is_a_clear_error(blunder):
    record = json.loads(json.dumps(blunder[0]))
    record["hands"][0]["tricks"][0]["cards"][0] = "ZZ"
    with pytest.raises(AnalysisError, match="not a record that can be analysed: hand 1, trick 1"):
        analyse(record)
    with pytest.raises(AnalysisError, match="a game record is a JSON object"):
        analyse([1, 2])


def test_the_command_prints_the_table_and_writes_the_analysis(blunder, tmp_path, capsys):
    path = tmp_path / "game.json"
    save_record(blunder[0], path)
    out = io.StringIO()
    target = tmp_path / "analysis.json"
    assert main([str(path), "--samples", "40", "--seed", "7", "--out", str(target)], out=out) == 0
    text = out.getvalue()
    assert "search pimc (heuristic rollouts), 40 samples per decision, seed 7" in text
    assert "player_0" in text and "Flagged moves (" in text and f"(step {blunder[1]})" in text
    written = json.loads(target.read_text())
    assert written == analyse(blunder[0], samples=40, seed=7)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["analysis.json", "game.json"]  # no temporary file left


@pytest.mark.parametrize(
    "args, message",
    [
        (["--samples", "0"], "--samples: expected a whole number from 1 to 10000, got '0'"),
        (["--threshold", "nan"], "--threshold: expected a number from 0 to 100"),
        (["--hands", "x"], "--hands: expected a whole number >= 1"),
        (["--first-hand", "9"], "the first hand must be a whole number from 1 to 1"),
    ],
)
def test_bad_flags_are_one_line_errors(blunder, tmp_path, capsys, args, message):
    path = tmp_path / "game.json"
    save_record(blunder[0], path)
    with pytest.raises(SystemExit) if message.startswith("--") else _no_raise():
        status = main([str(path), *args], out=io.StringIO())
        assert status == 2
    assert message in capsys.readouterr().err


def test_missing_and_broken_record_files_are_one_line_errors(tmp_path, capsys):
    assert main([str(tmp_path / "nope.json")]) == 2
    assert "game record file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major analyse: error:") and "not valid JSON" in err and err.count("\n") == 1


def _random_record(seed: int, hands: int) -> dict:
    game = Game("standard", seed=seed, max_hands=hands)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game_record(game)


def _reordered(value):
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    return [_reordered(v) for v in value] if isinstance(value, list) else value


def test_the_analysis_names_its_record_by_a_fingerprint(blunder, tmp_path):
    """record_sha256: the SHA-256 of the checked record in canonical JSON, the same for the record saved with
    its keys in another order, another for another game."""
    record = blunder[0]
    analysis = analyse(record, samples=2)
    fingerprint = analysis["record_sha256"]
    assert len(fingerprint) == 64 and fingerprint == record_fingerprint(record_actions(record).record)
    path = tmp_path / "shuffled.json"
    path.write_text(json.dumps(_reordered(record), indent=3))
    from sm_env.records import load_record

    assert record_fingerprint(record_actions(load_record(path)).record) == fingerprint
    assert analyse(_random_record(5, 1), samples=1)["record_sha256"] != fingerprint


def test_a_stored_analysis_is_checked_against_its_record_and_split_by_hand(tmp_path, monkeypatch):
    """load_analysis + check_analysis take back what --out wrote; hand_analyses gives each hand as analysing that
    hand alone does; another record's analysis, an old one without fingerprint, NaN or a file too big are
    refused with the reason."""
    record = _random_record(5, 3)
    read = record_actions(record)
    analysis = analyse(record, samples=2, seed=4, first_hand=2)
    path = tmp_path / "analysis.json"
    write_analysis(analysis, str(path))
    checked = check_analysis(load_analysis(path), read)
    assert checked == analysis
    split = hand_analyses(checked, read)
    assert sorted(split) == [2, 3]
    for hand, one in split.items():
        assert one == analyse(record, samples=2, seed=4, first_hand=hand, hands=1), hand
    assert sum(r["decisions"] for h in split.values() for r in h["seats"]) == len(analysis["decisions"])
    whole = dict(analyse(record, samples=2, seed=4, threshold=1.0, first_hand=3), threshold=1)
    assert type(check_analysis(whole, read)["threshold"]) is float  # a whole number read as the float it stands for
    with pytest.raises(AnalysisError, match="flagged is True, but the cost .* and the threshold 2 say otherwise"):
        check_analysis(dict(whole, threshold=2.0), read)  # its flags no longer agree
    other = record_actions(_random_record(6, 3))
    with pytest.raises(AnalysisError, match="the analysis of another record: its record_sha256 is"):
        check_analysis(analysis, other)
    old = {k: v for k, v in analysis.items() if k != "record_sha256"}
    with pytest.raises(AnalysisError, match="names no record .* analyse the record again"):
        check_analysis(old, read)
    with pytest.raises(AnalysisError, match="not an analysis"):
        check_analysis([analysis], read)
    nan = tmp_path / "nan.json"
    nan.write_text(path.read_text().replace('"threshold": 0.5', '"threshold": NaN'))
    with pytest.raises(AnalysisError, match="NaN is not a JSON value"):
        load_analysis(nan)
    monkeypatch.setattr(agents.analysis, "MAX_ANALYSIS_BYTES", path.stat().st_size - 1)
    with pytest.raises(AnalysisError, match="larger than"):
        load_analysis(path)


class _no_raise:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


@pytest.mark.parametrize(
    ("phase", "played", "words"),
    [
        ("play", "QH", "played QH"),
        ("discard", "QH", "discarded QH"),
        ("exchange", "QH", "sent QH in the exchange"),
        ("trump", "trump clubs", "named trump clubs"),
        ("trump", "call no trump", "called no trump"),
        ("trump", "call misère", "called misère"),
        ("bid", "bid 9", "bid 9"),
        ("bid", "pass", "passed"),
        ("assign", "quotas 8-3-5", "gave the quotas 8-3-5"),
        ("take", "pass", "declined the face-up card"),
        ("take", "QH", "took the face-up card and put QH out of play"),
    ],
)
def test_a_move_is_worded_by_its_decision_type(phase, played, words):
    """One wording of a decision (analyse's flagged moves, the viewer's ``move``): a discard is not "played"."""
    assert agents.analysis.move_text(phase, played) == words


def test_flagged_moves_and_the_viewers_moves_say_what_each_decision_did(blunder):
    """Every decision type of the engine has its own verb; the flagged lines and with_moves use move_text."""
    from sm_env.core.game import PHASE_NAMES

    assert all(not agents.analysis.move_text(p, "QH").startswith("chose") for p in PHASE_NAMES if p != "over")
    discard = {"hand": 1, "where": "discard", "step": 3, "seat": 0, "phase": "discard", "played": "QH"}
    discard.update(value=-1.0, best=["2C"], best_value=0.5, cost=1.5, flagged=True)
    (line,) = agents.analysis.flagged_text({"decisions": [discard]})
    assert "player_0 discarded QH (-1.00); best 2C (+0.50): cost 1.50" in line
    analysis = analyse(blunder[0], samples=2, seed=0)
    shown = agents.analysis.with_moves(analysis)
    assert [d["move"] for d in shown["decisions"]] == [
        agents.analysis.move_text(d["phase"], d["played"]) for d in analysis["decisions"]
    ]
    assert {d["move"].split()[0] for d in shown["decisions"]} >= {"named", "discarded", "played"}
    assert "move" not in analysis["decisions"][0]  # a copy: the analysis itself keeps its format
