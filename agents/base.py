"""The one agent interface used by evaluation, training opponents and human play.

An agent sees a seat's :class:`~sm_env.core.knowledge.PlayerView` (everything that
seat may know, nothing more) and returns one legal action id: a card 0-51 or a
trump 52-55. Agents that need the observation vector (trained policies) set
``needs_observation = True``; callers then also pass
``{"observation": encode(view), "action_mask": mask}``, and only then, so
that rule-based agents cost nothing extra.

Agents are seeded: ``reset(seed)`` before a game makes every later choice a
function of the seed and the views seen.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from sm_env.core.knowledge import PlayerView
from sm_env.core.rules import RuleSet
from sm_env.observation import action_mask, encode


class Agent:
    """Base class of every agent.

    Attributes:
        name: short label used in tables and records.
        needs_observation: True when :meth:`act` wants the observation dict.
    """

    name: str = "agent"
    needs_observation: bool = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseeds the agent's random generator."""
        self.rng = random.Random(seed)

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        """A legal action id for the seat of ``view`` (which is to act)."""
        raise NotImplementedError

    def check_rules(self, rules: RuleSet) -> None:
        """Raise a ValueError (one line naming the rule set) if this agent cannot play ``rules``;
        the default agent plays any rule set."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def observation_for(view: PlayerView) -> dict[str, np.ndarray]:
    """The observation dict of the environment for a view (vector + action mask)."""
    return {"observation": encode(view), "action_mask": action_mask(view.legal, view.rules.num_actions)}


def act(agent: Agent, view: PlayerView) -> int:
    """Ask ``agent`` for an action, building the observation only if it needs one."""
    if agent.needs_observation:
        return agent.act(view, observation_for(view))
    return agent.act(view)


def flag(text: str) -> bool:
    """A spec parameter as a yes/no: ``0``, ``false``, ``no`` and ``off`` are no, anything else yes."""
    return text.strip().lower() not in ("0", "false", "no", "off")


def typed_params(agent: str, params: dict[str, str], types: dict[str, Callable[[str], Any]], example: str) -> dict:
    """Spec parameters (text) converted by ``types`` (name -> converter); ValueError naming the agent, the
    known parameters, or the bad value with an ``example`` of good ones."""
    unknown = sorted(set(params) - set(types))
    if unknown:
        raise ValueError(f"{agent}: unknown parameter(s) {unknown}; known: {sorted(types)}")
    try:
        return {name: types[name](value) for name, value in params.items()}
    except ValueError as err:
        raise ValueError(f"{agent}: bad parameter value ({err}); e.g. {example}") from None
