"""The agent ``mix``: each decision taken by one of several agents, according to its decision type.

Spec (:func:`agents.make_agent`)::

    mix:base=SPEC;TYPE=SPEC;TYPE=SPEC...

for example ``mix:base=trained;play=pimc`` (the shipped policy, except the play of the cards, which pimc
decides) or ``mix:base=heuristic;trump=pimc:samples=40,bid=1;discard=pimc:samples=40,bid=1``. Parts are
``NAME=SPEC`` separated by ``;``: ``base`` (required) takes every decision whose type is not named, and each
decision type (:data:`DECISION_TYPES`, the engine's phase names, ``sm_env.core.game.PHASE_NAMES``) may be
given to another agent:

============  ==========================================================================================
``exchange``  the cards sent in the exchange (docs/rules.md 4; the returns are not a choice)
``trump``     naming trump, or under ``calls`` the call (a suit, no trump or misere; docs/rules.md 10.3)
``discard``   the dealer's discards (with ``kitty_trick`` the kitty trick's cards too)
``play``      the play of the cards to the tricks
``assign``    the dealer's quota assignment (``dealer_assigns_quotas``, docs/rules.md 10.7)
``take``      taking the face-up card, with the card put out, or declining (``one_card_kitty``, 10.5)
``bid``       the bids and passes of the first-round auction (``auction``, 10.2)
============  ==========================================================================================

Why this form: specs already use ``kind:rest``, ``name=value,name=value`` inside the rest (so a part
cannot be split on commas: ``pimc:samples=16,bid=1`` is one part) and file paths with ``/`` and ``.``;
``;`` appears in none of them. Each part is split at its first ``=``, so a part's spec is written exactly
as it would be on its own (``play=ppo:runs/x/policy.pt``). A path holding ``;`` cannot be used inside a
mix. On a shell command line, quote the spec (``--agents 'mix:base=trained;play=pimc' trained``).

Checked where the spec is read (:func:`split_mix`, then ``agents._mix``), each an
:class:`~agents.AgentSpecError` in one line: every part's spec is built by ``make_agent`` (so its own error
shows, prefixed by the part); an unknown name (the allowed ones are listed), a name given twice, a part
without ``=`` or without a spec, no ``base``, ``human`` in a part (a mix plays a program's seat), a mix
inside a mix (refused: a part cannot hold ``;`` anyway) and a spec over :data:`MAX_SPEC` characters are
refused. At most one part per name, so at most 8 agents.

Behaviour:

- each part is its own agent instance and is given only the decisions of its type (the base: every
  decision not named), even where two parts have the same spec; so a part that keeps state across a
  hand (a search's tree, a counter) sees only its own decisions, and a policy part is asked only on the
  positions of its type;
- ``needs_observation`` is true if any part needs the observation; a part that needs it gets the
  observation the host passed (built from the view when the host passed none), the others get none;
- ``reset(seed)`` reseeds every part: ``base`` with ``seed`` itself (so ``mix:base=X`` plays exactly as
  ``X``), and the part of decision type NAME with :func:`part_seed` (the first 8 bytes of the SHA-256 of
  ``"mix:SEED:NAME"``, below 2**63): different seeds for different parts, the same for the same seed;
  ``reset(None)`` reseeds every part with None (fresh randomness);
- ``check_rules(rules)`` checks every part (a ValueError naming the part) and refuses a decision type
  that never occurs under ``rules`` (:func:`decision_types`);
- ``name`` reads ``mix(BASE, TYPE=PART, ...)`` with the parts' specs, e.g. ``mix(trained, play=pimc)`` (the
  evaluator's tables label agents by their whole spec).

Where it plays: everywhere an agent is played through :meth:`~agents.players.base.Agent.act` on a
:class:`~sm_env.core.knowledge.PlayerView`: the duplicate evaluation (``sergeant-major eval``,
``tournament``, ``python -m training.evaluation.strength --swap``), ``play``, and as an SB3 training opponent.
The batched opponents of ``sergeant-major exploit`` (``training/common/fixed_agents.py``) refuse it in one line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from sm_env.core.game import PHASE_NAMES, hand_order
from sm_env.core.knowledge import PlayerView
from sm_env.core.rules import RuleSet

from .players.base import Agent, observation_for

DECISION_TYPES = tuple(name for name in PHASE_NAMES if name != "over")
"""The decision types a mix may route, by the engine's phase names: exchange, trump, discard, play, assign,
take, bid."""
BASE = "base"
PART_NAMES = (BASE, *DECISION_TYPES)
"""The names a part of a mix spec may have."""
MAX_SPEC = 1000
"""The longest mix spec accepted (characters)."""
SEPARATOR = ";"

_PHASE = {name: index for index, name in enumerate(PHASE_NAMES)}


def split_mix(rest: str) -> dict[str, str]:
    """The parts of a mix spec's rest (after ``mix:``): part name -> agent spec, ``base`` first, then the
    decision types in the order given; ValueError in one line for a malformed rest (module docstring). The
    parts' specs are not built here."""
    if len(rest) > MAX_SPEC:
        raise ValueError(f"mix: a mix spec has at most {MAX_SPEC} characters, got {len(rest)}")
    allowed = ", ".join(PART_NAMES)
    parts: dict[str, str] = {}
    for piece in rest.split(SEPARATOR):
        name, eq, spec = piece.partition("=")
        name = name.strip().lower()
        if not eq or not name:
            raise ValueError(
                f"mix: parts are NAME=SPEC separated by ';' (NAME one of {allowed}), got {piece.strip()[:60]!r}"
            )
        if name not in PART_NAMES:
            raise ValueError(f"mix: unknown decision type {name[:40]!r}; allowed: {allowed}")
        if name in parts:
            raise ValueError(f"mix: decision type {name!r} named twice")
        if not spec.strip():
            raise ValueError(f"mix: part {name!r} has no agent spec")
        parts[name] = spec.strip()
    if BASE not in parts:
        raise ValueError("mix: needs base=SPEC, the agent of every decision type not named")
    return {BASE: parts.pop(BASE), **parts}


def decision_types(rules: RuleSet | str | dict[str, Any] | None = None) -> tuple[str, ...]:
    """The decision types that occur in games under ``rules``, in the order they come in a game: ``bid``
    (auction), then the hand's stages (``sm_env.core.game.hand_order``: ``assign``, ``exchange`` unless
    there is never one, ``trump``, ``discard`` where there is a kitty, ``take``), then ``play``."""
    rules = RuleSet.from_any(rules)
    found = ["bid"] if rules.auction else []
    exchanges = not rules.no_exchange and rules.max_exchange != 0
    for stage in hand_order(rules):
        name = "exchange" if stage == "send" else stage
        if name in ("kitty", "return") or (name == "exchange" and not exchanges) or name in found:
            continue
        found.append(name)
    return (*found, "play")


def part_seed(seed: int | None, name: str) -> int | None:
    """The seed of a mix's part ``name`` for the mix's ``seed``: ``seed`` itself for ``base``, else the first
    8 bytes of the SHA-256 of ``"mix:SEED:NAME"`` (below 2**63); None stays None."""
    if seed is None or name == BASE:
        return seed
    digest = hashlib.sha256(f"mix:{int(seed)}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class MixAgent(Agent):
    """Each decision taken by the part of its decision type (the module docstring). ``parts``: part name ->
    agent (``base`` required), ``specs``: part name -> the spec it was built from (for messages)."""

    def __init__(self, parts: Mapping[str, Agent], specs: Mapping[str, str], seed: int | None = None) -> None:
        super().__init__(seed)
        if BASE not in parts:
            raise ValueError("mix: needs a base part")
        unknown = sorted(set(parts) - set(PART_NAMES))
        if unknown:
            raise ValueError(f"mix: unknown decision type(s) {unknown}; allowed: {', '.join(PART_NAMES)}")
        self.parts = dict(parts)
        self.specs = dict(specs)
        self.base = self.parts[BASE]
        self._by_phase = {_PHASE[name]: agent for name, agent in self.parts.items() if name != BASE}
        self.needs_observation = any(agent.needs_observation for agent in self.parts.values())
        label = {name: self.specs.get(name, agent.name) for name, agent in self.parts.items()}
        named = "".join(f", {name}={text}" for name, text in label.items() if name != BASE)
        self.name = f"mix({label[BASE]}{named})"

    def part_for(self, view: PlayerView) -> Agent:
        """The part that takes the decision of ``view``: that of its phase, else the base."""
        return self._by_phase.get(view.phase, self.base)

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        part = self.part_for(view)
        if not part.needs_observation:
            return part.act(view)
        return part.act(view, observation_for(view) if observation is None else observation)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for name, agent in self.parts.items():
            agent.reset(part_seed(seed, name))

    def check_rules(self, rules: RuleSet) -> None:
        """Every part's check (a ValueError naming the part), and no decision type named that ``rules`` never
        asks for."""
        present = decision_types(rules)
        absent = [name for name in self.parts if name != BASE and name not in present]
        if absent:
            raise ValueError(
                f"mix: decision type(s) {', '.join(absent)} never occur under the rule set {rules.name!r} "
                f"(its decision types: {', '.join(present)})"
            )
        for name, agent in self.parts.items():
            try:
                agent.check_rules(rules)
            except ValueError as err:
                raise ValueError(f"mix part {name}={self.specs.get(name, agent.name)!r}: {err}") from None
