"""The policies shipped in ``agents/policies`` and the agent of the spec ``trained``.

:data:`TRAINED_POLICIES` lists the shipped policies ``trained`` may play, by the rule preset each was trained
on (``agents/policies/README.md`` tells how each was made). For a rule set, :func:`trained_policy` picks the
one trained on that preset, else the first whose shape fits it: the same observation size, action count and
number of players (:class:`agents.players.ppo_agent.PolicyShape`; docs/rules.md 10.6, 10.8). So ``standard_v7.pt``,
trained on the standard rules, plays every three-player rule set of 789 observation entries and 56 actions
(the presets of section 9 among them). A rule set that no shipped policy fits is refused in one line naming
the rule sets that have one.

:class:`TrainedAgent` is a :class:`agents.players.ppo_agent.PPOAgent` that starts with the standard rules' policy and
changes to the policy of the rule set it is asked about (:meth:`TrainedAgent.check_rules`, which every host
calls before a game, or the first :meth:`~agents.players.ppo_agent.PPOAgent.act` on a rule set).
"""

from __future__ import annotations

import os
from typing import Any

from sm_env.core.rules import PRESETS, STANDARD, RuleSet

from .ppo_agent import NumpyPolicy, PolicyLoadError, PolicyShape, PPOAgent, load_numpy_policy

POLICY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "policies")  # agents/policies

TRAINED_POLICIES: dict[str, str] = {
    "standard": "standard_v7.pt",
    "calls": "calls_v1.pt",
    "woburn-auction": "woburn-auction_v2.pt",
    "four-5-3-2-2": "four-5-3-2-2_v1.pt",
    "dealer-assigns": "dealer-assigns_v1.pt",
    "9-5-3-one-card": "9-5-3-one-card_v1.pt",
}
"""The policies ``trained`` plays: rule preset it was trained on -> file in :data:`POLICY_DIR` (each file
records the same preset and its shape; a test checks both)."""


def shipped_rules() -> dict[str, list[str]]:
    """For each policy of :data:`TRAINED_POLICIES`, the presets it plays (its file name -> preset names)."""
    return {
        file: [name for name, rules in PRESETS.items() if PolicyShape.of(PRESETS[trained]).fits(rules)]
        for trained, file in TRAINED_POLICIES.items()
    }


def trained_policy(rules: RuleSet | str | dict[str, Any] | None = None) -> str:
    """The path of the shipped policy for ``rules`` (default: the standard rules); a :class:`PolicyLoadError`
    in one line naming the rule sets that have one if there is none."""
    rules = RuleSet.from_any(rules) if rules is not None else STANDARD
    if rules.name in TRAINED_POLICIES:
        return os.path.join(POLICY_DIR, TRAINED_POLICIES[rules.name])
    for trained, file in TRAINED_POLICIES.items():
        if PolicyShape.of(PRESETS[trained]).fits(rules):
            return os.path.join(POLICY_DIR, file)
    have = "; ".join(f"{file}: {', '.join(names)}" for file, names in shipped_rules().items())
    raise PolicyLoadError(
        f"no shipped policy plays the rule set {rules.name!r} ({PolicyShape.of(rules)}); the rule sets with one "
        f"are {have} (train one: agents/policies/README.md)"
    )


class TrainedAgent(PPOAgent):
    """The spec ``trained``: the shipped policy of the rule set being played (see the module docstring)."""

    def __init__(self, seed: int | None = None, deterministic: bool = True) -> None:
        super().__init__(trained_policy(), seed=seed, deterministic=deterministic)
        self._loaded: dict[str, tuple[NumpyPolicy, dict[str, Any]]] = {self.path: (self.policy, self.meta)}

    def check_rules(self, rules: RuleSet) -> None:
        """Change to the shipped policy for ``rules``; a PolicyLoadError naming the rule sets that have one if
        no shipped policy plays them."""
        path = trained_policy(rules)  # the hosts name the agent ("agent 'trained': ...")
        if path != self.path:
            if path not in self._loaded:
                self._loaded[path] = load_numpy_policy(path)
            self.load(self._loaded[path], path)
        super().check_rules(rules)
