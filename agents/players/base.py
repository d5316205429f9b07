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

import math
import random
from dataclasses import dataclass
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


FLAG_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
"""The words a yes/no spec parameter may be (any case)."""


def flag(text: str) -> bool:
    """A spec parameter as a yes/no: ``1``, ``true``, ``yes``, ``on`` or ``0``, ``false``, ``no``, ``off`` (any
    case); ValueError for anything else."""
    word = text.strip().lower()
    if word not in FLAG_WORDS:
        raise ValueError(f"expected 0 or 1 (or yes/no, true/false, on/off), got {text!r}")
    return FLAG_WORDS[word]


@dataclass(frozen=True)
class Param:
    """One spec parameter: its type (``int``, ``float``, ``bool``, a yes/no :func:`flag`, or ``str``, one word of
    ``choices``, any case, or without ``choices`` a file path, kept as written) and, for a number, the range
    allowed: ``low`` to ``high`` inclusive, ``low`` itself excluded when ``low_open``. A float must be finite
    (``nan`` and ``inf`` are refused)."""

    type: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[str, ...] = ()

    def allowed(self) -> str:
        """The values allowed, in words (for error messages and docs)."""
        if self.type is bool:
            return "0 or 1 (or yes/no, true/false, on/off)"
        if self.type is str and not self.choices:
            return "a file path"
        if self.type is str:
            return "one of " + ", ".join(self.choices)
        kind = "a whole number" if self.type is int else "a number"
        if self.low_open:
            return f"{kind} above {self.low:g} and at most {self.high:g}"
        return f"{kind} from {self.low:g} to {self.high:g}"

    def parse(self, text: str) -> Any:
        """The value of ``text``, or ValueError naming the values allowed."""
        if self.type is bool:
            return flag(text)
        if self.type is str and not self.choices:  # a path: kept as written
            if not text.strip():
                raise ValueError(self.allowed())
            return text.strip()
        if self.type is str:
            word = text.strip().lower()
            if word not in self.choices:
                raise ValueError(self.allowed())
            return word
        try:
            value = self.type(text.strip())
        except ValueError:
            raise ValueError(self.allowed()) from None
        if not math.isfinite(value) or value > self.high or value < self.low or (self.low_open and value == self.low):
            raise ValueError(self.allowed())
        return value


def typed_params(agent: str, params: dict[str, str], table: dict[str, Param]) -> dict[str, Any]:
    """Spec parameters (text) checked and converted by ``table`` (name -> :class:`Param`); ValueError naming
    the agent and the unknown parameter (with the known ones) or the bad one (with the values it allows)."""
    unknown = sorted(set(params) - set(table))
    if unknown:
        raise ValueError(f"{agent}: unknown parameter(s) {unknown}; known: {sorted(table)}")
    values = {}
    for name, text in params.items():
        try:
            values[name] = table[name].parse(text)
        except ValueError:
            raise ValueError(f"{agent}: parameter {name!r} must be {table[name].allowed()}, got {text!r}") from None
    return values
