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
    the eldest: docs/results.md.)

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
    play: docs/results.md.)

Face-up card (holder of 2D, ``one_card_kitty``)
    The card it would put out is the one its discard rules below would
    discard first from its hand. It takes the face-up card when that card is
    worth more than this one, comparing (trump, master, rank): a trump beats
    a side card, then a master (above every card still out in its suit)
    beats a non-master, then the higher rank wins. Otherwise it declines.
    (Letting the discard rules choose among the hand and the face-up card
    together was not measurably better: docs/results.md.)

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

from collections.abc import Callable
from typing import Any

from sm_env.core.cards import SUIT_MASK, from_mask, to_mask
from sm_env.core.cards import highest as _high
from sm_env.core.cards import lowest as _low
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

_HONOUR = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0.3, 0.6, 1.0, 1.5)  # by rank index 0 (2) .. 12 (A)
# Rough chance that a card of this rank (index 0 = 2 .. 12 = A) takes a trick.
_TRICK_VALUE = (0.02, 0.02, 0.03, 0.03, 0.04, 0.05, 0.07, 0.1, 0.18, 0.3, 0.5, 0.75, 1.0)


def _above(mask: int, card: int) -> int:
    """Cards of ``mask`` in the suit of ``card`` that rank above it."""
    return (mask >> (card + 1) << (card + 1)) & SUIT_MASK[card // 13]


# ---------------------------------------------------------------- trump, discards


def trump_scores(hand: int) -> list[float]:
    """Score of each suit as trump: 3 points a card plus honours."""
    scores = []
    for s in range(4):
        cards = hand & SUIT_MASK[s]
        score = 3.0 * cards.bit_count()
        for c in from_mask(cards):
            score += _HONOUR[c % 13]
        scores.append(score)
    return scores


def choose_trump(hand: int) -> int:
    """The suit (0-3) to name: the best trump score, ties to the higher top card."""
    scores = trump_scores(hand)
    return max(range(4), key=lambda s: (scores[s], _high(hand & SUIT_MASK[s]), -s))


def choose_discard(hand: int, trump: int, outstanding: int, left: int) -> int:
    """The next card to discard (``left`` discards still to make, this one included)."""
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    side = hand & ~trump_mask
    keep = 0  # masters: above every outstanding card of their suit
    for s in range(4):
        cards = side & SUIT_MASK[s]
        if cards:
            top = _high(cards)
            if not _above(outstanding, top):
                keep |= 1 << top
                # a run below the top is master too (A K with the rest out below)
                nxt = cards ^ (1 << top)
                while nxt and not _above(outstanding, _high(nxt)):
                    keep |= 1 << _high(nxt)
                    nxt ^= 1 << _high(nxt)
    free = side & ~keep
    if free:
        lengths = [(free & SUIT_MASK[s]).bit_count() for s in range(4)]
        voidable = [s for s in range(4) if lengths[s] and not (side & keep & SUIT_MASK[s]) and lengths[s] <= left]
        if voidable:
            s = min(voidable, key=lambda s: (lengths[s], s))
            return _low(free & SUIT_MASK[s])
        s = min((s for s in range(4) if lengths[s]), key=lambda s: (lengths[s], _low(free & SUIT_MASK[s])))
        return _low(free & SUIT_MASK[s])
    if side:
        return min((c for c in range(52) if side >> c & 1), key=lambda c: (c % 13, c))
    return _low(hand)


# ---------------------------------------------------------------- exchange


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
        top = _high(higher)
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


# ---------------------------------------------------------------- play


def _can_ruff(seat: int, suit: int, trump: int, voids: tuple[int, ...] | list[int], trumps_out: int) -> bool:
    """Whether ``seat`` is known void in ``suit`` and may still hold a trump."""
    return bool(trumps_out) and bool(voids[seat] >> suit & 1) and not voids[seat] >> trump & 1


def _later_can_ruff(
    seat: int, played: int, suit: int, trump: int, voids: tuple[int, ...] | list[int], out: int
) -> bool:
    """Whether a player still to play after ``seat`` (``played`` cards already in the trick) may ruff ``suit``."""
    players = len(voids)
    for k in range(1, players - played):
        if _can_ruff((seat + k) % players, suit, trump, voids, out):
            return True
    return False


def _throw(hand: int, trump: int, outstanding: int) -> int:
    """The least useful card: no trump, no master, low first, shortest suit first."""
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    pool = hand & ~trump_mask or hand
    best, best_key = -1, None
    for c in from_mask(pool):
        s = c // 13
        master = not _above(outstanding, c)
        key = (master, c % 13 >= 10, (hand & SUIT_MASK[s]).bit_count(), c % 13)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


def _lead(seat: int, hand: int, trump: int, outstanding: int, voids: tuple[int, ...] | list[int]) -> int:
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    mine_t = hand & trump_mask
    out_t = outstanding & trump_mask
    opp_trumps = False  # an opponent may hold a trump: some are out and not every opponent showed out of trumps
    if out_t:
        players = len(voids)
        for k in range(1, players):
            if not voids[(seat + k) % players] >> trump & 1:
                opp_trumps = True
                break
    if mine_t and opp_trumps:
        n_mine, n_out = mine_t.bit_count(), out_t.bit_count()
        top = _high(mine_t)
        if n_mine >= n_out:
            if top > _high(out_t):
                return top
            if n_mine >= n_out + 2:
                return _low(mine_t)
    # cash side masters where no one is known to ruff
    best, best_key = -1, None
    for s in range(4):
        if s == trump:
            continue
        cards = hand & SUIT_MASK[s]
        if not cards:
            continue
        top = _high(cards)
        if _above(outstanding, top):
            continue
        out_s = (outstanding & SUIT_MASK[s]).bit_count()
        ruff = trump >= 0 and opp_trumps and (out_s < 2 or _later_can_ruff(seat, 0, s, trump, voids, out_t))
        if ruff:
            continue
        key = (out_s, top % 13)
        if best_key is None or key > best_key:
            best, best_key = top, key
    if best >= 0:
        return best
    if mine_t and opp_trumps and _high(mine_t) > _high(out_t):
        return _high(mine_t)
    side = hand & ~trump_mask
    if side:
        lengths = [(side & SUIT_MASK[s]).bit_count() for s in range(4)]
        if mine_t:
            singles = [s for s in range(4) if lengths[s] == 1 and _above(outstanding, _high(side & SUIT_MASK[s]))]
            if singles:
                s = min(singles, key=lambda s: (_high(side & SUIT_MASK[s]) % 13, s))
                return _high(side & SUIT_MASK[s])
        s = max((s for s in range(4) if lengths[s]), key=lambda s: (lengths[s], -(_low(side & SUIT_MASK[s]) % 13), s))
        return _low(side & SUIT_MASK[s])
    return _high(mine_t) if mine_t and _high(mine_t) > _high(out_t) else _low(mine_t)


def choose_play(
    seat: int,
    hand: int,
    trick: tuple[int, ...] | list[int],
    trump: int,
    outstanding: int,
    voids: tuple[int, ...] | list[int],
) -> int:
    """The card to play. ``trick``: cards of the open trick in play order
    (the leader's first); ``outstanding``: cards that may be in an opponent's
    hand; ``voids``: 4-bit suit sets of shown voids by seat (one per player)."""
    n = len(trick)
    if n == 0:
        return _lead(seat, hand, trump, outstanding, voids)
    led = trick[0] // 13
    win = winning_card(trick, trump)
    players = len(voids)
    last = n == players - 1
    trump_mask = SUIT_MASK[trump] if trump >= 0 else 0
    out_t = outstanding & trump_mask
    follow = hand & SUIT_MASK[led]
    if follow:
        if win // 13 != led:  # trumped: following cannot win
            return _low(follow)
        higher = _above(follow, win)
        if not higher:
            return _low(follow)
        if last:
            return _low(higher)
        if led != trump and _later_can_ruff(seat, n, led, trump, voids, out_t):
            return _low(follow)
        out_led = outstanding & SUIT_MASK[led]
        masters = higher
        while masters and _above(out_led, _low(masters)):
            masters ^= masters & -masters
        if masters:
            return _low(masters)
        return _low(follow)
    mine_t = hand & trump_mask
    if mine_t:
        if win // 13 == trump:
            over = _above(mine_t, win)
            if over:
                if not last and _later_can_ruff(seat, n, led, trump, voids, out_t):
                    safe = _above(over, _high(out_t)) if out_t else over
                    if safe:
                        return _low(safe)
                return _low(over)
            return _throw(hand, trump, outstanding)
        if not last and _later_can_ruff(seat, n, led, trump, voids, out_t):
            safe = _above(mine_t, _high(out_t)) if out_t else mine_t
            if safe:
                return _low(safe)
        return _low(mine_t)
    return _throw(hand, trump, outstanding)


# ---------------------------------------------------------------- the agent


# The measured estimates (training/evaluation/heuristic_ab.py fit): least squares of the dealer's tricks, the heuristic
# playing every seat, on the features below of the dealer's 16 dealt cards (before discards and kitty).
SUIT_WEIGHTS = (0.02, 1.01, 0.87, 0.80, 0.60, 0.31, 0.96, 0.61, 0.20, 0.39, 0.24, 0.22)
NT_WEIGHTS = (1.61, 0.94, 1.08, 0.91, 0.48, 0.16)
MIZ_WEIGHTS = (2.25, 0.54, 0.53, 0.50, 0.48, 0.47, 0.31, -0.47, -0.52)
ASSIGN_HIGH_TO = "middle"
CALL_MEANS = (-1.33, -1.33, -1.33, -1.33, -2.06, -0.41)  # each call's mean balance as dealer (fit; suits alike)
CALL_RESERVE = CALL_MEANS
TAKE_RULE = "worth"


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


def _bit(hand: int, card: int) -> int:
    return (hand >> card) & 1


def _suit_stats(hand: int) -> list[tuple[int, ...]]:
    """Per suit: (length, A, K, Q, J, guarded K, bare K, Q with 2+ others, void, singleton), each 0/1 but the
    length."""
    stats = []
    for s in range(4):
        length = (hand & SUIT_MASK[s]).bit_count()
        b = 13 * s
        king, queen = _bit(hand, b + 11), _bit(hand, b + 10)
        guarded = int(length >= 2)
        stats.append(
            (
                length,
                _bit(hand, b + 12),
                king,
                queen,
                _bit(hand, b + 9),
                king & guarded,
                king & (1 - guarded),
                queen & int(length >= 3),
                int(length == 0),
                int(length == 1),
            )
        )
    return stats


def _side_features(stats: list[tuple[int, ...]], totals: list[int], trump: int) -> tuple[int, ...]:
    t = stats[trump]
    return (1, *t[:5], *(totals[i] - t[i] for i in (1, 5, 6, 7, 8, 9)))


def suit_features(hand: int, trump: int) -> tuple[int, ...]:
    """Features of a hand for a suit contract: (1, trump length, trump A, K, Q, J, side aces, side kings with
    another card of their suit, bare side kings, side queens with two others, side voids, side singletons)."""
    stats = _suit_stats(hand)
    return _side_features(stats, [sum(column) for column in zip(*stats, strict=True)], trump)


def nt_features(hand: int) -> tuple[int, ...]:
    """Features for no trump: (1, aces, kings with 1+ other card, queens with 2+, jacks with 3+, cards beyond
    the fourth of each suit)."""
    aces = kings = queens = jacks = extra = 0
    for s in range(4):
        length = (hand & SUIT_MASK[s]).bit_count()
        aces += _bit(hand, 13 * s + 12)
        kings += _bit(hand, 13 * s + 11) and length >= 2
        queens += _bit(hand, 13 * s + 10) and length >= 3
        jacks += _bit(hand, 13 * s + 9) and length >= 4
        extra += max(0, length - 4)
    return 1, aces, kings, queens, jacks, extra


def miz_features(hand: int) -> tuple[int, ...]:
    """Features for misère: (1, aces, kings, queens, jacks, tens, nines, cards 2-5, voids)."""
    ranks = [0] * 13
    for c in from_mask(hand):
        ranks[c % 13] += 1
    voids = sum(1 for s in range(4) if not hand & SUIT_MASK[s])
    return 1, ranks[12], ranks[11], ranks[10], ranks[9], ranks[8], ranks[7], sum(ranks[:4]), voids


def _dot(weights: tuple[float, ...], features: tuple[int, ...]) -> float:
    return sum(w * f for w, f in zip(weights, features, strict=True))


def estimate_tricks(hand: int, trump: int | None = None) -> float:
    """Tricks the hand would take as dealer with ``trump`` as trump (default: the suit it would name): the
    measured linear estimate on :func:`suit_features` (``SUIT_WEIGHTS``)."""
    if trump is None:
        trump = choose_trump(hand)
    return _dot(SUIT_WEIGHTS, suit_features(hand, trump))


def call_values(hand: int) -> list[float]:
    """The expected balance of each call (0-3 a suit, 4 NT, 5 Miz) as dealer: estimated tricks minus the quota
    8 (:func:`estimate_tricks`, ``NT_WEIGHTS``), or for Miz the maximum 3 minus the estimated tricks
    (``MIZ_WEIGHTS``)."""
    stats = _suit_stats(hand)
    totals = [sum(column) for column in zip(*stats, strict=True)]
    values = [_dot(SUIT_WEIGHTS, _side_features(stats, totals, s)) - 8 for s in range(4)]
    values.append(_dot(NT_WEIGHTS, nt_features(hand)) - 8)
    values.append(3 - _dot(MIZ_WEIGHTS, miz_features(hand)))
    return values


def choose_call(hand: int, left: int, reserve: tuple[float, ...] = CALL_RESERVE) -> int:
    """The call (0-3 a suit, 4 NT, 5 Miz) among those in ``left`` (a 6-bit set): the best expected balance
    (:func:`call_values`) minus the call's ``reserve`` (what keeping it for a later hand is worth; nothing
    when it is the last call left). Ties go to the lower action."""
    calls = [c for c in range(6) if left >> c & 1]
    if len(calls) == 1:
        return calls[0]
    values = call_values(hand)
    return max(calls, key=lambda c: (values[c] - reserve[c], -c))


def _rank_order(card: int) -> tuple[int, int]:
    return card % 13, card


def choose_miz_discard(hand: int) -> int:
    """A misère discard: the highest card, from the shortest suit among equal ranks."""
    return max(from_mask(hand), key=lambda c: (c % 13, -(hand & SUIT_MASK[c // 13]).bit_count(), c))


def choose_miz_play(hand: int, trick: list[int] | tuple[int, ...]) -> int:
    """A misère card (module docstring): duck under the winning card, shed high cards."""
    if not trick:
        return min(from_mask(hand), key=_rank_order)
    led = trick[0] // 13
    follow = hand & SUIT_MASK[led]
    if not follow:
        return max(from_mask(hand), key=_rank_order)
    win = winning_card(list(trick), -1)
    under = follow & ((1 << win) - 1)
    if under:
        return _high(under)
    return _high(follow) if len(trick) == 2 else _low(follow)


def auction_estimate(hand: int) -> float:
    """The auction's estimate of the tricks the hand would take as dealer: the length of the suit it would name
    trump, plus its side aces, plus half a trick for each side king with another card of its suit, plus 2
    (module docstring; measured against :func:`estimate_tricks`, it bids better, docs/results.md)."""
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
        lowest = _low(bids)
        if estimate(hand) >= lowest - BID_ACTION_BASE + 8 + margin:
            return lowest
    return PASS_ACTION


def choose_take(hand: int, face_up: int, trump: int, outstanding: int, rule: str = TAKE_RULE) -> int:
    """The holder of 2D's choice (``one_card_kitty``): the card to put out of play, or PASS_ACTION to decline.

    ``outstanding``: cards that may be in an opponent's hand (not the face-up card). ``rule`` ``"worth"``:
    the card put out is the one the discard rules would discard first from the hand, and the face-up card is
    taken when it is worth more, comparing (trump, master, rank). ``"discard"``: the discard rules choose
    among the hand and the face-up card together; the face-up card chosen means decline, any other card is
    the one put out."""
    if rule == "discard":
        worst = choose_discard(hand | 1 << face_up, trump, outstanding, 1)
        return PASS_ACTION if worst == face_up else worst
    worst = choose_discard(hand, trump, outstanding, 1)

    def worth(card: int) -> tuple[bool, bool, int]:
        return card // 13 == trump, not _above(outstanding, card), card % 13

    return worst if worth(face_up) > worth(worst) else PASS_ACTION


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
