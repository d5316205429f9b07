"""The SB3 path on four players (docs/rules.md 10.6): the single-seat env, its config and a tiny training run.

The compiled and pure-Python paths of the env play four players in lockstep in
``tests/test_single_seat_kernel.py`` (its four-player cases).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("pydantic")

from agents.players.ppo_agent import load_numpy_policy  # noqa: E402
from sm_env import PRESETS  # noqa: E402
from sm_env.core.game import FOUR_ROLE_NAMES  # noqa: E402
from sm_env.core.knowledge import player_view  # noqa: E402
from sm_env.observation import action_mask, encode, observation_size  # noqa: E402
from training.common.errors import ConfigError  # noqa: E402
from training.sb3.config import config_from_dict, load_config  # noqa: E402
from training.sb3.single_agent import SingleSeatEnv  # noqa: E402

FOUR = "four-5-3-2-2"


def _random_step(env: SingleSeatEnv, rng: np.random.Generator):
    return env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))


def test_every_role_is_played_and_learner_seats_picks_them():
    env = SingleSeatEnv(FOUR, opponents={"random": 1.0}, exchange_start=0.5)
    assert env.observation_space.shape == (observation_size(PRESETS[FOUR]),) == (1016,)
    assert env.action_space.n == 56 and env.roles == (0, 1, 2, 3)
    rng = np.random.default_rng(0)
    first_roles, seats = set(), set()
    for seed in range(24):
        _, info = env.reset(seed=seed)
        first_roles.add(info["role"])
        seats.add(env.seat)
        assert env.game.role_of(env.seat) == FOUR_ROLE_NAMES.index(info["role"])
        done = False
        while not done:
            _, _, terminated, truncated, info = _random_step(env, rng)
            done = terminated or truncated
        assert info["first_role"] in FOUR_ROLE_NAMES and len(info["opponents"]) == 3
    assert first_roles == set(FOUR_ROLE_NAMES) and seats == {0, 1, 2, 3}
    only = SingleSeatEnv(FOUR, learner_seats=["third", "fourth"], opponents={"random": 1.0})
    drawn = {only.reset(seed=seed)[1]["role"] for seed in range(12)}
    assert drawn == {"third", "fourth"}
    _, info = only.reset(seed=0, options={"seat": 3, "role": "dealer"})  # the options fix both
    assert (only.seat, info["role"], only.game.dealer) == (3, "dealer", 3)


@pytest.mark.parametrize("compiled", [True, False])
def test_mask_and_observation_are_the_game_s_and_rewards_add_up_to_the_score(compiled):
    opponents = {"random": 1.0, "heuristic": 1.0}
    env = SingleSeatEnv(FOUR, episode="game", max_hands=4, dense_reward=True, opponents=opponents, compiled=compiled)
    assert env.compiled == compiled
    rng = np.random.default_rng(1)
    steps = 0
    for seed in range(2):
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            game = env.game
            assert game.current == env.seat
            mask = env.action_masks()
            assert np.array_equal(mask, action_mask(game.legal_mask(), 56)) and np.array_equal(
                mask, info["action_mask"]
            )
            assert np.array_equal(obs, encode(player_view(game, env.seat)))
            obs, reward, terminated, truncated, info = _random_step(env, rng)
            total += reward
            steps += 1
            done = terminated or truncated
        assert total == env.game.scores[env.seat] == info["balance"]  # the rewards of a game: its final score
        assert env.game.hand_number >= 1 and env.action_masks().all()
    assert steps > 50


def test_bad_learner_seats_and_options_name_the_rule_set_s_roles():
    with pytest.raises(ValueError) as err:
        SingleSeatEnv(FOUR, learner_seats=["dealer", "middle"])
    message = str(err.value)
    assert "'middle'" in message and "'four-5-3-2-2' (4 players)" in message
    assert "dealer, eldest, third, fourth" in message and "\n" not in message
    with pytest.raises(ValueError, match="unknown role 'third' for the rules 'standard' .*dealer, eldest, middle"):
        SingleSeatEnv("standard", learner_seats="third")
    env = SingleSeatEnv(FOUR, opponents={"random": 1.0})
    env.reset(seed=0)
    before = (env.seat, env._rng.getstate())
    for options, words in (
        ({"seat": 4}, "a seat 0-3, got 4"),
        ({"role": "middle"}, "'middle' is not one of ['dealer', 'eldest', 'third', 'fourth']"),
        ({"role": 4}, "or 0-3, got 4"),
    ):
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            env.reset(options=options)
        assert (env.seat, env._rng.getstate()) == before  # refused before anything changed


def test_the_config_takes_four_players_and_checks_their_roles():
    cfg = config_from_dict({"env": {"rules": FOUR, "learner_seats": ["fourth"], "exchange_start": 0.5}})
    assert cfg.env.learner_seats == ["fourth"]
    for data, words in (
        ({"env": {"rules": FOUR, "learner_seats": ["middle"]}}, ["env.learner_seats", "dealer, eldest, third, fourth"]),
        ({"env": {"learner_seats": ["fourth"]}}, ["env.learner_seats", "'standard'", "dealer, eldest, middle"]),
        ({"env": {"learner_seats": ["dealer", "dealer"]}}, ["env.learner_seats", "twice"]),
        ({"env": {"rules": FOUR}, "eval": {"start_balances": [1, -1, 0]}}, ["eval.start_balances", "must be 4"]),
        ({"eval": {"start_balances": [1, -1, 0, 0]}}, ["eval.start_balances", "must be 3"]),
        ({"env": {"rules": FOUR}, "eval": {"start_balances": [11, -5, -3, -3]}}, ["cannot come from a hand"]),
    ):
        with pytest.raises(ConfigError) as err:
            config_from_dict(data, "c.yaml")
        assert all(word in str(err.value) for word in words), (words, str(err.value))
    config_from_dict({"env": {"rules": FOUR}, "eval": {"start_balances": [2, -1, 1, -2]}})
    shipped = load_config("configs/sb3_four.yaml")
    assert shipped.env.rules == FOUR


def test_a_tiny_maskable_ppo_run_trains_four_players(tmp_path):
    pytest.importorskip("sb3_contrib")
    from training.sb3.trainer import train

    cfg = config_from_dict(
        {
            "env": {"rules": FOUR, "exchange_start": 0.5},
            "opponents": {"mix": {"random": 1.0, "heuristic": 1.0, "snapshots": 1.0}, "snapshot_every": 64},
            "pretrain": {"teacher": "heuristic", "decisions": 64, "epochs": 1, "batch_size": 32},
            "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "net_arch": [16]},
            "train": {"total_timesteps": 128, "n_envs": 2, "segment_steps": 64, "progress_bar": False},
            "eval": {"final_deals": 0, "deals": 2, "opponents": ["random"]},
        }
    )
    trainer = train(cfg, str(tmp_path / "run"), quiet=True)
    try:
        assert trainer.model.num_timesteps >= 128 and len(trainer.snapshots) >= 1
        assert trainer.pretrain_stats is not None and 0 <= trainer.pretrain_stats["accuracy"] <= 1
        results = trainer.evaluate(2)  # the duplicate evaluation of four players, per role
        assert list(results["random"]) == [*FOUR_ROLE_NAMES, "all"]
        trainer.save_final()
    finally:
        trainer.close()
    policy, meta = load_numpy_policy(str(tmp_path / "run" / "final_policy.pt"))
    assert meta["rules_name"] == FOUR and (policy.observation_size, policy.num_actions) == (1016, 56)
