"""sm_env.core.episode: the one definition of episodes and rewards, used by both environments."""

from __future__ import annotations

import pytest

from sm_env.core.episode import EPISODES, REWARDS, check_episode, engine_max_hands, episode_end, result_rewards


def test_valid_combinations_pass():
    for episode in EPISODES:
        for reward in REWARDS:
            if not (episode == "hand" and reward == "result"):
                check_episode(episode, reward, 10)
    check_episode("game", "balance", None)


@pytest.mark.parametrize(
    "episode, reward, max_hands, words",
    [
        ("round", "balance", 10, ["episode", "'game'", "'hand'", "'round'"]),
        ("game", "points", 10, ["reward", "'score'", "'balance'", "'result'", "'points'"]),
        ("hand", "result", 10, ["reward='result'", "episode='hand'"]),
        ("game", "balance", 0, ["max_hands", ">= 1", "0"]),
        ("game", "balance", True, ["max_hands", "True"]),
        ("game", "balance", 2.0, ["max_hands", "2.0"]),
    ],
)
def test_bad_options_name_the_value_and_what_is_allowed(episode, reward, max_hands, words):
    with pytest.raises(ValueError) as err:
        check_episode(episode, reward, max_hands)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_result_rewards_share_plus_one_and_minus_one():
    assert result_rewards([1]) == (-0.5, 1.0, -0.5)
    assert result_rewards([0, 2]) == (0.5, -1.0, 0.5)
    assert result_rewards([0, 1, 2]) == (0.0, 0.0, 0.0)
    assert result_rewards(None) == (0.0, 0.0, 0.0)
    for winners in ([0], [2], [0, 1], [1, 2]):
        assert sum(result_rewards(winners)) == 0


def test_episode_end_and_engine_hands():
    assert episode_end("hand", won=False) == (True, False)
    assert episode_end("game", won=True) == (True, False)
    assert episode_end("game", won=False) == (False, True)
    assert engine_max_hands("hand", 100) == 1 and engine_max_hands("game", 100) == 100


def test_both_environments_reward_a_game_alike():
    """The AEC env and the training env give one seat the same rewards on the same game."""
    pytest.importorskip("stable_baselines3")
    from agents import make_agent
    from sm_env import env as make_env
    from sm_env.core.knowledge import player_view
    from training.sb3.single_agent import SingleSeatEnv

    heuristic = make_agent("heuristic", 0)  # deterministic: the same views give the same game
    for reward, max_hands in (("balance", 5), ("result", 5), ("result", 60)):  # truncated, truncated, won
        single = SingleSeatEnv(episode="game", reward=reward, max_hands=max_hands, opponents={"heuristic": 1.0})
        single.reset(seed=3, options={"seat": 1, "role": 0})
        total, terminated, truncated = 0.0, False, False
        while not (terminated or truncated):
            _, r, terminated, truncated, _ = single.step(heuristic.act(player_view(single.game, 1)))
            total += r
        game = single.game
        deals = [{"hands": h.deal_hands, "kitty": h.kitty} for h in game.history]
        aec = make_env(episode="game", reward=reward, max_hands=max_hands)
        aec.reset(seed=0, options={"first_dealer": game.first_dealer, "deals": deals})
        aec_total = 0.0
        while aec.agents and not (aec.terminations["player_1"] or aec.truncations["player_1"]):
            seat = int(aec.agent_selection[-1])
            aec.step(heuristic.act(player_view(aec.unwrapped.game, seat)))
            aec_total += aec.rewards["player_1"]
        assert aec.unwrapped.game.scores == game.scores
        assert aec_total == pytest.approx(total), reward
        assert total != 0 or max_hands == 5  # the won game pays the result
        assert (aec.terminations["player_1"], aec.truncations["player_1"]) == (terminated, truncated)
