"""Game records: the JSON format, writing a game as a record, and record files.

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

Rule sets of docs/rules.md section 10 add keys of their own to each hand
(docs/interface.md, "Records of section 10 rule sets"), only where their
option is on (:func:`hand_keys`):

- ``chips`` (option ``chips``): the hand's chip changes by seat, null until
  the hand ends; ``scores`` are then the chip totals.
- ``assignment`` (option ``dealer_assigns_quotas``): the quotas the dealer
  gave to [dealer, eldest, middle]; null until chosen, and so is ``quotas``.
- ``take`` (option ``one_card_kitty``): ``{"seat": s, "card": "7C"}``, the
  holder of 2D took the face-up card and put 7C out of play, or
  ``{"seat": s, "card": null}``, it declined; null until decided, and when the
  face-up card is 2D. ``deal.kitty`` holds the face-up card; ``discards``
  and ``shown`` are ``[]``.
- ``call`` and ``maxima`` (option ``calls``): the dealer's call, ``"C"``,
  ``"D"``, ``"H"``, ``"S"``, ``"NT"`` or ``"Miz"`` (null until made;
  ``trump`` is the suit, null for NT and Miz), and in a misère hand the
  maxima by seat (3, 5, 8 by role; null otherwise): then ``balances`` are
  maxima - tricks, ``quotas`` stay the quotas.
- ``auction`` and ``passed_out`` (option ``auction``; :data:`AUCTION_KEYS`),
  in the entries up to and including hand 1 only: ``auction`` lists
  ``{"seat": s, "bid": 8..16}`` or ``{"seat": s, "bid": null}`` (a pass) in
  bidding order; ``passed_out`` is true for a deal all three passed (then
  ``dealer``, ``quotas``, ``trump``, ``tricks_won``, ``balances`` and
  ``scores`` are null and ``exchanges``, ``discards``, ``shown`` and
  ``tricks`` are ``[]``). ``dealer`` and ``quotas`` are null while the
  auction runs. ``number`` counts every entry, passed-out deals included.

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

:func:`sm_env.records.replay.replay` re-plays a record with the engine and checks every field; it
raises :class:`ReplayError` naming the hand and step (``hand 3, trick 5, card
2``; ``hand 2, exchange 1, card 1``; ``hand 1, discard 3``; ``hand 4,
scores``; ``winner``; ...) of the first illegal action or inconsistent field.
When reading a record it ignores keys it does not know, accepts card text in
any form :func:`sm_env.core.cards.parse_card` reads (``10h``) but not card ids, and
accepts an empty current trick (``cards: []``) as the last trick of a hand.

:func:`save_record` writes a record file atomically; :func:`load_record`
reads one.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sm_env.core.cards import CARD_TEXT, SUIT_LETTERS, texts
from sm_env.core.game import CALL_NAMES, NO_SUIT, Game
from sm_env.core.logs import HandRecord
from sm_env.core.rules import RuleSet
from sm_env.files.json_files import JsonError, read_json, write_json

__all__ = [
    "AUCTION_KEYS",
    "EXTRA_KEYS",
    "FORMAT",
    "HAND_KEYS",
    "MAX_RECORD_BYTES",
    "RECORD_KEYS",
    "RecordError",
    "ReplayError",
    "game_record",
    "hand_keys",
    "hand_record",
    "load_record",
    "save_record",
]

FORMAT = "sergeant-major-record/1"

MAX_RECORD_BYTES = 16 * 2**20
"""The largest record file :func:`load_record` reads (16 MiB). A hand takes about 1.6 kB, so a 100-hand game
is about 160 kB and this holds some 10,000 hands; reading and re-playing a record takes about 30 times its
size in memory, so the cap also bounds :func:`sm_env.records.replay.replay`'s memory (about 500 MB)."""

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
"""The keys of every hand entry, in every rule set."""


SECTION_10_HAND_KEYS = {
    "assignment": "dealer_assigns_quotas",
    "chips": "chips",
    "take": "one_card_kitty",
    "call": "calls",
    "maxima": "calls",
}
"""Keys a hand entry has only when a section 10 option is on: key -> option."""


AUCTION_KEYS = ("auction", "passed_out")
"""With ``auction``: keys of the hand entries up to and including hand 1 (the auction's), and of no other."""


def hand_keys(rules: RuleSet) -> tuple[str, ...]:
    """The keys of a hand entry under these rules: :data:`HAND_KEYS` plus those of the section 10 options on."""
    return (*HAND_KEYS, *(key for key, option in SECTION_10_HAND_KEYS.items() if getattr(rules, option)))


class RecordError(ValueError):
    """A record file that cannot be read as a game record (bad JSON, not an object)."""


class ReplayError(RecordError):
    """A record that does not replay: malformed, an illegal action or an inconsistent field."""


# ---------------------------------------------------------------------- writing


def _ints(values: list[int] | None) -> list[int] | None:
    return None if values is None else [int(v) for v in values]


def hand_record(log: HandRecord, rules: RuleSet) -> dict[str, Any]:
    """One hand's entry of the record, from a :class:`~sm_env.core.logs.HandRecord` (``HandLog.frozen()``; replay
    parses an entry back into one); keys: :func:`hand_keys`."""
    tricks = None
    if log.tricks is not None:
        # The open trick is left out until its first card is played.
        tricks = [{"leader": t.leader, "cards": texts(t.cards), "winner": t.winner} for t in log.tricks if t.cards]
    entry = {
        "number": log.number,
        "dealer": log.dealer,
        "quotas": _ints(log.quotas),
        "deal": {"hands": [texts(h) for h in log.deal_hands], "kitty": texts(log.kitty)},
        "exchanges": [
            {
                "from": e.sender,
                "to": e.receiver,
                "sent": texts(e.sent),
                "returned": None if e.returned is None else texts(e.returned),
            }
            for e in log.exchanges
        ],
        "trump": None if log.trump == NO_SUIT else SUIT_LETTERS[log.trump],
        "discards": None if log.discards is None else texts(log.discards),
        "shown": None if log.shown is None else [{"to": to, "cards": texts(cards)} for to, cards in log.shown],
        "tricks": tricks,
        "tricks_won": _ints(log.tricks_won),
        "balances": _ints(log.balances),
        "scores": _ints(log.scores),
    }
    if rules.dealer_assigns_quotas:
        entry["assignment"] = _ints(log.assignment)
    if rules.chips:
        entry["chips"] = _ints(log.chips)
    if log.auction is not None:
        entry["auction"] = [{"seat": seat, "bid": bid} for seat, bid in log.auction]
        entry["passed_out"] = log.passed_out
    if rules.calls:
        entry["call"] = None if log.call < 0 else CALL_NAMES[log.call]
        entry["maxima"] = _ints(log.maxima)
    if rules.one_card_kitty:
        take = log.take
        entry["take"] = (
            None if take is None else {"seat": take[0], "card": None if take[1] is None else CARD_TEXT[take[1]]}
        )
    return entry


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
        "hands": [hand_record(log.frozen(), game.rules) for log in game.history],
        "winner": list(winner) if isinstance(winner, list) else winner,
        "truncated": bool(game.truncated),
        "max_hands": game.max_hands,
        "start_balances": _ints(game.start_balances),
    }


# ---------------------------------------------------------------------- showing values in messages


def show(value: Any) -> str:
    """A value as JSON for a message, cut at 200 characters (the type only if it is not JSON)."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):  # NaN, huge integers, deep nesting: name the type only
        return f"a {type(value).__name__}"
    return text if len(text) <= 200 else text[:197] + "..."


def show_type(value: Any) -> str:
    """What a JSON value is, in words, for a message: ``a string ("x")``."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    name = names.get(type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)
    return f"{name} ({show(value) if isinstance(value, (str, int, float, bool)) else '...'})"


def is_int(value: Any) -> bool:
    """An int that is not a bool (JSON integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


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
    write_json(path, _as_record(record_or_game), indent=None)


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file written by :func:`save_record` (or any JSON record).

    Raises FileNotFoundError (naming the path) when there is no such file and
    :class:`RecordError` when it is larger than :data:`MAX_RECORD_BYTES` (read no further), or is not
    JSON as the project's one bounded reader takes it (:func:`sm_env.files.json_files.read_json`: UTF-8,
    32 levels, whole numbers of 100 digits at most, finite numbers), or not a JSON object. The record is
    not checked; :func:`replay` does that.
    """
    target = os.fspath(path)
    if not os.path.lexists(target):
        raise FileNotFoundError(f"game record file not found: {target}")
    what = f"a game record file ({MAX_RECORD_BYTES >> 20} MiB; a 100-hand game is about 160 kB)"
    try:
        record = read_json(target, what, MAX_RECORD_BYTES)
    except JsonError as err:
        raise RecordError(str(err)) from None
    if not isinstance(record, dict):
        raise RecordError(f"{target}: expected a JSON object (a game record), got {show_type(record)}")
    return record
