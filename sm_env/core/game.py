"""The Sergeant Major state machine: deal, exchange, trump, discards, tricks,
scoring and the end of the game (docs/rules.md sections 1-9 and the options
of section 10).

Pure Python: no numpy, no PettingZoo. This module is the one place that
decides legality (:meth:`Game.legal_mask`) and the one place that scores
(:meth:`Game._end_hand`). Everything else asks it.

Decisions, one agent at a time (``Game.current_player``):

=========  ==========  ================================================
phase      who         actions
=========  ==========  ================================================
EXCHANGE   up player   a card id 0-51 from its hand, one card at a time
TRUMP      dealer      52-55: clubs, diamonds, hearts, spades; with
                       ``calls`` also 56 no trump, 57 misère (unused calls)
DISCARD    dealer      a card id from its hand, one card at a time
PLAY       in turn     a card id; must follow the led suit if able
ASSIGN     dealer      68-73: the quotas (``dealer_assigns_quotas`` only)
BID        in turn     with ``auction``, before hand 1: 58 pass, 59-67 bid 8-16
TAKE       holder of   with ``one_card_kitty``: the card id it puts out of
           2D          play to take the face-up card, or 58 to decline
OVER       nobody      none
=========  ==========  ================================================

Hands are ``int`` bit sets (see :mod:`sm_env.core.cards`). Seats are absolute
0, 1, 2 (0-3 with four players, ``n = rules.num_players``); role of seat s
in a hand dealt by d: ``(s - d) % n`` with 0 = dealer, 1 = eldest,
2 = middle (with four: 2 = third, 3 = fourth).

Order of a hand (standard): deal -> exchange rounds -> trump -> 4 discards ->
take the kitty (show rule) -> 16 tricks. ``pickup_before_discard`` takes the
kitty right after trump; with ``trump_after_kitty`` it is taken before trump.
:func:`hand_order` gives the order of every rule set (section 10.1 options
move trump, the kitty and the returns around the exchange); the engine walks
through it stage by stage (``Game._next_stage``).

The history of the game is kept as :class:`~sm_env.core.logs.HandLog` objects; the JSON
record is written from their immutable snapshots (``HandLog.frozen()``, :mod:`sm_env.records`).
"""

from __future__ import annotations

import functools
import itertools
import operator
import random
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from .cards import CARD_TEXT, NUM_CARDS, SUIT_LETTERS, SUIT_MASK, SUIT_NAMES, from_mask, parse_card, to_mask
from .logs import NO_SUIT, ExchangeLog, HandLog, TrickLog
from .rules import RuleSet

# Phases
EXCHANGE, TRUMP, DISCARD, PLAY, OVER, ASSIGN = range(6)
TAKE, BID = 6, 7
PHASE_NAMES = ("exchange", "trump", "discard", "play", "over", "assign", "take", "bid")

# Actions
TRUMP_ACTION_BASE = 52
NUM_ACTIONS = 56
TRUMP_MASK = 0xF << TRUMP_ACTION_BASE
NT_ACTION, MIZ_ACTION = 56, 57
"""Calls of no trump and misère (``calls``; docs/rules.md 10.3)."""
NT, MIZ = 4, 5
CALL_NAMES = ("C", "D", "H", "S", "NT", "Miz")
"""Call k (action 52 + k) as the record writes it: a suit letter, ``NT`` or ``Miz``."""
ALL_CALLS = 0x3F
MIZ_MAXIMA = (3, 5, 8)
"""A misère hand's maxima by role (dealer, eldest, middle): the 8-5-3 quotas reversed."""
PASS_ACTION = 58
"""Pass in the auction, or decline the face-up card of ``one_card_kitty`` (docs/rules.md 10.8)."""
BID_ACTION_BASE = 59
"""Action 59 + k bids 8 + k tricks (docs/rules.md 10.2, 10.8)."""
BID_MASK = 0x1FF << BID_ACTION_BASE
AUCTION_QUOTAS = {
    8: (5, 3),
    9: (4, 3),
    10: (4, 2),
    11: (3, 2),
    12: (2, 2),
    13: (2, 1),
    14: (1, 1),
    15: (1, 0),
    16: (0, 0),
}
"""Hand 1's (eldest, middle) quotas for the winning bid (the dealer's quota) of the auction (docs/rules.md 10.2)."""
TWO_OF_DIAMONDS = 13
"""The card whose holder may take the face-up card (docs/rules.md 10.5)."""
ASSIGN_ACTION_BASE = 68
ASSIGN_MASK = 0x3F << ASSIGN_ACTION_BASE
MAX_ACTIONS = 74
"""Actions of the largest space (docs/rules.md 10.8); a rule set's own size is ``RuleSet.num_actions``."""
ASSIGNMENTS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
"""Action 68 + k gives (dealer, eldest, middle) the rule set's quotas ``quotas[i] for i in ASSIGNMENTS[k]``
(docs/rules.md 10.8: 68 = (q_dealer, q_eldest, q_middle) ... 73 = (q_middle, q_eldest, q_dealer))."""

ROLE_NAMES = ("dealer", "eldest", "middle")
FOUR_ROLE_NAMES = ("dealer", "eldest", "third", "fourth")
"""Role names with four players (docs/rules.md 10.6), clockwise from the dealer."""


def role_names(rules: RuleSet) -> tuple[str, ...]:
    """The role names by role index: ``ROLE_NAMES`` with three players, ``FOUR_ROLE_NAMES`` with four."""
    return ROLE_NAMES if rules.num_players == 3 else FOUR_ROLE_NAMES


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is unchanged."""


class GameOverError(IllegalActionError):
    """An action after the game has ended."""


class DealError(ValueError):
    """A malformed deal given in the reset options."""


def assignment_of(action: int, rules: RuleSet) -> list[int]:
    """The quotas an assignment action (68-73) gives, by role [dealer, eldest, middle]."""
    return [rules.quotas[i] for i in ASSIGNMENTS[action - ASSIGN_ACTION_BASE]]


def action_text(action: int, rules: RuleSet | None = None) -> str:
    """Human text of an action id: a card (``TH``), a trump (``trump hearts``), ``pass`` (58) or a quota
    assignment (``quotas 8-3-5`` for dealer, eldest, middle; needs the rules)."""
    if 0 <= action < NUM_CARDS:
        return CARD_TEXT[action]
    if TRUMP_ACTION_BASE <= action < NUM_ACTIONS:
        return "trump " + SUIT_NAMES[action - TRUMP_ACTION_BASE]
    if action == NT_ACTION:
        return "call no trump"
    if action == MIZ_ACTION:
        return "call misère"
    if action == PASS_ACTION:
        return "pass"
    if BID_ACTION_BASE <= action < BID_ACTION_BASE + 9:
        return f"bid {action - BID_ACTION_BASE + 8}"
    if ASSIGN_ACTION_BASE <= action < MAX_ACTIONS and rules is not None:
        return "quotas " + "-".join(map(str, assignment_of(action, rules)))
    return f"action {action}"


def result_text(
    winner: int | list[int] | None, truncated: bool, hands: int, name: Callable[[int], str] = "player_{}".format
) -> str:
    """The end of a game in words: ``won by player_0`` (a shared win lists every
    winner), ``stopped after N hands with no winner (truncated)`` or ``not finished``."""
    if winner is not None:
        seats = winner if isinstance(winner, list) else [winner]
        return "won by " + ", ".join(name(s) for s in seats)
    if truncated:
        return f"stopped after {hands} hand{'s' if hands != 1 else ''} with no winner (truncated)"
    return "not finished"


def winning_card(cards: Sequence[int], trump: int) -> int:
    """The card that wins a trick (so far): cards in play order, the first led.

    The highest trump wins; with no trump in it, the highest card of the led
    suit (docs/rules.md section 6). This is the one place that decides who takes a trick.
    """
    best = cards[0]
    best_suit = best // 13
    for card in cards[1:]:
        suit = card // 13
        if suit == best_suit:
            if card > best:
                best = card
        elif suit == trump:
            best = card
            best_suit = suit
    return best


@functools.lru_cache(maxsize=128)
def hand_order(rules: RuleSet) -> tuple[str, ...]:
    """The stages of a hand before the play of the tricks, in order (docs/rules.md 4, 5, 9 and 10.1).

    Stages: ``assign`` (with ``dealer_assigns_quotas``, first: the dealer
    gives the quotas), ``take`` (with ``one_card_kitty``, last: the holder
    of 2D takes the face-up card or declines), ``exchange`` (each up player sends and its cards come back),
    ``send`` and ``return`` (with ``trump_after_send``: every up player
    sends, then after trump every return is made), ``trump``, ``kitty``
    (the dealer takes it; the show rule) and ``discard``. Standard:
    exchange, trump, discard, kitty. Without a kitty there is no kitty or
    discard stage; a hand without an exchange skips its stages.
    """
    order = _phase_order(rules)
    if rules.one_card_kitty:
        order = (*order, "take")
    if rules.dealer_assigns_quotas:
        order = ("assign", *order)
    return order


def _phase_order(rules: RuleSet) -> tuple[str, ...]:
    """The exchange, trump, kitty and discard stages of :func:`hand_order`."""
    kitty: tuple[str, ...] = ()
    if rules.kitty_size:
        kitty = ("kitty", "discard") if rules.pickup_before_discard else ("discard", "kitty")
    if rules.kitty_before_exchange:
        if rules.trump_before_exchange:
            return ("trump", "kitty", "discard", "exchange")
        if rules.trump_after_kitty:
            return ("kitty", "trump", "discard", "exchange")
        if rules.trump_after_send:
            return ("kitty", "discard", "send", "trump", "return")
        return ("kitty", "discard", "exchange", "trump")
    if rules.trump_before_exchange:
        return ("trump", "exchange", *kitty)
    if rules.trump_after_send:
        return ("send", "trump", "return", *kitty)
    if rules.trump_after_kitty:
        return ("exchange", "kitty", "trump", "discard")
    return ("exchange", "trump", *kitty)


def chip_changes(balances: Sequence[int]) -> list[int]:
    """The chips each seat wins (+) or pays (-) in a hand, by seat (docs/rules.md 10.7).

    Every up player (balance > 0) wins from every down player (balance < 0)
    as many chips as the up player's surplus; a seat at zero neither wins
    nor pays. Zero-sum. Balances +2, -1, -1 give +4, -2, -2; +1, +1, -2 give
    +1, +1, -2.
    """
    ups = [b for b in balances if b > 0]
    downs = sum(1 for b in balances if b < 0)
    paid = sum(ups)
    return [b * downs if b > 0 else -paid if b < 0 else 0 for b in balances]


def normalize_deal(deal: Any, rules: RuleSet, where: str = "deal") -> tuple[list[list[int]], list[int]]:
    """Validate a deal ``{"hands": [[...], [...], [...]], "kitty": [...]}`` (four hands with four players).

    Cards may be ids or text. Returns (hands, kitty) as lists of card ids.
    Raises :class:`DealError` naming what is wrong and what is allowed.
    """
    size, kitty_size, n = rules.hand_size, rules.aside_size, rules.num_players
    if not isinstance(deal, dict) or "hands" not in deal:
        raise DealError(
            f"{where}: expected a dict with 'hands' ({n} lists of {size} cards) and 'kitty' ({kitty_size} cards), "
            f"got {deal!r:.80}"
        )
    unknown = sorted(set(deal) - {"hands", "kitty"})
    if unknown:
        raise DealError(f"{where}: unknown key(s) {unknown}; a deal has 'hands' and 'kitty'")
    hands_in = deal["hands"]
    if not isinstance(hands_in, (list, tuple)) or len(hands_in) != n:
        raise DealError(f"{where}: 'hands' must be a list of {n} hands (by absolute seat), got {hands_in!r:.80}")
    kitty_in = deal.get("kitty", [])
    if kitty_in is None:
        kitty_in = []
    try:
        hands = []
        for seat, hand in enumerate(hands_in):
            if isinstance(hand, (str, bytes)) or not isinstance(hand, Sequence):
                raise DealError(f"{where}: hand of seat {seat} must be a list of cards, got {hand!r:.80}")
            hands.append([parse_card(c) for c in hand])
        if isinstance(kitty_in, (str, bytes)) or not isinstance(kitty_in, Sequence):
            raise DealError(f"{where}: 'kitty' must be a list of cards, got {kitty_in!r:.80}")
        kitty = [parse_card(c) for c in kitty_in]
    except ValueError as err:
        if isinstance(err, DealError):
            raise
        raise DealError(f"{where}: {err}") from None
    for seat, hand in enumerate(hands):
        if len(hand) != size:
            raise DealError(f"{where}: seat {seat} has {len(hand)} cards; each hand must have {size}")
    if len(kitty) != kitty_size:
        what = "the face-up card (one_card_kitty)" if rules.one_card_kitty else f"{kitty_size} cards"
        raise DealError(f"{where}: the kitty has {len(kitty)} cards; it must hold {what}")
    seen: dict[int, str] = {}
    for owner, cards in [(f"seat {i}", h) for i, h in enumerate(hands)] + [("the kitty", kitty)]:
        for c in cards:
            if c in seen:
                raise DealError(
                    f"{where}: card {CARD_TEXT[c]} appears twice ({seen[c]} and {owner}); every card is dealt once"
                )
            seen[c] = owner
    if rules.no_kitty_51 and 0 in seen:
        raise DealError(f"{where}: 2C is removed from the deck in no_kitty_51; deal the other 51 cards")
    return hands, kitty


SEED_LIMIT = 2**128
"""Integer seeds lie in ``-(2**128) < seed < 2**128``: room for 128 bits of entropy (:func:`fresh_seed`),
and a bound on what a record's seed may cost to read back."""
SEED_BITS = 128
"""Bits of OS entropy in a seed the project draws itself (:func:`fresh_seed`)."""


def fresh_seed() -> int:
    """A seed for a game and its agents when the user gave none: ``SEED_BITS`` (128) bits of OS entropy
    (:mod:`secrets`), ``0 <= seed < 2**128``. The game's generator is seeded with every bit (``random.Random``
    hashes the whole integer into its state), so no search over seeds can find a deal from a player's own cards;
    the record keeps the seed, which replays the game exactly. The one place seeds are drawn (the batched
    engine's and the agents' too)."""
    return secrets.randbits(SEED_BITS)


def random_deal(rng: random.Random, rules: RuleSet) -> tuple[list[list[int]], list[int]]:
    """A random deal: the deck (card ids in order; without 2C with ``no_kitty_51``) shuffled by ``rng`` and
    dealt in order: ``hand_size`` cards to seat 0, 1, 2 (and 3 with four players), the rest to the kitty; each
    part sorted. (``sm_env.compiled.single`` draws the same three-player deals from a compiled copy of ``rng``.)"""
    deck = list(range(1, NUM_CARDS)) if rules.no_kitty_51 else list(range(NUM_CARDS))
    rng.shuffle(deck)
    size, n = rules.hand_size, rules.num_players
    return [sorted(deck[i * size : (i + 1) * size]) for i in range(n)], sorted(deck[n * size :])


def check_seed(seed: Any) -> int | str | float | None:
    """A game seed: None, an integer with ``abs(seed) < 2**128`` (numpy ints too), a string or a finite float.

    Raises ValueError saying what is allowed (never printing a huge integer).
    """
    if seed is None or isinstance(seed, str):
        return seed
    if isinstance(seed, float):
        if seed != seed or seed in (float("inf"), float("-inf")):
            raise ValueError(f"seed must be finite, got {seed}; seeds are None, integers, strings or finite floats")
        return seed
    try:
        if isinstance(seed, bool):
            raise TypeError
        value = operator.index(seed)
    except TypeError:
        raise ValueError(
            f"seed must be None, an integer, a string or a finite float, got {type(seed).__name__}"
        ) from None
    if not -SEED_LIMIT < value < SEED_LIMIT:
        raise ValueError(
            f"seed has {value.bit_length()} bits; integer seeds must lie strictly between -2**128 and 2**128"
        )
    return value


def check_start_balances(balances: Any, rules: RuleSet) -> list[int] | None:
    """Balances of an imaginary previous hand, checked: a list of 3 ints (4 with four players), or None.

    Possible balances are those a real hand with these quotas could have
    produced, whoever dealt it: seat ``s`` with quota ``q`` took ``t``
    tricks, ``0 <= t <= tricks per hand``, so its balance is ``t - q``, in
    ``-q .. tricks - q``; the three sum to zero. Raises ValueError naming what
    is wrong and what is allowed.
    """
    if balances is None:
        return None
    if isinstance(balances, (str, bytes, dict, set, frozenset)) or not isinstance(balances, Sequence):
        raise ValueError(
            f"start_balances must be a list of {rules.num_players} integers (by absolute seat) or None, got "
            f"{type(balances).__name__}"
        )
    values = list(balances)
    n = rules.num_players
    if len(values) != n:
        raise ValueError(f"start_balances must be {n} integers (by absolute seat), got {len(values)} values")
    checked = []
    for seat, value in enumerate(values):
        try:
            if isinstance(value, bool):
                raise TypeError
            checked.append(operator.index(value))
        except TypeError:
            raise ValueError(
                f"start_balances must be {n} integers summing to zero; seat {seat} has a {type(value).__name__}"
            ) from None
    if any(abs(value) > 10**6 for value in checked):
        raise ValueError("start_balances: a balance beyond +-10**6; balances are tricks taken minus quota")
    if sum(checked) != 0:
        raise ValueError(f"start_balances must sum to zero (tricks taken minus quotas), got {checked}")
    tricks, quotas = rules.tricks_per_hand, rules.quotas
    # the seats' quotas in the imaginary hand: the roles of some dealer, or with dealer_assigns_quotas any order
    orders = (
        itertools.permutations(quotas) if rules.dealer_assigns_quotas else (quotas[-d:] + quotas[:-d] for d in range(n))
    )
    for by_seat in orders:
        if all(-by_seat[s] <= checked[s] <= tricks - by_seat[s] for s in range(n)):
            return checked
    names = role_names(rules)
    ranges = ", ".join(f"{names[r]} {-quotas[r]}..{tricks - quotas[r]}" for r in range(n))
    raise ValueError(
        f"start_balances {checked} cannot come from a hand with quotas {list(quotas)} ({', '.join(names)}) and "
        f"{tricks} tricks, whoever dealt it: a balance is tricks taken minus quota ({ranges})"
    )


GAME_STATE: tuple[tuple[str, str], ...] = (
    ("rules", "the RuleSet"),
    ("_order", "hand_order(rules)"),
    ("seed", "the seed given (the record's)"),
    ("rng", "the random.Random that draws the first dealer and the random deals"),
    ("deal_queue", "the given deals not yet dealt: [(hands, kitty)]"),
    ("max_hands", "the hand limit (None: none)"),
    ("first_dealer", "the dealer of hand 1"),
    ("start_balances", "balances of an imaginary hand before hand 1, or None"),
    ("scores", "running scores by seat"),
    ("history", "the HandLog of every hand so far, the current one last"),
    ("winners", "winning seats ascending, None while nobody has won"),
    ("truncated", "stopped by max_hands"),
    ("hand_number", "the hand being played (1 = first)"),
    ("calls_left", "with calls: the bit set of calls each seat has not made yet"),
    ("passed_out", "auction: passed-out deals so far"),
    ("auction_first", "auction: the seat that bids first"),
    ("auction_bids", "auction: (seat, bid or None for a pass) in bidding order"),
    ("auction_passed", "auction: passed, by seat"),
    ("auction_high", "auction: (bid, seat) of the highest bid, None before any"),
    ("hand1_quotas", "auction: hand 1's quotas by seat once the auction is won"),
)
"""The per-game attributes of :class:`Game` (kept from hand to hand): (name, meaning). The auction ones describe
the auction being held, or the one that decided hand 1 (docs/rules.md 10.2)."""

HAND_STATE: tuple[tuple[str, bool, str], ...] = (
    # (name, copied by clone: a list the hand changes in place, meaning); seat-indexed by absolute seat,
    # card sets as bit sets
    ("dealer", False, "the dealer's seat"),
    ("quotas", True, "quotas by seat; None until the dealer assigns them (dealer_assigns_quotas)"),
    ("hands", True, "the cards each seat holds"),
    ("kitty_mask", False, "the kitty (still known to the dealer once taken); one_card_kitty: the face-up card"),
    ("face_up", False, "one_card_kitty: the face-up card's id, else -1"),
    ("take", False, "one_card_kitty: None until decided, else (seat, card put out of play) or (seat, None)"),
    ("previous_balances", False, "balances of the hand before (None in hand 1 without start balances)"),
    ("trump", False, "the trump suit, NO_SUIT until named (and in a no-trump or misère hand)"),
    ("picked_up", False, "the dealer has taken the kitty"),
    ("call", False, "calls: the hand's call (0-3 a suit, 4 NT, 5 Miz), -1 before it"),
    ("maxima", False, "a misère hand's maxima by seat, else None"),
    ("played", True, "the cards each seat played this hand"),
    ("voids", True, "4-bit suit set per seat: the suits it showed it lacks"),
    ("trick", True, "the cards of the open trick in play order"),
    ("led_suit", False, "the suit led to the open trick, NO_SUIT with none"),
    ("leader", False, "the leader of the open or next trick"),
    ("tricks_won", True, "tricks won this hand by seat"),
    ("tricks_played", False, "tricks completed this hand"),
    ("phase", False, "the phase (EXCHANGE ... BID)"),
    ("current", False, "the seat to act (the last to act once over)"),
    ("_exchange_rounds", False, "the exchange plan: [(sender, [(receiver, count), ...])]"),
    ("_exchange_round", False, "index of the exchange round being played"),
    ("_receivers", False, "that round's [(receiver, count)]"),
    ("_receiver_index", False, "the receiver the sender is choosing cards for"),
    ("_round_exchanges", False, "the round's ExchangeLog entries, one per receiver served so far (clone: special)"),
    ("_stage", False, "index into hand_order of the stage being played; -1 before the first"),
    ("_returns_done", False, "every exchanged card has been returned"),
)
"""The per-hand attributes of :class:`Game`, all set by ``Game._reset_hand_state`` at each deal: (name, whether
:meth:`Game.clone` copies it, meaning). Public ones are read by the view, the renderer, search and the compiled
loader (:mod:`sm_env.compiled.loader`); the private ones are the exchange (read through
:meth:`Game.cards_to_send`) and the order of the hand. With :data:`GAME_STATE` they are ``Game.__slots__``: an
attribute declared nowhere cannot be set."""

HAND_FIELDS: tuple[str, ...] = tuple(name for name, _, _ in HAND_STATE)
GAME_FIELDS: tuple[str, ...] = tuple(name for name, _ in GAME_STATE)
_HAND_LISTS = tuple(name for name, copied, _ in HAND_STATE if copied)
# what clone shares as it is (ints, bools, tuples, immutable once set) and what it builds itself
_CLONE_BUILT = ("rng", "deal_queue", "scores", "history", "winners", "_round_exchanges", *_HAND_LISTS)
_CLONE_SHARED = tuple(name for name in GAME_FIELDS + HAND_FIELDS if name not in _CLONE_BUILT)
_shared_values = operator.attrgetter(*_CLONE_SHARED)


class Game:
    """One game of Sergeant Major, hand after hand, until it is won.

    Args:
        rules: a RuleSet, a preset name or a dict of options (default standard).
        seed: seed of the game's RNG (first dealer and random deals).
        first_dealer: seat 0-2 (0-3 with four players) of the first dealer; drawn from the RNG if None.
        deals: optional deals for hands 1, 2, ... (see :func:`normalize_deal`);
            later hands are dealt at random.
        max_hands: stop (truncate) after this many hands if nobody has won.
        start_balances: optional balances of an imaginary previous hand, so
            that hand 1 starts with an exchange (used to study single hands).

    State: the per-game attributes of :data:`GAME_STATE` and the per-hand ones of :data:`HAND_STATE`
    (``__slots__``).
    """

    __slots__ = GAME_FIELDS + HAND_FIELDS

    def __init__(
        self,
        rules: RuleSet | str | dict[str, Any] | None = None,
        seed: int | None = None,
        first_dealer: int | None = None,
        deals: Sequence[Any] | None = None,
        max_hands: int | None = None,
        start_balances: Sequence[int] | None = None,
    ) -> None:
        self.rules = RuleSet.from_any(rules)
        self._order = hand_order(self.rules)
        self.seed = check_seed(seed)
        self.rng = random.Random(self.seed)
        if deals is None:
            deals = []
        if isinstance(deals, (str, bytes, dict)) or not isinstance(deals, Sequence):
            raise DealError(f"deals must be a list of deals (one per hand), got {type(deals).__name__}")
        self.deal_queue = [normalize_deal(d, self.rules, f"deals[{i}]") for i, d in enumerate(deals)]
        if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1):
            raise ValueError(f"max_hands must be a whole number >= 1 or None, got {max_hands!r}")
        self.max_hands = max_hands
        n = self.rules.num_players
        if first_dealer is None:
            first_dealer = self.rng.randrange(n)
        elif isinstance(first_dealer, bool) or not isinstance(first_dealer, int) or not 0 <= first_dealer < n:
            seats = "0, 1 or 2" if n == 3 else "0, 1, 2 or 3"
            raise ValueError(f"first_dealer must be a seat {seats}, got {first_dealer!r}")
        self.first_dealer = first_dealer
        start_balances = check_start_balances(start_balances, self.rules)
        if start_balances is not None and self.rules.auction:
            raise ValueError(
                "start_balances: with auction hand 1 follows the auction and has no exchange (docs/rules.md 10.2)"
            )
        self.start_balances = start_balances
        self.scores = [0] * n
        self.history: list[HandLog] = []
        self.winners: list[int] | None = None
        self.truncated = False
        self.hand_number = 0
        self.calls_left = (ALL_CALLS, ALL_CALLS, ALL_CALLS)
        self._reset_auction(first_dealer)
        self._start_hand(first_dealer, start_balances)

    # ------------------------------------------------------------------ queries

    @property
    def current_player(self) -> int | None:
        """Seat to act, or None when the game is over."""
        return None if self.phase == OVER else self.current

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def winner(self) -> int | list[int] | None:
        """Winning seat; a sorted list when several share the win; None if nobody won."""
        if self.winners is None:
            return None
        return self.winners[0] if len(self.winners) == 1 else list(self.winners)

    @property
    def log(self) -> HandLog:
        """The current (or last) hand's log."""
        return self.history[-1]

    def role_of(self, seat: int) -> int:
        """0 = dealer, 1 = eldest, 2 = middle (with four: 2 = third, 3 = fourth) in the current hand."""
        return (seat - self.dealer) % self.rules.num_players

    def legal_mask(self) -> int:
        """Bit set of the legal action ids for the player to act (0 when over).

        This is the one place that decides legality.
        """
        phase = self.phase
        if phase == PLAY:
            hand = self.hands[self.current]
            if self.trick:
                follow = hand & SUIT_MASK[self.led_suit]
                if follow:
                    return follow
            return hand
        if phase == EXCHANGE or phase == DISCARD:
            return self.hands[self.current]
        if phase == TRUMP:
            return self.calls_left[self.dealer] << TRUMP_ACTION_BASE if self.rules.calls else TRUMP_MASK
        if phase == ASSIGN:
            return ASSIGN_MASK
        if phase == TAKE:
            return self.hands[self.current] | 1 << PASS_ACTION
        if phase == BID:
            high = self.auction_high
            bids = BID_MASK if high is None else BID_MASK & ~((1 << (BID_ACTION_BASE + high[0] - 7)) - 1)
            return bids | 1 << PASS_ACTION
        return 0

    def legal_actions(self) -> list[int]:
        """Legal action ids for the player to act, ascending."""
        return from_mask(self.legal_mask())

    def exchange_to_send(self) -> tuple[int, int] | None:
        """In the exchange phase: (receiver, cards still to choose for it)."""
        if self.phase != EXCHANGE:
            return None
        return self.cards_to_send()[0]

    def cards_to_send(self) -> tuple[tuple[int, int], ...]:
        """In the exchange phase: (receiver, cards still to choose for it) for each
        receiver of the sender's round not yet served, in order; else ()."""
        if self.phase != EXCHANGE:
            return ()
        chosen = self._round_exchanges
        return tuple(
            (receiver, count - (len(chosen[i].sent) if i < len(chosen) else 0))
            for i, (receiver, count) in enumerate(self._receivers)
            if i >= self._receiver_index
        )

    @property
    def exchange_pending(self) -> bool:
        """Whether this hand's exchange has cards still to send or to return (False once done, or with none)."""
        return bool(self._exchange_rounds) and not self._returns_done and self.phase != OVER

    @property
    def exchange_round(self) -> int:
        """Index (0, 1) of the exchange round being played or last played in this hand."""
        return self._exchange_round

    # ------------------------------------------------------------------ actions

    def apply(self, action: int) -> None:
        """Play one action for the player to act.

        Raises IllegalActionError (state unchanged) if it is not legal.
        """
        if type(action) is not int:
            action = self._coerce_action(action)
        if action < 0 or not (self.legal_mask() >> action) & 1:
            raise self._illegal(action)
        phase = self.phase
        if phase == PLAY:
            self._play(action)
        elif phase == EXCHANGE:
            self._send(action)
        elif phase == TRUMP:
            self._name_trump(action - TRUMP_ACTION_BASE)  # a call with ``calls`` (4 NT, 5 Miz)
        elif phase == ASSIGN:
            self._assign(action)
        elif phase == TAKE:
            self._take(action)
        elif phase == BID:
            self._bid(action)
        else:
            self._discard(action)

    def _coerce_action(self, action: Any) -> int:
        try:
            if isinstance(action, bool):
                raise TypeError
            return operator.index(action)
        except TypeError:
            raise IllegalActionError(
                f"action must be an integer action id 0-{self.rules.num_actions - 1}, got {action!r} "
                f"({type(action).__name__})"
            ) from None

    def _illegal(self, action: int) -> IllegalActionError:
        if self.phase == OVER:
            return GameOverError(f"the game is over ({self._end_text()}); no action is legal, got {action}")
        if not 0 <= action < self.rules.num_actions:
            return IllegalActionError(f"action {action} is out of range: action ids are 0-{self.rules.num_actions - 1}")
        who = f"player_{self.current}"
        phase = PHASE_NAMES[self.phase]
        legal = self.legal_mask()
        allowed = " ".join(action_text(a, self.rules) for a in from_mask(legal))
        if self.phase == TRUMP and self.rules.calls:
            reason = "the dealer must make a call it has not made yet in this game"
        elif self.phase == TRUMP:
            reason = "the dealer must name trump (actions 52-55)"
        elif self.phase == ASSIGN:
            reason = "the dealer must assign the quotas (actions 68-73)"
        elif self.phase == BID:
            high = self.auction_high
            above = "8-16" if high is None else f"more than {high[0]}"
            reason = f"{who} must pass ({PASS_ACTION}) or bid {above} tricks (actions 59-67 bid 8-16)"
        elif self.phase == TAKE:
            reason = (
                f"{who} holds 2D: it takes the face-up card {CARD_TEXT[self.face_up]} by putting out a card of its "
                f"hand (its card id), or declines ({PASS_ACTION})"
            )
        elif (
            self.phase == PLAY
            and self.trick
            and legal & SUIT_MASK[self.led_suit] == legal
            and action < NUM_CARDS
            and (self.hands[self.current] >> action & 1)
        ):
            reason = f"{who} must follow {SUIT_NAMES[self.led_suit]}"
        elif action >= NUM_CARDS:
            reason = f"a card (0-51) is needed in the {phase} phase"
        else:
            reason = f"{who} does not hold {CARD_TEXT[action]}"
        return IllegalActionError(
            f"illegal action {action} ({action_text(action, self.rules)}) in hand {self.hand_number}, {phase} phase: "
            f"{reason}; legal actions: {allowed}"
        )

    def _end_text(self) -> str:
        return result_text(self.winner, self.truncated, self.hand_number)

    # ------------------------------------------------------------------ a hand

    def _reset_auction(self, first: int) -> None:
        """Declare the auction's attributes (docs/rules.md 10.2; public, kept after the auction):
        ``passed_out`` (passed-out deals so far), ``auction_first`` (the seat that bids first),
        ``auction_bids`` ((seat, bid or None for a pass) in bidding order), ``auction_passed`` (by seat),
        ``auction_high`` ((bid, seat) of the highest bid, None before any) and ``hand1_quotas`` (by seat, once
        the auction is won). They describe the auction being held, or the one that decided hand 1."""
        if not hasattr(self, "passed_out"):
            self.passed_out = 0
        self.auction_first = first
        self.auction_bids: tuple[tuple[int, int | None], ...] = ()
        self.auction_passed = (False, False, False)
        self.auction_high: tuple[int, int] | None = None
        self.hand1_quotas: list[int] | None = None

    @property
    def hands_played(self) -> int:
        """Hands dealt and played (the current one included), not counting passed-out deals (``auction``)."""
        return self.hand_number - self.passed_out

    def _start_hand(self, dealer: int, previous_balances: Sequence[int] | None) -> None:
        rules = self.rules
        self.hand_number += 1
        deal_hands, kitty = self.deal_queue.pop(0) if self.deal_queue else random_deal(self.rng, rules)
        self._reset_hand_state(dealer, [to_mask(h) for h in deal_hands], to_mask(kitty), previous_balances)
        quotas = None if self.quotas is None else list(self.quotas)
        self.history.append(HandLog(self.hand_number, dealer, quotas, [list(h) for h in deal_hands], list(kitty)))
        if rules.auction and self.hands_played == 1:  # docs/rules.md 10.2: the auction decides who deals hand 1
            self._reset_auction(dealer)
            self.quotas = self.log.quotas = self.log.dealer = None
            self.log.auction = []
            self.log.passed_out = False
            self.phase = BID
            return
        if self.quotas is not None:  # else planned once the dealer has assigned them
            self._exchange_rounds = self._exchange_plan(previous_balances)
        self._next_stage()

    def _reset_hand_state(
        self, dealer: int, hands: list[int], kitty: int, previous_balances: Sequence[int] | None
    ) -> None:
        """Set every per-hand attribute (:data:`HAND_STATE`), as at the deal of a hand dealt by ``dealer``."""
        q = self.rules.quotas
        n = self.rules.num_players
        self.dealer = dealer
        self.quotas: list[int] | None = None
        if not self.rules.dealer_assigns_quotas:
            self.quotas = [q[(seat - dealer) % n] for seat in range(n)]
        self.hands = hands
        self.kitty_mask = kitty
        self.face_up = kitty.bit_length() - 1 if self.rules.one_card_kitty else -1
        self.take: tuple[int, int | None] | None = None
        self.previous_balances = None if previous_balances is None else list(previous_balances)
        self.trump = NO_SUIT
        self.picked_up = False
        self.call = -1
        self.maxima: list[int] | None = None
        self.played = [0] * n
        self.voids = [0] * n
        self.trick: list[int] = []
        self.led_suit = NO_SUIT
        self.leader = (dealer + 1) % n
        self.tricks_won = [0] * n
        self.tricks_played = 0
        self.phase = EXCHANGE
        self.current = dealer
        self._exchange_rounds: list[tuple[int, list[tuple[int, int]]]] = []
        self._exchange_round = 0
        self._receivers: list[tuple[int, int]] = []
        self._receiver_index = 0
        self._round_exchanges: list[ExchangeLog] = []
        self._stage = -1
        self._returns_done = False

    def _exchange_plan(self, balances: Sequence[int] | None) -> list[tuple[int, list[tuple[int, int]]]]:
        """Rounds of the exchange: [(sender, [(receiver, count), ...]), ...] (docs/rules.md 4, 9 and 10.6).

        Up players go one round each, higher current quota first (with
        ``first_up_exchanges_first``, the one that got up first in the
        previous hand first: :meth:`_up_at`). Each serves the down players,
        lower current quota first, all at once (simultaneous), with count =
        the smaller of its remaining surplus and that player's remaining
        deficit; ``max_exchange`` caps what each player gives or takes in the
        hand. With three players this is one up player serving both down
        players, or two up players serving the one down player in turn.
        Equal current quotas go in role order dealer, eldest, middle with
        three players (rules.py), in play order from the eldest with four.
        """
        if balances is None or self.rules.no_exchange:
            return []
        n = self.rules.num_players
        ups = [s for s in range(n) if balances[s] > 0]
        if not ups:
            return []
        cap = self.rules.max_exchange
        if n == 3:
            tie = self.role_of
        else:
            dealer = self.dealer
            tie = lambda s: (s - dealer - 1) % n  # noqa: E731 - play order from the eldest
        quotas = self.quotas
        senders = sorted(ups, key=lambda s: (-quotas[s], tie(s)))
        up_at = self._up_at() if self.rules.first_up_exchanges_first else None
        if up_at is not None:
            senders.sort(key=lambda s: up_at[s])  # stable: ties (none are possible) keep the usual order
        receivers = sorted((s for s in range(n) if balances[s] < 0), key=lambda s: (quotas[s], tie(s)))
        left = [abs(b) for b in balances]  # remaining surplus (up) or deficit (down)
        given = [0] * n  # cards given (up) or taken (down) so far, for max_exchange
        rounds = []
        for sender in senders:
            targets = []
            for receiver in receivers:
                count = min(left[sender], left[receiver])
                if cap is not None:
                    count = min(count, cap - given[sender], cap - given[receiver])
                if count > 0:
                    targets.append((receiver, count))
                    left[sender] -= count
                    left[receiver] -= count
                    given[sender] += count
                    given[receiver] += count
            if targets:
                rounds.append((sender, targets))
        return rounds

    def _up_at(self) -> list[int] | None:
        """For each seat, the trick of the previous hand (0 = first) in which it won its (quota + 1)-th
        trick, i.e. got "up" (docs/rules.md 10.4); a large number for a seat that never did. None when
        there is no previous hand in the history (start balances): then the usual order applies."""
        if len(self.history) < 2:
            return None
        previous = self.history[-2]
        n = self.rules.num_players
        won = [0] * n
        up_at = [NUM_CARDS] * n
        if self.rules.kitty_trick:  # the kitty trick counts as won before trick 1
            won[previous.dealer] = 1
            if previous.quotas[previous.dealer] == 0:
                up_at[previous.dealer] = -1
        for index, trick in enumerate(previous.tricks or ()):
            seat = trick.winner
            won[seat] += 1
            if won[seat] == previous.quotas[seat] + 1:
                up_at[seat] = index
        return up_at

    def _begin_exchange_round(self) -> None:
        sender, receivers = self._exchange_rounds[self._exchange_round]
        self.phase = EXCHANGE
        self.current = sender
        self._receivers = receivers
        self._receiver_index = 0
        self._round_exchanges = []

    def _send(self, card: int) -> None:
        sender = self.current
        self.hands[sender] ^= 1 << card
        index = self._receiver_index
        receiver, count = self._receivers[index]
        if index == len(self._round_exchanges):  # the first card for this receiver opens its exchange
            entry = ExchangeLog(sender, receiver, count)
            self._round_exchanges.append(entry)
            self.log.exchanges.append(entry)
        sent = self._round_exchanges[index].sent
        sent.append(card)
        if len(sent) == count:
            self._receiver_index += 1
            if self._receiver_index == len(self._receivers):
                self._complete_exchange_round()

    def _complete_exchange_round(self) -> None:
        """The sender has chosen every card of its round: the cards move.

        Each sent card goes into its receiver's hand. In a plain exchange the
        receivers return at once; with ``trump_after_send`` (the ``send``
        stage) the returns wait for the ``return`` stage.
        """
        for entry in self._round_exchanges:
            self.hands[entry.receiver] |= to_mask(entry.sent)
            entry.delivered = True
        if self._order[self._stage] == "exchange":
            for entry in self._round_exchanges:
                self._return(entry)
        self._exchange_round += 1
        if self._exchange_round < len(self._exchange_rounds):
            self._begin_exchange_round()
        else:
            self._returns_done = self._order[self._stage] == "exchange"
            self._next_stage()

    def _return(self, entry: ExchangeLog) -> None:
        """The receiver returns its top n_s cards of each suit s sent, from its hand as it stands."""
        hand = self.hands[entry.receiver]
        per_suit = [0, 0, 0, 0]
        for card in entry.sent:
            per_suit[card // 13] += 1
        returned = []
        for suit in range(4):
            for _ in range(per_suit[suit]):
                top = (hand & SUIT_MASK[suit]).bit_length() - 1
                hand ^= 1 << top
                returned.append(top)
        self.hands[entry.receiver] = hand
        self.hands[entry.sender] |= to_mask(returned)
        entry.returned = returned

    def _next_stage(self) -> None:
        """Go on to the next stage of :func:`hand_order` that needs a decision (or to the play)."""
        order = self._order
        while True:
            self._stage += 1
            if self._stage == len(order):
                self._start_play()
                return
            stage = order[self._stage]
            if stage == "assign":
                self.phase = ASSIGN
                self.current = self.dealer
                return
            if stage == "exchange" or stage == "send":
                if self._exchange_rounds:
                    self._begin_exchange_round()
                    return
                self._returns_done = True
            elif stage == "return":
                for entry in self.log.exchanges:
                    self._return(entry)
                self._returns_done = True
            elif stage == "kitty":
                if not self.picked_up:
                    self._pickup()
            elif stage == "trump":
                self.phase = TRUMP
                self.current = self.dealer
                return
            elif stage == "take":
                if self.face_up != TWO_OF_DIAMONDS:  # else nobody can take it
                    self.phase = TAKE
                    self.current = next(s for s in range(3) if self.hands[s] >> TWO_OF_DIAMONDS & 1)
                    return
            else:  # discard
                self.log.discards = []
                self.phase = DISCARD
                self.current = self.dealer
                return

    def _assign(self, action: int) -> None:
        """The dealer gives the quotas (docs/rules.md 10.7); the exchange is planned with them."""
        by_role = assignment_of(action, self.rules)
        self.quotas = [by_role[(seat - self.dealer) % 3] for seat in range(3)]  # three players only (rules.py)
        self.log.quotas = list(self.quotas)
        self.log.assignment = by_role
        self._exchange_rounds = self._exchange_plan(self.previous_balances)
        self._next_stage()

    def _bid(self, action: int) -> None:
        """A pass or a bid in the auction; the auction ends when all but the highest bidder have passed (that
        bidder deals hand 1 with the bid as its quota) or all three passed (the deal is passed out)."""
        seat = self.current
        bid = None if action == PASS_ACTION else action - BID_ACTION_BASE + 8
        self.auction_bids = (*self.auction_bids, (seat, bid))
        self.log.auction = [*self.log.auction, (seat, bid)]
        if bid is None:
            self.auction_passed = tuple(p or s == seat for s, p in enumerate(self.auction_passed))
        else:
            self.auction_high = (bid, seat)
        passed, high = self.auction_passed, self.auction_high
        if all(passed):
            self._pass_out()
        elif high is not None and sum(passed) == 2:
            self._win_auction(*high)
        else:
            nxt = (seat + 1) % 3
            while passed[nxt]:
                nxt = (nxt + 1) % 3
            self.current = nxt

    def _win_auction(self, bid: int, dealer: int) -> None:
        """The highest bidder deals hand 1 with quotas (bid, AUCTION_QUOTAS[bid]); the hand starts."""
        eldest, middle = AUCTION_QUOTAS[bid]
        by_role = (bid, eldest, middle)
        self.dealer = dealer
        self.quotas = [by_role[(seat - dealer) % 3] for seat in range(3)]
        self.hand1_quotas = list(self.quotas)
        self.leader = (dealer + 1) % 3
        self.log.dealer = dealer
        self.log.quotas = list(self.quotas)
        self._exchange_rounds = []
        self._next_stage()

    def _pass_out(self) -> None:
        """All three passed: the deal is an entry of its own (no dealer, no score); a new deal, the next seat
        bids first (or the game stops if max_hands entries are reached)."""
        log = self.log
        log.passed_out = True
        log.discards, log.shown, log.tricks = [], [], []
        self.passed_out += 1
        if self.max_hands is not None and self.hand_number >= self.max_hands:
            self.truncated = True
            self.phase = OVER
            return
        self._start_hand((self.auction_first + 1) % 3, None)

    def _take(self, action: int) -> None:
        """The holder of 2D takes the face-up card, putting ``action`` out of play, or declines (docs/rules.md
        10.5)."""
        seat = self.current
        if action == PASS_ACTION:
            self.take = (seat, None)
        else:
            self.hands[seat] = (self.hands[seat] | self.kitty_mask) ^ 1 << action
            self.take = (seat, action)
        self.log.take = self.take
        self._next_stage()

    def _name_trump(self, suit: int) -> None:
        """Trump is named; with ``calls`` the dealer's call (a suit, NT or Miz) is used up (docs/rules.md 10.3)."""
        if self.rules.calls:
            dealer = self.dealer
            self.call = self.log.call = suit
            self.calls_left = tuple(c & ~(1 << suit) if s == dealer else c for s, c in enumerate(self.calls_left))
            if suit == MIZ:
                self.maxima = [MIZ_MAXIMA[(s - dealer) % 3] for s in range(3)]
                self.log.maxima = list(self.maxima)
            if suit >= NT:
                suit = NO_SUIT
        self.trump = suit
        self.log.trump = suit
        if self.rules.kitty_size == 0:
            self.log.discards = []
            self.log.shown = []
        self._next_stage()

    def _discard(self, card: int) -> None:
        self.hands[self.dealer] ^= 1 << card
        discards = self.log.discards
        discards.append(card)
        if len(discards) == self.rules.kitty_size:
            if self.rules.kitty_trick:  # docs/rules.md 10.4: the discards are the dealer's first trick
                self.tricks_won[self.dealer] += 1
            self._next_stage()

    def _pickup(self) -> None:
        """The dealer takes the kitty; the show rule (docs/rules.md 5.4) is applied
        (to the exchanges made so far: none when the kitty comes before the exchange)."""
        dealer = self.dealer
        self.hands[dealer] |= self.kitty_mask
        self.picked_up = True
        shown = []
        kitty = self.log.kitty
        for entry in self.log.exchanges:
            if entry.receiver != dealer or not entry.returned:
                continue
            lowest = [NUM_CARDS] * 4
            for card in entry.returned:
                suit = card // 13
                if card < lowest[suit]:
                    lowest[suit] = card
            cards = [k for k in kitty if lowest[k // 13] < NUM_CARDS and k > lowest[k // 13]]
            if cards:
                shown.append((entry.sender, cards))
        self.log.shown = shown

    def _start_play(self) -> None:
        self.phase = PLAY
        self.leader = self.current = (self.dealer + 1) % self.rules.num_players
        self.log.tricks = [TrickLog(self.leader)]

    def _play(self, card: int) -> None:
        seat = self.current
        bit = 1 << card
        self.hands[seat] ^= bit
        self.played[seat] |= bit
        trick = self.trick
        if trick:
            if card // 13 != self.led_suit:
                self.voids[seat] |= 1 << self.led_suit
        else:
            self.led_suit = card // 13
        trick.append(card)
        tricks = self.log.tricks
        tricks[-1].cards.append(card)
        n = self.rules.num_players
        if len(trick) < n:
            self.current = (seat + 1) % n
            return
        winner = (self.leader + trick.index(winning_card(trick, self.trump))) % n
        tricks[-1].winner = winner
        self.tricks_won[winner] += 1
        self.tricks_played += 1
        self.trick = []
        self.leader = self.current = winner
        if self.tricks_played == self.rules.hand_size:
            self._end_hand()
        else:
            tricks.append(TrickLog(winner))

    # ------------------------------------------------------------------ scoring

    def _end_hand(self) -> None:
        """Score the hand (the one place that scores) and go on or end the game.

        The running score adds the balances, or with ``chips`` the chip changes.
        """
        n = self.rules.num_players
        balances = self.hand_balances()
        log = self.log
        changes = balances
        if self.rules.chips:
            changes = log.chips = chip_changes(balances)
        for s in range(n):
            self.scores[s] += changes[s]
        log.tricks_won = list(self.tricks_won)
        log.balances = balances
        log.scores = list(self.scores)
        winners = self._game_winners(balances)
        if winners is not None:
            self.winners = winners
            self.phase = OVER
        elif self.max_hands is not None and self.hand_number >= self.max_hands:
            self.truncated = True
            self.phase = OVER
        else:
            self._start_hand((self.dealer + 1) % n, balances)

    def hand_balances(self) -> list[int]:
        """Each seat's balance in the hand as it stands (the score of :meth:`_end_hand` once it ends):
        tricks - quota, in a misère hand maximum - tricks (docs/rules.md 10.3)."""
        n = self.rules.num_players
        if self.maxima is not None:
            return [self.maxima[s] - self.tricks_won[s] for s in range(n)]
        return [self.tricks_won[s] - self.quotas[s] for s in range(n)]

    def _game_winners(self, balances: list[int]) -> list[int] | None:
        """Winning seats if an end condition is met (docs/rules.md 8, 9 and 10), else None.

        ``dealer_makes_quota`` counts from the hand after a full round of
        deals: hand 3 with three players, hand 4 with four."""
        rules = self.rules

        def best(seats: list[int], figure: Sequence[int]) -> list[int]:
            top = max(figure[s] for s in seats)
            return [s for s in seats if figure[s] == top]

        seats = range(rules.num_players)
        if rules.win_tricks is not None:
            hit = [s for s in seats if self.tricks_won[s] >= rules.win_tricks]
            if hit:
                return best(hit, self.tricks_won)
        if rules.win_margin is not None:
            hit = [s for s in seats if balances[s] >= rules.win_margin]
            if hit:
                return best(hit, balances)
        if rules.target_score is not None:
            target = rules.target_score  # running scores: chip totals with chips
            hit = [s for s in seats if self.scores[s] >= target]
            if hit or (rules.target_symmetric and any(self.scores[s] <= -target for s in seats)):
                return best(list(seats), self.scores)
        played = self.hands_played  # passed-out deals do not count (auction)
        if rules.dealer_makes_quota and played >= rules.num_players:
            surplus = self.tricks_won[self.dealer] - self.quotas[self.dealer]
            if surplus > 0 or (surplus == 0 and rules.dealer_makes_quota is True):  # "up": more than its quota
                return [self.dealer]
        if rules.fixed_hands is not None and played >= rules.fixed_hands:
            return best(list(seats), self.scores)
        if rules.calls and played >= 18:  # every player has made its six calls
            return best(list(seats), self.scores)
        return None

    # ------------------------------------------------------------------ positions

    @classmethod
    def from_position(
        cls,
        rules: RuleSet | str | dict[str, Any] | None,
        *,
        hand_number: int,
        dealer: int,
        scores: Sequence[int],
        previous_balances: Sequence[int] | None,
        phase: int,
        to_act: int,
        hands: Sequence[int],
        kitty: int,
        kitty_taken: bool,
        trump: int,
        discards: Sequence[int] | None,
        trick: Sequence[int],
        trick_leader: int,
        tricks_won: Sequence[int],
        tricks_played: int,
        played: Sequence[int],
        voids: Sequence[int],
        quotas: Sequence[int] | None = None,
        take: tuple[int, int | None] | None = None,
        call: int = -1,
    ) -> Game:
        """A game set up in the middle of a hand, for search over sampled deals.

        Only the trump, discard and play phases can be set up here (an exchange
        round in progress has state no player sees in full; a sender's decision
        in an exchange that opens the hand: :meth:`at_exchange`). ``hands`` and
        ``kitty`` are bit sets; the kitty is the cards still to be taken, or
        the dealer's known kitty once taken (0 if unknown); ``quotas`` by
        seat (default: the rule set's by role; needed with
        ``dealer_assigns_quotas``); ``take`` the one_card_kitty decision
        made (see :meth:`_reset_hand_state`; the face-up card is ``kitty``); ``call`` the hand's call with
        ``calls`` (0-3 a suit, 4 NT, 5 Miz; -1 before it). The game has no
        history before this hand, and ends (truncated) when the hand ends,
        so ``tricks_won`` and the balances of the hand can be read then.
        """
        if phase not in (TRUMP, DISCARD, PLAY):
            raise ValueError(f"a position can be set up in the trump, discard or play phase, not {PHASE_NAMES[phase]}")
        game = cls._in_hand(rules, hand_number, dealer, scores, hands, kitty, previous_balances)
        if quotas is not None:
            game.quotas = list(quotas)
        if game.quotas is None:
            raise ValueError("from_position: the quotas are needed when the dealer assigns them")
        game.trump = trump
        game.take = take
        game.call = call
        if call == MIZ:
            game.maxima = [MIZ_MAXIMA[(s - dealer) % 3] for s in range(3)]
        game.picked_up = kitty_taken
        game.played = list(played)
        game.voids = list(voids)
        game.trick = list(trick)
        game.led_suit = trick[0] // 13 if trick else NO_SUIT
        game.leader = trick_leader
        game.tricks_won = list(tricks_won)
        game.tricks_played = tricks_played
        game.phase = phase
        game.current = to_act
        game._stage = len(game._order) if phase == PLAY else game._order.index("trump" if phase == TRUMP else "discard")
        game._returns_done = True
        log = HandLog(hand_number, dealer, list(game.quotas), [[] for _ in hands], from_mask(kitty))
        log.trump = trump
        log.discards = None if discards is None else list(discards)
        log.shown = [] if kitty_taken else None
        log.take = take
        if phase == PLAY:
            open_trick = TrickLog(trick_leader)
            open_trick.cards = list(trick)
            log.tricks = [open_trick]
        game.history = [log]
        return game

    @classmethod
    def _in_hand(
        cls,
        rules: RuleSet | str | dict[str, Any] | None,
        hand_number: int,
        dealer: int,
        scores: Sequence[int],
        hands: Sequence[int],
        kitty: int,
        previous_balances: Sequence[int] | None,
    ) -> Game:
        """A game with no history at the deal of hand ``hand_number`` (its last: it ends, truncated, with the
        hand), ``hands`` and ``kitty`` as given: what :meth:`from_position` and :meth:`at_exchange` set up."""
        game = cls.__new__(cls)
        game.rules = RuleSet.from_any(rules)
        game._order = hand_order(game.rules)
        game.seed = None
        game.rng = random.Random(0)
        game.deal_queue = []
        game.max_hands = hand_number
        game.first_dealer = dealer
        game.start_balances = None
        game.scores = list(scores)
        game.winners = None
        game.truncated = False
        game.hand_number = hand_number
        game.calls_left = (ALL_CALLS, ALL_CALLS, ALL_CALLS)
        game._reset_auction(dealer)
        game._reset_hand_state(dealer, list(hands), kitty, previous_balances)
        return game

    @classmethod
    def at_exchange(
        cls,
        rules: RuleSet | str | dict[str, Any] | None,
        *,
        hand_number: int,
        dealer: int,
        scores: Sequence[int],
        previous_balances: Sequence[int],
        hands: Sequence[int],
        kitty: int,
        done: Sequence[ExchangeLog] = (),
        chosen: Sequence[int] = (),
        quotas: Sequence[int] | None = None,
    ) -> Game:
        """A game set up at a sender's decision in the hand's exchange, for search over sampled deals.

        Only rule sets whose hand opens with the exchange (the first stage of :func:`hand_order`: the standard
        order, not ``trump_after_send`` or the orders that put trump or the kitty first). ``hands`` and
        ``kitty`` are bit sets, the cards where they lie now, except ``chosen``: the cards the sender of the
        round in progress has chosen so far, in order (they are put back in its hand and sent again). The
        exchange is planned from ``previous_balances`` as at the deal (the usual order of the senders: there
        is no previous hand, so ``first_up_exchanges_first`` orders as without it); ``done`` holds the
        exchanges of the rounds already completed, in order, as log entries (delivered and returned; the
        cards of an exchange the searcher did not take part in may be left empty, which every seat then sees
        as the count alone), and must follow the plan: a ValueError if not, or if no round is left. ``quotas``
        by seat (default: the rule set's by role). The game has no history before this hand and ends
        (truncated) when the hand ends, as with :meth:`from_position`.
        """
        order = hand_order(RuleSet.from_any(rules))
        if order[0] != "exchange":
            raise ValueError(f"at_exchange: the hand opens with {order[0]!r}, not the exchange (stages {order})")
        game = cls._in_hand(rules, hand_number, dealer, scores, hands, kitty, previous_balances)
        if quotas is not None:
            game.quotas = list(quotas)
        log = HandLog(hand_number, dealer, list(game.quotas), [[] for _ in hands], from_mask(kitty))
        game.history = [log]
        plan = game._exchange_plan(previous_balances)
        rounds: list[tuple[int, list[tuple[int, int]]]] = []
        for entry in done:
            if not rounds or rounds[-1][0] != entry.sender:
                rounds.append((entry.sender, []))
            rounds[-1][1].append((entry.receiver, entry.count))
        if rounds != plan[: len(rounds)] or len(rounds) >= len(plan):
            raise ValueError(f"at_exchange: the rounds done {rounds} do not leave a round of the plan {plan}")
        game._exchange_rounds = plan
        log.exchanges = [entry.copy() for entry in done]
        game._stage = 0
        game._exchange_round = len(rounds)
        game._begin_exchange_round()
        sender = game.current
        for card in chosen:
            game.hands[sender] |= 1 << card
            game.apply(card)
        return game

    # ------------------------------------------------------------------ copies

    def clone(self) -> Game:
        """An independent copy (for search); the RNG and history are copied too."""
        other = Game.__new__(Game)
        for name, value in zip(_CLONE_SHARED, _shared_values(self), strict=True):
            setattr(other, name, value)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.deal_queue = list(self.deal_queue)
        other.scores = list(self.scores)
        other.history = self.history[:-1] + [self.history[-1].copy()]
        other.winners = None if self.winners is None else list(self.winners)
        for name in _HAND_LISTS:
            value = getattr(self, name)
            setattr(other, name, None if value is None else list(value))
        # the round's entries are the last ones of the copied log (a new list even when empty)
        exchanges = other.history[-1].exchanges
        other._round_exchanges = exchanges[len(exchanges) - len(self._round_exchanges) :]
        return other

    def __repr__(self) -> str:
        who = "-" if self.phase == OVER else f"player_{self.current}"
        trump = SUIT_LETTERS[self.trump] if self.trump != NO_SUIT else "-"
        return (
            f"<Game {self.rules.name} hand {self.hand_number} phase {PHASE_NAMES[self.phase]} "
            f"to act {who} trump {trump} tricks {self.tricks_won} scores {self.scores}>"
        )
