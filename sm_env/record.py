"""Game records: the JSON form of a game, its replay, and record files.

Format ``"sergeant-major-record/1"`` (docs/interface.md, "Game record (JSON)")::

    {
      "format": "sergeant-major-record/1",
      "rules": {"name": "standard", "pickup_before_discard": false, ...},
      "seed": 7,                      # the seed given to reset, or null
      "first_dealer": 0,
      "hands": [
        {
          "number": 1, "dealer": 0, "quotas": [8, 5, 3],     # by absolute seat
          "deal": {"hands": [[16 cards], [...], [...]], "kitty": [4 cards]},
          "exchanges": [{"from": 0, "to": 2, "sent": ["2C"], "returned": ["KC"]}],
          "trump": "D",                                        # C, D, H or S
          "discards": ["3C", "4C", "2H", "5S"],
          "shown": [{"to": 0, "cards": ["KS"]}],
          "tricks": [{"leader": 1, "cards": ["AH", "4H", "7D"], "winner": 0}],
          "tricks_won": [10, 4, 2], "balances": [2, -1, -1], "scores": [2, -1, -1]
        }
      ],
      "winner": null,                 # a seat, a sorted list of seats (shared win) or null
      "truncated": false,
      "max_hands": 100,               # ours: the engine's max_hands (null: no limit)
      "start_balances": null          # ours: balances of an imaginary hand 0, or null
    }

Cards are two-character text (``"TH"``). ``sent``, ``discards`` and trick
cards are in the order chosen or played; ``returned``, ``shown[].cards`` and
the deal (hands and kitty) may be in any order. Seats are absolute (0-2).

Two top-level fields are ours (docs/interface.md leaves unnamed fields to us), so
that a record is enough to re-create the game:

- ``max_hands``: the hand limit of the game (null: none). A game stopped by
  it has ``truncated: true``. A record without the key is read as null, or
  as its number of hands when it says ``truncated: true``.
- ``start_balances``: the balances of an imaginary previous hand given to the
  engine so that hand 1 starts with an exchange (null normally). A record
  without the key is read as null.

How a hand still in progress is written (fields not yet known are null):

- ``exchanges`` lists an exchange from the moment its first card is chosen;
  ``returned`` is null until the cards of its round move (for the
  simultaneous case, when the sender has chosen its last card for both
  receivers).
- ``trump`` is null until trump is named; ``shown`` is null until the dealer
  takes the kitty; ``discards`` is null until trump is named, then the list
  of the discards made so far (``[]`` with no_kitty_51).
- ``tricks`` is null until the play of the tricks begins, then the tricks so
  far. The current trick (``winner: null``) appears once its first card is
  played: a trick with no card yet is left out, so the record reads the same
  just before and just after a trick closes (nothing happened in between).
- ``tricks_won``, ``balances`` and ``scores`` are null until the hand ends;
  the next hand's entry is then present at once, with its deal, unless the
  game is over.

:func:`replay` re-plays a record with the engine and checks every field; it
raises :class:`ReplayError` naming the hand and step (``hand 3, trick 5, card
2``; ``hand 2, exchange 1, card 1``; ``hand 1, discard 3``; ``hand 4,
scores``; ``winner``; ...) of the first illegal action or inconsistent field.
When reading a record it ignores keys it does not know, accepts card text in
any form :func:`sm_env.cards.parse_card` reads (``10h``) but not card ids, and
accepts an empty current trick (``cards: []``) as the last trick of a hand.

:func:`save_record` writes a record file atomically; :func:`load_record`
reads one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from .atomic import atomic_path
from .cards import CARD_TEXT, SUIT_LETTERS, CardError, parse_card
from .game import (
    DISCARD,
    EXCHANGE,
    OVER,
    PLAY,
    TRUMP,
    TRUMP_ACTION_BASE,
    DealError,
    Game,
    HandLog,
    IllegalActionError,
    normalize_deal,
)
from .rules import OPTION_NAMES, PRESETS, RulesError, RuleSet

__all__ = [
    "FORMAT",
    "RecordError",
    "ReplayError",
    "game_record",
    "hand_record",
    "load_record",
    "replay",
    "save_record",
]

FORMAT = "sergeant-major-record/1"

RECORD_KEYS = ("format", "rules", "seed", "first_dealer", "hands", "winner", "truncated")
EXTRA_KEYS = ("max_hands", "start_balances")
HAND_KEYS = (
    "number",
    "dealer",
    "quotas",
    "deal",
    "exchanges",
    "trump",
    "discards",
    "shown",
    "tricks",
    "tricks_won",
    "balances",
    "scores",
)


class RecordError(ValueError):
    """A record file that cannot be read as a game record (bad JSON, not an object)."""


class ReplayError(RecordError):
    """A record that does not replay: malformed, an illegal action or an inconsistent field."""


# ---------------------------------------------------------------------- writing


def _texts(cards: list[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]


def _ints(values: list[int] | None) -> list[int] | None:
    return None if values is None else [int(v) for v in values]


def hand_record(log: HandLog) -> dict[str, Any]:
    """One hand's entry of the record, from the engine's :class:`HandLog`."""
    tricks = None
    if log.tricks is not None:
        # The open trick is left out until its first card is played.
        tricks = [{"leader": t.leader, "cards": _texts(t.cards), "winner": t.winner} for t in log.tricks if t.cards]
    return {
        "number": log.number,
        "dealer": log.dealer,
        "quotas": _ints(log.quotas),
        "deal": {"hands": [_texts(h) for h in log.deal_hands], "kitty": _texts(log.kitty)},
        "exchanges": [
            {
                "from": e.sender,
                "to": e.receiver,
                "sent": _texts(e.sent),
                "returned": None if e.returned is None else _texts(e.returned),
            }
            for e in log.exchanges
        ],
        "trump": None if log.trump is None else SUIT_LETTERS[log.trump],
        "discards": None if log.discards is None else _texts(log.discards),
        "shown": None if log.shown is None else [{"to": to, "cards": _texts(cards)} for to, cards in log.shown],
        "tricks": tricks,
        "tricks_won": _ints(log.tricks_won),
        "balances": _ints(log.balances),
        "scores": _ints(log.scores),
    }


def _seed_value(seed: Any) -> Any:
    """The seed as JSON: an int (numpy ints too), a str or float as given, else null."""
    if seed is None or isinstance(seed, (str, float)):
        return seed
    if isinstance(seed, bool):
        return int(seed)
    try:
        return int(seed.__index__())
    except (AttributeError, TypeError):
        return None


def game_record(game: Game) -> dict[str, Any]:
    """The game so far as a JSON-able record (see the module docstring).

    Every list is new: changing the record does not touch the game.
    """
    winner = game.winner
    return {
        "format": FORMAT,
        "rules": game.rules.options(),
        "seed": _seed_value(game.seed),
        "first_dealer": game.first_dealer,
        "hands": [hand_record(log) for log in game.history],
        "winner": list(winner) if isinstance(winner, list) else winner,
        "truncated": bool(game.truncated),
        "max_hands": game.max_hands,
        "start_balances": _ints(game.start_balances),
    }


# ---------------------------------------------------------------------- reading


def _fail(where: str, message: str) -> ReplayError:
    return ReplayError(f"{where}: {message}")


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(where, f"missing key {key!r}")
    return obj[key]


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"expected a JSON object, got {_show_type(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {_show_type(value)}")
    return value


def _show_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    name = names.get(type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)
    return f"{name} ({_show(value) if isinstance(value, (str, int, float, bool)) else '...'})"


def _seat(value: Any, where: str) -> int:
    if not _is_int(value) or not 0 <= value <= 2:
        raise _fail(where, f"expected a seat 0, 1 or 2, got {_show_type(value)}")
    return value


def _ints3(value: Any, where: str) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3 or not all(_is_int(v) for v in value):
        raise _fail(where, f"expected null or a list of 3 integers (by absolute seat), got {_show(value)}")
    return list(value)


def _card(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise _fail(where, f"a card is written as text such as 'TH', got {_show_type(value)}")
    try:
        return parse_card(value)
    except CardError as err:
        raise _fail(where, str(err)) from None


def _cards(value: Any, where: str) -> list[int]:
    return [_card(c, f"{where}, card {i}") for i, c in enumerate(_list(value, where), 1)]


def _cards_or_null(value: Any, where: str) -> list[int] | None:
    return None if value is None else _cards(value, where)


@dataclass
class _Exchange:
    sender: int
    receiver: int
    sent: list[int]
    returned: list[int] | None


@dataclass
class _Trick:
    leader: int
    cards: list[int]
    winner: int | None


@dataclass
class _Hand:
    raw: dict[str, Any]
    number: int
    dealer: int
    quotas: list[int]
    deal: tuple[list[list[int]], list[int]]
    exchanges: list[_Exchange]
    trump: int | None
    discards: list[int] | None
    shown: list[tuple[int, list[int]]] | None
    tricks: list[_Trick] | None


@dataclass
class _Record:
    rules: RuleSet
    seed: Any
    first_dealer: int
    max_hands: int | None
    start_balances: list[int] | None
    hands: list[_Hand]
    winner: int | list[int] | None
    truncated: bool


def _parse_rules(value: Any) -> RuleSet:
    options = _dict(value, "rules")
    missing = [key for key in ("name", *OPTION_NAMES) if key not in options]
    if missing:
        raise _fail("rules", f"missing {missing}; a record's rules list 'name' and every option of docs/rules.md 9")
    try:
        rules = RuleSet.from_any(dict(options))
    except (RulesError, TypeError) as err:
        raise _fail("rules", str(err)) from None
    made = rules.options()
    if made["name"] != options["name"]:
        raise _fail(
            "rules",
            f"the name {_show(options['name'])} does not match the options, which make a {_show(made['name'])} rule "
            f"set (a preset's name only with exactly its options; 'standard' when no option is on)",
        )
    for key in OPTION_NAMES:
        if made[key] != options[key]:
            raise _fail(
                "rules",
                f"option {key!r} is {_show(options[key])} in the record, but these options make it {_show(made[key])}",
            )
    preset = PRESETS.get(rules.name.lower()) if isinstance(rules.name, str) else None
    if preset is not None:
        wanted = preset.options()
        changed = [key for key in OPTION_NAMES if wanted[key] != made[key]]
        if changed:
            diffs = ", ".join(f"{key} {_show(made[key])} (preset: {_show(wanted[key])})" for key in changed)
            raise _fail(
                "rules",
                f"the name {_show(rules.name)} is a preset's, but the options differ from it: {diffs}; "
                f"a rule set that is not a preset is named 'custom'",
            )
    return rules


def _parse_exchange(value: Any, where: str) -> _Exchange:
    entry = _dict(value, where)
    sender = _seat(_get(entry, "from", where), f"{where}, from")
    receiver = _seat(_get(entry, "to", where), f"{where}, to")
    if sender == receiver:
        raise _fail(where, f"seat {sender} exchanges with itself")
    sent = _cards(_get(entry, "sent", where), f"{where}, sent")
    if not sent:
        raise _fail(f"{where}, sent", "no card; an exchange is listed once its first card is chosen")
    returned = _cards_or_null(_get(entry, "returned", where), f"{where}, returned")
    return _Exchange(sender, receiver, sent, returned)


def _parse_trick(value: Any, where: str, last: bool) -> _Trick:
    entry = _dict(value, where)
    leader = _seat(_get(entry, "leader", where), f"{where}, leader")
    cards = _cards(_get(entry, "cards", where), where)
    winner = _get(entry, "winner", where)
    if winner is not None:
        winner = _seat(winner, f"{where}, winner")
    if len(cards) > 3:
        raise _fail(where, f"{len(cards)} cards; a trick has 3")
    if len(cards) < 3 and not last:
        raise _fail(where, f"only {len(cards)} card(s), but more tricks follow; only the current trick is incomplete")
    return _Trick(leader, cards, winner)


def _parse_hand(value: Any, index: int, rules: RuleSet) -> _Hand:
    where = f"hand {index + 1}"
    hand = _dict(value, where)
    for key in HAND_KEYS:
        _get(hand, key, where)
    number = hand["number"]
    if number != index + 1 or not _is_int(number):
        raise _fail(
            f"{where}, number", f"expected {index + 1} (hands are numbered 1, 2, ... in order), got {_show(number)}"
        )
    dealer = _seat(hand["dealer"], f"{where}, dealer")
    quotas = _ints3(hand["quotas"], f"{where}, quotas")
    if quotas is None:
        raise _fail(f"{where}, quotas", "null; the quotas of a hand are known from its start")
    deal_where = f"{where}, deal"
    deal = _dict(hand["deal"], deal_where)
    deal_ids = {
        "hands": [
            _cards(h, f"{deal_where}, seat {seat}")
            for seat, h in enumerate(_list(_get(deal, "hands", deal_where), f"{deal_where}, hands"))
        ],
        "kitty": _cards(_get(deal, "kitty", deal_where), f"{deal_where}, kitty"),
    }
    extra = sorted(set(deal) - {"hands", "kitty"})
    if extra:
        raise _fail(deal_where, f"unknown key(s) {extra}; a deal has 'hands' and 'kitty'")
    try:
        deal_norm = normalize_deal(deal_ids, rules, deal_where)
    except DealError as err:
        raise ReplayError(str(err)) from None
    exchanges = [
        _parse_exchange(e, f"{where}, exchange {i}")
        for i, e in enumerate(_list(hand["exchanges"], f"{where}, exchanges"), 1)
    ]
    trump = hand["trump"]
    if trump is not None:
        if not isinstance(trump, str) or trump.strip().upper() not in tuple(SUIT_LETTERS):
            raise _fail(f"{where}, trump", f"expected null or a suit letter C, D, H or S, got {_show_type(trump)}")
        trump = SUIT_LETTERS.index(trump.strip().upper())
    discards = None
    if hand["discards"] is not None:
        discards = _cards(hand["discards"], f"{where}, discards")
    shown = None
    if hand["shown"] is not None:
        shown = []
        for i, entry in enumerate(_list(hand["shown"], f"{where}, shown"), 1):
            entry_where = f"{where}, shown {i}"
            entry = _dict(entry, entry_where)
            to = _seat(_get(entry, "to", entry_where), f"{entry_where}, to")
            shown.append((to, _cards(_get(entry, "cards", entry_where), f"{entry_where}, cards")))
    tricks = None
    if hand["tricks"] is not None:
        items = _list(hand["tricks"], f"{where}, tricks")
        tricks = [_parse_trick(t, f"{where}, trick {i}", i == len(items)) for i, t in enumerate(items, 1)]
    for key in ("tricks_won", "balances", "scores"):
        _ints3(hand[key], f"{where}, {key}")
    return _Hand(hand, number, dealer, quotas, deal_norm, exchanges, trump, discards, shown, tricks)


def _parse_record(record: Any) -> _Record:
    if not isinstance(record, dict):
        raise _fail("record", f"expected a JSON object, got {_show_type(record)}")
    for key in RECORD_KEYS:
        _get(record, key, "record")
    if record["format"] != FORMAT:
        raise _fail(
            "format", f"expected {FORMAT!r}, got {_show(record['format'])}; this replay reads version 1 records only"
        )
    rules = _parse_rules(record["rules"])
    seed = record["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, float, str))):
        raise _fail("seed", f"expected null, a number or a string, got {_show_type(seed)}")
    first_dealer = _seat(record["first_dealer"], "first_dealer")
    truncated = record["truncated"]
    if not isinstance(truncated, bool):
        raise _fail("truncated", f"expected true or false, got {_show_type(truncated)}")
    winner = record["winner"]
    if winner is not None and not _is_int(winner):
        if not isinstance(winner, list) or not winner:
            raise _fail("winner", f"expected null, a seat or a sorted list of seats, got {_show(winner)}")
        winner = [_seat(w, "winner") for w in winner]
    elif winner is not None:
        winner = _seat(winner, "winner")
    hands_in = _list(record["hands"], "hands")
    if not hands_in:
        raise _fail("hands", "empty; a record holds hand 1 (with its deal) from the start")
    hands = [_parse_hand(h, i, rules) for i, h in enumerate(hands_in)]
    if "max_hands" in record:
        max_hands = record["max_hands"]
        if max_hands is not None and (not _is_int(max_hands) or max_hands < 1):
            raise _fail("max_hands", f"expected null or a whole number >= 1, got {_show(max_hands)}")
    else:
        max_hands = len(hands) if truncated else None
    start_balances = _ints3(record.get("start_balances"), "start_balances")
    if start_balances is not None and sum(start_balances) != 0:
        raise _fail("start_balances", f"balances sum to zero, got {start_balances}")
    return _Record(rules, seed, first_dealer, max_hands, start_balances, hands, winner, truncated)


# ---------------------------------------------------------------------- comparing


def _canon_cards(cards: list[str], ordered: bool) -> list[str]:
    ids = [parse_card(c) for c in cards]
    return _texts(ids if ordered else sorted(ids))


def _canon_field(key: str, value: Any) -> Any:
    """A validated field of a hand in a form where equal means the same (text cards, unordered sorted)."""
    if value is None:
        return None
    if key == "deal":
        return {
            "hands": [_canon_cards(h, False) for h in value["hands"]],
            "kitty": _canon_cards(value["kitty"], False),
        }
    if key == "exchanges":
        return [
            {
                "from": e["from"],
                "to": e["to"],
                "sent": _canon_cards(e["sent"], True),
                "returned": None if e["returned"] is None else _canon_cards(e["returned"], False),
            }
            for e in value
        ]
    if key == "trump":
        return value.strip().upper()
    if key == "discards":
        return _canon_cards(value, True)
    if key == "shown":
        entries = [{"to": e["to"], "cards": _canon_cards(e["cards"], False)} for e in value]
        return sorted(entries, key=lambda e: (e["to"], [parse_card(c) for c in e["cards"]]))
    if key == "tricks":
        return [
            {"leader": t["leader"], "cards": _canon_cards(t["cards"], True), "winner": t["winner"]}
            for t in value
            if t["cards"]
        ]
    return value


_ITEM_NAMES = {"hands": "hand", "exchanges": "exchange", "tricks": "trick", "shown": "shown"}


def _difference(a: Any, b: Any, path: str, key: str = "") -> tuple[str, Any, Any] | None:
    """First place where a and b differ: (path, a part, b part), or None."""
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            found = _difference(a[k], b[k], f"{path}, {k}" if path else k, k)
            if found:
                return found
    if (
        isinstance(a, list)
        and isinstance(b, list)
        and len(a) == len(b)
        and key in _ITEM_NAMES
        and all(isinstance(x, dict) for x in a + b)
    ):
        base = path.rsplit(", ", 1)[0] if ", " in path else ""
        for i, (x, y) in enumerate(zip(a, b, strict=True), 1):
            item = f"{_ITEM_NAMES[key]} {i}"
            found = _difference(x, y, f"{base}, {item}" if base else item)
            if found:
                return found
    return path, a, b


def _check_fields(where: str, hand: _Hand, log: HandLog, keys: tuple[str, ...]) -> None:
    replayed = hand_record(log)
    for key in keys:
        ours = _canon_field(key, hand.raw[key])
        theirs = _canon_field(key, replayed[key])
        found = _difference(ours, theirs, f"{where}, {key}", key)
        if found:
            path, a, b = found
            raise _fail(path, f"the record has {_show(a)}, but the replay gives {_show(b)}")


def _canon_record(record: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in keys:
        if key == "hands":
            out[key] = [{k: _canon_field(k, h[k]) for k in HAND_KEYS} for h in record[key]]
        else:
            out[key] = record[key]
    return out


# ---------------------------------------------------------------------- replaying


def _state(game: Game) -> str:
    """What the engine is waiting for, in words."""
    if game.phase == OVER:
        return f"the game is over after hand {game.hand_number} ({_end_text(game)})"
    phase = game.phase
    if phase == EXCHANGE:
        receiver, left = game.exchange_to_send()  # type: ignore[misc]
        return f"seat {game.current} still has {left} card(s) to send to seat {receiver} in the exchange"
    if phase == TRUMP:
        return f"the dealer (seat {game.dealer}) has to name trump"
    if phase == DISCARD:
        done = len(game.log.discards or [])
        return f"the dealer (seat {game.dealer}) has discarded {done} of {game.rules.kitty_size} cards"
    return f"trick {game.tricks_played + 1} is being played, seat {game.current} to play"


def _end_text(game: Game) -> str:
    if game.winners is not None:
        return "won by seat " + ", ".join(str(s) for s in game.winners)
    if game.truncated:
        return f"stopped at max_hands={game.max_hands}"
    return "in progress"


_WANTED = {EXCHANGE: "an exchange card", TRUMP: "naming trump", DISCARD: "a discard", PLAY: "a card to a trick"}


def _expect(game: Game, number: int, phase: int, step: str) -> None:
    if game.phase == phase and game.hand_number == number:
        return
    if game.hand_number != number and game.phase != OVER:
        state = f"hand {number} is over; the engine is in hand {game.hand_number}"
    else:
        state = _state(game)
    raise _fail(step, f"{_WANTED[phase]} is not due here: {state}")


def _apply(game: Game, action: int, step: str) -> None:
    try:
        game.apply(action)
    except IllegalActionError as err:
        raise _fail(step, str(err)) from None


def _replay_exchanges(game: Game, hand: _Hand, log: HandLog, where: str) -> None:
    for e_index, entry in enumerate(hand.exchanges, 1):
        step = f"{where}, exchange {e_index}"
        for c_index, card in enumerate(entry.sent, 1):
            card_step = f"{step}, card {c_index}"
            if c_index > 1:
                done = log.exchanges[e_index - 1]
                if len(done.sent) == done.count:
                    raise _fail(
                        card_step,
                        f"the exchange from seat {done.sender} to seat {done.receiver} is of {done.count} card(s), "
                        f"but the record sends more",
                    )
            _expect(game, hand.number, EXCHANGE, card_step)
            receiver, _left = game.exchange_to_send()  # type: ignore[misc]
            if (game.current, receiver) != (entry.sender, entry.receiver):
                raise _fail(
                    step,
                    f"the record has seat {entry.sender} send to seat {entry.receiver}, but now seat {game.current} "
                    f"chooses cards for seat {receiver} (previous balances decide who exchanges, and in what order)",
                )
            _apply(game, card, card_step)
    _check_fields(where, hand, log, ("exchanges",))


def _replay_hand(game: Game, index: int, hand: _Hand, last: bool) -> None:
    number = index + 1
    where = f"hand {number}"
    if len(game.history) < number:
        raise _fail(where, f"the game was over after hand {number - 1} ({_end_text(game)}), but the record goes on")
    log = game.history[index]
    if hand.dealer != log.dealer:
        why = "as first_dealer says" if number == 1 else "the deal passes to the left: the previous eldest deals"
        raise _fail(f"{where}, dealer", f"the record has seat {hand.dealer}, but seat {log.dealer} deals ({why})")
    if hand.quotas != log.quotas:
        raise _fail(
            f"{where}, quotas",
            f"the record has {hand.quotas}, but with seat {log.dealer} dealing and quotas "
            f"{list(game.rules.quotas)} (dealer, eldest, middle) they are {log.quotas}",
        )
    _replay_exchanges(game, hand, log, where)
    if hand.trump is not None:
        step = f"{where}, trump"
        _expect(game, number, TRUMP, step)
        _apply(game, TRUMP_ACTION_BASE + hand.trump, step)
    for k, card in enumerate(hand.discards or [], 1):
        step = f"{where}, discard {k}"
        _expect(game, number, DISCARD, step)
        _apply(game, card, step)
    _check_fields(where, hand, log, ("trump", "discards", "shown"))
    for t, trick in enumerate(hand.tricks or [], 1):
        step = f"{where}, trick {t}"
        for k, card in enumerate(trick.cards, 1):
            _expect(game, number, PLAY, f"{step}, card {k}")
            if k == 1 and game.current != trick.leader:
                raise _fail(
                    f"{step}, leader",
                    f"the record has seat {trick.leader}, but seat {game.current} leads "
                    f"({'the eldest leads the first trick' if t == 1 else 'the winner of the last trick leads'})",
                )
            _apply(game, card, f"{step}, card {k}")
        if not trick.cards:  # an empty current trick: check its leader only
            _expect(game, number, PLAY, step)
            if game.current != trick.leader:
                raise _fail(f"{step}, leader", f"the record has seat {trick.leader}, but seat {game.current} leads")
        replayed = log.tricks[t - 1].winner if log.tricks is not None and len(log.tricks) >= t else None
        if trick.winner != replayed:
            if replayed is None:
                why = f"the trick has {len(trick.cards)} card(s), so it has no winner yet (null)"
            else:
                trump = SUIT_LETTERS[log.trump] if log.trump is not None else "none"
                why = f"seat {replayed} wins it (trump {trump})"
            raise _fail(f"{step}, winner", f"the record has {_show(trick.winner)}, but {why}")
    _check_fields(where, hand, log, ("tricks", "tricks_won", "balances", "scores"))
    if not last and log.scores is None:
        raise _fail(where, f"the hand is not finished ({_state(game)}), but hand {number + 1} follows")


def _check_end(game: Game, record: _Record) -> None:
    count = len(record.hands)
    if game.phase == OVER:
        if record.winner != game.winner:
            raise _fail(
                "winner",
                f"the record has {_show(record.winner)}, but the replay gives {_show(game.winner)} "
                f"({_end_text(game)}; last hand tricks_won {game.log.tricks_won}, scores {game.log.scores})",
            )
        if record.truncated != game.truncated:
            raise _fail(
                "truncated", f"the record has {_show(record.truncated)}, but the replay gives {_show(game.truncated)}"
            )
        return
    if record.winner is not None or record.truncated:
        field = "winner" if record.winner is not None else "truncated"
        value = record.winner if record.winner is not None else True
        if game.hand_number > count:
            why = f"after hand {count} no end condition of these rules is met and max_hands is {game.max_hands}"
        else:
            why = f"hand {count} is still being played"
        raise _fail(field, f"the record has {_show(value)}, but the game is not over: {why}")
    if game.hand_number > count:
        raise _fail(
            f"hand {count + 1}",
            f"missing: hand {count} ended without ending the game, so the record must hold hand {count + 1} "
            f"with its deal",
        )


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """Re-play a record with the engine; return the re-played record.

    The returned record equals the input (up to the order of the fields that
    may be in any order, and card text spelling). Raises :class:`ReplayError`
    naming the hand and step of the first illegal action or inconsistent
    field, or where a malformed record is malformed.
    """
    parsed = _parse_record(record)
    deals = [{"hands": h.deal[0], "kitty": h.deal[1]} for h in parsed.hands]
    try:
        game = Game(
            rules=parsed.rules,
            seed=parsed.seed,
            first_dealer=parsed.first_dealer,
            deals=deals,
            max_hands=parsed.max_hands,
            start_balances=parsed.start_balances,
        )
    except (ValueError, TypeError) as err:
        raise _fail("record", f"the engine cannot set up this game: {err}") from None
    for index, hand in enumerate(parsed.hands):
        _replay_hand(game, index, hand, index == len(parsed.hands) - 1)
    _check_end(game, parsed)
    out = game_record(game)
    keys = [key for key in (*RECORD_KEYS, *EXTRA_KEYS) if key in record]
    found = _difference(_canon_record(record, keys), _canon_record(out, keys), "")
    if found:  # a safety net: the checks above should have caught it
        path, a, b = found
        raise _fail(path or "record", f"the record has {_show(a)}, but the replay gives {_show(b)}")
    for key in EXTRA_KEYS:  # a record without our extra fields comes back without them (equal to the input)
        if key not in record:
            del out[key]
    return out


# ---------------------------------------------------------------------- files


def _as_record(record_or_game: Any) -> dict[str, Any]:
    if isinstance(record_or_game, dict):
        return record_or_game
    if isinstance(record_or_game, Game):
        return game_record(record_or_game)
    make = getattr(record_or_game, "record", None)
    if callable(make):
        return make()
    raise TypeError(f"expected a record (dict), a Game or an object with record(), got {type(record_or_game).__name__}")


def save_record(record_or_game: dict[str, Any] | Game | Any, path: str | os.PathLike[str]) -> None:
    """Write a record (or a game's record) as JSON, atomically.

    The JSON goes to a temporary file in the same directory, which is flushed,
    fsynced and then renamed over ``path``: a reader sees the old file or the
    new one, never half of one, and a failure (say, a value that is not JSON)
    leaves the old file as it was.
    """
    record = _as_record(record_or_game)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(record, handle, allow_nan=False)
        handle.write("\n")


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file written by :func:`save_record` (or any JSON record).

    Raises FileNotFoundError (naming the path) when there is no such file and
    :class:`RecordError` when it is not valid JSON or not a JSON object. The
    record is not checked; :func:`replay` does that.
    """
    target = os.fspath(path)
    try:
        with open(target, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"game record file not found: {target}") from None
    except UnicodeDecodeError as err:
        raise RecordError(f"{target}: not a UTF-8 text file ({err}); expected a JSON game record") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(
            f"{target}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); expected a game record"
        ) from None
    if not isinstance(record, dict):
        raise RecordError(f"{target}: expected a JSON object (a game record), got {_show_type(record)}")
    return record
