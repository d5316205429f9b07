"""agents/search/world_sampler.py on hand-built deals: the sampled deals respect every fact the seat knows
(hand sizes, played cards, shown voids, the dealer's discards), admit the true deal, are close to
uniform when nothing is known, are reproducible from the RNG, and world_from_view of the true deal is
the real game."""

from __future__ import annotations

import random

import pytest
from helpers import sent_not_yet_returned

from agents.search.world_sampler import KITTY, LEFT, OUT, RIGHT, World, constraints_of, sample_world, world_from_view
from sm_env.core.cards import SUIT_MASK, parse_card
from sm_env.core.game import PLAY, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.knowledge import player_view

HEARTS, SPADES = 2, 3
# Seat 2 holds no heart: when seat 1 leads one, seat 2 shows a void. The kitty is the four top spades.
DEAL = {
    "hands": [
        "7H 6H 5H 4H 3H 2H JC QC KC AC 2D 3D 4D 5D 6D 7D".split(),
        "AH KH QH JH TH 9H 8H 2C 3C 4C 5C 6C 7C 8C 9C TC".split(),
        "8D 9D TD JD QD KD AD 2S 3S 4S 5S 6S 7S 8S 9S TS".split(),
    ],
    "kitty": "JS QS KS AS".split(),
}
DISCARDS = "2D 3D 4D 5D"


def _bits(text: str) -> int:
    return sum(1 << parse_card(c) for c in text.split())


def _game_after_first_trick() -> Game:
    """Dealer 0 names spades and discards 2D-5D; seat 1 leads AH, seat 2 (void) plays 8D, seat 0 plays 2H."""
    game = Game(seed=0, first_dealer=0, deals=[DEAL], max_hands=1)
    game.apply(TRUMP_ACTION_BASE + SPADES)
    for card in DISCARDS.split():
        game.apply(parse_card(card))
    for card in ("AH", "8D", "2H"):
        game.apply(parse_card(card))
    assert game.phase == PLAY and game.current_player == 1  # AH won the trick
    return game


def _truth_after_first_trick() -> World:
    hands = [_bits(" ".join(h)) for h in DEAL["hands"]]
    hands[0] = (hands[0] | _bits(" ".join(DEAL["kitty"]))) & ~_bits(DISCARDS) & ~_bits("2H")
    hands[1] &= ~_bits("AH")
    hands[2] &= ~_bits("8D")
    return World((hands[0], hands[1], hands[2]), 0, _bits(DISCARDS))


def _location(world: World, seat: int, card: int) -> int:
    if world.hands[(seat + 1) % 3] >> card & 1:
        return LEFT
    if world.hands[(seat + 2) % 3] >> card & 1:
        return RIGHT
    return KITTY if world.kitty >> card & 1 else OUT


def test_samples_keep_every_known_fact():
    view = player_view(_game_after_first_trick(), 1)
    cons = constraints_of(view)
    truth = _truth_after_first_trick()
    played = _bits("AH 8D 2H")
    assert cons.unknown == ~(view.hand | played) & ((1 << 52) - 1)
    for card in range(52):  # the true deal is one of the deals allowed
        if cons.unknown >> card & 1:
            assert cons.allowed[card] >> _location(truth, 1, card) & 1
    rng = random.Random(0)
    for _ in range(300):
        world = sample_world(view, rng, cons)
        assert world.hands[1] == view.hand
        assert [h.bit_count() for h in world.hands] == [15, 15, 15]
        assert world.kitty == 0 and world.out.bit_count() == 4  # kitty taken; the dealer's 4 discards unseen
        assert not world.hands[2] & SUIT_MASK[HEARTS]  # seat 2 showed a void in hearts
        parts = [*world.hands, world.out]
        assert sum(p.bit_count() for p in parts) == 49 and not (parts[0] | parts[1] | parts[2] | parts[3]) & played


def test_the_dealer_knows_its_discards_and_the_kitty():
    view = player_view(_game_after_first_trick(), 0)
    rng = random.Random(1)
    for _ in range(100):
        world = sample_world(view, rng)
        assert world.out == 0 and world.kitty == 0  # nothing is out of play that the dealer cannot see
        assert world.hands[0] == view.hand
        assert not world.hands[2] & SUIT_MASK[HEARTS]


def test_world_from_view_of_the_true_deal_is_the_real_game():
    truth = _truth_after_first_trick()
    for seat in range(3):
        game = _game_after_first_trick()
        world = world_from_view(player_view(game, seat), truth)
        while game.current_player is not None:  # the same moves are legal in both, to the end of the hand
            assert world.current_player == game.current_player
            assert world.legal_mask() == game.legal_mask()
            action = game.legal_actions()[seat % len(game.legal_actions())]
            game.apply(action)
            world.apply(action)
        assert world.current_player is None and list(world.tricks_won) == list(game.tricks_won)


def test_unconstrained_deals_are_uniform():
    """At the start of hand 1 a non-dealer knows only its hand: each unseen card is in the left hand,
    the right hand or the kitty with chances 16/36, 16/36 and 4/36."""
    game = Game(seed=0, first_dealer=0, deals=[DEAL], max_hands=1)
    assert game.phase == TRUMP
    view = player_view(game, 2)
    rng = random.Random(7)
    n = 3000
    counts = {card: [0, 0, 0, 0] for card in range(52) if not view.hand >> card & 1}
    for _ in range(n):
        world = sample_world(view, rng)
        for card in counts:
            counts[card][_location(world, 2, card)] += 1
    for card, (left, right, kitty, out) in counts.items():
        assert out == 0
        for seen, p in ((left, 16 / 36), (right, 16 / 36), (kitty, 4 / 36)):
            sigma = (p * (1 - p) / n) ** 0.5
            assert abs(seen / n - p) < 5 * sigma, (card, seen, p)


def test_the_same_rng_state_gives_the_same_deal():
    view = player_view(_game_after_first_trick(), 2)
    first = [sample_world(view, random.Random(42)) for _ in range(3)]
    assert first[0] == first[1] == first[2]
    rng = random.Random(42)
    draws = {sample_world(view, rng) for _ in range(20)}
    assert len(draws) > 1  # the stream moves on


def test_cards_sent_but_not_yet_returned_are_placed_with_their_receiver():
    """trump_after_send: before the returns, the cards seat 0 sent are in seat 2's hand (seat 0 knows it)."""
    game = sent_not_yet_returned()
    assert game.phase == TRUMP and game.exchange_pending
    view = player_view(game, 0)
    cons = constraints_of(view)
    assert cons.allowed[parse_card("2C")] == 1 << RIGHT  # seat 2 is right of seat 0
    assert cons.capacity[:2] == (15, 18)
    rng = random.Random(0)
    for _ in range(50):
        world = sample_world(view, rng, cons)
        assert world.hands[2] >> parse_card("2C") & 1 and world.hands[2].bit_count() == 18
    with pytest.raises(ValueError, match="still to come or under way"):
        world_from_view(view, world)
