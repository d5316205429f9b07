"""What one player knows: the single source for agents, the observation
vector and the renderer. A leak of hidden cards can only happen here.

A player may know (docs/rules.md 4.3, 5, 6 and docs/interface.md):

- its own hand; the public state (phase, whose turn, dealer, quotas, trump
  once named, tricks so far, cards played by each seat, tricks won,
  balances of the previous hand, running scores, hand sizes);
- voids shown in play (a seat that did not follow the led suit);
- in the exchange: who exchanges how many cards with whom (public); the
  sender sees its own chosen cards at once and the returned cards when they
  come back; the receiver sees the sent cards when they reach its hand
  (when the sender's round completes) and what it returned when it returns
  them (at once, or with ``trump_after_send`` after trump); the third player
  sees only counts (with four players, so do both others); whether the
  exchange is still pending is public;
- the dealer: its own discards and, once taken, the kitty;
- an up player shown kitty cards by the show rule: those cards;
- with ``one_card_kitty``: the face-up card and who took it or declined it
  (public); the card put out of play, only the player who put it out;
- with ``auction``: every bid and pass (public), so the winner and hand 1's
  quotas, and how many deals were passed out;
- with ``calls``: the hand's call, a misère hand's maxima and the calls each
  player has still to make (public).

It never knows another player's hand, the kitty (unless it is the dealer
and has taken it, or was shown cards of it), or the discards of another.

Two readings of it: :func:`player_view` (a :class:`PlayerView`: everything the
seat knows now, for agents, the observation and the renderer) and
:func:`hand_knowledge` (a :class:`HandKnowledge`: everything the seat observed of
one hand entry, past or in progress, in order: its perfect recall, for OpenSpiel's
information state and :mod:`sm_env.core.histories`).

All card sets are ``int`` bit sets (see :mod:`sm_env.core.cards`); seat-indexed
tuples are by absolute seat, one entry per player (four with ``players: 4``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .cards import to_mask
from .game import OVER, Game
from .logs import NO_SUIT, Exchange, Trick
from .rules import RuleSet

ExchangeView = Exchange
"""An exchange as a player sees it (:class:`sm_env.core.logs.Exchange`; cards None where hidden)."""
TrickView = Trick
"""A trick of the current hand (:class:`sm_env.core.logs.Trick`; public)."""


class PlayerView:
    """Everything seat ``seat`` knows at this moment (read-only).

    Attributes (absolute seats; card sets as bit sets):
        seat, rules, hand_number, phase, to_act (None when over), dealer,
        quotas (None while the dealer has still to assign them), tricks_won,
        scores (running scores: chip totals with the ``chips`` option), previous_balances (None in hand 1),
        trump (NO_SUIT = -1 before it is named), led_suit (NO_SUIT with no open trick),
        trick (cards of the open trick in play order), trick_leader,
        tricks_played, hand, hand_sizes, played (cards played this hand by
        each seat), voids (4-bit suit set per seat, shown in play),
        exchanges (ExchangeView tuple, in order carried out), gave / got
        (cards this player passed to / received from each seat in the
        exchange, as far as already known), shown (kitty cards shown to this
        player), discards (own discards if dealer, else None), kitty (the
        kitty if dealer and taken, else None), kitty_taken, discard_count
        (how many cards the dealer has discarded: public), legal (legal
        action bit set; 0 unless this player is to act), to_send
        ((receiver, cards still to choose) pairs while this player sends in
        the exchange, else ()), exchange_pending (this hand's exchange still
        has cards to send or to return: public), winner, truncated;
        with ``one_card_kitty``: face_up (the face-up card, public; -1
        without the option), take (None until the holder of 2D has decided,
        then (seat, taken: bool), public) and put_out (the card this player
        put out of play to take it, else None); with ``auction`` (public, see
        :meth:`sm_env.core.game.Game._reset_auction`): auction_first,
        auction_bids, auction_passed, auction_high, hand1_quotas and
        passed_out (during the auction ``dealer`` is the seat that bid first
        and ``quotas`` is None); with ``calls`` (public): call (-1 before
        it, 0-3 a suit, 4 NT, 5 Miz), maxima (by seat in a misère hand, else
        None) and calls_left (by seat, a 6-bit set of the calls not made yet).
    """

    __slots__ = (
        "seat",
        "rules",
        "hand_number",
        "phase",
        "to_act",
        "dealer",
        "quotas",
        "tricks_won",
        "scores",
        "previous_balances",
        "trump",
        "led_suit",
        "trick",
        "trick_leader",
        "tricks_played",
        "hand",
        "hand_sizes",
        "played",
        "voids",
        "exchanges",
        "gave",
        "got",
        "shown",
        "discards",
        "kitty",
        "kitty_taken",
        "discard_count",
        "legal",
        "to_send",
        "exchange_pending",
        "winner",
        "truncated",
        "face_up",
        "take",
        "put_out",
        "auction_first",
        "auction_bids",
        "auction_passed",
        "auction_high",
        "hand1_quotas",
        "passed_out",
        "call",
        "maxima",
        "calls_left",
        "_tricks",
    )

    seat: int
    rules: RuleSet
    hand_number: int
    phase: int
    to_act: int | None
    dealer: int
    quotas: tuple[int, ...] | None
    tricks_won: tuple[int, ...]
    scores: tuple[int, ...]
    previous_balances: tuple[int, ...] | None
    trump: int
    led_suit: int
    trick: tuple[int, ...]
    trick_leader: int
    tricks_played: int
    hand: int
    hand_sizes: tuple[int, ...]
    played: tuple[int, ...]
    voids: tuple[int, ...]
    exchanges: tuple[ExchangeView, ...]
    gave: tuple[int, ...]
    got: tuple[int, ...]
    shown: int
    discards: tuple[int, ...] | None
    kitty: int | None
    kitty_taken: bool
    discard_count: int
    legal: int
    to_send: tuple[tuple[int, int], ...]
    exchange_pending: bool
    winner: int | list[int] | None
    truncated: bool
    face_up: int
    take: tuple[int, bool] | None
    put_out: int | None
    auction_first: int
    auction_bids: tuple[tuple[int, int | None], ...]
    auction_passed: tuple[bool, bool, bool]
    auction_high: tuple[int, int] | None
    hand1_quotas: tuple[int, int, int] | None
    passed_out: int
    call: int
    maxima: tuple[int, int, int] | None
    calls_left: tuple[int, int, int]

    def role(self, seat: int | None = None) -> int:
        """Role of a seat (default: this player): 0 dealer, 1 eldest, 2 middle (with four: 2 third, 3 fourth)."""
        return ((self.seat if seat is None else seat) - self.dealer) % len(self.hand_sizes)

    def tricks(self) -> tuple[TrickView, ...]:
        """The tricks of the current hand so far (public), the open one last."""
        return tuple(t.frozen() for t in self._tricks if t.cards)

    def __repr__(self) -> str:
        return f"<PlayerView seat {self.seat} hand {self.hand_number} phase {self.phase} to_act {self.to_act}>"


def player_view(game: Game, seat: int) -> PlayerView:
    """Build the view of ``seat`` (0-2, or 0-3 with four players) from the game state."""
    log = game.history[-1]
    view = PlayerView.__new__(PlayerView)
    view.seat = seat
    view.rules = game.rules
    view.hand_number = game.hand_number
    phase = game.phase
    view.phase = phase
    view.to_act = None if phase == OVER else game.current
    dealer = game.dealer
    view.dealer = dealer
    view.quotas = None if game.quotas is None else tuple(game.quotas)
    view.tricks_won = tuple(game.tricks_won)
    view.scores = tuple(game.scores)
    prev = game.previous_balances
    view.previous_balances = None if prev is None else tuple(prev)
    view.trump = game.trump
    view.trick = tuple(game.trick)
    view.led_suit = game.led_suit if game.trick else NO_SUIT
    view.trick_leader = game.leader
    view.tricks_played = game.tricks_played
    hands = game.hands
    view.hand = hands[seat]
    if len(hands) == 3:
        view.hand_sizes = (hands[0].bit_count(), hands[1].bit_count(), hands[2].bit_count())
    else:  # four players
        view.hand_sizes = tuple([h.bit_count() for h in hands])
    view.played = tuple(game.played)
    view.voids = tuple(game.voids)
    exchanges = []
    gave = [0] * len(hands)
    got = [0] * len(hands)
    for entry in log.exchanges:
        sent = returned = None
        if seat == entry.sender:
            sent = tuple(entry.sent)
            returned = None if entry.returned is None else tuple(entry.returned)
            gave[entry.receiver] |= to_mask(entry.sent)
            if returned is not None:
                got[entry.receiver] |= to_mask(returned)
        elif seat == entry.receiver and entry.delivered:
            sent = tuple(entry.sent)
            got[entry.sender] |= to_mask(sent)
            if entry.returned is not None:
                returned = tuple(entry.returned)
                gave[entry.sender] |= to_mask(returned)
        exchanges.append(Exchange(entry.sender, entry.receiver, entry.count, sent, returned))
    view.exchanges = tuple(exchanges)
    view.gave = tuple(gave)
    view.got = tuple(got)
    shown = 0
    for to, cards in log.shown or ():
        if to == seat:
            shown |= to_mask(cards)
    view.shown = shown
    is_dealer = seat == dealer
    view.discards = tuple(log.discards or ()) if is_dealer else None
    view.discard_count = len(log.discards or ())
    view.kitty_taken = game.picked_up
    view.kitty = game.kitty_mask if is_dealer and game.picked_up else None
    acting = phase != OVER and game.current == seat
    view.legal = game.legal_mask() if acting else 0
    view.to_send = game.cards_to_send() if acting else ()
    view.exchange_pending = game.exchange_pending
    view.winner = game.winner
    view.truncated = game.truncated
    view.face_up = game.face_up
    take = game.take
    view.take = None if take is None else (take[0], take[1] is not None)
    view.put_out = take[1] if take is not None and take[0] == seat else None
    view.auction_first = game.auction_first
    view.auction_bids = game.auction_bids
    view.auction_passed = game.auction_passed
    view.auction_high = game.auction_high
    view.hand1_quotas = None if game.hand1_quotas is None else tuple(game.hand1_quotas)
    view.passed_out = game.passed_out
    view.call = game.call
    view.maxima = None if game.maxima is None else tuple(game.maxima)
    view.calls_left = game.calls_left
    view._tricks = log.tricks or ()  # public trick logs only, never the deal
    return view


class ExchangeKnowledge(NamedTuple):
    """One exchange as a seat knows it. Public: who gives how many cards to whom, how many are chosen so far
    (hand sizes show it), whether they have reached the receiver (``delivered``: the sender's round is
    complete) and whether the receiver has given its cards back (``back``). The seat's own: ``sent`` in the
    order chosen (to the sender at once, to the receiver once delivered) and ``returned`` (to both once
    back); None where hidden."""

    sender: int
    receiver: int
    count: int
    chosen: int
    delivered: bool
    back: bool
    sent: tuple[int, ...] | None
    returned: tuple[int, ...] | None


class HandKnowledge(NamedTuple):
    """Everything a seat knows of one hand entry of a game (a passed-out deal of the auction is one), past or
    in progress: the seat's perfect recall of that hand (card sets sorted, sequences in order).

    Public: ``number``, ``dealer`` and ``quotas`` by seat (None during an auction, quotas None until
    assigned), ``face_up`` (``one_card_kitty``, else -1), ``auction`` ((seat, bid or None) in order, None
    without one) and ``passed_out``, each exchange's seats, count and cards chosen so far, ``trump`` (NO_SUIT
    until named) and ``call`` (``calls``; -1 before it), ``discard_count``, ``kitty_taken``, ``take`` ((seat,
    taken) once decided), ``tricks`` (every card played, in order, the open trick last). The seat's own:
    ``dealt`` (its cards as dealt), the exchange cards it sent, received and returned (``exchanges``),
    ``discards`` (in order, dealer only), ``kitty`` (dealer, once taken), ``shown`` (kitty cards shown to it)
    and ``put_out`` (the card it put out to take the face-up card)."""

    number: int
    dealer: int | None
    quotas: tuple[int, ...] | None
    dealt: tuple[int, ...]
    face_up: int
    auction: tuple[tuple[int, int | None], ...] | None
    passed_out: bool
    exchanges: tuple[ExchangeKnowledge, ...]
    trump: int
    call: int
    discard_count: int
    discards: tuple[int, ...] | None
    kitty_taken: bool
    kitty: tuple[int, ...] | None
    shown: tuple[int, ...]
    take: tuple[int, bool] | None
    put_out: int | None
    tricks: tuple[Trick, ...]


def hand_knowledge(game: Game, seat: int, index: int) -> HandKnowledge:
    """What ``seat`` knows of hand entry ``index`` of ``game.history`` (0 = the first; the last may be in
    progress). Built from the hand's log by the rules of the module docstring, as :func:`player_view` is."""
    log = game.history[index]
    current = index in (-1, len(game.history) - 1)
    if current:
        kitty_taken = game.picked_up
    else:  # a hand that was played went through the kitty; a passed-out deal did not
        kitty_taken = game.rules.kitty_size > 0 and not log.passed_out
    exchanges = []
    for entry in log.exchanges:
        sent = returned = None
        if seat == entry.sender or (seat == entry.receiver and entry.delivered):
            sent = tuple(entry.sent)
            returned = None if entry.returned is None else tuple(entry.returned)
        exchanges.append(
            ExchangeKnowledge(
                entry.sender,
                entry.receiver,
                entry.count,
                len(entry.sent),
                entry.delivered,
                entry.returned is not None,
                sent,
                returned,
            )
        )
    is_dealer = seat == log.dealer
    take = log.take
    return HandKnowledge(
        number=log.number,
        dealer=log.dealer,
        quotas=None if log.quotas is None else tuple(log.quotas),
        dealt=tuple(sorted(log.deal_hands[seat])),
        face_up=log.kitty[0] if game.rules.one_card_kitty else -1,
        auction=None if log.auction is None else tuple(log.auction),
        passed_out=log.passed_out,
        exchanges=tuple(exchanges),
        trump=log.trump,
        call=log.call,
        discard_count=len(log.discards or ()),
        discards=tuple(log.discards or ()) if is_dealer else None,
        kitty_taken=kitty_taken,
        kitty=tuple(sorted(log.kitty)) if is_dealer and kitty_taken else None,
        shown=tuple(sorted(c for to, cards in log.shown or () if to == seat for c in cards)),
        take=None if take is None else (take[0], take[1] is not None),
        put_out=take[1] if take is not None and take[0] == seat else None,
        tricks=tuple(t.frozen() for t in log.tricks or () if t.cards),
    )


def hidden_cards(game: Game, seat: int) -> tuple[int, ...]:
    """What ``seat`` must never see, for a critic that sees the whole deal in training only (an asymmetric
    actor-critic): :func:`hidden_sets` of the game's hands and kitty. The one deliberate leak of this module:
    never give it, or anything made from it, to an actor."""
    return hidden_sets(game.hands, game.kitty_mask, seat)


def hidden_sets(hands: Sequence[int], kitty: int, seat: int) -> tuple[int, ...]:
    """The card sets hidden from ``seat`` given every seat's hand and the kitty as dealt: the hand of the seat
    ``r`` places to its left for ``r = 1 .. n - 1`` (with three players the left, then the right player), then
    the kitty. The layout of :meth:`sm_env.compiled.batch.VectorGame.full_state`."""
    n = len(hands)
    return (*(hands[(seat + r) % n] for r in range(1, n)), kitty)
