"""Agents: one interface (:class:`~agents.players.base.Agent`) and a registry of specs.

Specs accepted by :func:`make_agent`:

==========================  ===============================================
``random``                  uniform over the legal actions
``heuristic``               the rule-based player (:mod:`agents.players.heuristic`)
``pimc``                    Monte Carlo search (:mod:`agents.search.pimc`), with
                            optional parameters: ``pimc:samples=20``,
                            ``pimc:seconds=0.5``, ``pimc:samples=16,bid=1``,
                            ``pimc:kernel=0`` (the pure-Python search);
                            ``pimc:rollout=policy``: the rollouts played by
                            the shipped policy of the rule set (``trained``)
                            for every seat, 16 deals per decision, the
                            phases not searched decided by that policy
                            (rule sets without a shipped policy are refused
                            in one line); ``pimc:rollout=policy,exchange=1,
                            bid=1,policy=runs/x/policies/r0.pt``: every
                            decision type searched, rollouts by that file;
                            ``pimc:rollout=policy,game=8,game_only=1``: the
                            search also counts winning and losing the game
                            (12 tricks), and searches only where it counts
``search``                  the strongest search of the standard rules:
                            ``pimc:rollout=policy,belief=agents/policies/
                            standard_belief_v1.pt,prior=1,samples=24``
                            (deals drawn in proportion to the shipped belief
                            network, rollouts and a prior of 1 trick per nat
                            by ``trained``; about 160 times ``trained``'s
                            time a decision, +0.27 a hand over it); any pimc
                            parameter overrides these, e.g. ``search:game=8`` (the
                            game counted too) or ``search:samples=16``.
                            The belief network reads the three-player rule
                            sets of 789 observation entries; other rule
                            sets are refused in one line
``ismcts``                  information-set MCTS (:mod:`agents.search.ismcts`):
                            ``ismcts:iterations=200``, ``ismcts:seconds=0.2``,
                            ``ismcts:iterations=400,c=0.5``, ``ismcts:kernel=0``
``human``                   a person at the terminal (:mod:`agents.players.human`)
``ppo:path/to/checkpoint``  a trained policy (``agents.players.ppo_agent.PPOAgent``)
``rllib:path/to/policy``    an RLlib policy exported by
                            ``sergeant-major train --backend rllib``
                            (``agents.players.rllib_agent.RLlibAgent``; needs
                            ``pip install -e ".[rllib]"``). Only load policies
                            you trust: an RLlib checkpoint is a pickle, and
                            unpickling it can run any code put in it
``trained``                 the best policy shipped with the package for the
                            rule set played (:mod:`agents.players.trained`): for the
                            three-player rule sets of 789 observation entries
                            and 56 actions (the standard rules and those of
                            docs/rules.md section 9 among them),
                            ``agents/policies/standard_v7.pt``: standard_v4
                            improved by real-deal play-outs
                            (``configs/real_deal_v8.yaml``); any other rule
                            set is refused in one line naming the rule sets
                            that have one. The earlier policies stay loadable
                            as ``ppo:agents/policies/standard_v6.pt``,
                            ``_v5``, ``_v4``, ``_v3``, ``_v2``, ``_v1`` and ``_v0``
``mix:base=A;play=B``       each decision taken by the agent of its decision
                            type (:mod:`agents.mix`): parts ``NAME=SPEC``
                            separated by ``;``, ``base`` (required) for
                            every type not named, the others among
                            ``exchange``, ``trump`` (or the call),
                            ``discard``, ``play``, ``assign``, ``take``,
                            ``bid``; each part any spec but ``human`` or a
                            mix, seen only on the decisions of its type,
                            e.g. ``mix:base=trained;play=pimc``
==========================  ===============================================

Parameters (``kind:name=value,name=value``; :data:`AGENT_PARAMS`), each checked here, once: an unknown
name, a value of the wrong type or out of range, or a name given twice is an :class:`AgentSpecError`
naming the parameter and the values it allows.

==========  ==============  ===================================================
agent       parameter       allowed (default)
==========  ==============  ===================================================
pimc        ``samples``     a whole number 1-10000 (20; 16 with
                            ``rollout=policy``): deals per decision
pimc        ``seconds``     a number above 0, at most 600 (none): time per
                            decision instead of ``samples``
pimc        ``rollout``     one of heuristic, policy (heuristic): who plays
                            the rollouts, the heuristic or the shipped policy
pimc        ``exchange``    0 or 1 (0), with ``rollout=policy``: also search
                            the cards sent in the exchange
pimc        ``policy``      a file path (the shipped policy of the rule
                            set), with ``rollout=policy``: the policy file
                            that plays the rollouts and the phases not
                            searched
pimc        ``game``        a number 0-1000 (0): the weight of the game's
                            result in a searched value, which is then the
                            hand's balance plus ``game`` times the result
                            reward (a win +1, another seat's win -0.5)
                            where the hand's end wins the game
pimc        ``game_from``   a whole number 0-16 (4): the game's result
                            counts once some seat has taken this many
                            tricks in the hand and can still win the game
pimc        ``game_only``   0 or 1 (0), with ``game``: search only where
                            the game's result counts, elsewhere play the
                            default move (the policy's or the heuristic's)
pimc        ``belief``      a file path (none): a belief network
                            (:mod:`agents.search.belief`, made by
                            ``sergeant-major improve belief``); the deals
                            are drawn in proportion to it
pimc        ``pool``        a whole number 1-64 (8), with ``belief``:
                            deals drawn per deal kept (samples x pool
                            at most 20000)
pimc        ``alpha``       a number 0-10 (0.5), with ``belief``: the
                            power of its weights (0: uniform deals)
pimc        ``prior``       a number 0-10 (0), with ``rollout=policy``:
                            tricks added per nat of the policy's
                            log-probability of each move
ismcts      ``iterations``  a whole number 1-100000 (200) per decision
ismcts      ``seconds``     a number above 0, at most 600 (none): time per
                            decision instead of ``iterations`` (still at
                            most 100000 iterations)
ismcts      ``c``           a number 0-10 (0.3): the exploration constant
both        ``bid``         0 or 1 (0): also search trump and discards
both        ``kernel``      0 or 1 (1): 0 forces the pure-Python search
==========  ==============  ===================================================

Yes/no values may also be written ``yes``/``no``, ``true``/``false``, ``on``/``off``. The caps keep a
decision's memory bounded (10000 pimc deals: about 160 MB; a 100000-node ismcts tree: about 70 MB).
"""

from __future__ import annotations

import hashlib
import numbers
import os
from collections.abc import Callable

from sm_env.core.game import SEED_BITS, fresh_seed  # re-exported: agents.fresh_seed, agents.SEED_BITS

from .players.base import Agent, Param, act, observation_for, typed_params

KNOWN_AGENTS = (
    "random",
    "heuristic",
    "pimc",
    "search",
    "ismcts",
    "human",
    "trained",
    "ppo:PATH",
    "rllib:PATH",
    "mix:base=SPEC;TYPE=SPEC",
)

__all__ = [
    "AGENT_KINDS",
    "AGENT_PARAMS",
    "Agent",
    "AgentSpecError",
    "KNOWN_AGENTS",
    "act",
    "agent_seed",
    "fresh_seed",
    "SEARCH_BELIEF",
    "SEED_BITS",
    "make_agent",
    "make_opponent",
    "observation_for",
    "parse_spec",
]


_PATH_KINDS = ("ppo", "rllib")  # specs whose rest is a path, not key=value parameters
_RAW_KINDS = (*_PATH_KINDS, "mix")  # specs whose rest is not split into key=value parameters here


class AgentSpecError(ValueError):
    """An agent spec that names no known agent or has bad parameters."""


_FLAG = Param(bool)
AGENT_PARAMS: dict[str, dict[str, Param]] = {
    "pimc": {
        "samples": Param(int, 1, 10_000),
        "seconds": Param(float, 0, 600, low_open=True),
        "bid": _FLAG,
        "kernel": _FLAG,
        "rollout": Param(str, choices=("heuristic", "policy")),  # agents.search.pimc.DEFAULT_SAMPLES
        "exchange": _FLAG,
        "policy": Param(str),  # a policy file
        "game": Param(float, 0, 1000),  # agents.search.pimc.MAX_GAME_WEIGHT
        "game_from": Param(int, 0, 16),  # tricks: a hand has at most 16
        "game_only": _FLAG,
        "belief": Param(str),
        "pool": Param(int, 1, 64),
        "alpha": Param(float, 0, 10),
        "prior": Param(float, 0, 10),
    },
    "ismcts": {
        "iterations": Param(int, 1, 100_000),  # agents.search.ismcts.MAX_ITERATIONS
        "seconds": Param(float, 0, 600, low_open=True),
        "c": Param(float, 0, 10),
        "bid": _FLAG,
        "kernel": _FLAG,
    },
}
"""The parameters each agent's spec takes, with the values allowed (the table in the module docstring)."""


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split ``kind:rest`` into (kind, rest, key=value parameters of rest)."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"agent spec must be a non-empty string; known agents: {', '.join(KNOWN_AGENTS)}")
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    params: dict[str, str] = {}
    if rest and kind not in _RAW_KINDS:
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            key = key.strip().lower()
            if not eq or not key:
                raise AgentSpecError(f"agent spec {spec!r}: parameters are key=value pairs separated by commas")
            if key in params:
                raise AgentSpecError(f"agent spec {spec!r}: parameter {key!r} given twice")
            params[key] = value.strip()
    return kind, rest, params


def _no_params(kind: str, params: dict[str, str]) -> None:
    if params:
        raise AgentSpecError(f"agent {kind!r} takes no parameters, got {sorted(params)}")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec string (see the module docstring)."""
    kind, rest, params = parse_spec(spec)
    factory = _FACTORIES.get(kind)
    if factory is None:
        raise AgentSpecError(f"unknown agent {spec!r}; known agents: {', '.join(KNOWN_AGENTS)}")
    try:
        return factory(rest, params, seed)
    except AgentSpecError:
        raise
    except ValueError as err:
        raise AgentSpecError(f"agent spec {spec!r}: {err}") from None


def make_opponent(spec: str, seed: int | None = None) -> Agent:
    """An agent for a seat that a program plays (next to a person, in an evaluation, in training):
    any spec but ``human`` (AgentSpecError naming the agents allowed)."""
    if parse_spec(spec)[0] == "human":
        allowed = ", ".join(k for k in KNOWN_AGENTS if k != "human")
        raise AgentSpecError(
            f"'human' cannot take this seat (the person playing is the only human seat); give an agent: {allowed}"
        )
    return make_agent(spec, seed)


def agent_seed(game_seed: int, seat: int, purpose: str = "agent") -> int:
    """The seed of the agent at ``seat`` of the game dealt from ``game_seed``, for ``purpose``: the first
    ``SEED_BITS`` (128) bits of the SHA-256 of ``"agent:GAME_SEED:SEAT:PURPOSE"``, ``0 <= seed < 2**128``.

    One way: an agent's random stream is never the deal's (``Game(seed=game_seed)`` seeds ``random.Random``
    with the game's seed itself) and tells nothing of it; each seat and purpose gets its own stream, and the
    same game seed gives the same streams, so a record's seed still replays the game and its agents."""
    if any(isinstance(x, bool) or not isinstance(x, numbers.Integral) for x in (game_seed, seat)):
        raise TypeError(f"agent_seed: game_seed and seat must be whole numbers, got {game_seed!r:.40} and {seat!r:.40}")
    if seat < 0 or not isinstance(purpose, str) or not purpose:
        raise ValueError(f"agent_seed: seat must be 0 or more and purpose some text, got {seat}, {purpose!r:.40}")
    game, place = int(game_seed), int(seat)
    digest = hashlib.sha256(f"agent:{game}:{place}:{purpose}".encode()).digest()
    return int.from_bytes(digest[: SEED_BITS // 8], "big")


def _random(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from .players.random_agent import RandomAgent

    _no_params("random", params)
    return RandomAgent(seed)


def _heuristic(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from .players.heuristic import HeuristicAgent

    _no_params("heuristic", params)
    return HeuristicAgent(seed)


def _pimc(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from agents.search.pimc import PimcAgent

    return PimcAgent(seed, **typed_params("pimc", params, AGENT_PARAMS["pimc"]))


def _ismcts(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from agents.search.ismcts import IsmctsAgent

    return IsmctsAgent(seed, **typed_params("ismcts", params, AGENT_PARAMS["ismcts"]))


def _human(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from .players.human import HumanAgent

    _no_params("human", params)
    return HumanAgent(seed=seed)


POLICY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "policies")
TRAINED_POLICY = os.path.join(POLICY_DIR, "standard_v7.pt")
"""What the spec "trained" plays on the standard rules (agents.players.trained.trained_policy; policies/README.md)."""

SEARCH_BELIEF = os.path.join(POLICY_DIR, "standard_belief_v1.pt")
"""The belief network of the spec "search" (agents/policies/README.md)."""
SEARCH_DEFAULTS = {"rollout": "policy", "belief": SEARCH_BELIEF, "prior": "1", "samples": "24"}
"""The pimc parameters "search" stands for; any given in the spec replace these."""


def _search(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    """``search[:pimc parameters]``: pimc with :data:`SEARCH_DEFAULTS`, named ``search`` (and the parameters
    given) in records and tables, so that no machine's path to the belief file enters them."""
    from agents.search.pimc import PimcAgent

    merged = {**SEARCH_DEFAULTS, **params}
    agent = PimcAgent(seed, **typed_params("search", merged, AGENT_PARAMS["pimc"]))
    agent.name = "search" + (f":{rest.strip()}" if params else "")
    return agent


def _trained(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from .players.trained import TrainedAgent

    _no_params("trained", params)
    if not os.path.exists(TRAINED_POLICY):
        raise AgentSpecError(f"trained agent: the shipped policy is missing: {TRAINED_POLICY}")
    return TrainedAgent(seed=seed)


def _ppo(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    from .players.ppo_agent import PPOAgent

    path = rest.strip()
    if not path:
        raise AgentSpecError("agent spec 'ppo' needs a checkpoint: ppo:path/to/checkpoint")
    if not os.path.exists(path):
        raise AgentSpecError(f"ppo agent: checkpoint file not found: {path}")
    return PPOAgent(path, seed=seed)


def _rllib(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    path = rest.strip()
    if not path:
        raise AgentSpecError("agent spec 'rllib' needs an exported policy: rllib:path/to/policy")
    if not os.path.exists(path):
        raise AgentSpecError(f"rllib agent: policy folder not found: {path}")
    try:
        from .players.rllib_agent import RLlibAgent
    except ImportError as err:
        raise AgentSpecError(f"rllib agent needs ray[rllib] and torch: pip install -e '.[rllib]' ({err})") from None
    return RLlibAgent(path, seed=seed)


def _mix(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    """``mix:base=SPEC;TYPE=SPEC...`` (:mod:`agents.mix`): every part built here by :func:`make_agent`."""
    from .mix import MAX_SPEC, MixAgent, part_seed, split_mix

    if len(rest) > MAX_SPEC:  # before make_agent would quote it all
        raise AgentSpecError(f"agent spec 'mix:...': a mix spec has at most {MAX_SPEC} characters, got {len(rest)}")
    specs = split_mix(rest)  # a ValueError: make_agent names the spec
    parts: dict[str, Agent] = {}
    for name, spec in specs.items():
        try:
            kind = parse_spec(spec)[0]
            if kind == "human":
                raise AgentSpecError("'human' cannot be part of a mix (a mix plays a program's seat)")
            if kind == "mix":
                raise AgentSpecError("a mix cannot be part of a mix")
            parts[name] = make_agent(spec, part_seed(seed, name))
        except AgentSpecError as err:
            raise AgentSpecError(f"mix part {name}={spec[:80]!r}: {err}") from None
    return MixAgent(parts, specs, seed)


_FACTORIES: dict[str, Callable[[str, dict[str, str], int | None], Agent]] = {
    "random": _random,
    "heuristic": _heuristic,
    "pimc": _pimc,
    "search": _search,
    "ismcts": _ismcts,
    "human": _human,
    "ppo": _ppo,
    "trained": _trained,
    "rllib": _rllib,
    "mix": _mix,
}

AGENT_KINDS = frozenset(_FACTORIES)
"""The kinds a spec may start with (``kind`` or ``kind:...``): the agents :func:`make_agent` builds."""
