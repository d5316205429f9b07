"""Rewards that add up: over a game each seat's rewards sum to its final score minus its starting score.

``reward="score"`` (the default) pays the change of the running score at the
end of each hand, in every rule set (``chips`` included); ``"balance"`` pays
the hand's balance, the same numbers except under ``chips``
(sm_env.core.episode). Every preset, both engines of ``raw_env`` where the
compiled one runs the rule set, random play; the batched engine, the SB3
single-seat env and the training configs' defaults.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from sm_env.compiled.support import supported_presets, supports
from sm_env.core.episode import DEFAULT_REWARD, REWARDS, check_episode, hand_rewards
from sm_env.core.game import chip_changes
from sm_env.core.rules import PRESETS, RuleSet
from sm_env.envs.aec import raw_env

ENGINES = [
    pytest.param(name, compiled, id=f"{name}-{'compiled' if compiled else 'python'}")
    for name in sorted(PRESETS)
    for compiled in ((True, False) if supports(RuleSet.from_any(name)) else (False,))
]


def _play(rules, reward: str, seed: int, compiled: bool, episode: str = "game", max_hands: int | None = 6, **reset):
    """One random game; returns (rewards by step as tuples by seat, summed rewards by seat, the env)."""
    e = raw_env(rules=rules, reward=reward, compiled=compiled, episode=episode, max_hands=max_hands)
    e.reset(seed=seed, options=reset or None)
    assert (e._engine.fast is not None) == (compiled and supports(e.rules))
    rng = random.Random(seed)
    steps = []
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
            continue
        e.step(rng.choice(e.legal_actions()))
        steps.append(tuple(e.rewards[a] for a in e.possible_agents))
    totals = [sum(step[s] for step in steps) for s in range(len(e.possible_agents))]
    return steps, totals, e


def _hands(record: dict) -> list[dict]:
    """The record's hands that were played and scored (a passed-out deal scores nothing)."""
    return [h for h in record["hands"] if h.get("scores") is not None]


@pytest.mark.parametrize("name, compiled", ENGINES)
def test_score_rewards_add_up_to_the_final_scores(name, compiled):
    """Every preset, each engine: score rewards sum to the final scores (start 0); balance rewards to the
    balances, the very same numbers step by step unless the game is scored in chips."""
    rules = RuleSet.from_any(name)
    for seed, max_hands in ((1, 6), (2, 3)):
        score_steps, score_totals, e = _play(name, "score", seed, compiled, max_hands=max_hands)
        record = e.record()
        hands = _hands(record)
        assert hands, "no hand was scored"
        assert score_totals == list(e.game.scores) == hands[-1]["scores"]
        balance_steps, balance_totals, b = _play(name, "balance", seed, compiled, max_hands=max_hands)
        assert b.record() == record  # the reward mode does not change the game
        assert balance_totals == [sum(h["balances"][s] for h in hands) for s in range(rules.num_players)]
        if rules.chips:
            paid = [step for step in score_steps if any(step)]
            assert paid == [tuple(map(float, h["chips"])) for h in hands if any(h["chips"])]
        else:
            assert score_steps == balance_steps


@pytest.mark.parametrize("name, compiled", ENGINES)
def test_hand_episodes_pay_the_hand_s_score(name, compiled):
    scored = 0
    for seed in range(3):
        _, totals, e = _play(name, "score", seed, compiled, episode="hand")
        hands = _hands(e.record())
        if not hands:  # a passed-out deal (auction) ends a one-hand game unscored: nothing is paid
            assert totals == [0.0] * len(totals)
            continue
        (hand,) = hands
        assert totals == hand["scores"] == [float(c) for c in hand.get("chips") or hand["balances"]]
        scored += 1
    assert scored


def test_chips_score_rewards_are_the_chips_and_balance_rewards_are_not_the_score():
    """chips-12: each hand pays its chip changes (computed here from the record's balances); the balance
    rewards of the same games do not add up to the scores that decide them."""
    differ = 0
    for seed in range(4):
        score_steps, score_totals, e = _play("chips-12", "score", seed, False, max_hands=None)
        record = e.record()
        assert record["winner"] is not None and len(record["hands"]) == 12  # fixed_hands 12 decides the game
        paid = [step for step in score_steps if any(step)]
        chips = [chip_changes(h["balances"]) for h in record["hands"]]
        assert paid == [tuple(map(float, c)) for c in chips if any(c)]
        assert score_totals == record["hands"][-1]["scores"]
        _, balance_totals, _ = _play("chips-12", "balance", seed, False, max_hands=None)
        differ += balance_totals != score_totals
    assert differ == 4


def test_hand_rewards_by_mode():
    """The hand-built figures: balances [3, -1, -2] are chips [6, -3, -3] (docs/rules.md 10.7)."""
    assert chip_changes([3, -1, -2]) == [6, -3, -3]
    assert chip_changes([2, 0, -2]) == [2, 0, -2]  # a seat at zero neither wins nor pays
    assert chip_changes([1, 1, -1, -1]) == [2, 2, -2, -2]
    before, after = [5, -2, -3], [11, -5, -6]
    assert hand_rewards("score", [3, -1, -2], before, after) == (6.0, -3.0, -3.0)
    assert hand_rewards("balance", [3, -1, -2], before, after) == (3.0, -1.0, -2.0)
    assert hand_rewards("result", [3, -1, -2], before, after) is None
    assert hand_rewards("score", [1, 0, -1], [0, 0, 0], [1, 0, -1]) == hand_rewards("balance", [1, 0, -1], [], [])


def test_start_balances_are_not_rewarded_and_the_seed_decides_the_rewards():
    """start_balances are an imaginary hand before the game: not scored, not paid. The same seed gives the
    same rewards."""
    for rules in ("standard", "chips-12"):
        options = {"start_balances": [3, -1, -2], "first_dealer": 0}
        steps, totals, e = _play(rules, "score", 4, False, max_hands=2, **options)
        record = e.record()
        assert record["start_balances"] == [3, -1, -2]
        assert totals == record["hands"][-1]["scores"]
        assert _play(rules, "score", 4, False, max_hands=2, **options)[0] == steps


def test_target_score_with_chips_ends_on_the_rewarded_chips():
    """target_score counts chip totals under chips: the game ends when the summed rewards reach it."""
    rules = {"chips": True, "target_score": 6}
    for seed in range(3):
        _, totals, e = _play(rules, "score", seed, False, max_hands=None)
        winners = e.game.winners
        assert winners is not None and max(totals) >= 6 and all(totals[w] == max(totals) for w in winners)


def test_score_is_the_default_and_a_known_mode():
    assert DEFAULT_REWARD == "score" and DEFAULT_REWARD in REWARDS
    assert raw_env().reward_mode == "score"
    check_episode("hand", "score", None)
    with pytest.raises(ValueError, match="'score'.*'balance'.*'result'.*'points'"):
        check_episode("game", "points", 10)


@pytest.mark.parametrize("preset", supported_presets())
def test_batched_engine_rewards_add_up_to_the_final_scores(preset):
    """VectorGame's rewards of each finished game sum to its final scores (the finished record's)."""
    from sm_env.compiled.batch import VectorGame

    n = 4
    g = VectorGame(n, rules=preset, seed=3, episode="game", max_hands=4)
    g.reset()
    rng = np.random.default_rng(0)
    sums = np.zeros((n, g.num_players))
    finished = 0
    while finished < 2 * n:
        mask = g.legal_mask()
        rewards, done = g.step(np.array([rng.choice(np.flatnonzero(row)) for row in mask]))
        sums += rewards
        for i in np.flatnonzero(done):
            assert sums[i].tolist() == g.finished_record(int(i))["hands"][-1]["scores"]
            sums[i] = 0
            finished += 1


@pytest.mark.parametrize("reward, dense", [("score", False), ("score", True), ("balance", True)])
def test_single_seat_env_pays_the_learner_s_score_under_chips(reward, dense):
    pytest.importorskip("stable_baselines3")
    from training.sb3.single_agent import SingleSeatEnv

    env = SingleSeatEnv(rules="chips-12", episode="game", reward=reward, dense_reward=dense, opponents={"random": 1.0})
    assert SingleSeatEnv().reward_mode == "score"
    rng = random.Random(0)
    for seed in range(2):
        env.reset(seed=seed)
        total, over = 0.0, False
        while not over:
            _, r, terminated, truncated, _ = env.step(rng.choice(env.game.legal_actions()))
            total += r
            over = terminated or truncated
        game = env.game
        balances = sum(h.balances[env.seat] for h in game.history)
        assert total == (game.scores[env.seat] if reward == "score" else balances)


def test_training_configs_default_to_the_score():
    pytest.importorskip("pydantic")
    from training.rllib.config import RLlibEnvConfig
    from training.sb3.config import EnvConfig

    assert EnvConfig().reward == "score" and RLlibEnvConfig().reward == "score"
