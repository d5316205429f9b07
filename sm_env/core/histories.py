"""Whole game histories consistent with what one seat knows (OpenSpiel's ``resample_from_infostate``).

:func:`sample_history` draws the deals and the hidden decisions of a game as far as it has gone, every hand
entry of it (hands played, a deal passed out in the auction, the hand in progress), so that the seat's
knowledge of each hand (:func:`sm_env.core.knowledge.hand_knowledge`) is what it was. It reads only a
:class:`GameKnowledge`: the public facts of the game and that seat's knowledge, never a hidden card; the
engine alone decides whether a drawn history is legal.

Hands are drawn one after the other, each on its own: what carries from a hand to the next (balances,
scores, the calls made, the tricks that order ``first_up_exchanges_first``) is public. For each hand:

1. Where the cards the seat has not seen lie once the hand's actions so far are done. The hand in progress: a
   deal of :func:`sm_env.core.worlds.sample_world` from the seat's ``PlayerView`` (voids shown in play, the
   cards it exchanged, the kitty cards shown to it, the face-up card: every fact of that module). A hand
   played out: every card was played but the dealer's discards and a card put out of play
   (``one_card_kitty``), so these are the cards the seat has not seen. A deal passed out: any deal of the
   cards it was not dealt.
2. The hand's events undone from there, the last first: the tricks (public), the face-up card taken and the
   card put out for it, the discards, the kitty taken by the dealer, each exchange's return and the cards
   sent. What the seat did not see is drawn: which unseen cards were out of play (discards, a card put out,
   cards chosen in an exchange round not complete yet), which of the dealer's cards were the kitty (with the
   cards shown to the seat, without those the show rule would have shown it), and every exchange between two
   other seats (the returned cards among the sender's cards above the receiver's best card of their suit,
   then cards of the same suits as the ones sent). The cards before the first event are the deal.
3. The deal and the decisions (by phase, in the order the engine asks for them) replayed by the engine,
   which checks each decision and makes the returns, the kitty and the show rule itself. The hand is kept
   when the seat's knowledge of the replayed hand equals the original; else it is drawn again, at most
   :data:`TRIES` times (then :class:`HistoryError`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .cards import SUIT_MASK, deck_of, from_mask, to_mask
from .game import (
    ASSIGN,
    ASSIGN_ACTION_BASE,
    BID,
    BID_ACTION_BASE,
    DISCARD,
    EXCHANGE,
    MAX_ACTIONS,
    OVER,
    PASS_ACTION,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    DealError,
    Game,
    IllegalActionError,
    assignment_of,
    hand_order,
    normalize_deal,
)
from .knowledge import HandKnowledge, PlayerView, hand_knowledge, player_view
from .logs import NO_SUIT
from .rules import RuleSet
from .worlds import sample_world

__all__ = ["TRIES", "GameKnowledge", "HistoryError", "SampledHistory", "game_knowledge", "sample_history"]

TRIES = 2000
"""Draws of one hand before :func:`sample_history` gives up (a hand's draw is rejected when the engine's replay
of it differs from what the seat knows; most hands take one or a few)."""


class HistoryError(RuntimeError):
    """No history consistent with the seat's knowledge was found in :data:`TRIES` draws of a hand."""


@dataclass(frozen=True)
class GameKnowledge:
    """What one seat knows of a game: the public setting (``rules``, ``first_dealer``: the seat drawn to deal
    first or, with ``auction``, to bid first, ``start_balances``, ``max_hands``), its knowledge of every hand
    entry so far (``hands``) and, while the last one is in progress, its ``PlayerView`` (``view``; None once
    that hand is over)."""

    rules: RuleSet
    seat: int
    first_dealer: int
    start_balances: tuple[int, ...] | None
    max_hands: int | None
    hands: tuple[HandKnowledge, ...]
    view: PlayerView | None


@dataclass(frozen=True)
class SampledHistory:
    """A drawn history: the first dealer, the deal of every hand entry (``{"hands": [...], "kitty": [...]}``
    by absolute seat, card ids; ``deals[k]`` is entry k's), the decisions of every entry in order, and the
    engine after them."""

    first_dealer: int
    deals: tuple[dict[str, list[int]], ...]
    actions: tuple[tuple[int, ...], ...]
    game: Game


def game_knowledge(game: Game, seat: int, hands: int | None = None) -> GameKnowledge:
    """What ``seat`` knows of ``game``, as far as its first ``hands`` hand entries (every entry by default; fewer
    leaves out a hand just dealt, which is then not known at all). The game must have been played from its
    first hand (not set up by ``Game.from_position``)."""
    total = len(game.history)
    count = total if hands is None else hands
    if not 1 <= count <= total:
        raise ValueError(f"hands must be between 1 and the {total} hand entries of the game, got {hands}")
    if game.history[0].number != 1:
        raise ValueError("game_knowledge: the game has no history before its hand (a position set up for search)")
    in_progress = count == total and game.phase != OVER
    return GameKnowledge(
        game.rules,
        seat,
        game.first_dealer,
        None if game.start_balances is None else tuple(game.start_balances),
        game.max_hands,
        tuple(hand_knowledge(game, seat, index) for index in range(count)),
        player_view(game, seat) if in_progress else None,
    )


def sample_history(knowledge: GameKnowledge, rng: random.Random) -> SampledHistory:
    """A history of the game with the same knowledge for the seat, hidden cards drawn from ``rng`` (module
    docstring); :class:`HistoryError` if a hand finds none in :data:`TRIES` draws."""
    if not knowledge.hands:
        raise ValueError("sample_history: the knowledge has no hand entry (at least one is dealt before it is drawn)")
    deals: list[dict[str, list[int]]] = []
    actions: list[tuple[int, ...]] = []
    before_last: Game | None = None  # the engine before the last decision of the previous hand entry
    game: Game | None = None
    count = len(knowledge.hands)
    for index, known in enumerate(knowledge.hands):
        view = knowledge.view if index == count - 1 else None
        for _ in range(TRIES):
            drawn = _draw_hand(knowledge, known, view, rng)
            if drawn is None:
                continue
            deal, queues = drawn
            start = _start(knowledge, deal, before_last, actions[-1] if actions else ())
            if start is None:
                continue
            game = start.clone()
            played = _play(game, queues, known.number)
            if played is not None and _same(game, knowledge.seat, index, known, view):
                break
        else:
            raise HistoryError(
                f"seat {knowledge.seat}: no history of hand entry {index + 1} fits what it knows in {TRIES} draws"
            )
        deals.append(deal)
        actions.append(tuple(played))
        if index < count - 1:
            before_last = start.clone()
            for action in played[:-1]:
                before_last.apply(action)
    assert game is not None
    return SampledHistory(knowledge.first_dealer, tuple(deals), tuple(actions), game)


def _start(
    knowledge: GameKnowledge, deal: dict[str, list[int]], before_last: Game | None, last: tuple[int, ...]
) -> Game | None:
    """The engine at the start of a hand entry dealt ``deal``: a new game for the first, else the previous entry's
    last decision made with ``deal`` queued. None if the engine refuses the deal."""
    try:
        if before_last is None:
            return Game(
                knowledge.rules,
                seed=0,
                first_dealer=knowledge.first_dealer,
                deals=[deal],
                max_hands=knowledge.max_hands,
                start_balances=knowledge.start_balances,
            )
        game = before_last.clone()
        game.deal_queue = [normalize_deal(deal, knowledge.rules)]
        game.apply(last[-1])
        return game
    except (DealError, IllegalActionError):
        return None


def _play(game: Game, queues: dict[int, list[int]], number: int) -> list[int] | None:
    """Apply the queued decisions of hand entry ``number`` in the order the engine asks for them; None if one is
    illegal or some are left over."""
    played: list[int] = []
    while game.phase != OVER and game.hand_number == number:
        queue = queues.get(game.phase)
        if not queue:
            break
        action = queue.pop(0)
        if not game.legal_mask() >> action & 1:
            return None
        game.apply(action)
        played.append(action)
    if any(queues.values()):
        return None
    return played


def _same(game: Game, seat: int, index: int, known: HandKnowledge, view: PlayerView | None) -> bool:
    """Whether the replayed entry is where the original stands and the seat knows the same of it."""
    if view is None:
        if game.phase != OVER and game.hand_number == known.number:
            return False  # the entry was played out, the replay stopped in it
    elif game.phase != view.phase or game.current != view.to_act or game.hand_number != known.number:
        return False
    return hand_knowledge(game, seat, index) == known


# ----------------------------------------------------------------------------- one hand, backwards


class _Undo:
    """The cards of a hand entry while its events are undone: ``hands`` by seat, ``kitty`` (the kitty, or the
    face-up card of ``one_card_kitty``), ``out`` (unseen cards out of play); ``gave`` by seat: the cards the
    seat whose knowledge this is gave that seat in the exchange (they came from it, not from a third seat)."""

    def __init__(self, hands: list[int], kitty: int, out: int, gave: list[int], rng: random.Random) -> None:
        self.hands = hands
        self.kitty = kitty
        self.out = out
        self.gave = gave
        self.rng = rng

    def take_out(self, count: int) -> list[int] | None:
        """``count`` unseen cards out of play, drawn (None if there are fewer)."""
        cards = from_mask(self.out)
        if len(cards) < count:
            return None
        chosen = self.rng.sample(cards, count)
        self.out &= ~to_mask(chosen)
        return chosen


def _draw_hand(
    knowledge: GameKnowledge, known: HandKnowledge, view: PlayerView | None, rng: random.Random
) -> tuple[dict[str, list[int]], dict[int, list[int]]] | None:
    """A deal of one hand entry and its decisions by phase, drawn backwards from where the cards lie (module
    docstring); None when this draw cannot be completed."""
    rules, me = knowledge.rules, knowledge.seat
    n = rules.num_players
    deck = deck_of(rules)
    queues = _public_queues(rules, known)
    if known.passed_out:  # nothing moved: any deal of the cards it did not see
        rest = from_mask(deck & ~to_mask(known.dealt))
        rng.shuffle(rest)
        hands = [0] * n
        hands[me] = to_mask(known.dealt)
        for seat in range(n):
            if seat != me:
                hands[seat], rest = to_mask(rest[: rules.hand_size]), rest[rules.hand_size :]
        return _deal_of(hands, to_mask(rest)), queues
    gave = [0] * n
    for ex in known.exchanges:
        if ex.sender == me and ex.sent is not None:
            gave[ex.receiver] |= to_mask(ex.sent)
        if ex.receiver == me and ex.returned is not None:
            gave[ex.sender] |= to_mask(ex.returned)
    if view is not None:
        world = sample_world(view, rng)
        undo = _Undo(list(world.hands), world.kitty, world.out, gave, rng)
    else:
        undo = _Undo([0] * n, 0, deck & ~_seen_at_end(known, me), gave, rng)
    if known.face_up >= 0:
        undo.kitty = 1 << known.face_up  # on the table unless taken (undone below)
    sends = _undo_events(rules, me, known, undo, queues)
    if sends is None:
        return None
    queues[EXCHANGE] = [card for cards in sends for card in cards]
    if undo.out or undo.hands[me] != to_mask(known.dealt):
        return None
    if any(h.bit_count() != rules.hand_size for h in undo.hands) or undo.kitty.bit_count() != rules.aside_size:
        return None
    return _deal_of(undo.hands, undo.kitty), queues


def _deal_of(hands: list[int], kitty: int) -> dict[str, list[int]]:
    return {"hands": [from_mask(h) for h in hands], "kitty": from_mask(kitty)}


def _seen_at_end(known: HandKnowledge, me: int) -> int:
    """The cards the seat has seen placed by the end of a hand played out: every card played, its own discards
    and card put out, the face-up card left on the table."""
    seen = 0
    for trick in known.tricks:
        seen |= to_mask(trick.cards)
    seen |= to_mask(known.discards or ())
    if known.put_out is not None:
        seen |= 1 << known.put_out
    if known.face_up >= 0 and (known.take is None or not known.take[1]):
        seen |= 1 << known.face_up
    return seen


def _public_queues(rules: RuleSet, known: HandKnowledge) -> dict[int, list[int]]:
    """The decisions everyone sees, by phase: bids, the quota assignment, trump or the call, the tricks."""
    queues: dict[int, list[int]] = {}
    if known.auction is not None:
        queues[BID] = [PASS_ACTION if bid is None else BID_ACTION_BASE + bid - 8 for _, bid in known.auction]
    if rules.dealer_assigns_quotas and known.quotas is not None and known.dealer is not None:
        dealer, wanted = known.dealer, list(known.quotas)
        for action in range(ASSIGN_ACTION_BASE, MAX_ACTIONS):
            by_role = assignment_of(action, rules)
            if [by_role[(s - dealer) % 3] for s in range(3)] == wanted:
                queues[ASSIGN] = [action]
                break
    if rules.calls and known.call >= 0:
        queues[TRUMP] = [TRUMP_ACTION_BASE + known.call]
    elif not rules.calls and known.trump != NO_SUIT:
        queues[TRUMP] = [TRUMP_ACTION_BASE + known.trump]
    queues[PLAY] = [card for trick in known.tricks for card in trick.cards]
    return queues


def _events(rules: RuleSet, known: HandKnowledge) -> list[tuple[str, int]]:
    """The events of the hand that moved cards, in the order they happened: ("send" | "deliver" | "return",
    exchange index), ("kitty", 0), ("discard", 0), ("take", 0), ("play", 0)."""
    exchanges = known.exchanges
    rounds: list[list[int]] = []
    for i, ex in enumerate(exchanges):
        if not rounds or exchanges[rounds[-1][0]].sender != ex.sender:
            rounds.append([])
        rounds[-1].append(i)
    events: list[tuple[str, int]] = []
    for stage in hand_order(rules):
        if stage in ("exchange", "send"):
            for members in rounds:
                events += [("send", i) for i in members]
                events += [("deliver", i) for i in members if exchanges[i].delivered]
                if stage == "exchange":
                    events += [("return", i) for i in members if exchanges[i].back]
        elif stage == "return":
            events += [("return", i) for i, ex in enumerate(exchanges) if ex.back]
        elif stage == "kitty" and known.kitty_taken:
            events.append(("kitty", 0))
        elif stage == "discard" and known.discard_count:
            events.append(("discard", 0))
        elif stage == "take" and known.take is not None:
            events.append(("take", 0))
    events.append(("play", 0))
    return events


def _undo_events(
    rules: RuleSet, me: int, known: HandKnowledge, undo: _Undo, queues: dict[int, list[int]]
) -> list[list[int]] | None:
    """Undo the hand's events, the last first, drawing what the seat did not see; fills the discard and take
    queues and returns the cards sent in each exchange in the order chosen (None if the draw fails)."""
    n = rules.num_players
    hands = undo.hands
    exchanges = known.exchanges
    sent: list[list[int] | None] = [None] * len(exchanges)
    reserved = 0  # cards drawn as sent in an exchange whose delivery is not undone yet
    for kind, i in reversed(_events(rules, known)):
        if kind == "play":
            for trick in known.tricks:
                for position, card in enumerate(trick.cards):
                    hands[(trick.leader + position) % n] |= 1 << card
        elif kind == "take":
            taker, taken = known.take
            if not taken:
                queues[TAKE] = [PASS_ACTION]
                continue
            put = [known.put_out] if taker == me else undo.take_out(1)
            if put is None or not hands[taker] >> known.face_up & 1:
                return None
            hands[taker] = hands[taker] & ~(1 << known.face_up) | 1 << put[0]
            queues[TAKE] = put
        elif kind == "discard":
            dealer = known.dealer
            cards = list(known.discards) if dealer == me else undo.take_out(known.discard_count)
            if cards is None:
                return None
            hands[dealer] |= to_mask(cards)
            queues[DISCARD] = cards
        elif kind == "kitty":
            kitty = _draw_kitty(rules, me, known, undo)
            if kitty is None:
                return None
            hands[known.dealer] &= ~kitty
            undo.kitty = kitty
        elif kind == "return":
            ex = exchanges[i]
            if ex.returned is not None:  # the seat's own exchange
                back, cards = to_mask(ex.returned), list(ex.sent)
            else:
                drawn = _draw_exchange(ex.count, ex.sender, ex.receiver, undo, reserved)
                if drawn is None:
                    return None
                back, cards = drawn
            if back & ~hands[ex.sender]:
                return None
            hands[ex.sender] &= ~back
            hands[ex.receiver] |= back
            sent[i] = cards
            reserved |= to_mask(cards)
        elif kind == "deliver":
            ex = exchanges[i]
            cards = sent[i]
            if cards is None:  # delivered, not returned yet
                if ex.sent is not None:
                    cards = list(ex.sent)
                else:
                    pool = from_mask(hands[ex.receiver] & ~undo.gave[ex.receiver] & ~reserved)
                    if len(pool) < ex.count:
                        return None
                    cards = undo.rng.sample(pool, ex.count)
                sent[i] = cards
            mask = to_mask(cards)
            if mask & ~hands[ex.receiver]:
                return None
            hands[ex.receiver] &= ~mask
            reserved &= ~mask
        else:  # send: the cards chosen go back to the sender (still out of play if not delivered)
            ex = exchanges[i]
            cards = sent[i]
            if cards is None:  # a round in progress
                cards = list(ex.sent) if ex.sender == me else undo.take_out(ex.chosen)
                if cards is None:
                    return None
                sent[i] = cards
            elif ex.sent is not None:
                sent[i] = cards = list(ex.sent)  # the order the seat saw
            hands[ex.sender] |= to_mask(cards)
    return [cards or [] for cards in sent]


def _draw_exchange(count: int, sender: int, receiver: int, undo: _Undo, reserved: int) -> tuple[int, list[int]] | None:
    """An exchange between two other seats, drawn from their hands just after it: the cards returned (the
    sender's cards above the receiver's best card of their suit, none the seat gave the sender) and the cards
    sent (as many of each of those suits, from the receiver's cards or straight back). None if impossible."""
    hands = undo.hands
    candidates = []
    for card in from_mask(hands[sender] & ~undo.gave[sender]):
        if card > (hands[receiver] & SUIT_MASK[card // 13]).bit_length() - 1:
            candidates.append(card)
    if len(candidates) < count:
        return None
    back = to_mask(undo.rng.sample(candidates, count))
    free = hands[receiver] & ~undo.gave[receiver] & ~reserved | back
    cards: list[int] = []
    for suit in range(4):
        need = (back & SUIT_MASK[suit]).bit_count()
        if need:
            cards += undo.rng.sample(from_mask(free & SUIT_MASK[suit]), need)
    undo.rng.shuffle(cards)
    return back, cards


def _draw_kitty(rules: RuleSet, me: int, known: HandKnowledge, undo: _Undo) -> int | None:
    """The kitty the dealer took, among its cards then: known to the dealer; else drawn with the cards shown to
    the seat and without those the show rule would have shown it or that the seat gave the dealer."""
    dealer = known.dealer
    if dealer == me:
        return to_mask(known.kitty)
    hand = undo.hands[dealer]
    shown = to_mask(known.shown)
    banned = undo.gave[dealer]
    if not rules.kitty_before_exchange:  # the show rule: a kitty card above my lowest return was shown to me
        for ex in known.exchanges:
            if ex.sender == me and ex.receiver == dealer and ex.returned is not None:
                for card in ex.returned:
                    banned |= SUIT_MASK[card // 13] & ~((2 << card) - 1)
    banned &= ~shown
    if shown & ~hand:
        return None
    pool = from_mask(hand & ~banned & ~shown)
    need = rules.kitty_size - shown.bit_count()
    if len(pool) < need:
        return None
    return shown | to_mask(undo.rng.sample(pool, need))
