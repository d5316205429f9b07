"""The Woburn first-round auction (docs/rules.md 10.2, option ``auction``, preset ``woburn-auction``).

Hand-built auctions fix the winner, the quotas of hand 1 and the pass-outs;
random games are checked entry by entry against the rules (and by
``check_history`` for the hands played); planted engine bugs must be caught;
bids are public.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from helpers import make_deal
from test_variants import check_history

from sm_env.core.game import (
    AUCTION_QUOTAS,
    BID,
    BID_ACTION_BASE,
    OVER,
    PASS_ACTION,
    PLAY,
    TRUMP,
    Game,
    IllegalActionError,
    check_start_balances,
)
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.display.render import render_table
from sm_env.observation import describe, encode, observation_size
from sm_env.records import game_record, replay

PASS = PASS_ACTION


def bid(n: int) -> int:
    return BID_ACTION_BASE + n - 8


def test_the_preset_and_refusals():
    rules = PRESETS["woburn-auction"]
    assert rules.auction and rules.max_exchange == 3 and rules.num_actions == 74 and rules.win_tricks == 12
    assert observation_size(rules) == 809
    assert RuleSet(auction=True).name == "custom"
    for option in ("kitty_trick", "one_card_kitty", "no_kitty_51", "dealer_assigns_quotas"):
        with pytest.raises(RulesError, match=f"auction .* not combined with {option}"):
            RuleSet(
                auction=True,
                **{option: True},
                quotas=(9, 5, 3) if option in ("kitty_trick", "one_card_kitty") else None,
            )
    with pytest.raises(ValueError, match="start_balances: with auction hand 1"):
        Game("woburn-auction", start_balances=[2, -1, -1])


# docs/rules.md 10.2: the winning bid -> hand 1's (eldest, middle) quotas
TABLE = {8: (5, 3), 9: (4, 3), 10: (4, 2), 11: (3, 2), 12: (2, 2), 13: (2, 1), 14: (1, 1), 15: (1, 0), 16: (0, 0)}


def test_the_quota_table_of_section_10_2():
    assert AUCTION_QUOTAS == TABLE
    for n, (eldest, middle) in TABLE.items():
        assert n + eldest + middle == 16


@pytest.mark.parametrize("n", range(8, 17))
@pytest.mark.parametrize("winner", [0, 1, 2])
def test_the_highest_bidder_deals_hand_one_with_the_bid_as_quota(n, winner):
    game = Game("woburn-auction", seed=2, first_dealer=0)
    for seat in range(3):  # seat 0 bids first
        assert game.phase == BID and game.current == seat and game.quotas is None and game.log.dealer is None
        game.apply(bid(n) if seat == winner else PASS)
    assert game.dealer == winner and game.phase == TRUMP and game.current == winner
    eldest, middle = AUCTION_QUOTAS[n]
    assert (
        game.quotas[winner] == n and game.quotas[(winner + 1) % 3] == eldest and game.quotas[(winner + 2) % 3] == middle
    )
    assert game.history[0].auction == [(s, n if s == winner else None) for s in range(3)]
    assert game.log.exchanges == []  # no exchange in hand 1


def test_bidding_goes_clockwise_skipping_passed_players_and_must_rise():
    game = Game("woburn-auction", seed=2, first_dealer=1)
    game.apply(bid(8))  # seat 1
    game.apply(PASS)  # seat 2
    assert game.current == 0
    with pytest.raises(IllegalActionError, match="bid more than 8"):
        game.apply(bid(8))
    game.apply(bid(9))  # seat 0
    assert game.current == 1  # seat 2 passed: skipped
    assert game.legal_mask() == (1 << PASS) | sum(1 << bid(n) for n in range(10, 17))
    game.apply(bid(11))  # seat 1
    assert game.current == 0
    game.apply(PASS)  # seat 0: only seat 1 has not passed
    assert game.dealer == 1 and game.quotas == [2, 11, 3]  # eldest seat 2 gets 3, middle seat 0 gets 2
    assert game.history[0].auction == [(1, 8), (2, None), (0, 9), (1, 11), (0, None)]


def test_a_bid_of_sixteen_leaves_only_passes():
    game = Game("woburn-auction", seed=2, first_dealer=0)
    game.apply(bid(16))
    assert game.legal_mask() == 1 << PASS
    game.apply(PASS)
    game.apply(PASS)
    assert game.dealer == 0 and game.quotas == [16, 0, 0]


def test_a_first_bidder_who_passes_never_bids_again():
    game = Game("woburn-auction", seed=2, first_dealer=0)
    game.apply(PASS)  # seat 0
    game.apply(bid(8))  # seat 1
    game.apply(bid(9))  # seat 2
    assert game.current == 1  # seat 0 passed: skipped
    game.apply(PASS)
    assert game.dealer == 2 and game.phase == TRUMP


def test_a_passed_out_deal_is_an_entry_of_its_own_and_the_next_seat_bids_first():
    deals = [make_deal(None, "C:23456789TJQKA D:234", "H:23456789TJQKA D:567", "D:89TJ")] * 2
    game = Game("woburn-auction", seed=2, first_dealer=2, deals=deals, max_hands=5)
    for _ in range(3):
        game.apply(PASS)
    first = game.history[0]
    assert first.passed_out and first.dealer is None and first.quotas is None and first.tricks_won is None
    assert game.hand_number == 2 and game.passed_out == 1 and game.hands_played == 1
    assert game.current == 0 and game.auction_first == 0 and game.auction_bids == ()  # the next seat clockwise
    assert game.history[1].deal_hands == first.deal_hands  # the second deal of the list
    record = game_record(game)
    entry = record["hands"][0]
    assert entry["passed_out"] is True and entry["auction"] == [{"seat": s, "bid": None} for s in (2, 0, 1)]
    assert [entry[k] for k in ("dealer", "quotas", "trump", "tricks_won", "balances", "scores")] == [None] * 6
    assert [entry[k] for k in ("exchanges", "discards", "shown", "tricks")] == [[]] * 4
    assert record["hands"][1]["number"] == 2 and record["hands"][1]["passed_out"] is False
    assert replay(record) == record


def test_passed_out_deals_count_for_max_hands_but_not_fixed_hands():
    game = Game({"auction": True, "fixed_hands": 1}, seed=3, first_dealer=0, max_hands=2)
    for _ in range(3):
        game.apply(PASS)
    game.apply(bid(8))
    game.apply(PASS)
    game.apply(PASS)
    rng = random.Random(1)
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
    assert game.hand_number == 2 and not game.truncated and game.winner is not None  # fixed_hands 1 reached
    game = Game("woburn-auction", seed=3, first_dealer=0, max_hands=2)
    for _ in range(6):
        game.apply(PASS)
    assert game.phase == OVER and game.truncated and game.hand_number == 2 and game.winner is None


def test_dealer_makes_quota_counts_hands_played_not_passed_out_deals():
    game = Game({"auction": True, "dealer_makes_quota": True}, seed=3, first_dealer=0, max_hands=3)
    for _ in range(3):
        game.apply(PASS)
    game.apply(bid(8))
    game.apply(PASS)
    game.apply(PASS)
    rng = random.Random(2)
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
    # entry 3 is the second hand played: no dealer can win by its quota before the third hand
    assert game.hand_number == 3 and game.truncated and game.winner is None


def test_hand_two_uses_the_rule_set_quotas_and_passes_the_deal_left():
    game = Game("woburn-auction", seed=5, first_dealer=0, max_hands=3)
    game.apply(PASS)
    game.apply(bid(12))  # seat 1
    game.apply(PASS)
    rng = random.Random(5)
    while game.hand_number == 1:
        game.apply(rng.choice(game.legal_actions()))
    log = game.history[0]
    assert log.quotas == [2, 12, 2] and log.balances == [log.tricks_won[s] - log.quotas[s] for s in range(3)]
    assert game.dealer == 2 and game.quotas == [5, 3, 8]  # 8-5-3 by role, dealt by the auction winner's left
    assert "auction" not in game_record(game)["hands"][1]


def random_auction_game(rules, seed: int, max_hands: int = 8) -> Game:
    rng = random.Random(seed)
    game = Game(rules, seed=seed, max_hands=max_hands)
    while game.phase != OVER:
        legal = game.legal_actions()
        action = PASS if game.phase == BID and rng.random() < 0.6 else rng.choice(legal)
        game.apply(action)
    return game


def check_auctions(game: Game) -> None:
    """docs/rules.md 10.2, entry by entry: who bids, what is legal, who deals hand 1 with which quotas."""
    first = game.first_dealer
    for log in game.history:
        passed, high, seat = set(), None, first
        for bidder, value in log.auction:
            assert bidder == seat and bidder not in passed
            if value is None:
                passed.add(bidder)
            else:
                assert 8 <= value <= 16 and (high is None or value > high[0])
                high = (value, bidder)
            live = [s for s in ((bidder + k) % 3 for k in (1, 2, 3)) if s not in passed]
            seat = live[0] if live else None
        done = len(passed) == 3 or (high is not None and len(passed) == 2)
        assert done or log is game.history[-1]
        if len(passed) == 3:
            assert log.passed_out and log.dealer is None and log.tricks == []
            first = (first + 1) % 3
            continue
        assert not log.passed_out
        if done:
            n, dealer = high
            eldest, middle = TABLE[n]
            assert log.dealer == dealer and log.quotas == [(n, eldest, middle)[(s - dealer) % 3] for s in range(3)]
        break


def test_random_games_follow_the_rules():
    outcomes = set()
    for seed in range(60):
        game = random_auction_game("woburn-auction", seed)
        check_auctions(game)
        check_history(game)  # the hands played, as any hands
        played = [log for log in game.history if not log.passed_out]
        outcomes.add((game.passed_out > 0, played[0].quotas[played[0].dealer] if played else None))
        record = json.loads(json.dumps(game_record(game)))
        assert replay(record) == record
        if played and played[0].auction and len(game.history) > game.passed_out + 1:
            # the hands played, checked like any hands: hand 1 (quotas from the table) then the 8-5-3 hands
            for later in game.history[game.passed_out + 1 :]:
                assert later.auction is None and later.quotas is None or sorted(later.quotas) == [3, 5, 8]
    assert any(passed for passed, _ in outcomes) and len({n for _, n in outcomes}) >= 5


def test_hands_after_the_auction_follow_the_rules():
    """Hands 2 on of an auction game are ordinary hands: check_history checks them from hand 2's exchange."""
    checked = 0
    for seed in range(40):
        game = random_auction_game({"auction": True, "max_exchange": 3}, seed, max_hands=10)
        hands = [log for log in game.history if not log.passed_out]
        if len(hands) < 3:
            continue
        # a game without the auction, replaying hand 2 on with hand 1's balances as start balances (when hand 1's
        # table quotas gave balances that an 8-5-3 hand could give too)
        try:
            check_start_balances(hands[0].balances, RuleSet(max_exchange=3))
        except ValueError:
            continue
        rest = Game(
            {"max_exchange": 3},
            seed=seed,
            first_dealer=hands[1].dealer,
            deals=[{"hands": log.deal_hands, "kitty": log.kitty} for log in hands[1:]],
            max_hands=len(hands) - 1,
            start_balances=hands[0].balances,
        )
        for log in hands[1:]:
            for step in _actions_of(log):
                if rest.phase == OVER:
                    break
                rest.apply(step)
        check_history(rest)
        assert [log.tricks_won for log in rest.history] == [log.tricks_won for log in hands[1 : len(rest.history) + 1]]
        checked += 1
    assert checked > 5


def _actions_of(log) -> list[int]:
    """The actions of a played hand, in the standard order (exchange, trump, discards, tricks)."""
    actions = [c for e in log.exchanges for c in e.sent]
    actions.append(52 + log.trump)
    actions += log.discards
    actions += [c for t in log.tricks for c in t.cards]
    return actions


def test_planted_bugs_are_caught(monkeypatch):
    def caught() -> bool:
        try:
            for seed in range(30):
                check_auctions(random_auction_game("woburn-auction", seed))
        except AssertionError:
            return True
        return False

    assert not caught()
    with monkeypatch.context() as patch:  # eldest and middle quotas swapped
        for n, (eldest, middle) in TABLE.items():
            patch.setitem(AUCTION_QUOTAS, n, (middle, eldest))
        assert caught()
    original = Game._bid

    def no_skip(self, action):  # the next seat bids, even one that has passed
        seat = self.current
        original(self, action)
        if self.phase == BID:
            self.current = (seat + 1) % 3

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_bid", no_skip)
        assert caught()

    def same_first(self):  # a passed-out deal: the same seat bids first again
        self.log.passed_out = True
        self.log.discards, self.log.shown, self.log.tricks = [], [], []
        self.passed_out += 1
        self._start_hand(self.auction_first, None)

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_pass_out", same_first)
        assert caught()


def test_bids_are_public():
    game = Game("woburn-auction", seed=4, first_dealer=0)
    game.apply(bid(9))
    game.apply(PASS)
    views = [player_view(game, seat) for seat in range(3)]
    for view in views:
        assert view.auction_bids == ((0, 9), (1, None)) and view.auction_high == (9, 0)
        assert view.auction_passed == (False, True, False) and view.quotas is None
        parts = describe(encode(view), game.rules)
        assert parts["bidding"][0] == 1.0 and parts["role"].sum() == 0 and parts["phase"].sum() == 0
        rel = (0 - view.seat) % 3
        assert parts["bids"][rel] == pytest.approx(9 / 16) and parts["high_bidder"][rel] == 1.0
        assert parts["bid_passed"][(1 - view.seat) % 3] == 1.0
        assert "Auction: player_0 9, player_1 pass" in render_table(view)
    assert "To act: player_2 (bid) - legal: 58=pass 61=10" in render_table(views[2])
    game.apply(PASS)
    parts = describe(encode(player_view(game, 1)), game.rules)
    assert parts["bidding"][0] == 0.0 and list(parts["hand1_quotas"] * 17) == pytest.approx(
        [4, 3, 9]
    )  # self, left, right


def test_what_others_hold_does_not_change_a_bidders_observation():
    """Two deals that differ only in the other players' cards: seat 0 sees the same through the auction."""
    a = make_deal("S:AKQJT98765432 H:AKQ", "C:23456789TJQKA D:234", None, "D:89TJ")
    b = make_deal("S:AKQJT98765432 H:AKQ", "H:23456789TJ D:234567", None, "D:89TJ")
    games = [Game("woburn-auction", seed=1, first_dealer=1, deals=[d]) for d in (a, b)]
    for action in (bid(8), PASS, bid(14), PASS):
        obs = [encode(player_view(g, 0)) for g in games]
        assert np.array_equal(obs[0], obs[1])
        for g in games:
            g.apply(action)
    assert games[0].dealer == 0 and games[0].phase == TRUMP


def test_heuristic_bids_its_estimate_and_play_goes_on():
    from helpers import mask

    from agents.players.heuristic import choose_bid, estimate_tricks, heuristic_action

    strong = mask("S:AKQJT9876 H:A D:A C:AK32")
    weak = mask("S:2345 H:2345 D:2345 C:2345")
    assert estimate_tricks(strong) >= 13 and estimate_tricks(weak) < 8
    legal = (1 << PASS) | sum(1 << bid(n) for n in range(8, 17))
    assert choose_bid(strong, legal) == bid(8) and choose_bid(weak, legal) == PASS  # the lowest bid, never more
    assert choose_bid(strong, (1 << PASS) | (1 << bid(16))) == PASS  # 16 is beyond its estimate
    game = Game("woburn-auction", seed=3, max_hands=4)
    while game.phase != OVER:
        game.apply(heuristic_action(player_view(game, game.current)))
    assert game.hand_number - game.passed_out >= 1 and game.history[-1].tricks_won is not None


def test_record_replay_checks_the_auction():
    game = random_auction_game("woburn-auction", 11, max_hands=3)
    record = game_record(game)
    assert replay(record) == record
    first = next(i for i, h in enumerate(record["hands"]) if not h["passed_out"])
    wrong = json.loads(json.dumps(record))
    bids = wrong["hands"][first]["auction"]
    bids[0]["seat"] = (bids[0]["seat"] + 1) % 3
    with pytest.raises(Exception, match=f"hand {first + 1}, auction, bid 1, seat: the record has seat"):
        replay(wrong)
    wrong = json.loads(json.dumps(record))
    wrong["hands"][first]["auction"][0]["bid"] = 17
    with pytest.raises(Exception, match="expected null \\(a pass\\) or a bid 8-16"):
        replay(wrong)
    wrong = json.loads(json.dumps(record))
    wrong["hands"][first]["passed_out"] = True
    with pytest.raises(Exception, match=f"hand {first + 1}, passed_out"):
        replay(wrong)
    if len(record["hands"]) > first + 1:
        wrong = json.loads(json.dumps(record))
        wrong["hands"][first + 1]["auction"] = []
        with pytest.raises(Exception, match="only in the entries up to and including hand 1"):
            replay(wrong)
    start = Game("woburn-auction", seed=1)
    assert game_record(start)["hands"][0]["dealer"] is None and replay(game_record(start)) == game_record(start)
    game = Game("woburn-auction", seed=1, first_dealer=0)
    game.apply(bid(10))
    record = game_record(game)
    assert record["hands"][0]["auction"] == [{"seat": 0, "bid": 10}] and replay(record) == record


def test_a_hand_one_in_play_after_the_auction():
    game = Game("woburn-auction", seed=6, first_dealer=2)
    game.apply(bid(10))
    game.apply(PASS)
    game.apply(PASS)
    game.apply(52)
    while game.phase != PLAY:
        game.apply(game.legal_actions()[0])
    assert game.current == 0  # the eldest of the auction's winner (seat 2) leads


@pytest.mark.parametrize(
    "rules",
    [
        {"auction": True, "first_up_exchanges_first": True},
        {"auction": True, "trump_after_send": True, "chips": True},
        {"auction": True, "dealer_makes_quota": "up"},
        {"auction": True, "kitty_before_exchange": True, "target_score": 8},
        {"auction": True, "fixed_hands": 5},
    ],
    ids=str,
)
def test_the_auction_combines_with_other_options(rules):
    for seed in range(15):
        game = random_auction_game(rules, seed, max_hands=12)
        check_auctions(game)
        check_history(game)
        record = json.loads(json.dumps(game_record(game)))
        assert replay(record) == record
