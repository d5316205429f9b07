"""Log types of a hand.

Immutable, compared by value, shared by the player view
(:mod:`sm_env.core.knowledge`), the record writer (:mod:`sm_env.records.format`)
and parsed game records (:mod:`sm_env.records.replay`):

- :class:`Exchange`: one exchange (card lists None where hidden);
- :class:`Trick`: one trick (winner None while open);
- :class:`HandRecord`: one hand, everything a game record holds of it.

The engine's own logs grow while a hand is played, so they are mutable:
:class:`ExchangeLog`, :class:`TrickLog` and :class:`HandLog`, each with a
``frozen()`` snapshot of the immutable type: the record is written from
``HandLog.frozen()``, and replay reads a record back into the same
:class:`HandRecord`, so both directions of the format use one model of a hand.

"No trump yet" is :data:`NO_SUIT` (-1) everywhere in Python: engine, view
and logs; only the JSON record writes it as null.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

NO_SUIT = -1
"""The value of ``trump`` before trump is named and of ``led_suit`` with no open
trick, in the engine, the player view and the hand logs (a record writes null)."""


class Exchange(NamedTuple):
    """One exchange: ``sender`` (the up player) gives ``count`` cards to ``receiver``.

    ``sent`` in the order chosen and ``returned``; None where hidden from the
    player (view) or not yet known (returned before the cards move). A
    NamedTuple: built on every view, it is about three times cheaper to
    create than a frozen dataclass.
    """

    sender: int
    receiver: int
    count: int
    sent: tuple[int, ...] | None
    returned: tuple[int, ...] | None


class Trick(NamedTuple):
    """One trick: its leader, the cards in play order and the winner (None while open)."""

    leader: int
    cards: tuple[int, ...]
    winner: int | None


class HandRecord(NamedTuple):
    """One hand as a game record holds it (field for field :class:`HandLog`'s, as tuples).

    ``quotas`` by absolute seat (None until the dealer assigns them),
    ``assignment`` by role (None unless the rules let the dealer assign),
    ``deal_hands`` by seat and ``kitty`` as dealt, ``exchanges`` in the order
    carried out, ``trump`` (NO_SUIT until named), ``discards`` in order,
    ``shown`` as (receiver, cards) pairs, the section 10 fields (``take``:
    (seat, card put out or None) with one_card_kitty; ``auction``: (seat, bid
    or None) in order and ``passed_out`` with the auction; ``call``: 0-3 a
    suit, 4 NT, 5 Miz, -1 until called, and ``maxima`` by seat with calls),
    ``tricks`` in order (the last one may be open); the results
    (``tricks_won``, ``balances``, ``chips``, ``scores``, by seat) are None
    until the hand is scored. Fields of a stage not reached are None;
    ``dealer`` and ``quotas`` are None during an auction. Tuples by seat have
    one entry per player.
    """

    number: int
    dealer: int | None
    quotas: tuple[int, ...] | None
    assignment: tuple[int, ...] | None
    deal_hands: tuple[tuple[int, ...], ...]
    kitty: tuple[int, ...]
    exchanges: tuple[Exchange, ...]
    trump: int
    discards: tuple[int, ...] | None
    shown: tuple[tuple[int, tuple[int, ...]], ...] | None
    take: tuple[int, int | None] | None
    auction: tuple[tuple[int, int | None], ...] | None
    passed_out: bool
    call: int
    maxima: tuple[int, ...] | None
    tricks: tuple[Trick, ...] | None
    tricks_won: tuple[int, ...] | None
    balances: tuple[int, ...] | None
    chips: tuple[int, ...] | None
    scores: tuple[int, ...] | None


def _tuple(values: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


class ExchangeLog:
    """One exchange between an up player (``sender``) and a down player."""

    __slots__ = ("sender", "receiver", "count", "sent", "delivered", "returned")

    def __init__(self, sender: int, receiver: int, count: int) -> None:
        self.sender = sender
        self.receiver = receiver
        self.count = count
        self.sent: list[int] = []
        self.delivered = False  # the sent cards are in the receiver's hand (the sender's round is complete)
        self.returned: list[int] | None = None

    def frozen(self) -> Exchange:
        """The exchange as it stands, immutable (``returned`` None until the cards come back)."""
        return Exchange(self.sender, self.receiver, self.count, tuple(self.sent), _tuple(self.returned))

    def copy(self) -> ExchangeLog:
        other = ExchangeLog(self.sender, self.receiver, self.count)
        other.sent = list(self.sent)
        other.delivered = self.delivered
        other.returned = None if self.returned is None else list(self.returned)
        return other


class TrickLog:
    """One trick: its leader, the cards in play order and the winner (None while open)."""

    __slots__ = ("leader", "cards", "winner")

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self.cards: list[int] = []
        self.winner: int | None = None

    def frozen(self) -> Trick:
        """The trick as it stands, immutable."""
        return Trick(self.leader, tuple(self.cards), self.winner)


class HandLog:
    """Everything that happened in one hand, as the record needs it.

    Fields not yet known are None (shown, tricks_won, balances, chips, scores)
    or, for trump, NO_SUIT; ``chips`` stays None unless the rules use chips;
    ``discards`` and ``tricks`` grow as the hand is played.
    """

    __slots__ = (
        "number",
        "dealer",
        "quotas",
        "assignment",
        "deal_hands",
        "kitty",
        "exchanges",
        "trump",
        "discards",
        "shown",
        "take",
        "auction",
        "passed_out",
        "call",
        "maxima",
        "tricks",
        "tricks_won",
        "balances",
        "chips",
        "scores",
    )

    def __init__(
        self, number: int, dealer: int, quotas: list[int] | None, deal_hands: list[list[int]], kitty: list[int]
    ):
        self.number = number
        self.dealer = dealer
        self.quotas = quotas  # None until the dealer assigns them (dealer_assigns_quotas)
        self.assignment: list[int] | None = None  # the assigned quotas by role (dealer_assigns_quotas)
        self.deal_hands = deal_hands
        self.kitty = kitty
        self.exchanges: list[ExchangeLog] = []
        self.trump = NO_SUIT
        self.discards: list[int] | None = None
        self.shown: list[tuple[int, list[int]]] | None = None
        self.take: tuple[int, int | None] | None = None  # one_card_kitty: (seat, card put out or None)
        self.auction: list[tuple[int, int | None]] | None = None  # auction: (seat, bid or None) in order
        self.passed_out = False  # auction: every player passed; no hand was played
        self.call = -1  # calls: 0-3 a suit, 4 NT, 5 Miz; -1 until called
        self.maxima: list[int] | None = None  # calls: a misère hand's maxima by seat
        self.tricks: list[TrickLog] | None = None
        self.tricks_won: list[int] | None = None
        self.balances: list[int] | None = None
        self.chips: list[int] | None = None
        self.scores: list[int] | None = None

    def frozen(self) -> HandRecord:
        """The hand as it stands, immutable (an open trick included, even before its first card)."""
        return HandRecord(
            self.number,
            self.dealer,
            _tuple(self.quotas),
            _tuple(self.assignment),
            tuple(tuple(h) for h in self.deal_hands),
            tuple(self.kitty),
            tuple(e.frozen() for e in self.exchanges),
            self.trump,
            _tuple(self.discards),
            None if self.shown is None else tuple((to, tuple(cards)) for to, cards in self.shown),
            self.take,
            None if self.auction is None else tuple(self.auction),
            self.passed_out,
            self.call,
            _tuple(self.maxima),
            None if self.tricks is None else tuple(t.frozen() for t in self.tricks),
            _tuple(self.tricks_won),
            _tuple(self.balances),
            _tuple(self.chips),
            _tuple(self.scores),
        )

    def copy(self) -> HandLog:
        other = HandLog.__new__(HandLog)
        for name in HandLog.__slots__:
            setattr(other, name, getattr(self, name))
        other.exchanges = [e.copy() for e in self.exchanges]
        if self.discards is not None:
            other.discards = list(self.discards)
        if self.tricks is not None:
            other.tricks = list(self.tricks)
            last = self.tricks[-1] if self.tricks else None
            if last is not None and last.winner is None:
                open_trick = TrickLog(last.leader)
                open_trick.cards = list(last.cards)
                other.tricks[-1] = open_trick
        return other
