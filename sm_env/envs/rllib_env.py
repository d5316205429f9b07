"""RLlib's turn-based ``MultiAgentEnv`` over the AEC environment (needs ``pip install -e ".[rllib]"``).

:class:`TurnBasedEnv` drives :class:`sm_env.envs.aec.raw_env` and speaks RLlib's
new-API-stack multi-agent protocol:

- **Observations** go only to the agent to act (one key per step). When the
  episode ends every agent gets a final observation (its mask all 0).
- **Observation space** per agent: ``Dict(observations=Box(-1, 1, (N,),
  float32), action_mask=Box(0, 1, (56,), int8))``, the AEC env's observation
  with its vector under ``"observations"`` (plural), the key RLlib's masking
  modules read. The sizes come from the AEC env, so every rule variant works.
- **Rewards** are those of the AEC env (``reward="score"``, the default,
  ``"balance"`` or ``"result"``),
  paid in the step they are earned to every agent that earned them, acting or
  not (RLlib adds a reward to an agent without an observation to its next
  step). The agent that receives an observation always gets a reward key
  (0.0 when it earned nothing). Summed over an episode they equal the AEC
  env's cumulative rewards.
- **Ends**: ``terminateds`` / ``truncateds`` hold every agent and ``"__all__"``,
  as the AEC env's terminations and truncations.
- **Infos**: the AEC env's infos (numeric, fixed keys) for the agents
  observed.
- **Critic state** (``critic_state=True``; training only): every agent's infos, with each observation it is
  given, also hold ``"critic_state"``: the cards hidden from it (:meth:`EngineAdapter.full_state`, the layout
  of :meth:`sm_env.compiled.batch.VectorGame.full_state`) for a critic that sees the whole deal
  (``training/rllib/critic_state.py``); beside the observation, never in it, and never read by a policy.
- **Agent names**: ``agent_names="seats"`` (default): ``player_0..2``, the
  absolute seats. ``agent_names="roles"`` (``episode="hand"`` only):
  ``dealer``, ``eldest``, ``middle``, so that a policy mapping can give each
  role its own policy.

``config`` (RLlib's ``env_config``) holds the AEC env's keywords (``rules``,
``episode``, ``max_hands``, ``reward``), ``agent_names`` and ``critic_state``. Illegal actions
raise :class:`sm_env.IllegalEnvActionError` as in the AEC env: use a masking
module (``agents.players.rllib_module.ActionMaskingPPOModule``) and
``disable_env_checking=True`` (RLlib's pre-check samples without the mask).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from sm_env.core.game import ROLE_NAMES

from .aec import AGENTS, raw_env

__all__ = ["AGENT_NAMES", "CRITIC_STATE", "ENV_KEYS", "TurnBasedEnv"]

AGENT_NAMES = ("seats", "roles")
ENV_KEYS = ("rules", "episode", "max_hands", "reward")
OBS_KEY = "observations"
CRITIC_STATE = "critic_state"  # the infos key of the cards hidden from the agent (critic_state=True)
OWN_KEYS = ("agent_names", CRITIC_STATE)


class TurnBasedEnv(MultiAgentEnv):
    """The AEC env as an RLlib ``MultiAgentEnv`` (see the module docstring)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(str(k) for k in config if k not in (*ENV_KEYS, *OWN_KEYS))
        if unknown:
            raise ValueError(f"unknown env_config key(s) {unknown}; the keys are {[*ENV_KEYS, *OWN_KEYS]}")
        self.critic_state = config.pop(CRITIC_STATE, False)
        if not isinstance(self.critic_state, bool):
            raise ValueError(f"critic_state must be true or false, got {self.critic_state!r}")
        names = config.pop("agent_names", "seats")
        if names not in AGENT_NAMES:
            raise ValueError(f"agent_names must be 'seats' or 'roles', got {names!r}")
        self.aec = raw_env(**config)
        if self.aec.rules.num_players != 3:
            raise ValueError(
                f"the RLlib adapter plays three players; {self.aec.rules.name!r} has {self.aec.rules.num_players} "
                f"(docs/rules.md 10.6): use sm_env.env for four"
            )
        if names == "roles" and self.aec.episode != "hand":
            raise ValueError("agent_names='roles' needs episode='hand' (roles change from hand to hand in a game)")
        self.agent_names = names
        ids = tuple(AGENTS) if names == "seats" else tuple(ROLE_NAMES)
        self.agents = self.possible_agents = list(ids)
        inner = self.aec.observation_space(AGENTS[0])
        space = spaces.Dict({OBS_KEY: inner["observation"], "action_mask": inner["action_mask"]})
        self.observation_spaces = dict.fromkeys(ids, space)
        self.action_spaces = {agent: self.aec.action_space(AGENTS[0]) for agent in ids}
        self._to_id: dict[str, str] = dict(zip(AGENTS, ids, strict=True))
        self._to_seat: dict[str, str] = dict(zip(ids, AGENTS, strict=True))

    # ------------------------------------------------------------------ helpers

    def _set_names(self) -> None:
        """Map seats to ids for the episode that just started (roles: by the dealer of hand 1)."""
        if self.agent_names == "roles":
            dealer = self.aec._engine.dealer  # not .game, which would step a Game along from now on
            self._to_id = {AGENTS[(dealer + k) % 3]: ROLE_NAMES[k] for k in range(3)}
            self._to_seat = {name: seat for seat, name in self._to_id.items()}

    def _obs(self, seat_agent: str) -> dict[str, np.ndarray]:
        obs = self.aec.observe(seat_agent)
        return {OBS_KEY: obs["observation"], "action_mask": obs["action_mask"]}

    def _info(self, seat_agent: str) -> dict[str, Any]:
        """The AEC env's infos of ``seat_agent``, with its critic state when ``critic_state`` (module docstring)."""
        info = self.aec.infos[seat_agent]
        if not self.critic_state:
            return info
        return {**info, CRITIC_STATE: self.aec._engine.full_state(AGENTS.index(seat_agent))}

    def seat_of(self, agent_id: str) -> str:
        """The AEC agent (``player_0..2``) that ``agent_id`` names in the current episode."""
        return self._to_seat[agent_id]

    # ------------------------------------------------------------------ API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; the observation and info of the agent to act (``options`` as the AEC env's)."""
        self.aec.reset(seed=seed, options=options)
        self._set_names()
        seat = self.aec.agent_selection
        agent = self._to_id[seat]
        return {agent: self._obs(seat)}, {agent: self._info(seat)}

    def step(self, action_dict: dict[str, Any]):
        """Apply the action of the agent to act; see the module docstring for what comes back."""
        aec = self.aec
        if aec._engine is None:  # not .game: reading it steps a Game along with the kernels from then on
            raise RuntimeError("call reset() before step()")
        if not aec.agents:
            raise RuntimeError("the episode is over: call reset()")
        seat = aec.agent_selection
        agent = self._to_id[seat]
        others = sorted(set(action_dict) - {agent})
        if agent not in action_dict or others:
            raise ValueError(
                f"it is {agent}'s turn: give exactly {{{agent!r}: action}}, got keys {sorted(action_dict)}"
            )
        action = action_dict[agent]
        aec.step(int(action) if isinstance(action, (int, np.integer)) else action)
        rewards = {self._to_id[a]: float(r) for a, r in aec.rewards.items() if r}
        if any(aec.terminations.values()) or any(aec.truncations.values()):
            ids = list(self._to_id.items())
            obs = {name: self._obs(s) for s, name in ids}
            for _, name in ids:
                rewards.setdefault(name, 0.0)
            terminated = {name: bool(aec.terminations[s]) for s, name in ids}
            truncated = {name: bool(aec.truncations[s]) for s, name in ids}
            terminated["__all__"] = all(terminated.values())
            truncated["__all__"] = all(truncated.values())
            return obs, rewards, terminated, truncated, {name: self._info(s) for s, name in ids}
        nxt = aec.agent_selection
        name = self._to_id[nxt]
        rewards.setdefault(name, 0.0)
        return {name: self._obs(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {name: self._info(nxt)}

    def render(self) -> None:
        """Nothing: use the AEC env (``self.aec``) with a render mode."""
        return None
