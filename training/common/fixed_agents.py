"""A fixed agent as a batched opponent of the vector trainer: the same moves as ``agents.make_agent(spec)``.

A best response (``sergeant-major exploit``, :mod:`training.vector.exploit`) is trained against an agent as
that agent plays, so each adapter plays exactly what the agent's ``act`` would play on the same position:

- ``trained``, ``ppo:PATH`` (:class:`PolicyOpponent`): the policy's network on a batch of observations, the
  most probable legal action (``PPOAgent``'s default, ``deterministic=True``). The batch's matrix products
  may round the last bit of a logit differently from one row's numpy product: two logits within that
  rounding of each other are the only place the two can differ (none in the positions of the test);
- ``heuristic`` (:class:`ViewOpponent`): the Python :class:`~agents.players.heuristic.HeuristicAgent` itself, on the
  :class:`~sm_env.core.knowledge.PlayerView` of its seat, from a :class:`Game` kept in step with each slot of
  the :class:`VectorGame` (``VectorGame.actions_played``: each slot's game is re-played once, then only the
  new actions are applied). Exact by construction, and slower: a Python decision per opponent move
  (``docs/results/exploitability.md`` gives the training speed);
- ``random`` (:class:`RandomOpponent`): uniform over the legal actions (compiled, a seeded stream per slot):
  the same distribution as ``RandomAgent``, not the same draws.

Anything else (pimc, ismcts: a search per decision; human; rllib; a ``mix`` of agents, played only through
``act``) is refused by :func:`fixed_opponent` with a
:class:`FixedAgentError` naming what is allowed. Every adapter is ``act(games, rows, masks, observations) ->
actions``: the action of the player to act in each slot of ``rows`` (int8 masks and float32 observations of
those rows, as the trainer has them).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from agents import AgentSpecError, act, make_opponent
from agents.mix import MixAgent
from agents.players.base import Agent
from agents.players.heuristic import HeuristicAgent
from agents.players.ppo_agent import PPOAgent
from agents.players.random_agent import RandomAgent
from sm_env.compiled.batch import VectorGame
from sm_env.compiled.kernels import random_legal
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet

ALLOWED = ("heuristic", "trained", "ppo:PATH", "random")
"""The agent specs a best response can be trained against."""


class FixedAgentError(ValueError):
    """An agent spec that cannot be a batched opponent (unknown, or not one of :data:`ALLOWED`)."""


class FixedOpponent(Protocol):
    """Plays the slots ``rows`` of ``games``: one action each, for the seat to act there."""

    def act(self, games: VectorGame, rows: np.ndarray, masks: np.ndarray, observations: np.ndarray) -> np.ndarray:
        """int64 [len(rows)]: the legal action chosen in each slot of ``rows``."""


class PolicyOpponent:
    """A policy file played as :class:`~agents.players.ppo_agent.PPOAgent` plays it: argmax over the legal actions.

    The layers of :meth:`NumpyPolicy.logits <agents.players.ppo_agent.NumpyPolicy.logits>` (float32, the same
    weights and activation), computed with torch on the trainer's threads: numpy's OpenBLAS, left to its own
    threads on a busy machine, took 30 times longer for the same product (``docs/results/exploitability.md``)."""

    def __init__(self, agent: PPOAgent) -> None:
        self.agent, policy = agent, agent.policy
        self.layers = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in [*policy.hidden, policy.head]]
        self.activation = torch.tanh if policy.activation == "tanh" else torch.relu

    def act(self, games: VectorGame, rows: np.ndarray, masks: np.ndarray, observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(observations, dtype=np.float32))
            for k, (w, b) in enumerate(self.layers):
                x = x @ w + b
                if k < len(self.layers) - 1:
                    x = self.activation(x)
        logits = x.numpy().astype(np.float64)
        logits[masks == 0] = -np.inf
        return np.argmax(logits, axis=1).astype(np.int64)


class ViewOpponent:
    """A Python agent (one instance, no state kept between decisions: the heuristic) deciding on the
    :class:`PlayerView` of the seat to act, from its own :class:`Game` of each slot."""

    def __init__(self, agent: Agent, num_games: int) -> None:
        self.agent = agent
        self.games: list[Game | None] = [None] * num_games
        self.keys = np.full(num_games, -1, dtype=object)  # each slot's game key (VectorGame.actions_played)
        self.applied = np.zeros(num_games, dtype=np.int64)  # actions applied to self.games[slot]

    def game_of(self, games: VectorGame, slot: int) -> Game:
        """The :class:`Game` of ``slot`` in step with the vector engine (re-played when the slot has a new game)."""
        key, actions = games.actions_played(slot)
        game, done = self.games[slot], int(self.applied[slot])
        if game is None or self.keys[slot] != key or done > len(actions):
            game, done = games.game(slot), len(actions)
        else:
            for action in actions[done:]:
                game.apply(int(action))
        self.games[slot], self.keys[slot], self.applied[slot] = game, key, len(actions)
        return game

    def act(self, games: VectorGame, rows: np.ndarray, masks: np.ndarray, observations: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), dtype=np.int64)
        for j, slot in enumerate(rows):
            game = self.game_of(games, int(slot))
            out[j] = act(self.agent, player_view(game, game.current_player))
        return out


class RandomOpponent:
    """Uniform legal actions, a xorshift stream per slot in ``state`` (uint64 [num_games], the trainer's: it is
    saved in its checkpoints)."""

    def __init__(self, state: np.ndarray) -> None:
        self.state = state

    def act(self, games: VectorGame, rows: np.ndarray, masks: np.ndarray, observations: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), dtype=np.int64)
        state = self.state[rows]
        random_legal(np.ascontiguousarray(masks), state, out)
        self.state[rows] = state
        return out


def check_fixed_agent(spec: str, rules: RuleSet) -> Agent:
    """The agent of ``spec`` if a best response can be trained against it under ``rules``; else a
    :class:`FixedAgentError` in one line naming what is allowed."""
    try:
        agent = make_opponent(spec)
    except AgentSpecError as err:
        raise FixedAgentError(f"{err} (a best response is trained against {', '.join(ALLOWED)})") from None
    if not isinstance(agent, (PPOAgent, HeuristicAgent, RandomAgent)):
        why = (
            "a mix is played one decision at a time by the evaluator, not here"
            if isinstance(agent, MixAgent)
            else "a search agent decides too slowly to train against"
        )
        raise FixedAgentError(f"agent {spec!r} cannot be a batched opponent ({why}); allowed: {', '.join(ALLOWED)}")
    try:
        agent.check_rules(rules)
    except ValueError as err:
        raise FixedAgentError(f"agent {spec!r}: {err}") from None
    return agent


def fixed_opponent(spec: str, rules: RuleSet, num_games: int, random_state: np.ndarray) -> FixedOpponent:
    """The batched adapter of ``spec`` (module docstring) for ``num_games`` slots; ``random_state`` (uint64
    [num_games]) seeds ``random``."""
    agent = check_fixed_agent(spec, rules)
    if isinstance(agent, PPOAgent):
        return PolicyOpponent(agent)
    if isinstance(agent, RandomAgent):
        return RandomOpponent(random_state)
    return ViewOpponent(agent, num_games)
