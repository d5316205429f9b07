"""Four players (docs/rules.md 10.6): the rule set, hand-built deals that fix the quotas, the exchange
among four and the end conditions, random games checked hand by hand, and planted engine bugs.

Outcomes are forced with four-player "slot deals" (:func:`plan_four`): every seat holds exactly three
cards of each suit (3 to A), the kitty the four 2s, so every trick is played in one suit. Each suit is
split into three blocks of four ranks (3-6, 7-T, J-A); the seat holding the top card of a block wins
the trick in which that block is played. The test decides which seat wins each block, so it decides
the tricks of every seat; the expected results are derived from the rules, not read back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from helpers import cards
from test_variants import _caught, check_history, random_game

from sm_env.core.cards import make_card
from sm_env.core.game import EXCHANGE, OVER, PLAY, TRUMP, TRUMP_ACTION_BASE, DealError, Game, role_names
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.records import game_record, replay

FOUR = ("four-5-3-2-2", "four-6-3-2-1")
BLOCKS = ((3, 4, 5, 6), (7, 8, 9, 10), (11, 12, 13, 14))
SPADES = 3


@dataclass
class Plan:
    dealer: int
    tricks: list[int]
    deal: dict
    cards: list[dict]  # seat -> {slot: card it plays in that slot's trick}
    order: list[tuple[int, int]]
    discards: list[int]


def plan_four(tricks: list[int], dealer: int) -> Plan:
    """A four-player deal (by absolute seat) and script giving seat s exactly tricks[s] tricks.

    The dealer's wins take the low blocks first (at most 8: it discards its card of each top block
    blind and plays the 2 from the kitty there instead)."""
    assert sum(tricks) == 12 and min(tricks) >= 0 and tricks[dealer] <= 8
    slots = [(suit, block) for block in range(3) for suit in range(4)]
    winner: dict[tuple[int, int], int] = {}
    pool = iter(slots)
    for seat in [(dealer + k) % 4 for k in range(4)]:
        for _ in range(tricks[seat]):
            winner[next(pool)] = seat
    played: list[dict] = [{}, {}, {}, {}]
    for slot, top_seat in winner.items():
        suit, block = slot
        ranked = [make_card(suit, r) for r in BLOCKS[block]]
        played[top_seat][slot] = ranked[3]
        for seat, card in zip([s for s in range(4) if s != top_seat], ranked[:3], strict=True):
            played[seat][slot] = card
    hands = [sorted(played[s].values()) for s in range(4)]
    kitty = [make_card(suit, 2) for suit in range(4)]
    discards = []
    for suit in range(4):
        slot = (suit, 2)
        assert winner[slot] != dealer
        discards.append(played[dealer][slot])
        played[dealer][slot] = make_card(suit, 2)
    return Plan(dealer, list(tricks), {"hands": hands, "kitty": kitty}, played, slots, discards)


def play_four(game: Game, plan: Plan) -> None:
    """Play one planned hand from the trump decision to its last trick (no exchange)."""
    assert game.dealer == plan.dealer and game.phase == TRUMP
    game.apply(TRUMP_ACTION_BASE + SPADES)
    for card in plan.discards:
        game.apply(card)
    assert game.phase == PLAY
    for slot in plan.order:
        for _ in range(4):
            game.apply(plan.cards[game.current_player][slot])
    assert game.history[-1 if game.is_over else -2].tricks_won == plan.tricks


def planned(rules, tricks_by_hand: list[list[int]], first_dealer: int = 0, **kwargs) -> tuple[Game, list[Plan]]:
    """A game whose first hands are planned; no exchange, so that every planned deal is played as dealt."""
    plans = [plan_four(t, (first_dealer + i) % 4) for i, t in enumerate(tricks_by_hand)]
    rules = RuleSet.from_any(rules).replace(no_exchange=True)
    return Game(rules=rules, seed=0, first_dealer=first_dealer, deals=[p.deal for p in plans], **kwargs), plans


# --------------------------------------------------------------------- the rule set


def test_four_player_presets():
    five = PRESETS["four-5-3-2-2"]
    six = PRESETS["four-6-3-2-1"]
    assert five.num_players == six.num_players == 4
    assert five.quotas == (5, 3, 2, 2) and six.quotas == (6, 3, 2, 1)
    for rules in (five, six):
        assert rules.tricks_per_hand == rules.hand_size == 12 and rules.kitty_size == 4
        assert 4 * rules.hand_size + rules.kitty_size == 52
        assert rules.win_tricks == 9 and rules.num_actions == 56
        assert rules.options()["players"] == 4
    assert RuleSet(players=4) == five and RuleSet(players=4).name == "four-5-3-2-2"
    assert RuleSet(players=4, quotas=(6, 3, 2, 1)).name == "four-6-3-2-1"
    assert RuleSet(players=4, quotas=(3, 3, 3, 3)).name == "custom"
    assert RuleSet(players=4, fixed_hands=8).win_tricks is None  # another end condition replaces the 9
    assert role_names(five) == ("dealer", "eldest", "third", "fourth")
    assert RuleSet.from_any({"players": 4, "quotas": [6, 3, 2, 1]}) == six
    assert PRESETS["standard"].num_players == 3


@pytest.mark.parametrize(
    "options, message",
    [
        ({"players": 5}, "'players' must be 3 or 4, got 5"),
        ({"players": 2}, "'players' must be 3 or 4"),
        ({"players": True}, "'players' must be 3 or 4"),
        ({"players": 4.0}, "'players' must be 3 or 4"),
        ({"players": 4, "quotas": [8, 5, 3]}, r"4 whole numbers >= 0 \[dealer, eldest, third, fourth\]"),
        ({"players": 4, "quotas": [6, 4, 3, 3]}, "sum to 16, but a hand has 12 tricks"),
        ({"players": 3, "quotas": [5, 3, 2, 2]}, "3 whole numbers"),
        ({"players": 4, "no_kitty_51": True}, "no_kitty_51 makes no sense with four players"),
        ({"players": 4, "kitty_trick": True, "quotas": [5, 3, 2, 2]}, "kitty_trick makes no sense with four players"),
        ({"players": 4, "dealer_assigns_quotas": True}, "dealer_assigns_quotas makes no sense with four players"),
        ({"players": 4, "quotas": [12, 0, 0, 0], "dealer_makes_quota": "up"}, "only 12 tricks"),
        ({"players": 4, "win_tricks": 13}, "'win_tricks' must be 1..12"),
        ({"players": 4, "max_exchange": 13}, "'max_exchange' must be 1..12"),
    ],
    ids=str,
)
def test_four_player_refusals(options, message):
    with pytest.raises(RulesError, match=message):
        RuleSet.from_any(options)


@pytest.mark.parametrize(
    "preset,option", [("9-5-3-one-card", "one_card_kitty"), ("woburn-auction", "auction"), ("calls", "calls")]
)
def test_four_players_refuse_the_three_player_options_of_section_10(preset, option):
    """docs/rules.md 10.2, 10.3, 10.5 and 10.6: the auction, calls and the one-card kitty need three players."""
    with pytest.raises(RulesError, match=f"{option} makes no sense with four players"):
        RuleSet.from_any({"players": 4, option: True})
    with pytest.raises(RulesError, match=f"{option} makes no sense with four players"):
        PRESETS[preset].replace(players=4, quotas=None)
    with pytest.raises(RulesError, match=f"{option} makes no sense with four players"):
        PRESETS["four-5-3-2-2"].replace(**{option: True})
    assert getattr(PRESETS[preset], option) and PRESETS[preset].num_players == 3  # fine with three


def test_four_players_combine_with_the_other_options():
    for options in (
        {"players": 4, "max_exchange": 2, "chips": True, "fixed_hands": 8},
        {"players": 4, "pickup_before_discard": True, "trump_after_kitty": True, "win_margin": 3},
        {"players": 4, "trump_after_send": True, "kitty_before_exchange": True, "target_score": 8},
        {"players": 4, "trump_before_exchange": True, "first_up_exchanges_first": True, "dealer_makes_quota": "up"},
        {"players": 4, "quotas": [3, 3, 3, 3], "dealer_makes_quota": True},
    ):
        for seed in range(12):
            game = random_game(options, seed, max_hands=25)
            check_history(game)
            record = game_record(game)
            assert replay(record) == record


def test_deals_and_seats_are_checked_for_four():
    rules = PRESETS["four-5-3-2-2"]
    plan = plan_four([5, 3, 2, 2], 0)
    three = {"hands": plan.deal["hands"][:3], "kitty": plan.deal["kitty"]}
    with pytest.raises(DealError, match="list of 4 hands"):
        Game(rules, deals=[three])
    with pytest.raises(ValueError, match="seat 0, 1, 2 or 3"):
        Game(rules, first_dealer=4)
    with pytest.raises(ValueError, match="4 integers"):
        Game(rules, start_balances=[1, -1, 0])
    with pytest.raises(ValueError, match="eldest -3..9, third -2..10, fourth -2..10"):
        Game(rules, start_balances=[11, -11, 0, 0])
    assert Game(rules, seed=3, first_dealer=3).dealer == 3
    assert {Game(rules, seed=s).dealer for s in range(40)} == {0, 1, 2, 3}


# --------------------------------------------------------------------- quotas and score


@pytest.mark.parametrize("preset", FOUR)
@pytest.mark.parametrize("dealer", range(4))
def test_quotas_follow_the_roles_and_score(preset, dealer):
    rules = PRESETS[preset]
    tricks = [0, 0, 0, 0]
    for role, count in enumerate((4, 5, 1, 2)):  # dealer 4, eldest 5, third 1, fourth 2
        tricks[(dealer + role) % 4] = count
    game, (plan,) = planned(rules, [tricks], first_dealer=dealer, max_hands=1)
    quotas = [rules.quotas[(s - dealer) % 4] for s in range(4)]
    assert game.quotas == quotas and game.log.quotas == quotas
    assert game.current_player == dealer and len(game.hands) == 4
    assert all(h.bit_count() == 12 for h in game.hands) and game.kitty_mask.bit_count() == 4
    play_four(game, plan)
    log = game.history[0]
    assert log.tricks_won == tricks and log.balances == [tricks[s] - quotas[s] for s in range(4)]
    assert sum(log.balances) == 0 and log.scores == log.balances
    assert log.tricks[0].leader == (dealer + 1) % 4  # the eldest leads
    assert all(len(t.cards) == 4 for t in log.tricks) and len(log.tricks) == 12
    assert game.truncated and game.winner is None


# --------------------------------------------------------------------- the exchange among four


def exchange_game(start_balances, quotas=(5, 3, 2, 2), dealer=0, **options) -> Game:
    rules = RuleSet(players=4, quotas=quotas, **options)
    return Game(rules, seed=1, first_dealer=dealer, start_balances=start_balances)


def send_lowest(game: Game) -> list[tuple[int, list[tuple[int, int]]]]:
    """Play the whole exchange sending the lowest legal card; the rounds seen (sender, cards_to_send)."""
    rounds = []
    while game.phase == EXCHANGE:
        if not rounds or rounds[-1][0] != game.current_player:
            rounds.append((game.current_player, list(game.cards_to_send())))
        game.apply(game.legal_actions()[0])
    return rounds


@pytest.mark.parametrize(
    "start, quotas, dealer, options, rounds",
    [
        # one up (the dealer, quota 5), three down: lower quota first, ties (2, 2) in play order from the eldest
        ([3, -1, -1, -1], (5, 3, 2, 2), 0, {}, [(0, [(2, 1), (3, 1), (1, 1)])]),
        # the same with dealer 2: seats 0 (third) and 1 (fourth) have quota 2; seat 3 is eldest (3)
        ([-1, -1, 3, -1], (5, 3, 2, 2), 2, {}, [(2, [(0, 1), (1, 1), (3, 1)])]),
        # two up, two down: 5 up 3 serves the 2 (down 2) then the 3 (down 2) with what is left; then 2 up 1
        ([3, -2, 1, -2], (5, 3, 2, 2), 0, {}, [(0, [(3, 2), (1, 1)]), (2, [(1, 1)])]),
        # two up with equal quotas: third before fourth; one receiver
        ([-2, 0, 1, 1], (5, 3, 2, 2), 0, {}, [(2, [(0, 1)]), (3, [(0, 1)])]),
        # all quotas equal: play order from the eldest (eldest, third, fourth, dealer), unlike three players
        ([1, 1, -1, -1], (3, 3, 3, 3), 0, {}, [(1, [(2, 1)]), (0, [(3, 1)])]),
        # 6-3-2-1: three up, one down; higher current quota first
        ([1, 1, 1, -3], (6, 3, 2, 1), 0, {}, [(0, [(3, 1)]), (1, [(3, 1)]), (2, [(3, 1)])]),
        # max_exchange 3 as the exchanges come: the up player gives at most 3 in all
        ([4, -2, -1, -1], (5, 3, 2, 2), 0, {"max_exchange": 3}, [(0, [(2, 1), (3, 1), (1, 1)])]),
        # max_exchange 2: the down player takes at most 2 in all, from two senders
        ([-4, 2, 1, 1], (5, 3, 2, 2), 0, {"max_exchange": 2}, [(1, [(0, 2)])]),
        ([-3, 1, 1, 1], (5, 3, 2, 2), 0, {"max_exchange": 2}, [(1, [(0, 1)]), (2, [(0, 1)])]),
    ],
    ids=str,
)
def test_exchange_order_and_counts(start, quotas, dealer, options, rounds):
    game = exchange_game(start, quotas, dealer, **options)
    assert send_lowest(game) == rounds
    flat = [(sender, receiver, count) for sender, targets in rounds for receiver, count in targets]
    assert [(e.sender, e.receiver, e.count) for e in game.log.exchanges] == flat
    assert game.phase == TRUMP
    assert all(h.bit_count() == 12 for h in game.hands)  # hand sizes are unchanged


def test_one_up_three_down_is_simultaneous_and_returns_the_top_cards():
    # dealer 0 (quota 5) up 3; seats 2, 3 (quota 2) and 1 (quota 3) down 1 each
    deal = {
        "hands": [
            cards("C:345 D:345 H:345 S:345"),
            cards("C:6789 D:6789 H:6789"),  # seat 1: no spades
            cards("C:TJQ D:TJQ H:TJQ S:678"),
            cards("C:KA D:KA H:KA S:9TJQKA"),
        ],
        "kitty": cards("2C 2D 2H 2S"),
    }
    game = Game(RuleSet(players=4), seed=0, first_dealer=0, deals=[deal], start_balances=[3, -1, -1, -1])
    before = list(game.hands)
    game.apply(cards("3C")[0])  # to seat 2
    assert game.hands[2] == before[2]  # nothing moves before the last card of the round
    game.apply(cards("3S")[0])  # to seat 3
    assert not game.log.exchanges[0].delivered
    game.apply(cards("4S")[0])  # to seat 1, which has no spade: its own 4S goes back
    assert game.phase == TRUMP
    assert [(e.receiver, e.sent, e.returned) for e in game.log.exchanges] == [
        (2, cards("3C"), cards("QC")),
        (3, cards("3S"), cards("AS")),
        (1, cards("4S"), cards("4S")),
    ]


def test_second_up_player_exchanges_with_the_hand_as_it_stands():
    # dealer 0; seats 2 and 3 (quota 2, third first) up 1, seat 0 down 2. Seat 2 sends AH (seat 0 has no
    # higher heart, so AH comes back)... then seat 3's heart request gets seat 0's top heart.
    deal = {
        "hands": [
            cards("C:345 D:345 H:345 S:345"),
            cards("C:6789 D:6789 S:6789"),
            cards("C:TJQ D:TJQ H:67A S:TJQ"),
            cards("C:KA D:KA H:89TJQK S:KA"),
        ],
        "kitty": cards("2C 2D 2H 2S"),
    }
    game = Game(RuleSet(players=4), seed=0, first_dealer=0, deals=[deal], start_balances=[-2, 0, 1, 1])
    assert game.current_player == 2
    game.apply(cards("6H")[0])
    assert game.log.exchanges[0].returned == cards("6H")  # seat 0's top heart is the 6H just received
    assert game.current_player == 3
    game.apply(cards("8H")[0])
    assert game.log.exchanges[1].returned == cards("8H")
    assert game.phase == TRUMP


def test_hand_two_exchange_follows_hand_one_balances():
    # hand 1, dealer 0 (5-3-2-2): tricks 7, 1, 4, 0 -> balances +2, -2, +2, -2. Hand 2, dealer 1: quotas by
    # seat 2, 5, 3, 2. Up: seat 2 (quota 3) then seat 0 (quota 2); down, lower quota first: seat 3 then seat 1.
    plans = [plan_four([7, 1, 4, 0], 0), plan_four([0, 5, 3, 4], 1)]
    game = Game("four-5-3-2-2", seed=0, first_dealer=0, deals=[p.deal for p in plans])
    play_four(game, plans[0])
    assert game.history[0].balances == [2, -2, 2, -2] and game.hand_number == 2 and game.dealer == 1
    assert game.quotas == [2, 5, 3, 2]
    assert send_lowest(game) == [(2, [(3, 2)]), (0, [(1, 2)])]


# --------------------------------------------------------------------- end conditions


@pytest.mark.parametrize("preset", FOUR)
@pytest.mark.parametrize("eldest_tricks, over", [(9, True), (8, False)])
def test_nine_tricks_win(preset, eldest_tricks, over):
    tricks = [1, eldest_tricks, 12 - eldest_tricks - 1, 0]
    game, (plan,) = planned(preset, [tricks], first_dealer=0, max_hands=2)
    play_four(game, plan)
    assert game.is_over == over and (game.winner == 1) == over
    assert game.hand_number == (1 if over else 2)


def test_dealer_makes_quota_counts_from_hand_four():
    rules = {"players": 4, "dealer_makes_quota": True}
    # every dealer makes its quota 5 exactly; hands 1-3 go on, hand 4 ends the game (a full round of deals)
    hands = [[5, 3, 2, 2], [2, 5, 3, 2], [2, 2, 5, 3], [3, 2, 2, 5]]
    game, plans = planned(rules, hands, first_dealer=0)
    for k, plan in enumerate(plans):
        assert not game.is_over and game.hand_number == k + 1
        play_four(game, plan)
    assert game.is_over and game.winner == 3 and game.hand_number == 4


def test_fixed_hands_and_chips_with_four():
    rules = {"players": 4, "fixed_hands": 4, "chips": True}
    # hand 1 dealer 0 (5-3-2-2): 7, 1, 4, 0 -> +2 -2 +2 -2: each up wins 2 from each of 2 down -> +4 -4 +4 -4
    hands = [[7, 1, 4, 0], [2, 5, 3, 2], [2, 2, 5, 3], [3, 2, 2, 5]]
    game, plans = planned(rules, hands, first_dealer=0)
    for plan in plans:
        play_four(game, plan)
    assert game.history[0].chips == [4, -4, 4, -4]
    assert game.is_over and game.winner == [0, 2] and game.scores == [4, -4, 4, -4]


# --------------------------------------------------------------------- random games, planted bugs


@pytest.mark.parametrize("preset", FOUR)
def test_random_games_follow_the_rules(preset):
    won = 0
    for seed in range(60):
        game = random_game(preset, 5000 + seed, max_hands=60)
        check_history(game)
        won += game.winner is not None
        record = game_record(game)
        assert len(record["hands"][0]["deal"]["hands"]) == 4
    assert won > 30


def test_start_balances_with_every_shape_of_exchange():
    rng = random.Random(7)
    shapes = set()
    for seed in range(300):
        cuts = sorted(rng.randint(0, 12) for _ in range(3))  # tricks of an imaginary hand dealt by seat 0
        tricks = [b - a for a, b in zip([0, *cuts], [*cuts, 12], strict=True)]
        balances = [t - q for t, q in zip(tricks, (5, 3, 2, 2), strict=True)]
        game = random_game({"players": 4, "max_exchange": rng.choice([None, 2, 3])}, seed, 3, start_balances=balances)
        check_history(game)
        shapes.add((sum(b > 0 for b in balances), sum(b < 0 for b in balances)))
    assert {(1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2)} <= shapes


def test_planted_bugs_in_four_players_are_caught(monkeypatch):
    assert not _caught("four-5-3-2-2", range(10))
    original_plan = Game._exchange_plan

    def three_player_ties(self, balances):  # ties in role order dealer, eldest, ... as with three players
        plan = original_plan(self, balances)
        if len(plan) > 1 and self.quotas[plan[0][0]] == self.quotas[plan[1][0]]:
            plan[0], plan[1] = plan[1], plan[0]
        return plan

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_exchange_plan", three_player_ties)
        assert _caught("four-5-3-2-2", range(40))
    original_winners = Game._game_winners

    def twelve_to_win(self, balances):  # the three-player 12-trick rule
        winners = original_winners(self, balances)
        return winners if winners is None or self.tricks_won[winners[0]] >= 12 else None

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_game_winners", twelve_to_win)
        assert _caught("four-6-3-2-1", range(40))

    def no_partial(self, balances):  # each receiver gets its whole deficit from the first sender
        plan = original_plan(self, balances)
        seen = set()
        out = []
        for sender, targets in plan:
            kept = [(r, c) for r, c in targets if r not in seen]
            seen.update(r for r, _ in kept)
            if kept:
                out.append((sender, kept))
        return out

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_exchange_plan", no_partial)
        assert _caught({"players": 4, "quotas": [6, 3, 2, 1]}, range(60))


def test_game_over_for_four():
    game = random_game("four-6-3-2-1", 3, max_hands=40)
    assert game.phase == OVER and game.legal_mask() == 0 and game.current_player is None


# --------------------------------------------------------------------- env, render, records


def test_env_has_four_agents_and_the_four_player_layout():
    import numpy as np

    import sm_env

    e = sm_env.env(rules="four-6-3-2-1", render_mode="rgb_array", max_hands=2)
    e.reset(seed=5, options={"start_balances": [1, -1, 1, -1]})
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert e.observation_space("player_3")["observation"].shape == (1016,)
    assert e.action_space("player_3").n == 56
    with pytest.raises(ValueError, match="unknown agent 'player_4'"):
        e.observe("player_4")
    assert sm_env.env().unwrapped.possible_agents == ["player_0", "player_1", "player_2"]
    rng = random.Random(0)
    seen = set()
    while e.agents:
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        seen.add(e.agent_selection)
        assert info["winners"].shape == (4,)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen == set(e.possible_agents)
    picture = e.render()
    assert picture.shape == (600, 960, 3)
    assert sum(e.unwrapped._cumulative_rewards.values()) == 0


def test_result_rewards_with_four():
    from sm_env.core.episode import result_rewards

    assert result_rewards([2], 4) == (-1 / 3, -1 / 3, 1.0, -1 / 3)
    assert result_rewards([0, 3], 4) == (0.5, -0.5, -0.5, 0.5)
    assert result_rewards([0, 1, 2, 3], 4) == (0.0, 0.0, 0.0, 0.0)


def test_replay_checks_four_player_records_strictly():
    import copy

    from sm_env.records.format import ReplayError

    game = random_game("four-5-3-2-2", 11, max_hands=3)
    record = game_record(game)
    assert replay(record) == record and len(record["hands"][0]["tricks"][0]["cards"]) == 4

    def error(change) -> str:
        broken = copy.deepcopy(record)
        change(broken)
        with pytest.raises(ReplayError) as err:
            replay(broken)
        return str(err.value)

    def winner(r):
        trick = r["hands"][0]["tricks"][2]
        trick["winner"] = (trick["winner"] + 1) % 4

    assert "trick 3" in error(winner)
    assert "a trick has 4" in error(lambda r: r["hands"][0]["tricks"][0]["cards"].append("2C"))
    assert "only 3 card(s)" in error(lambda r: r["hands"][0]["tricks"][0]["cards"].pop())
    assert "list of 4 integers" in error(lambda r: r["hands"][0]["tricks_won"].pop())
    assert "seat 0, 1, 2 or 3" in error(lambda r: r["hands"][0].update(dealer=4))
    assert "list of 4 hands" in error(lambda r: r["hands"][0]["deal"]["hands"].pop())
    assert "3 whole numbers" in error(lambda r: r["rules"].update(players=3))
    three = game_record(random_game("standard", 1, max_hands=1))
    three["first_dealer"] = 3
    with pytest.raises(ReplayError, match="seat 0, 1 or 2"):
        replay(three)


def test_vector_engine_plays_four_players_as_the_game():
    from sm_env.compiled.batch import VectorGame, unsupported_options
    from sm_env.compiled.lockstep import lockstep

    assert unsupported_options(PRESETS["four-5-3-2-2"]) == []
    assert VectorGame(num_games=2, rules="four-6-3-2-1", seed=0).num_players == 4
    result = lockstep("four-6-3-2-1", num_games=4, num_slots=4, seed=1, max_hands=3, all_seats=True)
    assert result.games >= 4 and result.hands > 4  # tests/test_vector.py has the rest


# --------------------------------------------------------------------- evaluation


def test_evaluation_seats_every_agent_everywhere_with_four():
    from training.evaluation.evaluate import evaluate, schedule

    every = schedule(4, 4)
    assert len(every) == 24 and len(set(every)) == 24
    assert all(sorted(seating) == [0, 1, 2, 3] for seating in every)
    assert schedule(2, 4) == [(0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)]
    with pytest.raises(ValueError, match="4 players needs 2 or 4 agents, got 3"):
        schedule(3, 4)
    with pytest.raises(ValueError, match="4 players needs 2 or 4 agents, got 3"):
        evaluate(["heuristic", "random", "random"], deals=1, rules="four-5-3-2-2", progress=False)
    with pytest.raises(ValueError, match="dealer must be a seat 0-3"):
        evaluate(["heuristic", "random"], deals=1, rules="four-5-3-2-2", dealer=4, progress=False)
    result = evaluate(
        ["heuristic", "random"], deals=30, mode="hand", seed=2, workers=1, rules="four-5-3-2-2", progress=False
    )
    assert result.roles() == ("dealer", "eldest", "third", "fourth")
    # 4 rotations of 30 deals: the heuristic plays 120 hands, 30 in each role; the three copies of random 360
    assert result.counts["heuristic"]["all"]["hands"] == 120 and result.counts["random"]["all"]["hands"] == 360
    assert all(result.counts["heuristic"][role]["hands"] == 30 for role in result.roles())
    diff = result.pairwise[("heuristic", "random")]
    assert diff.lo > 0.5, diff  # about +1.9 tricks a hand
    assert "fourth" in result.table()
    four = evaluate(
        ["heuristic", "random", "heuristic", "random"], deals=2, mode="game", seed=1, workers=1,
        rules="four-6-3-2-1", max_hands=3, bootstrap=100, progress=False,
    )  # fmt: skip
    assert len(four.config["seatings"]) == 24 and four.counts["heuristic"]["all"]["games"] == 2 * 24


def test_the_browser_table_seats_four_players():
    pytest.importorskip("sm_web")
    from sm_web.sessions import WebError, build_game

    played = build_game({"rules": "four-5-3-2-2", "seat": 3, "opponents": ["heuristic", "random", "heuristic"]})
    assert len(played.state()["players"]) == 4 and played.state()["seat"] == 3
    with pytest.raises(WebError, match="opponents must be a list of three agent specs"):
        build_game({"rules": "four-5-3-2-2", "opponents": ["heuristic", "random"]})
