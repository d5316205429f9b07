"""AEC wrappers that fit the environment to other RL libraries' conventions.

The environment's observation is PettingZoo's classic ``Dict(observation,
action_mask)``. Some tools want something else:

- :class:`FlatObservationWrapper` (``mask_in_info``): the observation is the
  ``Box(-1, 1, (789,), float32)`` vector alone and the action mask moves to
  ``infos[agent]["action_mask"]`` (``int8`` (56,), 1 exactly for the legal
  actions of the agent to act, all 0 for the others). This is the form
  SuperSuit's observation wrappers (``dtype_v0``, ``flatten_v0``,
  ``normalize_obs_v0``, ``reshape_v0``, ``frame_stack_v1``,
  ``agent_indicator_v0``, ``pad_observations_v0``) accept, and the one
  TorchRL's ``PettingZooWrapper(..., use_mask=True)`` reads the mask from
  ``info`` in (it also reads the plain Dict observation).
- :class:`ObservationKeysWrapper` (``rllib_observation_keys``): the Dict
  observation with renamed keys. The default renames ``"observation"`` to
  ``"observations"``, the key RLlib's action-masking example module reads
  (PettingZoo's classic envs say ``"observation"``); ``"action_mask"`` stays.

Both are PettingZoo ``BaseWrapper`` s: wrap ``sm_env.env(...)`` and use the
result wherever an AEC env goes; ``unwrapped`` still reaches the raw env
(``record()``, ``game``, ``action_mask()``). Everything else (actions,
rewards, terminations, infos' other keys) is unchanged.

Tools that sample actions without looking at the mask (SB3's ``check_env``,
PettingZoo's ``average_total_reward``, SuperSuit's sticky-action, frame-skip
and delay wrappers) raise :class:`sm_env.IllegalEnvActionError` by design:
put PettingZoo's ``TerminateIllegalWrapper(env, illegal_reward=-1)`` inside
them to turn an illegal action into a penalised end of the episode instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

__all__ = ["FlatObservationWrapper", "ObservationKeysWrapper", "mask_in_info", "rllib_observation_keys"]

RLLIB_KEYS: dict[str, str] = {"observation": "observations"}


def _forward(name: str) -> property:
    """A property that reads and writes the inner env's ``name`` (``BaseWrapper.__getattr__`` without its cost)."""

    def get(self: BaseWrapper) -> Any:
        return getattr(self.env, name)  # before reset: the inner env's clear error

    def set(self: BaseWrapper, value: Any) -> None:
        setattr(self.env, name, value)

    return property(get, set, doc=f"The inner env's ``{name}``.")


class _ForwardingWrapper(BaseWrapper):
    """``BaseWrapper`` with the attributes an agent loop reads as properties (no ``__getattr__`` per read)."""

    agent_selection = _forward("agent_selection")
    agents = _forward("agents")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = _forward("_cumulative_rewards")


class FlatObservationWrapper(_ForwardingWrapper):
    """The observation vector as the observation, the action mask in ``infos[agent]["action_mask"]``.

    ``observation_space(agent)`` is ``Box(-1, 1, (789,), float32)``. ``infos``
    holds new dicts after every ``step`` and ``reset`` (a library may pop the mask out).
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._spaces = {agent: env.observation_space(agent)["observation"] for agent in env.possible_agents}
        self._infos: dict[str, dict[str, Any]] | None = None  # this step's infos, once read
        self._acting: tuple[str, dict[str, Any]] | None = None  # this step's info of the agent to act, once read
        self._num_actions = env.action_space(env.possible_agents[0]).n

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """As the inner ``reset``."""
        self._infos = self._acting = None
        self.env.reset(seed=seed, options=options)

    def step(self, action: int | None) -> None:
        """As the inner ``step``."""
        self._infos = self._acting = None
        self.env.step(action)

    def observation_space(self, agent: str) -> spaces.Space:
        """The inner env's ``observation`` Box."""
        try:
            return self._spaces[agent]
        except (KeyError, TypeError):
            return self.env.observation_space(agent)["observation"]  # the inner env's clear error

    def observe(self, agent: str) -> np.ndarray:
        """The observation vector (float32 (789,), a fresh array)."""
        return self.env.observe(agent)["observation"]

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """The inner infos, each with ``"action_mask"`` (int8 (56,)) added; new dicts after every step and reset.

        Built once per step, when first read, and only what is read: only the agent to act can have a legal
        action, so only its mask is computed (the info ``last()`` returned, if it was called); every other
        agent's is all 0 (as ``action_mask(agent)`` gives).
        """
        if self._infos is None:
            env = self.env
            selected = env.agent_selection
            size = self._num_actions
            infos = {}
            for agent, info in env.infos.items():
                if agent == selected:
                    infos[agent] = self._acting_info(agent, info, None)
                else:
                    infos[agent] = {**info, "action_mask": np.zeros(size, np.int8)}
            self._infos = infos
        return self._infos

    def _acting_info(self, agent: str, info: dict[str, Any], mask: np.ndarray | None) -> dict[str, Any]:
        """The info of the agent to act, built once per step (``mask``: its mask, if at hand already)."""
        acting = self._acting
        if acting is None or acting[0] != agent:
            mask = self.env.unwrapped.action_mask(agent) if mask is None else mask
            acting = self._acting = (agent, {**info, "action_mask": mask})
        return acting[1]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As ``AECEnv.last``, with the flat observation and the mask in the info (the other agents' infos are
        built only if ``infos`` is read)."""
        env = self.env
        agent = env.agent_selection
        obs, reward, terminated, truncated, info = env.last(observe)
        if self._infos is not None:
            info = self._infos[agent]
        else:
            info = self._acting_info(agent, info, obs["action_mask"] if observe else None)
        return (obs["observation"] if observe else None), reward, terminated, truncated, info


class ObservationKeysWrapper(_ForwardingWrapper):
    """The Dict observation with keys renamed by ``keys`` (default ``{"observation": "observations"}``).

    Keys not named in ``keys`` keep their name; ``keys`` must name existing
    keys and must not map two keys to one name.
    """

    def __init__(self, env: AECEnv, keys: Mapping[str, str] | None = None) -> None:
        super().__init__(env)
        keys = dict(RLLIB_KEYS if keys is None else keys)
        inner = env.observation_space(env.possible_agents[0])
        unknown = sorted(set(keys) - set(inner.spaces))
        if unknown:
            raise ValueError(f"cannot rename observation key(s) {unknown}: the keys are {sorted(inner.spaces)}")
        names = [keys.get(k, k) for k in inner.spaces]
        if len(set(names)) != len(names):
            raise ValueError(f"renaming {keys} would give two observation entries one name: {names}")
        self._keys = keys
        self._spaces = {
            agent: spaces.Dict({keys.get(k, k): s for k, s in env.observation_space(agent).spaces.items()})
            for agent in env.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        """The inner Dict space with renamed keys."""
        try:
            return self._spaces[agent]
        except (KeyError, TypeError):
            return self.env.observation_space(agent)  # the inner env's clear error

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The inner observation with renamed keys."""
        keys = self._keys
        return {keys.get(k, k): v for k, v in self.env.observe(agent).items()}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As ``AECEnv.last``, with renamed observation keys."""
        obs, reward, terminated, truncated, info = self.env.last(observe)
        if observe:
            keys = self._keys
            obs = {keys.get(k, k): v for k, v in obs.items()}
        return obs, reward, terminated, truncated, info


def mask_in_info(env: AECEnv) -> FlatObservationWrapper:
    """``FlatObservationWrapper(env)``: a Box observation, the mask in ``infos[agent]["action_mask"]``."""
    return FlatObservationWrapper(env)


def rllib_observation_keys(env: AECEnv) -> ObservationKeysWrapper:
    """``ObservationKeysWrapper(env)``: ``{"observations", "action_mask"}``, as RLlib's masking module reads."""
    return ObservationKeysWrapper(env, RLLIB_KEYS)
