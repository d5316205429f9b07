"""Labelling: whole games of a policy, and every legal move of its decisions played out in the real deal.

A policy (default ``trained``) plays whole games on the compiled engine (the standard rules, or any preset of 56
actions, three or four players), every seat its most probable legal move. At every exchange, trump and discard
decision with a choice (the decision types asked for; ``play`` adds the play of the tricks), each legal move is
played out to the end of the hand *in the real deal* by the same policy for every seat (each on its own
observation, so nobody sees a hidden card) and the deciding seat's hand balance is recorded: ``values[a]``. The
real deal is a draw from the true distribution of the hidden cards given what the seat knows, so
``values[a] - values[b]`` is an unbiased sample of the difference of the two moves' values under the policy: one
world per decision, no sampler, no search. The games go on with the policy's own move. ``roles`` labels only the
decisions of the seats in those roles (the others are played, not played out): a third of the play-outs, for
more data where a role needs it. The file is a label shard (:mod:`training.distill.data`, its play-out entries:
:mod:`training.distill.data_playouts`). :func:`label_arrays` makes a file's arrays and :func:`write_labels` writes
them: a Ray task (``improve --ray``) makes them, the driver writes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable

import numpy as np
import torch

from agents.players.ppo_agent import PPOAgent, recorded_rules
from sm_env.compiled.batch import VectorGame
from sm_env.core.episode import result_table
from sm_env.core.rules import RuleSet
from sm_env.observation import observed_phases, observed_roles
from training.common.fixed_agents import PolicyOpponent, check_fixed_agent
from training.distill.config_playouts import LABELLED, STANDARD, labelled_rules, role_numbers
from training.distill.data import write_labels
from training.distill.data_playouts import playout_shard

GAMES = 512  # games played together
ROWS = 4096  # play-outs stepped together
PENDING = 300  # decisions gathered before their play-outs run
_LIBC = ctypes.util.find_library("c")


def policy_agent(spec: str, rules: RuleSet = STANDARD) -> PPOAgent:
    """The policy of ``spec`` (``trained``, ``ppo:PATH`` or a path), refused in one line unless it is a policy
    file that plays ``rules`` (the checks of a trainer's fixed opponents; ``trained`` is the shipped policy of
    ``rules``)."""
    return check_fixed_agent(spec if spec == "trained" or spec.startswith("ppo:") else f"ppo:{spec}", rules)


def trained_on(spec: str) -> RuleSet:
    """The rule set the policy file ``spec`` records (``trained`` and files that record none: standard)."""
    if spec == "trained":
        return STANDARD
    recorded = recorded_rules(PPOAgent(spec.removeprefix("ppo:")).meta)
    return labelled_rules(recorded if recorded is not None else STANDARD)


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
    log: Callable[[str], None] = print,
) -> None:
    """Play ``hands`` hands or a few more (games of ``rules``, 30 hands at most, 512 games at a time)
    and label their decisions of the phases ``labelled`` (default: exchange, trump and discard) with real-deal
    play-outs (the module docstring); write them to ``out``. ``roles`` (role names, e.g. ``("middle",)``;
    default all) labels only the decisions of seats in those roles: the others are played, not played out, so
    a file of one role of three costs about a third of the play-outs. ``log``: where the closing line goes."""
    arrays, line = label_arrays(policy_spec, seed, hands, labelled, rules, roles)
    write_labels(out, arrays)
    log(f"{line} -> {out}")


def label_arrays(
    policy_spec: str,
    seed: int,
    hands: int,
    labelled: tuple[int, ...] = LABELLED,
    rules: RuleSet | str | dict = "standard",
    roles: tuple[str, ...] | None = None,
) -> tuple[dict[str, np.ndarray], str]:
    """What :func:`label` writes, and its closing line without the file: the arrays depend only on the
    arguments, so a Ray task (``improve --ray``) returns them and the driver writes the same file."""
    ruleset = labelled_rules(rules)
    chosen_roles = role_numbers(ruleset, roles)
    policy = PolicyOpponent(policy_agent(policy_spec, ruleset))
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
    arrays = playout_shard({name: np.array(values) for name, values in rows.items()}, ruleset)
    return arrays, f"{done_hands} hands, {len(arrays['target'])} decisions labelled, {time.time() - start:.0f} s"
