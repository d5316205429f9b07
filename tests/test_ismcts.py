"""Information-set MCTS (agents/search/ismcts.py): legality, determinism, the spec, and
that the tree search finds a winning line in hand-built end positions."""

from __future__ import annotations

import pytest

from agents import AgentSpecError, act, make_agent
from agents.players.heuristic import HeuristicAgent, heuristic_action
from agents.players.unseen import deck_of
from agents.search.ismcts import IsmctsAgent
from agents.search.rollout import rollout
from sm_env.core.cards import SUIT_LETTERS, parse_card
from sm_env.core.game import PLAY, TRUMP_ACTION_BASE, Game, TrickLog
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet

RULE_SETS = [
    "standard",
    {"pickup_before_discard": True},
    {"pickup_before_discard": True, "trump_after_kitty": True},
    "woburn",
    "6-3-8",
    "9-2-5-variation",
    "dealer-assigns",
    "3-5-9",
    "9-5-3-one-card",
    "woburn-auction",
    "calls",
    {"trump_before_exchange": True},
    {"trump_after_send": True},
]
START_BALANCES = [None, [2, -1, -1], [1, 1, -2], [-4, 2, 2], [0, 3, -3]]


def play_game(agents, seed: int, rules="standard", max_hands: int = 1, start_balances=None) -> list[int]:
    """Play with one agent per seat, checking that every action is legal; returns the actions."""
    if RuleSet.from_any(rules).auction:  # hand 1 follows the auction: no start balances
        start_balances = None
    game = Game(rules, seed=seed, max_hands=max_hands, start_balances=start_balances)
    for i, agent in enumerate(agents):
        agent.reset(seed * 3 + i)
    actions = []
    while game.current_player is not None:
        seat = game.current_player
        action = act(agents[seat], player_view(game, seat))
        assert isinstance(action, int)
        assert game.legal_mask() >> action & 1, f"{agents[seat]} played illegal {action} in {game}"
        game.apply(action)
        actions.append(action)
    return actions


@pytest.mark.parametrize("rules", RULE_SETS)
def test_ismcts_plays_only_legal_actions(rules):
    for seed in range(2):
        balances = START_BALANCES[(2 * seed + RULE_SETS.index(rules)) % len(START_BALANCES)]
        agents = [IsmctsAgent(iterations=3, bid=True), HeuristicAgent(), IsmctsAgent(iterations=2, c=0.0)]
        play_game(agents, seed, rules, 2, balances)


def test_ismcts_time_budget_runs_at_least_one_iteration():
    agent = IsmctsAgent(seed=0, seconds=1e-6)
    play_game([agent, HeuristicAgent(), HeuristicAgent()], 3)
    assert agent.decisions > 0 and agent.total_iterations >= agent.decisions


@pytest.mark.parametrize("kernel", [True, False])
def test_ismcts_time_budget_stops_at_the_iteration_cap(monkeypatch, kernel):
    import agents.search.ismcts as ismcts

    monkeypatch.setattr(ismcts, "MAX_ITERATIONS", 16)  # the tree's memory stays bounded under any time budget
    agent = IsmctsAgent(seed=0, seconds=600, kernel=kernel)
    agent.search(_ruff_position())
    assert agent.total_iterations == 16


def test_ismcts_is_deterministic_under_a_seed():
    def run(seed):
        return play_game([IsmctsAgent(iterations=8, bid=True) for _ in range(3)], seed, start_balances=[2, -1, -1])

    assert run(4) == run(4)
    agent = make_agent("ismcts:iterations=30", seed=9)
    view = _ruff_position()
    first = {a: (n.visits, n.total) for a, n in agent.search(view).children.items()}
    agent.reset(9)
    assert {a: (n.visits, n.total) for a, n in agent.search(view).children.items()} == first


def test_ismcts_spec():
    agent = make_agent("ismcts", seed=1)
    assert isinstance(agent, IsmctsAgent) and agent.name == "ismcts"
    assert (agent.iterations, agent.seconds, agent.c, agent.bid) == (200, None, 0.3, False)
    agent = make_agent("ismcts:iterations=50,c=0.5")
    assert (agent.iterations, agent.c, agent.name) == (50, 0.5, "ismcts:iterations=50,c=0.5")
    agent = make_agent("ismcts:seconds=0.2,bid=1")
    assert agent.seconds == 0.2 and agent.bid and agent.name == "ismcts:seconds=0.2,bid=1"
    for spec, message in [
        ("ismcts:depth=3", "unknown parameter"),
        ("ismcts:iterations=many", "'iterations' must be a whole number from 1 to 100000, got 'many'"),
        ("ismcts:c=wide", "'c' must be a number from 0 to 10"),
        ("ismcts:iterations=0", "'iterations' must be a whole number from 1 to 100000, got '0'"),
        ("ismcts:iterations=100001", "'iterations' must be a whole number from 1 to 100000"),
        ("ismcts:seconds=0", "'seconds' must be a number above 0 and at most 600"),
        ("ismcts:c=-1", "'c' must be a number from 0 to 10"),
        ("ismcts:c=nan", "'c' must be a number from 0 to 10, got 'nan'"),
        ("ismcts:iterations", "key=value"),
    ]:
        with pytest.raises(AgentSpecError, match=message):
            make_agent(spec)


# ---------------------------------------------------------------- end positions


def _ids(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def _position(dealer, trump, hands, leader, trick, voids, tricks_won, discards, kitty) -> Game:
    """A legal game brought to a hand-built play position: ``hands`` by seat (text),
    ``trick`` the open trick's cards from ``leader`` on; every other card is played
    (the kitty by the dealer) or discarded."""
    hands = [_ids(h) for h in hands]
    trick, discards, kitty = _ids(trick), _ids(discards), _ids(kitty)
    held = {c for h in hands for c in h}
    pool = [c for c in range(52) if c not in held and c not in trick and c not in discards and c not in kitty]
    # the deal: the dealer holds its discards; the kitty is the kitty
    rest = [c for c in pool + trick + sorted(held) if c not in discards]
    deal = [[], [], []]
    deal[dealer] = discards + rest[:12]
    others = rest[12:]
    for i, seat in enumerate(s for s in range(3) if s != dealer):
        deal[seat] = others[16 * i : 16 * (i + 1)]
    game = Game("standard", seed=0, first_dealer=dealer, max_hands=1, deals=[{"hands": deal, "kitty": kitty}])
    game.apply(TRUMP_ACTION_BASE + SUIT_LETTERS.index(trump))
    for c in discards:
        game.apply(c)
    played = [0, 0, 0]
    queue = list(kitty) + pool
    for seat in [dealer] + [s for s in range(3) if s != dealer]:
        in_trick = [c for i, c in enumerate(trick) if (leader + i) % 3 == seat]
        need = 16 - len(hands[seat]) - len(in_trick)
        for c in in_trick + queue[:need]:
            played[seat] |= 1 << c
        queue = queue[need:]
    assert not queue
    game.hands = [sum(1 << c for c in h) for h in hands]
    game.played = played
    game.voids = list(voids)
    game.trick = list(trick)
    game.led_suit = trick[0] // 13 if trick else -1
    game.leader = leader
    game.current = (leader + len(trick)) % 3
    game.tricks_won = list(tricks_won)
    game.tricks_played = sum(tricks_won)
    log = TrickLog(leader)
    log.cards = list(trick)
    game.log.tricks = [log]
    assert game.phase == PLAY
    return game


def _ruff_game() -> Game:
    # Seat 0 (dealer, on lead) holds AS AH KH, spades trump; out: 2S and four clubs.
    # AS draws the last trump and both hearts win (3 tricks); a heart first is ruffed (2).
    return _position(
        0, "S", ["AS AH KH", "2S 3C 4C", "5C 6C 7C"], 0, "", [0, 0, 0], [5, 4, 4], "2D 3D 4D 5D", "8C 9C TC JC"
    )


def _ruff_position():
    return player_view(_ruff_game(), 0)


def _duck_game() -> Game:
    # Seat 2 (dealer) holds KH 3H; seat 1 leads 4H; seat 0 has shown voids in hearts
    # and spades (trump, all played), so the missing AH is with seat 1. KH wins this
    # trick (1 trick); ducking loses both (0). The heuristic ducks: AH is still out.
    voids = [1 << 2 | 1 << 3, 0, 0]
    return _position(2, "S", ["2C 3C", "AH", "KH 3H"], 1, "4H", voids, [5, 4, 5], "2D 3D 4D 5D", "6D 7D 8D 9D")


def _tricks_after(game: Game, action: int) -> int:
    seat = game.current
    game = game.clone()
    before = game.tricks_won[seat]
    game.apply(action)
    rollout(game, deck_of(game.rules), 0)
    return game.tricks_won[seat] - before


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ismcts_finds_the_drawing_lead(seed):
    game = _ruff_game()
    view = player_view(game, 0)
    legal = sorted(_ids("AS AH KH"))
    assert sorted(c for c in range(52) if view.legal >> c & 1) == legal  # a random lead wins 1 time in 3
    assert {c: _tricks_after(game, c) for c in legal} == {parse_card("AS"): 3, **dict.fromkeys(_ids("AH KH"), 2)}
    agent = IsmctsAgent(seed=seed, iterations=60)
    root = agent.search(view)
    best = root.children[parse_card("AS")]
    assert best.mean() == 1.0  # all three remaining tricks in every sampled deal
    assert best.visits == max(child.visits for child in root.children.values())
    assert agent.act(view) == parse_card("AS")


@pytest.mark.parametrize("seed", [0, 1])
def test_ismcts_overtakes_where_the_heuristic_ducks(seed):
    game = _duck_game()
    view = player_view(game, 2)
    kh, h3 = parse_card("KH"), parse_card("3H")
    assert heuristic_action(view) == h3
    assert (_tricks_after(game, kh), _tricks_after(game, h3)) == (1, 0)
    agent = IsmctsAgent(seed=seed, iterations=20)
    assert agent.act(view) == kh
