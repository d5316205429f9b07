"""The observation vector: a fixed-length float32 encoding of a
:class:`~sm_env.core.knowledge.PlayerView`, relative to the observing seat so
that one policy serves every seat.

Relative seats: 0 = self, 1 = left (next clockwise), 2 = right.
Card planes are 52 entries indexed by card id (docs/rules.md 2). Counts of
tricks and cards are scaled by 1/17 (the most tricks a hand can have in any
rule set), hand sizes by 1/20 (a dealer holding the kitty before
discarding), scores by 1/32 and clipped to [-1, 1]. Every entry lies in
[-1, 1].

Layout (offset, size, feature); ``OBSERVATION_LAYOUT`` holds it in code
(derived from one table, ``_FEATURES``; a test checks this table against it):

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
0     52    hand: cards in my hand
52    156   played[rel]: cards played this hand by self, left, right
208   156   trick[rel]: the card each relative seat put on the open trick
364   104   gave[rel 1, 2]: cards I passed to left, right in the exchange
468   104   got[rel 1, 2]: cards I received from left, right in the exchange
572   52    shown: kitty cards shown to me (show rule)
624   52    discards: my discards (dealer only)
676   52    kitty: the kitty (dealer only, once taken)
728   4     trump suit one-hot (zeros before trump is named)
732   4     led suit of the open trick one-hot
736   5     phase one-hot: exchange, trump, discard, play, over
741   3     my role one-hot: dealer, eldest, middle
744   3     quotas[rel] / 17
747   3     tricks won this hand[rel] / 17
750   3     hand sizes[rel] / 20, clipped to 1 (with ``trump_after_send`` a
            receiver holds its received cards until it returns them)
753   12    voids[rel][suit]: 1 where that seat showed out of the suit
765   3     previous hand's balances[rel] / 17 (what drives the exchange)
768   3     running scores[rel] / 32, clipped to [-1, 1] (chip totals with
            the ``chips`` option)
771   6     exchange counts / 17, pairs (from rel, to rel): (0,1) (0,2)
            (1,0) (1,2) (2,0) (2,1)
777   2     cards I still have to choose for left, right (exchange) / 17
779   1     discards the dealer still has to make / 4 (discard phase; public)
780   1     tricks played this hand / 17
781   1     kitty taken (1) or not (0)
782   3     player to act[rel] one-hot (zeros when the game is over)
785   3     leader of the open trick[rel] one-hot (play phase)
788   1     hand number / 100, clipped to 1
====  ====  ================================================================

Total: 789 entries. With ``no_kitty_51`` hands have 17 cards and the
kitty/discard planes stay zero; the layout does not change with the rule
set, except that rule sets with 74 actions (docs/rules.md 10.8:
``dealer_assigns_quotas``, ``one_card_kitty``, ``auction``, ``calls``) append
(``EXTENDED_FEATURES``):

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
789   1     assigning: 1 while the dealer assigns the quotas (the phase
            one-hot is then zero)
790   1     quotas known: 1 once this hand's quotas are assigned (before,
            the quotas entries are zero)
====  ====  ================================================================

Then each of these options, when on, appends its own features
(``OPTION_FEATURES``; these options never combine with each other, so each
block starts at 791). ``one_card_kitty`` (docs/rules.md 10.5):

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
791   52    face-up card: the card put face up at the deal (public; it stays
            set once taken)
843   3     taker[rel] one-hot: who took the face-up card
846   1     declined: 1 once the holder of 2D declined it
847   1     taking: 1 while I decide whether to take it (the phase one-hot
            is then zero)
848   52    put out: the card I put out of play to take it
====  ====  ================================================================

``auction`` (docs/rules.md 10.2; the auction being held, or the one that
decided hand 1; during the auction the role one-hot is zero):

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
791   1     bidding: 1 while the auction runs (the phase one-hot is zero)
792   3     highest bid of each seat[rel] / 16 (0: no bid)
795   3     passed[rel]: 1 for each seat that has passed
798   3     highest bidder[rel] one-hot (after the auction: hand 1's dealer)
801   1     highest bid / 16 (after the auction: hand 1's dealer's quota)
802   3     hand 1's quotas[rel] / 17 (once the auction is won)
805   3     first bidder[rel] one-hot
808   1     passed-out deals / 10, clipped to 1
====  ====  ================================================================

``calls`` (docs/rules.md 10.3; a no trump or misère hand has no trump, so the
trump one-hot is zero):

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
791   6     this hand's call one-hot: C, D, H, S, NT, Miz (zeros before it)
797   18    calls left[rel][call]: 1 for each call a seat has still to make
815   1     hands left / 18 (each player deals six hands)
====  ====  ================================================================

:func:`observation_size` gives the length for a rule set (789, 791 or 791
plus an option's block: 900 with ``one_card_kitty``, 809 with ``auction``, 816
with ``calls``; 1016 with four players); :func:`layout_of` the layout.

Four players (``players: 4``, docs/rules.md 10.6) have a layout of their
own, ``FOUR_LAYOUT``: the same features in the same order, with one entry
(or plane) per relative seat 0 = self, 1 = left (next clockwise),
2 = across, 3 = right, wherever the table above has one per seat:

====  ====  ================================================================
off   size  feature
====  ====  ================================================================
0     52    hand: cards in my hand
52    208   played[rel]: cards played this hand by self, left, across, right
260   208   trick[rel]: the card each relative seat put on the open trick
468   156   gave[rel 1, 2, 3]: cards I passed to left, across, right
624   156   got[rel 1, 2, 3]: cards I received from left, across, right
780   52    shown: kitty cards shown to me (show rule)
832   52    discards: my discards (dealer only)
884   52    kitty: the kitty (dealer only, once taken)
936   4     trump suit one-hot (zeros before trump is named)
940   4     led suit of the open trick one-hot
944   5     phase one-hot: exchange, trump, discard, play, over
949   4     my role one-hot: dealer, eldest, third, fourth
953   4     quotas[rel] / 17
957   4     tricks won this hand[rel] / 17
961   4     hand sizes[rel] / 20, clipped to 1
965   16    voids[rel][suit]: 1 where that seat showed out of the suit
981   4     previous hand's balances[rel] / 17
985   4     running scores[rel] / 32, clipped to [-1, 1]
989   12    exchange counts / 17, pairs (from rel, to rel): (0,1) (0,2)
            (0,3) (1,0) (1,2) (1,3) (2,0) (2,1) (2,3) (3,0) (3,1) (3,2)
1001  3     cards I still have to choose for left, across, right / 17
1004  1     discards the dealer still has to make / 4
1005  1     tricks played this hand / 17
1006  1     kitty taken (1) or not (0)
1007  4     player to act[rel] one-hot (zeros when the game is over)
1011  4     leader of the open trick[rel] one-hot (play phase)
1015  1     hand number / 100, clipped to 1
====  ====  ================================================================

Total: 1016 entries. ``seat_features(n)`` builds the table for n seats
(``seat_features(3)`` is the three-player table above), and
:func:`encode_seats` encodes it for any number of seats; :func:`encode`
uses the fast three-player code for three players (a test checks that both
agree there).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from sm_env.core.game import ASSIGN, BID, DISCARD, EXCHANGE, NUM_ACTIONS, OVER, PLAY, TAKE, Game
from sm_env.core.knowledge import PlayerView, hidden_cards
from sm_env.core.rules import RuleSet

# The layout in one table: (name, size), in order. Offsets, the docstring
# table (checked by a test) and every shift in encode() derive from it.
_FEATURES: tuple[tuple[str, int], ...] = (
    ("hand", 52),
    ("played", 156),
    ("trick", 156),
    ("gave", 104),
    ("got", 104),
    ("shown", 52),
    ("discards", 52),
    ("kitty", 52),
    ("trump", 4),
    ("led_suit", 4),
    ("phase", 5),
    ("role", 3),
    ("quotas", 3),
    ("tricks_won", 3),
    ("hand_sizes", 3),
    ("voids", 12),
    ("previous_balances", 3),
    ("scores", 3),
    ("exchange_counts", 6),
    ("to_send", 2),
    ("discards_left", 1),
    ("tricks_played", 1),
    ("kitty_taken", 1),
    ("to_act", 3),
    ("trick_leader", 3),
    ("hand_number", 1),
)


def _with_offsets(features: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int, int], ...]:
    layout, offset = [], 0
    for name, size in features:
        layout.append((name, offset, size))
        offset += size
    return tuple(layout)


OBSERVATION_LAYOUT: tuple[tuple[str, int, int], ...] = _with_offsets(_FEATURES)
"""(name, offset, size) of every feature, in order."""
OBSERVATION_SIZE = sum(size for _, size in _FEATURES)
OFFSETS = {name: off for name, off, _ in OBSERVATION_LAYOUT}

EXTENDED_FEATURES: tuple[tuple[str, int], ...] = (("assigning", 1), ("quotas_known", 1))
"""Appended for rule sets with 74 actions (after the 789 entries)."""
EXTENDED_LAYOUT: tuple[tuple[str, int, int], ...] = _with_offsets(_FEATURES + EXTENDED_FEATURES)
OPTION_FEATURES: dict[str, tuple[tuple[str, int], ...]] = {
    "one_card_kitty": (("face_up", 52), ("face_up_taker", 3), ("face_up_declined", 1), ("taking", 1), ("put_out", 52)),
    "auction": (
        ("bidding", 1),
        ("bids", 3),
        ("bid_passed", 3),
        ("high_bidder", 3),
        ("high_bid", 1),
        ("hand1_quotas", 3),
        ("first_bidder", 3),
        ("passed_out", 1),
    ),
    "calls": (("call", 6), ("calls_left", 18), ("hands_left", 1)),
}
"""Appended after ``EXTENDED_FEATURES`` when the option is on (the options never combine with each other)."""


@functools.lru_cache(maxsize=64)
def layout_of(rules: RuleSet) -> tuple[tuple[str, int, int], ...]:
    """(name, offset, size) of every feature of the observation under these rules."""
    if rules.num_players == 4:
        return FOUR_LAYOUT
    if rules.num_actions == NUM_ACTIONS:
        return OBSERVATION_LAYOUT
    features = _FEATURES + EXTENDED_FEATURES
    for option, block in OPTION_FEATURES.items():
        if getattr(rules, option):
            features += block
    return _with_offsets(features)


def seat_features(n: int) -> tuple[tuple[str, int], ...]:
    """The layout table (name, size) for ``n`` seats: one entry, plane or one-hot slot per relative seat
    where the three-player table has one per seat (``seat_features(3) == _FEATURES``)."""
    return (
        ("hand", 52),
        ("played", 52 * n),
        ("trick", 52 * n),
        ("gave", 52 * (n - 1)),
        ("got", 52 * (n - 1)),
        ("shown", 52),
        ("discards", 52),
        ("kitty", 52),
        ("trump", 4),
        ("led_suit", 4),
        ("phase", 5),
        ("role", n),
        ("quotas", n),
        ("tricks_won", n),
        ("hand_sizes", n),
        ("voids", 4 * n),
        ("previous_balances", n),
        ("scores", n),
        ("exchange_counts", n * (n - 1)),
        ("to_send", n - 1),
        ("discards_left", 1),
        ("tricks_played", 1),
        ("kitty_taken", 1),
        ("to_act", n),
        ("trick_leader", n),
        ("hand_number", 1),
    )


FOUR_LAYOUT: tuple[tuple[str, int, int], ...] = _with_offsets(seat_features(4))
"""(name, offset, size) of every feature with four players."""
FOUR_OBSERVATION_SIZE = sum(size for _, size in seat_features(4))


def binary_size(players: int) -> int:
    """The card-plane entries at the start of an observation of ``players`` seats (728 with three, 936 with
    four): the entries that are 0 or 1 (distillation stores them packed, the warm start reads them so)."""
    size = 0
    for name, width in seat_features(players):
        if name == "trump":
            return size
        size += width
    raise AssertionError("the layout has no trump feature")  # the layout table always has one


def observation_size(rules: RuleSet) -> int:
    """Length of the observation vector under these rules: 789, or 791 with 74 actions, plus an option's block;
    1016 with four players."""
    _name, off, size = layout_of(rules)[-1]
    return off + size


# The card planes (52 entries each, hand .. kitty) come first; encode builds
# them as one integer with plane k at bit 52 * k.
_SCALARS = OFFSETS["trump"]  # first entry after the card planes
_PLANE_BYTES = _SCALARS // 8
_HAND, _PLAYED, _TRICK = OFFSETS["hand"], OFFSETS["played"], OFFSETS["trick"]
_GAVE, _GOT, _SHOWN = OFFSETS["gave"], OFFSETS["got"], OFFSETS["shown"]
_DISCARDS_BASE, _KITTY_BASE = OFFSETS["discards"], OFFSETS["kitty"]

# The scalar features, as offsets relative to _SCALARS.
_TRUMP = OFFSETS["trump"] - _SCALARS
_LED = OFFSETS["led_suit"] - _SCALARS
_PHASE = OFFSETS["phase"] - _SCALARS
_ROLE = OFFSETS["role"] - _SCALARS
_QUOTAS = OFFSETS["quotas"] - _SCALARS
_TRICKS_WON = OFFSETS["tricks_won"] - _SCALARS
_HAND_SIZES = OFFSETS["hand_sizes"] - _SCALARS
_VOIDS = OFFSETS["voids"] - _SCALARS
_PREV = OFFSETS["previous_balances"] - _SCALARS
_SCORES = OFFSETS["scores"] - _SCALARS
_COUNTS = OFFSETS["exchange_counts"] - _SCALARS
_TO_SEND = OFFSETS["to_send"] - _SCALARS
_DISCARDS_LEFT = OFFSETS["discards_left"] - _SCALARS
_TRICKS_PLAYED = OFFSETS["tricks_played"] - _SCALARS
_KITTY_TAKEN = OFFSETS["kitty_taken"] - _SCALARS
_TO_ACT = OFFSETS["to_act"] - _SCALARS
_LEADER = OFFSETS["trick_leader"] - _SCALARS
_HAND_NUMBER = OFFSETS["hand_number"] - _SCALARS

_PAIRS = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))
_NO_SCALARS = [0.0] * (OBSERVATION_SIZE - _SCALARS)
_PAIR_SLOT = {pair: _COUNTS + i for i, pair in enumerate(_PAIRS)}
_VOID_SUITS = tuple(tuple(s for s in range(4) if v >> s & 1) for v in range(16))


def encode(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector of a view (written into ``out`` if given; every entry is written)."""
    rules = view.rules
    if rules.num_players != 3:
        return encode_seats(view, out)
    extended = rules.num_actions != NUM_ACTIONS
    if out is None:
        out = np.empty(observation_size(rules) if extended else OBSERVATION_SIZE, dtype=np.float32)
    seat = view.seat
    left, right = (seat + 1) % 3, (seat + 2) % 3
    played, gave, got = view.played, view.gave, view.got
    # the 14 card planes as one 728-bit integer, plane k at bit 52 * k
    big = (
        view.hand << _HAND
        | played[seat] << _PLAYED
        | played[left] << _PLAYED + 52
        | played[right] << _PLAYED + 104
        | gave[left] << _GAVE
        | gave[right] << _GAVE + 52
        | got[left] << _GOT
        | got[right] << _GOT + 52
        | view.shown << _SHOWN
    )
    leader = view.trick_leader
    rel = (leader - seat) % 3
    for card in view.trick:
        big |= 1 << (_TRICK + 52 * rel + card)
        rel = 0 if rel == 2 else rel + 1
    discards = view.discards
    if discards:
        for card in discards:
            big |= 1 << (_DISCARDS_BASE + card)
    if view.kitty:
        big |= view.kitty << _KITTY_BASE
    planes = np.frombuffer(big.to_bytes(_PLANE_BYTES, "little"), dtype=np.uint8)
    out[:_SCALARS] = np.unpackbits(planes, bitorder="little")
    x = _NO_SCALARS[:]  # the scalar features, offsets relative to _SCALARS
    if view.trump >= 0:
        x[_TRUMP + view.trump] = 1.0
    if view.led_suit >= 0:
        x[_LED + view.led_suit] = 1.0
    phase = view.phase
    if phase <= OVER:  # the section 10 phases (assign, take) have their own entries
        x[_PHASE + phase] = 1.0
    if phase != BID:  # no roles before the auction is won
        x[_ROLE + (seat - view.dealer) % 3] = 1.0
    q, tw, hs, sc = view.quotas, view.tricks_won, view.hand_sizes, view.scores
    if q is not None:
        x[_QUOTAS], x[_QUOTAS + 1], x[_QUOTAS + 2] = q[seat] / 17.0, q[left] / 17.0, q[right] / 17.0
    x[_TRICKS_WON], x[_TRICKS_WON + 1], x[_TRICKS_WON + 2] = tw[seat] / 17.0, tw[left] / 17.0, tw[right] / 17.0
    x[_HAND_SIZES], x[_HAND_SIZES + 1], x[_HAND_SIZES + 2] = (
        min(hs[seat] / 20.0, 1.0),
        min(hs[left] / 20.0, 1.0),
        min(hs[right] / 20.0, 1.0),
    )
    for r, s in ((0, seat), (1, left), (2, right)):
        v = sc[s]
        if v:
            x[_SCORES + r] = 1.0 if v >= 32 else -1.0 if v <= -32 else v / 32.0
    prev = view.previous_balances
    if prev is not None:
        x[_PREV], x[_PREV + 1], x[_PREV + 2] = prev[seat] / 17.0, prev[left] / 17.0, prev[right] / 17.0
    voids = view.voids
    if voids[0] or voids[1] or voids[2]:
        for r, s in ((0, seat), (1, left), (2, right)):
            for suit in _VOID_SUITS[voids[s]]:
                x[_VOIDS + 4 * r + suit] = 1.0
    for ex in view.exchanges:
        x[_PAIR_SLOT[(ex.sender - seat) % 3, (ex.receiver - seat) % 3]] += ex.count / 17.0
    if phase == EXCHANGE:
        for receiver, left_to_choose in view.to_send:
            x[_TO_SEND + (receiver - seat) % 3 - 1] = left_to_choose / 17.0
    elif phase == DISCARD:
        x[_DISCARDS_LEFT] = (view.rules.kitty_size - view.discard_count) / 4.0
    x[_TRICKS_PLAYED] = view.tricks_played / 17.0
    if view.kitty_taken:
        x[_KITTY_TAKEN] = 1.0
    if phase != OVER:
        x[_TO_ACT + (view.to_act - seat) % 3] = 1.0
        if phase == PLAY:
            x[_LEADER + (leader - seat) % 3] = 1.0
    hand_number = view.hand_number
    x[_HAND_NUMBER] = 1.0 if hand_number >= 100 else hand_number / 100.0
    if extended:
        x += [1.0 if phase == ASSIGN else 0.0, 0.0 if q is None else 1.0]
        if rules.one_card_kitty:
            x += _one_card_kitty(view)
        elif rules.auction:
            x += _auction(view)
        elif rules.calls:
            x += _calls(view)
    out[_SCALARS:] = x
    return out


def _one_card_kitty(view: PlayerView) -> list[float]:
    """The ``one_card_kitty`` block (see the module docstring)."""
    seat = view.seat
    x = [0.0] * 109
    x[view.face_up] = 1.0
    if view.take is not None:
        taker, taken = view.take
        if taken:
            x[52 + (taker - seat) % 3] = 1.0
        else:
            x[55] = 1.0
    if view.phase == TAKE and view.to_act == seat:
        x[56] = 1.0
    if view.put_out is not None:
        x[57 + view.put_out] = 1.0
    return x


def _calls(view: PlayerView) -> list[float]:
    """The ``calls`` block (see the module docstring)."""
    seat = view.seat
    x = [0.0] * 25
    if view.call >= 0:
        x[view.call] = 1.0
    for s in range(3):
        left = view.calls_left[s]
        base = 6 + 6 * ((s - seat) % 3)
        for k in range(6):
            if left >> k & 1:
                x[base + k] = 1.0
    x[24] = sum(c.bit_count() for c in view.calls_left) / 18.0
    return x


def _auction(view: PlayerView) -> list[float]:
    """The ``auction`` block (see the module docstring)."""
    seat = view.seat
    x = [0.0] * 18
    x[0] = 1.0 if view.phase == BID else 0.0
    for bidder, bid in view.auction_bids:
        if bid is not None:
            x[1 + (bidder - seat) % 3] = bid / 16.0
    for s in range(3):
        if view.auction_passed[s]:
            x[4 + (s - seat) % 3] = 1.0
    if view.auction_high is not None:
        bid, bidder = view.auction_high
        x[7 + (bidder - seat) % 3] = 1.0
        x[10] = bid / 16.0
    if view.hand1_quotas is not None:
        for s in range(3):
            x[11 + (s - seat) % 3] = view.hand1_quotas[s] / 17.0
    x[14 + (view.auction_first - seat) % 3] = 1.0
    x[17] = min(view.passed_out / 10.0, 1.0)
    return x


_SEAT_OFFSETS: dict[int, dict[str, int]] = {}


def encode_seats(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector for any number of seats, in the layout of ``seat_features(n)`` (plus the
    extended features with 74 actions). The reference for :func:`encode`, which is the fast path for three."""
    rules = view.rules
    n = len(view.hand_sizes)
    off = _SEAT_OFFSETS.get(n)
    if off is None:
        off = _SEAT_OFFSETS[n] = {name: o for name, o, _ in _with_offsets(seat_features(n))}
    size = sum(s for _, s in seat_features(n))
    extended = rules.num_actions != NUM_ACTIONS
    total = size + (len(EXTENDED_FEATURES) if extended else 0)
    x = np.zeros(total, dtype=np.float32)
    seat = view.seat

    def rel(s: int) -> int:
        return (s - seat) % n

    def plane(start: int, cards: int) -> None:
        bits = np.unpackbits(np.frombuffer(cards.to_bytes(7, "little"), dtype=np.uint8), bitorder="little")
        x[start : start + 52] = np.maximum(x[start : start + 52], bits[:52])

    plane(off["hand"], view.hand)
    for s in range(n):
        plane(off["played"] + 52 * rel(s), view.played[s])
        if s != seat:
            plane(off["gave"] + 52 * (rel(s) - 1), view.gave[s])
            plane(off["got"] + 52 * (rel(s) - 1), view.got[s])
    for k, card in enumerate(view.trick):
        x[off["trick"] + 52 * rel(view.trick_leader + k) + card] = 1.0
    plane(off["shown"], view.shown)
    for card in view.discards or ():
        x[off["discards"] + card] = 1.0
    if view.kitty:
        plane(off["kitty"], view.kitty)
    if view.trump >= 0:
        x[off["trump"] + view.trump] = 1.0
    if view.led_suit >= 0:
        x[off["led_suit"] + view.led_suit] = 1.0
    phase = view.phase
    if phase != ASSIGN:
        x[off["phase"] + phase] = 1.0
    x[off["role"] + (seat - view.dealer) % n] = 1.0
    for s in range(n):
        r = rel(s)
        if view.quotas is not None:
            x[off["quotas"] + r] = view.quotas[s] / 17.0
        x[off["tricks_won"] + r] = view.tricks_won[s] / 17.0
        x[off["hand_sizes"] + r] = min(view.hand_sizes[s] / 20.0, 1.0)
        for suit in range(4):
            if view.voids[s] >> suit & 1:
                x[off["voids"] + 4 * r + suit] = 1.0
        if view.previous_balances is not None:
            x[off["previous_balances"] + r] = view.previous_balances[s] / 17.0
        x[off["scores"] + r] = min(1.0, max(-1.0, view.scores[s] / 32.0))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    for ex in view.exchanges:
        x[off["exchange_counts"] + pairs.index((rel(ex.sender), rel(ex.receiver)))] += ex.count / 17.0
    if phase == EXCHANGE:
        for receiver, left_to_choose in view.to_send:
            x[off["to_send"] + rel(receiver) - 1] = left_to_choose / 17.0
    elif phase == DISCARD:
        x[off["discards_left"]] = (rules.kitty_size - view.discard_count) / 4.0
    x[off["tricks_played"]] = view.tricks_played / 17.0
    x[off["kitty_taken"]] = 1.0 if view.kitty_taken else 0.0
    if phase != OVER:
        x[off["to_act"] + rel(view.to_act)] = 1.0
        if phase == PLAY:
            x[off["trick_leader"] + rel(view.trick_leader)] = 1.0
    x[off["hand_number"]] = min(view.hand_number / 100.0, 1.0)
    if extended:
        x[size] = 1.0 if phase == ASSIGN else 0.0
        x[size + 1] = 0.0 if view.quotas is None else 1.0
    if out is None:
        return x
    out[:] = x
    return out


# _BYTE_BITS[b]: the 8 mask entries (0/1 bytes, lowest bit first) of one byte of the legal bit set
_BYTE_BITS: tuple[bytes, ...] = tuple(bytes((b >> k) & 1 for k in range(8)) for b in range(256))


def full_state(game: Game, seat: int) -> np.ndarray:
    """float32 [52 * P]: the cards hidden from ``seat`` (:func:`sm_env.core.knowledge.hidden_cards`) as
    :func:`card_planes`: what a critic may see in training, never an actor. The same vector as
    :meth:`sm_env.compiled.batch.VectorGame.full_state` for that seat."""
    return card_planes(hidden_cards(game, seat))


def card_planes(sets: Sequence[int]) -> np.ndarray:
    """float32 [52 * len(sets)]: one 52-entry plane per card set, entry ``13 * suit + rank`` 1.0 for a card in
    it (card ids of :mod:`sm_env.core.cards`)."""
    out = np.zeros(52 * len(sets), dtype=np.float32)
    for index, cards in enumerate(sets):
        while cards:
            low = cards & -cards
            out[52 * index + low.bit_length() - 1] = 1.0
            cards ^= low
    return out


def action_mask(legal: int, num_actions: int = NUM_ACTIONS) -> np.ndarray:
    """The int8 0/1 action mask (a fresh, writable array of length ``num_actions``, 56 or 74) of a
    legal-action bit set."""
    size = (num_actions + 7) // 8
    mask = np.frombuffer(bytearray(b"".join([_BYTE_BITS[b] for b in legal.to_bytes(size, "little")])), dtype=np.int8)
    return mask if size * 8 == num_actions else mask[:num_actions]


def observed_phases(obs: np.ndarray, players: int = 3) -> np.ndarray:
    """The phase of each row of a batch of observations (``players`` seats): ``EXCHANGE``, ``TRUMP``,
    ``DISCARD``, ``PLAY`` or ``OVER`` (sm_env.core.game), read from the ``phase`` one-hot; -1 where the one-hot
    is empty (the section 10 phases: assign, take, bid)."""
    offset = next(off for name, off, _ in _with_offsets(seat_features(players)) if name == "phase")
    one_hot = obs[:, offset : offset + 5]
    return np.where(one_hot.sum(axis=1) == 1, one_hot.argmax(axis=1), -1)


def observed_roles(obs: np.ndarray, players: int = 3) -> np.ndarray:
    """The role of the observing seat in each row of a batch of observations (``players`` seats): 0 dealer,
    1 eldest, 2 middle (with four players 2 third, 3 fourth), read from the ``role`` one-hot."""
    offset = next(off for name, off, _ in _with_offsets(seat_features(players)) if name == "role")
    return obs[:, offset : offset + players].argmax(axis=1)


def describe(obs: np.ndarray, rules: RuleSet | None = None) -> dict[str, np.ndarray]:
    """Split an observation vector into its named features (for notebooks). Without ``rules`` the length
    picks the layout: 789 entries the standard one, 1016 the four-player one, else the 791 of 74-action rule
    sets (then the entries of an option's block are left out)."""
    if rules is not None:
        layout = layout_of(rules)
    elif len(obs) == FOUR_OBSERVATION_SIZE:
        layout = FOUR_LAYOUT
    else:
        layout = EXTENDED_LAYOUT if len(obs) > OBSERVATION_SIZE else OBSERVATION_LAYOUT
    return {name: obs[off : off + size] for name, off, size in layout}
