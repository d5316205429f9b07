"""Lockstep check of :class:`sm_env.compiled.batch.VectorGame` against the reference
:class:`sm_env.core.game.Game`: random legal play, every decision compared.

For every slot a pure-Python ``Game`` is built from the slot's deals
(:meth:`VectorGame.deals`) and given the same actions. At every decision the
check compares the player to act, the legal set, the observation vector of
the player to act (bit for bit; with ``all_seats`` of every seat), its
full state (the cards hidden from it: :func:`sm_env.observation.full_state`),
the rewards paid and the end of the game (done, winners, truncation); at the end
of each game the slot's record must equal the reference game's record and
(for ``replay_every``-th game) pass :func:`sm_env.replay`.

Used by ``tests/test_vector.py`` (a small sample) and
``benchmarks/lockstep_vector.py`` (10,000 games).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sm_env.core.game import OVER, PASS_ACTION, Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode, full_state
from sm_env.records import game_record, replay

from .batch import VectorGame
from .kernels import S_LOG_LEN


class LockstepError(AssertionError):
    """The batched engine and the reference game disagree."""


@dataclass
class LockstepResult:
    games: int
    decisions: int
    hands: int  # hands played (scored)
    passed_out: int = 0  # deals passed out in the auction (no hand played)


def _bits(mask_row: np.ndarray) -> int:
    return sum(1 << int(a) for a in np.flatnonzero(mask_row))


def _check_decision(game: Game, where: str, current: int, mask: np.ndarray, observed: list, obs_ref: np.ndarray) -> int:
    """One slot before its step against its reference ``game``: the player to act, the legal set, the observation
    of the player to act (``observed[0]``) and, when given, of every seat (``observed[1:]``); its legal set."""
    if game.current_player != current:
        raise LockstepError(f"{where}: player to act {current}, reference {game.current_player}")
    legal = game.legal_mask()
    if _bits(mask) != legal:
        raise LockstepError(f"{where}: legal {_bits(mask):#x}, reference {legal:#x}")
    for k, row in enumerate(observed):
        encode(player_view(game, game.current if k == 0 else k - 1), obs_ref)
        if not np.array_equal(row.view(np.uint32), obs_ref.view(np.uint32)):
            whose = "observation" if k == 0 else f"observation of seat {k - 1}"
            raise LockstepError(f"{where}: {whose} differs at {np.flatnonzero(row != obs_ref).tolist()[:10]}")
    return legal


def _check_end(vec: VectorGame, game: Game, i: int, where: str, seat: int, obs_ref: np.ndarray, full: bool) -> None:
    """A finished slot against its reference ``game``: winners, truncation, the final observation of ``seat``,
    the finished record (re-played by the engine when ``full``)."""
    ref_winners = sum(1 << s for s in game.winners or ())
    truncated = bool(vec.truncated[i])
    if vec.winners[i] != ref_winners or truncated != (game.truncated and vec.episode == "game"):
        raise LockstepError(
            f"{where}: end winners {vec.winners[i]:#b} truncated {truncated}, "
            f"reference {ref_winners:#b} {game.truncated}"
        )
    encode(player_view(game, seat), obs_ref)
    if not np.array_equal(vec.final_observations[i].view(np.uint32), obs_ref.view(np.uint32)):
        raise LockstepError(f"{where}: final observation of seat {seat} differs")
    record = vec.finished_record(i)
    if record != game_record(game):
        raise LockstepError(f"{where}: the finished record differs from the reference game's")
    if full:
        replay(record)


def lockstep(
    rules: Any = "standard",
    num_games: int = 200,
    num_slots: int = 32,
    seed: int = 0,
    episode: str = "game",
    max_hands: int = 15,
    all_seats: bool = False,
    replay_every: int = 10,
    parallel: bool = False,
    vec: VectorGame | None = None,
    pass_rate: float = 0.0,
) -> LockstepResult:
    """Play ``num_games`` random games in lockstep; raises LockstepError at the first difference.

    With ``vec`` (a batch already dealt, e.g. restored by ``set_state``), its games are played on from where
    they stand (``rules``, ``num_slots``, ``episode`` and ``max_hands`` are the batch's; ``max_hands`` not None).
    ``pass_rate``: the chance of playing action 58 (pass in the auction, decline the face-up card) wherever it is
    legal, instead of a uniform legal action (so that passed-out deals are played often).
    """
    if vec is None:
        vec = VectorGame(num_slots, rules=rules, seed=seed, episode=episode, max_hands=max_hands, parallel=parallel)
        vec.reset()
    num_slots, seats = vec.num_games, vec.num_players
    hands_per_game = vec.game_max_hands

    def reference(slot: int, finished: bool = False) -> Game:
        first, deals = vec.deals(slot, hands_per_game, finished)
        return Game(vec.rules, first_dealer=first, deals=deals, max_hands=hands_per_game)

    games = [reference(i) for i in range(num_slots)]
    steps = [0] * num_slots
    for i, game in enumerate(games):  # the actions already played (none after a reset)
        for action in vec._log[i, : vec._st[i, S_LOG_LEN]]:
            game.apply(int(action))
            steps[i] += 1
    rng = np.random.default_rng(seed)
    finished = decisions = hands = passed_out = 0
    obs_ref = np.empty(vec.observation_size, dtype=np.float32)
    rows = np.arange(num_slots)
    while finished < num_games:
        current = vec.current_player
        masks = vec.legal_mask()
        obs = vec.observe()
        hidden = vec.full_state()
        seat_obs = [vec.observe(rows, np.full(num_slots, s)) for s in range(seats)] if all_seats else None
        actions = np.empty(num_slots, dtype=np.int64)
        for i, game in enumerate(games):
            where = f"{vec.rules.name}, slot {i}, hand {game.hand_number}, decision {steps[i]}"
            own = [obs[i]] if seat_obs is None else [obs[i], *(seat_obs[s][i] for s in range(seats))]
            legal = _check_decision(game, where, int(current[i]), masks[i], own, obs_ref)
            if not np.array_equal(hidden[i], full_state(game, game.current)):
                raise LockstepError(f"{where}: the full state of the player to act differs")
            legal_ids = np.flatnonzero(masks[i])
            actions[i] = legal_ids[rng.integers(len(legal_ids))]
            if pass_rate and legal >> PASS_ACTION & 1 and rng.random() < pass_rate:
                actions[i] = PASS_ACTION
        final_seats = rng.integers(seats, size=num_slots)
        rewards, done = vec.step(actions, final_seats=final_seats)
        decisions += num_slots
        for i, game in enumerate(games):
            where = f"{vec.rules.name}, slot {i}, hand {game.hand_number}"
            hand = game.hand_number
            before = list(game.scores)
            steps[i] += 1
            game.apply(int(actions[i]))
            expected = np.zeros(seats, dtype=np.float32)
            ended = game.phase == OVER or game.hand_number != hand
            if ended and game.history[hand - 1].passed_out:  # no hand played: nothing paid
                passed_out += 1
            elif ended:  # the hand's change of the running scores
                expected[:] = np.subtract(game.history[hand - 1].scores, before)
                hands += 1
            if not np.array_equal(rewards[i], expected):
                raise LockstepError(f"{where}: rewards {rewards[i].tolist()}, reference {expected.tolist()}")
            if bool(done[i]) != (game.phase == OVER):
                raise LockstepError(f"{where}: done {bool(done[i])}, reference phase {game.phase}")
            if not done[i]:
                continue
            _check_end(vec, game, i, where, int(final_seats[i]), obs_ref, replay_every and finished % replay_every == 0)
            finished += 1
            games[i] = reference(i)
            steps[i] = 0
    return LockstepResult(finished, decisions, hands, passed_out)
