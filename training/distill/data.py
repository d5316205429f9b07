"""Search-labelled positions for distillation: play hands, label every
decision with what the search (``pimc``) thinks of each legal action.

One *labelled decision* holds (arrays, one row per decision):

============  ===========  ====================================================
name          dtype/shape  meaning
============  ===========  ====================================================
bits          uint8 [91]   the 728 binary entries of the observation (its card
                           planes), packed (``np.packbits``, little bit order)
scalars       f32 [61]     the other 61 entries of the observation
legal         uint8 [7]    the 56-bit legal-action mask, packed the same way
values        f16 [56]     the search's mean balance after each legal action (NaN for
                           illegal actions and for decisions not searched;
                           older shards hold mean tricks, the seat's quota
                           more, a constant per decision: the soft targets
                           and the regret are the same either way, up to
                           f16 rounding)
target        int8         the label: the search's choice (best mean, ties to
                           its default move: the heuristic's, or with policy
                           rollouts the policy's), or that default move where
                           it does not search (exchange, trump, discards)
searched      bool         the row has search values
balance       int8         the acting seat's balance (tricks - quota) at the
                           end of the hand: the value-head target
role          int8         0 dealer, 1 eldest, 2 middle (3 fourth)
============  ===========  ====================================================

The play-out labeller (:mod:`training.distill.label_playouts`) writes the same rows: ``values`` f32 there (each
legal move's balance played out in the real deal; the search's stay f16, so its fits read the floats they always
read), ``target`` the policy's move, ``searched`` true, ``balance`` its move's play-out balance, and three more
entries: ``results`` f32 [56] (each legal move's result reward where its hand ends the game: +1 won, -1 shared by
the losers, 0 where it goes on), ``phase`` int8 (0 exchange, 1 trump, 2 discard, 3 play) and ``rules`` (the JSON
of the rule set's options). :func:`write_labels` is the one writer of both, :func:`read_shard` the one reader.

The sizes are those of the standard rules; a rule set of another shape
(:class:`agents.players.ppo_agent.PolicyShape`: O observation entries, A actions, P
players) has its own (:func:`shard_layout`): ``bits`` the 52 (4 P + 2) card-plane
entries packed (91 bytes with three players, 117 with four), ``scalars`` the
other O - 52 (4 P + 2) entries (63 for ``dealer-assigns``' 791, 172 for the 900
of ``9-5-3-one-card``), ``legal`` (A + 7) // 8 bytes and ``values`` A entries.
Each shard records its shape in one more entry, ``shape`` (int64 [3]: O, A, P);
a shard without it (written before it was recorded) is of the standard shape.
So a shard of one rule set is never read as data of another:
:func:`read_shard` with the shape a fit expects refuses any other in one line.

Forced decisions (one legal action) are skipped: they teach nothing.

Which hands: hand ``k`` of a data set with seed ``s`` is dealt from game seed
``derive(s, k)`` by seat ``k % 3``; with probability ``exchange_start`` it
opens with the exchange called for by random previous-hand balances (each
seat's balance drawn in -4..+4, summing to zero), so that exchanges are
labelled too.

Who plays (the *behaviour*): by default pimc itself (its choice, or with
probability ``explore`` an action sampled from a softmax of its values at
temperature 0.5 tricks, so that positions after slightly worse moves are
seen too); or any agent spec (e.g. ``ppo:runs/x/policy.pt``, which gives
DAgger: the learner plays, the search labels). With ``search=False`` the
play decisions are not stored and nothing is searched: a cheap set of
exchange, trump and discard decisions (labelled by the heuristic; the fitter
can relabel them with a teacher policy, ``fit.other_teacher``).

Who labels (the *search*, :func:`search_agent`): ``pimc`` with ``samples`` deals per decision, its rollouts
played by the heuristic (``rollout: heuristic``), or by a policy network (``rollout: policy``,
``pimc:rollout=policy``: ``rollout_policy``, a policy file, or the shipped policy of the rules). The
labels are pimc-style action values either way, so the fit reads them alike. ``search_decisions: play``
searches the play of the tricks only; ``trump`` the play and naming trump (under ``calls`` the call; with
either rollout, the discards staying the default's: searched discards measured worse than the heuristic's,
agents.search.pimc); ``all`` (policy rollouts) searches every decision: the cards sent in
the exchange, trump and the discards too (where a position cannot be set up, e.g. an exchange under another
order of the stages, the row keeps the default move, unsearched). With a policy search the unsearched rows
and the ties take the policy's move, not the heuristic's. An expert-iteration loop
(``configs/exit_v3.yaml``) labels round k with the search over round k-1's fit
(:func:`training.distill.fit.round_settings`, ``dagger_rollout: previous``).

Storage: a folder of shards ``shard_00000.npz``, one per chunk of
``chunk_hands`` hands, each written atomically; a ``meta.json`` holds the
settings (:meth:`DataSettings.record`) and the fingerprints of the policy files the data is labelled with
(:func:`fingerprints`: the rollout policy, a ``ppo:PATH`` behaviour), so a run resumed after one of them
changed (e.g. round k-1 refitted) is refused in one line instead of mixing two policies' labels.
:func:`read_shard` reads a shard within bounds (a regular file; the entries, dtypes and shapes above, at most
:data:`MAX_SHARD_ROWS` rows, each array's declared size checked before it is read; every target a legal
action, every role a seat's, no infinite value, every legal move of a searched decision a finite value: the
check ``improve``'s data gets, :mod:`training.common.labels`), and a fit's whole data set is at most
:data:`MAX_DATA_ROWS` decisions, summed from the shards' headers before any is read (:func:`check_total_rows`), so
a damaged or hostile file is one clear :class:`ShardError`, never a large allocation; ``meta.json`` is read by the
bounded JSON reader (:mod:`sm_env.files.json_files`). Generation is resumable: shards already
present are skipped, and shard ``i`` depends only on the settings and ``i``, whatever the number of
worker processes, so an interrupted run continued gives the same data set. On Ray (``--ray [ADDRESS]``,
docs/cluster.md) each shard is a task that returns its arrays, and this process writes the file: a shard whose
worker or node was lost is labelled again (the log says which), none is written twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import stat
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from agents import act, make_agent
from agents.players.heuristic import heuristic_action
from agents.players.ppo_agent import STANDARD_SHAPE, PolicyShape
from agents.search.belief import load_belief
from agents.search.pimc import PimcAgent, searched_phase
from agents.search.policy_rollout import ExchangeSetupError
from sm_env.core.cards import from_mask
from sm_env.core.game import MAX_ACTIONS, NUM_ACTIONS, PLAY, TRUMP, Game, check_start_balances
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RulesError, RuleSet
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import JsonError, parse_json, read_json
from sm_env.files.paths import check_output_path
from sm_env.observation import OBSERVATION_SIZE, OFFSETS, binary_size, encode
from training.common.exchange import check_exchange_start
from training.common.labels import NOT_FINITE, unfinite_legal
from training.common.workers import limit_threads, spawn_pool
from training.common.yaml_config import Flag, Number, Section, Text, Whole, setting, validate
from training.distill.npy import read_header
from training.evaluation.deals import derive_seed

BINARY_SIZE = OFFSETS["trump"]  # 728: the card planes, all 0/1 (three players)
SCALAR_SIZE = OBSERVATION_SIZE - BINARY_SIZE
FIELDS = ("bits", "scalars", "legal", "values", "target", "searched", "balance", "role")
"""The entries of a shard with one row per decision."""
PLAYOUT_FIELDS = ("results", "phase")
"""The entries with one row per decision that play-out shards hold too (the module docstring)."""
SHAPE_ENTRY = "shape"  # int64 [3]: the shard's observation size, action count and players
RULES_ENTRY = "rules"  # a play-out shard's rule set: the JSON of RuleSet.options()
MAX_RULES_CHARS = 1 << 16  # the rules entry (about 1 kB)
EXPLORE_TEMPERATURE = 0.5
_LEGAL_BYTES = (NUM_ACTIONS + 7) // 8
MAX_SHARD_ROWS = 5_000_000  # a play-out file of MAX_HANDS (50,000) hands of 100 decisions; about 4 GB loaded
MAX_CHUNK_HANDS = 5_000  # hands per shard (a hand has fewer than 100 decisions)
MAX_OBSERVATION = 4096  # the largest observation a shard may declare (every rule set's is far smaller)
MAX_DATA_ROWS = 4_000_000  # decisions of all the shards loaded together (about 1.8 GB; a 20,000-hand round: 1M)
MAX_META_BYTES = 1 << 20  # a data folder's meta.json (a few kB)


def shard_layout(shape: PolicyShape = STANDARD_SHAPE) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """Each per-decision entry's dtype and the shape of one row, for data of this shape (the module
    docstring's table)."""
    binary = binary_size(shape.players or 3)
    return {
        "bits": (np.dtype(np.uint8), ((binary + 7) // 8,)),
        "scalars": (np.dtype(np.float32), (shape.observation_size - binary,)),
        "legal": (np.dtype(np.uint8), ((shape.action_count + 7) // 8,)),
        "values": (np.dtype(np.float16), (shape.action_count,)),
        "target": (np.dtype(np.int8), ()),
        "searched": (np.dtype(np.bool_), ()),
        "balance": (np.dtype(np.int8), ()),
        "role": (np.dtype(np.int8), ()),
        "results": (np.dtype(np.float32), (shape.action_count,)),
        "phase": (np.dtype(np.int8), ()),
    }


SHARD_LAYOUT = shard_layout()
"""The entries of a shard of the standard shape (:func:`shard_layout`)."""


class ShardError(ValueError):
    """A shard file that is not one this module writes (the message names the file and what is wrong)."""


class SettingsError(ValueError):
    """Data settings that do not fit together; ``key`` names the setting at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class LabelSettings(Section):
    """How hands are played and labelled: a data set's settings less its rule set (the ``data:`` section of a
    distillation config, :mod:`training.distill.config`, whose rule set is the run's ``env.rules``)."""

    seed: Whole = setting(0, "seed of the hands (hand k is dealt from derive(seed, k))")
    samples: Whole = setting(10, "pimc deals per labelled decision", ge=1)
    chunk_hands: Whole = setting(50, "hands per shard (one atomic file; loads within bounds)", ge=1, le=MAX_CHUNK_HANDS)
    exchange_start: Number = setting(
        0.7, "share of hands that open with an exchange (random previous balances in -4..4)", ge=0, le=1
    )
    explore: Number = setting(0.1, "pimc behaviour: share of moves sampled from softmax(values / 0.5)", ge=0, le=1)
    behaviour: Text = setting("pimc", "who plays: 'pimc', or an agent spec that plays while pimc labels (DAgger)")
    search: Flag = setting(
        True, "false: play decisions are neither searched nor stored (cheap exchange/trump/discard data)"
    )
    rollout: Text = setting(
        "heuristic", "who plays pimc's rollouts: 'heuristic', or 'policy' (pimc:rollout=policy, a policy network)"
    )
    rollout_policy: Text = setting(
        "", "with rollout: policy, the policy file that plays the rollouts ('': the shipped one of the rules)"
    )
    belief: Text = setting("", "a belief file: pimc draws its deals in proportion to it (pimc:belief=PATH)")
    prior: Number = setting(
        0.0, "with rollout: policy, the searched values gain this times the policy's log-probabilities", ge=0, le=10
    )
    search_decisions: Text = setting(
        "play",
        "'play': only the play is searched (the other decisions labelled by the heuristic, or with rollout: "
        "policy by the rollout policy); 'trump': naming trump (the call under calls) searched too; "
        "'all' (rollout: policy): the exchange, trump and discards searched too",
    )


class DataSettings(LabelSettings):
    """What a labelled data set is made of: how its hands are played and labelled, and their rule set (stored in
    ``meta.json``; a distillation config's ``data:`` section with its ``env.rules``,
    :meth:`training.distill.config.DistillConfig.data_settings`)."""

    rules: Text = setting("standard", "rule preset of the hands (any preset; the data has its sizes)")

    def validate(self) -> None:
        """The checks across fields (the bounds are the fields' own): the rules must be a preset, ``search:
        false`` needs another behaviour than pimc, the behaviour must be an agent spec that
        ``agents.make_agent`` builds and that plays the rules, ``exchange_start`` must be 0 for rule sets
        whose first hand has no exchange, ``rollout`` and ``search_decisions`` must be one of their words,
        ``rollout_policy`` and ``search_decisions: all`` need ``rollout: policy``, and the rollout policy (the
        file, or the shipped one of the rules) must play the rules."""
        try:
            rules = RuleSet.from_any(self.rules)
        except ValueError as err:
            raise SettingsError("rules", str(err)) from None
        if not self.search and self.behaviour == "pimc":
            raise SettingsError("search", "search=False needs a behaviour agent other than pimc (e.g. trained)")
        self._validate_search(rules)
        if self.behaviour != "pimc":
            try:
                make_agent(self.behaviour).check_rules(rules)  # a bad spec, or an agent that cannot play the rules
            except ValueError as err:
                raise SettingsError("behaviour", str(err)) from None
        try:
            check_exchange_start(rules, self.exchange_start)
        except ValueError as err:
            raise SettingsError("exchange_start", str(err)) from None

    def _validate_search(self, rules: RuleSet) -> None:
        """The checks of ``rollout``, ``rollout_policy`` and ``search_decisions`` (:meth:`validate`)."""
        if self.rollout not in ROLLOUTS:
            raise SettingsError("rollout", f"must be one of {', '.join(ROLLOUTS)}, got {self.rollout!r}")
        if self.search_decisions not in SEARCH_DECISIONS:
            raise SettingsError(
                "search_decisions", f"must be one of {', '.join(SEARCH_DECISIONS)}, got {self.search_decisions!r}"
            )
        if self.belief:
            try:
                load_belief(self.belief).check_rules(rules)
            except ValueError as err:
                raise SettingsError("belief", str(err)) from None
        if self.rollout != "policy":
            if self.prior:
                raise SettingsError("prior", "needs rollout: policy (it adds the policy's log-probabilities)")
            if self.rollout_policy:
                raise SettingsError("rollout_policy", f"{self.rollout_policy!r} needs rollout: policy")
            if self.search_decisions == "all":
                raise SettingsError(
                    "search_decisions",
                    "'all' needs rollout: policy (the heuristic's rollouts do not search the exchange)",
                )
            return
        if self.search_decisions == "all" and not self.search:
            raise SettingsError("search_decisions", "'all' needs search: true (search: false searches nothing)")
        try:
            search_agent(self).check_rules(rules)  # a missing or unreadable file, or a policy of other rules
        except ValueError as err:
            raise SettingsError("rollout_policy", str(err)) from None

    def record(self) -> dict[str, Any]:
        """The settings as ``meta.json`` holds them: every setting, except the ones added with policy rollouts
        (:data:`LATER_SETTINGS`) where they have their defaults, so that a folder labelled before they existed
        is still recognised as of the same settings (and resumes)."""
        dump = self.model_dump()
        defaults = DataSettings.model_fields
        return {k: v for k, v in dump.items() if k not in LATER_SETTINGS or v != defaults[k].default}

    @property
    def shape(self) -> PolicyShape:
        """The shape of the data (observation size, action count, players): the rule set's."""
        return PolicyShape.of(RuleSet.from_any(self.rules))


ROLLOUTS = ("heuristic", "policy")
"""Who plays pimc's rollouts (``rollout``)."""
SEARCH_DECISIONS = ("play", "trump", "all")
"""Which decisions are searched (``search_decisions``, :func:`searched_decision`)."""
LATER_SETTINGS = ("rollout", "rollout_policy", "search_decisions", "belief", "prior")
"""Settings a ``meta.json`` leaves out at their defaults (:meth:`DataSettings.record`)."""


def search_agent(settings: DataSettings, seed: int | None = None) -> PimcAgent:
    """The search that labels the data: pimc with ``settings.samples`` deals, its rollouts by the heuristic or
    (``rollout: policy``) by the rollout policy; with ``search_decisions: all`` it searches trump, the discards
    and the exchange too (``bid``, ``exchange``); its deals in proportion to ``belief`` where one is given, its
    values with the policy's log-probabilities times ``prior``."""
    every = settings.search_decisions == "all"
    return PimcAgent(
        seed=seed,
        samples=settings.samples,
        rollout=settings.rollout,
        bid=every,
        exchange=every,
        policy=settings.rollout_policy or None,
        belief=settings.belief or None,
        prior=settings.prior,
    )


def searched_decision(settings: DataSettings, view: Any) -> bool:
    """Whether the labelling searches the decision of ``view``: the play always; naming trump (the call) with
    ``search_decisions`` ``trump`` or ``all``, once the hand's exchange is over; the discards and the exchange
    with ``all`` (:func:`~agents.search.pimc.searched_phase`)."""
    if view.phase == PLAY:
        return True
    if settings.search_decisions == "all":
        return searched_phase(view, bid=True, exchange=True)
    return settings.search_decisions == "trump" and view.phase == TRUMP and searched_phase(view, bid=True)


def rollout_policy_file(settings: DataSettings) -> str | None:
    """The policy file that plays the rollouts (``rollout_policy``, or the shipped one of the rules), None with
    heuristic rollouts."""
    if settings.rollout != "policy":
        return None
    if settings.rollout_policy:
        return settings.rollout_policy
    from agents.players.trained import trained_policy

    return trained_policy(settings.rules)


def policy_fingerprint(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of a policy file's bytes: which network it is."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def fingerprints(settings: DataSettings) -> dict[str, str]:
    """The fingerprints (:func:`policy_fingerprint`) of the policy files a data set is labelled with, as
    ``meta.json`` records them: ``rollout_policy`` (policy rollouts) and ``behaviour`` (a ``ppo:PATH``
    behaviour), each where that file exists."""
    files = {"rollout_policy": rollout_policy_file(settings)}
    kind, _, rest = settings.behaviour.partition(":")
    if kind.strip().lower() == "ppo":
        files["behaviour"] = rest.strip()
    return {name: policy_fingerprint(path) for name, path in files.items() if path and os.path.isfile(path)}


def pack_observation(obs: np.ndarray, binary: int = BINARY_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Split an observation into its packed binary part (the first ``binary`` entries: :func:`binary_size`)
    and its scalars."""
    return np.packbits(obs[:binary].astype(np.uint8), bitorder="little"), obs[binary:].astype(np.float32)


def unpack_observations(bits: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    """Observation vectors [n, O] (float32) from packed rows (the card planes fill whole bytes: 8 per byte)."""
    binary = np.unpackbits(bits, axis=1, count=8 * bits.shape[1], bitorder="little").astype(np.float32)
    return np.concatenate([binary, scalars.astype(np.float32)], axis=1)


def unpack_legal(legal: np.ndarray, actions: int = NUM_ACTIONS) -> np.ndarray:
    """Boolean legal masks [n, actions] from packed rows (``actions``: the data's action count, the width
    of its ``values``)."""
    return np.unpackbits(legal, axis=1, count=actions, bitorder="little").astype(bool)


def _start_balances(rng: random.Random, rules: RuleSet) -> list[int]:
    """Balances of an imaginary previous hand, each in -4..4, summing to zero, not all zero, and possible
    under ``rules`` (``check_start_balances``; always so with three players of the standard quotas)."""
    n = rules.num_players
    while True:
        drawn = [rng.randint(-4, 4) for _ in range(n - 1)]
        last = -sum(drawn)
        if -4 <= last <= 4 and any(drawn):
            try:
                return check_start_balances([*drawn, last], rules)
            except ValueError:
                continue


def _softmax_pick(values: dict[int, float], rng: random.Random) -> int:
    best = max(values.values())
    actions = list(values)
    weights = [math.exp((values[a] - best) / EXPLORE_TEMPERATURE) for a in actions]
    return rng.choices(actions, weights)[0]


def label_hand(settings: DataSettings, index: int, search: PimcAgent | None = None) -> list[dict[str, Any]]:
    """Play hand ``index`` of the data set and return its labelled decisions. ``search``: the labelling search
    (:func:`search_agent`) to reuse, reseeded for the hand (the same labels as a new one)."""
    rules = RuleSet.from_any(settings.rules)
    n, binary, legal_bytes = rules.num_players, binary_size(rules.num_players), (rules.num_actions + 7) // 8
    rng = random.Random(derive_seed(settings.seed, index, 0xB1A5))
    balances = _start_balances(rng, rules) if rng.random() < settings.exchange_start else None
    game = Game(
        rules,
        seed=derive_seed(settings.seed, index),
        first_dealer=index % n,
        max_hands=1,
        start_balances=balances,
    )
    if search is None:
        search = search_agent(settings)
    search.reset(derive_seed(settings.seed, index, 1))
    search.check_rules(rules)
    policy_default = settings.rollout == "policy"  # the unsearched moves and the ties: the policy's
    behaviour = None
    if settings.behaviour != "pimc":
        behaviour = make_agent(settings.behaviour, seed=derive_seed(settings.seed, index, 2))
        behaviour.reset(derive_seed(settings.seed, index, 2))
    rows: list[dict[str, Any]] = []
    seats: list[int] = []
    while True:
        seat = game.current_player
        if seat is None:
            break
        view = player_view(game, seat)
        legal = from_mask(view.legal)
        if len(legal) == 1:
            action = legal[0]
        elif view.phase == PLAY and not settings.search:
            action = act(behaviour, view) if behaviour is not None else heuristic_action(view)
        else:
            obs = encode(view)
            default = search.default_action(view, obs) if policy_default else heuristic_action(view)
            values_row = np.full(rules.num_actions, np.nan, dtype=np.float16)
            values, target, searched = {}, default, False
            if searched_decision(settings, view):
                try:
                    values = search.scored(view, legal, obs)
                except ExchangeSetupError:  # an exchange the view cannot set up (variants): the default move
                    values = {}
            if values:
                target = max(legal, key=lambda a: (values[a], a == default, -a))
                for a, v in values.items():
                    values_row[a] = v
                searched = True
            bits, scalars = pack_observation(obs, binary)
            rows.append(
                {
                    "bits": bits,
                    "scalars": scalars,
                    "legal": np.frombuffer(view.legal.to_bytes(legal_bytes, "little"), dtype=np.uint8),
                    "values": values_row,
                    "target": target,
                    "searched": searched,
                    "role": (seat - view.dealer) % n,
                }
            )
            seats.append(seat)
            if behaviour is not None:
                action = act(behaviour, view)
            elif searched and rng.random() < settings.explore:
                action = _softmax_pick(values, rng)
            else:
                action = target
        game.apply(action)
    final = game.history[-1].balances
    if final is None:  # an auction that all passed (docs/rules.md 10.2): no hand was played and nobody scores
        final = [0] * n
    for row, seat in zip(rows, seats, strict=True):
        row["balance"] = final[seat]
    return rows


def _stack(rows: list[dict[str, Any]], shape: PolicyShape = STANDARD_SHAPE) -> dict[str, np.ndarray]:
    """A shard's entries: the rows' fields stacked, and the data's shape (:data:`SHAPE_ENTRY`)."""
    layout = shard_layout(shape)
    out = {SHAPE_ENTRY: np.array(shape, dtype=np.int64)}
    for name in FIELDS:
        dtype, row = layout[name]
        out[name] = np.array([r[name] for r in rows], dtype=dtype).reshape(len(rows), *row)
    return out


def shard_path(folder: str, chunk: int) -> str:
    return os.path.join(folder, f"shard_{chunk:05d}.npz")


def label_shard(settings: DataSettings, chunk: int) -> tuple[dict[str, np.ndarray], float]:
    """Shard ``chunk``'s arrays (its hands labelled) and the seconds it took; it depends only on the arguments."""
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    first = chunk * settings.chunk_hands
    search = search_agent(settings)  # one per shard: a policy is loaded once
    for index in range(first, first + settings.chunk_hands):
        rows.extend(label_hand(settings, index, search))
    return _stack(rows, settings.shape), time.perf_counter() - started


def label_shard_task(settings: DataSettings, chunk: int) -> tuple[dict[str, np.ndarray], float]:
    """:func:`label_shard` as a Ray task (``--ray``): on one torch thread; the driver writes the shard."""
    limit_threads()
    return label_shard(settings, chunk)


def write_labels(path: str, arrays: dict[str, np.ndarray]) -> int:
    """Write a label file (a shard's or a play-out file's entries) atomically: whole or absent; its number of
    decisions. The one writer of label files."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **arrays)
    return len(arrays["target"])


def write_shard(folder: str, chunk: int, arrays: dict[str, np.ndarray]) -> int:
    """Write shard ``chunk`` of a data folder (:func:`write_labels`); its number of decisions."""
    return write_labels(shard_path(folder, chunk), arrays)


def _make_shard(job: tuple[DataSettings, str, int]) -> tuple[int, int, float]:
    settings, folder, chunk = job
    arrays, seconds = label_shard(settings, chunk)
    return chunk, write_shard(folder, chunk, arrays), seconds


def _shards_on_ray(
    folder: str, settings: DataSettings, todo: list[int], ray: Any, log: Callable[[str], None]
) -> Iterator[tuple[int, int, float]]:
    """The shards ``todo`` labelled as Ray tasks (``ray``: a ``RayOptions``; training/common/ray_cluster.py:
    lost tasks are retried, and logged), each written here, by the driver, as it arrives: what
    :func:`_make_shard` returns."""
    jobs = [(chunk, (settings, chunk)) for chunk in todo]
    finished = ray.run_tasks(label_shard_task, jobs, describe=lambda c: f"shard {c}", log=log)
    for chunk, (arrays, seconds) in finished:
        yield chunk, write_shard(folder, chunk, arrays), seconds


def say(message: str) -> None:
    """The default progress log: a line on stdout, flushed (logs are often files)."""
    print(message, flush=True)


def _init_worker(nice: int) -> None:
    if nice:
        os.nice(nice)


def check_folder(folder: str, settings: DataSettings) -> bool:
    """Whether ``folder`` holds data of these ``settings`` already (False: no data yet); ValueError if it
    holds data made with other settings (its ``meta.json`` differs)."""
    meta_path = os.path.join(folder, "meta.json")
    if not os.path.lexists(meta_path):
        return False
    meta = read_json(meta_path, "a data folder's meta.json", MAX_META_BYTES)
    if not isinstance(meta, dict) or not isinstance(meta.get("fingerprints") or {}, dict):
        raise ValueError(f"{meta_path}: not a data folder's meta.json (an object of settings and fingerprints)")
    old = meta.get("settings")
    if old != settings.record():
        raise ValueError(
            f"{folder} holds data made with other settings ({old}); "
            f"use another folder or the same settings ({settings.record()})"
        )
    now = fingerprints(settings)
    for name, print_ in (meta.get("fingerprints") or {}).items():
        if name in now and now[name] != print_:
            raise ValueError(
                f"{folder} was labelled with another {name} file (fingerprint {print_}; the file now is "
                f"{now[name]}): the shards would mix two policies; label into another folder or restore the file"
            )
    return True


def repoint_policy(folder: str, old: str, new: str) -> bool:
    """Where the ``meta.json`` of ``folder`` records the policy file ``old`` (as ``behaviour`` ``ppo:old`` or as
    ``rollout_policy``), record ``new`` instead (the file was moved, its content is the same: the fingerprints
    still say so); returns whether it changed anything."""
    meta_path = os.path.join(folder, "meta.json")
    if not os.path.isfile(meta_path):
        return False
    meta = read_json(meta_path, "a data folder's meta.json", MAX_META_BYTES)
    settings = meta.get("settings") if isinstance(meta, dict) else None
    if not isinstance(settings, dict):
        return False
    changed = False
    for key, was, now in (("behaviour", f"ppo:{old}", f"ppo:{new}"), ("rollout_policy", old, new)):
        if settings.get(key) == was:
            settings[key], changed = now, True
    if changed:
        _write_meta(meta_path, meta)
    return changed


def _write_meta(path: str, meta: dict[str, Any]) -> None:
    """A data folder's ``meta.json``, atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=1)


def generate(
    folder: str,
    hands: int,
    settings: DataSettings,
    workers: int = 1,
    nice: int = 0,
    log: Callable[[str], None] | None = None,
    ray: Any = None,
) -> int:
    """Label ``hands`` hands into ``folder`` (resumable); returns the shards written now.

    ``hands`` is rounded up to whole shards. A folder made with other
    settings is refused (its ``meta.json`` differs). ``ray``: label the
    shards as Ray tasks instead of ``workers`` processes: an address
    (``""``: a local Ray instance) or a ``RayOptions``
    (training/common/ray_cluster.py: the address, how the code reaches the
    nodes, retries, a timeout); the driver writes every shard, so the data
    is the same.
    """
    log = log or say
    settings.validate()
    if hands < 1:
        raise ValueError(f"hands must be >= 1, got {hands}")
    meta_path = os.path.join(folder, "meta.json")
    meta = {"format": "sergeant-major-distill-data/1", "settings": settings.record()}
    prints = fingerprints(settings)
    if prints:
        meta["fingerprints"] = prints
    if not check_folder(folder, settings):
        os.makedirs(folder, exist_ok=True)
        _write_meta(meta_path, meta)
    for name in os.listdir(folder):  # temporary files of shards cut short by an earlier interruption
        if name.startswith(".shard_") and ".tmp" in name:
            os.remove(os.path.join(folder, name))
    chunks = -(-hands // settings.chunk_hands)
    todo = [c for c in range(chunks) if not os.path.exists(shard_path(folder, c))]
    log(f"{folder}: {chunks - len(todo)} of {chunks} shards present, {len(todo)} to label")
    jobs = [(settings, folder, c) for c in todo]
    started = time.perf_counter()
    rows = 0
    results: Iterator[tuple[int, int, float]]
    if not jobs:
        return 0
    pool = None
    if ray is not None:
        from training.common.ray_cluster import RayOptions

        results = _shards_on_ray(folder, settings, todo, RayOptions.of(ray), log)
    elif workers <= 1 and not nice:
        results = map(_make_shard, jobs)  # in this process: its niceness is never changed
    else:
        pool = spawn_pool(max(1, workers), _init_worker, (nice,))  # one torch thread per worker
        results = pool.imap_unordered(_make_shard, jobs)
    try:
        for done, (chunk, n, seconds) in enumerate(results, 1):
            rows += n
            elapsed = time.perf_counter() - started
            log(
                f"shard {chunk}: {n} decisions in {seconds:.1f} s; {done}/{len(jobs)} shards, "
                f"{rows / elapsed:.1f} decisions/s overall"
            )
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        close = getattr(results, "close", None)
        if close is not None:  # Ray: the tasks still running are cancelled
            close()
    return len(jobs)


def shard_names(folder: str) -> list[str]:
    """The shard files of a data folder, in order (a ValueError naming the folder if it is none)."""
    if not os.path.isdir(folder):
        raise ValueError(f"{folder}: no such data folder")
    return sorted(n for n in os.listdir(folder) if n.startswith("shard_") and n.endswith(".npz"))


def check_total_rows(paths: list[str]) -> int:
    """The decisions the shards ``paths`` declare together (each shard's header alone is read,
    :func:`shard_rows`); a :class:`ShardError` past :data:`MAX_DATA_ROWS`, before any of them is loaded."""
    total = 0
    for path in paths:
        total += shard_rows(path)
        if total > MAX_DATA_ROWS:
            raise ShardError(
                f"{path}: the shards up to this one declare {total} decisions; a fit loads at most {MAX_DATA_ROWS} "
                f"(fit on fewer folders or hands)"
            )
    return total


def load(folders: str | list[str], shape: PolicyShape | None = None) -> dict[str, np.ndarray]:
    """All shards of one or more data folders, concatenated (arrays as in the module docstring); with
    ``shape``, a shard of another shape is a :class:`ShardError` (see :func:`read_shard`). At most
    :data:`MAX_DATA_ROWS` decisions in all, checked before any shard is read (:func:`check_total_rows`)."""
    if isinstance(folders, str):
        folders = [folders]
    paths = []
    for folder in folders:
        names = shard_names(folder)
        if not names:
            raise ValueError(f"{folder}: no shard_*.npz files (generate data first)")
        paths += [os.path.join(folder, name) for name in names]
    check_total_rows(paths)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in FIELDS}
    for path in paths:
        shard = read_shard(path, shape)
        for field in FIELDS:
            parts[field].append(shard[field])
    return {name: np.concatenate(arrays) for name, arrays in parts.items()}


def _entry_header(
    stream: Any, path: str, field: str, layout: dict[str, tuple[np.dtype, tuple[int, ...]]]
) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype an entry's ``.npy`` header declares, checked against ``layout`` (:func:`shard_layout`;
    ``values`` f16 or f32) and MAX_SHARD_ROWS; the stream is left at the start of the data."""
    dtype, row = layout[field]
    shape, got = read_header(stream, f"{path}: {field}", ShardError)
    allowed = (dtype, np.dtype(np.float32)) if field == "values" else (dtype,)
    if got not in allowed or len(shape) != 1 + len(row) or tuple(shape[1:]) != row:
        want = f"{' or '.join(map(str, allowed))} [rows{''.join(f', {n}' for n in row)}]"
        raise ShardError(f"{path}: {field}: holds {got} {list(shape)}; a shard holds {want}")
    if shape[0] > MAX_SHARD_ROWS:
        raise ShardError(f"{path}: {field}: declares {shape[0]} rows; a shard holds at most {MAX_SHARD_ROWS}")
    return tuple(shape), got


def _read_entry(
    archive: zipfile.ZipFile, path: str, field: str, layout: dict[str, tuple[np.dtype, tuple[int, ...]]]
) -> np.ndarray:
    """One ``.npy`` entry, its header checked (:func:`_entry_header`) before the data is read; the data must be
    exactly as long as the header declares."""
    with archive.open(field + ".npy") as stream:
        array = np.empty(*_entry_header(stream, path, field, layout))
        size = array.nbytes
        got_bytes = stream.readinto(memoryview(array).cast("B")) if size else 0
        if got_bytes != size or stream.read(1):
            raise ShardError(f"{path}: {field}: the data is not the {size} bytes its header declares")
    return array


def _read_shape(archive: zipfile.ZipFile, path: str) -> PolicyShape:
    """The shape a shard records (its :data:`SHAPE_ENTRY`, within bounds), or the standard one if it records
    none (a shard written before shapes were recorded)."""
    if SHAPE_ENTRY + ".npy" not in archive.namelist():
        return STANDARD_SHAPE
    with archive.open(SHAPE_ENTRY + ".npy") as stream:
        shape, dtype = read_header(stream, f"{path}: shape", ShardError)
        if dtype != np.dtype(np.int64) or shape != (3,):
            raise ShardError(f"{path}: shape: holds {dtype} {list(shape)}; a shard holds int64 [3]")
        values = np.frombuffer(stream.read(24), dtype=np.int64)
    if len(values) != 3:
        raise ShardError(f"{path}: shape: the data is not the 24 bytes its header declares")
    obs, actions, players = (int(v) for v in values)
    if (
        players not in (3, 4)
        or actions not in (NUM_ACTIONS, MAX_ACTIONS)
        or not binary_size(players) < obs <= MAX_OBSERVATION
    ):
        raise ShardError(
            f"{path}: shape: {[obs, actions, players]} is not a data shape (observation entries "
            f"{binary_size(3) + 1}-{MAX_OBSERVATION}, 56 or 74 actions, 3 or 4 players)"
        )
    return PolicyShape(obs, actions, players)


def _open_shard(path: str) -> zipfile.ZipFile:
    """The shard ``path`` as a zip, if it is a regular file (``/dev/zero`` or a folder is a ShardError)."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as err:
        raise ShardError(f"{path}: not a readable data shard ({err.strerror})") from None
    if not regular:
        raise ShardError(f"{path}: not a regular file; a data shard is a .npz file")
    return zipfile.ZipFile(path)


def _check_entries(archive: zipfile.ZipFile, path: str) -> list[str]:
    """The shard's entries with one row per decision (:data:`FIELDS`, and those of :data:`PLAYOUT_FIELDS` it
    holds); a ShardError if it holds others or lacks one of FIELDS."""
    entries = sorted(archive.namelist())
    expected = sorted(f + ".npy" for f in FIELDS)
    more = {name + ".npy" for name in (*PLAYOUT_FIELDS, SHAPE_ENTRY, RULES_ENTRY)}
    if sorted(set(entries) - more) != expected:
        raise ShardError(f"{path}: not a data shard: its entries are {entries[:10]}, expected {expected}")
    return [*FIELDS, *(name for name in PLAYOUT_FIELDS if name + ".npy" in entries)]


def read_rules(archive: zipfile.ZipFile, path: str, error: Callable[[str], ValueError] = ShardError) -> RuleSet:
    """The rule set a label file records (its ``rules`` entry, within bounds; ``error`` makes the one line)."""
    from training.distill.config_playouts import labelled_rules

    with archive.open(RULES_ENTRY + ".npy") as stream:
        shape, dtype = read_header(stream, f"{path}: {RULES_ENTRY}", error)
        if dtype.kind != "U" or shape != () or dtype.itemsize > 4 * MAX_RULES_CHARS:
            raise error(f"{path}: rules: holds {dtype} {list(shape)}; a data file holds one text there")
        text = stream.read(dtype.itemsize + 1)
    if len(text) != dtype.itemsize:
        raise error(f"{path}: rules: the data is not the {dtype.itemsize} bytes its header declares")
    try:
        return labelled_rules(parse_json(str(np.frombuffer(text, dtype=dtype)[0]), f"{path}: rules"))
    except (JsonError, RulesError, TypeError) as err:
        raise error(f"{path}: rules: {err}") from None


def shard_rows(path: str) -> int:
    """The decisions a shard declares (its ``target`` entry's header, checked like :func:`read_shard`'s),
    without reading its data."""
    try:
        with _open_shard(path) as archive:
            _check_entries(archive, path)
            layout = shard_layout(_read_shape(archive, path))
            with archive.open("target.npy") as stream:
                return _entry_header(stream, path, "target", layout)[0][0]
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise ShardError(f"{path}: not a readable data shard ({err})") from None
    except ShardError:
        raise
    except ValueError as err:  # numpy's own header checks
        raise ShardError(f"{path}: not a data shard: {err}") from None


def _values_problem(arrays: dict[str, np.ndarray], shape: PolicyShape) -> str | None:
    """What is wrong with a shard's values (its layout already checked), or None: every target a legal action,
    every role a seat's, no infinite value, every legal move of a searched decision valued (NaN: not searched)."""
    target = arrays["target"].astype(np.int64)
    bad = np.flatnonzero((target < 0) | (target >= shape.action_count))
    if len(bad):
        return f"target: row {bad[0]} holds action {target[bad[0]]}; actions are 0-{shape.action_count - 1}"
    legal = unpack_legal(arrays["legal"], shape.action_count)
    bad = np.flatnonzero(~legal[np.arange(len(target)), target])
    if len(bad):
        return f"target: row {bad[0]} holds action {target[bad[0]]}, which its legal mask does not allow"
    players = shape.players or 3
    bad = np.flatnonzero((arrays["role"] < 0) | (arrays["role"] >= players))
    if len(bad):
        return f"role: row {bad[0]} holds {arrays['role'][bad[0]]}; roles are 0-{players - 1}"
    if np.isinf(arrays["values"]).any() or not np.isfinite(arrays["scalars"]).all():
        return "values or scalars hold infinite numbers (or scalars NaN)"
    if "phase" in arrays:
        bad = np.flatnonzero((arrays["phase"] < 0) | (arrays["phase"] > PLAY))
        if len(bad):
            return f"phase: row {bad[0]} holds {arrays['phase'][bad[0]]}; phases are 0-{PLAY}"
    if "results" in arrays:
        bad = np.flatnonzero(unfinite_legal(arrays["results"], legal))
        if len(bad):
            return f"results: row {bad[0]}: {NOT_FINITE.format(what='result')}"
    bad = np.flatnonzero(arrays["searched"].astype(bool) & unfinite_legal(arrays["values"], legal))
    if len(bad):
        row = int(bad[0])
        move = int(np.flatnonzero(legal[row] & ~np.isfinite(arrays["values"][row]))[0])
        return (
            f"values: row {row} is a searched decision whose legal move {move} holds "
            f"{float(arrays['values'][row, move])}; {NOT_FINITE.format(what='value')}"
        )
    return None


def read_shard(path: str, shape: PolicyShape | None = None) -> dict[str, np.ndarray]:
    """One label file's arrays (:data:`FIELDS`, and the :data:`PLAYOUT_FIELDS` it holds), every one with the
    same number of rows, of the shape the file records (and, with ``shape``, of that shape: the one a fit
    expects). A :class:`ShardError` for anything else (not a regular file, other entries, dtypes or shapes, data
    of another rule set's shape, more than MAX_SHARD_ROWS rows, a damaged file, a target that is not a legal
    action, a role that is no seat's, a phase that is none, infinite values), and at most the declared arrays'
    memory. The one reader of label files (:func:`read_labels` with their rule set)."""
    return _read_labels(path, shape, False)[0]


def read_labels(path: str) -> tuple[dict[str, np.ndarray], RuleSet]:
    """A play-out label file's arrays (:func:`read_shard`) and the rule set it records (refused if it records
    none, or one not of its shape)."""
    arrays, ruleset = _read_labels(path, None, True)
    assert ruleset is not None
    return arrays, ruleset


def _read_labels(path: str, shape: PolicyShape | None, rules: bool) -> tuple[dict[str, np.ndarray], RuleSet | None]:
    """:func:`read_shard`, and with ``rules`` the rule set the file records."""
    try:
        with _open_shard(path) as archive:
            fields = _check_entries(archive, path)
            found = _read_shape(archive, path)
            if shape is not None and tuple(found) != tuple(shape):
                raise ShardError(
                    f"{path}: holds positions of {found}; this fit is for {shape} (data of another rule set: "
                    "label data of the fit's rules, env.rules)"
                )
            ruleset = None
            if rules:
                if RULES_ENTRY + ".npy" not in archive.namelist():
                    raise ShardError(f"{path}: records no rule set; a play-out label file records one")
                ruleset = read_rules(archive, path)
                if tuple(PolicyShape.of(ruleset)) != tuple(found):
                    raise ShardError(f"{path}: its rule set {ruleset.name!r} is not of its shape {found}")
            layout = shard_layout(found)
            arrays = {field: _read_entry(archive, path, field, layout) for field in fields}
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise ShardError(f"{path}: not a readable data shard ({err})") from None
    except ShardError:
        raise
    except ValueError as err:  # numpy's own header checks
        raise ShardError(f"{path}: not a data shard: {err}") from None
    rows = {len(a) for a in arrays.values()}
    if len(rows) != 1:
        raise ShardError(f"{path}: the entries hold different numbers of rows ({sorted(rows)})")
    problem = _values_problem(arrays, found)
    if problem is not None:
        raise ShardError(f"{path}: {problem}; the shard is damaged")
    return arrays, ruleset


def _yes(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def main(argv: list[str] | None = None) -> int:
    """Command line: label hands into a data folder (resumable)."""
    import argparse

    from training.common.ray_cluster import RayOptions, add_ray_arguments

    parser = argparse.ArgumentParser(prog="python -m training.distill.data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="data folder (created; resumed if present)")
    parser.add_argument("--hands", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--nice", type=int, default=0, help="raise the workers' niceness by this much")
    add_ray_arguments(parser, "the shards")
    for field, default in DataSettings().model_dump().items():
        kind = (
            (lambda text: text.strip().lower() in ("1", "true", "yes", "on"))
            if isinstance(default, bool)
            else type(default)
        )
        parser.add_argument("--" + field.replace("_", "-"), type=kind, default=default)
    args = parser.parse_args(argv)
    try:
        settings = validate(DataSettings, {f: getattr(args, f) for f in DataSettings.model_fields}, "")
        check_output_path(args.out, "--out", folder=True)
        generate(args.out, args.hands, settings, workers=args.workers, nice=args.nice, ray=RayOptions.from_args(args))
    except ValueError as err:
        print(f"error: {err}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
