"""SingleSeatEnv: the compiled path and the pure-Python path in lockstep.

Both envs are reset with the same seeds and options and given the same learner
actions (now and then an illegal one: both refuse it with the same message, or
both replace it, with ``illegal_action="lowest_legal"``); every step must give the same
observation, mask, reward, terminated/truncated and info, the same
opponents must be drawn and the same games played (the records at the end of
each episode).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from sm_env import IllegalEnvActionError  # noqa: E402
from sm_env.core.rules import RuleSet  # noqa: E402
from sm_env.records import game_record  # noqa: E402
from training.sb3.single_agent import SingleSeatEnv  # noqa: E402


def _snapshot(seed: int, hidden: int = 8, size: int = 789) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "mlp_extractor.policy_net.0.weight": rng.normal(size=(hidden, size)).astype(np.float32) * 0.3,
        "mlp_extractor.policy_net.0.bias": np.zeros(hidden, np.float32),
        "action_net.weight": rng.normal(size=(56, hidden)).astype(np.float32),
        "action_net.bias": np.zeros(56, np.float32),
    }


def _deal(rng: random.Random) -> dict[str, list[int]]:
    cards = list(range(52))
    rng.shuffle(cards)
    return {"hands": [sorted(cards[16 * s : 16 * s + 16]) for s in range(3)], "kitty": sorted(cards[48:])}


def _same_info(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, np.ndarray):
            assert value.dtype == b[key].dtype and np.array_equal(value, b[key]), key
        else:
            assert type(value) is type(b[key]) and value == b[key], (key, value, b[key])


CASES = [
    # rules, env keywords, opponent mix, episodes
    ("standard", {}, {"random": 1.0}, 6),
    ("standard", {"dense_reward": True, "learner_seats": ["dealer"], "exchange_start": 1.0}, {"heuristic": 1.0}, 3),
    (
        "standard",
        {"reward": "balance", "exchange_start": 0.5, "reward_scale": 0.25},
        {"random": 1.0, "snapshots": 1.0},
        6,
    ),
    (
        "standard",
        {"episode": "game", "max_hands": 5, "dense_reward": True, "reward_scale": 0.5},
        {"random": 1.0, "heuristic": 1.0, "snapshots": 1.0},
        2,
    ),
    ("standard", {"episode": "game", "max_hands": 4, "reward": "result"}, {"heuristic": 1.0}, 2),
    ("6-3-8", {"episode": "game", "max_hands": 4, "learner_seats": ["eldest", "middle"]}, {"random": 1.0}, 2),
    ("canadian", {"dense_reward": True, "exchange_start": 1.0}, {"random": 1.0, "heuristic": 1.0}, 3),
    ("woburn", {"episode": "game", "max_hands": 3, "reward": "balance", "dense_reward": True}, {"random": 1.0}, 2),
    ("fixed-9", {"episode": "game", "max_hands": 12, "learner_seats": ["middle"]}, {"random": 1.0}, 1),
    # four players (docs/rules.md 10.6): every seat count runs both paths
    (
        "four-5-3-2-2",
        {"exchange_start": 0.5, "dense_reward": True},
        {"random": 1.0, "heuristic": 1.0, "snapshots": 1.0},
        12,
    ),
    ("four-6-3-2-1", {"episode": "game", "max_hands": 5, "learner_seats": ["third", "fourth"]}, {"random": 1.0}, 2),
    ("four-5-3-2-2", {"episode": "game", "max_hands": 3, "reward": "result"}, {"heuristic": 1.0, "snapshots": 1.0}, 2),
]


def _lockstep(fast: SingleSeatEnv, slow: SingleSeatEnv, episodes: int, rng: random.Random) -> int:
    """Play both envs side by side (same seeds, options and learner actions); the number of learner steps."""
    assert fast.compiled is True and not slow.compiled
    steps = 0
    for episode in range(episodes):
        seed = 1000 + episode if episode % 2 == 0 else None  # odd episodes continue the env's own stream
        options = None
        if episode == 1 and fast.rules.name == "standard":
            options = {"seat": 2, "role": "eldest", "deals": [_deal(rng), _deal(rng)]}
        obs_f, info_f = fast.reset(seed=seed, options=options)
        obs_s, info_s = slow.reset(seed=seed, options=options)
        assert fast.seat == slow.seat and fast.opponent_names == slow.opponent_names
        while True:
            assert obs_f.dtype == obs_s.dtype and np.array_equal(obs_f, obs_s)
            mask = fast.action_masks()
            assert np.array_equal(mask, slow.action_masks())
            _same_info(info_f, info_s)
            legal = np.flatnonzero(mask)
            action = rng.randrange(56) if rng.random() < 0.05 else int(rng.choice(legal))
            if not mask[action] and fast.illegal_action == "raise":
                refusals = []
                for env in (fast, slow):
                    with pytest.raises(IllegalEnvActionError) as refused:
                        env.step(action)
                    refusals.append(str(refused.value))
                assert refusals[0] == refusals[1] and np.array_equal(fast.action_masks(), mask)
                continue
            obs_f, reward_f, term_f, trunc_f, info_f = fast.step(action)
            obs_s, reward_s, term_s, trunc_s, info_s = slow.step(action)
            steps += 1
            assert type(reward_f) is type(reward_s) and reward_f == reward_s
            assert (term_f, trunc_f) == (term_s, trunc_s)
            if term_f or trunc_f:
                break
        assert np.array_equal(obs_f, obs_s) and np.array_equal(fast.action_masks(), slow.action_masks())
        _same_info(info_f, info_s)
        assert game_record(fast.game) == game_record(slow.game)  # the same games, the opponents' choices too
        assert fast.decisions == slow.decisions
    return steps


@pytest.mark.parametrize("rules, kwargs, mix, episodes", CASES)
def test_compiled_and_python_paths_agree(rules, kwargs, mix, episodes):
    fast = SingleSeatEnv(rules, opponents=mix, compiled=True, **kwargs)  # the kernels, whatever numba's cache holds
    slow = SingleSeatEnv(rules, opponents=mix, compiled=False, **kwargs)
    for env in (fast, slow):
        env.add_snapshot("s0", _snapshot(0, size=env.observation_size))
        env.add_snapshot("s1", _snapshot(1, size=env.observation_size))
    assert _lockstep(fast, slow, episodes, random.Random(f"{rules}:{sorted(kwargs.items())}")) > 20


def test_paths_agree_with_trained_policy_opponents(tmp_path):
    pytest.importorskip("torch")
    from agents.players.ppo_agent import NumpyPolicy, PPOAgent, export_policy

    path = str(tmp_path / "policy.pt")
    export_policy(NumpyPolicy.from_state_dict(_snapshot(2)), path)

    def factory(name: str, seed: int) -> PPOAgent:  # sampling, so that its own RNG is used
        return PPOAgent(path, seed, deterministic=name == "greedy")

    envs = [
        SingleSeatEnv(
            episode="game",
            max_hands=3,
            opponents={"greedy": 1, "sampling": 1},
            baseline_factory=factory,
            compiled=c,
            illegal_action="lowest_legal",
        )
        for c in (True, False)
    ]
    assert _lockstep(*envs, 2, random.Random(5)) > 20


def test_observation_opponents_never_bring_the_game_up_to_date():
    env = SingleSeatEnv(opponents={"random": 1.0, "snapshots": 1.0})
    env.add_snapshot("s0", _snapshot(0))
    env.reset(seed=3)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    engine = env._engine
    assert engine._game.tricks_played == 0 and len(engine.pending) == env.decisions  # every action still pending
    assert env.game.tricks_played >= 4  # read: brought up to date (10 learner decisions, 5 at most before play)


def test_python_path_for_rules_the_kernels_do_not_run(monkeypatch):
    assert SingleSeatEnv(rules="standard").compiled and SingleSeatEnv(rules="chips-12").compiled
    import training.sb3.single_agent as single_agent

    monkeypatch.setattr(single_agent, "supports", lambda rules: False)  # a rule set the kernels do not run
    assert not SingleSeatEnv(rules="standard").compiled
    monkeypatch.undo()
    assert not SingleSeatEnv(rules=RuleSet(), compiled=False).compiled
    with pytest.raises(ValueError, match="compiled must be True, False or 'auto'"):
        SingleSeatEnv(compiled="yes")


def _episode(env: SingleSeatEnv, seed: int, options: dict | None = None, prefer: int | None = None) -> list[float]:
    """One episode, the learner playing ``prefer`` where legal, else its lowest legal action; its rewards."""
    env.reset(seed=seed, options=options)
    rewards = []
    while True:
        mask = env.action_masks()
        action = prefer if prefer is not None and prefer < len(mask) and mask[prefer] else int(mask.argmax())
        _, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards


def test_auction_hands_after_a_passed_out_deal_are_rewarded_on_both_paths():
    """A passed-out deal scores nothing, and the hands after it are paid as usual (the pure-Python path once
    stopped paying after one): the rewards of a game add up to the learner's final score."""
    passed_out = 0
    for seed in range(12):
        paid = []
        for compiled in (True, False):
            env = SingleSeatEnv("woburn-auction", episode="game", max_hands=12, compiled=compiled)
            rewards = _episode(env, seed, prefer=58)  # the learner passes whenever it may
            assert sum(rewards) == env.game.scores[env.seat]
            paid.append(rewards)
        assert paid[0] == paid[1]
        passed_out += env.game.passed_out
    assert passed_out >= 1


@pytest.mark.parametrize("compiled", [True, False])
def test_four_player_result_rewards_for_every_seat(compiled):
    from sm_env.core.episode import result_rewards

    for seat in range(4):
        env = SingleSeatEnv("four-5-3-2-2", episode="game", max_hands=3, reward="result", compiled=compiled)
        rewards = _episode(env, seat, {"seat": seat})
        assert sum(rewards) == result_rewards(env.game.winners, 4)[seat]
