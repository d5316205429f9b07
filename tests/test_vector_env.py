"""The Gymnasium vector env of the learner's seat on the batched engine."""

from __future__ import annotations

import numpy as np
import pytest

from sm_env.compiled.batch import VectorActionError
from sm_env.envs.vector_env import LearnerVectorEnv, sb3_vec_env
from sm_env.observation import OFFSETS

TO_ACT_SELF = OFFSETS["to_act"]
QUOTA_SELF = OFFSETS["quotas"]
TRICKS_SELF = OFFSETS["tricks_won"]


def _lowest_legal(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(axis=1)


def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


def test_learner_always_to_act_and_hand_return_is_its_balance() -> None:
    env = LearnerVectorEnv(6, episode="hand")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    returns = np.zeros(6)
    episodes = 0
    while episodes < 30:
        assert np.all(obs[:, TO_ACT_SELF] == 1.0)  # every observation is the learner's, to act
        assert np.all(env.action_masks().sum(axis=1) > 0)
        obs, reward, terminated, truncated, info = env.step(_random_legal(env.action_masks(), rng))
        returns += reward
        assert not truncated.any()
        for i in np.flatnonzero(terminated):
            final = info["final_obs"][i]
            assert info["_final_obs"][i]
            balance = round(17 * (float(final[TRICKS_SELF]) - float(final[QUOTA_SELF])))
            assert returns[i] == balance
            returns[i] = 0
            episodes += 1


def test_same_seed_same_episodes_and_game_truncation() -> None:
    def run(seed: int) -> list[np.ndarray]:
        env = LearnerVectorEnv(4, episode="game", max_hands=2)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        ends = 0
        while ends < 6:
            obs, reward, terminated, truncated, _ = env.step(_lowest_legal(env.action_masks()))
            ends += int((terminated | truncated).sum())
            out += [obs, reward, terminated, truncated]
        return out

    a, b, c = run(3), run(3), run(4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=False))
    assert any(t.any() for t in a[4::4])  # max_hands=2: games are truncated


def test_callable_opponent_sees_its_own_positions() -> None:
    calls = []

    def opponent(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert np.all(observations[:, TO_ACT_SELF] == 1.0) and len(observations) == len(masks)
        calls.append(len(masks))
        return masks.argmax(axis=1)

    env = LearnerVectorEnv(3, opponent=opponent)
    env.reset(seed=0)
    for _ in range(20):
        env.step(_lowest_legal(env.action_masks()))
    assert calls


def test_illegal_learner_action_raises() -> None:
    env = LearnerVectorEnv(2)
    env.reset(seed=0)
    actions = _lowest_legal(env.action_masks())
    actions[1] = int(np.flatnonzero(env.action_masks()[1] == 0)[0])
    with pytest.raises(VectorActionError, match="slot 1"):
        env.step(actions)
    with pytest.raises(ValueError, match="opponent"):
        LearnerVectorEnv(2, opponent="heuristic")


def test_maskable_ppo_trains_on_the_sb3_view() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    venv = sb3_vec_env(LearnerVectorEnv(8))
    venv.seed(0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=np.stack(venv.env_method("action_masks")))
    assert np.all(venv.env_method("action_masks")[0][actions[0]] == 1)
