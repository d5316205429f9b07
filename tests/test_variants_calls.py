"""Calls, the "alternate Sergeant Major" (docs/rules.md 10.3, option ``calls``, preset ``calls``).

Hand-built deals fix NT and misère outcomes; random games are checked hand by
hand by ``check_history`` (calls made once each, misère maxima and balances,
the end after hand 18); planted engine bugs must be caught; calls are public;
the heuristic plays misère to lose tricks.
"""

from __future__ import annotations

import json
import random

import pytest
from helpers import card, make_deal
from test_variants import _caught, check_history, random_game

from sm_env.core.game import (
    MIZ,
    MIZ_ACTION,
    NT,
    NT_ACTION,
    OVER,
    PLAY,
    TRUMP,
    TRUMP_ACTION_BASE,
    Game,
    IllegalActionError,
)
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.display.render import render_table
from sm_env.observation import describe, encode, observation_size
from sm_env.records import game_record, replay

# seat 1 (eldest when seat 0 deals) holds every top card: in NT it takes every trick
TOPS = make_deal("S:23456 H:23456 D:23456 C:2", "S:AKQJT H:AKQJT D:AKQ C:AKQ", None, "C:3456")


def test_the_preset_and_refusals():
    rules = PRESETS["calls"]
    assert rules.calls and rules.no_exchange and rules.win_tricks is None and rules.num_actions == 74
    assert observation_size(rules) == 816 and RuleSet(calls=True).name == "calls"
    with pytest.raises(RulesError, match="calls needs the quotas 8-5-3"):
        RuleSet(calls=True, quotas=(9, 5, 2))
    for option in ("auction", "kitty_trick", "one_card_kitty", "no_kitty_51", "dealer_assigns_quotas"):
        quotas = (9, 5, 3) if option in ("kitty_trick", "one_card_kitty") else None
        with pytest.raises(RulesError, match="calls"):
            RuleSet(calls=True, quotas=quotas, **{option: True})
    with pytest.raises(RulesError, match="not combined with trump_after_kitty"):
        RuleSet(calls=True, pickup_before_discard=True, trump_after_kitty=True)
    with pytest.raises(RulesError, match="no_exchange"):
        RuleSet(calls=True, trump_before_exchange=True)
    with pytest.raises(RulesError, match="fixed_hands 19 is more than 18"):
        RuleSet(calls=True, fixed_hands=19)
    assert RuleSet(calls=True, fixed_hands=18).fixed_hands == 18 and RuleSet(calls=True, win_tricks=12).win_tricks == 12


def test_each_call_once_per_player_and_the_last_is_forced():
    game = Game("calls", seed=1, first_dealer=0)
    assert game.legal_mask() == 0x3F << TRUMP_ACTION_BASE  # 52-57
    rng = random.Random(3)
    made = {0: [], 1: [], 2: []}
    while game.phase != OVER:
        if game.phase == TRUMP:
            legal = game.legal_actions()
            assert sorted(a - TRUMP_ACTION_BASE for a in legal) == sorted(set(range(6)) - set(made[game.dealer]))
            if len(made[game.dealer]) == 5:
                assert len(legal) == 1  # the last call is forced
            action = rng.choice(legal)
            made[game.dealer].append(action - TRUMP_ACTION_BASE)
            if made[game.dealer].count(action - TRUMP_ACTION_BASE) > 1:
                raise AssertionError("a call made twice")
            game.apply(action)
        else:
            game.apply(rng.choice(game.legal_actions()))
    assert game.hand_number == 18 and all(sorted(m) == list(range(6)) for m in made.values())
    assert game.winner is not None and not game.truncated


def test_a_call_already_made_is_illegal():
    game = Game("calls", seed=1, first_dealer=0, max_hands=4)
    game.apply(NT_ACTION)
    rng = random.Random(1)
    while game.hand_number < 4:
        game.apply(rng.choice(game.legal_actions()) if game.phase != TRUMP else game.legal_actions()[0])
    assert game.dealer == 0 and game.phase == TRUMP
    with pytest.raises(IllegalActionError, match="a call it has not made yet"):
        game.apply(NT_ACTION)


def _play_out(game: Game, choose) -> Game:
    while game.phase != OVER:
        game.apply(choose(game))
    return game


def _lowest(game: Game) -> int:
    return game.legal_actions()[0]


def _last_trick(call: int, tricks_won, hands) -> Game:
    """The last trick of a hand dealt by seat 0, seat 1 to lead (the others' tricks so far: ``tricks_won``)."""
    return Game.from_position(
        "calls",
        hand_number=1,
        dealer=0,
        scores=[0, 0, 0],
        previous_balances=None,
        phase=PLAY,
        to_act=1,
        hands=[1 << card(c) for c in hands],
        kitty=0,
        kitty_taken=True,
        trump=call if call < NT else -1,
        discards=[],
        trick=[],
        trick_leader=1,
        tricks_won=tricks_won,
        tricks_played=15,
        played=[0, 0, 0],
        voids=[0, 0, 0],
        call=call,
    )


def test_no_trump_the_highest_card_of_the_led_suit_wins():
    game = Game("calls", seed=1, first_dealer=0)
    game.apply(NT_ACTION)
    assert game.trump == -1 and game.call == NT and game.history[0].trump == -1 and game.maxima is None
    game = _last_trick(NT, [7, 5, 3], ["3S", "2S", "AH"])  # seat 1 leads 2S, seat 2 has no spade: AH
    for c in ("2S", "AH", "3S"):
        game.apply(card(c))
    assert game.log.tricks[-1].winner == 0  # the 3S: no trump, so the ace of hearts cannot win


def test_misere_maxima_and_balances():
    game = Game("calls", seed=1, first_dealer=0, deals=[TOPS], max_hands=1)
    game.apply(MIZ_ACTION)
    assert game.maxima == [3, 5, 8] and game.history[0].maxima == [3, 5, 8]  # dealer 3, eldest 5, middle 8
    _play_out(game, _lowest)
    log = game.history[0]
    assert log.balances == [log.maxima[s] - log.tricks_won[s] for s in range(3)] and sum(log.balances) == 0
    assert log.quotas == [8, 5, 3]  # the quotas stay in the record
    record = game_record(game)
    assert record["hands"][0]["call"] == "Miz" and record["hands"][0]["trump"] is None
    assert record["hands"][0]["maxima"] == [3, 5, 8] and replay(record) == record


@pytest.mark.parametrize("tricks, balance", [(3, 0), (4, -1), (0, 3)])
def test_misere_balance_boundary(tricks, balance):
    """Seat 0 (dealer, maximum 3) at exactly, above and below its maximum, decided by the last trick."""
    wins = tricks > 0
    before = tricks - 1 if wins else tricks
    game = _last_trick(MIZ, [before, 15 - before - 7, 7], ["AS" if wins else "2C", "3S", "4S"])
    for c in ("3S", "4S", "AS" if wins else "2C"):
        game.apply(card(c))
    assert game.tricks_won[0] == tricks and game.log.balances[0] == balance
    assert game.log.balances == [[3, 5, 8][s] - game.tricks_won[s] for s in range(3)]


def test_the_game_ends_after_hand_eighteen_unless_an_end_condition_comes_first():
    game = random_game("calls", 5, max_hands=None)
    assert game.hand_number == 18 and game.winner is not None
    top = max(game.scores)
    winners = [s for s in range(3) if game.scores[s] == top]
    assert (game.winner if isinstance(game.winner, list) else [game.winner]) == winners
    early = random_game({"calls": True, "target_score": 3}, 5, max_hands=None)
    assert early.hand_number < 18 and early.winner is not None


@pytest.mark.parametrize(
    "rules",
    [
        "calls",
        {"calls": True, "chips": True},
        {"calls": True, "win_margin": 4},
        {"calls": True, "fixed_hands": 9},
        {"calls": True, "pickup_before_discard": True, "target_score": 6, "target_symmetric": True},
    ],
)
def test_random_games_follow_the_rules(rules):
    for seed in range(30):
        game = random_game(rules, seed, max_hands=None)
        check_history(game)
        record = json.loads(json.dumps(game_record(game)))
        assert replay(record) == record


def test_planted_bugs_are_caught(monkeypatch):
    assert not _caught("calls", range(3))
    original = Game._end_hand

    def miz_as_quotas(self):  # a misère hand scored as tricks - quota
        self.maxima = None
        original(self)

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_end_hand", miz_as_quotas)
        assert _caught("calls", range(3))
    name = Game._name_trump

    def reused(self, suit):  # calls are not used up
        left = self.calls_left
        name(self, suit)
        self.calls_left = left

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_name_trump", reused)
        assert _caught("calls", range(3), max_hands=40)
    with monkeypatch.context() as patch:  # the maxima by seat instead of by role
        patch.setattr("sm_env.core.game.MIZ_MAXIMA", (8, 5, 3))
        assert _caught("calls", range(3))


def test_calls_are_public():
    game = Game("calls", seed=2, first_dealer=0)
    game.apply(MIZ_ACTION)
    for seat in range(3):
        view = player_view(game, seat)
        assert view.call == MIZ and view.maxima == (3, 5, 8) and view.calls_left == (0x1F, 0x3F, 0x3F)
        parts = describe(encode(view), game.rules)
        assert parts["call"].tolist() == [0, 0, 0, 0, 0, 1] and parts["trump"].sum() == 0
        rel = (0 - seat) % 3
        assert parts["calls_left"][6 * rel + 5] == 0.0 and parts["calls_left"].sum() == 17
        text = render_table(view)
        assert "Call: Miz (misère): maxima player_0 3, player_1 5, player_2 8" in text
        assert "Calls left: player_0 C D H S NT, player_1 C D H S NT Miz" in text


def test_heuristic_calls_and_plays_misere_to_lose_tricks():
    from helpers import mask

    from agents.players.heuristic import choose_call, choose_miz_play, heuristic_action

    low = mask("S:2345 H:2345 D:2345 C:2345")
    assert choose_call(low, 0x3F) == MIZ
    assert choose_call(mask("S:AKQJT9876 H:AK D:A C:A"), 0x3F) == 3  # spades
    assert choose_call(low, 0x1F) != MIZ  # misère already made
    # following: the highest card under the winner; last with only winners: the highest
    assert choose_miz_play(mask("H:K93"), [card("QH")]) == card("9H")
    assert choose_miz_play(mask("H:AK"), [card("QH"), card("2H")]) == card("AH")
    assert choose_miz_play(mask("H:AK"), [card("QH")]) == card("KH")
    assert choose_miz_play(mask("S:A D:2"), [card("QH")]) == card("AS")  # void: throw the highest
    assert choose_miz_play(mask("S:A D:2 C:3"), []) == card("2D")  # lead the lowest
    # in misère hands the heuristic takes fewer tricks than random play with the same cards
    heuristic_tricks = random_tricks = 0
    for seed in range(30):
        for mode in ("heuristic", "random"):
            game = Game("calls", seed=seed, first_dealer=0, max_hands=1)
            game.apply(MIZ_ACTION)
            rng = random.Random(seed)
            while game.phase != OVER:
                if game.current == 1 and mode == "heuristic":
                    game.apply(heuristic_action(player_view(game, 1)))
                elif game.current == 1:
                    game.apply(rng.choice(game.legal_actions()))
                else:
                    game.apply(heuristic_action(player_view(game, game.current)))
            if mode == "heuristic":
                heuristic_tricks += game.tricks_won[1]
            else:
                random_tricks += game.tricks_won[1]
    assert heuristic_tricks < random_tricks


def test_record_replay_checks_the_call():
    game = random_game("calls", 7, max_hands=3)
    record = game_record(game)
    assert replay(record) == record and {"call", "maxima"} <= set(record["hands"][0])
    wrong = json.loads(json.dumps(record))
    wrong["hands"][0]["call"] = "XX"
    with pytest.raises(Exception, match="hand 1, call: expected null or one of"):
        replay(wrong)
    wrong = json.loads(json.dumps(record))
    call = record["hands"][0]["call"]
    wrong["hands"][0]["call"] = "NT" if call != "NT" else "Miz"
    with pytest.raises(Exception, match="hand 1"):
        replay(wrong)
    plain = game_record(random_game("standard", 4, max_hands=1))
    plain["hands"][0]["call"] = "NT"
    with pytest.raises(Exception, match="hand 1, call: a record has 'call' only when"):
        replay(plain)
    start = Game("calls", seed=1)
    assert game_record(start)["hands"][0]["call"] is None and replay(game_record(start)) == game_record(start)
