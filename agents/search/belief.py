"""A belief network: where the cards a seat cannot see lie, learnt from a policy's self-play; pimc draws its deals
in proportion to it (``pimc:rollout=policy,belief=PATH``, :mod:`agents.search.pimc`).

pimc samples deals uniformly among those consistent with what the seat knows for certain (voids shown, cards
seen, hand sizes: :mod:`agents.search.world_sampler`). Real opponents' play says more: a seat that keeps
following low has few high cards of the suit. The network reads the seat's own observation vector (the one the
policy reads, :func:`sm_env.observation.encode`: its hand and what the table showed it, nothing hidden) and
gives for every card a distribution over where it lies.

Layout (``n`` players): the output is ``52 x n`` logits, card-major: entry ``c * n + k`` scores card ``c`` lying
in the hand of the seat ``k + 1`` places to the seat's left (``k = 0 .. n - 2``; with three players left, then
right), and ``k = n - 1`` anywhere else (the seat's own hand, played, the kitty, a dealer's discards). The
probabilities of a card are the softmax of its ``n`` entries. A sampled deal scores the sum, over the cards the
seat cannot place, of the log-probability of where the deal puts each (the cards taken as independent).

Use in pimc (:func:`resample`): draw ``pool`` times the deals needed, weight each by ``exp(alpha * score)``
(``alpha`` below 1 tempers the independence assumption, which overcounts), and keep the needed number by
systematic resampling. The deals drawn and the resampling draws come from the agent's seeded generator, so a
seed gives the same moves.

The file (``sergeant-major-belief/1``, written by :func:`save_belief`, made by ``sergeant-major improve belief``,
:mod:`training.distill.belief`) is a torch file of tensors and plain values: ``format``, ``players``,
``observation_size``, ``net_arch``, ``activation``, ``rules`` / ``rules_name`` (the rule set it was learnt on),
``policy`` (the self-play policy) and ``state_dict`` (``hidden.<i>.weight``/``bias``, ``head.weight``/``bias``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.players.ppo_agent import NumpyPolicy, PolicyLoadError, check_model_file
from sm_env.core.rules import RuleSet
from sm_env.files.atomic import atomic_path
from sm_env.observation import observation_size

from .world_sampler import World

BELIEF_FORMAT = "sergeant-major-belief/1"
MAX_BELIEF_BYTES = 64 * 2**20
"""The largest belief file read (a [512, 512] network is about 3 MB)."""


class BeliefNet:
    """A loaded belief network (the module docstring): :meth:`log_probs` of one observation."""

    def __init__(self, network: NumpyPolicy, rules: RuleSet, meta: dict[str, Any] | None = None) -> None:
        self.players = rules.num_players
        if network.num_actions != 52 * self.players or network.observation_size != observation_size(rules):
            raise PolicyLoadError(
                f"a belief network of {network.observation_size} inputs and {network.num_actions} outputs is not one "
                f"for {rules.name!r} ({observation_size(rules)} inputs, {52 * self.players} outputs)"
            )
        self.network = network
        self.rules = rules
        self.meta = dict(meta or {})

    def check_rules(self, rules: RuleSet) -> None:
        """A :class:`~agents.players.ppo_agent.PolicyLoadError` (a ValueError) unless the network reads ``rules``'
        observation and places cards among their players."""
        if rules.num_players != self.players or observation_size(rules) != self.network.observation_size:
            raise PolicyLoadError(
                f"the belief network learnt on {self.rules.name!r} ({self.players} players, "
                f"{self.network.observation_size} observation entries) cannot read the rules {rules.name!r} "
                f"({rules.num_players} players, {observation_size(rules)} entries)"
            )

    def log_probs(self, observation: np.ndarray) -> np.ndarray:
        """float64 [52, n]: for each card, the log-probability of each location (the module docstring)."""
        logits = self.network.logits(observation).astype(np.float64).reshape(52, self.players)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def scores(self, log_probs: np.ndarray, seat: int, unknown: int, worlds: Sequence[World]) -> np.ndarray:
        """float64 [len(worlds)]: each deal's sum over the cards of ``unknown`` (a bit set) of the log-probability
        of the location it gives them, seen from ``seat``."""
        n = self.players
        cards = np.arange(52, dtype=np.uint64)
        hands = np.array([[w.hands[(seat + r) % n] for r in range(1, n)] for w in worlds], dtype=np.uint64)
        held = (hands[:, :, None] >> cards) & np.uint64(1)  # [worlds, n - 1, 52]
        where = np.full((len(worlds), 52), n - 1, dtype=np.int64)
        for k in range(n - 1):
            where[held[:, k, :] == 1] = k
        mask = np.array([unknown >> c & 1 for c in range(52)], dtype=bool)
        return log_probs[np.arange(52)[None, :], where][:, mask].sum(axis=1)


def resample(scores: np.ndarray, alpha: float, count: int, draw: Callable[[int], int]) -> list[int]:
    """``count`` indices into ``scores`` by systematic resampling with weights ``exp(alpha * score)``; ``draw``:
    ``randrange`` of the caller's seeded generator (one draw)."""
    weights = np.exp(alpha * (scores - scores.max()))
    edges = np.cumsum(weights / weights.sum())
    offset = draw(1 << 30) / float(1 << 30)
    points = (np.arange(count) + offset) / count
    return np.minimum(np.searchsorted(edges, points, side="right"), len(scores) - 1).tolist()


def save_belief(
    path: str,
    hidden: list[tuple[np.ndarray, np.ndarray]],
    head: tuple[np.ndarray, np.ndarray],
    rules: RuleSet,
    **extra: Any,
) -> None:
    """Write a belief file (the module docstring), atomically: ``hidden`` and ``head`` as (weight [out, in], bias)."""
    import torch

    state = {}
    for i, (w, b) in enumerate(hidden):
        state[f"hidden.{i}.weight"], state[f"hidden.{i}.bias"] = torch.as_tensor(w), torch.as_tensor(b)
    state["head.weight"], state["head.bias"] = torch.as_tensor(head[0]), torch.as_tensor(head[1])
    blob = {
        "format": BELIEF_FORMAT,
        "players": rules.num_players,
        "observation_size": observation_size(rules),
        "net_arch": [int(w.shape[0]) for w, _ in hidden],
        "activation": "relu",
        "rules": rules.options(),
        "rules_name": rules.name,
        **extra,
        "state_dict": state,
    }
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


def load_belief(path: str | os.PathLike[str]) -> BeliefNet:
    """Read and check a belief file; a :class:`~agents.players.ppo_agent.PolicyLoadError` (a ValueError) in one
    line says what is wrong with it."""
    path = os.fspath(path)
    check_model_file(path, "belief", f"a .pt file of the {BELIEF_FORMAT} format")
    if os.path.getsize(path) > MAX_BELIEF_BYTES:
        raise PolicyLoadError(f"{path}: {os.path.getsize(path)} bytes; a belief file holds at most {MAX_BELIEF_BYTES}")
    import torch

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same one-line refusal
        raise PolicyLoadError(f"{path}: not a {BELIEF_FORMAT} file ({type(err).__name__})") from None
    if not isinstance(blob, dict) or blob.get("format") != BELIEF_FORMAT:
        raise PolicyLoadError(f"{path}: not a {BELIEF_FORMAT} file (missing or wrong 'format')")
    state = blob.get("state_dict")
    if not isinstance(state, dict):
        raise PolicyLoadError(f"{path}: no state_dict of tensors")

    def arr(key: str) -> np.ndarray:
        if key not in state or not isinstance(state[key], torch.Tensor):
            raise PolicyLoadError(f"{path}: missing tensor {key!r}")
        value = state[key].detach().to(torch.float32).numpy()
        if not np.all(np.isfinite(value)):
            raise PolicyLoadError(f"{path}: {key} has non-finite values")
        return value

    hidden = []
    while f"hidden.{len(hidden)}.weight" in state:
        i = len(hidden)
        hidden.append((arr(f"hidden.{i}.weight"), arr(f"hidden.{i}.bias")))
    head = (arr("head.weight"), arr("head.bias"))
    previous = None
    for w, b in [*hidden, head]:
        if w.ndim != 2 or b.shape != (w.shape[0],) or (previous is not None and w.shape[1] != previous):
            raise PolicyLoadError(f"{path}: its layers do not chain (weight {w.shape}, bias {b.shape})")
        previous = w.shape[0]
    try:
        rules = RuleSet.from_any(blob.get("rules"))
    except (TypeError, ValueError) as err:
        raise PolicyLoadError(f"{path}: its rules are not a rule set ({err})") from None
    meta = {k: v for k, v in blob.items() if k != "state_dict"}
    return BeliefNet(NumpyPolicy(hidden, head, "relu"), rules, meta)
