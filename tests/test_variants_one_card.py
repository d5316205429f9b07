"""9-5-3 with a one-card kitty (docs/rules.md 10.5, option ``one_card_kitty``, preset ``9-5-3-one-card``).

Hand-built deals fix who holds 2D and what the face-up card is; random games are
checked hand by hand by ``check_history`` (test_variants.py); planted engine
bugs must be caught; the card put out of play must not leak.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from helpers import card, make_deal, mask, trump
from test_variants import _caught, check_history, random_game

from sm_env.core.game import OVER, PASS_ACTION, PLAY, TAKE, TRUMP, DealError, Game, IllegalActionError
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.display.render import render_table
from sm_env.observation import describe, encode, observation_size
from sm_env.records import game_record, replay

# seat 0 deals hand 1; seat 1 holds 2D; the face-up card is AC
DEAL = make_deal("S:AKQJT98765432 H:AKQ D:A", "H:JT98765432 D:2KQJT98", None, "AC")


def one_card_game(deal=DEAL, start_balances=None, **options) -> Game:
    rules = {"one_card_kitty": True, **options}
    return Game(rules, seed=1, first_dealer=0, deals=[deal], start_balances=start_balances)


def test_the_preset_and_its_rules():
    rules = PRESETS["9-5-3-one-card"]
    assert rules.one_card_kitty and rules.quotas == (9, 5, 3) and rules.tricks_per_hand == rules.hand_size == 17
    assert rules.win_tricks == 13 and rules.kitty_size == 0 and rules.aside_size == 1 and rules.num_actions == 74
    assert RuleSet(one_card_kitty=True).name == "9-5-3-one-card"
    assert RuleSet(one_card_kitty=True, quotas=(8, 6, 3)).name == "custom"
    assert RuleSet(one_card_kitty=True, target_score=10).win_tricks is None  # another end condition replaces it
    assert observation_size(rules) == 900 and observation_size(PRESETS["standard"]) == 789


@pytest.mark.parametrize("option", ["pickup_before_discard", "kitty_before_exchange", "kitty_trick", "no_kitty_51"])
def test_combinations_without_sense_are_refused(option):
    with pytest.raises(RulesError, match=f"one_card_kitty .*{option}"):
        RuleSet(one_card_kitty=True, **{option: True}, quotas=(9, 5, 3) if option != "no_kitty_51" else None)


def test_quotas_must_sum_to_seventeen():
    with pytest.raises(RulesError, match="must sum to 17"):
        RuleSet(one_card_kitty=True, quotas=(8, 5, 3))


def test_the_deal_has_seventeen_cards_each_and_one_face_up():
    game = Game("9-5-3-one-card", seed=3)
    log = game.history[0]
    assert [len(h) for h in log.deal_hands] == [17, 17, 17] and len(log.kitty) == 1
    assert game.face_up == log.kitty[0] and game.kitty_mask == 1 << game.face_up
    short = {"hands": DEAL["hands"], "kitty": []}
    with pytest.raises(DealError, match="the kitty has 0 cards; it must hold the face-up card"):
        Game("9-5-3-one-card", deals=[short])


def test_after_trump_the_holder_of_2d_takes_the_face_up_card_and_puts_one_out():
    game = one_card_game()
    assert game.phase == TRUMP and game.current == 0
    game.apply(trump("S"))
    assert game.phase == TAKE and game.current == 1  # seat 1 holds 2D, not the dealer
    assert game.legal_mask() == game.hands[1] | 1 << PASS_ACTION
    with pytest.raises(IllegalActionError, match="holds 2D: it takes the face-up card AC"):
        game.apply(card("AC"))  # the face-up card itself is not one of its cards
    game.apply(card("2D"))  # 2D itself may go out
    assert game.hands[1] == mask("H:JT98765432 D:KQJT98 C:A") and game.hands[1].bit_count() == 17
    assert game.take == (1, card("2D")) and game.history[0].take == (1, card("2D"))
    assert game.phase == PLAY and game.current == 1  # the eldest leads
    log = game.history[0]
    assert log.discards == [] and log.shown == []


def test_declining_keeps_the_hands():
    game = one_card_game()
    game.apply(trump("S"))
    before = list(game.hands)
    game.apply(PASS_ACTION)
    assert game.hands == before and game.take == (1, None) and game.phase == PLAY


def test_a_face_up_2d_cannot_be_taken():
    deal = make_deal("S:AKQJT98765432 H:AKQ D:A", "H:JT98765432 D:3KQJT98", None, "2D")
    game = one_card_game(deal)
    game.apply(trump("H"))
    assert game.phase == PLAY and game.take is None
    record = game_record(game)
    assert record["hands"][0]["take"] is None and record["hands"][0]["deal"]["kitty"] == ["2D"]
    assert "nobody can take it" in render_table(game, 2)


def test_2d_received_in_the_exchange_makes_the_receiver_decide():
    deal = make_deal("S:AKQJT98765432 D:2 H:AKQ", "H:JT98765432 C:KQJT98 D:A", None, "AC")
    game = one_card_game(deal, start_balances=[2, -1, -1])  # seat 0 deals, is up 2: one card to each
    order = [r for r, _ in game.cards_to_send()]
    assert order == [2, 1]  # lower current quota first: middle (3), then eldest (5)
    game.apply(card("2D"))  # to seat 2, which holds diamonds above it: it keeps 2D
    game.apply(card("2S"))  # to seat 1, which has no spade: 2S comes back
    assert game.hands[2] >> card("2D") & 1
    game.apply(trump("S"))
    assert game.phase == TAKE and game.current == 2


@pytest.mark.parametrize("options", [{}, {"trump_before_exchange": True}, {"trump_after_send": True}])
def test_the_take_comes_after_the_exchange_and_trump(options):
    game = one_card_game(**options, start_balances=[-1, 2, -1])
    phases = []
    rng = random.Random(1)
    while game.phase != PLAY:
        phases.append(game.phase)
        game.apply(rng.choice(game.legal_actions()))
    assert phases[-1] == TAKE and phases.count(TAKE) == 1 and TRUMP in phases


def _last_trick_position(tricks_won, dealer_wins: bool) -> Game:
    """The last trick of hand 1, seat 0 dealing (quota 9), spades trump: seat 0 wins it or not."""
    hands = [mask("AS" if dealer_wins else "2C"), mask("3H"), mask("4H")]
    return Game.from_position(
        "9-5-3-one-card",
        hand_number=1,
        dealer=0,
        scores=[0, 0, 0],
        previous_balances=None,
        phase=PLAY,
        to_act=1,
        hands=hands,
        kitty=mask("AC"),
        kitty_taken=False,
        trump=3,
        discards=[],
        trick=[],
        trick_leader=1,
        tricks_won=tricks_won,
        tricks_played=16,
        played=[0, 0, 0],
        voids=[0, 0, 0],
        take=(1, None),
    )


@pytest.mark.parametrize("dealer_wins, tricks, winner", [(True, 13, 0), (False, 12, None)])
def test_thirteen_tricks_win_twelve_do_not(dealer_wins, tricks, winner):
    game = _last_trick_position([12, 2, 2], dealer_wins)
    game.apply(card("3H"))
    game.apply(card("4H"))
    game.apply(card("AS" if dealer_wins else "2C"))
    assert game.tricks_won[0] == tricks and game.phase == OVER
    assert game.winner == winner and game.truncated == (winner is None)


@pytest.mark.parametrize(
    "rules",
    [
        "9-5-3-one-card",
        {"one_card_kitty": True, "trump_before_exchange": True, "max_exchange": 2},
        {"one_card_kitty": True, "trump_after_send": True, "chips": True, "fixed_hands": 6},
        {"one_card_kitty": True, "dealer_assigns_quotas": True},
        {"one_card_kitty": True, "first_up_exchanges_first": True, "quotas": (7, 5, 5)},
    ],
    ids=str,
)
def test_random_games_follow_the_rules(rules):
    taken = declined = 0
    for seed in range(40):
        game = random_game(rules, seed, max_hands=12)
        check_history(game)
        record = json.loads(json.dumps(game_record(game)))
        assert replay(record) == record
        for log in game.history:
            taken += log.take is not None and log.take[1] is not None
            declined += log.take is not None and log.take[1] is None
    assert taken and declined


def test_planted_bugs_are_caught(monkeypatch):
    assert not _caught("9-5-3-one-card", range(5), max_hands=6)

    def dealer_decides(self):  # the dealer decides instead of the holder of 2D
        self.phase, self.current = TAKE, self.dealer

    original_next = Game._next_stage

    def next_stage(self):
        original_next(self)
        if self.phase == TAKE:
            dealer_decides(self)

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_next_stage", next_stage)
        assert _caught("9-5-3-one-card", range(10), max_hands=6)

    def keep_both(self, action):  # the face-up card joins the hand but nothing goes out
        seat = self.current
        self.hands[seat] |= self.kitty_mask
        self.take = self.log.take = (seat, None if action == PASS_ACTION else action)
        self._next_stage()

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_take", keep_both)
        assert _caught("9-5-3-one-card", range(10), max_hands=6)


def test_views_observation_and_render():
    game = one_card_game()
    game.apply(trump("S"))
    taker = player_view(game, 1)
    assert taker.face_up == card("AC") and taker.take is None and taker.put_out is None
    parts = describe(encode(taker), game.rules)
    assert parts["taking"][0] == 1.0 and parts["phase"].sum() == 0 and parts["face_up"][card("AC")] == 1.0
    assert "To act: player_1 (take the face-up card AC: put out a card, or 58=decline)" in render_table(taker)
    game.apply(card("8D"))
    for seat in range(3):
        view = player_view(game, seat)
        assert view.take == (1, True)
        parts = describe(encode(view), game.rules)
        assert parts["face_up_taker"].tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]][seat]
        text = render_table(view)
        assert "Face-up card: AC, taken by player_1" in text
        if seat == 1:
            assert view.put_out == card("8D") and parts["put_out"][card("8D")] == 1.0
            assert "You put out of play: 8D" in text
        else:
            assert view.put_out is None and parts["put_out"].sum() == 0 and "8D" not in text
    assert "put out 8D" in render_table(game)


def _taken(put_out: str) -> Game:
    game = one_card_game()
    game.apply(trump("S"))
    game.apply(card(put_out))
    return game


@pytest.mark.parametrize("viewer", [0, 2])
def test_the_card_put_out_does_not_leak(viewer):
    """Two games that differ only in the card seat 1 put out (and so in its hand): the others see the same."""
    a, b = _taken("8D"), _taken("9D")
    rng = random.Random(7)
    steps = 0
    while a.phase != OVER:
        va, vb = player_view(a, viewer), player_view(b, viewer)
        assert np.array_equal(encode(va), encode(vb)) and render_table(va) == render_table(vb)
        common = set(a.legal_actions()) & set(b.legal_actions())
        if not common:
            break  # seat 1 must now play the card it kept in one game only: public from here on
        action = rng.choice(sorted(common))
        a.apply(action)
        b.apply(action)
        steps += 1
    assert steps > 10


def test_record_and_replay_check_the_take():
    game = one_card_game()
    game.apply(trump("S"))
    record = game_record(game)
    assert record["hands"][0]["take"] is None and replay(record) == record
    game.apply(card("8D"))
    record = game_record(game)
    assert record["hands"][0]["take"] == {"seat": 1, "card": "8D"} and record["hands"][0]["discards"] == []
    assert replay(record) == record
    wrong = json.loads(json.dumps(record))
    wrong["hands"][0]["take"] = {"seat": 2, "card": "8D"}
    with pytest.raises(Exception, match="hand 1, take, seat: the record has seat 2, but seat 1 holds 2D"):
        replay(wrong)
    wrong["hands"][0]["take"] = {"seat": 1, "card": "AS"}
    with pytest.raises(Exception, match="hand 1, take, card: illegal action"):
        replay(wrong)
    plain = game_record(random_game("standard", 4, max_hands=1))
    plain["hands"][0]["take"] = None
    with pytest.raises(Exception, match="hand 1, take: a record has 'take' only when"):
        replay(plain)
    game = one_card_game()
    game.apply(trump("S"))
    game.apply(PASS_ACTION)
    record = game_record(game)
    assert record["hands"][0]["take"] == {"seat": 1, "card": None} and replay(record) == record


def test_heuristic_takes_a_better_card_and_declines_a_worse_one():
    from agents.players.heuristic import choose_take, heuristic_action

    # spades trump; the face-up AC is a master: take it and put out the low singleton diamond
    hand = mask("S:AKQ H:AKQJ98765 D:2 C:32")
    out = ((1 << 52) - 1) & ~hand & ~mask("AC")
    assert choose_take(hand, card("AC"), 3, out) == card("2D")
    # a face-up 2H is worth no more than the 2D it would put out: decline; a 4C is worth more: take it
    assert choose_take(hand, card("2H"), 3, out & ~mask("2H") | mask("AC")) == PASS_ACTION
    assert choose_take(hand, card("4C"), 3, out & ~mask("4C") | mask("AC")) == card("2D")
    # a trump face up beats a side card
    assert choose_take(hand, card("2S"), 3, out & ~mask("2S") | mask("AC")) == card("2D")
    game = one_card_game()
    game.apply(trump("S"))
    assert heuristic_action(player_view(game, 1)) in game.legal_actions()


def test_cards_cannot_be_asked_for_outside_the_take():
    game = one_card_game()
    with pytest.raises(IllegalActionError, match="the dealer must name trump"):
        game.apply(PASS_ACTION)
    standard = Game(seed=1)
    with pytest.raises(IllegalActionError, match="out of range: action ids are 0-55"):
        standard.apply(PASS_ACTION)


@pytest.mark.parametrize("rules", ["9-5-3-one-card", {"one_card_kitty": True, "trump_after_send": True}], ids=str)
def test_the_world_sampler_knows_the_face_up_card_and_the_card_put_out(rules):
    """The real deal is always allowed; sampled worlds put the taken card with its taker and one card out."""
    from agents.players.heuristic import heuristic_action
    from agents.search.world_sampler import OUT, constraints_of, sample_world, world_from_view

    checked = 0
    for seed in range(12):
        game = Game(rules, seed=seed, max_hands=3, start_balances=[2, -1, -1])
        rng = random.Random(seed)
        while game.phase != OVER:
            for seat in range(3):
                view = player_view(game, seat)
                cons = constraints_of(view)
                for other, loc in (((seat + 1) % 3, 0), ((seat + 2) % 3, 1)):
                    for c in range(52):
                        if game.hands[other] >> c & 1:
                            assert cons.allowed[c] >> loc & 1 or not cons.unknown >> c & 1
                take = game.take
                if take is not None and take[1] is not None and take[0] != seat:
                    assert cons.allowed[take[1]] >> OUT & 1 and cons.capacity[OUT] == 1
                    world = sample_world(view, rng, cons)
                    assert world.hands[take[0]] >> game.face_up & 1 or game.played[take[0]] >> game.face_up & 1
                    assert world.out.bit_count() == 1
                    if view.to_act is not None and game.phase == PLAY:
                        sampled = world_from_view(view, world)
                        assert sampled.take == (take[0], world.out.bit_length() - 1)
                        checked += 1
                elif game.face_up >= 0 and (take is None or take[1] is None):
                    assert not cons.unknown >> game.face_up & 1  # on the table: known to all
            game.apply(
                heuristic_action(player_view(game, game.current))
                if rng.random() < 0.7
                else rng.choice(game.legal_actions())
            )
    assert checked > 50
