"""Advice on one decision: for every legal action of the seat to act, the shipped policy's probability and
pimc's value, from that seat's :class:`~sm_env.core.knowledge.PlayerView` alone (never a ``Game``).

:func:`advise` answers with an :class:`Advice`:

- ``search``: which search scored the actions, with its samples and seed (:func:`search_settings`), so that
  two analyses say whether they are comparable;
- per legal action (in action-id order) a :class:`Move`: its text, ``probability`` (the shipped policy for the
  rule set, :func:`agents.players.trained.trained_policy`; None for every action when no shipped policy plays the rule
  set or torch is missing to load it: ``policy_note`` says which) and ``value`` (the search's mean balance of the
  seat in the hand after the action, over ``samples`` deals consistent with the view: tricks minus quota, the units
  of docs/rules.md; None when pimc does not search this phase or the action is the only one: ``search_note``).

The search (``searcher``): ``"pimc"`` (the default; heuristic rollouts, about a millisecond a decision at 20
deals: what analyses use, so that they stay cheap and comparable) or ``"search"`` (the agent spec ``search``:
deals drawn by the belief network, rollouts by the shipped policy, :meth:`agents.search.pimc.PimcAgent.evaluate`'s
values without the policy's prior; tens of milliseconds a decision, the web's hints), which falls back to pimc,
saying so in ``search_note``, on a rule set it does not play (``search`` reads the standard layout of three players).

pimc searches the play of the tricks, and naming trump (or the call) and the discards once the exchange is
over (:func:`agents.search.pimc.searched_phase` with ``bid``); the exchange, the auction, the quota assignment
and the face-up card get probabilities only.

Deterministic: the same view, samples and seed give the same advice (a fresh pimc agent seeded with
``seed``; every action is scored on the same deals). Cost: ``samples`` deals x legal actions heuristic
rollouts, with ``samples`` capped by pimc's own bound (:data:`agents.AGENT_PARAMS`) or a tighter ``cap``
(the web's).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from sm_env.core.cards import from_mask
from sm_env.core.game import PHASE_NAMES, action_text
from sm_env.core.knowledge import PlayerView
from sm_env.core.rules import RuleSet
from sm_env.observation import encode

from . import AGENT_PARAMS, make_agent
from .players.ppo_agent import NumpyPolicy, PolicyLoadError, load_numpy_policy
from .players.trained import trained_policy
from .search.pimc import PimcAgent, searched_phase

SEARCH = "pimc"
"""The search that scores the actions by default (its rollouts: the heuristic player)."""
SEARCHERS = {"pimc": "heuristic", "search": "policy"}
"""The searches :func:`advise` may score with, and their rollouts."""
DEFAULT_SAMPLES = 20
"""pimc's own default: deals per decision."""
MAX_SAMPLES = int(AGENT_PARAMS["pimc"]["samples"].high or 0)
"""The most deals per decision: pimc's bound (10000)."""
MAX_SEED = 2**128


class AdviceError(ValueError):
    """Advice that cannot be given: bad samples or seed, or a view whose seat is not to act."""


@dataclass(frozen=True)
class Move:
    """One legal action: its id and text, the policy's probability and pimc's value (None where not given)."""

    action: int
    text: str
    probability: float | None
    value: float | None

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "text": self.text, "probability": self.probability, "value": self.value}


@dataclass(frozen=True)
class Advice:
    """The advice of :func:`advise` (see the module docstring)."""

    seat: int
    phase: str
    search: dict[str, Any]
    policy: str | None
    policy_note: str | None
    search_note: str | None
    moves: tuple[Move, ...]

    def value_of(self, action: int) -> float | None:
        """pimc's value of ``action`` (None when not searched)."""
        return next((m.value for m in self.moves if m.action == action), None)

    @property
    def best_value(self) -> float | None:
        """The highest value of a legal action (None when not searched)."""
        values = [m.value for m in self.moves if m.value is not None]
        return max(values) if values else None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: seat, phase, search, policy, policy_note, search_note, moves."""
        return {
            "seat": self.seat,
            "phase": self.phase,
            "search": dict(self.search),
            "policy": self.policy,
            "policy_note": self.policy_note,
            "search_note": self.search_note,
            "moves": [m.to_json() for m in self.moves],
        }


def check_settings(samples: Any, seed: Any, cap: int = MAX_SAMPLES) -> None:
    """AdviceError naming the values allowed unless ``samples`` is a whole number 1-``cap`` and ``seed`` one
    0 <= seed < 2**128 (room for an unseeded game's 128-bit hint seed)."""
    if type(samples) is not int or not 1 <= samples <= min(cap, MAX_SAMPLES):
        raise AdviceError(f"samples must be a whole number from 1 to {min(cap, MAX_SAMPLES)}, got {samples!r:.40}")
    if type(seed) is not int or not 0 <= seed < MAX_SEED:
        raise AdviceError(f"seed must be a whole number 0 <= seed < 2**128, got {seed!r:.40}")


def search_settings(samples: int, seed: int, searcher: str = SEARCH) -> dict[str, Any]:
    """What makes two sets of values comparable: the search, its rollouts, samples per decision, the seed."""
    return {"search": searcher, "rollouts": SEARCHERS[searcher], "samples": samples, "seed": seed, "bid": True}


@functools.lru_cache(maxsize=4)
def _policy(path: str) -> NumpyPolicy:
    return load_numpy_policy(path)[0]


def shipped_policy(rules: RuleSet) -> tuple[NumpyPolicy | None, str | None, str | None]:
    """The shipped policy for ``rules`` (cached), its file name, and None; or None, None and why there is none
    (no shipped policy plays the rule set, or it cannot be loaded here: torch missing)."""
    try:
        path = trained_policy(rules)
        return _policy(path), os.path.basename(path), None
    except PolicyLoadError as err:
        return None, None, f"no policy probabilities: {err}"


def _scorer(searcher: str, rules: RuleSet, samples: int, seed: int) -> tuple[PimcAgent, str | None]:
    """The agent whose values :func:`advise` gives, and None; or pimc and why it stands in for ``search``."""
    if searcher == "search":
        agent = make_agent(f"search:samples={samples}", seed)
        try:
            agent.check_rules(rules)
        except ValueError as err:  # the belief network or the policy cannot read these rules
            return PimcAgent(seed=seed, samples=samples), f"pimc's values: search does not play these rules ({err})"
        assert isinstance(agent, PimcAgent)
        return agent, None
    return PimcAgent(seed=seed, samples=samples), None


def advise(
    view: PlayerView,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    cap: int = MAX_SAMPLES,
    policy: bool = True,
    search: bool = True,
    searcher: str = SEARCH,
) -> Advice:
    """The advice for the seat of ``view`` (which must be to act): see the module docstring.

    ``cap``: the most samples allowed (AdviceError past it); ``policy`` / ``search``: False leaves the
    probabilities / the values out (the analysis of a record needs no probabilities); ``searcher``: which search
    gives the values (:data:`SEARCHERS`)."""
    if searcher not in SEARCHERS:
        raise AdviceError(f"searcher must be one of {', '.join(SEARCHERS)}, got {searcher!r:.40}")
    check_settings(samples, seed, cap)
    legal = from_mask(view.legal)
    if not legal:
        raise AdviceError(f"seat {view.seat} is not to act: no legal action to advise on")
    probabilities: dict[int, float] = {}
    net, name, policy_note = shipped_policy(view.rules) if policy else (None, None, "policy not asked for")
    if net is not None:
        p = net.probabilities(encode(view), view.legal)
        probabilities = {a: float(p[a]) for a in legal}
    values: dict[int, float] = {}
    if not search:
        search_note: str | None = "search not asked for"
    elif len(legal) == 1:
        search_note = "the only legal action: nothing to compare"
    elif not searched_phase(view, bid=True):
        search_note = f"{searcher} does not search the {PHASE_NAMES[view.phase]} (the heuristic decides it)"
    else:
        scorer, search_note = _scorer(searcher, view.rules, samples, seed)
        searcher = SEARCH if search_note else searcher
        values = scorer.evaluate(view, legal)
    moves = tuple(
        Move(a, action_text(a, view.rules), probabilities.get(a), values.get(a) if values else None) for a in legal
    )
    return Advice(
        seat=view.seat,
        phase=PHASE_NAMES[view.phase],
        search=search_settings(samples, seed, searcher),
        policy=name,
        policy_note=policy_note,
        search_note=search_note,
        moves=moves,
    )
