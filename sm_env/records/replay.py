"""Reading and checking game records: :func:`replay` re-plays a record with
the engine and checks every field (the format is described in
:mod:`sm_env.records.format`).

It raises :class:`ReplayError` naming the hand and step (``hand 3, trick 5,
card 2``; ``hand 2, exchange 1, card 1``; ``hand 1, discard 3``; ``hand 4,
scores``; ``winner``; ...) of the first illegal action or inconsistent field.
Before anything else the record's shape is checked without recursion
(nesting at most ``MAX_DEPTH`` deep, no list of more than ``MAX_ITEMS`` items,
no integer of 2**128 or more), so hostile input gets a clear error, never a
RecursionError, in the time a record of its size takes to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sm_env.core.cards import SUIT_LETTERS, CardError, parse_card, texts
from sm_env.core.game import (
    ASSIGN,
    ASSIGN_ACTION_BASE,
    BID,
    BID_ACTION_BASE,
    CALL_NAMES,
    DISCARD,
    EXCHANGE,
    MAX_ACTIONS,
    OVER,
    PASS_ACTION,
    PLAY,
    SEED_LIMIT,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    DealError,
    Game,
    HandLog,
    IllegalActionError,
    assignment_of,
    check_seed,
    check_start_balances,
    hand_order,
    normalize_deal,
    result_text,
)
from sm_env.core.logs import NO_SUIT, Exchange, HandRecord, Trick
from sm_env.core.rules import OPTION_NAMES, PRESETS, RulesError, RuleSet

from .format import (
    AUCTION_KEYS,
    EXTRA_KEYS,
    FORMAT,
    RECORD_KEYS,
    SECTION_10_HAND_KEYS,
    ReplayError,
    game_record,
    hand_keys,
    hand_record,
    is_int,
    show,
    show_type,
)

__all__ = ["MAX_DEPTH", "replay"]


def _fail(where: str, message: str) -> ReplayError:
    return ReplayError(f"{where}: {message}")


# ---------------------------------------------------------------------- reading


MAX_DEPTH = 32
"""Deepest nesting of lists and objects a record may have (a real one is 6 deep)."""


MAX_ITEMS = 2**16
"""The most items of a list in a record: the longest, ``hands``, has fewer than 60,000 entries in a record of
``MAX_RECORD_BYTES`` (a hand's deal alone takes 260 bytes); every other list holds at most 52."""


def _check_shape(record: Any) -> None:
    """Reject, without recursion, nesting deeper than MAX_DEPTH, a list longer than MAX_ITEMS and integers beyond
    the seed range. The record is walked a level at a time and no text is made on the way (a walk costs the
    time of reading the record, never more); where the fault lies is found only for the error message."""
    levels: list[list[Any]] = []  # the lists and objects at each depth, the record alone at depth 0
    level = [record] if isinstance(record, (dict, list)) else []
    while level:
        if len(levels) == MAX_DEPTH:
            raise _fail(
                _path_to(levels, level[0])[:60] + "...",
                f"nested more than {MAX_DEPTH} levels deep; a game record is about 6 levels deep",
            )
        levels.append(level)
        deeper = []
        for value in level:
            items = value.values() if isinstance(value, dict) else value
            if isinstance(value, list) and len(value) > MAX_ITEMS:
                many = f"a list of {len(value):,} items; no list of a record holds more than {MAX_ITEMS:,}"
                raise _fail(_path_to(levels, value), many)
            for item in items:
                if isinstance(item, (dict, list)):
                    deeper.append(item)
                elif is_int(item) and not -SEED_LIMIT < item < SEED_LIMIT:
                    where = _path_to(levels, value, item)
                    raise _fail(where, f"an integer of {item.bit_length()} bits; no field of a record reaches 2**128")
        level = deeper


_CONTAINER = object()


def _path_to(levels: list[list[Any]], value: Any, item: Any = _CONTAINER) -> str:
    """Where ``value`` lies in the record (``record, hands[3], tricks[1], cards``): a list or object of the deepest
    of the walked ``levels`` or of the next one down, or with ``item`` the place of ``item`` in ``value``. Found
    by identity, a level at a time upwards (for an error message only)."""
    steps: list[tuple[Any, Any]] = []  # (list or object, key or index in it), from the deepest up
    if item is not _CONTAINER:
        steps.append((value, next(k for k, v in _pairs(value) if v is item)))
    depth = len(levels) - 1
    if any(v is value for v in levels[depth]):
        depth -= 1  # value is of the deepest level, not of the next one down
    for above in reversed(levels[: depth + 1]):
        parent, key = next((p, k) for p in above for k, v in _pairs(p) if v is value)
        steps.append((parent, key))
        value = parent
    where = "record"
    for parent, key in reversed(steps):
        if isinstance(parent, list):
            where += f"[{key}]"
        elif isinstance(key, str):
            where += f", {key}"
    return where


def _pairs(value: Any) -> Any:
    """(key, item) of an object, (index, item) of a list."""
    return value.items() if isinstance(value, dict) else enumerate(value)


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(where, f"missing key {key!r}")
    return obj[key]


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"expected a JSON object, got {show_type(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {show_type(value)}")
    return value


def _seat(value: Any, where: str, n: int = 3) -> int:
    """A seat 0 .. n-1 (n players)."""
    if not is_int(value) or not 0 <= value < n:
        seats = "0, 1 or 2" if n == 3 else "0, 1, 2 or 3"
        raise _fail(where, f"expected a seat {seats}, got {show_type(value)}")
    return value


def _ints3(value: Any, where: str, n: int = 3) -> list[int] | None:
    """Null or a list of n integers (by absolute seat; n = 4 with four players)."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != n or not all(is_int(v) for v in value):
        raise _fail(where, f"expected null or a list of {n} integers (by absolute seat), got {show(value)}")
    return list(value)


def _tuple3(hand: dict[str, Any], key: str, where: str, n: int = 3) -> tuple[int, ...] | None:
    """An optional field of n integers of a hand entry (absent: None), as a tuple."""
    values = _ints3(hand.get(key), f"{where}, {key}", n)
    return None if values is None else tuple(values)


def _card(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise _fail(where, f"a card is written as text such as 'TH', got {show_type(value)}")
    try:
        return parse_card(value)
    except CardError as err:
        raise _fail(where, str(err)) from None


def _cards(value: Any, where: str) -> list[int]:
    return [_card(c, f"{where}, card {i}") for i, c in enumerate(_list(value, where), 1)]


def _cards_or_null(value: Any, where: str) -> list[int] | None:
    return None if value is None else _cards(value, where)


@dataclass
class _Record:
    """A parsed record: its hands as the engine's own :class:`HandRecord` type (an exchange's ``count`` is the
    number of cards the record sends), each beside its raw JSON entry (for the field-by-field comparison)."""

    rules: RuleSet
    seed: Any
    first_dealer: int
    max_hands: int | None
    start_balances: list[int] | None
    hands: list[HandRecord]
    raw_hands: list[dict[str, Any]]
    winner: int | list[int] | None
    truncated: bool


def _parse_rules(value: Any) -> RuleSet:
    options = _dict(value, "rules")
    missing = [key for key in ("name", *OPTION_NAMES) if key not in options]
    if missing:
        raise _fail(
            "rules",
            f"missing {missing}; a record's rules list 'name' and every option of docs/rules.md sections 9 and 10",
        )
    try:
        rules = RuleSet.from_any(dict(options))
    except (RulesError, TypeError) as err:
        raise _fail("rules", str(err)) from None
    made = rules.options()
    if made["name"] != options["name"]:
        raise _fail(
            "rules",
            f"the name {show(options['name'])} does not match the options, which make a {show(made['name'])} rule "
            f"set (a preset's name only with exactly its options; 'standard' when no option is on)",
        )
    for key in OPTION_NAMES:
        if made[key] != options[key]:
            raise _fail(
                "rules",
                f"option {key!r} is {show(options[key])} in the record, but these options make it {show(made[key])}",
            )
    preset = PRESETS.get(rules.name.lower()) if isinstance(rules.name, str) else None
    if preset is not None:
        wanted = preset.options()
        changed = [key for key in OPTION_NAMES if wanted[key] != made[key]]
        if changed:
            diffs = ", ".join(f"{key} {show(made[key])} (preset: {show(wanted[key])})" for key in changed)
            raise _fail(
                "rules",
                f"the name {show(rules.name)} is a preset's, but the options differ from it: {diffs}; "
                f"a rule set that is not a preset is named 'custom'",
            )
    return rules


def _parse_exchange(value: Any, where: str, n: int) -> Exchange:
    entry = _dict(value, where)
    sender = _seat(_get(entry, "from", where), f"{where}, from", n)
    receiver = _seat(_get(entry, "to", where), f"{where}, to", n)
    if sender == receiver:
        raise _fail(where, f"seat {sender} exchanges with itself")
    sent = _cards(_get(entry, "sent", where), f"{where}, sent")
    if not sent:
        raise _fail(f"{where}, sent", "no card; an exchange is listed once its first card is chosen")
    returned = _cards_or_null(_get(entry, "returned", where), f"{where}, returned")
    return Exchange(sender, receiver, len(sent), tuple(sent), None if returned is None else tuple(returned))


def _parse_trick(value: Any, where: str, last: bool, n: int) -> Trick:
    entry = _dict(value, where)
    leader = _seat(_get(entry, "leader", where), f"{where}, leader", n)
    cards = _cards(_get(entry, "cards", where), where)
    winner = _get(entry, "winner", where)
    if winner is not None:
        winner = _seat(winner, f"{where}, winner", n)
    if len(cards) > n:
        raise _fail(where, f"{len(cards)} cards; a trick has {n}")
    if len(cards) < n and not last:
        raise _fail(where, f"only {len(cards)} card(s), but more tricks follow; only the current trick is incomplete")
    return Trick(leader, tuple(cards), winner)


def _parse_auction(hand: dict[str, Any], where: str) -> tuple[tuple[tuple[int, int | None], ...], bool]:
    bids = []
    for i, entry in enumerate(_list(hand["auction"], f"{where}, auction"), 1):
        entry_where = f"{where}, auction, bid {i}"
        entry = _dict(entry, entry_where)
        extra = sorted(set(entry) - {"seat", "bid"})
        if extra:
            raise _fail(entry_where, f"unknown key(s) {extra}; a bid has 'seat' and 'bid' (null for a pass)")
        seat = _seat(_get(entry, "seat", entry_where), f"{entry_where}, seat")
        bid = _get(entry, "bid", entry_where)
        if bid is not None and (not is_int(bid) or not 8 <= bid <= 16):
            raise _fail(f"{entry_where}, bid", f"expected null (a pass) or a bid 8-16, got {show(bid)}")
        bids.append((seat, bid))
    passed_out = hand["passed_out"]
    if not isinstance(passed_out, bool):
        raise _fail(f"{where}, passed_out", f"expected true or false, got {show_type(passed_out)}")
    return tuple(bids), passed_out


def _parse_hand(value: Any, index: int, rules: RuleSet, auction_entry: bool = False) -> HandRecord:
    """One hand entry; ``auction_entry``: an entry up to and including hand 1 of an auction game.

    The field groups are checked in this order (the first error found is the one reported): keys, header
    (number, dealer, quotas), deal, exchanges, trump and discards, shown, tricks, results, section 10 fields."""
    where = f"hand {index + 1}"
    hand = _dict(value, where)
    _check_hand_keys(hand, where, rules, auction_entry)
    header = _parse_header(hand, index, rules, auction_entry)  # number, dealer, quotas, assignment
    n = rules.num_players
    deal_hands, kitty = _parse_deal(hand["deal"], f"{where}, deal", rules)
    exchanges = tuple(
        _parse_exchange(e, f"{where}, exchange {i}", n)
        for i, e in enumerate(_list(hand["exchanges"], f"{where}, exchanges"), 1)
    )
    trump = _parse_trump(hand["trump"], f"{where}, trump")
    discards = None if hand["discards"] is None else tuple(_cards(hand["discards"], f"{where}, discards"))
    shown = _parse_shown(hand["shown"], where, n)
    tricks = _parse_tricks(hand["tricks"], where, n)
    results = ("tricks_won", "balances", "scores", "chips")  # (assignment: in the header)
    tricks_won, balances, scores, chips = (_tuple3(hand, key, where, n) for key in results)
    take = _parse_take(hand["take"], f"{where}, take") if rules.one_card_kitty else None
    call, maxima = _parse_call(hand, where) if rules.calls else (-1, None)
    auction, passed_out = _parse_auction(hand, where) if auction_entry else (None, False)
    deal = (tuple(tuple(h) for h in deal_hands), tuple(kitty))
    section_10 = (take, auction, passed_out, call, maxima)
    return HandRecord(
        *header, *deal, exchanges, trump, discards, shown, *section_10, tricks, tricks_won, balances, chips, scores
    )


def _check_hand_keys(hand: dict[str, Any], where: str, rules: RuleSet, auction_entry: bool) -> None:
    """Every key of a hand entry present; the auction keys only in an auction entry, the section 10 keys only
    with their option."""
    for key in hand_keys(rules) + (AUCTION_KEYS if auction_entry else ()):
        _get(hand, key, where)
    if not auction_entry:
        for key in AUCTION_KEYS:
            if key in hand:
                raise _fail(
                    f"{where}, {key}",
                    f"a record has {key!r} only in the entries up to and including hand 1, with the auction option",
                )
    for key, option in SECTION_10_HAND_KEYS.items():
        if key in hand and not getattr(rules, option):
            raise _fail(f"{where}, {key}", f"a record has {key!r} only when the rules' {option} option is on")


def _parse_header(
    hand: dict[str, Any], index: int, rules: RuleSet, auction_entry: bool
) -> tuple[int, int | None, tuple[int, ...] | None, tuple[int, ...] | None]:
    """The number, dealer, quotas and (``dealer_assigns_quotas``) assignment of a hand entry."""
    where = f"hand {index + 1}"
    number = hand["number"]
    if number != index + 1 or not is_int(number):
        raise _fail(
            f"{where}, number", f"expected {index + 1} (hands are numbered 1, 2, ... in order), got {show(number)}"
        )
    n = rules.num_players
    dealer = None if auction_entry and hand["dealer"] is None else _seat(hand["dealer"], f"{where}, dealer", n)
    quotas = _tuple3(hand, "quotas", where, n)
    assignment = None
    if rules.dealer_assigns_quotas:
        assignment = _tuple3(hand, "assignment", where)
        if (quotas is None) != (assignment is None):
            raise _fail(f"{where}, quotas", "null exactly while the assignment is null (the dealer has not chosen)")
    elif quotas is None and not auction_entry:
        raise _fail(f"{where}, quotas", "null; the quotas of a hand are known from its start")
    elif (quotas is None) != (dealer is None):
        raise _fail(f"{where}, quotas", "null exactly while the dealer is null (before the auction is won)")
    return number, dealer, quotas, assignment


def _parse_deal(value: Any, where: str, rules: RuleSet) -> tuple[list[list[int]], list[int]]:
    """A hand entry's deal (``where`` is ``hand k, deal``): the hands by seat and the kitty, checked by the
    engine's own :func:`normalize_deal`."""
    deal = _dict(value, where)
    deal_ids = {
        "hands": [
            _cards(h, f"{where}, seat {seat}")
            for seat, h in enumerate(_list(_get(deal, "hands", where), f"{where}, hands"))
        ],
        "kitty": _cards(_get(deal, "kitty", where), f"{where}, kitty"),
    }
    extra = sorted(set(deal) - {"hands", "kitty"})
    if extra:
        raise _fail(where, f"unknown key(s) {extra}; a deal has 'hands' and 'kitty'")
    try:
        return normalize_deal(deal_ids, rules, where)
    except DealError as err:
        raise ReplayError(str(err)) from None


def _parse_trump(value: Any, where: str) -> int:
    """A suit letter (any case, spaces around allowed) as a suit index; null is NO_SUIT."""
    if value is None:
        return NO_SUIT
    if not isinstance(value, str) or value.strip().upper() not in tuple(SUIT_LETTERS):
        raise _fail(where, f"expected null or a suit letter C, D, H or S, got {show_type(value)}")
    return SUIT_LETTERS.index(value.strip().upper())


def _parse_shown(value: Any, where: str, n: int) -> tuple[tuple[int, tuple[int, ...]], ...] | None:
    """The kitty cards shown (show rule): (seat shown to, cards) entries, or None."""
    if value is None:
        return None
    shown = []
    for i, entry in enumerate(_list(value, f"{where}, shown"), 1):
        entry_where = f"{where}, shown {i}"
        entry = _dict(entry, entry_where)
        to = _seat(_get(entry, "to", entry_where), f"{entry_where}, to", n)
        shown.append((to, tuple(_cards(_get(entry, "cards", entry_where), f"{entry_where}, cards"))))
    return tuple(shown)


def _parse_tricks(value: Any, where: str, n: int) -> tuple[Trick, ...] | None:
    """The tricks of a hand entry, or None; only the last may be incomplete."""
    if value is None:
        return None
    items = _list(value, f"{where}, tricks")
    return tuple(_parse_trick(t, f"{where}, trick {i}", i == len(items), n) for i, t in enumerate(items, 1))


def _parse_call(hand: dict[str, Any], where: str) -> tuple[int, tuple[int, ...] | None]:
    """The call (-1 when null) and the maxima of a hand entry with the calls option."""
    maxima = _tuple3(hand, "maxima", where)
    value = hand["call"]
    if value is None:
        return -1, maxima
    if not isinstance(value, str) or value.strip().upper() not in [n.upper() for n in CALL_NAMES]:
        raise _fail(f"{where}, call", f"expected null or one of {list(CALL_NAMES)}, got {show_type(value)}")
    return [n.upper() for n in CALL_NAMES].index(value.strip().upper()), maxima


def _parse_take(value: Any, where: str) -> tuple[int, int | None] | None:
    if value is None:
        return None
    entry = _dict(value, where)
    extra = sorted(set(entry) - {"seat", "card"})
    if extra:
        raise _fail(where, f"unknown key(s) {extra}; a take has 'seat' and 'card' (null when declined)")
    seat = _seat(_get(entry, "seat", where), f"{where}, seat")
    card = _get(entry, "card", where)
    return seat, None if card is None else _card(card, f"{where}, card")


def _parse_record(record: Any) -> _Record:
    if not isinstance(record, dict):
        raise _fail("record", f"expected a JSON object, got {show_type(record)}")
    for key in RECORD_KEYS:
        _get(record, key, "record")
    if record["format"] != FORMAT:
        raise _fail(
            "format",
            f"expected {FORMAT!r}, got {show(record['format'])}; this replay reads version 1 records only",
        )
    rules = _parse_rules(record["rules"])
    seed = record["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, float, str))):
        raise _fail("seed", f"expected null, a number or a string, got {show_type(seed)}")
    try:
        check_seed(seed)
    except ValueError as err:
        raise _fail("seed", str(err)) from None
    n = rules.num_players
    first_dealer = _seat(record["first_dealer"], "first_dealer", n)
    truncated = record["truncated"]
    if not isinstance(truncated, bool):
        raise _fail("truncated", f"expected true or false, got {show_type(truncated)}")
    winner = record["winner"]
    if winner is not None and not is_int(winner):
        if not isinstance(winner, list) or not winner:
            raise _fail("winner", f"expected null, a seat or a sorted list of seats, got {show(winner)}")
        winner = [_seat(w, "winner", n) for w in winner]
    elif winner is not None:
        winner = _seat(winner, "winner", n)
    hands_in = _list(record["hands"], "hands")
    if not hands_in:
        raise _fail("hands", "empty; a record holds hand 1 (with its deal) from the start")
    hands = []
    auction_open = rules.auction  # entries up to and including hand 1 carry the auction
    for i, h in enumerate(hands_in):
        hands.append(_parse_hand(h, i, rules, auction_open))
        if auction_open and not hands[-1].passed_out:
            auction_open = False
    if "max_hands" in record:
        max_hands = record["max_hands"]
        if max_hands is not None and (not is_int(max_hands) or max_hands < 1):
            raise _fail("max_hands", f"expected null or a whole number >= 1, got {show(max_hands)}")
    else:
        max_hands = len(hands) if truncated else None
    try:
        start_balances = check_start_balances(_ints3(record.get("start_balances"), "start_balances", n), rules)
    except ValueError as err:
        if isinstance(err, ReplayError):
            raise
        raise _fail("start_balances", str(err)) from None
    return _Record(rules, seed, first_dealer, max_hands, start_balances, hands, hands_in, winner, truncated)


# ---------------------------------------------------------------------- comparing


def _canon_cards(cards: list[str], ordered: bool) -> list[str]:
    ids = [parse_card(c) for c in cards]
    return texts(ids if ordered else sorted(ids))


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
    if key == "call":
        return value.strip().upper()
    if key == "take":
        return {
            "seat": value["seat"],
            "card": None if value["card"] is None else _canon_cards([value["card"]], True)[0],
        }
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


def _check_fields(where: str, raw: dict[str, Any], log: HandLog, rules: RuleSet, keys: tuple[str, ...]) -> None:
    """The record's entry ``raw`` against the engine's log, field by field (``keys``)."""
    replayed = hand_record(log.frozen(), rules)
    for key in keys:
        ours = _canon_field(key, raw[key])
        theirs = _canon_field(key, replayed[key])
        found = _difference(ours, theirs, f"{where}, {key}", key)
        if found:
            path, a, b = found
            raise _fail(path, f"the record has {show(a)}, but the replay gives {show(b)}")


def _canon_hand(hand: dict[str, Any], rules: RuleSet) -> dict[str, Any]:
    return {key: _canon_field(key, hand[key]) for key in hand_keys(rules)}


def _record_difference(
    record: dict[str, Any], out: dict[str, Any], keys: list[str], rules: RuleSet
) -> tuple[str, Any, Any] | None:
    """The first place where two records differ in ``keys`` (hands in canonical form), or None; one hand at a
    time, so that no canonical copy of a whole record is held."""
    for key in keys:
        a, b = record[key], out[key]
        if key != "hands":
            found = _difference(a, b, key, key)
        elif len(a) != len(b):
            found = _difference([_canon_hand(h, rules) for h in a], [_canon_hand(h, rules) for h in b], key, key)
        else:
            found = None
            for i, (x, y) in enumerate(zip(a, b, strict=True), 1):
                found = _difference(_canon_hand(x, rules), _canon_hand(y, rules), f"hand {i}")
                if found:
                    break
        if found:
            return found
    return None


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
    if phase == ASSIGN:
        return f"the dealer (seat {game.dealer}) has to assign the quotas"
    if phase == TAKE:
        return f"seat {game.current}, holding 2D, has to take the face-up card or decline it"
    if phase == BID:
        return f"seat {game.current} has to bid or pass in the auction"
    if phase == DISCARD:
        done = len(game.log.discards or [])
        return f"the dealer (seat {game.dealer}) has discarded {done} of {game.rules.kitty_size} cards"
    return f"trick {game.tricks_played + 1} is being played, seat {game.current} to play"


def _end_text(game: Game) -> str:
    return result_text(game.winner, game.truncated, game.hand_number, "seat {}".format)


_WANTED = {
    EXCHANGE: "an exchange card",
    TRUMP: "naming trump",
    DISCARD: "a discard",
    PLAY: "a card to a trick",
    ASSIGN: "the quota assignment",
    TAKE: "taking the face-up card",
    BID: "a bid",
}


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


def _replay_exchanges(game: Game, hand: HandRecord, raw: dict[str, Any], log: HandLog, where: str, check: bool) -> None:
    """The sends of the record's exchanges; ``check``: then compare the exchanges (their cards are back)."""
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
    if check:
        _check_fields(where, raw, log, game.rules, ("exchanges",))


def _replay_assignment(game: Game, hand: HandRecord, raw: dict[str, Any], log: HandLog, where: str) -> None:
    step = f"{where}, assignment"
    _expect(game, hand.number, ASSIGN, step)
    wanted = list(hand.assignment or ())
    actions = [a for a in range(ASSIGN_ACTION_BASE, MAX_ACTIONS) if assignment_of(a, game.rules) == wanted]
    if not actions:
        raise _fail(
            step,
            f"the record has {wanted}, but the dealer gives the quotas {list(game.rules.quotas)} "
            f"to [dealer, eldest, middle] in some order",
        )
    _apply(game, actions[0], step)
    _check_fields(where, raw, log, game.rules, ("assignment", "quotas"))


_PRE_PLAY = ("exchanges", "trump", "discards", "shown")


def _replay_take(game: Game, hand: HandRecord, where: str) -> None:
    step = f"{where}, take"
    seat, card = hand.take  # type: ignore[misc]
    _expect(game, hand.number, TAKE, step)
    if seat != game.current:
        raise _fail(
            f"{step}, seat",
            f"the record has seat {seat}, but seat {game.current} holds 2D after the exchange and decides",
        )
    _apply(game, PASS_ACTION if card is None else card, f"{step}, card")


def _replay_auction(game: Game, hand: HandRecord, raw: dict[str, Any], log: HandLog, where: str) -> None:
    for k, (seat, bid) in enumerate(hand.auction or (), 1):
        step = f"{where}, auction, bid {k}"
        _expect(game, hand.number, BID, step)
        if seat != game.current:
            raise _fail(
                f"{step}, seat",
                f"the record has seat {seat}, but seat {game.current} bids now (clockwise from the first bidder, "
                f"skipping players who passed)",
            )
        _apply(game, PASS_ACTION if bid is None else BID_ACTION_BASE + bid - 8, step)
    _check_fields(where, raw, log, game.rules, AUCTION_KEYS)


def _replay_hand(game: Game, index: int, hand: HandRecord, raw: dict[str, Any], last: bool) -> None:
    number = index + 1
    where = f"hand {number}"
    if len(game.history) < number:
        raise _fail(where, f"the game was over after hand {number - 1} ({_end_text(game)}), but the record goes on")
    log = game.history[index]
    if hand.auction is not None:
        _replay_auction(game, hand, raw, log, where)
        if hand.passed_out:  # no hand was played: every field is as the engine wrote it
            _check_fields(where, raw, log, game.rules, hand_keys(game.rules))
            return
    if hand.dealer != log.dealer:
        why = "as first_dealer says" if number == 1 else "the deal passes to the left: the previous eldest deals"
        raise _fail(f"{where}, dealer", f"the record has seat {hand.dealer}, but seat {log.dealer} deals ({why})")
    quotas = None if hand.quotas is None else list(hand.quotas)
    if quotas != log.quotas and not game.rules.dealer_assigns_quotas:
        raise _fail(
            f"{where}, quotas",
            f"the record has {quotas}, but with seat {log.dealer} dealing and quotas "
            f"{list(game.rules.quotas)} (dealer, eldest, middle) they are {log.quotas}",
        )
    for stage in hand_order(game.rules):  # the record's actions in the order of the rules' phases
        if stage == "assign" and hand.assignment is not None:
            _replay_assignment(game, hand, raw, log, where)
        elif stage in ("exchange", "send"):
            _replay_exchanges(game, hand, raw, log, where, check=stage == "exchange")
        elif stage == "trump" and game.rules.calls and hand.call >= 0:
            step = f"{where}, call"
            _expect(game, number, TRUMP, step)
            _apply(game, TRUMP_ACTION_BASE + hand.call, step)
            _check_fields(where, raw, log, game.rules, ("call", "maxima", "trump"))
        elif stage == "trump" and hand.trump != NO_SUIT and not game.rules.calls:
            step = f"{where}, trump"
            _expect(game, number, TRUMP, step)
            _apply(game, TRUMP_ACTION_BASE + hand.trump, step)
        elif stage == "discard":
            for k, card in enumerate(hand.discards or [], 1):
                step = f"{where}, discard {k}"
                _expect(game, number, DISCARD, step)
                _apply(game, card, step)
        elif stage == "take" and hand.take is not None:
            _replay_take(game, hand, where)
    checked = ("exchanges", "trump", "discards", "shown", "take") if game.rules.one_card_kitty else _PRE_PLAY
    _check_fields(where, raw, log, game.rules, checked)
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
                trump = SUIT_LETTERS[log.trump] if log.trump != NO_SUIT else "none"
                why = f"seat {replayed} wins it (trump {trump})"
            raise _fail(f"{step}, winner", f"the record has {show(trick.winner)}, but {why}")
    scored = (
        ("tricks", "tricks_won", "balances", "chips", "scores")
        if game.rules.chips
        else ("tricks", "tricks_won", "balances", "scores")
    )
    _check_fields(where, raw, log, game.rules, scored)
    if not last and log.scores is None:
        raise _fail(where, f"the hand is not finished ({_state(game)}), but hand {number + 1} follows")


def _check_end(game: Game, record: _Record) -> None:
    count = len(record.hands)
    if game.phase == OVER:
        if record.winner != game.winner:
            raise _fail(
                "winner",
                f"the record has {show(record.winner)}, but the replay gives {show(game.winner)} "
                f"({_end_text(game)}; last hand tricks_won {game.log.tricks_won}, scores {game.log.scores})",
            )
        if record.truncated != game.truncated:
            raise _fail(
                "truncated",
                f"the record has {show(record.truncated)}, but the replay gives {show(game.truncated)}",
            )
        return
    if record.winner is not None or record.truncated:
        field = "winner" if record.winner is not None else "truncated"
        value = record.winner if record.winner is not None else True
        if game.hand_number > count:
            why = f"after hand {count} no end condition of these rules is met and max_hands is {game.max_hands}"
        else:
            why = f"hand {count} is still being played"
        raise _fail(field, f"the record has {show(value)}, but the game is not over: {why}")
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
    _check_shape(record)
    parsed = _parse_record(record)
    deals = [{"hands": [list(cards) for cards in h.deal_hands], "kitty": list(h.kitty)} for h in parsed.hands]
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
    for index, (hand, raw) in enumerate(zip(parsed.hands, parsed.raw_hands, strict=True)):
        _replay_hand(game, index, hand, raw, index == len(parsed.hands) - 1)
    _check_end(game, parsed)
    out = game_record(game)
    keys = [key for key in (*RECORD_KEYS, *EXTRA_KEYS) if key in record]
    found = _record_difference(record, out, keys, parsed.rules)
    if found:  # a safety net: the checks above should have caught it
        path, a, b = found
        raise _fail(path or "record", f"the record has {show(a)}, but the replay gives {show(b)}")
    for key in EXTRA_KEYS:  # a record without our extra fields comes back without them (equal to the input)
        if key not in record:
            del out[key]
    return out
