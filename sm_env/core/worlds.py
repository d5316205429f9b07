"""Sampling full deals consistent with what one player knows, and turning a
sampled deal into an engine :class:`~sm_env.core.game.Game` for search.

Only a :class:`~sm_env.core.knowledge.PlayerView` is read: the real game's hidden
cards are never touched. The search agents use it through
:mod:`agents.search.world_sampler`, and :mod:`sm_env.core.histories` builds whole
game histories on it (OpenSpiel's ``resample_from_infostate``).

Where an unseen card can be
    Every card the player cannot place for certain is *unknown*. It lies in
    one of four locations: the hand of the opponent on the left, the hand of
    the opponent on the right (with four players a fifth: the hand of the
    opponent across), the kitty (while nobody has taken it), or
    *out* (the dealer's discards when the player is not the dealer, and
    cards an opponent has chosen in an exchange round that has not completed
    yet). Each location holds a known number of cards (hand sizes are
    public; the kitty has ``kitty_size`` cards until taken; *out* takes the
    rest).

What narrows a card's locations (each rule is conservative: it only drops a
location that is impossible)
    - A void shown in play: that opponent holds no card of the suit.
    - A card the player sent to receiver R that R did not give back stays
      with R; if a later exchange round (two up players) had R give cards to
      the other up player S2, it may have gone to S2 instead (with
      ``trump_after_send``, where every card is sent before any comes back,
      whichever of the two returned first). If R or S2 is the dealer and
      the discards come after the exchange, it may also have been discarded.
    - A card the player sent that has reached R but is not returned yet
      (``trump_after_send``, before the returns) is in R's hand.
    - A card the player, as receiver, returned to sender S is with S (or
      among S's discards if S is the dealer and discards after the exchange).
    - A kitty card shown to the player (show rule) is with the dealer (or
      among its discards when the dealer discards after taking the kitty).
    - With ``one_card_kitty``: the face-up card is known while on the table
      (before the decision, or declined); taken by an opponent T, it is in
      T's hand. T put one card out of play (*out*, capacity 1), so any card
      that may be in T's hand may be out instead, 2D included (T held it).
      While a seat decides, and after it declined, that seat holds 2D. The
      card the player itself put out is known.
    - When R returned cards of suit s, R keeps no card of s above the lowest
      one it returned: an unknown card above that stays out of R's hand for
      the rest of the hand (a later round makes R return any such card it
      receives; a higher kitty card is shown to the player, so known). If R is the
      dealer and discards after the exchange, its discards hold no such card
      either.

Sampling
    Cards are dealt one at a time in random order to one of their allowed
    locations, chosen with probability proportional to the room left there,
    among the locations that keep the rest of the deal possible (checked
    exactly with Hall's condition over the 15 sets of locations, 31 with
    four players). Without
    constraints this is a uniform random deal; with them it is close to
    uniform over the consistent deals, and never inconsistent.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .cards import CARD_TEXT, SUIT_MASK, deck_of, from_mask, to_mask
from .game import DISCARD, EXCHANGE, PLAY, TAKE, TRUMP, TWO_OF_DIAMONDS, Game, hand_order
from .knowledge import PlayerView

LEFT, RIGHT, KITTY, OUT = 0, 1, 2, 3
ACROSS = 4
"""The location of the opponent across the table (four players only; the other four keep their numbers)."""
LOCATION_NAMES = ("left", "right", "kitty", "out", "across")


def _checks(locations: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For an assignment of a card whose allowed set is t to location l, the sets of locations L whose slack
    must be >= 1 beforehand: l in L and t not a subset of L."""
    sets = 1 << locations
    return tuple(
        tuple(tuple(L for L in range(1, sets) if L >> loc & 1 and t & ~L) for loc in range(locations))
        for t in range(sets)
    )


CHECKS: tuple[tuple[tuple[int, ...], ...], ...] = _checks(4)
"""The checks for three players (four locations)."""
CHECKS_BY_LOCATIONS = {4: CHECKS, 5: _checks(5)}
"""The checks by number of locations: 4 with three players, 5 with four (ACROSS)."""


class WorldError(ValueError):
    """The view's facts admit no deal (a bug in the inference, or a corrupt view)."""


@dataclass(frozen=True)
class Constraints:
    """Where each unknown card may be, and how many cards each location holds.

    ``allowed[c]`` is a 4-bit set over (LEFT, RIGHT, KITTY, OUT), 0 for a
    card that is not unknown (5 bits with four players, ACROSS the fifth).
    ``seats`` maps LEFT and RIGHT (and ACROSS) to absolute seats;
    ``capacity`` has one entry per location.
    """

    seat: int
    seats: tuple[int, ...]
    unknown: int
    allowed: tuple[int, ...]
    capacity: tuple[int, ...]


@dataclass(frozen=True)
class World:
    """One full deal consistent with a view: every seat's hand (the viewer's
    own included), the kitty while it is not taken, and the cards out of play
    that the viewer cannot see (another dealer's discards, cards chosen in an
    exchange round not yet completed)."""

    hands: tuple[int, ...]
    kitty: int
    out: int


def _flag(view: PlayerView, seat: int) -> int:
    n = len(view.hand_sizes)
    rel = (seat - view.seat) % n
    return 1 << (LEFT if rel == 1 else RIGHT if rel == n - 1 else ACROSS)


def constraints_of(view: PlayerView) -> Constraints:
    """The locations each unknown card may be in, from the view alone.

    Every unknown card starts allowed in every location with room; then each source of fact (module
    docstring) narrows it: voids shown in play, the cards the seat sent, the cards it returned as receiver,
    the kitty cards shown to it, and what ``one_card_kitty`` makes public."""
    me = view.seat
    n = len(view.hand_sizes)
    opponents = ((me + 1) % n, (me - 1) % n) if n == 3 else ((me + 1) % n, (me - 1) % n, (me + 2) % n)
    unknown = deck_of(view.rules) & ~_known(view)
    capacity = _capacity(view, opponents, unknown.bit_count())
    places = _Places(view, unknown, capacity)
    _void_facts(view, opponents, places)
    _sent_facts(view, places)
    _returned_facts(view, places)
    _shown_facts(view, places)
    if view.face_up >= 0:
        _face_up_facts(view, unknown, places.allowed)
    cons = Constraints(me, opponents, unknown, tuple(places.allowed), capacity)
    _check_feasible(cons)
    return cons


def _choosing(view: PlayerView) -> bool:
    """Whether the seat is choosing cards to send in the exchange now."""
    return view.phase == EXCHANGE and view.to_act == view.seat


def _discards_after_exchange(view: PlayerView) -> bool:
    """Whether the dealer may have discarded a card it got or kept in the exchange (the exchange is over and
    the discards come after it in the hand's order)."""
    order = hand_order(view.rules)
    exchange_at = order.index("send" if view.rules.trump_after_send else "exchange")
    return view.phase != EXCHANGE and "discard" in order[exchange_at:]


def _known(view: PlayerView) -> int:
    """The cards the seat can place for certain: its hand, every card played, its own discards (the dealer's
    kitty cards are in its hand, played or discarded, or, kitty before the exchange, sent), the face-up card
    while on the table, the card it put out, and its cards chosen in an exchange round not yet completed."""
    played = 0
    for cards in view.played:
        played |= cards
    known = view.hand | played | to_mask(view.discards or ())
    if view.face_up >= 0 and (view.take is None or not view.take[1]):  # on the table
        known |= 1 << view.face_up
    if view.put_out is not None:
        known |= 1 << view.put_out
    if _choosing(view):  # my own cards chosen in a round not yet completed: out of play for now
        for ex in view.exchanges:
            if ex.sender == view.seat and ex.returned is None and ex.sent:
                known |= to_mask(ex.sent)
    return known


def _capacity(view: PlayerView, opponents: tuple[int, ...], n_unknown: int) -> tuple[int, ...]:
    """Cards in each location: the opponents' hand sizes, the kitty until taken, *out* the rest."""
    me, n = view.seat, len(view.hand_sizes)
    cap_kitty = 0 if view.kitty_taken else view.rules.kitty_size
    cap_out = n_unknown - sum(view.hand_sizes[s] for s in opponents) - cap_kitty
    capacity = (view.hand_sizes[(me + 1) % n], view.hand_sizes[(me - 1) % n], cap_kitty, cap_out)
    if n == 4:
        capacity += (view.hand_sizes[(me + 2) % n],)
    if cap_out < 0:
        raise WorldError(f"seat {me}: {n_unknown} unknown cards cannot fill hands and kitty {capacity}")
    return capacity


class _Places:
    """The locations each card may still be in (``allowed`` as in :class:`Constraints`) while the facts
    narrow them."""

    def __init__(self, view: PlayerView, unknown: int, capacity: tuple[int, ...]) -> None:
        self.unknown = unknown
        self.full = (1 << len(capacity)) - 1
        base = sum(1 << loc for loc in range(len(capacity)) if capacity[loc] > 0)
        self.allowed = [base if unknown >> c & 1 else 0 for c in range(52)]
        # an opponent that took the face-up card may have put out any card it held
        take = view.take
        taker = take[0] if take is not None and take[1] and take[0] != view.seat else None
        self.widen = 0 if taker is None else _flag(view, taker)

    def restrict(self, cards: int, mask: int) -> None:
        """Keep the unknown cards of ``cards`` to the locations of ``mask`` (and *out*, where the taker of the
        face-up card is one of them)."""
        if mask & self.widen:
            mask |= 1 << OUT
        for c in from_mask(cards & self.unknown):
            self.allowed[c] &= mask


def _void_facts(view: PlayerView, opponents: tuple[int, ...], places: _Places) -> None:
    """A void shown in play: that opponent holds no card of the suit."""
    for seat in opponents:
        for s in range(4):
            if view.voids[seat] >> s & 1:
                places.restrict(SUIT_MASK[s], places.full & ~_flag(view, seat))


def _sent_facts(view: PlayerView, places: _Places) -> None:
    """The cards the seat sent: in the receiver's hand while not returned (once its round is complete); once
    returned, a card not given back is where :func:`_holders` says, and the receiver keeps no card of a suit
    above the lowest it returned (:func:`_above_returned`)."""
    after = _discards_after_exchange(view)
    choosing = _choosing(view)
    for i, ex in enumerate(view.exchanges):
        if ex.sender != view.seat:
            continue
        if ex.returned is None:
            if ex.sent and not choosing:
                places.restrict(to_mask(ex.sent), _flag(view, ex.receiver))
        elif ex.sent is not None:
            places.restrict(to_mask(ex.sent) & ~to_mask(ex.returned), _holders(view, i, after))
            _above_returned(view, ex.receiver, ex.returned, after, places)


def _holders(view: PlayerView, index: int, after: bool) -> int:
    """Where a card the seat sent in exchange ``index`` and did not get back may be: with the receiver R, with
    an up player that R gave cards to in a later completed round (any round with ``trump_after_send``, where
    every card is sent before any comes back), or out when one of them is the dealer and ``after``."""
    exchanges = view.exchanges
    receiver = exchanges[index].receiver
    holders = {receiver}
    others = exchanges if view.rules.trump_after_send else exchanges[index + 1 :]  # all returns at once there
    for later in others:
        done = not (view.phase == EXCHANGE and later.sender == view.to_act)
        if later.receiver == receiver and later.sender != view.seat and done:
            holders.add(later.sender)
    mask = 0
    for h in holders:
        mask |= _flag(view, h)
    if after and view.dealer in holders:
        mask |= 1 << OUT
    return mask


def _above_returned(view: PlayerView, receiver: int, returned: tuple[int, ...], after: bool, places: _Places) -> None:
    """A receiver that returned cards of suit s keeps no unknown card of s above the lowest it returned (nor
    discards one, when it is the dealer and ``after``)."""
    lowest = [99] * 4
    for c in returned:
        lowest[c // 13] = min(lowest[c // 13], c)
    drop = _flag(view, receiver)
    if after and receiver == view.dealer:
        drop |= 1 << OUT
    for s in range(4):
        if lowest[s] < 99:
            above = SUIT_MASK[s] & ~((1 << (lowest[s] + 1)) - 1) & ~view.shown
            places.restrict(above, places.full & ~drop)


def _returned_facts(view: PlayerView, places: _Places) -> None:
    """A card the seat, as receiver, returned to sender S is with S (or among S's discards when S is the
    dealer and discards after the exchange)."""
    after = _discards_after_exchange(view)
    for ex in view.exchanges:
        if ex.receiver == view.seat and ex.returned is not None and ex.sent is not None:
            mask = _flag(view, ex.sender)
            if after and ex.sender == view.dealer:
                mask |= 1 << OUT
            places.restrict(to_mask(ex.returned), mask)


def _shown_facts(view: PlayerView, places: _Places) -> None:
    """A kitty card shown to the seat (show rule) is with the dealer (or among its discards when the dealer
    discards after taking the kitty)."""
    if view.shown:
        mask = _flag(view, view.dealer)
        if view.rules.pickup_before_discard:
            mask |= 1 << OUT
        places.restrict(view.shown, mask)


def _face_up_facts(view: PlayerView, unknown: int, allowed: list[int]) -> None:
    """Narrow ``allowed`` with what one_card_kitty makes public: who holds 2D, who holds the face-up card."""
    holder = view.to_act if view.phase == TAKE else view.take[0] if view.take is not None else None
    if holder is None or holder == view.seat:
        return
    flag = _flag(view, holder)
    if view.take is not None and view.take[1]:  # taken by an opponent (``restrict`` let its cards be out)
        allowed[view.face_up] = flag  # took it after the exchange, whatever it returned before
        if unknown >> TWO_OF_DIAMONDS & 1:
            allowed[TWO_OF_DIAMONDS] &= flag | 1 << OUT
    elif unknown >> TWO_OF_DIAMONDS & 1:
        allowed[TWO_OF_DIAMONDS] &= flag


def slacks(cons: Constraints) -> list[int]:
    """Slack of every location set L (4-bit index, 5-bit with four players): its places minus the unknown
    cards that can go only into L; a deal fits when every slack is >= 0 and the slack of all locations is 0."""
    locations = len(cons.capacity)
    sets = 1 << locations
    need = [0] * sets
    counts = [0] * sets
    for c in from_mask(cons.unknown):
        counts[cons.allowed[c]] += 1
    for L in range(sets):
        total = 0
        for t in range(1, sets):
            if counts[t] and not t & ~L:
                total += counts[t]
        need[L] = total
    cap = cons.capacity
    return [sum(cap[loc] for loc in range(locations) if L >> loc & 1) - need[L] for L in range(sets)]


def _check_feasible(cons: Constraints) -> None:
    slack = slacks(cons)
    locations = len(cons.capacity)
    bad = [L for L in range(1, len(slack)) if slack[L] < 0]
    empty = [CARD_TEXT[c] for c in from_mask(cons.unknown) if cons.allowed[c] == 0]
    if bad or empty or slack[-1] != 0:
        where = [LOCATION_NAMES[loc] for loc in range(locations) if bad and bad[0] >> loc & 1]
        raise WorldError(
            f"seat {cons.seat}: no deal fits what it knows (capacities {cons.capacity}; "
            f"cards with no place {empty}; overfull locations {where}; slack {slack[-1]})"
        )


def sample_world(view: PlayerView, rng: random.Random, cons: Constraints | None = None) -> World:
    """One deal consistent with the view (pass ``cons`` to reuse constraints)."""
    if cons is None:
        cons = constraints_of(view)
    slack = slacks(cons)
    room = list(cons.capacity)
    locations = len(room)
    table = CHECKS_BY_LOCATIONS[locations]
    sets = 1 << locations
    allowed = cons.allowed
    cards = from_mask(cons.unknown)
    rng.shuffle(cards)
    placed = [0] * locations
    for c in cards:
        t = allowed[c]
        checks = table[t]
        options = []
        weights = 0
        for loc in range(locations):
            if t >> loc & 1 and room[loc]:
                ok = True
                for L in checks[loc]:
                    if slack[L] < 1:
                        ok = False
                        break
                if ok:
                    options.append(loc)
                    weights += room[loc]
        if not options:  # cannot happen when the constraints were feasible
            raise WorldError(f"seat {cons.seat}: sampling got stuck at {CARD_TEXT[c]}")
        pick = rng.randrange(weights)
        for loc in options:
            pick -= room[loc]
            if pick < 0:
                break
        room[loc] -= 1
        placed[loc] |= 1 << c
        for L in range(1, sets):
            if L >> loc & 1:
                slack[L] -= 1
            if not t & ~L:
                slack[L] += 1
    hands = [0] * len(view.hand_sizes)
    hands[cons.seat] = view.hand
    hands[cons.seats[0]] = placed[LEFT]
    hands[cons.seats[1]] = placed[RIGHT]
    if locations > ACROSS:
        hands[cons.seats[2]] = placed[ACROSS]
    return World(tuple(hands), placed[KITTY], placed[OUT])


def world_from_view(view: PlayerView, world: World) -> Game:
    """A Game in the view's public state with the sampled hidden cards.

    Supports the trump, discard and play phases once the hand's exchange is
    over (an exchange to come or in progress keeps state the view does not
    carry in engine form). What the view shows of the calls (the calls each
    seat has still to make) is copied; bids and calls say nothing certain
    about the hidden cards, so the sample is not constrained by them. The game ends (truncated) at
    the end of the current hand, so a rollout stops there with
    ``tricks_won`` intact.
    """
    if view.to_act is None:
        raise ValueError("world_from_view: nobody is to act")
    if view.phase not in (TRUMP, DISCARD, PLAY):
        raise ValueError(f"world_from_view supports the trump, discard and play phases, not phase {view.phase}")
    if view.exchange_pending:
        raise ValueError("world_from_view: this hand's exchange is still to come or under way (not in engine form)")
    kitty = (view.kitty or 0) if view.kitty_taken else world.kitty
    if view.face_up >= 0:
        kitty = 1 << view.face_up
    if view.phase == TRUMP:
        discards = None
    elif view.discards is not None:
        discards = list(view.discards)
    else:  # another dealer's discards: only their number matters to the engine
        discards = from_mask(world.out)[: view.discard_count]
    game = Game.from_position(
        view.rules,
        hand_number=view.hand_number,
        dealer=view.dealer,
        scores=view.scores,
        previous_balances=view.previous_balances,
        phase=view.phase,
        to_act=view.to_act,
        hands=world.hands,
        kitty=kitty,
        kitty_taken=view.kitty_taken,
        trump=view.trump,
        discards=discards,
        trick=view.trick,
        trick_leader=view.trick_leader,
        tricks_won=view.tricks_won,
        tricks_played=view.tricks_played,
        played=view.played,
        voids=view.voids,
        quotas=view.quotas,
        take=_take_of(view, world),
        call=view.call,
    )
    game.calls_left = view.calls_left  # public (calls): the dealer's call to make is one it has not made yet
    return game


def _take_of(view: PlayerView, world: World) -> tuple[int, int | None] | None:
    """The one_card_kitty decision in engine form; an opponent's put-out card is the sampled one out."""
    if view.take is None:
        return None
    seat, taken = view.take
    if not taken:
        return seat, None
    return seat, view.put_out if seat == view.seat else world.out.bit_length() - 1
