"""One deal of the duplicate evaluation, played in every seating (what every worker runs).

:func:`training.evaluation.evaluate.evaluate` plays deals ``0 .. deals-1`` in this process, in a pool of
worker processes, or as Ray tasks (:mod:`training.evaluation.ray_tasks`); each worker is set up once by
:func:`init_worker` with a :class:`DealConfig` and then plays deals by index (:func:`play_deal`), with
its own agents built from the specs. Every random choice is seeded from the config's seed and the deal
index (:func:`derive_seed`), so the results do not depend on where or in which order the deals are played.

Seatings (:func:`schedule`): three (four) distinct agents in every permutation of the seats, or agent 0
against copies of agent 1 in every rotation.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents import Agent, act, make_agent
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet


def schedule(n_agents: int, players: int = 3) -> list[tuple[int, ...]]:
    """Seatings as agent index by seat: every permutation of ``players`` distinct agents (6 for three, 24 for
    four), or the ``players`` rotations of agent 0 against copies of agent 1."""
    if n_agents == players:
        return list(itertools.permutations(range(players)))
    if n_agents == 2:
        return [tuple(0 if seat == k else 1 for seat in range(players)) for k in range(players)]
    raise ValueError(f"duplicate evaluation of {players} players needs 2 or {players} agents, got {n_agents}")


def derive_seed(*keys: int) -> int:
    """A 32-bit seed derived from ``keys`` (each taken modulo 2**32); the same keys give the same seed."""
    return int(np.random.SeedSequence([k & 0xFFFFFFFF for k in keys]).generate_state(1)[0])


def deal_seed(seed: int, index: int) -> int:
    """The game seed of deal ``index`` (the same in every seating)."""
    return derive_seed(seed, index, 0x5EED)


@dataclass(frozen=True)
class DealConfig:
    """What every worker needs to play deals: agent specs, scoring mode, base seed, rules and table setup."""

    specs: tuple[str, ...]
    mode: str
    seed: int
    rules: Any
    dealer: int
    start_balances: tuple[int, ...] | None
    max_hands: int


_STATE: dict[str, Any] = {}


def init_worker(config: DealConfig) -> None:
    """Set up this process (or Ray worker) to play deals of ``config`` with fresh agents."""
    _STATE["config"] = config
    _STATE["agents"] = {}


def _agent(index: int, copy: int) -> Agent:
    agents: dict[tuple[int, int], Agent] = _STATE["agents"]
    key = (index, copy)
    if key not in agents:
        agents[key] = make_agent(_STATE["config"].specs[index])
    return agents[key]


def play_deal_of(config: DealConfig, index: int) -> dict[str, Any]:
    """:func:`play_deal` of ``config``, setting this process up for it first if it was set up for another
    (so that one pool of workers can play the deals of several tables, one table after another)."""
    if _STATE.get("config") != config:
        init_worker(config)
    return play_deal(index)


def play_deal(index: int) -> dict[str, Any]:
    """Play one deal in every seating; plain data out (for pickling)."""
    config: DealConfig = _STATE["config"]
    seed = deal_seed(config.seed, index)
    seatings = []
    n = len(config.specs)
    seconds = [0.0] * n
    decisions = [0] * n
    for k, seating in enumerate(schedule(n, RuleSet.from_any(config.rules).num_players)):
        copies: dict[int, int] = {}
        seat_agents = []
        for seat, who in enumerate(seating):
            agent = _agent(who, copies.get(who, 0))
            copies[who] = copies.get(who, 0) + 1
            agent.reset(derive_seed(config.seed, index, k, seat))
            seat_agents.append(agent)
        if config.mode == "hand":
            game = Game(
                config.rules, seed=seed, first_dealer=config.dealer, max_hands=1, start_balances=config.start_balances
            )
        else:
            game = Game(config.rules, seed=seed, max_hands=config.max_hands)
        while True:
            seat = game.current_player
            if seat is None:
                break
            view = player_view(game, seat)
            start = time.perf_counter()
            action = act(seat_agents[seat], view)
            seconds[seating[seat]] += time.perf_counter() - start
            decisions[seating[seat]] += 1
            game.apply(action)
        hands = [  # passed-out deals (auction) have no dealer and no score
            (log.dealer, list(log.tricks_won), list(log.balances)) for log in game.history if log.tricks_won is not None
        ]
        seatings.append(
            {
                "seating": list(seating),
                "hands": hands,
                "first_dealer": game.first_dealer,
                "winners": list(game.winners or []),
                "scores": list(game.scores),
                "truncated": game.truncated,
            }
        )
    return {"index": index, "seatings": seatings, "seconds": seconds, "decisions": decisions}
