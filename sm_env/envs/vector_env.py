"""The learner's seat of many games as one Gymnasium vector environment,
on the batched engine :class:`sm_env.compiled.batch.VectorGame`.

:class:`LearnerVectorEnv` plays ``num_envs`` games; in each, one seat is the
learner and the two others are played inside :meth:`LearnerVectorEnv.step`
by an opponent policy, so every transition is from the learner's point of
view (as ``training.sb3.single_agent.SingleSeatEnv``, batched). Its sizes are
the rule set's: O = ``observation_size(rules)`` (789 for the standard rules,
791 with 74 actions, 900 with ``one_card_kitty``), A = ``rules.num_actions``
(56 or 74, docs/rules.md 10.8) and P = ``rules.num_players`` seats; every
rule set the batched engine runs is accepted (``VectorGame`` refuses the
others by name):

- observation: float32 ``[num_envs, O]``, ``observation.encode`` of the
  learner's ``player_view``; action: one action id per env
  (``single_action_space = Discrete(A)``);
- reward: the change of the learner's running score in each hand when it
  ends, times ``reward_scale`` (env()'s ``"score"`` reward, the default: the
  hand's balance, tricks - quota, in every rule set the batched engine runs,
  none of which has ``chips``); over an episode the rewards add up to the
  learner's final score;
- ``episode="hand"`` (default: one hand, a termination) or ``"game"``
  (termination when won, truncation after ``max_hands``);
- the learner's seat is drawn at random (uniformly 0 to P - 1) for each episode,
  and the first dealer by the engine, so every role is played;
- autoreset in the same step (``metadata["autoreset_mode"]`` is
  ``SAME_STEP``): where an episode ended, the returned observation is the
  first of the next episode, and ``infos["final_obs"][i]`` (with
  ``infos["_final_obs"][i]`` True) is the learner's observation at the end;
- masks: :meth:`LearnerVectorEnv.action_masks` (sb3-contrib's MaskablePPO
  convention) and ``infos["action_mask"]``: int8 ``[num_envs, A]``, the
  learner's legal actions; never all zero. An illegal action raises
  :class:`sm_env.compiled.batch.VectorActionError` and nothing moves.

``opponent``: ``"random"`` (uniform legal actions, compiled) or a callable
``opponent(observations float32 [M, O], masks int8 [M, A]) -> actions
[M]`` called with the positions of the M games where an opponent is to act
(a frozen policy, a baseline written for batches).

``reset(seed=s)`` seeds the games (``VectorGame`` seeding), the learner
seats and the random opponents; same seed + same actions give the same
episodes.

:func:`sb3_vec_env` wraps it as a stable-baselines3 ``VecEnv`` (with
``terminal_observation`` and ``TimeLimit.truncated`` infos and the masks
through ``env_method("action_masks")``), for SB3 and sb3-contrib trainers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from sm_env.compiled.batch import VectorGame
from sm_env.compiled.kernels import random_legal
from sm_env.compiled.seeding import fresh_seed
from sm_env.core.rules import RuleSet

__all__ = ["LearnerVectorEnv", "sb3_vec_env"]

Opponent = Callable[[np.ndarray, np.ndarray], np.ndarray]


class LearnerVectorEnv(VectorEnv):
    """One learner seat in each of ``num_envs`` games (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        rules: RuleSet | str | dict[str, Any] | None = "standard",
        episode: str = "hand",
        max_hands: int | None = 100,
        opponent: str | Opponent = "random",
        reward_scale: float = 1.0,
        parallel: bool = False,
    ) -> None:
        if not (opponent == "random" or callable(opponent)):
            raise ValueError(
                f"opponent must be 'random' or a callable (observations, masks) -> actions, got {opponent!r}"
            )
        self.game = VectorGame(num_envs, rules=rules, seed=0, episode=episode, max_hands=max_hands, parallel=parallel)
        self.num_envs = self.game.num_games
        self.num_players = self.game.rules.num_players
        self.opponent = opponent
        self.reward_scale = float(reward_scale)
        obs_size, num_actions = self.game.observation_size, self.game.num_actions
        self.single_observation_space = gym.spaces.Box(-1.0, 1.0, shape=(obs_size,), dtype=np.float32)
        self.single_action_space = gym.spaces.Discrete(num_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self._rows = np.arange(n)
        self.seats = np.zeros(n, dtype=np.int64)
        self._seat_rng = np.random.default_rng()
        self._opp_state = np.ones(n, dtype=np.uint64)
        self._opp_actions = np.zeros(n, dtype=np.int64)
        self._masks = np.ones((n, num_actions), dtype=np.int8)
        self._final_obs = np.zeros((n, obs_size), dtype=np.float32)
        self._has_reset = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New episodes in every env; ``seed`` seeds the games, the learner seats and random opponents."""
        if options:
            raise ValueError(f"LearnerVectorEnv.reset takes no options, got {sorted(options)}")
        if seed is None and not self._has_reset:
            seed = fresh_seed()  # 128 bits of OS entropy
        if seed is not None:
            self.game.reset(seed=seed)
            self._seat_rng = np.random.default_rng(seed)
            self._opp_state[:] = np.random.default_rng([seed, 1]).integers(1, 2**63, size=self.num_envs)
        else:
            self.game.reset()  # the games' streams go on: new games
        self._has_reset = True
        self.seats[:] = self._seat_rng.integers(self.num_players, size=self.num_envs)
        reward = np.zeros(self.num_envs, dtype=np.float64)
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        self._advance(reward, ended, truncated)
        return self._observe(), {"action_mask": self._masks.copy()}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's actions; the opponents then play until the learner is to act again everywhere."""
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        reward = np.zeros(n, dtype=np.float64)
        ended = np.zeros(n, dtype=np.bool_)
        truncated = np.zeros(n, dtype=np.bool_)
        self._game_step(np.asarray(actions), None, reward, ended, truncated)
        self._advance(reward, ended, truncated)
        obs = self._observe()
        infos: dict[str, Any] = {"action_mask": self._masks.copy()}
        if ended.any():
            infos["final_obs"] = self._final_obs.copy()
            infos["_final_obs"] = ended.copy()
        terminated = ended & ~truncated
        return obs, (reward * self.reward_scale).astype(np.float32), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """int8 [num_envs, A]: the learner's legal actions."""
        return self._masks

    def _game_step(
        self,
        actions: np.ndarray,
        active: np.ndarray | None,
        reward: np.ndarray,
        ended: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        """One engine step; rewards and ends of the learners' episodes are accumulated."""
        game = self.game
        r, done = game.step(actions, active, final_seats=self.seats)
        reward += np.where(ended, 0.0, r[self._rows, self.seats])
        if done.any():
            truncated |= game.truncated
            ended |= done
            self._final_obs[done] = game.final_observations[done]
            self.seats[done] = self._seat_rng.integers(self.num_players, size=int(done.sum()))

    def _advance(self, reward: np.ndarray, ended: np.ndarray, truncated: np.ndarray) -> None:
        """Opponents play until the learner is to act in every env."""
        game = self.game
        while True:
            waiting = game.current_player != self.seats
            if not waiting.any():
                return
            if self.opponent == "random":
                random_legal(game.legal_mask(), self._opp_state, self._opp_actions)
            else:
                rows = np.flatnonzero(waiting)
                chosen = np.asarray(self.opponent(game.observe(rows), game.legal_mask()[rows]))
                self._opp_actions[rows] = chosen
            self._game_step(self._opp_actions, waiting, reward, ended, truncated)

    def _observe(self) -> np.ndarray:
        self.game.legal_mask(out=self._masks)
        return self.game.observe()


def sb3_vec_env(env: LearnerVectorEnv) -> Any:
    """A stable-baselines3 ``VecEnv`` view of a :class:`LearnerVectorEnv` (needs stable-baselines3)."""
    from stable_baselines3.common.vec_env import VecEnv

    class LearnerSB3VecEnv(VecEnv):
        """SB3's VecEnv API over LearnerVectorEnv: reset() -> obs; step -> (obs, rewards, dones, infos)."""

        def __init__(self) -> None:
            super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
            self.env = env
            self._actions: np.ndarray | None = None

        def reset(self) -> np.ndarray:
            seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
            obs, _ = env.reset(seed=seed)
            self._reset_seeds()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            obs, reward, terminated, truncated, info = env.step(self._actions)
            dones = terminated | truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(dones):
                infos[i] = {
                    "terminal_observation": info["final_obs"][i],
                    "TimeLimit.truncated": bool(truncated[i]),
                }
            return obs, reward, dones, infos

        def close(self) -> None:
            env.close()

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            return [indices] if isinstance(indices, int) else list(indices)

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(env, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(env, attr_name, value)

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            rows = self._indices(indices)
            if method_name == "action_masks":
                masks = env.action_masks()
                return [masks[i] for i in rows]
            result = getattr(env, method_name)(*args, **kwargs)
            return [result] * len(rows)

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

        def has_attr(self, attr_name: str) -> bool:
            return hasattr(env, attr_name)

    return LearnerSB3VecEnv()
