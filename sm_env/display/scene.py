"""The table as plain data (JSON-ready): one seat's view, or every hand.

The one place that turns a player view (or, for replays, the whole game) into
a description of the table; the browser pages (:mod:`sm_web`) send it as
JSON and :mod:`sm_env.display.picture` draws it.

Two builders, one layout:

- :func:`seat_table` takes a :class:`~sm_env.core.knowledge.PlayerView` and
  nothing else, so the page of a seat can never hold more than that seat may
  know (the play page and the replay viewer's one-seat mode).
- :func:`full_table` takes a :class:`~sm_env.core.game.Game` and shows every
  hand, the kitty and the discards (the replay viewer's "all hands" mode).
  Its public part comes from a player view too; only the hidden cards are
  added from the game.

Layout (cards as two-character text, seats absolute 0-2, 0-3 with four players; lists by seat)::

    {"mode": "seat" | "all", "seat": 0 | null, "rules": "standard",
     "hand_number": 3, "phase": "play", "to_act": 1 | null, "dealer": 2,
     "players": [{"seat", "name", "role", "quota", "tricks", "score", "cards",
                  "voids": ["H"]}, x3],
     "previous_balances": [2, -1, -1] | null, "trump": "H" | null,
     "hands": [[cards, ...] | null, x3],     # suit by suit, high first
     "legal": [cards], "choices": [{"action": 52, "label": "trump clubs"}],
     "trick": {"number": 9, "leader": 2, "cards": [{"seat", "card"}]},
     "tricks": [{"number", "leader", "cards": [{"seat", "card"}], "winner"}],
     "exchanges": [{"from", "to", "count", "sent": [..] | null, "returned": [..] | null}],
     "to_send": [{"to": 1, "count": 2}],
     "kitty_size": 4, "kitty": [..] | null, "kitty_taken": false,
     "discards": [..] | null, "discard_count": 4,
     "shown": [{"to": 0, "cards": [..]}],
     "over": false, "winner": null, "truncated": false,
     # rule sets of docs/rules.md section 10 (null when their option is off):
     "face_up": {"card": "7C", "decider": 1 | null, "taken": bool | null, "put_out": "8D" | null,
                 "nobody": false} | null,              # one_card_kitty; put_out: only its player's
     "auction": {"first": 0, "bids": [{"seat", "bid": 9 | null}], "high": {"bid", "seat"} | null,
                 "passed": [false, true, false], "passed_out": 0, "hand1_quotas": [..] | null,
                 "open": true} | null,                 # auction; open: its bids matter now (bid phase or hand 1)
     "call": {"call": "NT" | "C" | null, "maxima": [..] | null,
              "calls_left": [["C", "NT", ...], x3]} | null}   # calls

Each player has ``"maximum"`` too (its maximum in a misère hand, else null);
``"role"`` is null during the auction (nobody deals yet) and ``"quota"`` null
until the quotas are known (auction, dealer_assigns_quotas). With four
players every list by seat has four entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sm_env.core.cards import CARD_TEXT, NUM_CARDS, SUIT_LETTERS, SUIT_MASK, from_mask
from sm_env.core.game import (
    BID,
    CALL_NAMES,
    EXCHANGE,
    OVER,
    PHASE_NAMES,
    PLAY,
    TAKE,
    TWO_OF_DIAMONDS,
    Game,
    action_text,
    role_names,
)
from sm_env.core.knowledge import ExchangeView, PlayerView, player_view
from sm_env.core.logs import ExchangeLog

# Suits in the order a hand is shown: black and red alternate (spades, hearts, clubs, diamonds).
DISPLAY_SUITS = (3, 2, 0, 1)


def phase_name(phase: int) -> str:
    """Name of a phase number (``"phase N"`` for one this module does not know)."""
    return PHASE_NAMES[phase] if 0 <= phase < len(PHASE_NAMES) else f"phase {phase}"


def sorted_cards(mask: int) -> list[str]:
    """Cards of a bit set as text, suit by suit (S, H, C, D), high card first."""
    out = []
    for suit in DISPLAY_SUITS:
        out.extend(CARD_TEXT[c] for c in reversed(from_mask(mask & SUIT_MASK[suit])))
    return out


def _texts(cards: Sequence[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]


def _exchange(e: ExchangeView | ExchangeLog) -> dict[str, Any]:
    """One exchange as the table shows it; ``sent`` / ``returned`` are None while unseen or not yet made."""
    return {
        "from": e.sender,
        "to": e.receiver,
        "count": e.count,
        "sent": None if e.sent is None else _texts(e.sent),
        "returned": None if e.returned is None else _texts(e.returned),
    }


def _trick(leader: int, cards: Sequence[int], n: int) -> list[dict[str, Any]]:
    return [{"seat": (leader + i) % n, "card": CARD_TEXT[c]} for i, c in enumerate(cards)]


def _public(view: PlayerView, names: Sequence[str]) -> dict[str, Any]:
    """The part of the table every seat sees alike (read from a view)."""
    seats = len(view.hand_sizes)
    roles = role_names(view.rules)
    tricks = [
        {"number": n, "leader": t.leader, "cards": _trick(t.leader, t.cards, seats), "winner": t.winner}
        for n, t in enumerate(view.tricks(), 1)
    ]
    open_trick = None
    if view.phase == PLAY:
        number = view.tricks_played + 1
        open_trick = {
            "number": number,
            "leader": view.trick_leader,
            "cards": _trick(view.trick_leader, view.trick, seats),
        }
    winner = view.winner
    bidding = view.phase == BID
    maxima = view.maxima
    return {
        "rules": view.rules.name,
        "hand_number": view.hand_number,
        "phase": phase_name(view.phase),
        "to_act": view.to_act,
        "dealer": view.dealer,
        "players": [
            {
                "seat": s,
                "name": names[s],
                "role": None if bidding else roles[view.role(s)],  # the auction decides who deals
                "quota": None if view.quotas is None else view.quotas[s],  # None until known (auction, assign)
                "maximum": None if maxima is None else maxima[s],  # a misère hand (calls)
                "tricks": view.tricks_won[s],
                "score": view.scores[s],
                "cards": view.hand_sizes[s],
                "voids": [SUIT_LETTERS[u] for u in range(4) if view.voids[s] >> u & 1],
            }
            for s in range(seats)
        ],
        "previous_balances": None if view.previous_balances is None else list(view.previous_balances),
        "trump": SUIT_LETTERS[view.trump] if view.trump >= 0 else None,
        "trick": open_trick,
        "tricks": tricks,
        "kitty_size": view.rules.kitty_size,
        "kitty_taken": view.kitty_taken,
        "discard_count": view.discard_count,
        "over": view.phase == OVER,
        "winner": list(winner) if isinstance(winner, list) else winner,
        "truncated": view.truncated,
        "face_up": _face_up(view),
        "auction": _auction(view),
        "call": _call(view),
    }


def _face_up(view: PlayerView) -> dict[str, Any] | None:
    """The face-up card of ``one_card_kitty`` (public), who decides on it, whether it was taken (public) and
    the card put out of play to take it (only in the view of the player who put it out)."""
    if not view.rules.one_card_kitty or view.face_up < 0:
        return None
    decider = taken = None
    if view.take is not None:
        decider, taken = view.take
    elif view.phase == TAKE:
        decider = view.to_act
    return {
        "card": CARD_TEXT[view.face_up],
        "decider": decider,
        "taken": taken,
        "put_out": None if view.put_out is None else CARD_TEXT[view.put_out],
        "nobody": view.face_up == TWO_OF_DIAMONDS,  # the face-up card is 2D: nobody can take it
    }


def _auction(view: PlayerView) -> dict[str, Any] | None:
    """The auction's bids and passes (``auction``; all public)."""
    if not view.rules.auction:
        return None
    high = view.auction_high
    return {
        "first": view.auction_first,
        "bids": [{"seat": seat, "bid": bid} for seat, bid in view.auction_bids],
        "high": None if high is None else {"bid": high[0], "seat": high[1]},
        "passed": list(view.auction_passed),
        "passed_out": view.passed_out,
        "hand1_quotas": None if view.hand1_quotas is None else list(view.hand1_quotas),
        "open": view.phase == BID or view.hand_number - view.passed_out == 1,
    }


def _call(view: PlayerView) -> dict[str, Any] | None:
    """The hand's call, a misère hand's maxima and the calls each seat has still to make (``calls``; public)."""
    if not view.rules.calls:
        return None
    return {
        "call": CALL_NAMES[view.call] if view.call >= 0 else None,
        "maxima": None if view.maxima is None else list(view.maxima),
        "calls_left": [[CALL_NAMES[k] for k in range(6) if left >> k & 1] for left in view.calls_left],
    }


def _choices(legal: int, rules: Any = None) -> tuple[list[str], list[dict[str, Any]]]:
    cards = [CARD_TEXT[a] for a in from_mask(legal) if a < NUM_CARDS]
    choices = [{"action": a, "label": action_text(a, rules)} for a in from_mask(legal) if a >= NUM_CARDS]
    return cards, choices


def seat_table(view: PlayerView, names: Sequence[str]) -> dict[str, Any]:
    """The table as ``view.seat`` sees it: built from the view alone."""
    table = _public(view, names)
    me = view.seat
    hands: list[list[str] | None] = [None] * len(view.hand_sizes)
    hands[me] = sorted_cards(view.hand)
    legal, choices = _choices(view.legal, view.rules)
    table.update(
        mode="seat",
        seat=me,
        hands=hands,
        legal=legal,
        choices=choices,
        exchanges=[_exchange(e) for e in view.exchanges],
        to_send=[{"to": r, "count": n} for r, n in view.to_send if n > 0],
        kitty=None if view.kitty is None else sorted_cards(view.kitty),
        discards=None if view.discards is None else _texts(view.discards),
        shown=[{"to": me, "cards": sorted_cards(view.shown)}] if view.shown else [],
    )
    return table


def full_table(game: Game, names: Sequence[str]) -> dict[str, Any]:
    """Every hand, the kitty, the discards and every exchange (for replays, never for a player)."""
    view = player_view(game, game.dealer)
    table = _public(view, names)
    log = game.log
    to_send = []
    if game.phase == EXCHANGE:
        acting = player_view(game, game.current)
        to_send = [{"to": r, "count": n} for r, n in acting.to_send if n > 0]
    legal, choices = _choices(game.legal_mask(), game.rules)
    table.update(
        mode="all",
        seat=None,
        hands=[sorted_cards(h) for h in game.hands],
        legal=legal,
        choices=choices,
        exchanges=[_exchange(e) for e in log.exchanges],
        to_send=to_send,
        kitty=sorted_cards(sum(1 << c for c in log.kitty)),
        discards=_texts(log.discards or ()),
        shown=[{"to": to, "cards": _texts(cards)} for to, cards in log.shown or ()],
    )
    if table["face_up"] is not None and game.take is not None and game.take[1] is not None:
        table["face_up"]["put_out"] = CARD_TEXT[game.take[1]]
    return table
