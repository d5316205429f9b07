"""The exchange, trump and discards learned from play-outs in the real deal (docs/results.md, "Play-outs in
the real deal").

``label``: a policy (default ``trained``) plays whole games on the compiled engine (the standard rules, or
``--rules``: any preset of 56 actions, three or four players), every seat its most probable legal move. At
every exchange, trump and discard decision with a choice (the decision types of ``--types``; ``play`` adds the
play of the tricks), each legal move is played out to the end of the hand *in the real deal* by the same
policy for every seat (each on its own observation, so nobody sees a hidden card) and the deciding seat's hand
balance is recorded: ``values[a]``. The real deal is a draw from the true distribution of the hidden cards
given what the seat knows, so ``values[a] - values[b]`` is an unbiased sample of the difference of the two
moves' values under the policy: one world per decision, no sampler, no search. The games go on with the
policy's own move. ``--roles middle`` labels only the decisions of the seat in that role (the others are played,
not played out): a third of the play-outs, for more data where a role needs it.

``fit``: a Q-network (the policy's hidden layers as the start, a fresh head) regressed on those values,
centred over the legal moves of each decision (only the differences between moves matter, and the deal's
luck, common to them all, cancels). The last tenth of each data file is held out; for it the script reports,
per decision type, the mean of ``values[argmax Q] - values[policy's move]``: the real-deal gain of taking
the Q-network's move, with its 95% interval. The network is written as a policy file whose logits are the
Q values, so ``mix:base=trained;discard=ppo:q.pt`` plays its discards and the duplicate A/B measures them.

``combine``: one policy file whose logits are ``--weight`` times a prior policy's logits plus the Q-network's
values in tricks (the two networks side by side in one wider MLP, exact): the prior's move unless the play-outs
rank another move higher by more than the prior's preference for its own.

``distil``: a copy of a (combined, wider) policy in a smaller network, learnt from its move probabilities in its
own self-play, so that the next round plays, plays out and combines at the smaller network's cost.

    python benchmarks/real_deal_playouts.py label --seed 21 --hands 18000 --out runs/playouts/s21.npz
    python benchmarks/real_deal_playouts.py fit --data runs/playouts/s21.npz,runs/playouts/s22.npz --out q.pt
    sergeant-major eval --agents 'mix:base=trained;discard=ppo:q.pt' trained heuristic --deals 3000 \\
        --seed 7 --start-balances=-1,-1,2

A data file (``np.savez``) holds one row per decision: ``obs`` f16 [789] (1016 with four players), ``mask``
int8 [56], ``values`` f32 [56] (NaN for illegal moves), ``results`` f32 [56] (the seat's result reward where
the play-out's hand ends the game: +1 won, -1 shared by the losers; 0 where the game goes on; absent in files
labelled before it was recorded), ``phase`` (0 exchange, 1 trump, 2 discard, 3 play), ``policy_move``; and
``rules``, the JSON of the rule set's options (files without it: the standard rules). ``fit --game-weight W``
values a move at its balance plus W times its result reward: the objective of whole games, where a hand that
reaches 12 tricks wins.
The fit, the merge and the combination take their rule set from the files and the prior; files of two rule
sets are not fitted together. The 74-action rule sets (bids, calls, assigned quotas, a kitty taken) are
refused: the Q-network's values are added to every decision, and those decisions are not labelled.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import math
import os
import sys
import time
import zipfile
import zlib
from collections.abc import Iterator

import numpy as np
import torch
from pydantic import field_validator, model_validator
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agents.ppo_agent import NumpyPolicy, PPOAgent, export_policy, policy_from_torch, recorded_rules  # noqa: E402
from sm_env.compiled.batch import VectorGame  # noqa: E402
from sm_env.core.episode import result_table  # noqa: E402
from sm_env.core.game import PHASE_NAMES, PLAY, role_names  # noqa: E402
from sm_env.core.rules import RulesError, RuleSet  # noqa: E402
from sm_env.files.atomic import atomic_path  # noqa: E402
from sm_env.files.json_files import JsonError, parse_json  # noqa: E402
from sm_env.observation import observation_size, observed_phases, observed_roles  # noqa: E402
from training.common.run_config import check_kind  # noqa: E402
from training.common.workers import spawn_pool  # noqa: E402
from training.common.yaml_config import (  # noqa: E402
    ConfigError,
    Number,
    Section,
    Text,
    Whole,
    load,
    save_config,
    setting,
)
from training.common.yaml_config import validate as validate_config  # noqa: E402
from training.vector.fixed_agents import FixedAgentError, PolicyOpponent, check_fixed_agent  # noqa: E402

LABELLED = (0, 1, 2)  # exchange, trump, discard (sm_env.core.game phase numbers): label's default
TYPES = {"exchange": 0, "trump": 1, "discard": 2, "play": PLAY}  # the decision types that can be labelled
GAMES = 512  # games played together
ROWS = 4096  # play-outs stepped together
PENDING = 300  # decisions gathered before their play-outs run
FIT_BATCH = 512  # decisions per step of the fit
MAX_HANDS = 50_000  # hands per data file: its rows are held in memory (about 40 decisions, 80 kB a hand of play)
MAX_DECISIONS = 3_000_000  # distil: decisions held in memory (1.6 kB each)
MAX_EPOCHS = 100  # passes of a fit, a merge or a copy over their data
STANDARD = RuleSet.from_any("standard")
RULES_KEY = "rules"  # a data file's rule set: the JSON of RuleSet.options() (absent in the first files: standard)
Q_SCALE = 4.0  # the Q-network regresses balances / 4; its outputs times this are tricks
_LIBC = ctypes.util.find_library("c")


def _rules(rules: RuleSet | str | dict) -> RuleSet:
    """The rule set of ``rules``, refused in one line unless every decision it has can be labelled: the
    rule sets of 56 actions, three or four players (the Q-network adds its values to every decision, and the
    bids, calls, quota assignments and kitty takes of the 74-action rule sets are not among :data:`TYPES`)."""
    ruleset = RuleSet.from_any(rules)
    if ruleset.num_actions != STANDARD.num_actions:
        raise RulesError(
            f"the rule set {ruleset.name!r} has {ruleset.num_actions} actions (bids, calls, "
            f"assigned quotas or a kitty taken); only rule sets of {STANDARD.num_actions} actions can be labelled"
        )
    return ruleset


def _policy(spec: str, rules: RuleSet = STANDARD) -> PPOAgent:
    """The policy of ``spec`` (``trained``, ``ppo:PATH`` or a path), refused in one line unless it is a policy
    file that plays ``rules`` (the checks of a trainer's fixed opponents; ``trained`` is the shipped policy of
    ``rules``)."""
    return check_fixed_agent(spec if spec == "trained" or spec.startswith("ppo:") else f"ppo:{spec}", rules)


def _trained_on(spec: str) -> RuleSet:
    """The rule set the policy file ``spec`` records (``trained`` and files that record none: standard)."""
    if spec == "trained":
        return STANDARD
    recorded = recorded_rules(PPOAgent(spec.removeprefix("ppo:")).meta)
    return _rules(recorded if recorded is not None else STANDARD)


def role_numbers(ruleset: RuleSet, roles: list[str] | tuple[str, ...] | None) -> list[int] | None:
    """The role numbers (0 dealer, 1 eldest, ...) of the role names ``roles`` (None: every role); a ValueError
    names the rule set's roles when one is unknown or none is given."""
    if roles is None:
        return None
    names = role_names(ruleset)
    if not roles or not set(roles) <= set(names):
        raise ValueError(f"roles must be some of {', '.join(names)}, got {list(roles)}")
    return [names.index(role) for role in roles]


def play_out(
    games: VectorGame, rollouts: VectorGame, policy: PolicyOpponent, slots: list[int], seats: np.ndarray, moves
) -> tuple[np.ndarray, np.ndarray]:
    """The balance of ``seats[j]`` at the end of the hand when ``moves[j]`` is played in the position of
    ``games``' slot ``slots[j]`` (copied into ``rollouts``) and the policy plays every move after it; and the
    seat's result reward (``sm_env.core.episode.result_rewards``: +1 for a win, -0.5 when another seat wins with
    three players) where that hand's end wins the game, else 0."""
    n = len(slots)
    out = np.full(n, np.nan, dtype=np.float32)
    results = np.zeros(n, dtype=np.float32)
    table = np.asarray(result_table(rollouts.num_players), dtype=np.float32)
    for start in range(0, n, ROWS):
        part = np.arange(start, min(n, start + ROWS))
        rows = np.arange(len(part))
        rollouts.copy_slots(games, np.asarray(slots)[part], rows)
        active = np.zeros(rollouts.num_games, dtype=np.bool_)
        active[rows] = True
        actions = np.zeros(rollouts.num_games, dtype=np.int64)
        actions[rows] = np.asarray(moves)[part]
        first = True
        while active.any():
            live = np.flatnonzero(active)
            if not first:
                masks = rollouts.legal_mask()[live]
                actions[live] = policy.act(rollouts, live, masks, rollouts.observe(rows=live))
            first = False
            hand = rollouts.hand_number
            rewards, done = rollouts.step(actions, active=active)
            ended = np.flatnonzero(active & (done | (rollouts.hand_number != hand)))
            out[part[ended]] = rewards[ended, seats[part[ended]]]
            results[part[ended]] = table[rollouts.winners[ended], seats[part[ended]]]
            active[ended] = False
    return out, results


def _give_back_memory() -> None:
    """Return freed heap memory to the system (glibc). The play-outs' batches shrink step by step, and glibc
    kept the freed buffers of every size: 14 GB after 30 minutes of labelling, 0.4 GB with this after each
    batch of play-outs."""
    libc = ctypes.CDLL(_LIBC) if _LIBC else None
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def label(
    policy_spec: str,
    seed: int,
    hands: int,
    out: str,
    labelled: tuple[int, ...] = LABELLED,
    rules: RuleSet | str | dict = "standard",
    roles: tuple[str, ...] | None = None,
) -> None:
    """Play ``hands`` hands or a few more (games of ``rules``, 30 hands at most, 512 games at a time)
    and label their decisions of the phases ``labelled`` (default: exchange, trump and discard) with real-deal
    play-outs (the module docstring); write them to ``out``. ``roles`` (role names, e.g. ``("middle",)``;
    default all) labels only the decisions of seats in those roles: the others are played, not played out, so
    a file of one role of three costs about a third of the play-outs."""
    ruleset = _rules(rules)
    chosen_roles = role_numbers(ruleset, roles)
    policy = PolicyOpponent(_policy(policy_spec, ruleset))
    torch.set_num_threads(1)
    slots = min(GAMES, hands)
    games = VectorGame(slots, ruleset, seed=seed, episode="game", max_hands=30)
    rollouts = VectorGame(ROWS, ruleset, seed=seed + 1, episode="game", max_hands=30)
    games.reset()
    rollouts.reset()
    rows: dict[str, list] = {"obs": [], "mask": [], "values": [], "results": [], "phase": [], "policy_move": []}
    snapshots = VectorGame(PENDING + slots, ruleset, seed=seed + 2, episode="game", max_hands=30)
    snapshots.reset()
    pending: list[tuple[int, int, int]] = []  # (snapshot slot, seat, row index)
    done_hands, start = 0, time.time()

    def flush() -> None:
        slots, seats, moves, where = [], [], [], []
        for slot, seat, row in pending:
            for move in np.flatnonzero(rows["mask"][row]):
                slots.append(slot)
                seats.append(seat)
                moves.append(move)
                where.append((row, move))
        values, results = play_out(snapshots, rollouts, policy, slots, np.asarray(seats), moves)
        for (row, move), value, result in zip(where, values, results, strict=True):
            rows["values"][row][move] = value
            rows["results"][row][move] = result
        pending.clear()
        _give_back_memory()

    while done_hands < hands:
        observations, masks = games.observe(), games.legal_mask()
        actions = policy.act(games, np.arange(slots), masks, observations)
        phases = observed_phases(observations, ruleset.num_players)
        wanted = np.isin(phases, labelled) & (masks.sum(axis=1) > 1)
        if chosen_roles is not None:
            wanted &= np.isin(observed_roles(observations, ruleset.num_players), chosen_roles)
        chosen = np.flatnonzero(wanted)
        if len(chosen):
            if len(pending) + len(chosen) > snapshots.num_games:
                flush()
            first = len(pending)
            snapshots.copy_slots(games, chosen, np.arange(first, first + len(chosen)))
            seats = games.current_player
            for j, slot in enumerate(chosen):
                pending.append((first + j, int(seats[slot]), len(rows["obs"])))
                rows["obs"].append(observations[slot].astype(np.float16))
                rows["mask"].append(masks[slot].copy())
                rows["values"].append(np.full(masks.shape[1], np.nan, dtype=np.float32))
                rows["results"].append(np.full(masks.shape[1], np.nan, dtype=np.float32))
                rows["phase"].append(phases[slot])
                rows["policy_move"].append(actions[slot])
        if len(pending) >= PENDING:
            flush()
        hand = games.hand_number
        _, done = games.step(actions)
        done_hands += int((done | (games.hand_number != hand)).sum())
    if pending:
        flush()
    arrays = {name: np.array(values) for name, values in rows.items()}
    arrays[RULES_KEY] = np.array(json.dumps(ruleset.options()))
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
    print(f"{done_hands} hands, {len(arrays['obs'])} decisions labelled, {time.time() - start:.0f} s -> {out}")


def _centred(q: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    q = torch.where(legal, q, torch.zeros_like(q))
    mean = q.sum(dim=1, keepdim=True) / legal.sum(dim=1, keepdim=True)
    return torch.where(legal, q - mean, torch.zeros_like(q))


def _log_probs(network: nn.Sequential, x: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The log-probabilities of ``network``'s moves on observations ``x``, the illegal moves masked out."""
    return torch.log_softmax(network(x).masked_fill(~legal, -1e9), dim=1)


def _network(spec: str, fresh_head: bool, rules: RuleSet = STANDARD) -> nn.Sequential:
    """The policy of ``spec`` (one for ``rules``) as a torch network (ReLU), its head replaced by a small fresh
    one if asked."""
    policy = _policy(spec, rules).policy
    layers: list[nn.Module] = []
    pairs = [*policy.hidden, policy.head]  # (w [in, out], b), NumpyPolicy's layout
    for k, (w, b) in enumerate(pairs):
        linear = nn.Linear(*w.shape)
        with torch.no_grad():
            if k == len(pairs) - 1 and fresh_head:
                linear.weight.mul_(0.1)
                linear.bias.zero_()
            else:
                linear.weight.copy_(torch.from_numpy(w.T))
                linear.bias.copy_(torch.from_numpy(b))
        layers += [linear, nn.ReLU()] if k < len(pairs) - 1 else [linear]
    return nn.Sequential(*layers)


DATA_KINDS = {"obs": "f", "mask": "biu", "values": "f", "results": "f", "phase": "iu", "policy_move": "iu"}
"""A data file's arrays and the numpy kinds of their dtypes (float, or bool / integer)."""
MAX_RULES_CHARS = 1 << 16  # a data file's rules entry: the JSON of a rule set's options (about 1 kB)


def _data_error(path: str, problem: str) -> SystemExit:
    return SystemExit(f"real_deal_playouts: {path}: {problem}")


def _npy_header(stream, path: str, name: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype an entry's ``.npy`` header declares (C order), the stream left at its data."""
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0)):
        raise _data_error(path, f"{name}: .npy format version {version} is not one np.savez writes")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(stream)  # a header longer than numpy's own limit is refused there
    if fortran:
        raise _data_error(path, f"{name}: is in Fortran order; the label's np.savez writes C order")
    return tuple(shape), dtype


class DataFile:
    """A play-out data file (module docstring) opened within bounds: a regular zip file of uncompressed
    ``.npy`` entries (``np.savez``), each declaring the dtype kind of :data:`DATA_KINDS` and the file's rows,
    ``obs`` of the rule set's observation size and the moves' arrays of its action count, and declaring no
    more data than the entry holds (checked from the headers before anything is read: memory is bounded by
    the file's real size); ``rules`` read by the bounded JSON reader. Anything else is one line (SystemExit)."""

    def __init__(self, path: str) -> None:
        self.path = path
        if not os.path.isfile(path):
            raise _data_error(path, "not a regular file; a data file is the .npz that label writes")
        try:
            self.archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as err:
            raise _data_error(path, f"not a readable data file ({err})") from None
        try:
            self._scan()
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
            self.archive.close()
            raise _data_error(path, f"not a readable data file ({err})") from None
        except ValueError as err:  # numpy's own header checks
            self.archive.close()
            raise _data_error(path, f"not a data file: {err}") from None
        except SystemExit:
            self.archive.close()
            raise

    def _scan(self) -> None:
        path = self.path
        names = {info.filename.removesuffix(".npy"): info for info in self.archive.infolist()}
        required = set(DATA_KINDS) - {"results"}
        if not required <= set(names) <= set(DATA_KINDS) | {RULES_KEY}:
            raise _data_error(
                path, f"its entries are {sorted(names)[:10]}; a data file holds {sorted(required)}, results, rules"
            )
        for info in names.values():
            if info.compress_type != zipfile.ZIP_STORED:
                raise _data_error(path, f"{info.filename} is compressed; label writes np.savez (uncompressed) files")
        self.ruleset = self._read_rules() if RULES_KEY in names else STANDARD
        obs, actions = observation_size(self.ruleset), self.ruleset.num_actions
        self.headers: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for name in sorted(set(names) - {RULES_KEY}):
            with self.archive.open(name + ".npy") as stream:
                shape, dtype = _npy_header(stream, path, name)
                left = names[name].file_size - stream.tell()
            row = {"obs": (obs,), "mask": (actions,), "values": (actions,), "results": (actions,)}.get(name, ())
            if dtype.kind not in DATA_KINDS[name] or dtype.itemsize > 8 or len(shape) != 1 + len(row):
                kind = "numbers" if DATA_KINDS[name] == "f" else "whole numbers"
                rank = "a row" if row else "one"
                raise _data_error(path, f"{name}: holds {dtype} {list(shape)}; a data file holds {kind}, {rank} a move")
            if shape[1:] != row:
                raise _data_error(
                    path, f"{name}: holds rows of {list(shape[1:])}; the rule set {self.ruleset.name!r} has {list(row)}"
                )
            if math.prod(shape) * dtype.itemsize != left:
                raise _data_error(
                    path, f"{name}: declares {math.prod(shape)} entries of {dtype}; the file holds {left} bytes of it"
                )
            self.headers[name] = (shape, dtype)
        rows = {shape[0] for shape, _ in self.headers.values()}
        if len(rows) != 1:
            counts = ", ".join(f"{name} {shape[0]}" for name, (shape, _) in self.headers.items())
            raise _data_error(path, f"its arrays hold different numbers of rows ({counts})")
        self.rows = rows.pop()

    def _read_rules(self) -> RuleSet:
        with self.archive.open(RULES_KEY + ".npy") as stream:
            shape, dtype = _npy_header(stream, self.path, RULES_KEY)
            if dtype.kind != "U" or shape != () or dtype.itemsize > 4 * MAX_RULES_CHARS:
                raise _data_error(self.path, f"rules: holds {dtype} {list(shape)}; a data file holds one text there")
            text = stream.read(dtype.itemsize + 1)
        if len(text) != dtype.itemsize:
            raise _data_error(self.path, f"rules: the data is not the {dtype.itemsize} bytes its header declares")
        try:
            return _rules(parse_json(str(np.frombuffer(text, dtype=dtype)[0]), f"{self.path}: rules"))
        except (JsonError, RulesError, TypeError) as err:
            raise _data_error(self.path, f"rules: {err}") from None

    def read(self, name: str, out: np.ndarray) -> None:
        """Read the array ``name`` into ``out`` (of the shape and dtype the scan checked)."""
        with self.archive.open(name + ".npy") as stream:
            _npy_header(stream, self.path, name)
            got = stream.readinto(memoryview(out).cast("B")) if out.nbytes else 0
        if got != out.nbytes:
            raise _data_error(self.path, f"{name}: the data is not the {out.nbytes} bytes its header declares")

    def close(self) -> None:
        self.archive.close()


def _stacked(files: list[DataFile], name: str) -> np.ndarray:
    """The array ``name`` of every file, end to end, each file's read straight into its place: the memory it
    takes is the result alone (the files' dtypes of ``name`` agree)."""
    shape, dtype = files[0].headers[name]
    out = np.empty((sum(f.rows for f in files), *shape[1:]), dtype=dtype)
    start = 0
    for f in files:
        f.read(name, out[start : start + f.rows])
        start += f.rows
    return out


def _rows_problem(rows: dict[str, np.ndarray], actions: int) -> tuple[int, str] | None:
    """The first row whose values the fit cannot use and why, or None: a mask of 0 and 1 with a legal move,
    a decision type of :data:`TYPES`, the policy's move legal, the legal moves' values (and result rewards)
    finite."""
    mask = rows["mask"]
    legal = mask.astype(bool)
    checks = [
        (((mask != 0) & (mask != 1)).any(axis=1) | ~legal.any(axis=1), "its mask is not 0 and 1 with a legal move"),
        (~np.isin(rows["phase"], list(TYPES.values())), f"its phase is none of {sorted(TYPES.values())}"),
        ((rows["policy_move"] < 0) | (rows["policy_move"] >= actions), f"its policy_move is no action 0-{actions - 1}"),
    ]
    for name in ("values", "results"):
        if name in rows:
            checks.append(((legal & ~np.isfinite(rows[name])).any(axis=1), f"a legal move's {name[:-1]} is not finite"))
    for bad, why in checks:
        if bad.any():
            return int(np.argmax(bad)), why
    move = rows["policy_move"].astype(np.int64)
    illegal = ~legal[np.arange(len(move)), move]
    if illegal.any():
        return int(np.argmax(illegal)), "its policy_move is not a legal move"
    return None


def _load(data: list[str], results: bool = True) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, RuleSet]:
    """The labelled rows of ``data`` (one dict of arrays; the result rewards only if ``results``), the training
    rows, the held-out rows (the last tenth of each file: a file's decisions come hand after hand, so few hands
    straddle the cut) and the rule set the files were labelled on (one for all; refused in one line if they
    differ)."""
    missing = [path for path in data if not os.path.lexists(path)]
    if missing:
        raise SystemExit(f"real_deal_playouts: no data file {', '.join(map(repr, missing))} (label makes them)")
    files: list[DataFile] = []
    try:
        for path in data:
            files.append(DataFile(path))
        found = {f.path: f.ruleset for f in files}
        if len({json.dumps(ruleset.options()) for ruleset in found.values()}) > 1:
            named = ", ".join(f"{path}: {ruleset.name}" for path, ruleset in found.items())
            raise SystemExit(f"real_deal_playouts: the data files were labelled on different rule sets ({named})")
        names = ["obs", "mask", "values", "phase", "policy_move"]
        if results and all("results" in f.headers for f in files):
            names.append("results")  # the files labelled since the result rewards were recorded
        for name in names:
            dtypes = sorted({str(f.headers[name][1]) for f in files})
            if len(dtypes) > 1:
                raise SystemExit(f"real_deal_playouts: the data files hold {name} of different dtypes {dtypes}")
        rows = {name: _stacked(files, name) for name in names}
    finally:
        for f in files:
            f.close()
    sizes = [f.rows for f in files]
    starts = np.cumsum([0, *sizes])
    problem = _rows_problem(rows, files[0].ruleset.num_actions)
    if problem is not None:
        row, why = problem
        k = int(np.searchsorted(starts, row, side="right")) - 1
        raise _data_error(data[k], f"row {row - starts[k]}: {why}; the file is damaged")
    held = np.concatenate([np.arange(starts[i] + int(0.9 * sizes[i]), starts[i + 1]) for i in range(len(files))])
    return rows, np.setdiff1d(np.arange(len(rows["obs"])), held), held, files[0].ruleset


def move_values(rows: dict[str, np.ndarray], game_weight: float, data: list[str]) -> np.ndarray:
    """The value of each labelled move in tricks: its balance, plus ``game_weight`` times its result reward
    where the play-out's hand ended the game (refused in one line if the files of ``data`` lack the results)."""
    if not game_weight:
        return rows["values"]
    if "results" not in rows:
        raise SystemExit(
            f"fit: a game weight of {game_weight} needs the result rewards, which some of {', '.join(data)} lack "
            "(files labelled before they were recorded): label them again, or fit with a game weight of 0"
        )
    return rows["values"] + np.float32(game_weight) * rows["results"]


def _q_moves(net: nn.Sequential, obs: np.ndarray, legal: np.ndarray, own: np.ndarray, margin: float) -> np.ndarray:
    """The network's best legal move where its value is more than ``margin`` tricks above that of ``own``
    (the policy's move), else ``own``."""
    out = own.copy()
    with torch.no_grad():
        for i in range(0, len(obs), 8192):
            q = net(torch.from_numpy(obs[i : i + 8192].astype(np.float32))).numpy() * Q_SCALE  # in tricks
            q[~legal[i : i + 8192]] = -np.inf
            best = q.argmax(axis=1)
            rows = np.arange(len(q))
            better = q[rows, best] > q[rows, own[i : i + 8192]] + margin
            out[i : i + 8192][better] = best[better]
    return out


def _batch_rows(rng: np.random.Generator, rows: np.ndarray, epochs: int, start: float) -> Iterator[np.ndarray]:
    """``epochs`` passes over ``rows`` in random order, :data:`FIT_BATCH` of them at a time (sorted; a last
    partial batch is dropped); prints the end of each pass with the seconds since ``start``."""
    for epoch in range(epochs):
        order = rng.permutation(rows)
        for i in range(0, len(order) - FIT_BATCH + 1, FIT_BATCH):
            yield np.sort(order[i : i + FIT_BATCH])
        print(f"epoch {epoch + 1}/{epochs}: {time.time() - start:.0f} s", flush=True)


def _train(net: nn.Sequential, batches, steps: int, learning_rate: float) -> None:
    """Adam over ``batches`` (an iterator of functions giving the loss), the rate decaying linearly to 0."""
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, weight_decay=1e-5)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1 - step / steps))
    for loss_of in batches:
        loss = loss_of()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()


def fit(
    data: list[str], init: str, out: str, epochs: int, learning_rate: float, seed: int, game_weight: float = 0.0
) -> None:
    """Fit the Q-network on ``data``, report the held-out real-deal gains per decision type (and with a margin
    over the policy's move), write the network to ``out`` as a policy file (module docstring). With
    ``game_weight`` W the value of a move is its balance plus W times its result reward (a hand that wins the
    game: +1; one that another seat wins: -1 shared by the losers; otherwise 0)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows, train, held, ruleset = _load(data, results=game_weight > 0)
    if len(train) < FIT_BATCH:
        raise SystemExit(
            f"fit: {len(train)} training decisions in {', '.join(data)}, fewer than one batch of {FIT_BATCH}"
        )
    rows["values"] = move_values(rows, game_weight, data)
    legal = rows["mask"].astype(bool)
    values = np.nan_to_num(rows["values"])
    values /= Q_SCALE  # balances run about -8..+8
    net = _network(init, fresh_head=True, rules=ruleset)

    def batches():
        for idx in _batch_rows(rng, train, epochs, start):
            x, m = torch.from_numpy(rows["obs"][idx].astype(np.float32)), torch.from_numpy(legal[idx])
            y = torch.from_numpy(values[idx])
            yield lambda x=x, m=m, y=y: ((_centred(net(x), m) - _centred(y, m)) ** 2).sum() / m.sum()

    start = time.time()
    _train(net, batches(), epochs * (len(train) // FIT_BATCH), learning_rate)
    own, kinds, real = rows["policy_move"][held].astype(np.int64), rows["phase"][held], rows["values"][held]
    valued = f"balance + {game_weight:g} x result reward" if game_weight else "balance"
    print(f"held out: {len(held)} decisions; real-deal gain ({valued}) of the Q-network's move over the policy's:")
    for margin in (0.0, 0.1, 0.2):
        choice = _q_moves(net, rows["obs"][held], legal[held], own, margin)
        gain = real[np.arange(len(held)), choice] - real[np.arange(len(held)), own]
        for kind in TYPES.values():
            sel = kinds == kind
            if sel.any():
                half = 1.96 * gain[sel].std() / np.sqrt(sel.sum())
                print(
                    f"  margin {margin:.1f}  {PHASE_NAMES[kind]:<9} {sel.sum():>7} decisions  {gain[sel].mean():+.4f} "
                    f"+- {half:.4f}  (move changed in {(choice[sel] != own[sel]).mean():.1%})"
                )
                if game_weight:
                    results = rows["results"][held]
                    won = results[np.arange(len(held)), choice] - results[np.arange(len(held)), own]
                    half = 1.96 * won[sel].std() / np.sqrt(sel.sum())
                    print(f"{'':24}of which the result reward: {won[sel].mean():+.5f} +- {half:.5f}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer="real_deal_playouts")
    print(f"wrote {out}")


def merge(
    data: list[str],
    init: str,
    teacher: str,
    kinds: list[str],
    margin: float,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
) -> None:
    """One policy network: ``init`` fine-tuned so that its moves of the decision types ``kinds`` on ``data``'s
    decisions are the Q-network ``teacher``'s (where it is ``margin`` tricks better than ``init``'s own move),
    its other exchange, trump and discard moves its own, while its play keeps ``init``'s move
    probabilities (cross-entropy to ``init``'s distribution on as many play decisions of ``init``'s self-play).
    Reports the agreement on the held-out rows; writes ``out``."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows, train, held, ruleset = _load(data, results=False)
    legal = rows["mask"].astype(bool)
    q_net, start_net, net = (_network(spec, False, ruleset) for spec in (teacher, init, init))
    own = rows["policy_move"].astype(np.int64)
    taught = np.isin(rows["phase"], [PHASE_NAMES.index(kind) for kind in kinds])
    target = np.where(taught, _q_moves(q_net, rows["obs"], legal, own, margin), own)
    play_obs, play_legal = _play_decisions(init, len(rows["obs"]), seed, ruleset)
    play_held = np.arange(len(play_obs) - len(play_obs) // 10, len(play_obs))
    play_train = np.arange(play_held[0])
    batch = 512

    def batches():
        for epoch in range(epochs):
            order, play_order = rng.permutation(train), rng.permutation(play_train)
            for i in range(0, min(len(order), len(play_order)) - batch + 1, batch):
                a, b = np.sort(order[i : i + batch]), np.sort(play_order[i : i + batch])
                x, m = torch.from_numpy(rows["obs"][a].astype(np.float32)), torch.from_numpy(legal[a])
                y = torch.from_numpy(target[a])
                px, pm = torch.from_numpy(play_obs[b]), torch.from_numpy(play_legal[b])
                with torch.no_grad():
                    keep = _log_probs(start_net, px, pm).exp()

                def loss_of(x=x, m=m, y=y, px=px, pm=pm, keep=keep) -> torch.Tensor:
                    moved = -_log_probs(net, x, m).gather(1, y[:, None]).mean()
                    kept = -(keep * _log_probs(net, px, pm)).sum(dim=1).mean()
                    return moved + kept

                yield loss_of
            print(f"epoch {epoch + 1}/{epochs}: {time.time() - start:.0f} s", flush=True)

    start = time.time()
    _train(net, batches(), epochs * (min(len(train), len(play_train)) // batch), learning_rate)
    with torch.no_grad():
        x, m = torch.from_numpy(rows["obs"][held].astype(np.float32)), torch.from_numpy(legal[held])
        moves = _log_probs(net, x, m).argmax(dim=1).numpy()
        px, pm = torch.from_numpy(play_obs[play_held]), torch.from_numpy(play_legal[play_held])
        moved_play, start_play = _log_probs(net, px, pm).argmax(dim=1), _log_probs(start_net, px, pm).argmax(dim=1)
        same_play = (moved_play == start_play).float().mean()
    for kind in LABELLED:
        sel = rows["phase"][held] == kind
        if sel.any():
            agree = (moves[sel] == target[held][sel]).mean()
            print(f"  {PHASE_NAMES[kind]:<9} held out: the teacher's move in {agree:.1%}")
    print(f"  play      held out: {init}'s move in {float(same_play):.1%}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer="real_deal_playouts merge")
    print(f"wrote {out}")


def combine(prior: str, teacher: str, weight: float, out: str) -> None:
    """One policy network whose logits are ``weight`` times ``prior``'s logits plus the Q-network ``teacher``'s
    values in tricks: the prior's move unless the real-deal values rank another move higher by more than the
    prior's preference for its own (in tricks, ``weight`` per unit of log-probability). Exact, no training: the two
    networks side by side in one wider MLP (first layers stacked, the next ones block-diagonal, the heads summed),
    so it loads and plays as any policy file. Writes ``out``."""
    ruleset = _trained_on(prior)
    a, q = _policy(prior, ruleset).policy, _policy(teacher, ruleset).policy
    if len(a.hidden) != len(q.hidden) or a.activation != "relu" or q.activation != "relu":
        raise SystemExit(f"combine: needs two ReLU networks of the same depth, got {a.net_arch} and {q.net_arch}")
    hidden = []  # (weight [out, in], bias), NumpyPolicy's constructor layout
    for k, ((wa, ba), (wq, bq)) in enumerate(zip(a.hidden, q.hidden, strict=True)):
        if k == 0:
            w = np.concatenate([wa.T, wq.T])
        else:
            w = np.zeros((wa.shape[1] + wq.shape[1], wa.shape[0] + wq.shape[0]), dtype=np.float32)
            w[: wa.shape[1], : wa.shape[0]], w[wa.shape[1] :, wa.shape[0] :] = wa.T, wq.T
        hidden.append((w, np.concatenate([ba, bq])))
    head = (
        np.concatenate([weight * a.head[0].T, Q_SCALE * q.head[0].T], axis=1),
        weight * a.head[1] + Q_SCALE * q.head[1],
    )
    export_policy(NumpyPolicy(hidden, head, "relu"), out, rules=ruleset, trainer="real_deal_playouts combine")
    print(f"wrote {out}: {weight} x {prior} + {teacher} (hidden layers {[w.shape[0] for w, _ in hidden]})")


def _play_decisions(spec: str, count: int, seed: int, rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """``count`` play decisions with a choice from the self-play of ``spec`` (observations, bool masks)."""
    obs, legal, _ = _decisions(spec, count, seed, (PLAY,), rules)
    return obs.astype(np.float32), legal


def _decisions(
    spec: str, count: int, seed: int, phases: tuple[int, ...], rules: RuleSet = STANDARD
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` decisions with a choice, of the ``phases``, from the self-play of ``spec`` in whole games of
    ``rules`` (30 hands at most): observations (f16), bool masks, phases."""
    policy = PolicyOpponent(_policy(spec, rules))
    games = VectorGame(GAMES, rules, seed=seed + 1000, episode="game", max_hands=30)
    games.reset()
    obs, legal, kinds, found = [], [], [], 0
    while found < count:
        observations, masks = games.observe(), games.legal_mask()
        phase = observed_phases(observations, rules.num_players)
        chosen = np.flatnonzero(np.isin(phase, phases) & (masks.sum(axis=1) > 1))
        obs.append(observations[chosen].astype(np.float16))
        legal.append(masks[chosen].astype(bool))
        kinds.append(phase[chosen])
        found += len(chosen)
        games.step(policy.act(games, np.arange(GAMES), masks, observations))
    return np.concatenate(obs)[:count], np.concatenate(legal)[:count], np.concatenate(kinds)[:count]


def distil(
    teacher: str,
    init: str,
    decisions: int,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
    rules: RuleSet | str | dict = "standard",
) -> None:
    """A copy of the policy ``teacher`` in the network of ``init`` (its shape and weights as the start): the
    move probabilities of ``teacher`` on ``decisions`` decisions of its own self-play under ``rules`` (every
    decision type), learnt by the KL divergence. Keeps a combined policy (``combine``) from growing wider with
    each round: the copy plays, is played out and is the next prior. Reports the held-out agreement of the two policies'
    most probable moves per decision type; writes ``out``."""
    ruleset = _rules(rules)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    start = time.time()
    obs, legal, kinds = _decisions(teacher, decisions, seed, tuple(TYPES.values()), ruleset)
    print(f"{len(obs)} decisions of {teacher}'s self-play: {time.time() - start:.0f} s", flush=True)
    teacher_net, net = _network(teacher, False, ruleset), _network(init, False, ruleset)

    def log_probs(x: np.ndarray, m: np.ndarray, network: nn.Sequential) -> torch.Tensor:
        return _log_probs(network, torch.from_numpy(x.astype(np.float32)), torch.from_numpy(m))

    held = np.arange(len(obs) - len(obs) // 10, len(obs))
    train = np.arange(held[0])

    def batches():
        for idx in _batch_rows(rng, train, epochs, start):
            x, m = obs[idx], legal[idx]
            with torch.no_grad():
                target = log_probs(x, m, teacher_net)

            def loss_of(x=x, m=m, target=target) -> torch.Tensor:
                gap = (target - log_probs(x, m, net)).masked_fill(~torch.from_numpy(m), 0.0)
                return (target.exp() * gap).sum(dim=1).mean()

            yield loss_of

    _train(net, batches(), epochs * (len(train) // FIT_BATCH), learning_rate)
    with torch.no_grad():
        same = np.concatenate(
            [
                (
                    log_probs(obs[i], legal[i], net).argmax(1) == log_probs(obs[i], legal[i], teacher_net).argmax(1)
                ).numpy()
                for i in np.array_split(held, max(1, len(held) // 8192))
            ]
        )
    for kind in TYPES.values():
        sel = kinds[held] == kind
        if sel.any():
            agree = same[sel].mean()
            print(f"  {PHASE_NAMES[kind]:<9} held out {sel.sum():>7}: the teacher's most probable move in {agree:.1%}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer="real_deal_playouts distil")
    print(f"wrote {out}")


class LabelGroup(Section):
    """Label files made alike: one file ``<seed>.npz`` per seed."""

    seeds: list[Whole] = setting(lambda: [0], "one data file per seed", min_length=1, max_length=1000)
    hands: Whole = setting(6000, "hands played per file", ge=1, le=MAX_HANDS)
    types: list[Text] = setting(lambda: ["play"], f"decision types labelled, of {', '.join(TYPES)}")
    policy: Text | None = setting(None, "the policy that plays and is played out (null: the run's)")
    roles: list[Text] | None = setting(None, "label only these roles' decisions, e.g. [middle] (null: every role)")

    @model_validator(mode="after")
    def _known_types(self) -> LabelGroup:
        if not self.types or not set(self.types) <= set(TYPES):
            raise ValueError(f"types must be some of {', '.join(TYPES)}, got {self.types}")
        return self


class Student(Section):
    """The optional first stage of a run: ``distil`` the run's policy into a smaller network, which then plays."""

    init: Text = setting("agents/policies/standard_v4.pt", "the policy whose network (shape, weights) starts the copy")
    decisions: Whole = setting(2_000_000, "decisions of the policy's self-play", ge=FIT_BATCH * 10, le=MAX_DECISIONS)
    epochs: Whole = setting(4, "passes over them", ge=1, le=MAX_EPOCHS)
    learning_rate: Number = setting(1e-4, "Adam's rate, decaying linearly to 0", gt=0)


class RunConfig(Section):
    """The stages of one run (``run --config``): (copy the policy into a smaller network,) label the groups, fit
    the Q-network, combine it with the policy (or its copy)."""

    kind: Text = setting("playouts", "what runs this file: playouts (training.common.run_config.CONFIG_KINDS)")
    name: Text = setting("real_deal", "run folder <output_dir>/<name>")
    output_dir: Text = setting("runs", "where run folders go")
    workers: Whole = setting(2, "labelling processes (one data file each at a time)", ge=1, le=64)
    policy: Text = setting("trained", "the policy that plays, is played out, starts the Q-network and is the prior")
    rules: Text = setting("standard", "the rule preset played (one of 56 actions, three or four players)")
    student: Student | None = setting(
        None, "first copy `policy` into a smaller network (student.pt), which then plays in its place (null: no copy)"
    )
    labels: list[LabelGroup] = setting(lambda: [LabelGroup()], "the data files: groups of seeds")
    epochs: Whole = setting(4, "the fit's passes over the data", ge=1, le=MAX_EPOCHS)
    learning_rate: Number = setting(3e-4, "the fit's Adam rate, decaying linearly to 0", gt=0)
    seed: Whole = setting(0, "the fit's seed")
    q_init: Text | None = setting(
        None, "the policy whose hidden layers start the Q-network (null: the one that plays; its size sets the cost)"
    )
    game_weight: Number = setting(
        0.0, "the fit: tricks per unit of result reward (a game won +1, lost -0.5 with three players)", ge=0, le=100
    )
    weight: Number = setting(1.0, "combine: tricks per unit of the policy's logits", ge=0, le=1000)

    @field_validator("kind")
    @classmethod
    def _own_kind(cls, value: str) -> str:
        return check_kind(value, "playouts")

    @field_validator("rules")
    @classmethod
    def _labelled_rules(cls, rules: str) -> str:
        _rules(rules)  # a RulesError (a ValueError) says what is wrong and what is allowed
        return rules

    @model_validator(mode="after")
    def _known_roles(self) -> RunConfig:
        for group in self.labels:
            role_numbers(_rules(self.rules), group.roles)  # checked before any labelling
        return self


LabelGroup.model_rebuild()  # the annotations resolved here: the tests load this script under another name
Student.model_rebuild()
RunConfig.model_rebuild()


def load_run_config(path: str, overrides: list[str] | None = None) -> RunConfig:
    """Read, override (``KEY=VALUE``) and validate a run config; a ConfigError names the key at fault."""
    return load(lambda data, source: validate_config(RunConfig, data, source), path, overrides)


def _label_job(job: tuple[str, int, int, str, tuple[int, ...], str, tuple[str, ...] | None]) -> str:
    label(*job)
    return job[3]


def run(config: RunConfig) -> None:
    """Every stage of ``config`` in its run folder, each skipped when its output is there (a killed run goes on
    where it stopped: data files are written whole or not at all): ``student.pt`` (when ``student`` is set: the
    policy's copy that then plays in its place), the label files, ``q.pt`` (delete it to fit
    again on other labels), ``policy.pt`` (always written again: the combination takes a second)."""
    folder = os.path.join(config.output_dir, config.name)
    os.makedirs(os.path.join(folder, "labels"), exist_ok=True)
    save_config(config, os.path.join(folder, "config.yaml"))
    if config.q_init is not None:  # read only by the fit, hours later: a wrong one is refused now
        _policy(config.q_init, _rules(config.rules))
    player = config.policy
    if config.student is not None:
        player = os.path.join(folder, "student.pt")
        if not os.path.exists(player):
            student = config.student
            distil(
                config.policy,
                student.init,
                student.decisions,
                player,
                student.epochs,
                student.learning_rate,
                config.seed,
                config.rules,
            )
    files, jobs = [], []
    for group in config.labels:
        for seed in group.seeds:
            path = os.path.join(folder, "labels", f"{seed}.npz")
            if path in files:
                raise SystemExit(f"run: label seed {seed} is listed twice (one data file per seed)")
            files.append(path)
            if not os.path.exists(path):
                policy = player if group.policy is None else group.policy
                types = tuple(TYPES[t] for t in group.types)
                roles = None if group.roles is None else tuple(group.roles)
                jobs.append((policy, seed, group.hands, path, types, config.rules, roles))
    print(f"{len(files) - len(jobs)} of {len(files)} label files there; labelling {len(jobs)}", flush=True)
    if len(jobs) == 1 or (jobs and config.workers == 1):
        for job in jobs:
            print(f"labelled {_label_job(job)}", flush=True)
    elif jobs:
        # the project's pool: one thread a worker, and no worker outlives this process (kill -9 included)
        with spawn_pool(min(config.workers, len(jobs)), maxtasksperchild=1) as pool:
            for done in pool.imap_unordered(_label_job, jobs):
                print(f"labelled {done}", flush=True)
    q_path, out = os.path.join(folder, "q.pt"), os.path.join(folder, "policy.pt")
    if not os.path.exists(q_path):
        q_init = player if config.q_init is None else config.q_init
        fit(files, q_init, q_path, config.epochs, config.learning_rate, config.seed, config.game_weight)
    combine(player, q_path, config.weight, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="play hands and label their exchange, trump and discards")
    lab.add_argument("--policy", default="trained", help="agent spec of the policy (trained or ppo:PATH)")
    lab.add_argument("--seed", type=int, default=0)
    lab.add_argument("--hands", type=int, default=1000, help="hands to play (all slots together)")
    lab.add_argument("--out", required=True, help="data file (.npz)")
    lab.add_argument("--types", default="exchange,trump,discard", help=f"decision types labelled, of {','.join(TYPES)}")
    lab.add_argument("--rules", default="standard", help="the rule preset played (56 actions, three or four players)")
    lab.add_argument("--roles", default=None, help="label only these roles' decisions, e.g. middle (default: all)")
    fitter = sub.add_parser("fit", help="fit the Q-network on labelled files")
    fitter.add_argument("--data", required=True, help="comma-separated data files")
    fitter.add_argument("--init", default="trained", help="policy whose hidden layers start the network")
    fitter.add_argument("--out", required=True, help="policy file to write")
    fitter.add_argument("--epochs", type=int, default=4)
    fitter.add_argument("--learning-rate", type=float, default=3e-4)
    fitter.add_argument("--seed", type=int, default=0)
    fitter.add_argument(
        "--game-weight", type=float, default=0.0, help="tricks per unit of result reward where a hand ends the game"
    )
    merger = sub.add_parser("merge", help="one policy: the Q-network's exchange, trump and discards, the play kept")
    merger.add_argument("--data", required=True, help="comma-separated data files (the fit's)")
    merger.add_argument("--init", default="trained", help="the policy to fine-tune")
    merger.add_argument("--teacher", required=True, help="the Q-network written by fit")
    merger.add_argument("--types", default="exchange,trump,discard", help="decision types taken from the teacher")
    merger.add_argument("--margin", type=float, default=0.0, help="tricks the Q-network's move must gain")
    merger.add_argument("--out", required=True, help="policy file to write")
    merger.add_argument("--epochs", type=int, default=2)
    merger.add_argument("--learning-rate", type=float, default=1e-5)
    merger.add_argument("--seed", type=int, default=0)
    distiller = sub.add_parser("distil", help="a copy of a policy in a smaller network (keeps rounds from growing)")
    distiller.add_argument("--teacher", required=True, help="the policy copied")
    distiller.add_argument("--init", required=True, help="the policy whose network (shape and weights) starts the copy")
    distiller.add_argument("--decisions", type=int, default=1_000_000, help="decisions of the teacher's self-play")
    distiller.add_argument("--out", required=True, help="policy file to write")
    distiller.add_argument("--epochs", type=int, default=3)
    distiller.add_argument("--learning-rate", type=float, default=1e-4)
    distiller.add_argument("--seed", type=int, default=0)
    distiller.add_argument("--rules", default="standard", help="the rule preset of the self-play")
    combiner = sub.add_parser("combine", help="one policy: a prior policy's logits plus the Q-network's values")
    combiner.add_argument("--prior", default="trained", help="the policy whose logits are the prior")
    combiner.add_argument("--teacher", required=True, help="the Q-network written by fit")
    combiner.add_argument("--weight", type=float, default=1.0, help="tricks per unit of the prior's logits")
    combiner.add_argument("--out", required=True, help="policy file to write")
    runner = sub.add_parser("run", help="every stage from a config (configs/real_deal_v5.yaml), resumable")
    runner.add_argument("--config", required=True, help="YAML config (the RunConfig keys)")
    runner.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    args = parser.parse_args(argv)
    if not 1 <= getattr(args, "epochs", 1) <= MAX_EPOCHS:
        parser.error(f"--epochs must be in 1..{MAX_EPOCHS}, got {args.epochs}")
    try:
        _command(parser, args)
    except (RulesError, FixedAgentError) as err:  # a bad rule set or policy: one line, not a traceback
        parser.error(str(err))


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Run the command of ``args`` (checked here; a bad rule set or policy raises a RulesError or a
    FixedAgentError for ``main``)."""
    if args.command == "run":
        try:
            config = load_run_config(args.config, args.set)
        except ConfigError as err:
            parser.error(str(err))
        run(config)
        return
    if args.command == "label":
        kinds = args.types.split(",")
        if not 1 <= args.hands <= MAX_HANDS or not set(kinds) <= set(TYPES):
            parser.error(f"--hands must be in 1..{MAX_HANDS} (got {args.hands}), --types some of {','.join(TYPES)}")
        ruleset = _rules(args.rules)
        roles = None if args.roles is None else tuple(args.roles.split(","))
        try:
            role_numbers(ruleset, roles)
        except ValueError as err:
            parser.error(f"--{err}")
        label(args.policy, args.seed, args.hands, args.out, tuple(TYPES[kind] for kind in kinds), ruleset, roles)
    elif args.command == "combine":
        if not 0 <= args.weight <= 1000:
            parser.error(f"--weight must be in [0, 1000], got {args.weight}")
        combine(args.prior, args.teacher, args.weight, args.out)
    elif args.command == "distil":
        if not FIT_BATCH * 10 <= args.decisions <= MAX_DECISIONS or not args.learning_rate > 0:
            parser.error(
                f"--decisions must be in {FIT_BATCH * 10}..{MAX_DECISIONS} (got {args.decisions}), --learning-rate > 0"
            )
        distil(
            args.teacher, args.init, args.decisions, args.out, args.epochs, args.learning_rate, args.seed, args.rules
        )
    elif args.command == "merge":
        kinds = args.types.split(",")
        if not args.margin >= 0 or not args.learning_rate > 0 or not set(kinds) <= {"exchange", "trump", "discard"}:
            parser.error("--margin must be >= 0, --learning-rate > 0, --types some of exchange,trump,discard")
        merge(
            args.data.split(","),
            args.init,
            args.teacher,
            kinds,
            args.margin,
            args.out,
            args.epochs,
            args.learning_rate,
            args.seed,
        )
    else:
        if not args.learning_rate > 0 or not 0 <= args.game_weight <= 100:
            parser.error(
                f"--learning-rate must be > 0 (got {args.learning_rate}), --game-weight in [0, 100] "
                f"(got {args.game_weight})"
            )
        fit(args.data.split(","), args.init, args.out, args.epochs, args.learning_rate, args.seed, args.game_weight)


if __name__ == "__main__":
    main()
