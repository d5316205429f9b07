"""From a :class:`~sm_env.core.game.Game` to a kernel row: the one copy of a game's state into the
columns of :mod:`sm_env.compiled.kernels` (``st`` int32, ``cm`` uint64 card sets).

Used by :class:`sm_env.compiled.single.CompiledGame` (``raw_env``'s compiled path: a
fresh game) and by :class:`agents.search.rollout_kernel.RolloutBatch` (search: a
position set up by ``Game.from_position`` or a clone). Any position of a three- or four-player
game under rules the compiled engine runs (:func:`sm_env.compiled.support.supports`) in
the bid, assign, exchange, trump, discard, take, play or over phase loads; the row then observes,
masks and plays on as the ``Game`` does (``tests/test_loader.py``).

What is copied, from :data:`sm_env.core.game.HAND_STATE` and :data:`~sm_env.core.game.GAME_STATE`
and the hand's log: phase, seat to act, dealer, hand number, first dealer, trick
(leader, led suit, cards), trump, tricks played and won, quotas, scores, previous
balances, kitty taken, discards, voids, the exchange (plan, round, receiver, cards
chosen; each exchange's sent and returned cards), the kitty cards shown, the stage of the
hand order and when each seat got up (this hand and the last: ``first_up_exchanges_first``); the call and the
calls left (``calls``); the auction and the passed-out deals (``auction``);
hands, kitty and cards played. The ``S_LOG_LEN`` / ``S_FIN_*`` columns (a batch's
bookkeeping) and the next hand's deal (``C_NEXT_*``, the caller's) are left at 0.
"""

from __future__ import annotations

import numpy as np

from sm_env.core.cards import to_mask
from sm_env.core.game import ASSIGN, BID, DISCARD, EXCHANGE, OVER, PHASE_NAMES, PLAY, TAKE, TRUMP, Game

from . import kernels as k
from .support import unsupported

__all__ = ["LOADABLE_PHASES", "LoadError", "game_row", "load_game"]

LOADABLE_PHASES = (EXCHANGE, TRUMP, DISCARD, PLAY, OVER, ASSIGN, TAKE, BID)
"""The phases the kernels know."""


class LoadError(ValueError):
    """A Game the kernels cannot hold (rules they do not run, or a phase they do not know)."""


def game_row(game: Game, rules_checked: bool = False) -> tuple[list[int], list[int]]:
    """The kernel row of ``game``'s state: (``st`` values, ``cm`` card sets), lists of NUM_S and NUM_C ints.

    ``rules_checked``: the caller has made sure that the compiled engine runs ``game.rules`` (skips that check).
    """
    refused = [] if rules_checked else unsupported(game.rules)
    if refused:
        raise LoadError(f"the kernels do not run rule set {game.rules.name!r}: it uses {', '.join(refused)}")
    if game.phase not in LOADABLE_PHASES:
        known = ", ".join(PHASE_NAMES[p] for p in LOADABLE_PHASES)
        raise LoadError(f"the kernels hold the phases {known}, not phase {PHASE_NAMES[game.phase]}")
    log = game.log
    n = game.rules.num_players
    st = [0] * k.NUM_S
    st[k.S_PHASE] = game.phase
    st[k.S_CUR] = game.current
    st[k.S_DEALER] = game.dealer
    st[k.S_HAND_NO] = game.hand_number
    st[k.S_FIRST_DEALER] = game.first_dealer
    st[k.S_LEADER] = game.leader
    trick = game.trick
    st[k.S_LED] = game.led_suit if trick else -1
    st[k.S_TRUMP] = game.trump
    st[k.S_TRICK_LEN] = len(trick)
    st[k.S_TRICK : k.S_TRICK + len(trick)] = trick
    st[k.S_TRICKS_PLAYED] = game.tricks_played
    st[k.S_TW : k.S_TW + n] = game.tricks_won
    if game.quotas is not None:  # else the dealer has still to assign them
        st[k.S_Q : k.S_Q + n] = game.quotas
        st[k.S_QKNOWN] = 1
    st[k.S_SC : k.S_SC + n] = game.scores
    if game.previous_balances is not None:
        st[k.S_HAS_PREV] = 1
        st[k.S_PB : k.S_PB + n] = game.previous_balances
    st[k.S_PICKED] = int(game.picked_up)
    discards = log.discards or ()
    st[k.S_DISC_COUNT] = len(discards)
    st[k.S_VOID : k.S_VOID + n] = game.voids
    rounds = game._exchange_rounds
    st[k.S_EX_NROUNDS] = len(rounds)
    st[k.S_EX_ROUND] = game._exchange_round
    for r, (sender, targets) in enumerate(rounds):
        st[k.S_EX_SENDER + r] = sender
        st[k.S_EX_NT + r] = len(targets)
        for t, (receiver, count) in enumerate(targets):
            st[k.S_EX_RECV + k.MAX_TARGETS * r + t] = receiver
            st[k.S_EX_CNT + k.MAX_TARGETS * r + t] = count
    if game.phase == EXCHANGE:
        st[k.S_EX_TARGET] = game._receiver_index
        for t, entry in enumerate(game._round_exchanges):
            st[k.S_EX_PEND + t] = len(entry.sent)
    st[k.S_STAGE] = game._stage
    take = game.take  # one_card_kitty: (seat, card put out or None) once decided
    st[k.S_TAKER] = -1 if take is None else take[0]
    st[k.S_PUT_OUT] = -1 if take is None or take[1] is None else take[1]
    st[k.S_CALL] = game.call
    # the calls the dealer may make: with calls those not made yet, else the four suits (kernels.S_CALLS_LEFT)
    st[k.S_CALLS_LEFT : k.S_CALLS_LEFT + n] = game.calls_left if game.rules.calls else [0xF] * n
    _auction_columns(game, st)
    st[k.S_UP_AT : k.S_UP_AT + n] = _up_at(game)
    previous = game._up_at() if len(game.history) >= 2 else None
    st[k.S_PUP : k.S_PUP + n] = [52] * n if previous is None else previous
    if game.winners is not None:
        st[k.S_WINNERS] = sum(1 << s for s in game.winners)
    st[k.S_TRUNCATED] = int(game.truncated)
    cm = [0] * k.NUM_C
    cm[k.C_HAND : k.C_HAND + n] = game.hands
    cm[k.C_KITTY] = game.kitty_mask
    cm[k.C_PLAYED : k.C_PLAYED + n] = game.played
    cm[k.C_DISCARDS] = to_mask(discards)
    for entry in log.exchanges:
        pair = entry.sender * k.MAX_SEATS + entry.receiver
        st[k.S_EX_STARTED + pair] = entry.count
        cm[k.C_SENT + pair] = to_mask(entry.sent)
        cm[k.C_RET + pair] = to_mask(entry.returned or ())
    for sender, cards in log.shown or ():
        cm[k.C_SHOWN + sender] |= to_mask(cards)
    return st, cm


def _auction_columns(game: Game, st: list[int]) -> None:
    """The auction being held, or the one that decided hand 1 (``Game._reset_auction``), into ``st``."""
    st[k.S_AUC_FIRST] = game.auction_first
    for seat, bid in game.auction_bids:
        if bid is not None:  # bids rise: a seat's last bid is its highest
            st[k.S_AUC_BID + seat] = bid
    st[k.S_AUC_PASSED] = sum(1 << s for s, passed in enumerate(game.auction_passed) if passed)
    high = game.auction_high
    st[k.S_AUC_HIGH] = 0 if high is None else high[0]
    st[k.S_AUC_HIGH_SEAT] = -1 if high is None else high[1]
    st[k.S_PASSED_OUT] = game.passed_out


def _up_at(game: Game) -> list[int]:
    """For each seat, the trick of the current hand (0 = first, -1 = the kitty trick) in which it won its
    (quota + 1)-th trick, else 52 (what ``Game._up_at`` reads of this hand once the next one starts)."""
    n = game.rules.num_players
    up_at = [52] * n
    quotas = game.quotas
    if quotas is None:
        return up_at
    won = [0] * n
    dealer = game.dealer
    if game.rules.kitty_trick and len(game.log.discards or ()) == game.rules.kitty_size:
        won[dealer] = 1
        if quotas[dealer] == 0:
            up_at[dealer] = -1
    for index, trick in enumerate(game.log.tricks or ()):
        if trick.winner is None:
            continue
        won[trick.winner] += 1
        if won[trick.winner] == quotas[trick.winner] + 1:
            up_at[trick.winner] = index
    return up_at


def load_game(st: np.ndarray, cm: np.ndarray, row: int, game: Game, rules_checked: bool = False) -> None:
    """Copy ``game``'s state into row ``row`` of ``st`` (int32 [n, NUM_S]) and ``cm`` (uint64 [n, NUM_C])
    (``rules_checked`` as for :func:`game_row`)."""
    st_row, cm_row = game_row(game, rules_checked)
    st[row] = st_row
    cm[row] = cm_row
