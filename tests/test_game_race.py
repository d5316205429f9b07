"""training.evaluation.game_race: the dealers' 12-trick hands of whole games, counted against the engine's
own record."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from agents.players.heuristic import heuristic_action
from sm_env.core.game import OVER, Game
from sm_env.core.knowledge import player_view


def _script():
    from training.evaluation import game_race

    return game_race


def test_the_counts_match_the_games_as_the_engine_plays_them() -> None:
    script = _script()
    counts = script.play_games("heuristic", 0, 4, seed=9000, max_hands=30)
    # the same four games replayed here, every seat the heuristic (the agent's seat plays as the others do)
    hands, agent_hands, twelves, won = 0, 0, 0, 0
    for g in range(4):
        game = Game(rules="standard", seed=9000 + g)
        while game.phase != OVER and game.hand_number <= 30:
            game.apply(heuristic_action(player_view(game, game.current)))
        played = [log for log in game.history if log.tricks_won is not None]
        hands += len(played)
        agent_hands += sum(log.dealer == g % 3 for log in played)  # the agent sits in seat g % 3
        twelves += sum(log.tricks_won[log.dealer] >= 12 for log in played)
        won += bool(game.winners)
    assert counts["games"] == 4
    assert counts["agent_dealt"] + counts["heuristic_dealt"] == hands
    assert counts["agent_dealer_12"] + counts["heuristic_dealer_12"] == twelves
    assert counts["agent_won"] + counts["heuristic_won"] == won
    assert counts["agent_won"] + counts["heuristic_won"] + counts["cut_off"] == 4
    assert counts["agent_dealt"] == agent_hands and 0 < agent_hands < hands


def test_summary_rates_and_the_race_model() -> None:
    script = _script()
    result = script.summary(
        Counter(
            agent_dealt=100, agent_dealer_12=20, heuristic_dealt=200, heuristic_dealer_12=10, games=30, agent_won=20
        )
    )
    assert result["agent_dealer_12_rate"] == pytest.approx(0.2)
    assert result["heuristic_dealer_12_rate"] == pytest.approx(0.05)
    assert result["race_ratio"] == pytest.approx(4.0)
    assert result["race_model_win_rate"] == pytest.approx(2 / 3)
    lo, hi = result["agent_win_ci"]
    assert lo < 20 / 30 < hi


def test_the_command_line_writes_json_and_refuses_bad_input(tmp_path, capsys) -> None:
    script = _script()
    out = tmp_path / "race.json"
    assert script.main(["--agent", "heuristic", "--games", "2", "--out", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["result"]["games"] == 2 and saved["config"]["agent"] == "heuristic"
    for bad, words in (
        (["--games", "0"], "--games must be in"),
        (["--agent", "nonsense"], "unknown agent"),
        (["--workers", "0"], "--workers must be in"),
        (["--agent", "ppo:agents/policies/four-5-3-2-2_v1.pt"], "cannot play the rule set 'standard'"),
    ):
        with pytest.raises(SystemExit):
            script.main(bad)
        assert words in capsys.readouterr().err
