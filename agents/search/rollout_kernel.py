"""Compiled heuristic rollouts for search (pimc, ismcts): play the rest of a
hand out with the heuristic for every seat, many positions at once.

:func:`agents.search.rollout.rollout` in numba, on the batched engine's state machine
(:mod:`sm_env.compiled.kernels`), playing the heuristic's own rules compiled: the trump,
call, discard, face-up card and play rules of :mod:`agents.players.heuristic` are written
once, run there as Python and compiled here (:func:`_compile_rules`).
Each seat decides only from what it would know in the rollout, exactly as
``agents.search.rollout.rollout`` lets it: its own hand, the cards played, the open
trick, the voids shown and (the dealer) its own discards. ``tests/test_rollout_kernel.py``
compares every card of thousands of rollouts with the Python ones. Three and four players
(docs/rules.md 10.6) play through the same functions: the seat count is
the engine's ``cfg[K_PLAYERS]``, and the heuristic counts "the seats still to play" and
"every opponent" round the table from the seat.

Usage (one row per position, e.g. sampled worlds times candidate actions)::

    batch = RolloutBatch(rules, num_positions)
    for row, game in enumerate(games):          # Game.from_position(...) or clones
        batch.load(row, game, deck, dealer_out)
    tricks = batch.run()                        # int32 [num_positions, players]: tricks won at the end of the hand

``deck`` and ``dealer_out`` are ``agents.search.rollout.rollout``'s arguments: the
cards in play and the cards the dealer knows are out (its discards).
"""

from __future__ import annotations

from types import FunctionType
from typing import Any

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from agents.players import heuristic
from agents.players.heuristic import CALL_RESERVE
from sm_env.compiled import kernels as vk
from sm_env.compiled.cache_key import key_cache_to_sources
from sm_env.compiled.loader import load_game
from sm_env.compiled.support import supports as supports  # the one allow-list: the search plays what the engine
from sm_env.compiled.support import unsupported  # runs (three and four players); compiled_rollouts asks it here
from sm_env.core.episode import result_table
from sm_env.core.game import DISCARD, MIZ, OVER, PLAY, TAKE, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.rules import RuleSet

_SUIT = np.array([0x1FFF << (13 * s) for s in range(4)], dtype=np.int64)
MAX_LOG = 72  # decisions a rollout can take: 1 trump, 4 discards, 17 * 3 cards (four players: 12 * 4) and spare


# ---------------------------------------------------------------------------- bit primitives (int64 card sets)


@njit(cache=True, inline="always")
def lowest(mask):
    """The lowest card of a bit set (-1 for an empty one)."""
    return -1 if mask == 0 else trailing_zeros(mask)


@njit(cache=True, inline="always")
def _high(mask):
    return 63 - leading_zeros(mask)


@njit(cache=True, inline="always")
def _count(mask):
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


@intrinsic
def _first(typingctx, array, n):
    """The first ``n`` entries of a 1-D int64 array as a view numba does not count references to: a prefix of a
    buffer handed to the rules at every decision without the atomic increment and decrement of a slice. Only while
    ``array`` lives; never kept."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.int64):
        raise TypingError(f"_first: a 1-D int64 array, got {array}")

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, args[0])
        view = make_array(signature.return_type)(context, builder)
        intp = context.get_value_type(types.intp)
        count = context.cast(builder, args[1], signature.args[1], types.intp)
        populate_array(view, data=source.data, shape=[count], strides=[intp(8)], itemsize=intp(8), meminfo=None)
        return view._getvalue()

    return types.Array(types.int64, 1, "C")(array, n), codegen


# ------------------------------------------------------------------------ the heuristic's rules, compiled

# the small rules, inlined into their callers (as numba inlines the kernels' own helpers)
_INLINE = "_after _above _bit _lowest_rank _can_ruff _later_can_ruff _ruff _worth _dot winning_card".split()


def _compile_rules(cache: bool = True, **given: Any) -> dict[str, Any]:
    """The heuristic's rules (:data:`agents.players.heuristic.COMPILED`, their one implementation) compiled: copies
    of the functions whose global names resolve to the compiled copies, numba's bit primitives, the suit masks as an
    array and the engine's ``winning_card`` compiled, the heuristic's constants otherwise. ``given``: other values
    for those names (tests plant bugs with it, ``cache=False``)."""
    rules: dict[str, Any] = dict(vars(heuristic))
    rules.update(count=_count, lowest=lowest, highest=_high, SUIT_MASK=_SUIT)
    for name in (*heuristic.COMPILED, "winning_card"):
        f = rules[name]
        copy = FunctionType(f.__code__, rules, f.__name__, f.__defaults__, f.__closure__)
        copy.__qualname__ = f.__qualname__
        rules[name] = njit(cache=cache, inline="always" if name in _INLINE else "never")(copy)
    rules.update(given)
    if cache:
        key_cache_to_sources(rules)
    return rules


_rules = _compile_rules()
choose_trump = _rules["choose_trump"]
choose_discard = _rules["choose_discard"]
choose_play = _rules["choose_play"]
take_by_worth = _rules["take_by_worth"]
choose_call = _rules["choose_call"]
choose_miz_discard = _rules["choose_miz_discard"]
choose_miz_play = _rules["choose_miz_play"]


# ---------------------------------------------------------------------------- rollout


@njit(cache=True)
def rollout_row(i, st, cm, cfg, deck, out_d, first, log):
    """Play row ``i`` to the end of its hand with the heuristic (agents.search.rollout.rollout).

    ``deck``: the cards in play; ``out_d``: the cards the dealer knows are out (its discards). ``first >= 0``:
    play that (legal) action first, then the heuristic (a discard joins the dealer's known-out cards, as in
    pimc). ``log`` (a row of actions) gets the actions played while it has room. ``cfg[K_MAX_HANDS]`` is set to
    the row's hand number, so that the row stops (phase over) when its hand ends.
    """
    rng = np.zeros(1, dtype=np.uint64)  # never drawn from: a rollout never deals
    reward = np.zeros(vk.MAX_SEATS, dtype=np.float32)
    trick = np.zeros(vk.MAX_SEATS, dtype=np.int64)
    voids = np.zeros(vk.MAX_SEATS, dtype=np.int64)
    players = cfg[vk.K_PLAYERS]
    cfg[vk.K_MAX_HANDS] = st[i, vk.S_HAND_NO]
    played = np.int64(0)
    for s in range(players):
        played |= np.int64(cm[i, vk.C_PLAYED + s])
    k = 0
    while True:
        phase = st[i, vk.S_PHASE]
        dealer = st[i, vk.S_DEALER]
        if k == 0 and first >= 0 and phase != OVER:
            action = first
            if phase == PLAY:
                played |= 1 << action
            elif phase == DISCARD:
                out_d |= 1 << action
        elif phase == PLAY:
            seat = st[i, vk.S_CUR]
            hand = np.int64(cm[i, vk.C_HAND + seat])
            out = deck & ~hand & ~played
            if seat == dealer:
                out &= ~out_d
            n = st[i, vk.S_TRICK_LEN]
            for t in range(n):
                trick[t] = st[i, vk.S_TRICK + t]
            for s in range(players):
                voids[s] = st[i, vk.S_VOID + s]
            if st[i, vk.S_CALL] == MIZ:
                action = choose_miz_play(hand, _first(trick, n))
            else:
                action = choose_play(seat, hand, _first(trick, n), st[i, vk.S_TRUMP], out, _first(voids, players))
            played |= 1 << action
        elif phase == DISCARD:
            hand = np.int64(cm[i, vk.C_HAND + dealer])
            left = cfg[vk.K_KITTY_SIZE] - st[i, vk.S_DISC_COUNT]
            if st[i, vk.S_CALL] == MIZ:
                action = choose_miz_discard(hand)
            else:
                action = choose_discard(hand, st[i, vk.S_TRUMP], deck & ~hand & ~out_d, left)
            out_d |= 1 << action
        elif phase == TRUMP and cfg[vk.K_CALLS]:
            hand = np.int64(cm[i, vk.C_HAND + dealer])
            action = TRUMP_ACTION_BASE + choose_call(hand, np.int64(st[i, vk.S_CALLS_LEFT + dealer]), CALL_RESERVE)
        elif phase == TRUMP:
            action = TRUMP_ACTION_BASE + choose_trump(np.int64(cm[i, vk.C_HAND + dealer]))
        elif phase == TAKE:  # one_card_kitty: the face-up card (the kitty) is in no hand
            hand = np.int64(cm[i, vk.C_HAND + st[i, vk.S_CUR]])
            face = np.int64(cm[i, vk.C_KITTY])
            action = take_by_worth(hand, lowest(face), st[i, vk.S_TRUMP], deck & ~hand & ~face)
        else:
            break
        if k < log.shape[0]:
            log[k] = action
        k += 1
        vk._apply(i, st, cm, rng, cfg, action, reward)


@njit(cache=True)
def rollout_rows(st, cm, cfg, deck, dealer_out, first, log):
    """Play every row to the end of its hand (:func:`rollout_row` with ``deck[i]``, ``dealer_out[i]``,
    ``first[i]``); ``log[i]`` gets row i's actions."""
    for i in range(st.shape[0]):
        rollout_row(i, st, cm, cfg, deck[i], dealer_out[i], first[i], log[i])


@njit(cache=True)
def hand_balance(st, i, seat):
    """``seat``'s balance in row i's ended hand, as ``Game._end_hand`` scores it: tricks - quota, in a misère
    hand maximum - tricks (maxima by role, docs/rules.md 10.3)."""
    won = st[i, vk.S_TW + seat]
    if st[i, vk.S_CALL] == MIZ:  # calls are a three-player option (docs/rules.md 10.3): roles by three seats
        return vk._MIZ_MAXIMA[(seat - st[i, vk.S_DEALER]) % 3] - won
    return won - st[i, vk.S_Q + seat]


@njit(cache=True)
def hand_balances(st, seat):
    """:func:`hand_balance` of ``seat`` in every row."""
    out = np.empty(st.shape[0], dtype=np.int64)
    for i in range(st.shape[0]):
        out[i] = hand_balance(st, i, seat)
    return out


def hand_values(st: np.ndarray, seat: int, players: int, game_weight: float = 0.0) -> np.ndarray:
    """``seat``'s value of each row's ended hand: its balance (:func:`hand_balances`, int64), and with
    ``game_weight`` (float64) plus that times its result reward where the hand's end ended the game (the
    engine's winner bits, :func:`sm_env.core.episode.result_table`: a win +1, another seat's win
    -1/(players - 1))."""
    balances = hand_balances(st, seat)
    if not game_weight:
        return balances
    table = np.asarray(result_table(players))[:, seat]
    return balances + game_weight * table[st[:, vk.S_WINNERS]]


class RolloutBatch:
    """Positions (one per row) to play out with the heuristic; see the module docstring."""

    def __init__(self, rules: RuleSet | str | dict[str, Any] | None, num_positions: int) -> None:
        self.rules = RuleSet.from_any(rules)
        refused = unsupported(self.rules)
        if refused:
            raise ValueError(
                f"RolloutBatch plays the rules the compiled engine runs; rule set {self.rules.name!r} uses "
                f"{', '.join(refused)}: use agents.search.rollout.rollout"
            )
        self.num_positions = int(num_positions)
        n = self.num_positions
        self._st = np.zeros((n, vk.NUM_S), dtype=np.int32)
        self._cm = np.zeros((n, vk.NUM_C), dtype=np.uint64)
        self._deck = np.zeros(n, dtype=np.int64)
        self._dealer_out = np.zeros(n, dtype=np.int64)
        self.actions = np.full((n, MAX_LOG), -1, dtype=np.int64)
        self._cfg: np.ndarray | None = None

    def load(self, row: int, game: Game, deck: int, dealer_out: int) -> None:
        """Copy a position (a Game in the trump, discard or play phase of a hand) into ``row``."""
        if game.phase not in (TRUMP, DISCARD, PLAY, OVER):
            raise ValueError(f"a rollout starts in the trump, discard or play phase, not phase {game.phase}")
        if game.rules != self.rules:
            raise ValueError(f"position {row}: rules {game.rules.name}, but the batch plays {self.rules.name}")
        if self._cfg is None:
            self._cfg = vk.rules_config(self.rules, None)
        load_game(self._st, self._cm, row, game, rules_checked=True)  # the batch's rules: checked at construction
        self._deck[row] = deck
        self._dealer_out[row] = dealer_out

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The engine rows (``st`` int32 [n, NUM_S], ``cm`` uint64 [n, NUM_C]) and the rule vector, as loaded."""
        if self._cfg is None:
            raise RuntimeError("load() at least one position before arrays()")
        return self._st, self._cm, self._cfg

    def run(self) -> np.ndarray:
        """Play every loaded position out; returns int32 [num_positions, num_players]: tricks won by seat at the
        end."""
        if self._cfg is None:
            raise RuntimeError("load() at least one position before run()")
        self.actions[:] = -1
        first = np.full(self.num_positions, -1, dtype=np.int64)
        rollout_rows(self._st, self._cm, self._cfg.copy(), self._deck, self._dealer_out, first, self.actions)
        return self._st[:, vk.S_TW : vk.S_TW + self.rules.num_players].copy()

    def run_each(self, actions: list[int]) -> np.ndarray:
        """Play every loaded position out after each of ``actions`` (legal in every position), as pimc does.

        Returns int32 [num_positions, len(actions), num_players]: tricks won by seat at the end of the hand. The
        loaded positions are left as they were (``self.actions`` is not written).
        """
        st = self._play_each(actions)
        n = self.rules.num_players
        return st[:, vk.S_TW : vk.S_TW + n].reshape(self.num_positions, len(actions), n)

    def values_each(self, actions: list[int], seat: int, game_weight: float = 0.0) -> np.ndarray:
        """As :meth:`run_each`, the value to ``seat`` of each play-out: [num_positions, len(actions)], its
        balance in the hand (int; :func:`hand_balance`, ``Game``'s balances of the same play-outs), and with
        ``game_weight`` (float) plus that times its result reward where the hand's end ended the game
        (:func:`hand_values`)."""
        st = self._play_each(actions)
        return hand_values(st, seat, self.rules.num_players, game_weight).reshape(self.num_positions, len(actions))

    def _play_each(self, actions: list[int]) -> np.ndarray:
        """The rows of every loaded position played out after each action (position-major), their ``st``."""
        if self._cfg is None:
            raise RuntimeError("load() at least one position before run_each()")
        k = len(actions)
        st = np.repeat(self._st, k, axis=0)
        cm = np.repeat(self._cm, k, axis=0)
        deck = np.repeat(self._deck, k)
        dealer_out = np.repeat(self._dealer_out, k)
        first = np.tile(np.asarray(actions, dtype=np.int64), self.num_positions)
        log = np.zeros((st.shape[0], 0), dtype=np.int64)
        rollout_rows(st, cm, self._cfg.copy(), deck, dealer_out, first, log)
        return st


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
