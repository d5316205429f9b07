"""agents/search/pimc.py: exact values in hand-built end positions, the search budget, the phases it searches
and those it leaves to the heuristic, and determinism under a seed."""

from __future__ import annotations

import pytest

from agents import make_agent
from agents.players.heuristic import heuristic_action
from agents.search.pimc import PimcAgent
from sm_env.core.cards import SUIT_LETTERS, parse_card
from sm_env.core.game import EXCHANGE, PLAY, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.knowledge import player_view


def _ids(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def _bits(cards: list[int]) -> int:
    return sum(1 << c for c in cards)


def _position(dealer: int, trump: str, hands: list[str], leader: int, trick: str, voids, tricks_won, discards, kitty):
    """A play position of hand 1: ``hands`` by seat, ``trick`` the open trick from ``leader`` on; every other
    card was played (the dealer played the kitty cards it took) or discarded by the dealer."""
    held = [_ids(h) for h in hands]
    trick_cards, discarded, kitty_cards = _ids(trick), _ids(discards), _ids(kitty)
    used = {c for h in held for c in h} | set(trick_cards) | set(discarded) | set(kitty_cards)
    pool = [c for c in range(52) if c not in used]
    tricks_played = sum(tricks_won)
    played = [0, 0, 0]
    queue = list(kitty_cards) + pool
    for seat in [dealer] + [s for s in range(3) if s != dealer]:
        mine = [c for i, c in enumerate(trick_cards) if (leader + i) % 3 == seat]
        played[seat] = _bits(mine + queue[:tricks_played])
        queue = queue[tricks_played:]
    assert not queue
    return Game.from_position(
        "standard",
        hand_number=1,
        dealer=dealer,
        scores=[0, 0, 0],
        previous_balances=None,
        phase=PLAY,
        to_act=(leader + len(trick_cards)) % 3,
        hands=[_bits(h) for h in held],
        kitty=_bits(kitty_cards),
        kitty_taken=True,
        trump=SUIT_LETTERS.index(trump),
        discards=discarded,
        trick=trick_cards,
        trick_leader=leader,
        tricks_won=list(tricks_won),
        tricks_played=tricks_played,
        played=played,
        voids=list(voids),
    )


def _ruff_game() -> Game:
    # Seat 0 (dealer, on lead, spades trump) holds AS AH KH; out: 2S and five clubs. AS draws the last trump
    # and both hearts win: 3 more tricks. A heart first is ruffed by whoever holds 2S: 2 more.
    hands = ["AS AH KH", "2S 3C 4C", "5C 6C 7C"]
    return _position(0, "S", hands, 0, "", [0, 0, 0], [5, 4, 4], "2D 3D 4D 5D", "8C 9C TC JC")


def _duck_game() -> Game:
    # Seat 2 (dealer) holds KH 3H; seat 1 led 4H; seat 0 has shown voids in hearts and spades, so the
    # missing AH is seat 1's last card. KH wins this trick; ducking with 3H loses both.
    voids = [1 << 2 | 1 << 3, 0, 0]
    return _position(2, "S", ["2C 3C", "AH", "KH 3H"], 1, "4H", voids, [5, 4, 5], "2D 3D 4D 5D", "6D 7D 8D 9D")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_of_the_drawing_lead_are_exact(seed):
    view = player_view(_ruff_game(), 0)
    agent = PimcAgent(seed=seed, samples=6)
    values = agent.evaluate(view)
    # balances in the hand: 8 or 7 tricks against the dealer's quota of 8
    assert values == {parse_card("AS"): 0.0, parse_card("AH"): -1.0, parse_card("KH"): -1.0}
    assert agent.act(view) == parse_card("AS")


@pytest.mark.parametrize("seed", [0, 1])
def test_overtakes_where_the_heuristic_ducks(seed):
    view = player_view(_duck_game(), 2)
    kh, h3 = parse_card("KH"), parse_card("3H")
    assert heuristic_action(view) == h3
    agent = PimcAgent(seed=seed, samples=4)
    assert agent.evaluate(view) == {kh: -2.0, h3: -3.0}  # balances: 6 or 5 tricks against the dealer's 8
    assert agent.act(view) == kh


def test_the_budget_is_the_number_of_sampled_deals():
    view = player_view(_ruff_game(), 0)
    agent = PimcAgent(seed=0, samples=7)
    agent.act(view)
    assert (agent.decisions, agent.worlds) == (1, 7)
    timed = PimcAgent(seed=0, seconds=1e-6)
    timed.act(view)
    assert timed.decisions == 1 and timed.worlds >= 1  # at least one deal, whatever the clock


def test_a_forced_card_costs_no_search():
    game = _ruff_game()
    game.apply(parse_card("AS"))
    view = player_view(game, 1)
    assert view.legal == 1 << parse_card("2S")  # must follow suit with its only spade
    agent = PimcAgent(seed=0)
    assert agent.act(view) == parse_card("2S")
    assert (agent.decisions, agent.worlds) == (0, 0)


def test_exchange_and_trump_go_to_the_heuristic_unless_bidding_is_on():
    game = Game(seed=3, first_dealer=0, max_hands=1, start_balances=[2, -1, -1])
    assert game.phase == EXCHANGE
    view = player_view(game, game.current_player)
    agent = PimcAgent(seed=0, samples=3, bid=True)
    assert agent.act(view) == heuristic_action(view) and agent.worlds == 0  # the exchange is never searched
    game = Game(seed=3, first_dealer=0, max_hands=1)
    assert game.phase == TRUMP
    view = player_view(game, 0)
    plain = PimcAgent(seed=0, samples=3)
    assert plain.act(view) == heuristic_action(view) and plain.worlds == 0
    bidding = PimcAgent(seed=0, samples=3, bid=True)
    action = bidding.act(view)
    assert TRUMP_ACTION_BASE <= action < TRUMP_ACTION_BASE + 4 and bidding.worlds == 3
    assert set(bidding.evaluate(view)) == set(range(TRUMP_ACTION_BASE, TRUMP_ACTION_BASE + 4))


def test_same_seed_same_values():
    game = Game(seed=11, first_dealer=1, max_hands=1)
    while game.phase != PLAY or len(game.legal_actions()) < 2:
        game.apply(heuristic_action(player_view(game, game.current_player)))
    view = player_view(game, game.current_player)
    first = PimcAgent(seed=5, samples=5).evaluate(view)
    assert PimcAgent(seed=5, samples=5).evaluate(view) == first
    agent = PimcAgent(seed=5, samples=5)
    agent.evaluate(view)
    agent.reset(5)
    assert agent.evaluate(view) == first


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pimc:samples=0", "'samples' must be a whole number from 1 to 10000, got '0'"),
        ("pimc:seconds=0", "'seconds' must be a number above 0 and at most 600, got '0'"),
        ("pimc:samples=many", "'samples' must be a whole number from 1 to 10000, got 'many'"),
        ("pimc:depth=3", "unknown parameter"),
    ],
)
def test_bad_parameters_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, 0)
    assert make_agent("pimc:samples=9,bid=0", 0).samples == 9
