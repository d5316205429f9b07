"""Agents: legality, determinism, strength, the registry, and the world sampler."""

from __future__ import annotations

import json
import random

import pytest

from agents import AgentSpecError, act, make_agent
from agents.players.heuristic import HeuristicAgent, choose_discard, choose_play, choose_send, choose_trump
from agents.players.random_agent import RandomAgent
from agents.players.unseen import deck_of
from agents.search.pimc import PimcAgent
from agents.search.rollout import rollout
from agents.search.world_sampler import (
    ACROSS,
    KITTY,
    LEFT,
    OUT,
    RIGHT,
    World,
    WorldError,
    constraints_of,
    sample_world,
    world_from_view,
)
from sm_env.core.cards import SUIT_MASK, from_mask, parse_card
from sm_env.core.game import DISCARD, EXCHANGE, OVER, PLAY, TRUMP, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet

RULE_SETS = [
    "standard",
    {"pickup_before_discard": True},
    {"pickup_before_discard": True, "trump_after_kitty": True},
    "woburn",
    "6-3-8",
    "chips-12",
    "dealer-makes-quota-up",
    "9-2-5-variation",
    "dealer-assigns",
    {"dealer_assigns_quotas": True, "trump_before_exchange": True, "max_exchange": 2},
    {"first_up_exchanges_first": True, "trump_after_send": True},
    "3-5-9",
    "9-5-3-one-card",
    {"one_card_kitty": True, "trump_after_send": True},
    "woburn-auction",
    {"auction": True, "first_up_exchanges_first": True, "trump_before_exchange": True},
    "calls",
    {"calls": True, "pickup_before_discard": True, "chips": True},
    {"trump_before_exchange": True},
    {"trump_before_exchange": True, "pickup_before_discard": True},
    {"kitty_before_exchange": True},
    {"kitty_before_exchange": True, "trump_before_exchange": True},
    {"kitty_before_exchange": True, "trump_after_kitty": True},
    {"trump_after_send": True},
    {"trump_after_send": True, "pickup_before_discard": True, "max_exchange": 3},
]
START_BALANCES = [None, [2, -1, -1], [-1, 2, -1], [1, 1, -2], [3, -2, -1], [-4, 2, 2], [0, 3, -3], [-2, -1, 3]]
FOUR_RULE_SETS = [
    "four-5-3-2-2",
    "four-6-3-2-1",
    {"players": 4, "trump_after_send": True, "max_exchange": 2},
    {"players": 4, "kitty_before_exchange": True, "trump_before_exchange": True},
    {"players": 4, "pickup_before_discard": True, "first_up_exchanges_first": True},
]
FOUR_START_BALANCES = [None, [3, -1, -1, -1], [-2, 0, 1, 1], [3, -2, 1, -2], [1, 1, 1, -3], [-1, 2, -2, 1]]


def play_game(agents, seed: int, rules="standard", max_hands: int = 3, start_balances=None) -> list[int]:
    """Play a game with one agent per seat; checks every action is legal; returns the actions."""
    if RuleSet.from_any(rules).auction:  # hand 1 follows the auction: no start balances
        start_balances = None
    game = Game(rules, seed=seed, max_hands=max_hands, start_balances=start_balances)
    for i, agent in enumerate(agents):
        agent.reset(seed * 3 + i)
    actions = []
    while game.current_player is not None:
        seat = game.current_player
        view = player_view(game, seat)
        action = act(agents[seat], view)
        assert isinstance(action, int)
        assert game.legal_mask() >> action & 1, f"{agents[seat]} played illegal {action} in {game}"
        game.apply(action)
        actions.append(action)
    return actions


@pytest.mark.parametrize("rules", RULE_SETS)
def test_random_and_heuristic_play_only_legal_actions(rules):
    for seed in range(12):
        balances = START_BALANCES[seed % len(START_BALANCES)]
        play_game([RandomAgent(), HeuristicAgent(), RandomAgent()], seed, rules, 3, balances)
        play_game([HeuristicAgent(), HeuristicAgent(), HeuristicAgent()], seed, rules, 3, balances)


@pytest.mark.parametrize("rules", FOUR_RULE_SETS, ids=str)
def test_agents_play_four_players(rules):
    for seed in range(6):
        balances = FOUR_START_BALANCES[seed % len(FOUR_START_BALANCES)]
        play_game([RandomAgent(), HeuristicAgent(), RandomAgent(), HeuristicAgent()], seed, rules, 3, balances)
        play_game([HeuristicAgent() for _ in range(4)], seed, rules, 3, balances)
    pimc = [PimcAgent(samples=1, bid=True), HeuristicAgent(), PimcAgent(samples=2), RandomAgent()]
    play_game(pimc, 0, rules, 1, FOUR_START_BALANCES[1])


@pytest.mark.parametrize(
    "rules",
    [
        "standard",
        {"pickup_before_discard": True, "trump_after_kitty": True},
        "6-3-8",
        "chips-12",
        "9-2-5-variation",
        "dealer-assigns",
        "9-5-3-one-card",
        "woburn-auction",
        "calls",
        {"trump_before_exchange": True},
        {"trump_after_send": True},
    ],
    ids=str,
)
def test_pimc_plays_only_legal_actions(rules):
    for seed in range(2):
        balances = START_BALANCES[(seed + 1) % len(START_BALANCES)]
        play_game([PimcAgent(samples=1, bid=True), HeuristicAgent(), PimcAgent(samples=2)], seed, rules, 1, balances)


def test_agents_are_deterministic_under_a_seed():
    for make in (lambda: RandomAgent(), lambda: HeuristicAgent(), lambda: PimcAgent(samples=2)):
        first = play_game([make(), make(), make()], 5, max_hands=1, start_balances=[2, -1, -1])
        again = play_game([make(), make(), make()], 5, max_hands=1, start_balances=[2, -1, -1])
        assert first == again
    a = play_game([RandomAgent()] * 3, 5, max_hands=1)
    b = play_game([RandomAgent()] * 3, 6, max_hands=1)
    assert a != b


def test_heuristic_beats_random_by_a_wide_margin():
    from training.evaluation.evaluate import evaluate

    result = evaluate(["heuristic", "random"], deals=60, mode="hand", seed=3, workers=1, progress=False)
    diff = result.pairwise[("heuristic", "random")]
    assert diff.lo > 1.5, diff  # about +3 tricks a hand in practice
    assert result.stats["heuristic"]["all"]["balance"].lo > 0


# ---------------------------------------------------------------- heuristic rules


def c(text: str) -> int:
    return parse_card(text)


def m(text: str) -> int:
    return sum(1 << parse_card(t) for t in text.split())


def test_heuristic_trump_and_discard_choices():
    hand = m("2H 3H 5H 8H JH AC KC 4D 9S 3S 7C 6D 8D 2S TS QD")
    assert choose_trump(hand) == 2  # five hearts
    # trump hearts: discards go to empty a short side suit, never the AC
    outstanding = (1 << 52) - 1 & ~hand
    first = choose_discard(hand, 2, outstanding, 4)
    assert first not in (c("AC"), c("2H"))
    assert first // 13 != 2


def test_heuristic_sends_a_card_that_can_fetch_a_high_card():
    hand = m("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AH KH 2C")
    outstanding = (1 << 52) - 1 & ~hand
    # aces/kings gain nothing; the 2C can fetch the receiver's best club
    assert choose_send(hand, outstanding, 16, 0, -1) == c("2C")


def test_heuristic_play_follows_ducks_and_ruffs():
    full = (1 << 52) - 1
    hand = m("AH 4H 2S 3D")
    out = full & ~hand
    voids = (0, 0, 0)
    # last to play: cheapest winner
    assert choose_play(0, m("AH KH 4H 2S"), (c("QH"), c("3H")), 3, full & ~m("AH KH 4H 2S QH 3H"), voids) == c("KH")
    # cannot beat: duck low
    assert choose_play(0, hand, (c("KS"), c("AS")), 1, out, voids) == c("2S")
    # void in the led suit with trumps: ruff with the lowest trump when last
    assert choose_play(0, m("2D 9D 5H"), (c("AC"), c("KC")), 1, full & ~m("2D 9D 5H AC KC"), voids) == c("2D")


# ---------------------------------------------------------------- section 10 decisions (hand-built positions)

# clubs A Q 9 8 7 6 5, diamonds K (bare), hearts K 4, spades A K Q 5 2
_TEN = m("AC QC 9C 8C 7C 6C 5C KD KH 4H AS KS QS 5S 2S")


def test_heuristic_features_of_the_measured_estimates():
    from agents.players import heuristic as h

    # spades trump: 5 trumps with A K Q (no J); side: 1 ace, 1 guarded king (H), 1 bare king (D),
    # 1 queen with two others (C), no void, 1 singleton (D)
    assert h.suit_features(_TEN, 3) == (1, 5, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1)
    # clubs trump: 7 trumps with A Q; side: AS, guarded KH and KS, bare KD, QS, no void, singleton D
    assert h.suit_features(_TEN, 0) == (1, 7, 1, 0, 1, 0, 1, 2, 1, 1, 0, 1)
    # NT: 2 aces, 2 kings with another card (KD is bare), 2 queens with 2+, no jack, 1 + 3 cards past the 4th
    assert h.nt_features(_TEN) == (1, 2, 2, 2, 0, 4)
    # Miz: 2 aces, 3 kings, 2 queens, no J or T, one 9, four cards 2-5 (5C 4H 5S 2S), no void
    assert h.miz_features(_TEN) == (1, 2, 3, 2, 0, 0, 1, 4, 0)
    weights = sum(w * f for w, f in zip(h.SUIT_WEIGHTS, h.suit_features(_TEN, 3), strict=True))
    assert h.estimate_tricks(_TEN, 3) == pytest.approx(weights)
    values = h.call_values(_TEN)
    assert values[3] == pytest.approx(weights - 8)
    assert values[5] == pytest.approx(3 - sum(w * f for w, f in zip(h.MIZ_WEIGHTS, h.miz_features(_TEN), strict=True)))


def test_heuristic_call_is_the_best_value_less_its_reserve():
    from agents.players import heuristic as h

    values = h.call_values(_TEN)
    best = max(range(6), key=lambda k: values[k])
    assert best == 0  # seven clubs with the ace
    assert h.choose_call(_TEN, 0x3F, (0.0,) * 6) == best
    # a reserve on the best call (worth keeping for a later hand) moves the choice to the next best
    second = max((k for k in range(6) if k != best), key=lambda k: values[k])
    reserve = tuple(10.0 if k == best else 0.0 for k in range(6))
    assert h.choose_call(_TEN, 0x3F, reserve) == second
    # the last call left is made whatever its value or reserve
    assert h.choose_call(_TEN, 1 << 5, reserve) == 5
    # the default reserve (the calls' mean balances): still clubs; a made call is never chosen
    assert h.choose_call(_TEN, 0x3F) == 0
    assert h.choose_call(_TEN, 0x3E) != 0


def test_heuristic_bid_threshold_and_margin():
    from agents.players import heuristic as h
    from sm_env.core.game import BID_ACTION_BASE, PASS_ACTION

    legal = (1 << PASS_ACTION) | sum(1 << (BID_ACTION_BASE + k) for k in range(1, 9))  # 9 .. 16
    estimate = h.auction_estimate(_TEN)  # 2 + 7 clubs + AS + half of KH and of KS
    assert estimate == 11.0
    assert h.choose_bid(_TEN, legal) == BID_ACTION_BASE + 1  # the lowest bid, 9, reached
    assert h.choose_bid(_TEN, legal, margin=2.0) == BID_ACTION_BASE + 1  # 11 >= 9 + 2
    assert h.choose_bid(_TEN, legal, margin=2.5) == PASS_ACTION
    assert h.choose_bid(_TEN, legal, estimate=lambda hand: 8.9) == PASS_ACTION


def test_heuristic_assigns_the_lowest_quota_to_itself_and_the_highest_as_told():
    from agents.players import heuristic as h
    from sm_env.core.game import ASSIGN, assignment_of

    game = Game("dealer-assigns", seed=5, first_dealer=0)
    view = player_view(game, 0)
    assert view.phase == ASSIGN

    def quotas(high_to: str = h.ASSIGN_HIGH_TO) -> list[int]:  # by role: dealer, eldest, middle
        return assignment_of(h.choose_assignment(view, high_to), game.rules)

    view.scores = (0, -2, 2)  # the middle leads
    assert quotas("leader") == [3, 5, 8] and quotas("middle") == [3, 5, 8]
    assert quotas("trailer") == [3, 8, 5] and quotas("eldest") == [3, 8, 5]
    view.scores = (0, 1, -1)  # the eldest leads
    assert quotas("leader") == [3, 8, 5] and quotas("trailer") == [3, 5, 8] and quotas("middle") == [3, 5, 8]
    view.scores = (0, 0, 0)  # a tie: the eldest
    assert quotas("leader") == [3, 8, 5] == quotas("trailer")
    # the heuristic's own choice (measured, docs/results/heuristic-ab.md): the highest quota to the middle,
    # whoever leads
    assert h.ASSIGN_HIGH_TO == "middle" and quotas() == [3, 5, 8]
    assert h.heuristic_action(view) == h.choose_assignment(view, "middle")
    with pytest.raises(ValueError, match="high_to"):
        h.choose_assignment(view, "dealer")


def test_heuristic_face_up_card_rules():
    from agents.players.heuristic import choose_take
    from sm_env.core.game import PASS_ACTION

    # spades trump, no clubs; the face-up 4C is not a master (AC is out)
    hand = m("AS KS QS AH KH QH JH 9H 8H 7H 6H 5H 3D 2D")
    out = ((1 << 52) - 1) & ~hand & ~(1 << c("4C"))
    # "worth": the discard rules would put out 2D first, and 4C ranks above it: take
    assert choose_take(hand, c("4C"), 3, out) == c("2D")
    # "discard": with 4C in hand a bare club is the first card to discard (towards a void): decline
    assert choose_take(hand, c("4C"), 3, out, "discard") == PASS_ACTION
    # a face-up trump: both rules take it, putting out the 2D
    out = ((1 << 52) - 1) & ~hand & ~(1 << c("2S"))
    assert choose_take(hand, c("2S"), 3, out) == c("2D") == choose_take(hand, c("2S"), 3, out, "discard")


# ---------------------------------------------------------------- registry


def test_make_agent_specs():
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    p = make_agent("pimc:samples=3", seed=2)
    assert isinstance(p, PimcAgent) and p.samples == 3
    p = make_agent("pimc:seconds=0.2,bid=1")
    assert p.seconds == 0.2 and p.bid and p.name == "pimc:seconds=0.2,bid=1"
    assert make_agent("pimc").name == "pimc" and not make_agent("pimc:bid=0").bid
    assert make_agent("human").name == "human"
    with pytest.raises(AgentSpecError, match="known agents: random, heuristic, pimc"):
        make_agent("alphazero")
    with pytest.raises(AgentSpecError, match="unknown parameter"):
        make_agent("pimc:depth=3")
    with pytest.raises(AgentSpecError, match="parameter .samples. must be a whole number"):
        make_agent("pimc:samples=many")
    with pytest.raises(AgentSpecError, match="takes no parameters"):
        make_agent("random:x=1")
    with pytest.raises(AgentSpecError, match="ppo"):
        make_agent("ppo:/nonexistent/model.zip")
    with pytest.raises(AgentSpecError, match="checkpoint"):
        make_agent("ppo")


# ---------------------------------------------------------------- world sampler


def _location_of(game: Game, seat: int, card: int) -> int:
    n = game.rules.num_players
    left, right = (seat + 1) % n, (seat - 1) % n
    if game.hands[left] >> card & 1:
        return LEFT
    if game.hands[right] >> card & 1:
        return RIGHT
    if n == 4 and game.hands[(seat + 2) % n] >> card & 1:
        return ACROSS
    if not game.picked_up and game.kitty_mask >> card & 1:
        return KITTY
    return OUT


def _check_world(view, world: World, cons) -> None:
    """Everything the seat knows holds in the sampled world."""
    me = view.seat
    rules = view.rules
    n = len(view.hand_sizes)
    played = 0
    for cards in view.played:
        played |= cards
    assert world.hands[me] == view.hand and len(world.hands) == n
    for s in range(n):
        assert world.hands[s].bit_count() == view.hand_sizes[s]
        assert not world.hands[s] & played
        if s != me:
            for suit in range(4):
                if view.voids[s] >> suit & 1:
                    assert not world.hands[s] & SUIT_MASK[suit]
    parts = [*world.hands, world.kitty, world.out]
    union = 0
    for part in parts:
        assert not union & part, "a card in two places"
        union |= part
    assert not union & played
    kitty_size = 0 if view.kitty_taken else rules.kitty_size
    assert world.kitty.bit_count() == kitty_size
    assert not world.out & (world.kitty | played | view.hand)
    assert union | played | cons.unknown | view.hand == union | played  # every unknown card placed
    # the cards placed match the per-card constraints
    left, right = cons.seats[:2]
    for card in from_mask(cons.unknown):
        loc = (
            LEFT
            if world.hands[left] >> card & 1
            else RIGHT
            if world.hands[right] >> card & 1
            else ACROSS
            if n == 4 and world.hands[cons.seats[2]] >> card & 1
            else KITTY
            if world.kitty >> card & 1
            else OUT
        )
        assert cons.allowed[card] >> loc & 1
    # known cards: shown kitty cards are with the dealer (or discarded after pickup)
    for card in from_mask(view.shown & ~played):
        assert world.hands[view.dealer] >> card & 1 or (rules.pickup_before_discard and world.out >> card & 1)
    # cards I returned as receiver are with the sender (or its discards if it dealt)
    for ex in view.exchanges:
        if ex.receiver == me and ex.returned is not None:
            for card in ex.returned:
                if not played >> card & 1:
                    put_out = view.take == (ex.sender, True)  # one_card_kitty: the sender took the face-up card
                    out_ok = (ex.sender == view.dealer or put_out) and world.out >> card & 1
                    assert world.hands[ex.sender] >> card & 1 or out_ok


def _random_states(n_games: int, seed: int, four: bool = False):
    """(game, seat) pairs over random games with exchanges, discards and shows (four players if ``four``)."""
    rng = random.Random(seed)
    heuristic = HeuristicAgent()
    rule_sets, start_balances = (FOUR_RULE_SETS, FOUR_START_BALANCES) if four else (RULE_SETS, START_BALANCES)
    for i in range(n_games):
        rules = rule_sets[i % len(rule_sets)]
        balances = None if RuleSet.from_any(rules).auction else start_balances[i % len(start_balances)]
        game = Game(rules, seed=seed * 1000 + i, max_hands=2, start_balances=balances)
        while game.current_player is not None:
            yield game
            view = player_view(game, game.current_player)
            game.apply(rng.choice(game.legal_actions()) if rng.random() < 0.4 else heuristic.act(view))


@pytest.mark.parametrize("four", [False, True], ids=["three", "four"])
def test_world_sampler_never_contradicts_knowledge_and_admits_the_truth(four):
    rng = random.Random(1)
    states = 0
    shown = exchanged = 0
    for game in _random_states(150 if not four else 60, 7, four):
        if rng.random() > 0.3:
            continue
        states += 1
        for seat in range(game.rules.num_players):
            view = player_view(game, seat)
            cons = constraints_of(view)
            # the truth is one of the worlds allowed (nothing over-constrained)
            for card in from_mask(cons.unknown):
                assert cons.allowed[card] >> _location_of(game, seat, card) & 1, (game, seat, card)
            world = sample_world(view, rng, cons)
            _check_world(view, world, cons)
            shown += bool(view.shown)
            exchanged += any(ex.sent is not None for ex in view.exchanges)
    assert states > (2000 if not four else 1000) and shown > 0 and exchanged > (500 if not four else 200)


@pytest.mark.parametrize("four", [False, True], ids=["three", "four"])
def test_world_from_view_with_the_true_cards_replays_the_real_game(four):
    deck_cache = {}
    for n, game in enumerate(_random_states(40, 11, four)):
        if game.phase not in (TRUMP, DISCARD, PLAY) or n % 3 or game.exchange_pending:
            continue
        seat = game.current_player
        view = player_view(game, seat)
        out = 0
        if seat != game.dealer and game.log.discards:
            for card in game.log.discards:
                out |= 1 << card
        truth = World(tuple(game.hands), 0 if game.picked_up else game.kitty_mask, out)
        world = world_from_view(view, truth)
        assert world.legal_mask() == game.legal_mask()
        assert world.current_player == game.current_player
        real = game.clone()
        real.max_hands = real.hand_number
        deck = deck_cache.setdefault(game.rules, deck_of(game.rules))
        dealer_out = sum(1 << c for c in game.log.discards or ())
        rollout(real, deck, dealer_out)
        rollout(world, deck, dealer_out)
        assert real.phase == world.phase == OVER
        assert real.tricks_won == world.tricks_won


def test_world_sampler_places_sent_cards_and_bounds_the_receiver():
    # seat 0 (up 1) sends 2C to seat 2 (down 1), which must return its best club, QC.
    hands = [
        "2C 3C 4C 5C 6C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
        "KC AC 9C TC JC KD AD QH KH AH 5S 6S 7S 8S 9S TS",
        "QC 7C 8C 2H 3H 4H 5H 6H 7H 8H 9H TH JH 2S 3S 4S",
    ]
    deal = {"hands": [h.split() for h in hands], "kitty": "JS QS KS AS".split()}
    game = Game(seed=0, first_dealer=1, deals=[deal], start_balances=[1, 0, -1], max_hands=1)
    assert game.phase == EXCHANGE and game.current_player == 0
    game.apply(c("2C"))
    assert game.hands[0] >> c("QC") & 1
    view = player_view(game, 0)
    cons = constraints_of(view)
    assert cons.allowed[c("2C")] == 1 << RIGHT  # seat 2 kept it (right of seat 0)
    assert not cons.allowed[c("QC")]  # known: back in seat 0's hand
    for card in ("KC", "AC"):  # seat 2 returned QC, so it holds nothing higher
        assert not cons.allowed[c(card)] >> RIGHT & 1
    rng = random.Random(0)
    for _ in range(50):
        world = sample_world(view, rng, cons)
        _check_world(view, world, cons)
        assert world.hands[2] >> c("2C") & 1
        assert not world.hands[2] & m("KC AC")


def test_sampler_reports_impossible_views():
    game = Game(seed=0, first_dealer=0, max_hands=1)
    view = player_view(game, 1)
    object.__setattr__(view, "hand_sizes", (16, 16, 30))
    with pytest.raises(WorldError):
        constraints_of(view)


def test_shipped_trained_policy_beats_the_heuristic():
    """The policy in agents/policies (configs/full.yaml) must keep beating the heuristic overall."""
    pytest.importorskip("torch")
    from training.evaluation.evaluate import evaluate

    result = evaluate(["trained", "heuristic"], deals=300, mode="hand", seed=11, workers=1, progress=False)
    assert result.pairwise[("trained", "heuristic")].lo > 0


def test_make_opponent_refuses_a_human_and_builds_any_agent():
    from agents import AgentSpecError, make_opponent

    for spec in ("human", " Human ", "HUMAN"):
        with pytest.raises(AgentSpecError, match="'human' cannot take this seat.*heuristic"):
            make_opponent(spec)
    assert type(make_opponent("heuristic", seed=1)).__name__ == "HeuristicAgent"
    with pytest.raises(AgentSpecError, match="unknown agent"):
        make_opponent("wizard")


def test_fresh_seeds_hold_128_bits_and_the_deal_uses_every_bit():
    from agents import SEED_BITS, fresh_seed

    assert SEED_BITS >= 128
    seeds = [fresh_seed() for _ in range(20)]
    assert all(0 <= s < 2**SEED_BITS for s in seeds) and len(set(seeds)) == 20
    # not drawn from a small space: 20 draws below 2**120 would happen with probability 2**-160
    assert max(seeds) >= 2**120
    # the game's generator takes every bit: seeds that differ only above bit 100 deal differently
    base = seeds[0] % 2**100
    deals = {tuple(map(tuple, Game(seed=base + (k << 100)).history[0].deal_hands)) for k in range(4)}
    assert len(deals) == 4


def test_agent_seeds_are_a_one_way_128_bit_function_of_the_game_seed_seat_and_purpose():
    import hashlib

    import numpy as np

    from agents import agent_seed

    seed = 2**127 + 5
    digest = hashlib.sha256(f"agent:{seed}:1:agent".encode()).digest()
    assert agent_seed(seed, 1) == int.from_bytes(digest[:16], "big") == agent_seed(seed, np.int64(1))
    seeds = {agent_seed(s, seat, purpose) for s in (0, 1, -1, seed) for seat in range(4) for purpose in ("agent", "x")}
    assert len(seeds) == 32 and all(0 <= s < 2**128 for s in seeds)
    assert agent_seed(7, 0) not in (7, 8) and agent_seed(-7, 0) != agent_seed(7, 0)
    for bad in ((7.0, 0), (True, 0), (7, "0"), (None, 0)):
        with pytest.raises(TypeError, match="game_seed and seat must be whole numbers"):
            agent_seed(*bad)
    for seat, purpose in ((-1, "agent"), (0, ""), (0, None)):
        with pytest.raises(ValueError, match="seat must be 0 or more and purpose some text"):
            agent_seed(7, seat, purpose)


def test_an_unseeded_game_records_its_128_bit_seed_and_replays_exactly():
    import random as stdlib_random

    from agents import fresh_seed
    from sm_env import replay
    from sm_env.records.format import game_record

    seed = fresh_seed()
    game = Game(seed=seed, max_hands=2)
    chooser, moves = stdlib_random.Random(0), []
    while not game.is_over:
        moves.append(chooser.choice(game.legal_actions()))
        game.apply(moves[-1])
    record = json.loads(json.dumps(game_record(game)))  # through JSON, as a saved record
    assert record["seed"] == seed and replay(record) == game_record(game)
    again = Game(seed=record["seed"], max_hands=2)  # the stored seed alone deals the same game
    for move in moves:
        again.apply(move)
    assert game_record(again) == game_record(game)


def test_spec_parameters_are_typed_and_bounded_in_one_place():
    from agents.players.base import Param, flag, typed_params

    table = {"samples": Param(int, 1, 50), "seconds": Param(float, 0, 9, low_open=True), "bid": Param(bool)}
    assert typed_params("x", {"samples": " 7", "bid": "off"}, table) == {"samples": 7, "bid": False}
    assert typed_params("x", {"samples": "50", "seconds": "9"}, table) == {"samples": 50, "seconds": 9.0}
    assert flag("yes") and flag("1") and flag("ON") and not flag(" No ")
    with pytest.raises(ValueError, match="expected 0 or 1"):
        flag("maybe")
    with pytest.raises(
        ValueError, match=r"x: unknown parameter\(s\) \['depth'\]; known: \['bid', 'samples', 'seconds'\]"
    ):
        typed_params("x", {"depth": "3"}, table)
    for name, text, allowed in [
        ("seconds", "soon", "a number above 0 and at most 9"),
        ("seconds", "0", "a number above 0 and at most 9"),
        ("seconds", "9.5", "a number above 0 and at most 9"),
        ("samples", "51", "a whole number from 1 to 50"),
        ("samples", "2.5", "a whole number from 1 to 50"),
        ("bid", "2", "0 or 1"),
    ]:
        with pytest.raises(ValueError) as info:
            typed_params("x", {name: text}, table)
        assert str(info.value).startswith(f"x: parameter {name!r} must be {allowed}") and repr(text) in str(info.value)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pimc:seconds=nan", "'seconds' must be a number above 0 and at most 600, got 'nan'"),
        ("pimc:seconds=inf", "'seconds' must be a number above 0 and at most 600, got 'inf'"),
        ("pimc:seconds=-1", "'seconds' must be a number above 0 and at most 600"),
        ("pimc:seconds=601", "'seconds' must be a number above 0 and at most 600"),
        ("pimc:seconds=1e400", "'seconds' must be a number above 0 and at most 600"),
        ("pimc:samples=1000000", "'samples' must be a whole number from 1 to 10000, got '1000000'"),
        ("pimc:samples=0", "'samples' must be a whole number from 1 to 10000"),
        ("pimc:samples=", "'samples' must be a whole number from 1 to 10000, got ''"),
        ("pimc:samples=1.5", "'samples' must be a whole number from 1 to 10000"),
        ("pimc:bid=maybe", "'bid' must be 0 or 1"),
        ("pimc:kernel=2", "'kernel' must be 0 or 1"),
        (
            "pimc:depth=3",
            r"unknown parameter\(s\) \['depth'\]; known: "
            r"\['alpha', 'belief', 'bid', 'exchange', 'game', 'game_from', 'game_only', 'kernel', 'policy', 'pool', "
            r"'prior', 'rollout', 'samples', 'seconds'\]",
        ),
        ("pimc:samples=5,samples=6", "parameter 'samples' given twice"),
        ("ismcts:iterations=1000000", "'iterations' must be a whole number from 1 to 100000"),
        ("ismcts:seconds=inf", "'seconds' must be a number above 0 and at most 600"),
        ("ismcts:c=inf", "'c' must be a number from 0 to 10"),
        ("ismcts:c=11", "'c' must be a number from 0 to 10"),
        ("ismcts:samples=5", r"unknown parameter\(s\) \['samples'\]"),
        ("heuristic:depth=1", "takes no parameters"),
    ],
)
def test_make_agent_refuses_parameters_out_of_bounds(spec, message):
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agent(spec)
    assert str(info.value).startswith(f"agent spec {spec!r}: ") or "takes no parameters" in str(info.value)


def test_the_spec_table_documents_the_bounds_and_the_rllib_warning():
    import agents
    from agents.players import rllib_agent

    doc = " ".join(agents.__doc__.split())
    for table in agents.AGENT_PARAMS.values():
        for name, p in table.items():
            if p.type is bool:
                allowed = "0 or 1"
            elif p.type is str:
                allowed = p.allowed()  # one of ...
            elif p.low_open:
                allowed = f"a number above {p.low:g}, at most {p.high:g}"
            else:
                allowed = f"a {'whole number' if p.type is int else 'number'} {p.low:g}-{p.high:g}"
            assert f"``{name}`` {allowed}" in doc, name
    assert "Only load policies you trust" in doc and "only load policies you trust" in rllib_agent.__doc__.lower()


def test_make_agent_accepts_parameters_at_their_bounds():
    from agents.search.ismcts import MAX_ITERATIONS

    assert make_agent("pimc:samples=10000").samples == 10_000 and make_agent("pimc:samples=1").samples == 1
    assert make_agent("pimc:seconds=600").seconds == 600 and make_agent("pimc:seconds=0.001").seconds == 0.001
    assert make_agent("pimc:bid=yes,kernel=off").bid and not make_agent("pimc:kernel=false").kernel
    assert make_agent("ismcts:iterations=100000").iterations == MAX_ITERATIONS  # the cap a time budget stops at
    assert make_agent("ismcts:c=0").c == 0 and make_agent("ismcts:c=10").c == 10


def test_every_kind_named_in_known_agents_is_a_kind_make_agent_builds():
    from agents import AGENT_KINDS, KNOWN_AGENTS

    assert {known.split(":")[0] for known in KNOWN_AGENTS} == AGENT_KINDS
