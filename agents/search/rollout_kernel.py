"""Compiled heuristic rollouts for search (pimc, ismcts): play the rest of a
hand out with the heuristic for every seat, many positions at once.

A numba port of :func:`agents.search.rollout.rollout` and of the heuristic's trump,
discard and play rules (:mod:`agents.players.heuristic`, the readable reference),
running on the batched engine's state machine (:mod:`sm_env.compiled.kernels`).
Each seat decides only from what it would know in the rollout, exactly as
``agents.search.rollout.rollout`` lets it: its own hand, the cards played, the open
trick, the voids shown and (the dealer) its own discards. The choices are
the reference's, tie-breaks included; ``tests/test_rollout_kernel.py``
compares every card of thousands of rollouts. Three and four players
(docs/rules.md 10.6) play through the same functions: the seat count is
the engine's ``cfg[K_PLAYERS]``, and "the seats still to play" and "every
opponent" are counted round the table from the seat (``kernels._after``),
as the heuristic reads its rules for four.

Usage (one row per position, e.g. sampled worlds times candidate actions)::

    batch = RolloutBatch(rules, num_positions)
    for row, game in enumerate(games):          # Game.from_position(...) or clones
        batch.load(row, game, deck, dealer_out)
    tricks = batch.run()                        # int32 [num_positions, players]: tricks won at the end of the hand

``deck`` and ``dealer_out`` are ``agents.search.rollout.rollout``'s arguments: the
cards in play and the cards the dealer knows are out (its discards).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from agents.players.heuristic import CALL_RESERVE, MIZ_WEIGHTS, NT_WEIGHTS, SUIT_WEIGHTS
from sm_env.compiled import kernels as vk
from sm_env.compiled.loader import load_game
from sm_env.compiled.support import supports as supports  # the one allow-list: the search plays what the engine
from sm_env.compiled.support import unsupported  # runs (three and four players); compiled_rollouts asks it here
from sm_env.core.episode import result_table
from sm_env.core.game import DISCARD, MIZ, OVER, PASS_ACTION, PLAY, TAKE, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.rules import RuleSet

# numba caches by this file's stamp, the kernels' code included: compiled against kernels.py b788e49f1511

_SUIT = np.array([0x1FFF << (13 * s) for s in range(4)], dtype=np.int64)
_HONOUR = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0.3, 0.6, 1.0, 1.5])
_SUIT_WEIGHTS = np.array(SUIT_WEIGHTS, dtype=np.float64)  # the heuristic's call weights (agents.players.heuristic)
_NT_WEIGHTS = np.array(NT_WEIGHTS, dtype=np.float64)
_MIZ_WEIGHTS = np.array(MIZ_WEIGHTS, dtype=np.float64)
_CALL_RESERVE = np.array(CALL_RESERVE, dtype=np.float64)
MAX_LOG = 72  # decisions a rollout can take: 1 trump, 4 discards, 17 * 3 cards (four players: 12 * 4) and spare


# ---------------------------------------------------------------------------- bit helpers (int64 card sets)


@njit(cache=True, inline="always")
def lowest(mask):
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


@njit(cache=True, inline="always")
def _above(mask, card):
    """Cards of ``mask`` in the suit of ``card`` that rank above it."""
    return ((mask >> (card + 1)) << (card + 1)) & _SUIT[card // 13]


@njit(cache=True, inline="always")
def _can_ruff(seat, suit, trump, voids, trumps_out):
    return trumps_out != 0 and ((voids[seat] >> suit) & 1) == 1 and ((voids[seat] >> trump) & 1) == 0


@njit(cache=True, inline="always")
def _later_can_ruff(seat, played, suit, trump, voids, trumps_out, players):
    """Whether a seat still to play after ``seat`` (``played`` cards already in the trick) may ruff ``suit``."""
    for k in range(1, players - played):
        if _can_ruff(vk._after(seat, k, players), suit, trump, voids, trumps_out):
            return True
    return False


@njit(cache=True, inline="always")
def _lowest_rank(mask):
    """The card of ``mask`` of the lowest rank, ties to the lower card id (-1 for none)."""
    best = -1
    c = mask
    while c:
        card = lowest(c)
        c &= c - 1
        if best < 0 or card % 13 < best % 13:
            best = card
    return best


# ------------------------------------------------------------------------ heuristic rules (agents.players.heuristic)


@njit(cache=True)
def choose_trump(hand):
    """The suit to name: the best trump score (3 a card plus honours), ties to the higher top card, then lower suit."""
    best = -1
    best_score = -1.0
    best_top = -2
    for s in range(4):
        cards = hand & _SUIT[s]
        score = 3.0 * _count(cards)
        c = cards
        while c:
            low = lowest(c)
            score += _HONOUR[low % 13]
            c &= c - 1
        top = _high(cards)
        if best < 0 or score > best_score or (score == best_score and top > best_top):
            best, best_score, best_top = s, score, top
    return best


@njit(cache=True)
def choose_discard(hand, trump, outstanding, left):
    """The next discard (agents.players.heuristic.choose_discard)."""
    trump_mask = _SUIT[trump] if trump >= 0 else 0
    side = hand & ~trump_mask
    keep = 0
    for s in range(4):
        cards = side & _SUIT[s]
        if cards:
            top = _high(cards)
            if not _above(outstanding, top):
                keep |= 1 << top
                nxt = cards ^ (1 << top)
                while nxt and not _above(outstanding, _high(nxt)):
                    keep |= 1 << _high(nxt)
                    nxt ^= 1 << _high(nxt)
    free = side & ~keep
    if free:
        best = -1
        for s in range(4):  # the shortest voidable suit, ties to the lower suit
            n = _count(free & _SUIT[s])
            if n and not (side & keep & _SUIT[s]) and n <= left:
                if best < 0 or n < _count(free & _SUIT[best]):
                    best = s
        if best >= 0:
            return lowest(free & _SUIT[best])
        best = -1
        for s in range(4):  # else the shortest suit, ties to the lower low card (then the lower suit)
            n = _count(free & _SUIT[s])
            if n:
                if best < 0:
                    best = s
                else:
                    nb = _count(free & _SUIT[best])
                    if n < nb or (n == nb and lowest(free & _SUIT[s]) < lowest(free & _SUIT[best])):
                        best = s
        return lowest(free & _SUIT[best])
    if side:
        return _lowest_rank(side)
    return lowest(hand)


@njit(cache=True)
def _throw(hand, trump, outstanding):
    """The least useful card: no trump, no master, low first, shortest suit first."""
    trump_mask = _SUIT[trump] if trump >= 0 else 0
    pool = hand & ~trump_mask
    if pool == 0:
        pool = hand
    best = -1
    bk0 = bk1 = bk2 = bk3 = 0
    c = pool
    while c:
        card = lowest(c)
        c &= c - 1
        k0 = 0 if _above(outstanding, card) else 1
        k1 = 1 if card % 13 >= 10 else 0
        k2 = _count(hand & _SUIT[card // 13])
        k3 = card % 13
        if best < 0 or (k0, k1, k2, k3) < (bk0, bk1, bk2, bk3):
            best, bk0, bk1, bk2, bk3 = card, k0, k1, k2, k3
    return best


@njit(cache=True)
def _lead(seat, hand, trump, outstanding, voids, players):
    trump_mask = _SUIT[trump] if trump >= 0 else 0
    mine_t = hand & trump_mask
    out_t = outstanding & trump_mask
    opp_trumps = False  # an opponent may hold a trump: some are out and not every opponent showed out of trumps
    if out_t:
        for k in range(1, players):
            if ((voids[vk._after(seat, k, players)] >> trump) & 1) == 0:
                opp_trumps = True
                break
    if mine_t != 0 and opp_trumps:
        n_mine = _count(mine_t)
        n_out = _count(out_t)
        top = _high(mine_t)
        if n_mine >= n_out:
            if top > _high(out_t):
                return top
            if n_mine >= n_out + 2:
                return lowest(mine_t)
    best = -1
    bk0 = bk1 = 0
    for s in range(4):
        if s == trump:
            continue
        cards = hand & _SUIT[s]
        if not cards:
            continue
        top = _high(cards)
        if _above(outstanding, top):
            continue
        out_s = _count(outstanding & _SUIT[s])
        if trump >= 0 and opp_trumps and (out_s < 2 or _later_can_ruff(seat, 0, s, trump, voids, out_t, players)):
            continue
        if best < 0 or (out_s, top % 13) > (bk0, bk1):
            best, bk0, bk1 = top, out_s, top % 13
    if best >= 0:
        return best
    if mine_t != 0 and opp_trumps and _high(mine_t) > _high(out_t):
        return _high(mine_t)
    side = hand & ~trump_mask
    if side:
        if mine_t:
            single = -1
            for s in range(4):  # the lowest singleton that is not master, ties to the lower suit
                cards = side & _SUIT[s]
                if _count(cards) == 1 and _above(outstanding, _high(cards)):
                    if single < 0 or _high(cards) % 13 < _high(side & _SUIT[single]) % 13:
                        single = s
            if single >= 0:
                return _high(side & _SUIT[single])
        best_s = -1
        bl = bm = 0
        for s in range(4):  # the longest suit, ties to the lower low card, then the higher suit
            cards = side & _SUIT[s]
            n = _count(cards)
            if n:
                m = -(lowest(cards) % 13)
                if best_s < 0 or (n, m) >= (bl, bm):
                    best_s, bl, bm = s, n, m
        return lowest(side & _SUIT[best_s])
    if mine_t != 0 and _high(mine_t) > _high(out_t):
        return _high(mine_t)
    return lowest(mine_t)


@njit(cache=True)
def choose_play(seat, hand, trick, n, trump, outstanding, voids, players):
    """The card to play (agents.players.heuristic.choose_play); ``trick[:n]`` is the open trick, ``voids[:players]`` the
    shown voids by seat at a table of ``players``."""
    if n == 0:
        return _lead(seat, hand, trump, outstanding, voids, players)
    led = trick[0] // 13
    win = trick[0]
    for k in range(1, n):
        c = trick[k]
        s = c // 13
        if s == win // 13:
            if c > win:
                win = c
        elif s == trump:
            win = c
    last = n == players - 1
    trump_mask = _SUIT[trump] if trump >= 0 else 0
    out_t = outstanding & trump_mask
    follow = hand & _SUIT[led]
    if follow:
        if win // 13 != led:
            return lowest(follow)
        higher = _above(follow, win)
        if not higher:
            return lowest(follow)
        if last:
            return lowest(higher)
        if led != trump and _later_can_ruff(seat, n, led, trump, voids, out_t, players):
            return lowest(follow)
        out_led = outstanding & _SUIT[led]
        masters = higher
        while masters and _above(out_led, lowest(masters)):
            masters ^= masters & -masters
        if masters:
            return lowest(masters)
        return lowest(follow)
    mine_t = hand & trump_mask
    if mine_t:
        if win // 13 == trump:
            over = _above(mine_t, win)
            if over:
                if not last and _later_can_ruff(seat, n, led, trump, voids, out_t, players):
                    safe = _above(over, _high(out_t)) if out_t else over
                    if safe:
                        return lowest(safe)
                return lowest(over)
            return _throw(hand, trump, outstanding)
        if not last and _later_can_ruff(seat, n, led, trump, voids, out_t, players):
            safe = _above(mine_t, _high(out_t)) if out_t else mine_t
            if safe:
                return lowest(safe)
        return lowest(mine_t)
    return _throw(hand, trump, outstanding)


@njit(cache=True)
def choose_take(hand, face_up, trump, outstanding):
    """agents.players.heuristic.choose_take: the card to put out of play to take the face-up card, or PASS_ACTION."""
    worst = choose_discard(hand, trump, outstanding, 1)
    if _worth(face_up, trump, outstanding) > _worth(worst, trump, outstanding):
        return worst
    return PASS_ACTION


@njit(cache=True, inline="always")
def _worth(card, trump, outstanding):
    """The heuristic's (trump, no outstanding card above it, rank) of a card, as one ordered number."""
    return (card // 13 == trump) * 26 + (_above(outstanding, card) == 0) * 13 + card % 13


@njit(cache=True, inline="always")
def _bit(hand, card):
    return (hand >> card) & 1


@njit(cache=True, inline="always")
def _dot(weights, features):
    """sum(w * f) in the order of the features (agents.players.heuristic._dot: the same float sums)."""
    total = 0.0
    for k in range(weights.shape[0]):
        total += weights[k] * features[k]
    return total


@njit(cache=True)
def call_values(hand):
    """agents.players.heuristic.call_values: the expected balance of each call (0-3 a suit, 4 NT, 5 Miz) as dealer."""
    stats = np.zeros((4, 10), dtype=np.int64)  # per suit: the heuristic's _suit_stats
    for s in range(4):
        length = _count(hand & _SUIT[s])
        b = 13 * s
        king, queen = _bit(hand, b + 11), _bit(hand, b + 10)
        guarded = 1 if length >= 2 else 0
        stats[s, 0] = length
        stats[s, 1] = _bit(hand, b + 12)
        stats[s, 2] = king
        stats[s, 3] = queen
        stats[s, 4] = _bit(hand, b + 9)
        stats[s, 5] = king & guarded
        stats[s, 6] = king & (1 - guarded)
        stats[s, 7] = queen & (1 if length >= 3 else 0)
        stats[s, 8] = 1 if length == 0 else 0
        stats[s, 9] = 1 if length == 1 else 0
    totals = stats.sum(axis=0)
    values = np.zeros(6, dtype=np.float64)
    features = np.zeros(12, dtype=np.int64)
    for t in range(4):  # the suit contract's features (agents.players.heuristic._side_features)
        features[0] = 1
        for k in range(5):
            features[1 + k] = stats[t, k]
        for j, k in enumerate((1, 5, 6, 7, 8, 9)):
            features[6 + j] = totals[k] - stats[t, k]
        values[t] = _dot(_SUIT_WEIGHTS, features) - 8
    nt = np.zeros(6, dtype=np.int64)  # agents.players.heuristic.nt_features
    nt[0] = 1
    miz = np.zeros(9, dtype=np.int64)  # agents.players.heuristic.miz_features
    miz[0] = 1
    for s in range(4):
        length = stats[s, 0]
        b = 13 * s
        nt[1] += _bit(hand, b + 12)
        nt[2] += _bit(hand, b + 11) if length >= 2 else 0
        nt[3] += _bit(hand, b + 10) if length >= 3 else 0
        nt[4] += _bit(hand, b + 9) if length >= 4 else 0
        nt[5] += max(0, length - 4)
        for k in range(6):
            miz[1 + k] += _bit(hand, b + 12 - k)  # A, K, Q, J, 10, 9
        for r in range(4):
            miz[7] += _bit(hand, b + r)  # the 2-5
        miz[8] += 1 if length == 0 else 0
    values[4] = _dot(_NT_WEIGHTS, nt) - 8
    values[5] = 3 - _dot(_MIZ_WEIGHTS, miz)
    return values


@njit(cache=True)
def choose_call(hand, left):
    """agents.players.heuristic.choose_call: the call among ``left`` (a 6-bit set) with the best expected balance minus
    its reserve (none for the last call left); ties to the lower call."""
    if _count(left) == 1:
        return lowest(left)
    values = call_values(hand)
    best = -1
    best_value = 0.0
    for c in range(6):
        if left >> c & 1:
            value = values[c] - _CALL_RESERVE[c]
            if best < 0 or value > best_value:
                best, best_value = c, value
    return best


@njit(cache=True)
def choose_miz_discard(hand):
    """agents.players.heuristic.choose_miz_discard: the highest card, from the shortest suit among equal ranks (then the
    higher card id)."""
    best = -1
    bk0 = bk1 = 0
    c = hand
    while c:
        card = lowest(c)
        c &= c - 1
        k0 = card % 13
        k1 = -_count(hand & _SUIT[card // 13])
        if best < 0 or (k0, k1) >= (bk0, bk1):
            best, bk0, bk1 = card, k0, k1
    return best


@njit(cache=True)
def choose_miz_play(hand, trick, n):
    """agents.players.heuristic.choose_miz_play: duck under the winning card, shed high cards (no trump in a misère
    hand); ``trick[:n]`` is the open trick."""
    if n == 0:
        return _lowest_rank(hand)
    led = trick[0] // 13
    follow = hand & _SUIT[led]
    if not follow:  # the highest rank, then the higher card id
        best = -1
        c = hand
        while c:
            card = lowest(c)
            c &= c - 1
            if best < 0 or card % 13 >= best % 13:
                best = card
        return best
    win = trick[0]
    for k in range(1, n):
        if trick[k] // 13 == led and trick[k] > win:
            win = trick[k]
    under = follow & ((np.int64(1) << win) - 1)
    if under:
        return _high(under)
    return _high(follow) if n == 2 else lowest(follow)


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
                action = choose_miz_play(hand, trick, n)
            else:
                action = choose_play(seat, hand, trick, n, st[i, vk.S_TRUMP], out, voids, players)
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
            action = TRUMP_ACTION_BASE + choose_call(hand, np.int64(st[i, vk.S_CALLS_LEFT + dealer]))
        elif phase == TRUMP:
            action = TRUMP_ACTION_BASE + choose_trump(np.int64(cm[i, vk.C_HAND + dealer]))
        elif phase == TAKE:  # one_card_kitty: the face-up card (the kitty) is in no hand
            hand = np.int64(cm[i, vk.C_HAND + st[i, vk.S_CUR]])
            face = np.int64(cm[i, vk.C_KITTY])
            action = choose_take(hand, lowest(face), st[i, vk.S_TRUMP], deck & ~hand & ~face)
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
