"""Game records: format, replay, corruption detection, files (sm_env.records)."""

from __future__ import annotations

import copy
import json
import os
import random
from typing import Any

import pytest

from sm_env.core.cards import CARD_TEXT, parse_card, suit_of
from sm_env.core.game import DISCARD, EXCHANGE, PLAY, Game
from sm_env.core.rules import PRESETS, STANDARD, RuleSet
from sm_env.records import (
    FORMAT,
    HAND_KEYS,
    RecordError,
    ReplayError,
    game_record,
    load_record,
    replay,
    save_record,
)

CUSTOM_RULES = [
    RuleSet(pickup_before_discard=True, trump_after_kitty=True),
    RuleSet(max_exchange=2, quotas=(9, 2, 5)),
    RuleSet(target_score=5, target_symmetric=True),
    RuleSet(fixed_hands=2),
    RuleSet(win_tricks=10, win_margin=3),
]


def play(game: Game, rng: random.Random, steps: int | None = None) -> None:
    """Random legal play: until the game is over, or for `steps` actions."""
    done = 0
    while not game.is_over and (steps is None or done < steps):
        game.apply(rng.choice(game.legal_actions()))
        done += 1


def finished_game(seed: int, rules: Any = "standard", max_hands: int | None = None) -> Game:
    game = Game(rules=rules, seed=seed, max_hands=max_hands)
    play(game, random.Random(seed))
    return game


def error_of(record: dict[str, Any]) -> str:
    with pytest.raises(ReplayError) as info:
        replay(record)
    return str(info.value)


def as_json(record: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(record))


# A finished standard game with several hands and exchanges, shared by the corruption tests.
@pytest.fixture(scope="module")
def long_record() -> dict[str, Any]:
    for seed in range(100):
        record = game_record(finished_game(seed))
        hands = record["hands"]
        if len(hands) >= 4 and hands[1]["exchanges"] and any(h["shown"] for h in hands):
            return as_json(record)
    raise AssertionError("no suitable game found")


# ---------------------------------------------------------------------- the format


def test_record_right_after_reset_holds_hand_one_with_its_deal() -> None:
    game = Game(seed=7)
    record = game_record(game)
    assert record["format"] == FORMAT == "sergeant-major-record/1"
    assert record["rules"] == STANDARD.options()
    assert record["seed"] == 7
    assert record["first_dealer"] == game.first_dealer
    assert record["winner"] is None and record["truncated"] is False
    assert record["max_hands"] is None and record["start_balances"] is None
    [hand] = record["hands"]
    dealer = game.first_dealer
    assert hand["number"] == 1 and hand["dealer"] == dealer
    assert [hand["quotas"][(dealer + role) % 3] for role in range(3)] == [8, 5, 3]
    deal = hand["deal"]
    assert [len(h) for h in deal["hands"]] == [16, 16, 16] and len(deal["kitty"]) == 4
    cards = [c for h in deal["hands"] for c in h] + deal["kitty"]
    assert all(isinstance(c, str) and len(c) == 2 for c in cards)
    assert sorted(parse_card(c) for c in cards) == list(range(52))
    assert hand["exchanges"] == []
    for key in ("trump", "discards", "shown", "tricks", "tricks_won", "balances", "scores"):
        assert hand[key] is None, key
    assert replay(as_json(record)) == record


def test_record_is_a_copy_not_a_view_of_the_game() -> None:
    game = Game(seed=1)
    record = game_record(game)
    record["hands"][0]["deal"]["hands"][0].clear()
    record["hands"][0]["quotas"][0] = 99
    assert len(game_record(game)["hands"][0]["deal"]["hands"][0]) == 16
    assert game_record(game)["hands"][0]["quotas"][0] != 99


def fixed_deal() -> dict[str, list[list[int]] | list[int]]:
    deck = list(range(52))
    random.Random(11).shuffle(deck)
    return {"hands": [sorted(deck[0:16]), sorted(deck[16:32]), sorted(deck[32:48])], "kitty": sorted(deck[48:])}


def test_exchange_in_progress_has_returned_null_until_the_cards_move() -> None:
    deal = fixed_deal()
    # seat 0 deals (quota 8) and is up 2; seats 1 (quota 5) and 2 (quota 3) are down 1 each:
    # one simultaneous round, seat 2 (lower quota) served first.
    game = Game(first_dealer=0, deals=[deal], start_balances=[2, -1, -1])
    assert game.phase == EXCHANGE and game.current_player == 0
    first, second = deal["hands"][0][0], deal["hands"][0][-1]
    game.apply(first)
    record = game_record(game)
    hand = record["hands"][0]
    assert hand["exchanges"] == [{"from": 0, "to": 2, "sent": [CARD_TEXT[first]], "returned": None}]
    assert hand["trump"] is None and hand["discards"] is None and hand["tricks"] is None
    assert record["start_balances"] == [2, -1, -1]
    assert replay(as_json(record)) == record

    game.apply(second)
    hand = game_record(game)["hands"][0]
    assert [(e["from"], e["to"], e["sent"]) for e in hand["exchanges"]] == [
        (0, 2, [CARD_TEXT[first]]),
        (0, 1, [CARD_TEXT[second]]),
    ]
    # each receiver returns its top card of the sent card's suit (the sent card included)
    for entry, sent, receiver in ((hand["exchanges"][0], first, 2), (hand["exchanges"][1], second, 1)):
        suit_cards = [c for c in deal["hands"][receiver] + [sent] if suit_of(c) == suit_of(sent)]
        assert entry["returned"] == [CARD_TEXT[max(suit_cards)]]
    assert replay(as_json(game_record(game))) == game_record(game)


def test_open_trick_has_winner_null_and_an_empty_trick_is_left_out() -> None:
    game = Game(seed=5)
    rng = random.Random(5)
    while game.phase != DISCARD:
        play(game, rng, 1)
    assert game_record(game)["hands"][0]["discards"] == []
    while game.phase != PLAY:
        play(game, rng, 1)
    hand = game_record(game)["hands"][0]
    assert hand["tricks"] == [] and len(hand["discards"]) == 4 and hand["shown"] == []
    play(game, rng, 1)
    record = game_record(game)
    [trick] = record["hands"][0]["tricks"]
    assert trick["winner"] is None and len(trick["cards"]) == 1 and trick["leader"] == (game.dealer + 1) % 3
    assert record["hands"][0]["tricks_won"] is None
    assert replay(as_json(record)) == record
    play(game, rng, 2)  # the first trick closes; the next one has no card yet
    record = game_record(game)
    [trick] = record["hands"][0]["tricks"]
    assert trick["winner"] in (0, 1, 2) and len(trick["cards"]) == 3
    assert replay(as_json(record)) == record
    # an input that writes the empty current trick out is accepted too
    with_empty = as_json(record)
    with_empty["hands"][0]["tricks"].append({"leader": trick["winner"], "cards": [], "winner": None})
    assert replay(with_empty) == record
    with_empty["hands"][0]["tricks"][-1]["leader"] = (trick["winner"] + 1) % 3
    assert error_of(with_empty).startswith("hand 1, trick 2, leader:")


def test_next_hand_is_present_as_soon_as_a_hand_ends() -> None:
    game = Game(seed=2, first_dealer=1)
    rng = random.Random(2)
    while len(game.history) == 1:
        play(game, rng, 1)
    record = game_record(game)
    first, second = record["hands"]
    assert all(first[k] is not None for k in first)
    assert sum(first["balances"]) == 0 and first["scores"] == first["balances"]
    assert second["number"] == 2 and second["dealer"] == 2 and second["trump"] is None
    assert second["deal"]["hands"] and second["tricks"] is None
    assert replay(as_json(record)) == record


# ---------------------------------------------------------------------- replay of random games


def _check_round_trip(game: Game) -> dict[str, Any]:
    record = game_record(game)
    text = json.dumps(record)
    assert replay(json.loads(text)) == record
    return record


@pytest.mark.parametrize("seed", range(4))
def test_random_standard_games_replay_to_themselves(seed: int) -> None:
    shown = exchanges = 0
    for k in range(20):
        record = _check_round_trip(finished_game(1000 * seed + k))
        assert record["winner"] in (0, 1, 2) and not record["truncated"]
        last = record["hands"][-1]
        assert max(last["tricks_won"]) >= 12 and last["tricks_won"].index(max(last["tricks_won"])) == record["winner"]
        shown += sum(len(h["shown"]) for h in record["hands"])
        exchanges += sum(len(h["exchanges"]) for h in record["hands"])
    assert exchanges > 0 and shown > 0  # the batch exercises the exchange and the show rule


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_games_with_presets_replay_to_themselves(preset: str) -> None:
    for seed in range(8):
        record = _check_round_trip(finished_game(seed, preset, max_hands=30))
        assert record["rules"]["name"] == preset
        assert record["winner"] is not None or record["truncated"]


@pytest.mark.parametrize("index", range(len(CUSTOM_RULES)))
def test_random_games_with_custom_rules_replay_to_themselves(index: int) -> None:
    for seed in range(8):
        record = _check_round_trip(finished_game(seed, CUSTOM_RULES[index], max_hands=25))
        assert record["rules"]["name"] == "custom"


@pytest.mark.parametrize("preset", ["standard", "chips-12", "dealer-assigns", "canadian"])
def test_a_record_reads_back_into_the_engines_own_hands(preset: str) -> None:
    """Writing and reading use one model of a hand: a record's hands parse into the HandRecord snapshots of
    the engine's logs (finished games: every exchange is complete, so its count is the cards sent)."""
    from sm_env.records.replay import _parse_record

    for seed in range(4):
        game = Game(preset, seed=seed, max_hands=12)
        play(game, random.Random(seed))
        parsed = _parse_record(game_record(game))
        assert parsed.hands == [log.frozen() for log in game.history]
        assert parsed.raw_hands == game_record(game)["hands"]


def test_shared_win_is_a_sorted_list_and_replays() -> None:
    for seed in range(300):
        game = finished_game(seed, RuleSet(fixed_hands=1))
        if isinstance(game.winner, list):
            record = _check_round_trip(game)
            assert record["winner"] == sorted(record["winner"]) and len(record["winner"]) >= 2
            broken = copy.deepcopy(record)
            broken["winner"] = record["winner"][0]
            assert error_of(broken).startswith("winner:")
            return
    raise AssertionError("no shared win found")


def test_truncated_game_replays_and_needs_its_max_hands() -> None:
    record = _check_round_trip(finished_game(4, "all-sixteen", max_hands=3))
    assert record["truncated"] is True and record["winner"] is None and len(record["hands"]) == 3
    assert record["max_hands"] == 3
    without = copy.deepcopy(record)
    del without["max_hands"]  # inferred from the number of hands
    replay(without)
    wrong = copy.deepcopy(record)
    wrong["max_hands"] = 5
    assert error_of(wrong).startswith("truncated:")


@pytest.mark.parametrize("seed", range(6))
def test_games_in_progress_replay_to_the_same_partial_record(seed: int) -> None:
    rng = random.Random(seed)
    rules = [STANDARD, PRESETS["woburn"], PRESETS["canadian"], PRESETS["6-3-8"], *CUSTOM_RULES][seed % 9]
    for _ in range(25):
        game = Game(rules=rules, seed=rng.randrange(10**6), max_hands=50)
        play(game, rng, rng.randrange(1, 400))
        record = _check_round_trip(game)
        for hand in record["hands"]:
            for trick in hand["tricks"] or []:
                assert trick["cards"], "a trick with no card is left out"
                assert (trick["winner"] is None) == (len(trick["cards"]) < 3)


def test_orders_that_do_not_matter_are_accepted(long_record: dict[str, Any]) -> None:
    shuffled = copy.deepcopy(long_record)
    for hand in shuffled["hands"]:
        for cards in hand["deal"]["hands"]:
            cards.reverse()
        hand["deal"]["kitty"].reverse()
        for entry in hand["exchanges"]:
            entry["returned"].reverse()
        for entry in hand["shown"]:
            entry["cards"].reverse()
        hand["shown"].reverse()
    seat0 = shuffled["hands"][0]["deal"]["hands"][0]
    seat0[:] = [c.lower() for c in seat0]
    out = replay(shuffled)
    for hand in out["hands"]:  # the deal comes back in the order given (canonical text)
        assert all(cards == sorted(cards, key=parse_card, reverse=True) for cards in hand["deal"]["hands"])
        for cards in hand["deal"]["hands"]:
            cards.reverse()
        hand["deal"]["kitty"].reverse()
    assert out == long_record
    # the order of discards is the order chosen: replay keeps it as given
    reordered = copy.deepcopy(long_record)
    reordered["hands"][0]["discards"].reverse()
    assert replay(reordered)["hands"][0]["discards"] == reordered["hands"][0]["discards"]
    assert reordered["hands"][0]["discards"] != long_record["hands"][0]["discards"]


def test_record_is_json_and_deterministic() -> None:
    def run() -> str:
        game = Game(seed=99, max_hands=6)
        play(game, random.Random(123))
        return json.dumps(game_record(game))

    text = run()
    assert text == run()
    assert json.loads(text)["seed"] == 99
    other = Game(seed=99, max_hands=6)
    play(other, random.Random(124))
    assert json.dumps(game_record(other)) != text


# ---------------------------------------------------------------------- corrupted records


def test_changed_trick_winner_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    trick = broken["hands"][2]["tricks"][4]
    trick["winner"] = (trick["winner"] + 1) % 3
    message = error_of(broken)
    assert message.startswith("hand 3, trick 5, winner: the record has")
    assert "wins it (trump" in message  # checked as the trick closes, with the reason


def test_card_not_held_is_an_illegal_action(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    tricks = broken["hands"][2]["tricks"]
    tricks[4]["cards"][1] = tricks[0]["cards"][0]  # played in trick 1: nobody holds it any more
    message = error_of(broken)
    assert message.startswith("hand 3, trick 5, card 2: illegal action")
    assert "does not hold" in message


def test_failing_to_follow_suit_is_an_illegal_action(long_record: dict[str, Any]) -> None:
    for h, hand in enumerate(long_record["hands"]):
        tricks = hand["tricks"]
        seats = [[(t["leader"] + k) % 3 for k in range(3)] for t in tricks]
        for t, trick in enumerate(tricks):
            led = trick["cards"][0][1]
            if trick["cards"][1][1] != led:
                continue
            seat = seats[t][1]
            for u in range(t + 1, len(tricks)):
                k = seats[u].index(seat)
                if tricks[u]["cards"][k][1] != led and k > 0:
                    broken = copy.deepcopy(long_record)
                    a, b = broken["hands"][h]["tricks"][t]["cards"], broken["hands"][h]["tricks"][u]["cards"]
                    a[1], b[k] = b[k], a[1]
                    message = error_of(broken)
                    assert message.startswith(f"hand {h + 1}, trick {t + 1}, card 2: illegal action")
                    assert "must follow" in message
                    return
    raise AssertionError("no suitable trick found")


def test_changed_leader_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    trick = broken["hands"][1]["tricks"][0]
    trick["leader"] = (trick["leader"] + 1) % 3
    assert error_of(broken).startswith("hand 2, trick 1, leader:")


def test_changed_returned_cards_are_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    hand = broken["hands"][1]
    hand["exchanges"][0]["returned"][0] = hand["deal"]["kitty"][0]  # a kitty card is never returned
    assert error_of(broken).startswith("hand 2, exchange 1, returned: the record has")


def test_illegal_exchange_card_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    hand = broken["hands"][1]
    entry = hand["exchanges"][0]
    not_held = hand["deal"]["hands"][entry["to"]][0]
    entry["sent"][0] = not_held
    message = error_of(broken)
    assert message.startswith("hand 2, exchange 1, card 1: illegal action")


def test_exchange_between_the_wrong_seats_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    entry = broken["hands"][1]["exchanges"][0]
    entry["to"] = 3 - entry["from"] - entry["to"]
    assert error_of(broken).startswith("hand 2, exchange 1: the record has seat")


def test_too_many_exchange_cards_are_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    hand = broken["hands"][1]
    entry = hand["exchanges"][0]
    sender_cards = hand["deal"]["hands"][entry["from"]]
    extra = next(c for c in sender_cards if c not in entry["sent"])
    entry["sent"].append(extra)
    n = len(entry["sent"])
    assert error_of(broken).startswith(f"hand 2, exchange 1, card {n}: the exchange from seat")


def test_illegal_discard_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    discards = broken["hands"][0]["discards"]
    discards[2] = discards[0]
    assert error_of(broken).startswith("hand 1, discard 3: illegal action")


def test_changed_trump_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    hand = broken["hands"][0]
    hand["trump"] = "CDHS"[("CDHS".index(hand["trump"]) + 1) % 4]
    # the play may stay legal; the trick winners or the shown cards then differ
    message = error_of(broken)
    assert message.startswith("hand 1, ")


@pytest.mark.parametrize("field", ["tricks_won", "balances", "scores"])
def test_changed_totals_are_named(long_record: dict[str, Any], field: str) -> None:
    broken = copy.deepcopy(long_record)
    values = broken["hands"][1][field]
    values[0], values[1] = values[1] + 1, values[0] - 1
    assert error_of(broken).startswith(f"hand 2, {field}: the record has")


def test_changed_score_in_the_last_hand_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    last = len(broken["hands"])
    broken["hands"][-1]["scores"][0] += 1
    assert error_of(broken).startswith(f"hand {last}, scores:")


def test_changed_shown_is_named(long_record: dict[str, Any]) -> None:
    index = next(i for i, h in enumerate(long_record["hands"]) if h["shown"])
    broken = copy.deepcopy(long_record)
    broken["hands"][index]["shown"] = []
    assert error_of(broken).startswith(f"hand {index + 1}, shown: the record has []")


def test_changed_dealer_and_quotas_are_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["hands"][1]["dealer"] = (broken["hands"][1]["dealer"] + 1) % 3
    assert error_of(broken).startswith("hand 2, dealer:")
    broken = copy.deepcopy(long_record)
    broken["hands"][1]["quotas"].reverse()
    assert error_of(broken).startswith("hand 2, quotas:")
    broken = copy.deepcopy(long_record)
    broken["first_dealer"] = (broken["first_dealer"] + 1) % 3
    assert error_of(broken).startswith("hand 1, dealer:")


def test_changed_winner_and_truncated_are_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["winner"] = (broken["winner"] + 1) % 3
    assert error_of(broken).startswith("winner: the record has")
    broken["winner"] = None
    assert error_of(broken).startswith("winner:")
    broken = copy.deepcopy(long_record)
    broken["truncated"] = True
    assert error_of(broken).startswith("truncated:")


def test_winner_of_a_game_that_goes_on_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["hands"] = broken["hands"][:2]  # hand 2 finished, the game goes on
    broken["winner"] = 0
    assert error_of(broken).startswith("winner: the record has 0, but the game is not over")


def test_missing_next_hand_and_extra_hand_are_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["hands"] = broken["hands"][:2]
    broken["winner"] = None
    assert error_of(broken).startswith("hand 3: missing")
    broken = copy.deepcopy(long_record)
    extra = copy.deepcopy(broken["hands"][-1])
    extra["number"] = len(broken["hands"]) + 1
    broken["hands"].append(extra)
    assert error_of(broken).startswith(f"hand {extra['number']}: the game was over")


def test_unfinished_hand_followed_by_another_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    hand = broken["hands"][1]
    hand["tricks"] = hand["tricks"][:3]
    hand["tricks_won"] = hand["balances"] = hand["scores"] = None
    assert error_of(broken).startswith("hand 2: the hand is not finished")


def test_wrong_format_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["format"] = "sergeant-major-record/2"
    assert error_of(broken).startswith("format: expected 'sergeant-major-record/1'")
    del broken["format"]
    assert error_of(broken).startswith("record: missing key 'format'")


def test_unknown_card_text_is_named(long_record: dict[str, Any]) -> None:
    broken = copy.deepcopy(long_record)
    broken["hands"][2]["tricks"][4]["cards"][1] = "ZZ"
    message = error_of(broken)
    assert message.startswith("hand 3, trick 5, card 2: unknown card 'ZZ'")
    broken = copy.deepcopy(long_record)
    broken["hands"][1]["deal"]["kitty"][0] = "1X"
    assert error_of(broken).startswith("hand 2, deal, kitty, card 1: unknown card")
    broken = copy.deepcopy(long_record)
    broken["hands"][0]["discards"][0] = 12  # an id, not text
    assert error_of(broken).startswith("hand 1, discards, card 1: a card is written as text")


def test_malformed_records_are_named(long_record: dict[str, Any]) -> None:
    assert error_of([]).startswith("record: expected a JSON object")  # type: ignore[arg-type]
    cases = [
        (lambda r: r["hands"][1].pop("trump"), "hand 2: missing key 'trump'"),
        (lambda r: r["hands"][0].__setitem__("tricks_won", [1, 2]), "hand 1, tricks_won: expected null or a list"),
        (lambda r: r["hands"][0].__setitem__("dealer", "0"), "hand 1, dealer: expected a seat"),
        (lambda r: r["hands"][0].__setitem__("number", 2), "hand 1, number: expected 1"),
        (lambda r: r["hands"][0]["tricks"][3].pop("winner"), "hand 1, trick 4: missing key 'winner'"),
        (lambda r: r["hands"][0]["tricks"][3]["cards"].pop(), "hand 1, trick 4: only 2 card(s), but more tricks"),
        (lambda r: r["hands"][0]["deal"]["hands"][0].pop(), "hand 1, deal: seat 0 has 15 cards"),
        (lambda r: r["hands"][0].__setitem__("trump", "X"), "hand 1, trump: expected null or a suit letter"),
        (lambda r: r.__setitem__("hands", []), "hands: empty"),
        (lambda r: r.__setitem__("truncated", "no"), "truncated: expected true or false"),
        (lambda r: r.__setitem__("max_hands", 0), "max_hands: expected null or a whole number"),
        (lambda r: r["rules"].__setitem__("max_exchange", 3), 'rules: the name "standard"'),
        (lambda r: r["rules"].__setitem__("no_such_option", 3), "rules: unknown rule option"),
        (lambda r: r["rules"].pop("quotas"), "rules: missing ['quotas']"),
        (lambda r: r["rules"].__setitem__("win_tricks", None), "rules: option 'win_tricks' is null"),
    ]
    for change, start in cases:
        broken = copy.deepcopy(long_record)
        change(broken)
        assert error_of(broken).startswith(start), (start, error_of(broken))


def test_replay_error_is_a_value_error() -> None:
    assert issubclass(ReplayError, ValueError)
    with pytest.raises(ValueError):
        replay({"format": FORMAT})


# ---------------------------------------------------------------------- files


def test_save_and_load_round_trip(tmp_path: Any, long_record: dict[str, Any]) -> None:
    path = tmp_path / "game.json"
    save_record(long_record, path)
    loaded = load_record(path)
    assert loaded == long_record
    assert replay(loaded) == long_record
    game = Game(seed=8, max_hands=2)
    play(game, random.Random(8))
    save_record(game, str(path))  # a Game is written as its record; the file is replaced
    assert load_record(str(path)) == game_record(game)
    assert os.listdir(tmp_path) == ["game.json"]  # no temporary file left behind


def test_load_errors_name_the_path(tmp_path: Any) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_record(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ', encoding="utf-8")
    with pytest.raises(RecordError, match="bad.json: not valid JSON"):
        load_record(bad)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RecordError, match="list.json: expected a JSON object"):
        load_record(listed)


def test_record_files_are_capped_in_size(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import sm_env.records.format as record_format
    from sm_env.records import MAX_RECORD_BYTES

    game = Game(RuleSet(fixed_hands=100), seed=5)
    play(game, random.Random(5))
    path = tmp_path / "game.json"
    save_record(game, path)
    size = path.stat().st_size
    assert len(game.history) == 100 and 50 * size < MAX_RECORD_BYTES  # the cap is far above a real game
    monkeypatch.setattr(record_format, "MAX_RECORD_BYTES", size)
    assert load_record(path) == game_record(game)  # exactly at the cap: read
    monkeypatch.setattr(record_format, "MAX_RECORD_BYTES", size - 1)
    with pytest.raises(RecordError, match=rf"game.json: larger than {size - 1} bytes, the most a game record"):
        load_record(path)


def test_failed_save_leaves_the_old_file_intact(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "game.json"
    save_record(game_record(Game(seed=1)), path)
    before = path.read_bytes()

    def broken_dump(obj: Any, fp: Any, **kwargs: Any) -> None:
        fp.write('{"format": "sergeant-ma')  # half written, then a failure
        fp.flush()
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", broken_dump)
    with pytest.raises(OSError, match="disk full"):
        save_record(game_record(Game(seed=2)), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["game.json"]
    # a value that is not JSON fails the same way
    with pytest.raises(TypeError):
        save_record({"format": FORMAT, "bad": object()}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["game.json"]


# ---------------------------------------------------------------------- hostile input


def test_deeply_nested_json_is_a_clear_error(tmp_path: Any) -> None:
    record = game_record(Game(seed=3))
    nested: list[Any] = []
    for _ in range(1000):
        nested = [nested]
    record["extra"] = nested
    with pytest.raises(ReplayError, match="nested more than"):
        replay(record)
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RecordError, match="deep.json: lists and objects nested more than 32 levels deep"):
        load_record(path)


def test_huge_integers_are_a_clear_error(tmp_path: Any) -> None:
    record = game_record(Game(seed=3))
    record["max_hands"] = 10**5000
    with pytest.raises(ReplayError, match="max_hands: an integer of 16610 bits"):
        replay(record)
    path = tmp_path / "big.json"
    path.write_text('{"seed": ' + "9" * 5000 + "}")
    with pytest.raises(RecordError, match="big.json: a whole number of 5000 digits; at most 100 are read") as info:
        load_record(path)
    assert "set_int_max_str_digits" not in str(info.value)


def test_the_shape_check_names_where_a_long_list_or_a_huge_integer_lies() -> None:
    from sm_env.records.replay import MAX_ITEMS

    record = game_record(Game(seed=3))
    record["hands"][0]["notes"] = [{}] * (MAX_ITEMS + 1)  # longer than any list of a record: refused before a walk
    with pytest.raises(ReplayError, match=r"^record, hands\[0\], notes: a list of 65,537 items; no list of a record"):
        replay(record)
    record["hands"][0]["notes"] = [[{}] * 3, [{"n": [1, 2, 2**128]}]]
    with pytest.raises(ReplayError, match=r"^record, hands\[0\], notes\[1\]\[0\], n\[2\]: an integer of 129 bits"):
        replay(record)
    record["hands"][0]["notes"] = [{}] * MAX_ITEMS  # as long as a list may be: read, then ignored
    assert replay(record)["hands"][0] == game_record(Game(seed=3))["hands"][0]


@pytest.mark.parametrize("seed", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_infinite_seed_is_rejected(seed: float) -> None:
    record = game_record(Game(seed=3))
    record["seed"] = seed
    with pytest.raises(ReplayError, match="seed: seed must be finite"):
        replay(record)


def test_impossible_start_balances_in_a_record_are_rejected() -> None:
    record = game_record(Game(seed=3, first_dealer=0, start_balances=[2, -1, -1]))
    assert replay(record)["start_balances"] == [2, -1, -1]
    record["start_balances"] = [20, -20, 0]
    with pytest.raises(ReplayError, match=r"start_balances: start_balances \[20, -20, 0\] cannot come from a hand"):
        replay(record)


# ---------------------------------------------------------------------- section 10 keys


def test_chips_records_carry_the_chips_of_each_hand_and_replay() -> None:
    game = finished_game(3, "chips-12")
    record = as_json(game_record(game))
    assert replay(record) == record
    total = [0, 0, 0]
    for hand in record["hands"]:
        assert set(hand) == {*HAND_KEYS, "chips"}
        ups = [b for b in hand["balances"] if b > 0]
        downs = sum(1 for b in hand["balances"] if b < 0)
        want = [b * downs if b > 0 else -sum(ups) if b < 0 else 0 for b in hand["balances"]]
        assert hand["chips"] == want
        total = [t + c for t, c in zip(total, hand["chips"], strict=True)]
        assert hand["scores"] == total  # the running score is the chip total
    # a hand in progress: chips null until the hand ends
    partial = Game(rules="chips-12", seed=1)
    play(partial, random.Random(1), 30)
    entry = game_record(partial)["hands"][-1]
    assert entry["chips"] is None and entry["scores"] is None
    assert replay(game_record(partial)) == game_record(partial)


def test_chips_in_a_record_are_checked() -> None:
    record = as_json(game_record(finished_game(3, "chips-12")))
    wrong = copy.deepcopy(record)
    wrong["hands"][1]["chips"] = wrong["hands"][1]["balances"]
    if wrong["hands"][1]["chips"] == record["hands"][1]["chips"]:
        wrong["hands"][1]["chips"] = [1, 0, -1]
    assert error_of(wrong).startswith("hand 2, chips")
    missing = copy.deepcopy(record)
    del missing["hands"][0]["chips"]
    assert error_of(missing) == "hand 1: missing key 'chips'"
    malformed = copy.deepcopy(record)
    malformed["hands"][0]["chips"] = [1, 2]
    assert error_of(malformed).startswith("hand 1, chips: expected null or a list of 3 integers")
    # scores that add balances instead of chips
    scores = copy.deepcopy(record)
    scores["hands"][0]["scores"] = scores["hands"][0]["balances"]
    if scores["hands"][0]["scores"] != record["hands"][0]["scores"]:
        assert error_of(scores).startswith("hand 1, scores")
    # a rule set without chips has no chips key
    plain = as_json(game_record(finished_game(3, "fixed-12")))
    plain["hands"][0]["chips"] = None
    assert error_of(plain).startswith("hand 1, chips: a record has 'chips' only when")


def test_dealer_makes_quota_up_in_a_record() -> None:
    record = as_json(game_record(finished_game(2, "dealer-makes-quota-up", max_hands=40)))
    assert record["rules"]["dealer_makes_quota"] == "up" and record["rules"]["name"] == "dealer-makes-quota-up"
    assert replay(record) == record
    made = copy.deepcopy(record)
    made["rules"]["dealer_makes_quota"] = "made"  # records write the canonical value only (true or "up")
    assert error_of(made).startswith("rules:")
    reread = copy.deepcopy(record)
    reread["rules"]["dealer_makes_quota"] = True
    reread["rules"]["name"] = "dealer-makes-quota"
    # read with "at least its quota", the game ends at an earlier hand where the dealer took exactly its quota
    assert "the record goes on" in error_of(reread)


def test_record_actions_step_through_a_record_to_the_same_record() -> None:
    from sm_env.records import MAX_STEPS, record_actions

    game = finished_game(4, max_hands=3)
    read = record_actions(game_record(game))
    assert len(read) == sum(len(h) for h in read.hands) and len(read.hands) == len(game.history)
    again = read.start()
    hands = []
    for index, position, action in read.steps():
        assert action in position.legal_actions()  # the game before each action, as the engine asks for it
        hands.append(index)
        again.apply(action)
    assert hands == sorted(hands) and game_record(again) == game_record(game)
    assert read.start() is not read.start()  # a fresh copy each time
    assert MAX_STEPS == 100_000
    with pytest.raises(ReplayError, match="a game record is a JSON object"):
        record_actions([])
