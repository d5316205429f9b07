"""A rule-based player that a club player would recognise.

It plays only from what its seat knows (a :class:`~sm_env.core.knowledge.PlayerView`)
and is fully deterministic. Its rules:

Exchange (sending cards as the up player)
    The receiver must give back its highest card of the suit of each card
    sent (docs/rules.md 4), so a sent card x of suit s comes back as
    ``max(x, receiver's top card in s)``: the length of every suit is
    unchanged and the card can only improve. The player therefore sends the
    card with the largest expected gain: a low card in a suit where high
    cards (A, K, Q, ...) are still out, since the receiver may hold them and
    must hand over its best one. A card above every outstanding card of its
    suit (an ace) gains nothing and is never sent while another card can
    gain. A second card of the same suit to the same receiver gains less (it
    fetches the receiver's second best), so it is discounted. When the
    sender is the dealer (it names trump after the exchange), gains in the
    suit it would name as trump count 1.5 times; when trump is already named
    (``trump_before_exchange``, ``trump_after_kitty`` with
    ``kitty_before_exchange``), gains in the trump suit count 1.5 times for
    every sender. Two suggestions one might
    expect are deliberately not followed: sending a singleton cannot create
    a void (a card of the same suit always comes back), and sending low cards
    of one's own future trump suit is good, not bad (length is kept and the
    receiver's best trump comes over).

Quota assignment (dealer, ``dealer_assigns_quotas``)
    Takes the lowest quota itself (its tricks do not depend on its quota,
    so a lower quota is a better balance), and gives the highest one to the
    middle (``ASSIGN_HIGH_TO``), the middle quota to the eldest. (Measured in
    duplicate whole games against giving it to the leader, the trailer or
    the eldest: docs/results/heuristic-ab.md.)

Calls (dealer, ``calls``)
    Each call's expected balance is a measured estimate: least squares of
    the dealer's tricks in heuristic play on simple features of its 16
    dealt cards (:func:`suit_features`, :func:`nt_features`,
    :func:`miz_features`; refit by ``training/evaluation/heuristic_ab.py fit``),
    minus the quota 8, or for misère the maximum 3 minus it. Among the calls
    it has still to make it takes the one whose estimate is furthest above
    that call's mean balance (``CALL_RESERVE``: what keeping the call for a
    later hand is worth); its last call is forced. Ties go to the lower
    action.

Misère (every seat in a ``Miz`` hand: the aim is to lose tricks)
    The dealer discards its highest cards (aces first, from its shortest
    suit). Leading, it leads its lowest card. Following suit, it plays the
    highest card that stays under the card winning the trick; if every card
    it holds in the suit would win, it plays its highest one when it is last
    (the trick is its anyway) and its lowest one otherwise (a later player
    may still go over). Void in the led suit, it throws its highest card.

Auction (``auction``, before hand 1)
    It estimates the tricks it would take as dealer (:func:`auction_estimate`):
    the length of the suit it would name trump, plus its side aces, plus
    half a trick for each side king with another card of its suit, plus 2
    for the kitty and the discards. It bids the lowest bid allowed when the
    estimate reaches it (a higher bid only raises its own quota), and passes
    otherwise. (The measured estimate of the calls, with margins from -1 to
    +1, and other margins on this one did not bid better in duplicate
    play: docs/results/heuristic-ab.md.)

Face-up card (holder of 2D, ``one_card_kitty``)
    The card it would put out is the one its discard rules below would
    discard first from its hand. It takes the face-up card when that card is
    worth more than this one, comparing (trump, master, rank): a trump beats
    a side card, then a master (above every card still out in its suit)
    beats a non-master, then the higher rank wins. Otherwise it declines.
    (Letting the discard rules choose among the hand and the face-up card
    together was not measurably better: docs/results/heuristic-ab.md.)

Trump (dealer)
    Names its longest suit, and among equally long suits the strongest:
    the score is 3 points a card plus honours (A 1.5, K 1.0, Q 0.6, J 0.3),
    so one more card outweighs all but the very best honours. (Measured in
    duplicate play, length first beats a score that weighs honours as
    much as length.)

Discards (dealer, 4 cards)
    Never a trump while a side card is left, never a master (a card above
    every outstanding card of its suit, e.g. an ace). Prefers emptying a
    short side suit entirely (a void lets it ruff that suit later): the
    shortest side suit that can be emptied with the discards left goes
    first, lowest card first; otherwise the lowest side card of its
    shortest side suit. Discarding before trump is named
    (``kitty_before_exchange``), it treats the suit it would name now as
    trump.

Play of the tricks
    *Counting.* It counts the trumps and the other cards still out (not in
    its hand, not played, not among its own discards) and remembers the
    voids each opponent has shown.

    *Leading.* With at least as many trumps as are still out (and an
    opponent who may hold one) it draws trumps: the top trump if it is
    master, otherwise a low trump when it holds two more than are out. Then
    it cashes side-suit masters, choosing a suit where no opponent is known
    to be able to ruff and where most cards are still out. With a master
    trump left it draws. Otherwise it leads a low singleton to make a void
    (when it holds trumps), else the lowest card of its longest side suit.

    *Following suit.* Last to play: the cheapest card that wins, else the
    lowest. Second to play: the cheapest master card that wins (when the
    last player is not known to be able to ruff), else it ducks with its
    lowest card.

    *Void in the led suit.* It trumps in with the cheapest trump that wins
    (over-trumping if the trick is already trumped); second to play, when
    the last player is void too and may over-trump, it uses the lowest trump
    above every outstanding trump if it has one. Every trick counts one for
    its own quota, so a winning ruff is always worth a low trump. When it
    cannot or need not win, it throws its least useful card: no trump, no
    master, low cards first, from its shortest suit (towards a void).

Quotas
    The balance is ``tricks - quota`` and being up next hand earns the
    exchange, so every extra trick is worth the same whatever the quota;
    the player therefore always plays for tricks, and a player far over its
    quota keeps fighting too (it may be racing to the 12 tricks that win the
    game).

Four players (``players: 4``)
    The same rules, read for four: "last to play" is the fourth card of the
    trick, "second to play" is any earlier place, the worry that "the last
    player" may ruff is about every player still to play, and trumps are
    drawn while any opponent may hold one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sm_env.core.cards import SUIT_MASK, from_mask, highest, lowest, to_mask
from sm_env.core.game import (
    ASSIGN,
    BID,
    BID_ACTION_BASE,
    DISCARD,
    EXCHANGE,
    MIZ,
    PASS_ACTION,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    assignment_of,
    winning_card,
)
from sm_env.core.knowledge import PlayerView

from .base import Agent
from .unseen import outstanding_of

# The measured estimates (training/evaluation/heuristic_ab.py fit): least squares of the dealer's tricks, the heuristic
# playing every seat, on the features below of the dealer's 16 dealt cards (before discards and kitty).
SUIT_WEIGHTS = (0.02, 1.01, 0.87, 0.80, 0.60, 0.31, 0.96, 0.61, 0.20, 0.39, 0.24, 0.22)
NT_WEIGHTS = (1.61, 0.94, 1.08, 0.91, 0.48, 0.16)
MIZ_WEIGHTS = (2.25, 0.54, 0.53, 0.50, 0.48, 0.47, 0.31, -0.47, -0.52)
ASSIGN_HIGH_TO = "middle"
CALL_MEANS = (-1.33, -1.33, -1.33, -1.33, -2.06, -0.41)  # each call's mean balance as dealer (fit; suits alike)
CALL_RESERVE = CALL_MEANS
TAKE_RULE = "worth"

_HONOUR = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 0.6, 1.0, 1.5)  # by rank index 0 (2) .. 12 (A)
# Rough chance that a card of this rank (index 0 = 2 .. 12 = A) takes a trick.
_TRICK_VALUE = (0.02, 0.02, 0.03, 0.03, 0.04, 0.05, 0.07, 0.1, 0.18, 0.3, 0.5, 0.75, 1.0)
_RANK = tuple(sum(1 << (13 * s + r) for s in range(4)) for r in range(13))  # the cards of each rank index
_LOW_CARDS = _RANK[0] | _RANK[1] | _RANK[2] | _RANK[3]  # the 2s to 5s

# ---------------------------------------------------------------- the rules written once, for two engines
#
# The rules from here to COMPILED are the heuristic's one implementation: run here as plain Python (this agent,
# agents.search.rollout) and compiled by agents.search.rollout_kernel (numba) for the batched rollouts, where every
# name they use resolves to a compiled value: these functions, numba's bit-set primitives for ``count``, ``lowest``
# and ``highest``, the engine's winning_card. So they keep to what numba compiles: integer bit sets, loops with
# explicit tie-breaks, tuples of one type; no lambdas, comprehensions, keyword arguments or int methods. A trick or
# the voids by seat is a sequence (a tuple here, the first entries of a buffer there): its length is the cards
# played or the seats at the table. tests/test_rollout_kernel.py plays the two engines card for card.

count = int.bit_count  # the cards in a bit set


def _after(seat: int, k: int, players: int) -> int:
    """The seat ``k`` places after ``seat`` (0 <= k < players): (seat + k) % players, no division."""
    s = seat + k
    return s - players if s >= players else s


def _above(mask: int, card: int) -> int:
    """Cards of ``mask`` in the suit of ``card`` that rank above it."""
    return ((mask >> (card + 1)) << (card + 1)) & SUIT_MASK[card // 13]


def _bit(hand: int, card: int) -> int:
    return (hand >> card) & 1


def _lowest_rank(mask: int) -> int:
    """The card of ``mask`` of the lowest rank, ties to the lower card id (-1 for none)."""
    best = -1
    c = mask
    while c:
        card = lowest(c)
        c &= c - 1
        if best < 0 or card % 13 < best % 13:
            best = card
    return best


def _trump_score(hand: int, s: int) -> float:
    """Suit ``s``'s score as trump: 3 points a card plus honours."""
    cards = hand & SUIT_MASK[s]
    score = 3.0 * count(cards)
    c = cards
    while c:
        score += _HONOUR[lowest(c) % 13]
        c &= c - 1
    return score


def choose_trump(hand: int) -> int:
    """The suit (0-3) to name: the best trump score, ties to the higher top card, then the lower suit."""
    best = -1
    best_score = -1.0
    best_top = -2
    for s in range(4):
        score = _trump_score(hand, s)
        top = highest(hand & SUIT_MASK[s])
        if best < 0 or score > best_score or (score == best_score and top > best_top):
            best, best_score, best_top = s, score, top
    return best


def choose_discard(hand: int, trump: int, outstanding: int, left: int) -> int:
    """The next card to discard (``left`` discards still to make, this one included)."""
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    side = hand & ~trump_mask
    keep = 0  # masters: above every outstanding card of their suit
    for s in range(4):
        cards = side & SUIT_MASK[s]
        if cards:
            top = highest(cards)
            if not _above(outstanding, top):
                keep |= 1 << top
                # a run below the top is master too (A K with the rest out below)
                nxt = cards ^ (1 << top)
                while nxt and not _above(outstanding, highest(nxt)):
                    keep |= 1 << highest(nxt)
                    nxt ^= 1 << highest(nxt)
    free = side & ~keep
    if free:
        best = -1
        for s in range(4):  # the shortest suit that the discards left can empty, ties to the lower suit
            n = count(free & SUIT_MASK[s])
            if n and not (side & keep & SUIT_MASK[s]) and n <= left:
                if best < 0 or n < count(free & SUIT_MASK[best]):
                    best = s
        if best >= 0:
            return lowest(free & SUIT_MASK[best])
        for s in range(4):  # else the shortest suit, ties to the lower low card
            n = count(free & SUIT_MASK[s])
            if n:
                if best < 0:
                    best = s
                else:
                    nb = count(free & SUIT_MASK[best])
                    if n < nb or (n == nb and lowest(free & SUIT_MASK[s]) < lowest(free & SUIT_MASK[best])):
                        best = s
        return lowest(free & SUIT_MASK[best])
    if side:
        return _lowest_rank(side)
    return lowest(hand)


def _can_ruff(seat: int, suit: int, trump: int, voids: Sequence[int], trumps_out: int) -> bool:
    """Whether ``seat`` is known void in ``suit`` and may still hold a trump."""
    return trumps_out != 0 and ((voids[seat] >> suit) & 1) == 1 and ((voids[seat] >> trump) & 1) == 0


def _later_can_ruff(seat: int, played: int, suit: int, trump: int, voids: Sequence[int], trumps_out: int) -> bool:
    """Whether a player still to play after ``seat`` (``played`` cards already in the trick) may ruff ``suit``."""
    players = len(voids)
    for k in range(1, players - played):
        if _can_ruff(_after(seat, k, players), suit, trump, voids, trumps_out):
            return True
    return False


def _throw(hand: int, trump: int, outstanding: int) -> int:
    """The least useful card: no trump, no master, low first, shortest suit first."""
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    pool = hand & ~trump_mask
    if pool == 0:
        pool = hand
    best = -1
    bk0 = bk1 = bk2 = bk3 = 0
    c = pool
    while c:
        card = lowest(c)
        c &= c - 1
        k0 = 0 if _above(outstanding, card) else 1  # a master
        k1 = 1 if card % 13 >= 10 else 0
        k2 = count(hand & SUIT_MASK[card // 13])
        k3 = card % 13
        if best < 0 or (k0, k1, k2, k3) < (bk0, bk1, bk2, bk3):
            best, bk0, bk1, bk2, bk3 = card, k0, k1, k2, k3
    return best


def _lead(seat: int, hand: int, trump: int, outstanding: int, voids: Sequence[int]) -> int:
    """The card to lead (module docstring: draw trumps, cash side masters, make a void, the longest suit)."""
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    mine_t = hand & trump_mask
    out_t = outstanding & trump_mask
    opp_trumps = False  # an opponent may hold a trump: some are out and not every opponent showed out of trumps
    if out_t:
        players = len(voids)
        for k in range(1, players):
            if ((voids[_after(seat, k, players)] >> trump) & 1) == 0:
                opp_trumps = True
                break
    if mine_t != 0 and opp_trumps:
        n_mine = count(mine_t)
        n_out = count(out_t)
        if n_mine >= n_out:
            if highest(mine_t) > highest(out_t):
                return highest(mine_t)
            if n_mine >= n_out + 2:
                return lowest(mine_t)
    best = -1  # cash side masters where no one is known to ruff: most cards out, then the higher rank
    bk0 = bk1 = 0
    for s in range(4):
        cards = hand & SUIT_MASK[s]
        if s == trump or not cards:
            continue
        top = highest(cards)
        if _above(outstanding, top):
            continue
        out_s = count(outstanding & SUIT_MASK[s])
        if trump >= 0 and opp_trumps and (out_s < 2 or _later_can_ruff(seat, 0, s, trump, voids, out_t)):
            continue
        if best < 0 or (out_s, top % 13) > (bk0, bk1):
            best, bk0, bk1 = top, out_s, top % 13
    if best >= 0:
        return best
    if mine_t != 0 and opp_trumps and highest(mine_t) > highest(out_t):
        return highest(mine_t)
    side = hand & ~trump_mask
    if side:
        if mine_t:
            single = -1
            for s in range(4):  # the lowest singleton that is not master, ties to the lower suit
                cards = side & SUIT_MASK[s]
                if count(cards) == 1 and _above(outstanding, highest(cards)):
                    if single < 0 or highest(cards) % 13 < highest(side & SUIT_MASK[single]) % 13:
                        single = s
            if single >= 0:
                return highest(side & SUIT_MASK[single])
        best_s = -1
        bl = bm = 0
        for s in range(4):  # the longest suit, ties to the lower low card, then the higher suit
            cards = side & SUIT_MASK[s]
            n = count(cards)
            if n:
                m = -(lowest(cards) % 13)
                if best_s < 0 or (n, m) >= (bl, bm):
                    best_s, bl, bm = s, n, m
        return lowest(side & SUIT_MASK[best_s])
    if mine_t != 0 and highest(mine_t) > highest(out_t):
        return highest(mine_t)
    return lowest(mine_t)


def _ruff(trumps: int, seat: int, played: int, led: int, trump: int, voids: Sequence[int], out_t: int) -> int:
    """The trump to win with among ``trumps``: the lowest, or the lowest above every outstanding trump when a player
    still to play may over-ruff and it has one."""
    if played < len(voids) - 1 and _later_can_ruff(seat, played, led, trump, voids, out_t):
        safe = _above(trumps, highest(out_t)) if out_t else trumps
        if safe:
            return lowest(safe)
    return lowest(trumps)


def choose_play(seat: int, hand: int, trick: Sequence[int], trump: int, outstanding: int, voids: Sequence[int]) -> int:
    """The card to play. ``trick``: cards of the open trick in play order
    (the leader's first); ``outstanding``: cards that may be in an opponent's
    hand; ``voids``: 4-bit suit sets of shown voids by seat (one per player)."""
    n = len(trick)
    if n == 0:
        return _lead(seat, hand, trump, outstanding, voids)
    led = trick[0] // 13
    win = winning_card(trick, trump)
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    out_t = outstanding & trump_mask
    follow = hand & SUIT_MASK[led]
    if follow:
        higher = _above(follow, win)
        if win // 13 != led or not higher:  # trumped, or nothing higher: following cannot win
            return lowest(follow)
        if n == len(voids) - 1:  # last
            return lowest(higher)
        if led != trump and _later_can_ruff(seat, n, led, trump, voids, out_t):
            return lowest(follow)
        out_led = outstanding & SUIT_MASK[led]
        masters = higher
        while masters and _above(out_led, lowest(masters)):
            masters ^= masters & -masters
        if masters:
            return lowest(masters)
        return lowest(follow)
    mine_t = hand & trump_mask
    if mine_t:
        if win // 13 != trump:
            return _ruff(mine_t, seat, n, led, trump, voids, out_t)
        over = _above(mine_t, win)
        if over:
            return _ruff(over, seat, n, led, trump, voids, out_t)
    return _throw(hand, trump, outstanding)


def _worth(card: int, trump: int, outstanding: int) -> int:
    """A card's (trump, master: no outstanding card above it, rank) as one ordered number."""
    return (card // 13 == trump) * 26 + (_above(outstanding, card) == 0) * 13 + card % 13


def take_by_worth(hand: int, face_up: int, trump: int, outstanding: int) -> int:
    """:func:`choose_take`'s rule ``"worth"``: the card the discard rules would discard first from the hand, put
    out to take the face-up card when that is worth more (trump, master, rank); else PASS_ACTION."""
    worst = choose_discard(hand, trump, outstanding, 1)
    if _worth(face_up, trump, outstanding) > _worth(worst, trump, outstanding):
        return worst
    return PASS_ACTION


def suit_features(hand: int, trump: int) -> tuple[int, ...]:
    """Features of a hand for a suit contract: (1, trump length, trump A, K, Q, J, side aces, side kings with
    another card of their suit, bare side kings, side queens with two others, side voids, side singletons)."""
    aces = kings = bare = queens = voids = singles = 0
    for s in range(4):
        if s != trump:
            length = count(hand & SUIT_MASK[s])
            aces += _bit(hand, 13 * s + 12)
            if length >= 2:
                kings += _bit(hand, 13 * s + 11)
            else:
                bare += _bit(hand, 13 * s + 11)
            if length >= 3:
                queens += _bit(hand, 13 * s + 10)
            if length == 0:
                voids += 1
            if length == 1:
                singles += 1
    length = count(hand & SUIT_MASK[trump])
    t = 13 * trump
    honours = _bit(hand, t + 12), _bit(hand, t + 11), _bit(hand, t + 10), _bit(hand, t + 9)
    return 1, length, honours[0], honours[1], honours[2], honours[3], aces, kings, bare, queens, voids, singles


def nt_features(hand: int) -> tuple[int, ...]:
    """Features for no trump: (1, aces, kings with 1+ other card, queens with 2+, jacks with 3+, cards beyond
    the fourth of each suit)."""
    kings = queens = jacks = extra = 0
    for s in range(4):
        length = count(hand & SUIT_MASK[s])
        if length >= 2:
            kings += _bit(hand, 13 * s + 11)
        if length >= 3:
            queens += _bit(hand, 13 * s + 10)
        if length >= 4:
            jacks += _bit(hand, 13 * s + 9)
            extra += length - 4
    return (1, count(hand & _RANK[12]), kings, queens, jacks, extra)


def miz_features(hand: int) -> tuple[int, ...]:
    """Features for misère: (1, aces, kings, queens, jacks, tens, nines, cards 2-5, voids)."""
    voids = 0
    for s in range(4):
        if not hand & SUIT_MASK[s]:
            voids += 1
    a, k, q, j = count(hand & _RANK[12]), count(hand & _RANK[11]), count(hand & _RANK[10]), count(hand & _RANK[9])
    return 1, a, k, q, j, count(hand & _RANK[8]), count(hand & _RANK[7]), count(hand & _LOW_CARDS), voids


def _dot(weights: tuple[float, ...], features: tuple[int, ...]) -> float:
    """sum(w * f), added up in the order of the features."""
    total = 0.0
    for k in range(len(weights)):
        total += weights[k] * features[k]
    return total


def call_values(hand: int) -> list[float]:
    """The expected balance of each call (0-3 a suit, 4 NT, 5 Miz) as dealer: estimated tricks minus the quota
    8 (:func:`estimate_tricks`, ``NT_WEIGHTS``), or for Miz the maximum 3 minus the estimated tricks
    (``MIZ_WEIGHTS``)."""
    values = [0.0] * 6
    for s in range(4):
        values[s] = _dot(SUIT_WEIGHTS, suit_features(hand, s)) - 8
    values[4] = _dot(NT_WEIGHTS, nt_features(hand)) - 8
    values[5] = 3 - _dot(MIZ_WEIGHTS, miz_features(hand))
    return values


def choose_call(hand: int, left: int, reserve: Sequence[float] = CALL_RESERVE) -> int:
    """The call (0-3 a suit, 4 NT, 5 Miz) among those in ``left`` (a 6-bit set): the best expected balance
    (:func:`call_values`) minus the call's ``reserve`` (what keeping it for a later hand is worth; nothing
    when it is the last call left). Ties go to the lower action."""
    if count(left) == 1:
        return lowest(left)
    values = call_values(hand)
    best = -1
    best_value = 0.0
    for c in range(6):
        if (left >> c) & 1:
            value = values[c] - reserve[c]
            if best < 0 or value > best_value:
                best, best_value = c, value
    return best


def choose_miz_discard(hand: int) -> int:
    """A misère discard: the highest card, from the shortest suit among equal ranks (then the higher card id)."""
    best = -1
    bk0 = bk1 = 0
    c = hand
    while c:
        card = lowest(c)
        c &= c - 1
        k0 = card % 13
        k1 = -count(hand & SUIT_MASK[card // 13])
        if best < 0 or (k0, k1) >= (bk0, bk1):
            best, bk0, bk1 = card, k0, k1
    return best


def choose_miz_play(hand: int, trick: Sequence[int]) -> int:
    """A misère card (module docstring): duck under the winning card, shed high cards (no trump in misère)."""
    if len(trick) == 0:
        return _lowest_rank(hand)
    follow = hand & SUIT_MASK[trick[0] // 13]
    if not follow:  # the highest rank, then the higher card id
        best = -1
        c = hand
        while c:
            card = lowest(c)
            c &= c - 1
            if best < 0 or card % 13 >= best % 13:
                best = card
        return best
    under = follow & ((1 << winning_card(trick, -1)) - 1)
    if under:
        return highest(under)
    return highest(follow) if len(trick) == 2 else lowest(follow)


COMPILED = tuple(
    "_after _above _bit _lowest_rank _trump_score choose_trump choose_discard _can_ruff _later_can_ruff _throw _lead "
    "_ruff choose_play _worth take_by_worth suit_features nt_features miz_features _dot call_values choose_call "
    "choose_miz_discard choose_miz_play".split()
)
"""The rules above, in the order they are defined: what :mod:`agents.search.rollout_kernel` compiles."""

# ---------------------------------------------------------------- Python only: exchange, the dealer's other choices


def trump_scores(hand: int) -> list[float]:
    """Score of each suit as trump: 3 points a card plus honours."""
    return [_trump_score(hand, s) for s in range(4)]


def send_gain(card: int, outstanding: int, p_hold: float, pending_same_suit: int) -> float:
    """Expected gain in trick value from sending ``card``: the receiver returns its
    best card of the suit if that is higher (the ``pending_same_suit``-th best if
    cards of this suit are already on their way)."""
    higher = _above(outstanding, card)
    if not higher:
        return 0.0
    base = _TRICK_VALUE[card % 13]
    gain = 0.0
    none_above = 1.0
    while higher:
        top = highest(higher)
        gain += none_above * p_hold * (_TRICK_VALUE[top % 13] - base)
        none_above *= 1.0 - p_hold
        higher ^= 1 << top
    return gain * (0.5**pending_same_suit)


def choose_send(hand: int, outstanding: int, receiver_size: int, pending: int, trump_hint: int) -> int:
    """The next card to send to a receiver (``pending``: cards already chosen for it)."""
    unknown = max(1, outstanding.bit_count())
    p_hold = min(1.0, receiver_size / unknown)
    best, best_key = -1, None
    for c in from_mask(hand):
        s = c // 13
        gain = send_gain(c, outstanding, p_hold, (pending & SUIT_MASK[s]).bit_count())
        if s == trump_hint:
            gain *= 1.5
        key = (gain, -(c % 13), -s)
        if best_key is None or key > best_key:
            best, best_key = c, key
    return best


def choose_assignment(view: PlayerView, high_to: str = ASSIGN_HIGH_TO) -> int:
    """The assignment action (68-73): the lowest quota to itself; of the other two, the higher one to the
    opponent named by ``high_to``: ``"leader"`` (the higher running score, ties the eldest), ``"trailer"``
    (the lower running score, ties the eldest), ``"eldest"`` or ``"middle"``."""
    low, mid, high = sorted(view.rules.quotas)
    me = view.seat
    eldest, middle = (view.dealer + 1) % 3, (view.dealer + 2) % 3
    if high_to == "leader":
        first = min((eldest, middle), key=lambda s: (-view.scores[s], view.role(s)))
    elif high_to == "trailer":
        first = min((eldest, middle), key=lambda s: (view.scores[s], view.role(s)))
    elif high_to in ("eldest", "middle"):
        first = eldest if high_to == "eldest" else middle
    else:
        raise ValueError(f"high_to must be 'leader', 'trailer', 'eldest' or 'middle', got {high_to!r}")
    want = {me: low, first: high, eldest + middle - first: mid}
    by_role = [want[(view.dealer + r) % 3] for r in range(3)]
    return next(a for a in from_mask(view.legal) if assignment_of(a, view.rules) == by_role)


def estimate_tricks(hand: int, trump: int | None = None) -> float:
    """Tricks the hand would take as dealer with ``trump`` as trump (default: the suit it would name): the
    measured linear estimate on :func:`suit_features` (``SUIT_WEIGHTS``)."""
    if trump is None:
        trump = choose_trump(hand)
    return _dot(SUIT_WEIGHTS, suit_features(hand, trump))


def auction_estimate(hand: int) -> float:
    """The auction's estimate of the tricks the hand would take as dealer: the length of the suit it would name
    trump, plus its side aces, plus half a trick for each side king with another card of its suit, plus 2
    (module docstring; measured against :func:`estimate_tricks`, it bids better, docs/results/heuristic-ab.md)."""
    trump = choose_trump(hand)
    estimate = 2.0 + (hand & SUIT_MASK[trump]).bit_count()
    for s in range(4):
        cards = hand & SUIT_MASK[s]
        if s != trump and cards:
            estimate += (cards >> (13 * s + 12)) & 1  # the ace
            if (cards >> (13 * s + 11)) & 1 and cards.bit_count() >= 2:
                estimate += 0.5  # a guarded king
    return estimate


def choose_bid(hand: int, legal: int, margin: float = 0.0, estimate: Callable[[int], float] = auction_estimate) -> int:
    """The auction action: the lowest legal bid when ``estimate`` of the hand reaches it plus ``margin``,
    else PASS_ACTION."""
    bids = legal & ~(1 << PASS_ACTION)
    if bids:
        low = lowest(bids)
        if estimate(hand) >= low - BID_ACTION_BASE + 8 + margin:
            return low
    return PASS_ACTION


def choose_take(hand: int, face_up: int, trump: int, outstanding: int, rule: str = TAKE_RULE) -> int:
    """The holder of 2D's choice (``one_card_kitty``): the card to put out of play, or PASS_ACTION to decline.

    ``outstanding``: cards that may be in an opponent's hand (not the face-up card). ``rule`` ``"worth"``:
    the card put out is the one the discard rules would discard first from the hand, and the face-up card is
    taken when it is worth more, comparing (trump, master, rank) (:func:`take_by_worth`). ``"discard"``: the
    discard rules choose among the hand and the face-up card together; the face-up card chosen means decline,
    any other card is the one put out."""
    if rule == "discard":
        worst = choose_discard(hand | 1 << face_up, trump, outstanding, 1)
        return PASS_ACTION if worst == face_up else worst
    return take_by_worth(hand, face_up, trump, outstanding)


# ---------------------------------------------------------------- the agent


def heuristic_action(view: PlayerView) -> int:
    """The heuristic's action for a view whose seat is to act."""
    phase = view.phase
    if phase == ASSIGN:
        return choose_assignment(view)
    if phase == PLAY:
        if view.call == MIZ:
            return choose_miz_play(view.hand, view.trick)
        return choose_play(view.seat, view.hand, view.trick, view.trump, outstanding_of(view), view.voids)
    if phase == BID:
        return choose_bid(view.hand, view.legal)
    if phase == TAKE:
        return choose_take(view.hand, view.face_up, view.trump, outstanding_of(view))
    if phase == TRUMP:
        if view.rules.calls:
            return TRUMP_ACTION_BASE + choose_call(view.hand, view.calls_left[view.seat])
        return TRUMP_ACTION_BASE + choose_trump(view.hand)
    if phase == DISCARD:
        if view.call == MIZ:
            return choose_miz_discard(view.hand)
        left = view.rules.kitty_size - len(view.discards or ())
        trump = view.trump if view.trump >= 0 else choose_trump(view.hand)
        return choose_discard(view.hand, trump, outstanding_of(view), left)
    if phase == EXCHANGE:
        receiver, _ = view.to_send[0]
        pending = 0
        for ex in view.exchanges:
            if ex.sender == view.seat and ex.receiver == receiver and ex.returned is None and ex.sent:
                pending |= to_mask(ex.sent)
        if view.trump >= 0:
            trump_hint = view.trump
        else:
            trump_hint = choose_trump(view.hand | pending) if view.seat == view.dealer else -1
        outstanding = outstanding_of(view) & ~pending
        return choose_send(view.hand, outstanding, view.hand_sizes[receiver], pending, trump_hint)
    raise ValueError(f"heuristic: nothing to do in phase {phase} (seat {view.seat} is not to act)")


class HeuristicAgent(Agent):
    """The rule-based player described in this module's docstring (deterministic)."""

    name = "heuristic"

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        return heuristic_action(view)
