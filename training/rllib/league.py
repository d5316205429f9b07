"""The league for RLlib self-play: opponents played inside the environment, and their figures.

:class:`LeagueEnv` is :class:`sm_env.envs.rllib_env.TurnBasedEnv` where, in each
episode, one seat (drawn uniformly) is always the learner and each of the two
other seats is drawn from ``league["mix"]`` (weights):

- ``"self"``: the live learner plays that seat too (plain self-play: it is an
  RLlib agent like the first);
- ``"snapshots"``: a frozen copy of the learner, drawn uniformly from the pool
  (``self`` while the pool is empty);
- any other name: a built-in agent spec (``heuristic``, ``random``,
  ``pimc:samples=8`` ...), see :func:`agents.make_agent`.

Opponent seats act inside :meth:`LeagueEnv.step` and never appear in what
RLlib sees; the rewards the learner seats earn meanwhile are summed into the
step that RLlib sees next. Frozen copies are :class:`agents.players.rllib_agent.RLlibAgent`
objects built from module states sent by the trainer
(:func:`add_snapshot_on_runner`).

Warm-up (:meth:`LeagueEnv.warm_up`): the first LeagueEnv of a process plays one hand on the compiled engine
at once, its baseline opponents acting in turn, so that the numba kernels of the env and of the opponents
(pimc's search) are compiled, or loaded from their cache, while RLlib builds its env runners (it waits for
them without a timeout), not during the first ``sample()``: on a fresh node, where shipped code has no kernel
cache yet, the compilation outlasted RLlib's sample timeout and the first iteration sampled nothing.

Figures (:func:`collect_stats_on_runner`): for every learner seat of every
finished hand, its balance by role and whether it made its quota; the trainer
logs them as ``rollout/balance_<role>`` and ``rollout/quota_rate``, the SB3
trainer's names.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np

from agents import Agent, act, make_agent
from sm_env.core.game import ROLE_NAMES
from sm_env.core.knowledge import player_view
from sm_env.envs.aec import AGENTS, raw_env
from sm_env.envs.rllib_env import ENV_KEYS, TurnBasedEnv

SELF, SNAPSHOTS = "self", "snapshots"
WARM_UP_DECISIONS = 400  # at most, in the warm-up hand (a hand has fewer)
_warmed: set[tuple[str, tuple[str, ...]]] = set()  # (env settings, baseline specs) this process has warmed up


class LeagueEnv(TurnBasedEnv):
    """TurnBasedEnv with league opponents (module docstring). ``config["league"]``: mix, seed."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        league = dict(config.pop("league", None) or {})
        super().__init__(config)
        mix = dict(league.get("mix") or {SELF: 1.0})
        for name in mix:
            if name not in (SELF, SNAPSHOTS):
                make_agent(name)  # a clear error now for a bad spec
        self.mix_names = list(mix)
        self.mix_weights = [float(w) for w in mix.values()]
        self.snapshots: dict[str, Agent] = {}
        self._rng = random.Random(league.get("seed", 0))
        self._agents: dict[str, Agent] = {}
        self._opponents: dict[str, Agent] = {}  # AEC agent -> agent playing it this episode
        self.stats = _new_stats()
        key = (repr(sorted(config.items(), key=str)), tuple(n for n in self.mix_names if n not in (SELF, SNAPSHOTS)))
        if key not in _warmed:
            self.warm_up(config, list(key[1]))
            _warmed.add(key)

    def warm_up(self, settings: dict[str, Any], specs: list[str]) -> None:
        """Play one hand of ``settings`` (the env's rules, episode, ...) on the compiled engine, compiling it in
        the foreground if numba's cache lacks it, the agents of ``specs`` acting in turn (random legal moves
        without any): every kernel a sample needs has then run in this process (module docstring). Touches
        nothing of this env: the run's episodes are the same with or without it."""
        game_env = raw_env(**{k: v for k, v in settings.items() if k in ENV_KEYS}, compiled=True)
        agents = [make_agent(spec, seed=0) for spec in specs]
        rng = random.Random(0)
        game_env.reset(seed=0)
        hand = game_env.game.hand_number
        for turn in range(WARM_UP_DECISIONS):
            seat = game_env.agent_selection
            over = any(game_env.terminations.values()) or any(game_env.truncations.values())
            if over or game_env.game.hand_number != hand:
                break
            if agents:
                action = act(agents[turn % len(agents)], player_view(game_env.game, AGENTS.index(seat)))
            else:
                action = int(rng.choice(np.flatnonzero(game_env.observe(seat)["action_mask"])))
            game_env.step(int(action))
        game_env.close()

    # ------------------------------------------------------------------ league

    def _baseline(self, spec: str, seat: str) -> Agent:
        key = f"{spec}@{seat}"
        if key not in self._agents:
            self._agents[key] = make_agent(spec, seed=self._rng.getrandbits(32))
        return self._agents[key]

    def _draw_opponents(self) -> None:
        learner = self._rng.choice(AGENTS)
        self._opponents = {}
        for seat in AGENTS:
            if seat == learner:
                continue
            kind = self._rng.choices(self.mix_names, self.mix_weights)[0]
            if kind == SNAPSHOTS and self.snapshots:
                agent = self.snapshots[self._rng.choice(sorted(self.snapshots))]
            elif kind in (SELF, SNAPSHOTS):
                continue
            else:
                agent = self._baseline(kind, seat)
            agent.reset(self._rng.getrandbits(32))
            self._opponents[seat] = agent

    def _learners(self) -> list[str]:
        return [s for s in AGENTS if s not in self._opponents]

    # ------------------------------------------------------------------ API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """A new episode with newly drawn opponents; their first moves are played before RLlib sees it."""
        if seed is not None:
            self._rng = random.Random(f"league:{seed}")
        obs, infos = super().reset(seed=seed if seed is not None else self._rng.getrandbits(63), options=options)
        self._draw_opponents()
        result = self._play_opponents((obs, {}, {"__all__": False}, {"__all__": False}, infos))
        return result[0], result[4]

    def step(self, action_dict: dict[str, Any]):
        """The learner's action, then every opponent move until a learner is to act or the episode ends."""
        return self._play_opponents(super().step(action_dict))

    def _play_opponents(self, result: tuple) -> tuple:
        obs, rewards, terminated, truncated, infos = result
        rewards = dict(rewards)
        hand = self.aec.game.hand_number
        while not (terminated["__all__"] or truncated["__all__"]):
            seat = self.aec.agent_selection
            agent = self._opponents.get(seat)
            if agent is None:
                break
            action = act(agent, player_view(self.aec.game, AGENTS.index(seat)))
            obs, more, terminated, truncated, infos = super().step({self._to_id[seat]: action})
            for name, value in more.items():
                rewards[name] = rewards.get(name, 0.0) + value
        if self.aec.game.hand_number != hand or terminated["__all__"] or truncated["__all__"]:
            self._count_hands(hand)
        keep = {self._to_id[s] for s in self._learners()}
        ends = ("__all__",)
        return (
            {k: v for k, v in obs.items() if k in keep},
            {k: v for k, v in rewards.items() if k in keep},
            {k: v for k, v in terminated.items() if k in keep or k in ends},
            {k: v for k, v in truncated.items() if k in keep or k in ends},
            {k: v for k, v in infos.items() if k in keep},
        )

    def _count_hands(self, since: int) -> None:
        """Add the learner seats' balances of the hands finished since hand ``since`` to the stats."""
        game = self.aec.game
        for log in game.history[since - 1 :]:
            if log.balances is None:
                continue
            for seat_name in self._learners():
                seat = AGENTS.index(seat_name)
                role = (seat - log.dealer) % 3
                self.stats["sums"][role] += log.balances[seat]
                self.stats["counts"][role] += 1
                self.stats["made"] += log.balances[seat] >= 0


def _new_stats() -> dict[str, Any]:
    return {"sums": [0.0, 0.0, 0.0], "counts": [0, 0, 0], "made": 0}


# ---------------------------------------------------------------------- on env runners (through foreach_env_runner)


def league_envs(env_runner: Any) -> list[LeagueEnv]:
    """The LeagueEnv instances of an RLlib env runner."""
    vec = getattr(env_runner, "env", None)
    if vec is None:
        return []
    vec = getattr(vec, "unwrapped", vec)
    envs = getattr(vec, "envs", [vec])
    return [e.unwrapped for e in envs if isinstance(getattr(e, "unwrapped", e), LeagueEnv)]


def add_snapshot_on_runner(env_runner: Any, name: str, states: dict[str, Any], keep: int) -> int:
    """Add a frozen copy (module id -> module state) to every LeagueEnv of this runner; the pool size."""
    from agents.players.rllib_agent import RLlibAgent

    modules = {}
    for module_id, state in states.items():
        module = copy.deepcopy(env_runner.module[module_id])
        module.set_state(state)
        module.eval()
        modules[module_id] = module
    agent = RLlibAgent.from_modules(modules, name=name)
    envs = league_envs(env_runner)
    for env in envs:
        env.snapshots[name] = agent
        while len(env.snapshots) > keep:
            env.snapshots.pop(min(env.snapshots, key=_snapshot_order))
    return len(envs[0].snapshots) if envs else 0


def _snapshot_order(name: str) -> int:
    return int(name.rsplit("_", 1)[-1])


def collect_stats_on_runner(env_runner: Any) -> dict[str, Any]:
    """The league figures of this runner's envs since the last call (then reset)."""
    total = _new_stats()
    for env in league_envs(env_runner):
        for i in range(3):
            total["sums"][i] += env.stats["sums"][i]
            total["counts"][i] += env.stats["counts"][i]
        total["made"] += env.stats["made"]
        env.stats = _new_stats()
    return total


def rollout_figures(parts: list[dict[str, Any]]) -> dict[str, float]:
    """``rollout/balance_<role>`` and ``rollout/quota_rate`` from the runners' figures."""
    sums, counts, made = [0.0] * 3, [0] * 3, 0
    for part in parts:
        for i in range(3):
            sums[i] += part["sums"][i]
            counts[i] += part["counts"][i]
        made += part["made"]
    out = {f"rollout/balance_{ROLE_NAMES[i]}": sums[i] / counts[i] for i in range(3) if counts[i]}
    if sum(counts):
        out["rollout/quota_rate"] = made / sum(counts)
    return out
