"""The human player: scripted input, clear messages, clean exit."""

from __future__ import annotations

import io
import json

import pytest

from agents import play
from agents.players.heuristic import heuristic_action
from agents.players.human import HumanAgent, HumanQuit, numbered_actions, parse_answer
from sm_env.core.cards import CARD_TEXT, SUIT_MASK, from_mask
from sm_env.core.game import PLAY, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.knowledge import player_view


def following_state():
    """A view of a player who must follow suit and also holds other suits."""
    for seed in range(100):
        game = Game(seed=seed, first_dealer=0, max_hands=1)
        while game.current_player is not None:
            view = player_view(game, game.current_player)
            if game.phase == PLAY and view.trick:
                follow = view.hand & SUIT_MASK[view.led_suit]
                if follow and view.hand & ~follow:
                    return game, view
            game.apply(heuristic_action(view))
    raise AssertionError("no following state found")


def run_human(view, text: str) -> tuple[int | None, str]:
    out = io.StringIO()
    human = HumanAgent(input_stream=io.StringIO(text), output_stream=out)
    try:
        action = human.act(view)
    except HumanQuit:
        action = None
    return action, out.getvalue()


def test_bad_inputs_get_messages_and_a_new_prompt():
    game, view = following_state()
    follow = from_mask(view.hand & SUIT_MASK[view.led_suit])
    other = next(c for c in from_mask(view.hand) if c not in follow)
    missing = next(c for c in range(52) if not view.hand >> c & 1)
    legal = numbered_actions(view)
    script = (
        "\n".join(["zz", "1X", CARD_TEXT[missing], CARD_TEXT[other].lower(), "0", str(len(legal) + 1), "", "help", "1"])
        + "\n"
    )
    action, text = run_human(view, script)
    assert action == legal[0] and game.legal_mask() >> action & 1
    assert "is not a card" in text
    assert f"you do not hold {CARD_TEXT[missing]}" in text
    assert "you must follow" in text and CARD_TEXT[follow[0]] in text
    assert f"no action number 0: choose 1-{len(legal)}" in text
    assert f"no action number {len(legal) + 1}" in text
    assert "Answer with a card" in text  # help
    assert "Traceback" not in text
    # the table is shown: trump, quotas and the hand
    assert "trump" in text and "quota" in text


def test_cards_by_text_ten_forms_and_numbers():
    _, view = following_state()
    follow = from_mask(view.hand & SUIT_MASK[view.led_suit])
    card = follow[-1]
    text = CARD_TEXT[card]
    assert parse_answer(text, view) == card
    assert parse_answer(text.lower(), view) == card
    if text[0] == "T":
        assert parse_answer("10" + text[1], view) == card
    legal = numbered_actions(view)
    assert [parse_answer(str(i), view) for i in range(1, len(legal) + 1)] == legal


def test_trump_by_letter_or_name():
    game = Game(seed=1, first_dealer=0, max_hands=1)
    view = player_view(game, 0)
    assert view.phase == TRUMP
    assert parse_answer("H", view) == TRUMP_ACTION_BASE + 2
    assert parse_answer("hearts", view) == TRUMP_ACTION_BASE + 2
    assert parse_answer("spade", view) == TRUMP_ACTION_BASE + 3
    assert parse_answer("1", view) == TRUMP_ACTION_BASE
    with pytest.raises(ValueError, match="not a suit"):
        parse_answer("AS", view)
    action, text = run_human(view, "purple\nd\n")
    assert action == TRUMP_ACTION_BASE + 1 and "not a suit" in text


def test_end_of_input_and_quit_stop_cleanly():
    _, view = following_state()
    assert run_human(view, "")[0] is None
    assert run_human(view, "zz\nquit\n")[0] is None


def test_a_forced_card_is_played_without_asking_and_said():
    for seed in range(50):
        game = Game(seed=seed, first_dealer=0, max_hands=1)
        while game.current_player is not None:
            view = player_view(game, game.current_player)
            if game.phase == PLAY and view.legal.bit_count() == 1 and view.hand.bit_count() > 1:
                break  # one card of the led suit among several cards
            game.apply(heuristic_action(view))
        else:
            continue
        break
    (card,) = from_mask(view.legal)
    action, text = run_human(view, "")  # no input at all: nothing is asked
    assert action == card
    assert f"your only legal card: {CARD_TEXT[card]} (played for you)" in text
    assert "Card to play" not in text and "Legal:" not in text


def test_a_chosen_card_is_echoed():
    _, view = following_state()
    action, text = run_human(view, "1\n")
    assert action == numbered_actions(view)[0] and f"you chose {CARD_TEXT[action]}" in text


def test_play_main_shows_the_last_trick_and_the_exchanges_of_the_person(tmp_path):
    path = tmp_path / "game.json"
    out = io.StringIO()
    argv = ["--seat", "1", "--seed", "8", "--max-hands", "2", "--opponents", "heuristic", "random"]
    assert play.main(argv + ["--record", str(path)], input_stream=io.StringIO("1\n" * 200), output_stream=out) == 0
    text = out.getvalue()
    record = json.loads(path.read_text())
    for number, hand in enumerate(record["hands"], 1):
        last = hand["tricks"][-1]
        line = f"Trick 16 (the last of hand {number}): player_{last['leader']} {last['cards'][0]}"
        assert line in text and text.index(line) < text.index(f"Hand {number} over")
        assert f"-> player_{last['winner']}\n\n=== Hand {number} over" in text
    # seat 1 is down after hand 1: the rules make its return
    exchange = next(e for e in record["hands"][1]["exchanges"] if e["to"] == 1)
    sent, returned = " ".join(exchange["sent"]), " ".join(exchange["returned"])
    assert f"Exchange: player_{exchange['from']} sent you {sent}; you gave back {returned} (not your choice" in text
    assert "your only legal card" in text  # the last card of each hand is forced


def test_play_main_tells_the_sender_what_came_back(tmp_path):
    out = io.StringIO()
    argv = ["--seat", "2", "--seed", "8", "--max-hands", "2", "--opponents", "heuristic", "random"]
    path = tmp_path / "game.json"
    assert play.main(argv + ["--record", str(path)], input_stream=io.StringIO("1\n" * 200), output_stream=out) == 0
    exchange = next(e for e in json.loads(path.read_text())["hands"][1]["exchanges"] if e["from"] == 2)
    sent, returned = " ".join(exchange["sent"]), " ".join(exchange["returned"])
    assert f"Exchange: you sent {sent} to player_{exchange['to']}, who gave back {returned}" in out.getvalue()


def test_play_main_eof_exits_cleanly_and_saves_the_record(tmp_path):
    path = tmp_path / "game.json"
    out = io.StringIO()
    code = play.main(["--seed", "4", "--record", str(path)], input_stream=io.StringIO(""), output_stream=out)
    assert code == 0
    text = out.getvalue()
    assert "Game stopped" in text and "Traceback" not in text
    assert json.loads(path.read_text())["format"] == "sergeant-major-record/1"


def test_play_main_does_not_show_the_seed_of_an_unseeded_game(tmp_path):
    # the seed tells the deal: an unseeded game says "a random deal" and keeps the seed in the record only
    path = tmp_path / "game.json"
    out = io.StringIO()
    assert play.main(["--record", str(path)], input_stream=io.StringIO(""), output_stream=out) == 0
    seed = json.loads(path.read_text())["seed"]
    assert 0 <= seed < 2**128 and str(seed) not in out.getvalue()
    assert "a random deal" in out.getvalue()


def first_draws(rng) -> list[int]:
    """The next outputs of a random.Random, read from a copy (the generator itself is left as it was)."""
    import random

    copy = random.Random()
    copy.setstate(rng.getstate())
    return [copy.getrandbits(64) for _ in range(8)]


def test_play_seeds_each_player_one_way_from_the_game_seed_never_from_the_deals_stream(tmp_path, monkeypatch):
    """play.seat_agents seeds every seat with agents.agent_seed(seed, seat), never random.Random(seed), the deal's
    (the agent at seat 0 once was); the same seed plays the same game, and its record replays."""
    import random

    from agents import agent_seed, make_opponent
    from sm_env.records import replay

    deal = first_draws(random.Random(8))  # Game(seed=8) deals from random.Random(8)
    assert first_draws(make_opponent("random", seed=8).rng) == deal  # an agent seeded so would read the deal's
    human = HumanAgent(seed=0)
    players = play.seat_agents(["random", "pimc:samples=2"], 1, 8, human)
    assert players[1] is human and [p.name for p in players] == ["random", "human", "pimc:samples=2"]
    for seat, player in enumerate(players):
        assert first_draws(player.rng) == first_draws(random.Random(agent_seed(8, seat))) != deal
    seen, real = [], play.seat_agents

    def spy(*args):
        made = real(*args)
        seen.append([first_draws(p.rng) for p in made])
        return made

    monkeypatch.setattr(play, "seat_agents", spy)
    records = []
    for k in range(2):
        path = tmp_path / f"game{k}.json"
        argv = ["--seat", "1", "--seed", "8", "--max-hands", "1", "--opponents", "random", "random"]
        assert play.main([*argv, "--record", str(path)], io.StringIO("1\n" * 200), io.StringIO()) == 0
        records.append(json.loads(path.read_text()))
    assert seen[0] == seen[1] and all(stream != deal for stream in seen[0]) and len(seen[0]) == 3
    assert records[0] == records[1] and records[0]["seed"] == 8 and replay(records[0]) == records[0]


def test_play_main_plays_a_whole_hand_and_saves_it(tmp_path):
    path = tmp_path / "game.json"
    out = io.StringIO()
    script = io.StringIO("1\n" * 200)
    code = play.main(
        ["--seat", "2", "--seed", "8", "--max-hands", "1", "--opponents", "heuristic", "random", "--record", str(path)],
        input_stream=script,
        output_stream=out,
    )
    assert code == 0
    text = out.getvalue()
    assert "Hand 1 over" in text and "Game over" in text
    record = json.loads(path.read_text())
    assert record["hands"][0]["tricks_won"] is not None and sum(record["hands"][0]["tricks_won"]) == 16
    from sm_env.records import replay

    assert replay(record) == record


@pytest.mark.parametrize(
    "rules",
    [
        "chips-12",
        "dealer-makes-quota-up",
        "9-2-5-variation",
        "dealer-assigns",
        "3-5-9",
        "9-5-3-one-card",
        "woburn-auction",
        "calls",
    ],
)
def test_play_main_plays_section_10_rule_sets(tmp_path, rules):
    path = tmp_path / "game.json"
    out = io.StringIO()
    code = play.main(
        ["--seed", "3", "--max-hands", "2", "--rules", rules, "--opponents", "pimc:samples=1", "random"]
        + ["--record", str(path)],
        input_stream=io.StringIO("1\n" * 400),
        output_stream=out,
    )
    assert code == 0
    text = out.getvalue()
    assert "Hand 2 over" in text and "Game over" in text
    assert ("chips: player_0" in text) == (rules == "chips-12")
    from sm_env.records import replay

    record = json.loads(path.read_text())
    assert record["rules"]["name"] == rules and replay(record) == record


def test_play_main_rejects_bad_specs(capsys):
    assert play.main(["--opponents", "heuristic", "nobody"], input_stream=io.StringIO("")) == 2
    assert "known agents" in capsys.readouterr().err


def test_quota_assignment_by_text_or_number():
    game = Game("dealer-assigns", seed=1, first_dealer=0)
    view = player_view(game, 0)
    assert parse_answer("5-3-8", view) == 71 and parse_answer(" 8-5-3 ", view) == 68
    assert parse_answer("6", view) == numbered_actions(view)[5]
    with pytest.raises(ValueError, match="not an assignment"):
        parse_answer("8-8-0", view)


def test_bids_takes_and_calls_by_text():
    from sm_env.core.game import MIZ_ACTION, NT_ACTION, PASS_ACTION

    game = Game("woburn-auction", seed=1, first_dealer=0)
    view = player_view(game, 0)
    assert parse_answer("pass", view) == PASS_ACTION and parse_answer("9", view) == 60
    assert parse_answer("bid 16", view) == 67 and parse_answer("2", view) == numbered_actions(view)[1]
    game.apply(61)  # seat 0 bids 10
    with pytest.raises(ValueError, match="higher than 10"):
        parse_answer("9", player_view(game, 1))
    with pytest.raises(ValueError, match="not a bid"):
        parse_answer("lots", player_view(game, 1))
    game = Game("calls", seed=1, first_dealer=0)
    view = player_view(game, 0)
    assert parse_answer("NT", view) == NT_ACTION and parse_answer("misère", view) == MIZ_ACTION
    assert parse_answer("hearts", view) == 54
    game.apply(MIZ_ACTION)
    while not (game.hand_number == 4 and game.phase == TRUMP):  # seat 0 deals again in hand 4
        game.apply(game.legal_actions()[0])
    with pytest.raises(ValueError, match="not a call you can make now"):
        parse_answer("miz", player_view(game, 0))
    one = Game("9-5-3-one-card", seed=3, first_dealer=0)
    one.apply(52)
    view = player_view(one, one.current)
    assert parse_answer("decline", view) == PASS_ACTION
    held = next(c for c in range(52) if view.hand >> c & 1)
    assert parse_answer(CARD_TEXT[held], view) == held


@pytest.mark.parametrize("rules", ["four-5-3-2-2", "four-6-3-2-1"])
def test_play_main_plays_four_players(tmp_path, rules):
    path = tmp_path / "game.json"
    out = io.StringIO()
    code = play.main(
        ["--seat", "3", "--seed", "5", "--max-hands", "2", "--rules", rules, "--record", str(path)],
        input_stream=io.StringIO("1\n" * 400),
        output_stream=out,
    )
    assert code == 0
    text = out.getvalue()
    assert "player_3: you" in text and "player_2: heuristic" in text
    assert "Hand 2 over" in text and "player_3: " in text.split("Hand 1 over")[1]
    from sm_env.records import replay

    record = json.loads(path.read_text())
    assert record["rules"]["name"] == rules and replay(record) == record
    assert sum(record["hands"][0]["tricks_won"]) == 12


def test_play_main_checks_seats_and_opponents_against_the_players(capsys):
    assert play.main(["--seat", "3"], input_stream=io.StringIO("")) == 2
    assert "seats are 0-2 with 3 players" in capsys.readouterr().err
    assert play.main(["--rules", "four-5-3-2-2", "--opponents", "random", "random"], input_stream=io.StringIO("")) == 2
    assert "4 players need 3 opponents, got 2" in capsys.readouterr().err


@pytest.mark.parametrize("answer", ["H", "h", "hearts"])
def test_h_at_the_trump_prompt_names_hearts_not_help(answer):
    view = player_view(Game(seed=1, first_dealer=0, max_hands=1), 0)
    assert view.phase == TRUMP
    action, text = run_human(view, f"{answer}\n")
    assert action == TRUMP_ACTION_BASE + 2 and "Answer with a card" not in text


@pytest.mark.parametrize("rules", ["standard", "calls"])
def test_every_suit_letter_names_its_suit_at_the_trump_prompt_and_help_is_a_word(rules):
    view = player_view(Game(rules, seed=1, first_dealer=0, max_hands=1), 0)
    assert view.phase == TRUMP
    for suit, letter in enumerate("CDHS"):
        for typed in (letter, letter.lower()):
            action, text = run_human(view, f"{typed}\n")
            assert action == TRUMP_ACTION_BASE + suit and "Answer with a card" not in text, typed
    for word in ("?", "help", "HELP"):
        action, text = run_human(view, f"{word}\ns\n")
        assert action == TRUMP_ACTION_BASE + 3 and "Answer with a card" in text and "'?' or 'help'" in text


def views_of_every_phase() -> dict[tuple[str, int], object]:
    """A view with a choice in each phase of the rule sets that have one: trump, calls, play, exchange,
    discard, bid, take, assign."""
    views = {}
    for rules in ("standard", "calls", "woburn-auction", "dealer-assigns", "9-5-3-one-card"):
        game = Game(rules, seed=3, first_dealer=0, max_hands=3)
        while game.current_player is not None:
            view = player_view(game, game.current_player)
            if view.legal.bit_count() > 1:
                views.setdefault((rules, view.phase), view)
            game.apply(heuristic_action(view))
    return views


def test_no_help_or_quit_word_names_an_action_at_any_prompt():
    from agents.players.human import HELP_WORDS, QUIT_WORDS
    from sm_env.core.game import ASSIGN, BID, DISCARD, EXCHANGE, TAKE

    views = views_of_every_phase()
    assert {phase for _, phase in views} >= {TRUMP, PLAY, EXCHANGE, DISCARD, BID, TAKE, ASSIGN}
    for (rules, phase), view in views.items():
        for word in HELP_WORDS + QUIT_WORDS:
            for typed in (word, word.upper()):
                try:
                    action = parse_answer(typed, view)
                except ValueError:
                    continue
                pytest.fail(f"{typed!r} names action {action} at the {phase} prompt of {rules}: not help or quit")
